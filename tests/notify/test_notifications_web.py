"""Notification pages and API through the test client: the 关注 toggle, the inbox with its unread badge,
通知设置 (e-mail, webhooks with the test button and the delivery log), and /api/v1/inbox and watch/unwatch.
"""

from __future__ import annotations

import json
import re

from sqlmodel import Session, select

from app.models import User
from app.models.notify import Delivery, Webhook
from app.notify import watches as notifications
from app.notify.webhooks import signature_matches
from app.registry.providers import create_provider
from tests.notify import test_notifications as base

_event = base._event


def _user_id(session: Session, name: str) -> int:
    return session.exec(select(User.id).where(User.username == name)).one()


def _badge(html: str) -> str | None:
    match = re.search(r'id="inbox-unread"[^>]*>(\d+)<', html)
    return match.group(1) if match else None


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_watch_toggle_inbox_badge_and_mark_read(notify_app, session, login):
    client = login("viewer")
    user = _user_id(session, "viewer")
    provider = create_provider(session, data={"legal_name": "庚算力科技有限公司", "short_name": "庚算力"}).id
    page = client.get(f"/providers/{provider}").get_data(as_text=True)
    assert 'id="watch-toggle"' in page and 'value="watch"' in page and _badge(page) is None

    response = client.post(f"/providers/{provider}/watch", data={"action": "watch"})
    assert response.status_code == 302 and response.headers["Location"].endswith(f"/providers/{provider}")
    assert notifications.is_watching(session, user, provider)
    page = client.get(f"/providers/{provider}").get_data(as_text=True)
    assert 'value="unwatch"' in page and "已关注" in page

    _event(notify_app, session, provider, "licence-expired", severity="blocker")
    _event(notify_app, session, provider, "filing-gone")
    inbox = client.get("/inbox").get_data(as_text=True)
    assert _badge(inbox) == "2"
    assert "庚算力" in inbox and "新发现：licence-expired" in inbox and "阻断" in inbox
    item_ids = [int(i) for i in re.findall(r'id="inbox-item-(\d+)"', inbox)]
    assert len(item_ids) == 2

    opened = client.get(f"/inbox/{item_ids[0]}")
    assert opened.status_code == 302 and opened.headers["Location"].endswith(f"/providers/{provider}")
    assert _badge(client.get("/inbox").get_data(as_text=True)) == "1"
    unread = client.get("/inbox?unread=1").get_data(as_text=True)
    assert re.findall(r'id="inbox-item-(\d+)"', unread) == [str(item_ids[1])]
    assert client.post("/inbox/read", data={"item_id": ["abc"]}).status_code == 302  # nothing marked
    assert notifications.unread_count(session, user) == 1
    client.post("/inbox/read", data={"all": "1"})
    assert notifications.unread_count(session, user) == 0
    assert "没有未读消息" in client.get("/inbox?unread=1").get_data(as_text=True)
    assert client.get("/inbox?page=x").status_code == 400

    client.post(f"/providers/{provider}/watch", data={"action": "unwatch"})
    assert not notifications.is_watching(session, user, provider)
    assert client.post("/providers/999999/watch", data={"action": "watch"}).status_code == 302
    # someone else's inbox item is not found
    other = login("analyst")
    assert other.get(f"/inbox/{item_ids[0]}").status_code == 404


