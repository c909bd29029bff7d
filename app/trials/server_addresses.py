"""Which addresses a trial server may have and reach: the address policy, checked when stored and used."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from app.core.errors import FieldError, InvalidInput
from app.core.i18n import localized
from app.models.trials import TrialServer
from scrapers.addresses import AddressPolicy, AddressRefused, ResolveFailed

logger = logging.getLogger(__name__)


STRICT = AddressPolicy()  # no allow-list: what a caller without settings gets


def address_policy(settings: Any) -> AddressPolicy:
    """Which trial-server addresses may be reached: public ones, plus GPUVET_TRIAL_ALLOW_CIDRS."""
    from app.core.runtime_settings import effective

    return AddressPolicy(allow_cidrs=effective(settings).trial_allow_cidrs)


def current_policy() -> AddressPolicy:
    """The running app's trial address policy (STRICT outside an application context)."""
    from flask import current_app, has_app_context

    return address_policy(current_app.config["GPUVET_SETTINGS"]) if has_app_context() else STRICT


def _refused(message: str) -> str:
    return f"{message} — GPUVET_TRIAL_ALLOW_CIDRS"


def address_error(value: str | None, port: int, policy: AddressPolicy, *, field: str) -> FieldError | None:
    """Why `value` (an IP literal, or a name resolved now) is refused, as `field`'s error; None if admitted.

    A name that does not resolve is admitted here: the host is resolved and checked again on connecting,
    and a peer address may be a name only the provider's network knows.
    """
    if not value:
        return None
    try:
        ipaddress.ip_address(value)
    except ValueError:
        try:
            policy.resolve(value, port)
        except AddressRefused as exc:
            return FieldError(field, _refused(localized(exc.message)))
        except ResolveFailed as exc:
            logger.info("%s %s does not resolve now; checked again when used: %s", field, value, exc.message)
        return None
    message = policy.refusal(value, value, port)
    return None if message is None else FieldError(field, _refused(localized(message)))


def check_addresses(server: TrialServer, policy: AddressPolicy) -> None:
    """Refuse a host or peer address that is, or resolves to, an address the policy refuses (fields named).

    The peer address is where the target server reaches its peer (and other nodes reach this server in
    multi-node runs): it follows the same policy, so an intranet range must be in GPUVET_TRIAL_ALLOW_CIDRS.
    """
    errors = [
        error
        for value, field in ((server.host, "host"), (server.peer_address, "peer_address"))
        if (error := address_error(value, server.port, policy, field=field)) is not None
    ]
    if errors:
        raise InvalidInput(errors)


def check_address(value: str | None, port: int, policy: AddressPolicy, *, field: str) -> None:
    """Raise InvalidInput naming `field` when `value` is, or resolves to, an address the policy refuses."""
    error = address_error(value, port, policy, field=field)
    if error is not None:
        raise InvalidInput([error])


def check_literal_addresses(server: TrialServer, policy: AddressPolicy) -> None:
    """Refuse a host that is a non-public IP literal, without resolving anything (before queuing a job)."""
    try:
        ipaddress.ip_address(server.host or "")
    except ValueError:
        return
    check_address(server.host, server.port, policy, field="host")


def checked_peer_address(server: TrialServer, policy: AddressPolicy) -> str | None:
    """The server's peer address after checking it against `policy` (InvalidInput naming peer_address)."""
    check_address(server.peer_address, server.port, policy, field="peer_address")
    return server.peer_address


def resolve_checked(host: str, port: int, policy: AddressPolicy, *, field: str) -> str:
    """Resolve `host` once, check every address, and return the first (the one to connect to)."""
    try:
        addresses = policy.resolve(host, port)
    except AddressRefused as exc:
        raise InvalidInput(_refused(localized(exc.message)), field=field) from None
    except ResolveFailed as exc:
        raise InvalidInput(localized(exc.message), field=field) from None
    return str(addresses[0][1][0])
