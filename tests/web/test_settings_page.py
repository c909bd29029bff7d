"""系统设置 (issue 27 item 8): the settings in force with their origin, secrets never in the page, edits of
the run-time settings audited and in force at once, and only admins (SQLite and PostgreSQL)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from pydantic import SecretStr
from sqlmodel import select

from app.core import runtime_settings
from app.core.errors import InvalidInput
from app.models import AuditEntry
from app.models.settings import RuntimeSetting
from app.notify import webhooks as notify_webhooks
from app.web.dashboard import configured_stale_days

SMTP_PASSWORD = "smtp-Pa55word-never-shown"
SECRET_KEY = "flask-secret-key-never-shown-0123456789"
TRIAL_KEY = "trial-fernet-key-never-shown"


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def _row(html: str, name: str) -> str:
    match = re.search(rf'id="setting-{name}"(.*?)(?:id="setting-|</tbody>|</div>\s*</div>\s*<h2)', html, re.S)
    assert match, name
    return _text(match.group(1))


@pytest.fixture
def secret_app(app):
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
        update={
            "smtp_host": "mail.example.cn",
            "smtp_password": SecretStr(SMTP_PASSWORD),
            "secret_key": SECRET_KEY,
            "trial_secret_key": TRIAL_KEY,
            "redis_url": "redis://queue:redis-url-password@10.0.0.5:6379/0",
        }
    )
    return app


def test_the_page_lists_settings_with_origins_and_masks_every_secret(secret_app, login):
    html = login("admin").get("/admin/settings").get_data(as_text=True)
    for secret in (SMTP_PASSWORD, SECRET_KEY, TRIAL_KEY, "redis-url-password"):
        assert secret not in html
    assert runtime_settings.MASK in _row(html, "smtp_password")
    assert "redis://queue:" in _row(html, "redis_url") and runtime_settings.MASK in _row(html, "redis_url")
    assert "GPUVET_SMTP_HOST" in _row(html, "smtp_host") and "mail.example.cn" in _row(html, "smtp_host")
    assert 'data-origin="environment"' in html  # set at start-up (here by the test, as by the environment)
    assert "默认值" in _row(html, "page_size")  # never set: the default
    assert 'id="value-fetch_allow_cidrs"' in html and 'id="value-smtp_host"' not in html  # editable only


@pytest.mark.parametrize("role", ["viewer", "analyst"])
def test_only_admins_see_or_edit_the_settings(app, login, session, role):
    client = login(role)
    assert client.get("/admin/settings").status_code == 403
    posted = client.post("/admin/settings/dashboard_stale_days", data={"value": "5"})
    assert posted.status_code == 403
    assert session.exec(select(RuntimeSetting)).all() == []


def test_an_edit_is_audited_and_in_force_without_a_restart(app, login, session):
    client = login("admin")
    with app.app_context():
        assert configured_stale_days() == 30
    saved = client.post("/admin/settings/dashboard_stale_days", data={"value": "45"})
    assert saved.status_code == 302 and saved.headers["Location"].endswith("#setting-dashboard_stale_days")
    with app.app_context():
        assert configured_stale_days() == 45  # the same process, no restart
    page = client.get("/admin/settings").get_data(as_text=True)
    row = _row(page, "dashboard_stale_days")
    assert "在本页修改" in row and "由 admin 修改" in row and 'value="45"' in page

    [entry] = session.exec(select(AuditEntry).where(AuditEntry.entity == "runtime_setting")).all()
    assert (entry.action, entry.actor_name) == ("create", "admin")
    assert entry.changes["value"][1] == 45

    client.post("/admin/settings/dashboard_stale_days", data={"value": "60"})
    client.post("/admin/settings/dashboard_stale_days", data={"reset": "1"})
    actions = session.exec(
        select(AuditEntry.action).where(AuditEntry.entity == "runtime_setting").order_by(AuditEntry.id)
    ).all()
    assert actions == ["create", "update", "delete"]
    with app.app_context():
        assert configured_stale_days() == 30


def test_an_allow_list_edit_admits_an_address_the_webhook_check_refused(app, login):
    client = login("admin")
    with app.test_request_context(), pytest.raises(InvalidInput):
        notify_webhooks.check_webhook_url("http://10.9.8.7/hook", app.config["GPUVET_SETTINGS"])
    assert client.post("/admin/settings/fetch_allow_cidrs", data={"value": "10.0.0.0/8"}).status_code == 302
    with app.test_request_context():
        url = notify_webhooks.check_webhook_url("http://10.9.8.7/hook", app.config["GPUVET_SETTINGS"])
    assert url == "http://10.9.8.7/hook"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("dashboard_stale_days", "0", "须为 1 到 3650 之间的整数"),
        ("dashboard_stale_days", "ten", "须为 1 到 3650 之间的整数"),
        ("fetch_allow_cidrs", "10.0.0.0/8, not-a-net", "'not-a-net' 不是 CIDR 网段，如 10.0.0.0/8"),
        ("schedule_daily_at", "25:00", "'25:00' 不是时刻，须为 时:分，如 03:00"),
        ("smtp_host", "mail.example.cn", "此项不能在运行时修改"),
    ],
)
def test_a_bad_value_is_refused_in_words_and_nothing_is_stored(app, login, session, name, value, message):
    response = login("admin").post(f"/admin/settings/{name}", data={"value": value})
    assert response.status_code == 422
    assert message in _text(response.get_data(as_text=True))
    assert session.exec(select(RuntimeSetting)).all() == []


def test_the_webhook_form_links_admins_to_the_allow_list(app, login):
    admin = login("admin").get("/notifications").get_data(as_text=True)
    assert 'href="/admin/settings#setting-fetch_allow_cidrs"' in admin
    viewer = login("viewer").get("/notifications").get_data(as_text=True)
    assert "/admin/settings" not in viewer
