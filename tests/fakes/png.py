"""A tiny PNG writer (no imaging library needed) for fake captcha pictures."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def png(
    width: int, height: int, *, gap_x: int | None = None, colour: tuple[int, int, int] = (90, 140, 200)
) -> bytes:
    """An RGB PNG of one colour; a darker vertical band at gap_x marks a slider-captcha gap."""
    rows = []
    for _y in range(height):
        row = bytearray(b"\x00")
        for x in range(width):
            dark = gap_x is not None and gap_x <= x < gap_x + 12
            row += bytes(c // 3 for c in colour) if dark else bytes(colour)
        rows.append(bytes(row))
    raw = b"".join(rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw))
        + _chunk(b"IEND", b"")
    )
