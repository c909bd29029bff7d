"""Issue 27 items 7 and 9: webhooks whose name does not resolve yet, failures said in words, test e-mails,
new users watching everything, the inbox's 7-day backfill on the first visit, and pruning old rows
(SQLite and PostgreSQL)."""

from __future__ import annotations

import re
from datetime import date, timedelta

from flask_babel import force_locale
from sqlmodel import Session, func, select

from app.core import clock
from app.models import User
from app.models.notify import Delivery, DeliveryAttempt, InboxItem, NotifySettings, Webhook
from app.models.watch import ChangeEvent
from app.notify import dispatch as notify_dispatch
from app.notify import retention, wording
from app.notify import watches as notifications
from app.notify import webhooks as notify_webhooks
from app.registry.providers import create_provider
from tests.notify import test_notifications as base

UNRESOLVABLE = "https://hooks.gpuvet-test.invalid/gpuvet"  # .invalid never resolves (RFC 6761)


def _user_id(session: Session, name: str) -> int:
    return session.exec(select(User.id).where(User.username == name)).one()


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _stored_event(session: Session, provider_id: int, key: str, *, age_days: float) -> ChangeEvent:
    """A change event stored `age_days` ago (before anyone's inbox existed: no fan-out)."""
    event = ChangeEvent(
        provider_id=provider_id,
        kind="finding_added",
        subject=key,
        dedupe_key=f"test:{provider_id}:{key}",
        severity="warning",
        message_zh=f"新发现：{key}",
        message_en=f"new finding: {key}",
        occurred_on=date(2026, 12, 1),
        created_at=clock.now() - timedelta(days=age_days),
    )
    session.add(event)
    session.commit()
    return event


# ---------------------------------------------------------------- item 7: resolve at delivery
def test_a_webhook_whose_name_does_not_resolve_is_saved_and_its_failure_said_in_words(
    notify_app, session, login
):
    client = login("viewer")
    created = client.post("/notifications/webhooks", data={"url": UNRESOLVABLE, "description": "later"})
    assert created.status_code == 200 and 'id="webhook-secret-value"' in created.get_data(as_text=True)
    [hook] = session.exec(select(Webhook)).all()
    assert hook.url == UNRESOLVABLE

    tested = client.post(f"/notifications/webhooks/{hook.id}/test", follow_redirects=True)
    html = _text(tested.get_data(as_text=True))
    assert "测试消息未送达：无法解析域名 hooks.gpuvet-test.invalid：它现在没有对应的地址" in html
    assert "Errno" not in html and "Name or service" not in html
    delivery = session.exec(select(Delivery)).one()
    assert (delivery.state, delivery.attempts) == ("failed", 1)

    client.get("/lang/en")
    english = _text(client.get("/notifications").get_data(as_text=True))
    assert "Cannot resolve the host name hooks.gpuvet-test.invalid" in english
    assert "无法解析" not in english


def test_an_address_refused_now_is_still_refused_when_saving(notify_app, session):
    settings = notify_app.config["GPUVET_SETTINGS"].model_copy(update={"fetch_allow_cidrs": ()})
    with notify_app.test_request_context():
        try:
            notify_webhooks.check_webhook_url("http://127.0.0.1:9/hook", settings)
        except Exception as exc:  # noqa: BLE001 - the check's own error is what is asserted
            refused = exc
        else:
            refused = None
    assert refused is not None and refused.errors[0].field == "url"
    assert "127.0.0.1" in refused.errors[0].message


def test_stored_failures_are_shown_in_the_readers_language(notify_app):
    text = wording.stored(wording.http_status(503))
    with notify_app.test_request_context():
        assert wording.shown(text) == "接收方回复 HTTP 503"
        with force_locale("en"):
            assert wording.shown(text) == "The receiver answered HTTP 503"
        assert wording.shown("an old plain error") == "an old plain error"


