"""Trial servers: registry, credentials encrypted at rest (Fernet), host-key pinning.

The Fernet key comes from GPUVET_TRIAL_SECRET_KEY, or from instance/trial_secret.key, generated once.
Private keys and passwords are validated on the way in (a key must load, with its passphrase) and only
ever decrypted to build an SSHTarget for benchmarks.ssh.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from flask_babel import gettext as _
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlmodel import Session, col, select

from app.core import clock
from app.core.config import read_or_create_secret
from app.core.errors import FieldError, InvalidInput, NotFound, from_validation_error
from app.core.i18n import localized
from app.core.jobs import background, enqueue, recent_jobs, report_progress
from app.core.records import get_or_404
from app.core.versions import VersionedKind, check_version, commit_versioned
from app.models import AuditEntry, Offer, Provider
from app.models.jobs import Job
from app.models.trials import AuthMethod, TrialServer
from app.trials.server_addresses import (
    STRICT,
    address_policy,
    check_addresses,
    check_literal_addresses,
    resolve_checked,
)
from benchmarks.ssh import InvalidKey, SSHError, SSHRunner, SSHTarget, UnknownHostKey, load_private_key
from benchmarks.ssh import normalize_fingerprint as ssh_normalize_fingerprint
from benchmarks.ssh_messages import ssh_message
from scrapers.addresses import AddressPolicy

logger = logging.getLogger(__name__)


KEY_FILE = "trial_secret.key"


FINGERPRINT = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")


HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


USERNAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


FETCH_TIMEOUT_S = 10.0


CHECK_TIMEOUT_S = 20.0


HOST_KEY_KIND = "trial.host_key"


CHECK_KIND = "trial.check"


def cipher_from_settings(settings: Any) -> Fernet:
    """The Fernet cipher for trial-server secrets (settings key, or the instance key file)."""
    if settings.trial_secret_key:
        try:
            return Fernet(settings.trial_secret_key.encode())
        except ValueError as exc:
            raise InvalidInput(
                _("GPUVET_TRIAL_SECRET_KEY 须为 Fernet 密钥（32 字节，URL 安全的 base64）"),
                field="GPUVET_TRIAL_SECRET_KEY",
            ) from exc
    return Fernet(read_or_create_secret(Path(settings.instance_path) / KEY_FILE, Fernet.generate_key).strip())


def _decrypt(cipher: Fernet, token: str | None, field: str) -> str | None:
    if token is None:
        return None
    try:
        return cipher.decrypt(token.encode()).decode()
    except InvalidToken:
        raise InvalidInput(
            _("无法解密已保存的凭据：加密密钥已更换，请重新填写"),
            field=field,
        ) from None


def _host(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        if HOSTNAME.match(value):
            return value.lower()
    raise ValueError(_("须为主机名或 IP 地址"))


BLANKABLE = ("private_key", "passphrase", "password", "host_key_fingerprint", "peer_address", "notes")


BLANKABLE += ("offer_id", "peer_id")


class TrialServerIn(BaseModel):
    """A trial server as entered: where, who, how to log in, which offer it stands for."""

    model_config = ConfigDict(extra="forbid")  # secrets are kept exactly as typed: no stripping

    name: str = Field(min_length=1, max_length=80)
    host: str = Field(max_length=255)
    port: int = Field(22, ge=1, le=65535)
    username: str = Field("root", max_length=64)
    auth_method: AuthMethod = AuthMethod.key
    private_key: str | None = Field(None, max_length=20000)
    passphrase: str | None = Field(None, max_length=1024)
    password: str | None = Field(None, max_length=1024)
    host_key_fingerprint: str | None = Field(None, max_length=200)
    offer_id: int | None = Field(None, ge=1, le=2**31 - 1)
    peer_id: int | None = Field(None, ge=1, le=2**31 - 1)
    peer_address: str | None = Field(None, max_length=255)
    notes: str | None = Field(None, max_length=2000)

    @field_validator(*BLANKABLE, mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("name", "host", "username", "peer_address", "notes", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("host", "peer_address")
    @classmethod
    def _hosts(cls, value: str | None) -> str | None:
        return _host(value)

    @field_validator("username")
    @classmethod
    def _username(cls, value: str) -> str:
        if not USERNAME.match(value):
            raise ValueError(_("须为 Linux 用户名，如 root、ubuntu"))
        return value

    @field_validator("host_key_fingerprint")
    @classmethod
    def _fingerprint(cls, value: str | None) -> str | None:
        return None if value is None else normalize_fingerprint(value)


def normalize_fingerprint(text: str) -> str:
    """`SHA256:<43 base64 chars>` from what ssh-keygen -lf prints (or the bare hash); ValueError else."""
    value = ssh_normalize_fingerprint(text).rstrip("=")
    if not FINGERPRINT.match(value):
        raise ValueError(_("须为 SHA256 指纹，如 ssh-keygen -lf 输出的 SHA256:…"))
    return value


def _check_secrets(
    auth_method: AuthMethod, private_key: str | None, passphrase: str | None, password: str | None
) -> None:
    """FieldErrors when the chosen login method lacks its secret or the key does not load."""
    if auth_method == AuthMethod.key:
        if not private_key:
            raise InvalidInput(_("使用密钥登录时须填写私钥"), field="private_key")
        try:
            load_private_key(private_key, passphrase)
        except InvalidKey as exc:
            raise InvalidInput(localized(ssh_message(exc)), field="private_key") from None
    elif not password:
        raise InvalidInput(_("使用密码登录时须填写密码"), field="password")


def _check_links(session: Session, server: TrialServer) -> None:
    """The offer and the peer must belong to the server's provider (checked before anything is written)."""
    with session.no_autoflush:
        errors = _link_errors(session, server)
    if errors:
        session.rollback()
        raise InvalidInput(errors)


