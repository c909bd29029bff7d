"""Notifications for real: watchers' inboxes, e-mail to an aiosmtpd server on loopback, signed webhook
POSTs to a local HTTP receiver, and retries with backoff by a real Huey worker (SQLite and PostgreSQL).
"""

from __future__ import annotations

import email.policy
import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from aiosmtpd.controller import Controller
from sqlmodel import Session, col, select

from app.core.errors import InvalidInput
from app.credentials import watch
from app.credentials.watch import EventDraft
from app.models import AuditEntry, User
from app.models.notify import Delivery, DeliveryAttempt, InboxItem, Webhook
from app.notify import dispatch as notify_dispatch
from app.notify import watches as notifications
from app.notify import webhooks as notify_webhooks
from app.registry.providers import create_provider
from tests.core.jobs.test_worker_process import DEADLINE_S, worker

DAY = date(2026, 12, 2)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---------------------------------------------------------------- real receivers on loopback
class _Mailbox:
    """aiosmtpd handler keeping every message it receives."""

    def __init__(self) -> None:
        self.messages: list[SimpleNamespace] = []

    async def handle_DATA(self, _server, session, envelope) -> str:
        parsed = message_from_bytes(envelope.content, policy=email.policy.default)
        text = parsed.get_body(("plain",)).get_content()
        self.messages.append(SimpleNamespace(to=envelope.rcpt_tos, subject=parsed["Subject"], text=text))
        return "250 OK"


@pytest.fixture(scope="module")
def smtp_server() -> Iterator[SimpleNamespace]:
    """A real SMTP server (aiosmtpd) on 127.0.0.1."""
    handler = _Mailbox()
    port = _free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield SimpleNamespace(port=port, handler=handler)
    controller.stop()


class _Receiver:
    """Requests a webhook receiver got, and the statuses it answers next (then 200)."""

    def __init__(self) -> None:
        self.requests: list[SimpleNamespace] = []
        self.plan: list[int] = []
        self.lock = threading.Lock()

    def answer(self, headers, body: bytes) -> int:
        with self.lock:
            self.requests.append(SimpleNamespace(headers=dict(headers), body=body, at=time.monotonic()))
            return self.plan.pop(0) if self.plan else 200