def test_settings_page_email_webhooks_test_button_and_delivery_log(notify_app, session, login, hooks, mail):
    client = login("viewer")
    page = client.get("/notifications")
    assert page.status_code == 200 and 'id="notify-preferences"' in page.get_data(as_text=True)

    missing = client.post("/notifications/preferences", data={"email_enabled": "1", "email": ""})
    assert missing.status_code == 422
    assert "邮箱地址: 开启邮件通知须填写邮箱地址" in _text(missing.get_data(as_text=True))
    invalid = client.post("/notifications/preferences", data={"email_enabled": "1", "email": "no-at-sign"})
    assert invalid.status_code == 422 and "邮箱地址: 邮箱地址无效" in _text(invalid.get_data(as_text=True))
    saved = client.post(
        "/notifications/preferences", data={"email_enabled": "1", "email": "me@example.cn", "watch_all": "1"}
    )
    assert saved.status_code == 302
    prefs = notifications.settings_of(session, _user_id(session, "viewer"))
    assert (prefs.watch_all, prefs.email_enabled, prefs.email) == (True, True, "me@example.cn")

    refused = client.post("/notifications/webhooks", data={"url": "http://10.9.8.7/hook"})
    assert refused.status_code == 422 and "回调网址: " in _text(refused.get_data(as_text=True))
    not_admin = client.post("/notifications/webhooks", data={"url": hooks.url, "scope": "global"})
    assert not_admin.status_code == 422 and "范围: " in _text(not_admin.get_data(as_text=True))
    assert "可选：个人（我关注的供应商）" in _text(not_admin.get_data(as_text=True))  # the choice's words
    assert "personal" not in _text(not_admin.get_data(as_text=True))
    odd = client.post("/providers/1/watch", data={"action": "stare"}, follow_redirects=True)
    assert "无法识别的操作：只能关注或取消关注" in odd.get_data(as_text=True)
    created = client.post("/notifications/webhooks", data={"url": hooks.url, "description": "飞书群"})
    html = created.get_data(as_text=True)
    secret = re.search(r'id="webhook-secret-value">([^<]+)<', html).group(1)
    [hook] = session.exec(select(Webhook)).all()
    assert hook.user_id == _user_id(session, "viewer") and secret not in hook.secret_encrypted

    tested = client.post(f"/notifications/webhooks/{hook.id}/test")
    assert tested.status_code == 302
    [request] = hooks.state.requests
    assert json.loads(request.body)["type"] == "test"
    assert signature_matches(secret, request.body, request.headers["X-Gpuvet-Signature"])
    log = client.get("/notifications").get_data(as_text=True)
    assert "测试消息已送达" in log and "HTTP 200" in log and 'data-state="delivered"' in log

    hooks.state.plan[:] = [404]
    client.post(f"/notifications/webhooks/{hook.id}/test")
    failed = session.exec(select(Delivery).order_by(Delivery.id.desc())).first()
    assert (failed.state, failed.attempts) == ("failed", 1)  # a test is tried once
    log = client.get("/notifications").get_data(as_text=True)
    assert "测试消息未送达" in log and "HTTP 404" in log

    client.post(f"/notifications/webhooks/{hook.id}/disable")
    session.refresh(hook)
    assert hook.enabled is False
    rotated = client.post(f"/notifications/webhooks/{hook.id}/secret").get_data(as_text=True)
    assert re.search(r'id="webhook-secret-value">([^<]+)<', rotated).group(1) != secret
    other = login("analyst")
    assert other.post(f"/notifications/webhooks/{hook.id}/delete").status_code == 404  # not theirs
    client.post(f"/notifications/webhooks/{hook.id}/delete")
    assert session.exec(select(Webhook)).all() == []


def test_api_lists_the_inbox_and_watches(notify_app, session, token_for):
    headers = token_for("viewer")
    provider = create_provider(session, data={"legal_name": "辛数据有限公司"}).id
    watched = notify_app.test_client().put(f"/api/v1/providers/{provider}/watch", headers=headers)
    assert watched.status_code == 200 and watched.get_json() == {
        "provider_id": provider,
        "watching": True,
        "changed": True,
    }
    again = notify_app.test_client().put(f"/api/v1/providers/{provider}/watch", headers=headers)
    assert again.get_json()["changed"] is False
    _event(notify_app, session, provider, "x")

    listed = notify_app.test_client().get("/api/v1/inbox?unread=true", headers=headers).get_json()
    assert listed["total"] == 1 and listed["unread"] == 1
    [item] = listed["items"]
    assert item["read_at"] is None and item["event"]["provider_name"] == "辛数据有限公司"
    assert item["event"]["message_en"] == "new finding: x"

    bad = notify_app.test_client().get("/api/v1/inbox?limit=0", headers=headers)
    assert bad.status_code == 422 and bad.get_json()["errors"][0]["field"] == "limit"
    unknown = notify_app.test_client().put("/api/v1/providers/999999/watch", headers=headers)
    assert unknown.status_code == 404
    gone = notify_app.test_client().delete(f"/api/v1/providers/{provider}/watch", headers=headers)
    assert gone.get_json() == {"provider_id": provider, "watching": False, "changed": True}