@contextmanager
def _also_naming(errors: list[FieldError]) -> Iterator[None]:
    """Run checks whose failure (InvalidInput or a ValidationError) is raised together with `errors`."""
    try:
        yield
    except ValidationError as exc:
        raise InvalidInput([*errors, *from_validation_error(exc).errors]) from None
    except InvalidInput as exc:
        raise InvalidInput([*errors, *exc.errors]) from None


def _missing_offer(session: Session, provider_id: int, data: dict[str, Any]) -> list[FieldError]:
    """The offer field's error when the provider has offers and `data` names none of them."""
    if str(data.get("offer_id") or "").strip():
        return []
    has_offers = session.exec(select(Offer.id).where(Offer.provider_id == provider_id).limit(1)).first()
    if has_offers is None:
        return []
    return [
        FieldError(
            "offer_id",
            _("请选择这台服务器对应的报价：该供应商已登记报价，测试结果要与所选报价的标称值比较。"),
        )
    ]


def _link_errors(session: Session, server: TrialServer) -> list[FieldError]:
    errors = []
    if server.offer_id is not None:
        offer = session.get(Offer, server.offer_id)
        if offer is None or offer.provider_id != server.provider_id:
            errors.append(FieldError("offer_id", _("须为该供应商的报价")))
    if server.peer_id is not None:
        peer = session.get(TrialServer, server.peer_id)
        if peer is None or peer.provider_id != server.provider_id or peer.id == server.id:
            message = _("须为该供应商的另一台试用服务器")
            errors.append(FieldError("peer_id", message))
    return errors


def get_server(session: Session, *, server_id: int) -> TrialServer:
    """One trial server, or NotFound."""
    return get_or_404(
        session, TrialServer, server_id, _("试用服务器 %(id)s 不存在", id=server_id), field="trial_server_id"
    )


def list_servers(session: Session, *, provider_id: int | None = None) -> list[TrialServer]:
    """Trial servers (of one provider), newest first."""
    stmt = select(TrialServer)
    if provider_id is not None:
        stmt = stmt.where(TrialServer.provider_id == provider_id)
    return list(session.exec(stmt.order_by(col(TrialServer.id).desc())).all())


