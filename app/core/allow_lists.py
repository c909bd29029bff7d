"""Allow-list entries of the settings: host names ('name' or '*.suffix', with an optional ':port')."""

from __future__ import annotations

from collections.abc import Iterable


def _(text: str, **values: object) -> str:
    """The error text in the reader's language (flask_babel, imported only when an entry is malformed)."""
    from flask_babel import gettext

    return gettext(text, **values)


def _host_entry(entry: str) -> tuple[str, int | None]:
    """(name or '*.suffix', port or None) from an allow-list entry 'name[:port]'; ValueError if bad."""
    entry = entry.strip().lower()
    name, sep, port = entry.rpartition(":")
    if not sep:
        name, port = entry, ""
    elif not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(_("%(entry)s：端口须为 1-65535", entry=repr(entry)))
    name = name.rstrip(".")
    if not name or ":" in name or "/" in name:
        raise ValueError(_("%(entry)s：须为主机名或 *.后缀，可加 :端口", entry=repr(entry)))
    return name, int(port) if port else None


def parse_host_entries(entries: Iterable[str]) -> tuple[tuple[str, int | None], ...]:
    """Allow-listed host entries as (name, port or None); ValueError names a malformed one."""
    return tuple(_host_entry(entry) for entry in entries if entry.strip())
