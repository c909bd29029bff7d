"""Events: a producer says what changed, the packages that care subscribe, and nobody imports the other.

Synchronous: `publish(session, event)` calls every handler of the event's type, in the order they
subscribed, in the publisher's session and transaction, exactly as a direct call would, and returns their
results. Handlers subscribe when their module is imported; the first publish imports every domain module
(app.core.plugins.import_domains) so that no handler is missing in a process that has not loaded them all.
A handler that must not disturb its publisher catches its own errors (the re-check and the notifications do).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlmodel import Session

Handler = Callable[[Session, Any], Any]

_HANDLERS: dict[type, dict[str, Handler]] = {}
_domains_loaded = False


@dataclass(frozen=True)
class EvidenceChanged:
    """New evidence of a provider landed at `since` (scrape, lookup, run, upload, questionnaire, edit)."""

    provider_id: int | None
    since: datetime | None
    cause: str


@dataclass(frozen=True)
class ChangesRecorded:
    """Change events (ChangeEvent row ids) were stored and committed; their watchers are to hear of them."""

    event_ids: tuple[int, ...]


@dataclass(frozen=True)
class DayStarted:
    """The daily watch runs for `today` (the business day): dated duties are checked against it."""

    today: date


def _key(handler: Handler) -> str:
    """A handler's dotted name: subscribing it again (a reloaded module) replaces it in its place."""
    return f"{handler.__module__}.{handler.__qualname__}"


def subscribe(event_type: type, handler: Handler | None = None) -> Any:
    """Call `handler(session, event)` on every published `event_type`; without a handler, a decorator."""
    if handler is None:
        return lambda fn: subscribe(event_type, fn)
    _HANDLERS.setdefault(event_type, {})[_key(handler)] = handler
    return handler


def unsubscribe(event_type: type, handler: Handler) -> None:
    """Stop calling `handler` for `event_type` (tests that subscribe their own)."""
    _HANDLERS.get(event_type, {}).pop(_key(handler), None)


def handlers_of(event_type: type) -> list[Handler]:
    """The handlers of an event type, in the order they subscribed."""
    _load_domains()
    return list(_HANDLERS.get(event_type, {}).values())


def publish(session: Session, event: Any) -> list[Any]:
    """Run the event type's handlers in the publisher's transaction; returns their results in order."""
    return [handler(session, event) for handler in handlers_of(type(event))]


def _load_domains() -> None:
    """Import every domain module once, so that every handler has subscribed."""
    global _domains_loaded
    if _domains_loaded:
        return
    from app.core.plugins import import_domains

    import_domains()
    _domains_loaded = True