def test_send_a_test_email_to_the_local_smtp_server(notify_app, session, login, mail):
    client = login("viewer")
    client.post("/notifications/preferences", data={"email_enabled": "1", "email": "me@example.cn"})
    page = client.get("/notifications").get_data(as_text=True)
    assert 'id="email-test"' in page
    sent = client.post("/notifications/email/test", follow_redirects=True)
    assert "测试消息已送达" in _text(sent.get_data(as_text=True))
    [message] = mail
    assert message.to == ["me@example.cn"] and "测试邮件" in message.subject
    delivery = session.exec(select(Delivery).where(Delivery.channel == "email")).one()
    assert (delivery.state, delivery.user_id) == ("delivered", _user_id(session, "viewer"))


def test_a_test_email_to_a_closed_port_says_the_connection_was_refused(notify_app, session, login):
    free = base._free_port()  # nothing listens there
    notify_app.config["GPUVET_SETTINGS"] = notify_app.config["GPUVET_SETTINGS"].model_copy(
        update={"smtp_port": free}
    )
    client = login("viewer")
    client.post("/notifications/preferences", data={"email_enabled": "1", "email": "me@example.cn"})
    sent = _text(client.post("/notifications/email/test", follow_redirects=True).get_data(as_text=True))
    assert f"发往邮件服务器 127.0.0.1:{free} 失败：连接被拒绝" in sent
    assert "Errno" not in sent


# ---------------------------------------------------------------- item 9: default watch, backfill
def test_new_users_watch_everything_and_users_who_chose_keep_their_choice(app, session, make_user):
    make_user("newcomer", "viewer")
    make_user("chooser", "viewer")
    newcomer, chooser = _user_id(session, "newcomer"), _user_id(session, "chooser")
    notifications.set_watch_all(session, chooser, False)  # as migration 0023 stores for existing users
    assert notifications.settings_of(session, newcomer).watch_all is True
    assert session.exec(select(NotifySettings).where(NotifySettings.user_id == newcomer)).first() is None

    provider = create_provider(session, data={"legal_name": "默认关注算力有限公司"}).id
    assert base._event(app, session, provider, "a") == 1
    assert session.exec(select(InboxItem.user_id)).all() == [newcomer]


def test_the_first_inbox_visit_shows_the_last_seven_days(app, session, login):
    provider = create_provider(session, data={"legal_name": "回填算力有限公司"}).id
    old = _stored_event(session, provider, "eight-days", age_days=8)
    recent = _stored_event(session, provider, "two-days", age_days=2)
    client = login("viewer")
    user = _user_id(session, "viewer")

    first = client.get("/inbox").get_data(as_text=True)
    assert 'id="inbox-first-visit"' in first
    assert "新发现：two-days" in first and "新发现：eight-days" not in first
    items = session.exec(select(InboxItem.event_id).where(InboxItem.user_id == user)).all()
    assert items == [recent.id] and old.id not in items

    later = _stored_event(session, provider, "one-day", age_days=1)  # stored without fan-out
    second = client.get("/inbox").get_data(as_text=True)
    assert 'id="inbox-first-visit"' not in second and "新发现：one-day" not in second  # only once
    assert later.id not in session.exec(select(InboxItem.event_id)).all()


def test_the_backfill_of_a_user_watching_one_provider_takes_that_providers_events(app, session, make_user):
    make_user("picky", "viewer")
    user = _user_id(session, "picky")
    mine = create_provider(session, data={"legal_name": "甲回填有限公司"}).id
    other = create_provider(session, data={"legal_name": "乙回填有限公司"}).id
    notifications.set_watch_all(session, user, False)
    notifications.watch(session, user, mine)
    wanted = _stored_event(session, mine, "mine", age_days=3)
    _stored_event(session, other, "other", age_days=3)
    assert notifications.backfill(session, user, days=7) == 1
    assert session.exec(select(InboxItem.event_id).where(InboxItem.user_id == user)).all() == [wanted.id]
    assert notifications.backfill(session, user, days=7) == 0  # already there