def create_server(
    session: Session,
    *,
    provider_id: int,
    data: dict[str, Any],
    cipher: Fernet,
    user: Any = None,
    policy: AddressPolicy = STRICT,
    require_offer: bool = False,
) -> TrialServer:
    """Validate and store a new trial server with its secret encrypted (address policy checked).

    With `require_offer` (the page's form), a provider with offers must have one chosen.
    """
    if session.get(Provider, provider_id) is None:
        raise NotFound(_("供应商 %(id)s 不存在", id=provider_id), field="provider_id")
    missing = _missing_offer(session, provider_id, data) if require_offer else []
    with _also_naming(missing):
        entered = TrialServerIn.model_validate(data)
        _check_secrets(entered.auth_method, entered.private_key, entered.passphrase, entered.password)
    secret = entered.private_key if entered.auth_method == AuthMethod.key else entered.password
    server = TrialServer(
        provider_id=provider_id,
        **entered.model_dump(exclude={"private_key", "passphrase", "password", "host_key_fingerprint"}),
        secret_encrypted=cipher.encrypt(secret.encode()).decode(),
        passphrase_encrypted=(
            cipher.encrypt(entered.passphrase.encode()).decode()
            if entered.passphrase and entered.auth_method == AuthMethod.key
            else None
        ),
        host_key_fingerprint=entered.host_key_fingerprint,
        host_key_pinned_at=clock.now() if entered.host_key_fingerprint else None,
        created_by_name=getattr(user, "username", None) or session.info.get("actor", (None, "system"))[1],
    )
    with _also_naming(missing):
        check_addresses(server, policy)
    if missing:
        raise InvalidInput(missing)
    _check_links(session, server)
    session.add(server)
    session.commit()
    return server


SERVER_VERSIONS = VersionedKind(
    TrialServer,
    "试用服务器",
    "trial server",
    lambda server_id: (AuditEntry.entity == TrialServer.__tablename__) & (AuditEntry.entity_id == server_id),
)


def update_server(
    session: Session,
    *,
    server_id: int,
    data: dict[str, Any],
    cipher: Fernet,
    policy: AddressPolicy = STRICT,
    require_offer: bool = False,
) -> TrialServer:
    """Change a trial server; blank secrets keep the stored ones. A new host or port unpins the key.

    `data["version"]` must be the version the change started from (409 when someone saved in between);
    with `require_offer` (the page's form), a provider with offers must have one chosen.
    """
    server = get_server(session, server_id=server_id)
    data = dict(data)
    expected = check_version(session, SERVER_VERSIONS, server, data.pop("version", None))
    if require_offer and (missing := _missing_offer(session, server.provider_id, data)):
        raise InvalidInput(missing)
    current = server_values(server)
    merged = {**current, **{key: value for key, value in data.items() if key in TrialServerIn.model_fields}}
    unknown = sorted(set(data) - set(TrialServerIn.model_fields))
    if unknown:
        raise InvalidInput([FieldError(name, _("不认识的字段")) for name in unknown])
    try:
        entered = TrialServerIn.model_validate(merged)
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    switching = entered.auth_method != server.auth_method
    stored_secret = None if switching else _decrypt(cipher, server.secret_encrypted, "secret")
    key = entered.private_key or (stored_secret if entered.auth_method == AuthMethod.key else None)
    password = entered.password or (stored_secret if entered.auth_method == AuthMethod.password else None)
    passphrase = entered.passphrase or (
        None
        if switching or entered.private_key
        else _decrypt(cipher, server.passphrase_encrypted, "passphrase")
    )
    _check_secrets(entered.auth_method, key, passphrase, password)
    moved = (entered.host, entered.port) != (server.host, server.port)
    for name, value in entered.model_dump(
        exclude={"private_key", "passphrase", "password", "host_key_fingerprint"}
    ).items():
        setattr(server, name, value)
    secret = key if entered.auth_method == AuthMethod.key else password
    server.secret_encrypted = cipher.encrypt(secret.encode()).decode()
    server.passphrase_encrypted = (
        cipher.encrypt(passphrase.encode()).decode()
        if passphrase and entered.auth_method == AuthMethod.key
        else None
    )
    if entered.host_key_fingerprint and entered.host_key_fingerprint != server.host_key_fingerprint:
        server.host_key_fingerprint, server.host_key_pinned_at = entered.host_key_fingerprint, clock.now()
    elif moved and "host_key_fingerprint" not in data:
        server.host_key_fingerprint = server.host_key_type = server.host_key_pinned_at = None
    server.updated_at = clock.now()
    try:
        check_addresses(server, policy)
    except InvalidInput:
        session.rollback()
        raise
    _check_links(session, server)
    session.add(server)
    commit_versioned(session, SERVER_VERSIONS, server_id, expected)
    return server


