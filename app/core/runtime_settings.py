"""Settings an admin may change while the service runs (系统设置), over those read at start-up.

`effective(settings)` is the one way code reads a setting that may be edited here: the start-up Settings
(environment, instance folder, defaults) with the stored RuntimeSetting rows on top. Only the names in
EDITABLE can be stored: allow lists, schedule times and thresholds, which every use reads afresh; a
setting read once at start-up (database, keys, SMTP, workers) is shown, never edited. The rows are read
at most every CACHE_S seconds per process and database engine (at once after an edit in this process),
so the web process and the worker both see an edit without a restart.
"""

from __future__ import annotations

import ipaddress
import os
import re
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import annotated_types
import sqlalchemy as sa
from flask import current_app, g, has_app_context, has_request_context
from flask_babel import gettext as _
from pydantic import SecretStr
from sqlmodel import Session, select

from app.core import clock
from app.core.allow_lists import parse_host_entries
from app.core.config import Settings, clock_time
from app.core.errors import InvalidInput
from app.models.settings import RuntimeSetting

CACHE_S = 5.0
MASK = "••••••"

# name -> kind of value: "cidrs" and "hosts" (lists), "time" (HH:MM), "int" and "float" (within the
# field's bounds)
EDITABLE: dict[str, str] = {
    "fetch_allow_cidrs": "cidrs",
    "fetch_allow_hosts": "hosts",
    "trial_allow_cidrs": "cidrs",
    "schedule_daily_at": "time",
    "schedule_weekly_at": "time",
    "dashboard_stale_days": "int",
    "verification_max_age_days": "int",
    "notify_max_attempts": "int",
    "notify_retry_base_s": "float",
    "notify_retention_days": "int",
    "invitation_days": "int",
}
# Shown masked whatever their value: keys, passphrases, passwords and tokens.
SECRET_ENDINGS = ("secret", "_key", "_passphrase", "_password", "_token", "_tokens")
# Secrets that, when not set, are generated once into a file of the instance folder.
INSTANCE_FILES = {"secret_key": "secret_key", "trial_secret_key": "trial_secret.key"}

_cache: weakref.WeakKeyDictionary[sa.Engine, tuple[float, dict[str, Any]]] = weakref.WeakKeyDictionary()


# ---------------------------------------------------------------- reading
def _engine() -> sa.Engine | None:
    if not has_app_context():
        return None
    from app.core.db import get_engine

    return get_engine(current_app)


def stored_values(engine: sa.Engine | None = None, *, fresh: bool = False) -> dict[str, Any]:
    """The edited values by name: read once per request, else cached for CACHE_S seconds per database."""
    engine = engine or _engine()
    if engine is None:
        return {}
    if has_request_context() and not fresh:  # a request reads them once, whatever the clock says
        memo = g.setdefault("gpuvet_runtime_settings", {})
        if engine not in memo:
            memo[engine] = stored_values(engine, fresh=True)
        return memo[engine]
    cached = _cache.get(engine)
    if cached and not fresh and time.monotonic() - cached[0] < CACHE_S:
        return cached[1]
    table = RuntimeSetting.__table__
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.select(table.c.name, table.c.value)).all()
    except sa.exc.SQLAlchemyError:  # no table yet (an old database before its migration): nothing edited
        rows = []
    values = {name: value for name, value in rows if name in EDITABLE}
    _cache[engine] = (time.monotonic(), values)
    return values


def forget() -> None:
    """Drop what was read, so the next reading sees the edit (this request's and the process's)."""
    _cache.clear()
    if has_request_context():
        g.pop("gpuvet_runtime_settings", None)


def effective(settings: Any = None, engine: sa.Engine | None = None) -> Any:
    """The settings in force: `settings` (the app's when None) with the values edited on the settings page."""
    if settings is None:
        settings = current_app.config["GPUVET_SETTINGS"] if has_app_context() else Settings()
    if not isinstance(settings, Settings):
        return settings
    values = stored_values(engine)
    if not values:
        return settings
    return settings.model_copy(update={name: _typed(name, value) for name, value in values.items()})


def _typed(name: str, value: Any) -> Any:
    return tuple(value) if EDITABLE[name] in ("cidrs", "hosts") else value


# ---------------------------------------------------------------- editing
def _bounds(name: str) -> dict[str, float]:
    bounds = {}
    for item in Settings.model_fields[name].metadata:
        for attribute in ("ge", "gt", "le", "lt"):
            if isinstance(item, getattr(annotated_types, attribute.capitalize())):
                bounds[attribute] = getattr(item, attribute)
    return bounds


def _number(name: str, raw: str, kind: str) -> float | int:
    bounds = _bounds(name)
    low, high = bounds.get("ge", bounds.get("gt")), bounds.get("le", bounds.get("lt"))
    try:
        number: float | int = int(raw) if kind == "int" else float(raw)
    except ValueError:
        number = float("nan")
    inside = number == number and (  # NaN compares unequal to itself
        (low is None or number > low or (number == low and "ge" in bounds))
        and (high is None or number < high or (number == high and "le" in bounds))
    )
    if not inside:
        expected = _("整数") if kind == "int" else _("数字")
        raise InvalidInput(
            _("须为 %(low)s 到 %(high)s 之间的%(kind)s", low=low, high=high, kind=expected), field=name
        )
    return number


