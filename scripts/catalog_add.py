"""Add or update English translations in the catalog and compile it: scripts/catalog_add.py FILE.json.

FILE.json is an object {"中文 msgid": "English text", ...}. The catalog is locked while it is rewritten, so
several people (or agents) may add translations at the same time without losing each other's entries.
"""

from __future__ import annotations

import fcntl
import json
import sys
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "app" / "translations" / "en" / "LC_MESSAGES" / "messages.po"


def add(pairs: dict[str, str]) -> int:
    """Merge the pairs into the English catalog and compile it; returns how many entries were new."""
    with (PO.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with PO.open("rb") as handle:
            catalog = read_po(handle, locale="en")
        new = 0
        for msgid, text in pairs.items():
            if not msgid or not text:
                raise SystemExit(f"empty msgid or translation: {msgid!r} -> {text!r}")
            message = catalog.get(msgid)
            if message is None:
                new += 1
                catalog.add(msgid, text)
            else:
                message.string, message.flags = text, set(message.flags) - {"fuzzy"}
        with PO.open("wb") as handle:
            write_po(handle, catalog, width=110)
        with (PO.parent / "messages.mo").open("wb") as handle:
            write_mo(handle, catalog)
    return new


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    pairs = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    print(f"{add(pairs)} new, {len(pairs)} given")
