"""Pruning: inbox items and delivery logs older than GPUVET_NOTIFY_RETENTION_DAYS go (a daily job)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from flask_babel import gettext as _
from sqlmodel import Session

from app.core import clock, runtime_settings
from app.core.jobs import background
from app.models.notify import Delivery, DeliveryAttempt, InboxItem

FINISHED = ("delivered", "failed")  # a delivery still being tried is kept, however old


def prune(session: Session, *, days: int, now: datetime | None = None) -> dict[str, int]:
    """Delete inbox items and finished deliveries (with their attempts) created before `days` days ago."""
    cutoff = (now or clock.now()) - timedelta(days=days)
    inbox, deliveries, attempts = InboxItem.__table__, Delivery.__table__, DeliveryAttempt.__table__
    old = sa.select(deliveries.c.id).where(deliveries.c.created_at < cutoff, deliveries.c.state.in_(FINISHED))
    removed_attempts = session.execute(sa.delete(attempts).where(attempts.c.delivery_id.in_(old))).rowcount
    removed_deliveries = session.execute(
        sa.delete(deliveries).where(deliveries.c.created_at < cutoff, deliveries.c.state.in_(FINISHED))
    ).rowcount
    removed_inbox = session.execute(sa.delete(inbox).where(inbox.c.created_at < cutoff)).rowcount
    session.commit()
    return {"inbox_items": removed_inbox, "deliveries": removed_deliveries, "attempts": removed_attempts}


@background(
    "notify.prune",
    title_zh="清理旧的收件箱与投递记录",
    title_en="Prune old inbox items and delivery logs",
    idempotent=True,
)
def prune_job(session: Session, job: Any, *, period: str) -> dict[str, Any]:
    """Prune after the retention days in force (settings page or GPUVET_NOTIFY_RETENTION_DAYS)."""
    days = runtime_settings.effective().notify_retention_days
    removed = prune(session, days=days)
    message = _(
        "已删除 %(inbox)s 条收件箱条目和 %(deliveries)s 条投递记录（早于 %(days)s 天）",
        inbox=removed["inbox_items"],
        deliveries=removed["deliveries"],
        days=days,
    )
    return {**removed, "days": days, "message": message}
