"""Look for processes by command line through /proc (no procps needed)."""

from __future__ import annotations

from pathlib import Path


def command_lines(containing: str) -> list[str]:
    """Command lines of running processes that contain `containing` (arguments joined by spaces)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:  # the process ended meanwhile
            continue
        line = raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
        if containing in line:
            found.append(line)
    return found
