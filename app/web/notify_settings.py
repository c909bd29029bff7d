"""通知设置 (/notifications): watches, e-mail on/off, webhooks (test, on/off, new secret, delete), the log.

Also the 关注 toggle of the provider page. Everyone signed in manages their own watches and webhooks; an
admin also manages global webhooks, which receive every change event.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import has_role, role_required
from app.core.db import get_session
from app.core.errors import ServiceError, accepted
from app.models.enums import Role
from app.notify import dispatch as notify_dispatch
from app.notify import watches as notifications
from app.notify import webhooks as notify_webhooks
from app.notify import wording
from app.notify.mailer import mail_enabled
from app.web import bp, labels
from app.web.account import safe_next

FIELDS = {
    "url": _l("回调网址"),
    "email": _l("邮箱地址"),
    "secret": _l("密钥"),
    "description": _l("用途"),
    "scope": _l("范围"),
    "webhook_id": _l("回调地址"),
}
SCOPES = ("personal", "global")
SCOPE_LABELS = {"personal": _l("个人（我关注的供应商）"), "global": _l("全局（全部变化）")}


def _field(name: str) -> Any:
    return FIELDS.get(name) or labels.field_label(name)


def _messages(exc: ServiceError) -> list[str]:
    return [f"{_field(e.field)}: {e.message}" if e.field else e.message for e in exc.errors]


def _is_admin() -> bool:
    return has_role(current_user, Role.admin)


def _settings() -> Any:
    return current_app.config["GPUVET_SETTINGS"]


def _page(
    *, errors: list[str] | None = None, form: dict | None = None, new_secret: tuple | None = None, status=200
) -> Any:
    session = get_session()
    admin = _is_admin()
    return (
        render_template(
            "notify/settings.html",
            prefs=notifications.settings_of(session, current_user.id),
            watched=notifications.watched_providers(session, current_user.id),
            webhooks=notify_webhooks.webhooks_for(session, user_id=current_user.id, include_global=admin),
            log=notify_dispatch.delivery_log(session, user_id=current_user.id, include_global=admin),
            mail_on=mail_enabled(_settings()),
            is_admin=admin,
            general_errors=errors or [],
            form=form or {},
            new_secret=new_secret,
        ),
        status,
    )


@bp.get("/notifications")
@role_required(Role.viewer)
def notify_settings() -> Any:
    """The signed-in user's notification settings and delivery log."""
    return _page()


@bp.post("/notifications/preferences")
@role_required(Role.viewer)
def notify_preferences() -> Any:
    """Save watch-all and the e-mail choice."""
    form = {"email": request.form.get("email", "")}
    try:
        notifications.save_settings(
            get_session(),
            current_user.id,
            watch_all=request.form.get("watch_all") == "1",
            email_enabled=request.form.get("email_enabled") == "1",
            email=form["email"],
        )
    except ServiceError as exc:
        get_session().rollback()
        return _page(errors=_messages(exc), form=form, status=exc.status)
    flash(_("通知设置已保存"), "success")
    return redirect(url_for("web.notify_settings"))


@bp.post("/providers/<int:provider_id>/watch")
@role_required(Role.viewer)
def provider_watch(provider_id: int) -> Any:
    """关注 / 取消关注 a provider (form field action: watch or unwatch), then go back."""
    session = get_session()
    action = request.form.get("action", "watch")
    if action not in ("watch", "unwatch"):
        flash(_("无法识别的操作：只能关注或取消关注"), "danger")
    else:
        try:
            if action == "watch":
                notifications.watch(session, current_user.id, provider_id)
                flash(_("已关注；该供应商的变化会进入你的收件箱"), "success")
            else:
                notifications.unwatch(session, current_user.id, provider_id)
                flash(_("已取消关注"), "success")
        except ServiceError as exc:
            session.rollback()
            flash("; ".join(_messages(exc)), "danger")
            return redirect(url_for("web.providers"))
    fallback = url_for("web.provider_detail", provider_id=provider_id)
    return redirect(safe_next(request.form.get("next"), fallback))


