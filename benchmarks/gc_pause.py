"""Pause Python's cyclic garbage collector while a burst of short-lived, acyclic objects is built."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def without_gc() -> Iterator[None]:
    """No cyclic collections inside the block; survivors move unscanned to the oldest generation after it.

    Parsing a 10 MB paste, ranking thousands of offers, checking a chunk of providers or laying out a PDF
    allocates hundreds of thousands of small objects and nothing cyclic, so collections meanwhile only rescan
    them (half the time of a large parse). Re-enabled as is, the collector would scan every survivor at the
    next allocation; freeze + unfreeze moves them into the oldest generation, where the next full collection
    looks at them. Skipped when something else froze objects on purpose (e.g. before forking workers), and a
    no-op when the collector is already off.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()
