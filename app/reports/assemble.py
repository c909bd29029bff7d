"""A report's input snapshot: its canonical JSON, and the SHA-256 printed on the report and kept with it.

The domains gather the inputs (app.credentials.report_inputs for the provider report,
app.cases.report_inputs for the case report); the renderer only reads them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(data: Any) -> bytes:
    """Stable JSON bytes (sorted keys, no spaces) for hashing a snapshot."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def snapshot_sha256(data: Any) -> str:
    """SHA-256 of the canonical JSON of `data`."""
    return hashlib.sha256(canonical_json(data)).hexdigest()