@bp.post("/notifications/webhooks")
@role_required(Role.viewer)
def webhook_create() -> Any:
    """Add a webhook (personal, or global for admins); its secret is shown once."""
    form = {key: request.form.get(key, "") for key in ("url", "description", "scope")}
    scope = form["scope"] or "personal"
    if scope not in SCOPES or (scope == "global" and not _is_admin()):
        allowed = [SCOPE_LABELS[name] for name in (SCOPES if _is_admin() else SCOPES[:1])]
        message = _("取值无效，可选：%(expected)s", expected=accepted(str(label) for label in allowed))
        return _page(errors=[f"{_field('scope')}: {message}"], form=form, status=422)
    session = get_session()
    try:
        webhook, secret = notify_webhooks.create_webhook(
            session,
            _settings(),
            url=form["url"],
            user_id=None if scope == "global" else current_user.id,
            description=form["description"],
            secret=request.form.get("secret"),
            created_by=current_user.username,
        )
    except ServiceError as exc:
        session.rollback()
        return _page(errors=_messages(exc), form=form, status=exc.status)
    return _page(new_secret=(webhook, secret))


def _own_webhook(webhook_id: int) -> Any:
    return notify_webhooks.get_webhook(get_session(), webhook_id, owner_id=current_user.id, admin=_is_admin())


@bp.post("/notifications/webhooks/<int:webhook_id>/<any(test, enable, disable, secret, delete):action>")
@role_required(Role.viewer)
def webhook_action(webhook_id: int, action: str) -> Any:
    """Send a test message, turn on or off, give a new secret, or delete a webhook."""
    session = get_session()
    try:
        webhook = _own_webhook(webhook_id)
        if action == "test":
            delivery = notify_dispatch.send_test(session, webhook)
            _flash_test(delivery)
        elif action in ("enable", "disable"):
            notify_webhooks.set_enabled(session, webhook, action == "enable")
            flash(_("已启用") if action == "enable" else _("已停用"), "success")
        elif action == "secret":
            secret = notify_webhooks.rotate_secret(session, _settings(), webhook)
            return _page(new_secret=(webhook, secret))
        else:
            notify_webhooks.delete_webhook(session, webhook)
            flash(_("已删除回调地址 %(url)s", url=webhook.url), "success")
    except ServiceError as exc:
        session.rollback()
        return _page(errors=_messages(exc), status=exc.status)
    return redirect(url_for("web.notify_settings") + "#delivery-log")


@bp.post("/notifications/email/test")
@role_required(Role.viewer)
def email_test() -> Any:
    """Send a test e-mail to the signed-in user's saved address now; the result is flashed and logged."""
    session = get_session()
    prefs = notifications.settings_of(session, current_user.id)
    if not mail_enabled(_settings()):
        flash(_("邮件服务器未配置，无法发送测试邮件"), "warning")
    elif not prefs.email:
        flash(_("请先填写并保存邮箱地址"), "warning")
    else:
        _flash_test(notify_dispatch.send_test_mail(session, current_user.id, prefs.email))
    return redirect(url_for("web.notify_settings") + "#delivery-log")


def _flash_test(delivery: Any) -> None:
    if delivery.state == "delivered":
        flash(_("测试消息已送达"), "success")
    elif delivery.state in ("retrying", "failed"):
        error = wording.shown(delivery.last_error) or "-"
        flash(_("测试消息未送达：%(error)s", error=error), "danger")
    else:
        flash(_("测试消息已排队，结果见下方投递记录"), "info")


@bp.app_template_filter("delivery_error")
def delivery_error(text: str | None) -> str:
    """A stored delivery error in the reader's language."""
    return wording.shown(text)


@bp.app_template_test("names_allow_list")
def names_allow_list(text: Any) -> bool:
    """Whether a message tells the reader to add an address to the allow list (then the page links it)."""
    return any(word in str(text) for word in ALLOW_LIST_WORDS)


# How the allow-list advice reads in each language (scrapers/addresses.py); pages link it to 系统设置.
ALLOW_LIST_WORDS = ("允许列表", "allow list", "allow-list", "allowlist")