# ---------------------------------------------------------------- item 9: pruning
def test_pruning_removes_old_inbox_items_and_finished_deliveries_only(app, session, make_user):
    make_user("keeper", "viewer")
    user = _user_id(session, "keeper")
    provider = create_provider(session, data={"legal_name": "清理算力有限公司"}).id
    old_event = _stored_event(session, provider, "old", age_days=40)
    new_event = _stored_event(session, provider, "new", age_days=5)
    now = clock.now()
    session.add(InboxItem(user_id=user, event_id=old_event.id, created_at=now - timedelta(days=40)))
    session.add(InboxItem(user_id=user, event_id=new_event.id, created_at=now - timedelta(days=5)))
    deliveries = {
        "old_done": Delivery(channel="email", target="a@example.cn", state="delivered"),
        "old_failed": Delivery(channel="email", target="a@example.cn", state="failed"),
        "old_retrying": Delivery(channel="email", target="a@example.cn", state="retrying"),
        "new_done": Delivery(channel="email", target="a@example.cn", state="delivered"),
    }
    for name, delivery in deliveries.items():
        delivery.created_at = now - timedelta(days=40 if name.startswith("old") else 5)
        session.add(delivery)
    session.commit()
    for delivery in deliveries.values():
        session.add(DeliveryAttempt(delivery_id=delivery.id, attempt=1, ok=False))
    session.commit()

    removed = retention.prune(session, days=30)
    assert removed == {"inbox_items": 1, "deliveries": 2, "attempts": 2}
    assert session.exec(select(InboxItem.event_id)).all() == [new_event.id]
    left = set(session.exec(select(Delivery.id)).all())
    assert left == {deliveries["old_retrying"].id, deliveries["new_done"].id}
    assert session.exec(select(func.count()).select_from(DeliveryAttempt)).one() == 2


def test_the_prune_job_reads_the_retention_days_in_force(app, session, make_user):
    make_user("retained", "viewer")
    provider = create_provider(session, data={"legal_name": "保留天数算力有限公司"}).id
    event = _stored_event(session, provider, "ten-days", age_days=10)
    session.add(
        InboxItem(
            user_id=_user_id(session, "retained"),
            event_id=event.id,
            created_at=clock.now() - timedelta(days=10),
        )
    )
    session.commit()
    from app.core import runtime_settings

    with app.app_context():
        result = retention.prune_job(session, None, period="2026-12-06")  # 90 days by default
        assert result["inbox_items"] == 0 and result["days"] == 90
        runtime_settings.save(session, "notify_retention_days", "7", by="admin")
        result = retention.prune_job(session, None, period="2026-12-06")
    assert result["inbox_items"] == 1 and result["days"] == 7
    assert session.exec(select(func.count()).select_from(InboxItem)).one() == 0


def test_a_test_message_to_the_local_receiver_is_delivered(notify_app, session, make_user, hooks):
    make_user("hooked", "viewer")
    with notify_app.test_request_context():
        hook, _secret = notify_webhooks.create_webhook(
            session, notify_app.config["GPUVET_SETTINGS"], url=hooks.url, user_id=_user_id(session, "hooked")
        )
        delivery = notify_dispatch.send_test(session, hook)
    assert delivery.state == "delivered" and len(hooks.state.requests) == 1


def test_the_address_is_checked_again_when_sending(notify_app, session, make_user, hooks):
    from app.core import runtime_settings

    base._configure(notify_app, fetch_allow_cidrs=())  # loopback admitted only by the settings page
    make_user("checked", "viewer")
    with notify_app.test_request_context():
        runtime_settings.save(session, "fetch_allow_cidrs", "127.0.0.0/8", by="admin")
        hook, _secret = notify_webhooks.create_webhook(
            session, notify_app.config["GPUVET_SETTINGS"], url=hooks.url, user_id=_user_id(session, "checked")
        )
        runtime_settings.reset(session, "fetch_allow_cidrs")  # the allow list no longer admits it
        delivery = notify_dispatch.send_test(session, hook)
        shown = wording.shown(delivery.last_error)
    assert delivery.state == "failed" and hooks.state.requests == []
    assert "解析到 127.0.0.1（回环地址）" in shown and "出于安全原因拒绝访问" in shown
