"""Text safety for reports: invisible direction and zero-width characters are shown, never obeyed."""

from __future__ import annotations

import re

# Bidirectional overrides/embeddings/isolates and marks, plus zero-width space/(non-)joiner, word joiner, BOM.
# A right-to-left override in a company name would otherwise reverse the text that follows it in the PDF.
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def reveal_controls(text: str) -> str:
    """Replace invisible direction/zero-width characters with a visible [U+XXXX] marker."""
    return _INVISIBLE.sub(lambda match: f"[U+{ord(match.group()):04X}]", text)


def has_controls(text: str) -> bool:
    """Whether `text` holds any character reveal_controls would replace."""
    return bool(_INVISIBLE.search(text))


def entity_controls(text: str) -> str:
    """Write the same characters as &#xXXXX; references (for form values, which must round-trip)."""
    return _INVISIBLE.sub(lambda match: f"&#x{ord(match.group()):04X};", text)