@pytest.fixture(scope="module")
def receiver() -> Iterator[SimpleNamespace]:
    """A local HTTP server (http.server in a thread) recording webhook POSTs."""
    state = _Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = state.answer(self.headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *_args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield SimpleNamespace(url=f"http://127.0.0.1:{server.server_address[1]}/hook", state=state)
    server.shutdown()
    server.server_close()


@pytest.fixture
def mail(smtp_server):
    smtp_server.handler.messages.clear()
    return smtp_server.handler.messages


@pytest.fixture
def hooks(receiver):
    receiver.state.requests.clear()
    receiver.state.plan.clear()
    return receiver


def _configure(app, **values) -> None:
    """The app's settings with SMTP on the local server and loopback admitted for webhooks."""
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(update=values)


@pytest.fixture
def notify_app(app, smtp_server):
    """The app with deliveries run inline (Huey immediate) against the loopback servers."""
    _configure(
        app,
        smtp_host="127.0.0.1",
        smtp_port=smtp_server.port,
        smtp_starttls=False,
        smtp_from="gpuvet@example.cn",
        fetch_allow_cidrs=("127.0.0.0/8",),
        public_url="https://gpuvet.example.cn",
    )
    app.config["JOBS_IMMEDIATE"] = True
    for key in ("gpuvet.huey", "gpuvet.huey_task"):
        app.extensions.pop(key, None)
    yield app
    for key in ("gpuvet.huey", "gpuvet.huey_task"):
        app.extensions.pop(key, None)


# ---------------------------------------------------------------- arranging
def _user(session: Session, make_user, name: str, role: str = "viewer") -> int:
    """A user who chose to watch nothing (new users watch everything until they choose)."""
    make_user(name, role)
    user_id = session.exec(select(User.id).where(User.username == name)).one()
    notifications.set_watch_all(session, user_id, False)
    return user_id


def _provider(session: Session, name: str) -> int:
    return create_provider(session, data={"legal_name": name}).id


def _event(app, session: Session, provider_id: int, key: str, *, severity: str = "warning") -> int:
    """Store one change event through the real path (watch.store_events); returns how many were new."""
    draft = EventDraft("finding_added", f"R1:{key}", key, severity, f"新发现：{key}", f"new finding: {key}")
    with app.app_context():
        return watch.store_events(
            session, [(provider_id, draft, f"test:{provider_id}:{key}")], occurred_on=DAY
        )


def _inbox_users(session: Session) -> dict[int, list[int]]:
    rows = session.exec(select(InboxItem.event_id, InboxItem.user_id).order_by(InboxItem.id)).all()
    found: dict[int, list[int]] = {}
    for event_id, user_id in rows:
        found.setdefault(event_id, []).append(user_id)
    return found


def _attempts(session: Session, delivery_id: int) -> list[DeliveryAttempt]:
    statement = select(DeliveryAttempt).where(DeliveryAttempt.delivery_id == delivery_id)
    return list(session.exec(statement.order_by(col(DeliveryAttempt.attempt))).all())


# ---------------------------------------------------------------- watch-all vs one provider, inbox
def test_events_reach_watchers_of_that_provider_and_watch_all_users_once(app, session, make_user):
    one, everything, other, nobody = (
        _user(session, make_user, n) for n in ("one", "everything", "other", "nobody")
    )
    first, second = _provider(session, "甲科技有限公司"), _provider(session, "乙云计算有限公司")
    notifications.watch(session, one, first)
    notifications.watch(session, other, second)
    notifications.set_watch_all(session, everything, True)

    assert _event(app, session, first, "a") == 1
    assert _event(app, session, second, "b") == 1
    assert _event(app, session, first, "a") == 0  # the same change stored again: no second inbox item
    events = dict(session.exec(select(InboxItem.event_id, InboxItem.event_id)).all())
    by_event = _inbox_users(session)
    first_event, second_event = sorted(events)
    assert sorted(by_event[first_event]) == sorted([one, everything])
    assert sorted(by_event[second_event]) == sorted([everything, other])
    assert notifications.unread_count(session, nobody) == 0
    assert notifications.unread_count(session, everything) == 2

    entries, total = notifications.inbox(session, everything)
    assert total == 2 and [e.provider_name for e in entries] == ["乙云计算有限公司", "甲科技有限公司"]
    assert notifications.mark_read(session, everything, [entries[0].item.id]) == 1
    assert notifications.unread_count(session, everything) == 1
    assert notifications.mark_read(session, one, [entries[1].item.id]) == 0  # someone else's item: untouched
    assert notifications.unwatch(session, one, first) is True
    _event(app, session, first, "c")
    assert one not in _inbox_users(session)[max(_inbox_users(session))]


# ---------------------------------------------------------------- e-mail and webhooks, inline
def test_a_watcher_gets_the_mail_and_both_webhooks_a_signed_post(notify_app, session, make_user, mail, hooks):
    app = notify_app
    settings = app.config["GPUVET_SETTINGS"]
    analyst = _user(session, make_user, "analyst", "analyst")
    provider = _provider(session, "丙算力有限公司")
    notifications.watch(session, analyst, provider)
    notifications.save_settings(session, analyst, watch_all=False, email_enabled=True, email="ana@example.cn")
    personal, personal_secret = notify_webhooks.create_webhook(
        session, settings, url=hooks.url + "/mine", user_id=analyst, created_by="analyst"
    )
    shared, shared_secret = notify_webhooks.create_webhook(
        session, settings, url=hooks.url + "/all", user_id=None, secret="s" * 20, created_by="admin"
    )

    assert _event(app, session, provider, "licence") == 1

    [message] = mail
    assert message.to == ["ana@example.cn"]
    assert message.subject == "[gpuvet] 丙算力有限公司：新发现：licence"
    assert "new finding: licence" in message.text
    assert f"https://gpuvet.example.cn/providers/{provider}" in message.text
    assert len(hooks.state.requests) == 2
    secrets_by_hook = {personal.id: personal_secret, shared.id: shared_secret}
    for request in hooks.state.requests:
        delivery = session.get(Delivery, int(request.headers["X-Gpuvet-Delivery"]))
        secret, signature = secrets_by_hook[delivery.webhook_id], request.headers["X-Gpuvet-Signature"]
        assert signature.startswith("sha256=") and notify_webhooks.signature_matches(
            secret, request.body, signature
        )
        assert not notify_webhooks.signature_matches("another secret 123", request.body, signature)
        body = json.loads(request.body)
        assert request.headers["X-Gpuvet-Timestamp"] == str(body["sent_at"])
        assert body["type"] == "change_event" and body["event"]["provider_name"] == "丙算力有限公司"
        assert body["event"]["message_en"] == "new finding: licence"
    deliveries = session.exec(select(Delivery).order_by(Delivery.id)).all()
    assert sorted((d.channel, d.state, d.attempts) for d in deliveries) == [
        ("email", "delivered", 1),
        ("webhook", "delivered", 1),
        ("webhook", "delivered", 1),
    ]
    for delivery in deliveries:
        [attempt] = _attempts(session, delivery.id)
        assert attempt.ok and attempt.attempt == 1 and attempt.duration_ms >= 0
        assert attempt.status_code == (200 if delivery.channel == "webhook" else None)
    # the secret is stored encrypted, and not even that goes into the audit trail
    stored = session.get(Webhook, personal.id)
    assert personal_secret not in stored.secret_encrypted
    assert notify_webhooks.decrypt_secret(stored, settings) == personal_secret
    audit = session.exec(select(AuditEntry).where(AuditEntry.entity == "webhook")).all()
    assert len(audit) == 2 and all("secret_encrypted" not in entry.changes for entry in audit)
    assert {entry.entity for entry in session.exec(select(AuditEntry)).all()} >= {
        "provider_watch",
        "notify_settings",
    }


def test_one_email_lists_the_changes_of_one_batch(notify_app, session, make_user, mail):
    user = _user(session, make_user, "viewer")
    first, second = _provider(session, "癸算力有限公司"), _provider(session, "子数据有限公司")
    notifications.save_settings(session, user, watch_all=True, email_enabled=True, email="all@example.cn")
    drafts = [
        (
            first,
            EventDraft("expired", "licence:1", "expired", "blocker", "许可证已过期", "licence expired"),
            "k1",
        ),
        (second, EventDraft("verdict_changed", "", "verdict", "warning", "结论变为不通过", "now fail"), "k2"),
    ]
    with notify_app.app_context():
        assert watch.store_events(session, drafts, occurred_on=DAY) == 2

    [message] = mail
    assert message.subject == "[gpuvet] 2 项变化 / 2 changes: 癸算力有限公司、子数据有限公司"
    assert "licence expired" in message.text and "now fail" in message.text
    assert notifications.unread_count(session, user) == 2


def test_a_failing_receiver_is_retried_later_and_the_failure_never_reaches_the_check(
    notify_app, session, make_user, hooks
):
    app = notify_app
    settings = app.config["GPUVET_SETTINGS"]
    user = _user(session, make_user, "viewer")
    provider = _provider(session, "丁数据有限公司")
    notifications.set_watch_all(session, user, True)
    notify_webhooks.create_webhook(session, settings, url=hooks.url, user_id=user)
    hooks.state.plan[:] = [503]

    assert _event(app, session, provider, "x") == 1  # the store succeeds although the receiver failed

    [delivery] = session.exec(select(Delivery)).all()
    assert delivery.state == "retrying" and delivery.attempts == 1 and "503" in delivery.last_error
    [attempt] = _attempts(session, delivery.id)
    assert (attempt.ok, attempt.status_code) == (False, 503)
    assert notifications.unread_count(session, user) == 1  # the inbox got it all the same


def test_webhook_urls_to_private_addresses_are_refused_unless_allowed(app, session):
    settings = app.config["GPUVET_SETTINGS"]
    for url, words in [
        ("http://127.0.0.1:9/hook", "回环地址"),
        ("http://10.1.2.3/hook", "内网地址"),
        ("ftp://example.cn/hook", "http://"),
        ("https://user:pw@example.cn/", "http://"),
        ("", "必填项"),
    ]:
        with pytest.raises(InvalidInput) as refused:
            notify_webhooks.create_webhook(session, settings, url=url, user_id=None)
        assert refused.value.errors[0].field == "url" and words in refused.value.errors[0].message, url
    allowed = settings.model_copy(update={"fetch_allow_cidrs": ("127.0.0.0/8",)})
    assert (
        notify_webhooks.check_webhook_url(" http://127.0.0.1:9/hook ", allowed) == "http://127.0.0.1:9/hook"
    )
    with pytest.raises(InvalidInput) as short:
        notify_webhooks.create_webhook(
            session, allowed, url="http://127.0.0.1:9/", user_id=None, secret="short"
        )
    assert short.value.errors[0].field == "secret"


def test_an_unreachable_smtp_server_does_not_stop_the_webhook(notify_app, session, make_user, hooks):
    app = notify_app
    _configure(app, smtp_port=_free_port())  # nothing listens there
    user = _user(session, make_user, "viewer")
    provider = _provider(session, "戊智算有限公司")
    notifications.watch(session, user, provider)
    notifications.save_settings(session, user, watch_all=False, email_enabled=True, email="v@example.cn")
    notify_webhooks.create_webhook(session, app.config["GPUVET_SETTINGS"], url=hooks.url, user_id=user)

    _event(app, session, provider, "y")

    states = dict(session.exec(select(Delivery.channel, Delivery.state)).all())
    assert states == {"email": "retrying", "webhook": "delivered"}
    email = session.exec(select(Delivery).where(Delivery.channel == "email")).one()
    [attempt] = _attempts(session, email.id)
    assert not attempt.ok and "发往邮件服务器" in attempt.error and len(hooks.state.requests) == 1


# ---------------------------------------------------------------- a real worker: retries with backoff
@pytest.mark.slow
def test_a_worker_retries_with_backoff_until_the_receiver_answers(
    app, session, database_url, make_user, hooks, tmp_path
):
    _configure(
        app,
        fetch_allow_cidrs=("127.0.0.0/8",),
        smtp_host="127.0.0.1",
        smtp_port=_free_port(),
        smtp_starttls=False,
    )
    user = _user(session, make_user, "viewer")
    provider = _provider(session, "己算力有限公司")
    notifications.watch(session, user, provider)
    notifications.save_settings(session, user, watch_all=False, email_enabled=True, email="v@example.cn")
    _hook, secret = notify_webhooks.create_webhook(
        session, app.config["GPUVET_SETTINGS"], url=hooks.url, user_id=user
    )
    hooks.state.plan[:] = [500, 500]
    log = tmp_path / "worker.log"
    environment = {
        "GPUVET_FETCH_ALLOW_CIDRS": "127.0.0.0/8",
        "GPUVET_NOTIFY_RETRY_BASE_S": "0.2",
        "GPUVET_NOTIFY_MAX_ATTEMPTS": "3",
        "GPUVET_SMTP_HOST": "127.0.0.1",
        "GPUVET_SMTP_PORT": str(app.config["GPUVET_SETTINGS"].smtp_port),  # nothing listens: e-mail fails
        "GPUVET_SMTP_STARTTLS": "false",
    }
    with worker(app, database_url, log, extra_env=environment):
        _event(app, session, provider, "z")  # queued on the worker's queue file, after the commit
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            with Session(app.extensions["gpuvet.engine"]) as fresh:
                states = dict(fresh.exec(select(Delivery.channel, Delivery.state)).all())
            if states == {"webhook": "delivered", "email": "failed"}:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"deliveries still {states}; worker log:\n{log.read_text()[-4000:]}")

    hook_delivery = session.exec(select(Delivery).where(Delivery.channel == "webhook")).one()
    attempts = _attempts(session, hook_delivery.id)
    assert [(a.attempt, a.status_code, a.ok) for a in attempts] == [
        (1, 500, False),
        (2, 500, False),
        (3, 200, True),
    ]
    times = [request.at for request in hooks.state.requests]
    assert times[1] - times[0] >= 0.2 and times[2] - times[1] >= 0.4  # backoff 0.2 s, then 0.4 s (at least)
    assert all(
        notify_webhooks.signature_matches(secret, r.body, r.headers["X-Gpuvet-Signature"])
        for r in hooks.state.requests
    )
    email = session.exec(select(Delivery).where(Delivery.channel == "email")).one()
    assert [a.attempt for a in _attempts(session, email.id)] == [1, 2, 3] and email.attempts == 3


def test_the_sweep_requeues_deliveries_whose_task_was_lost(notify_app, session, make_user, hooks):
    user = _user(session, make_user, "viewer")
    hook, _secret = notify_webhooks.create_webhook(
        session, notify_app.config["GPUVET_SETTINGS"], url=hooks.url, user_id=user
    )
    lost = Delivery(
        channel="webhook", target=hook.url, user_id=user, webhook_id=hook.id, payload={"type": "test"}
    )
    session.add(lost)
    session.commit()
    engine = notify_app.extensions["gpuvet.engine"]
    with notify_app.app_context():
        assert notify_dispatch.sweep(engine) == []  # young: its own task may still come
        later = datetime.now(UTC) + timedelta(minutes=5)
        assert notify_dispatch.sweep(engine, now=later) == [lost.id]
    session.refresh(lost)
    assert lost.state == "delivered" and len(hooks.state.requests) == 1