def delete_server(session: Session, *, server_id: int) -> None:
    """Delete a trial server and its runs."""
    session.delete(get_server(session, server_id=server_id))
    session.commit()


def server_values(server: TrialServer) -> dict[str, Any]:
    """A server's editable values without any secret (for forms and the API)."""
    return {
        "name": server.name,
        "host": server.host,
        "port": server.port,
        "username": server.username,
        "auth_method": AuthMethod(server.auth_method),
        "host_key_fingerprint": server.host_key_fingerprint,
        "offer_id": server.offer_id,
        "peer_id": server.peer_id,
        "peer_address": server.peer_address,
        "notes": server.notes,
    }


def server_public(server: TrialServer) -> dict[str, Any]:
    """JSON-ready description of a server: never a secret, only whether one is stored."""
    return {
        "id": server.id,
        "provider_id": server.provider_id,
        **server_values(server),
        "auth_method": AuthMethod(server.auth_method).value,
        "host_key_type": server.host_key_type,
        "host_key_pinned_at": server.host_key_pinned_at.isoformat() if server.host_key_pinned_at else None,
        "has_passphrase": server.passphrase_encrypted is not None,
        "created_by": server.created_by_name,
        "created_at": server.created_at.isoformat() if server.created_at else None,
    }


def ssh_target(
    server: TrialServer,
    cipher: Fernet,
    *,
    policy: AddressPolicy = STRICT,
    pinned: bool = True,
    timeout: float = 10.0,
) -> SSHTarget:
    """How benchmarks.ssh reaches this server: its checked address (secrets decrypted here and only here)."""
    secret = _decrypt(cipher, server.secret_encrypted, "secret")
    passphrase = _decrypt(cipher, server.passphrase_encrypted, "passphrase")
    is_key = server.auth_method == AuthMethod.key
    return SSHTarget(
        host=resolve_checked(server.host, server.port, policy, field="host"),
        port=server.port,
        username=server.username,
        password=None if is_key else secret,
        private_key=secret if is_key else None,
        passphrase=passphrase if is_key else None,
        host_key_fingerprint=server.host_key_fingerprint if pinned else None,
        connect_timeout=timeout,
    )


def fetch_host_key(
    server: TrialServer, cipher: Fernet, *, policy: AddressPolicy = STRICT, timeout: float = FETCH_TIMEOUT_S
) -> tuple[str, str]:
    """(key type, SHA256 fingerprint) the server presents, for an analyst to confirm before pinning."""
    target = ssh_target(server, cipher, policy=policy, pinned=False, timeout=timeout)
    try:
        SSHRunner(target).connect().close()
    except UnknownHostKey as exc:
        return exc.key_type, exc.fingerprint
    except SSHError as exc:
        raise InvalidInput(
            _("无法连接：%(reason)s", reason=localized(ssh_message(exc))), field="host"
        ) from None
    raise InvalidInput(_("服务器接受了未固定的主机密钥（不应发生）"), field="host")


def pin_host_key(
    session: Session, *, server_id: int, fingerprint: str, key_type: str | None = None
) -> TrialServer:
    """Pin the host key fingerprint an analyst confirmed."""
    server = get_server(session, server_id=server_id)
    try:
        server.host_key_fingerprint = normalize_fingerprint(fingerprint)
    except ValueError as exc:
        raise InvalidInput(str(exc), field="host_key_fingerprint") from None
    server.host_key_type = (key_type or "")[:40] or None
    server.host_key_pinned_at = server.updated_at = clock.now()
    session.add(server)
    session.commit()
    return server


