"""系统设置 (/admin/settings): every setting in force with where it comes from (secrets masked), and the
ones safe to change at run time (allow lists, schedule times, thresholds) edited here, audited."""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core import runtime_settings
from app.core.db import get_session
from app.core.errors import ServiceError
from app.models.enums import Role
from app.web import bp
from app.web.nav import nav_item

nav_item("web.settings_page", _l("系统设置"), role=Role.admin, order=92)

# The editable settings as the page names and explains them (runtime_settings.EDITABLE says which).
EDITABLE_TEXT = {
    "fetch_allow_cidrs": (
        _l("抓取与回调：放行的内网网段"),
        _l("逗号分隔的 CIDR，如 10.0.0.0/8；放行原本拒绝的内网与回环地址（网站抓取、官方查询、回调）。"),
    ),
    "fetch_allow_hosts": (
        _l("抓取与回调：放行的主机名"),
        _l("逗号分隔；*.example.cn 匹配子域名，可加 :端口。主机名只放行内网地址。"),
    ),
    "trial_allow_cidrs": (
        _l("试用服务器：放行的内网网段"),
        _l("逗号分隔的 CIDR；放行试用服务器 SSH 与节点互测用到的内网地址。"),
    ),
    "schedule_daily_at": (_l("每日复核的时间"), _l("时:分（本地时区），每天一次。")),
    "schedule_weekly_at": (_l("每周页脚复查的时间"), _l("时:分（本地时区），每周一一次。")),
    "dashboard_stale_days": (
        _l("工作台：检查过旧的天数"),
        _l("最近一次检查早于这么多天，工作台提示重新检查。"),
    ),
    "verification_max_age_days": (_l("核验有效天数"), _l("查询、页脚记录、测量早于这么多天不再算作当前。")),
    "notify_max_attempts": (_l("通知最多尝试次数"), _l("邮件或回调失败后重试，连同第一次共这么多次。")),
    "notify_retry_base_s": (_l("通知重试的起始间隔（秒）"), _l("之后每次翻倍。")),
    "notify_retention_days": (_l("收件箱与投递记录保留天数"), _l("更早的条目由每日清理任务删除。")),
    "invitation_days": (_l("尽调问卷链接有效天数"), _l("新建的邀请链接在这么多天后失效。")),
}


def _page(errors: dict[str, str] | None = None, form: dict | None = None, status: int = 200) -> Any:
    rows = runtime_settings.listing(current_app.config["GPUVET_SETTINGS"], get_session())
    return (
        render_template(
            "settings/page.html",
            editable=[row for row in rows if row.editable],
            fixed=[row for row in rows if not row.editable],
            texts=EDITABLE_TEXT,
            errors=errors or {},
            general_errors=[
                f"{name}: {message}"
                for name, message in (errors or {}).items()
                if name not in runtime_settings.EDITABLE
            ],
            form=form or {},
        ),
        status,
    )


@bp.get("/admin/settings")
@role_required(Role.admin)
def settings_page() -> Any:
    """The settings in force and where each comes from; the editable ones with their forms."""
    return _page()


@bp.post("/admin/settings/<name>")
@role_required(Role.admin)
def settings_edit(name: str) -> Any:
    """Save a new value of one editable setting (or, with reset=1, go back to its start-up value)."""
    session = get_session()
    label = EDITABLE_TEXT.get(name, (name,))[0]
    try:
        if request.form.get("reset") == "1":
            runtime_settings.reset(session, name)
            flash(_("%(setting)s 已恢复为启动时的值", setting=label), "success")
        else:
            runtime_settings.save(session, name, request.form.get("value", ""), by=current_user.username)
            flash(_("%(setting)s 已保存，立即生效", setting=label), "success")
    except ServiceError as exc:
        session.rollback()
        errors = {error.field or name: error.message for error in exc.errors}
        return _page(errors, {name: request.form.get("value", "")}, exc.status)
    return redirect(url_for("web.settings_page") + f"#setting-{name}")