def parse_value(name: str, raw: str) -> Any:
    """The stored form of `raw` for setting `name`; InvalidInput naming the setting and what it accepts."""
    kind = EDITABLE.get(name)
    if kind is None:
        raise InvalidInput(_("此项不能在运行时修改"), field=name)
    raw = (raw or "").strip()
    if kind in ("cidrs", "hosts"):
        entries = [part for part in re.split(r"[,\s]+", raw) if part]
        try:
            if kind == "hosts":
                parse_host_entries(entries)
            else:
                for entry in entries:
                    try:
                        ipaddress.ip_network(entry, strict=False)
                    except ValueError:
                        raise ValueError(
                            _("%(value)s 不是 CIDR 网段，如 10.0.0.0/8", value=repr(entry))
                        ) from None
        except ValueError as exc:
            raise InvalidInput(str(exc), field=name) from None
        return entries
    if kind == "time":
        try:
            return clock_time(raw).strftime("%H:%M")
        except ValueError as exc:
            raise InvalidInput(str(exc), field=name) from None
    return _number(name, raw, kind)


def save(session: Session, name: str, raw: str, *, by: str = "") -> RuntimeSetting:
    """Store a new value of an editable setting (the change is audited) and use it from now on."""
    value = parse_value(name, raw)
    row = session.exec(select(RuntimeSetting).where(RuntimeSetting.name == name)).first()
    row = row or RuntimeSetting(name=name, value=value)
    row.value, row.updated_by_name, row.updated_at = value, by[:60], clock.now()
    session.add(row)
    session.commit()
    forget()
    return row


def reset(session: Session, name: str) -> bool:
    """Drop the edited value of a setting (back to its start-up value); returns False when none was stored."""
    if name not in EDITABLE:
        raise InvalidInput(_("此项不能在运行时修改"), field=name)
    row = session.exec(select(RuntimeSetting).where(RuntimeSetting.name == name)).first()
    if row is None:
        return False
    session.delete(row)
    session.commit()
    forget()
    return True


# ---------------------------------------------------------------- the listing
@dataclass(frozen=True)
class SettingRow:
    """One setting as the settings page shows it."""

    name: str
    env: str
    value: str
    origin: str  # "default", "environment", "instance_file", "edited"
    editable: bool
    secret: bool
    raw: str  # the value as the edit form shows it ("" for secrets)
    updated_by: str = ""


def is_secret(name: str, value: Any) -> bool:
    """Whether a setting's value is never shown (keys, passphrases, passwords, tokens)."""
    return isinstance(value, SecretStr) or "secret" in name or name.endswith(SECRET_ENDINGS)


def _masked_url(url: str) -> str:
    """A URL with the password of its user part masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", f":{MASK}@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _shown(name: str, value: Any) -> str:
    if value is None or value == ():
        return "-"
    if is_secret(name, value):
        return MASK
    if isinstance(value, (tuple, list)):
        return ", ".join(str(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return _masked_url(text) if "://" in text else text


def _origin(settings: Settings, name: str, stored: dict[str, Any]) -> str:
    if name in stored:
        return "edited"
    field = Settings.model_fields[name]
    if (field.alias and field.alias in os.environ) or name in settings.model_fields_set:
        return "environment"
    if name in INSTANCE_FILES and (Path(settings.instance_path) / INSTANCE_FILES[name]).exists():
        return "instance_file"
    if name == "database_url" and settings.resolved_database_url().startswith("sqlite:"):
        return "instance_file"
    return "default"


def listing(settings: Settings, session: Session) -> list[SettingRow]:
    """Every setting in force, secrets masked, with where its value comes from and who last edited it."""
    stored = stored_values(session.get_bind(), fresh=True)
    edited_by = dict(session.exec(select(RuntimeSetting.name, RuntimeSetting.updated_by_name)).all())
    current = effective(settings, session.get_bind())
    rows = []
    for name, field in Settings.model_fields.items():
        value = getattr(current, name)
        if name == "database_url" and value is None:
            value = current.resolved_database_url()
        secret = is_secret(name, value)
        origin = _origin(settings, name, stored)
        shown = MASK if secret and origin == "instance_file" else _shown(name, value)
        raw = "" if secret else (", ".join(value) if isinstance(value, tuple) else str(value or ""))
        rows.append(
            SettingRow(
                name=name,
                env=field.alias or name.upper(),
                value=shown,
                origin=origin,
                editable=name in EDITABLE,
                secret=secret,
                raw=raw,
                updated_by=edited_by.get(name, "") if name in stored else "",
            )
        )
    order = list(EDITABLE)
    return sorted(rows, key=lambda row: order.index(row.name) if row.editable else len(order))