def check_connection(
    server: TrialServer, cipher: Fernet, *, policy: AddressPolicy = STRICT, timeout: float = CHECK_TIMEOUT_S
) -> dict[str, Any]:
    """Log in with the pinned host key and run `uname -srm`; what the analyst sees as the connection test."""
    if not server.host_key_fingerprint:
        raise InvalidInput(
            _("请先确认并固定服务器的主机密钥指纹"),
            field="host_key_fingerprint",
        )
    target = ssh_target(server, cipher, policy=policy, timeout=timeout)
    try:
        with SSHRunner(target).connect() as runner:
            result = runner.run(["uname", "-srm"], timeout=timeout)
    except SSHError as exc:
        raise InvalidInput(
            _("无法连接：%(reason)s", reason=localized(ssh_message(exc))), field="host"
        ) from None
    if not result.ok:
        raise InvalidInput(
            _("登录成功，但命令失败：%(stderr)s", stderr=result.stderr.strip()[:300]),
            field="host",
        )
    return {"address": target.host, "uname": result.stdout.strip()[:300]}


def _job_context() -> tuple[Fernet, AddressPolicy]:
    from flask import current_app

    settings = current_app.config["GPUVET_SETTINGS"]
    return cipher_from_settings(settings), address_policy(settings)


@background(HOST_KEY_KIND, title_zh="获取主机密钥指纹", title_en="Fetch a trial server's host key")
def fetch_host_key_job(session: Session, job: Job, *, server_id: int) -> dict[str, Any]:
    """The job: connect once, unpinned, and return the key the server presents for confirmation."""
    cipher, policy = _job_context()
    server = get_server(session, server_id=server_id)
    report_progress(session, job, done=0, total=1, current=f"{server.host}:{server.port}")
    key_type, fingerprint = fetch_host_key(server, cipher, policy=policy)
    report_progress(session, job, done=1, total=1, current=fingerprint)
    return {
        "server_id": server.id,
        "host": server.host,
        "port": server.port,
        "key_type": key_type,
        "fingerprint": fingerprint,
    }


@background(CHECK_KIND, title_zh="试用服务器连接测试", title_en="Trial-server connection test")
def check_connection_job(session: Session, job: Job, *, server_id: int) -> dict[str, Any]:
    """The job: log in with the pinned key and run one harmless command."""
    cipher, policy = _job_context()
    server = get_server(session, server_id=server_id)
    report_progress(session, job, done=0, total=1, current=f"{server.host}:{server.port}")
    outcome = check_connection(server, cipher, policy=policy)
    report_progress(session, job, done=1, total=1, current=outcome["uname"])
    return {"server_id": server.id, **outcome}


def start_server_job(
    session: Session, *, server_id: int, kind: str, user: Any = None, policy: AddressPolicy = STRICT
) -> Job:
    """Queue a host-key fetch or connection test for a server (one of each at a time)."""
    server = get_server(session, server_id=server_id)
    if kind not in (HOST_KEY_KIND, CHECK_KIND):
        raise InvalidInput(_("未知任务类型 %(kind)s", kind=kind), field="kind")
    if kind == CHECK_KIND and not server.host_key_fingerprint:
        raise InvalidInput(
            _("请先确认并固定服务器的主机密钥指纹"),
            field="host_key_fingerprint",
        )
    check_literal_addresses(server, policy)
    busy = next((job for job in server_jobs(session, server=server, kind=kind) if not job.finished), None)
    if busy is not None:
        return busy
    return enqueue(
        session, kind=kind, params={"server_id": server.id}, user=user, provider_id=server.provider_id
    )


def server_jobs(session: Session, *, server: TrialServer, kind: str, limit: int = 20) -> list[Job]:
    """The server's recent jobs of `kind`, newest first (looked for among its provider's jobs)."""
    found = recent_jobs(session, provider_id=server.provider_id, kind=kind, limit=limit * 5)
    return [job for job in found if job.params.get("server_id") == server.id][:limit]
