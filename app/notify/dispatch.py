"""From stored change events to watchers: inbox items, then e-mail and webhook deliveries on the queue.

`notify_new_events` runs after the events are committed (it subscribes to app.core.events.ChangesRecorded,
which the credential check publishes) and never raises: a problem is logged, and the check that produced the
events goes on. Each delivery (one event to one e-mail address or webhook) is a
Huey task of its own, so one failing channel never holds up another. A failed try is recorded (attempt n,
HTTP status or error, duration) and tried again after base, 2x base, 4x base ... seconds, up to the
configured number of attempts; a minutely sweep re-queues deliveries whose task was lost (worker restart).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from flask import current_app, has_app_context
from sqlmodel import Session, col, select

from app.core import clock as localtime
from app.core import runtime_settings
from app.core.clock import aware
from app.core.db import insert_new_rows
from app.core.events import ChangesRecorded, subscribe
from app.core.jobs import get_huey, on_queue
from app.models.notify import Delivery, DeliveryAttempt, InboxItem, NotifySettings, ProviderWatch, Webhook
from app.models.provider import Provider
from app.models.user import User
from app.models.watch import ChangeEvent
from app.notify import mailer, wording
from app.notify import webhooks as notify_webhooks
from benchmarks.messages import message as N_

logger = logging.getLogger(__name__)

DELIVER_TASK_NAME = "gpuvet.notify_deliver"
SWEEP_TASK_NAME = "gpuvet.notify_sweep"
TASK_KEY = "gpuvet.notify_task"
SWEEP_GRACE = timedelta(minutes=2)  # a due delivery this late has lost its task: queue it again
SENDING_STALE = timedelta(minutes=10)  # a send this old died with its worker
ERROR_LIMIT = 2000


def _settings() -> Any:
    if has_app_context():
        return current_app.config["GPUVET_SETTINGS"]
    from app.core.config import Settings

    return Settings()


# ---------------------------------------------------------------- fan-out
def _recipients(session: Session, provider_ids: set[int]) -> tuple[set[int], dict[int, set[int]]]:
    """(users watching everything, provider id -> users watching it by name); active users only."""
    everyone = set(
        session.exec(
            select(User.id)
            .outerjoin(NotifySettings, col(NotifySettings.user_id) == User.id)
            .where(_watching_all(), col(User.active).is_(True))
        ).all()
    )
    by_provider: dict[int, set[int]] = defaultdict(set)
    rows = session.exec(
        select(ProviderWatch.provider_id, ProviderWatch.user_id)
        .join(User, col(User.id) == ProviderWatch.user_id)
        .where(col(ProviderWatch.provider_id).in_(provider_ids), col(User.active).is_(True))
    ).all()
    for provider_id, user_id in rows:
        by_provider[provider_id].add(user_id)
    return everyone, by_provider


def _watching_all() -> Any:
    """Condition on User outer-joined with NotifySettings: watches everything (chosen, or never chose:
    the default of new users)."""
    return col(NotifySettings.watch_all).is_(True) | col(NotifySettings.id).is_(None)


def _anyone_listening(session: Session) -> bool:
    """Whether anyone watches anything or any webhook is on (one statement; usually nobody, so no more)."""
    never_chose = sa.exists().where(User.id.not_in(select(NotifySettings.user_id)))  # type: ignore[attr-defined]
    statement = sa.select(
        sa.exists().where(col(NotifySettings.watch_all).is_(True)) | never_chose,
        sa.exists().where(col(ProviderWatch.id).is_not(None)),
        sa.exists().where(col(Webhook.enabled).is_(True)),
    )
    return any(session.execute(statement).one())


def public_link(path: str, settings: Any) -> str:
    """`path` on this site: absolute when GPUVET_PUBLIC_URL is set."""
    base = (settings.public_url or "").rstrip("/")
    return f"{base}{path}" if base else path


def event_document(event: ChangeEvent, provider_name: str, settings: Any) -> dict[str, Any]:
    """The JSON shape of an event in webhook bodies and the API."""
    return {
        "id": event.id,
        "provider_id": event.provider_id,
        "provider_name": provider_name,
        "kind": event.kind,
        "subject": event.subject,
        "severity": event.severity,
        "message_zh": event.message_zh,
        "message_en": event.message_en,
        "details": event.details,
        "check_run_id": event.check_run_id,
        "occurred_on": event.occurred_on.isoformat(),
        "created_at": (aware(event.created_at) or localtime.now()).isoformat(),
        "url": public_link(f"/providers/{event.provider_id}", settings),
    }


def _mail(events: list[tuple[ChangeEvent, str]], settings: Any) -> dict[str, str]:
    """Subject and bilingual text of one e-mail listing a user's events of one batch."""
    lines = []
    for event, name in events:
        link = public_link(f"/providers/{event.provider_id}", settings)
        lines.append(
            f"- {name}: {event.message_zh}\n  {event.message_en}\n  {event.occurred_on.isoformat()}  {link}"
        )
    first_event, first_name = events[0]
    if len(events) == 1:
        subject = f"[gpuvet] {first_name}：{first_event.message_zh}"
    else:
        names = "、".join(dict.fromkeys(name for _event, name in events))
        subject = f"[gpuvet] {len(events)} 项变化 / {len(events)} changes: {names}"
    text = (
        "\n\n".join(lines) + "\n\n"
        "您关注了这些供应商，因此收到此邮件；可在 gpuvet 的“通知设置”中关闭。\n"
        "You watch these providers; turn these e-mails off under Notification settings in gpuvet.\n"
    )
    return {"subject": subject[:200], "text": text}


def plan_deliveries(session: Session, event_ids: Iterable[int], settings: Any) -> list[list[int]]:
    """Inbox items for every watcher and delivery rows for their channels: one webhook POST per event, one
    e-mail per user listing the batch's events. Returns the new delivery ids grouped by target."""
    ids = sorted(set(event_ids))
    if not ids or not _anyone_listening(session):
        return []
    events = list(
        session.exec(
            select(ChangeEvent, Provider.short_name, Provider.legal_name)
            .join(Provider, col(Provider.id) == ChangeEvent.provider_id)
            .where(col(ChangeEvent.id).in_(ids))
        ).all()
    )
    everyone, by_provider = _recipients(session, {event.provider_id for event, _s, _l in events})
    global_hooks = list(
        session.exec(select(Webhook).where(col(Webhook.user_id).is_(None), col(Webhook.enabled).is_(True)))
    )
    watchers = everyone.union(*by_provider.values())
    if not watchers and not global_hooks:
        return []
    mail_to = {}
    if watchers and settings.smtp_host:
        mail_to = dict(
            session.exec(
                select(NotifySettings.user_id, NotifySettings.email).where(
                    col(NotifySettings.user_id).in_(watchers),
                    col(NotifySettings.email_enabled).is_(True),
                    col(NotifySettings.email).is_not(None),
                )
            ).all()
        )
    user_hooks: dict[int, list[Webhook]] = defaultdict(list)
    if watchers:
        for hook in session.exec(
            select(Webhook).where(col(Webhook.user_id).in_(watchers), col(Webhook.enabled).is_(True))
        ):
            user_hooks[hook.user_id].append(hook)
    inbox_rows, deliveries = [], []
    mails: dict[int, list[tuple[ChangeEvent, str]]] = defaultdict(list)
    for event, short_name, legal_name in sorted(events, key=lambda row: row[0].id):
        name = short_name or legal_name
        document = {"type": "change_event", "event": event_document(event, name, settings)}
        for user_id in sorted(everyone | by_provider.get(event.provider_id, set())):
            inbox_rows.append({"user_id": user_id, "event_id": event.id, "created_at": localtime.now()})
            if user_id in mail_to:
                mails[user_id].append((event, name))
            for hook in user_hooks.get(user_id, []):
                deliveries.append(_row(event.id, "webhook", hook.url, user_id, hook.id, document))
        for hook in global_hooks:
            deliveries.append(_row(event.id, "webhook", hook.url, None, hook.id, document))
    for user_id, listed in mails.items():
        row = _row(listed[0][0].id, "email", mail_to[user_id], user_id, None, _mail(listed, settings))
        row["dedupe_key"] = f"events:{listed[0][0].id}-{listed[-1][0].id}:{len(listed)}:email:user{user_id}"
        deliveries.append(row)
    if inbox_rows:
        insert_new_rows(session, InboxItem.__table__, inbox_rows, unique=["user_id", "event_id"])
    new = (
        insert_new_rows(session, Delivery.__table__, deliveries, unique=["dedupe_key"]) if deliveries else []
    )
    session.commit()
    return by_target(session, new)


def by_target(session: Session, delivery_ids: list[int]) -> list[list[int]]:
    """Delivery ids grouped by where they go (one webhook, one user's e-mail), oldest first in each group."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for chunk in range(0, len(delivery_ids), 1000):
        rows = session.exec(
            select(Delivery.id, Delivery.channel, Delivery.webhook_id, Delivery.user_id).where(
                col(Delivery.id).in_(delivery_ids[chunk : chunk + 1000])
            )
        ).all()
        for delivery_id, channel, webhook_id, user_id in rows:
            groups[(channel, webhook_id if channel == "webhook" else user_id)].append(delivery_id)
    return [sorted(ids) for _key, ids in sorted(groups.items(), key=lambda item: min(item[1]))]


def _row(
    event_id: int | None,
    channel: str,
    target: str,
    user_id: int | None,
    webhook_id: int | None,
    payload: dict,
) -> dict[str, Any]:
    recipient = f"hook{webhook_id}" if channel == "webhook" else f"user{user_id}"
    return {
        "event_id": event_id,
        "channel": channel,
        "target": target[:500],
        "user_id": user_id,
        "webhook_id": webhook_id,
        "dedupe_key": f"event:{event_id}:{channel}:{recipient}" if event_id is not None else None,
        "payload": payload,
        "state": "pending",
        "attempts": 0,
        "created_at": localtime.now(),
    }


def notify_new_events(session: Session, event_ids: Iterable[int]) -> list[list[int]]:
    """Inbox items and queued deliveries for newly stored events; never raises (problems are logged).

    One queue task per target (a webhook, a user's e-mail), so the check pays a few statements, not one
    queue write per message; returns the delivery ids by target.
    """
    ids = list(event_ids)
    if not ids:
        return []
    try:
        groups = plan_deliveries(session, ids, _settings())
    except Exception:
        session.rollback()
        logger.exception("notifications for change events %s could not be planned", ids[:20])
        return []
    queue_deliveries(groups)
    return groups


@subscribe(ChangesRecorded)
def notify_recorded_changes(session: Session, event: ChangesRecorded) -> list[list[int]]:
    """The inbox items and deliveries of change events just recorded (published by the credential check)."""
    return notify_new_events(session, event.event_ids)


# ---------------------------------------------------------------- the queue
@on_queue
def register_tasks(huey: Any, app: Any, engine: sa.Engine) -> None:
    """Register the delivery task and the minutely sweep on the app's Huey (by app.core.jobs.make_huey)."""
    from huey import crontab

    @huey.task(name=DELIVER_TASK_NAME)
    def deliver_task(delivery_ids: list[int]) -> None:
        with app.app_context():
            deliver_in_order(engine, delivery_ids, app.config["GPUVET_SETTINGS"])

    @huey.periodic_task(crontab(minute="*"), name=SWEEP_TASK_NAME)
    def sweep_task() -> None:
        with app.app_context():
            sweep(engine)

    app.extensions[TASK_KEY] = deliver_task


def _enqueue(delivery_ids: list[int], *, delay: float | None = None) -> None:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    huey = get_huey(app)
    task = app.extensions[TASK_KEY]
    if delay:
        task.schedule((delivery_ids,), delay=delay)
    else:
        huey.enqueue(task.s(delivery_ids))


def queue_deliveries(groups: Iterable[list[int]]) -> None:
    """Hand each group of deliveries (one target) to the queue; a group that cannot be handed over waits
    for the sweep (logged)."""
    if not has_app_context():
        return  # the worker's sweep queues them
    for ids in groups:
        try:
            _enqueue(ids)
        except Exception:
            logger.exception("deliveries %s could not be queued; the sweep will queue them", ids[:20])


# ---------------------------------------------------------------- one attempt
def _claim(engine: sa.Engine, delivery_id: int) -> int | None:
    """pending/retrying (and due) -> sending in one statement; returns the attempt number, or None."""
    table = Delivery.__table__
    now = localtime.now()
    with engine.begin() as connection:
        claimed = connection.execute(
            sa.update(table)
            .where(
                table.c.id == delivery_id,
                table.c.state.in_(("pending", "retrying")),
                sa.or_(table.c.next_attempt_at.is_(None), table.c.next_attempt_at <= now),
            )
            .values(state="sending", attempts=table.c.attempts + 1, next_attempt_at=None, claimed_at=now)
        ).rowcount
        if claimed != 1:
            return None
        return connection.execute(sa.select(table.c.attempts).where(table.c.id == delivery_id)).scalar_one()


def _send(session: Session, delivery: Delivery, settings: Any) -> notify_webhooks.PostOutcome:
    """Try the delivery's channel once; failures come back as an outcome, never raised."""
    started = time.monotonic()
    try:
        if delivery.channel == "email":
            mailer.send_mail(
                delivery.target, delivery.payload["subject"], delivery.payload["text"], settings=settings
            )
            return notify_webhooks.PostOutcome(True, None, None, _ms(started))
        hook = session.get(Webhook, delivery.webhook_id) if delivery.webhook_id else None
        if hook is None:
            deleted = wording.stored(N_("回调地址已删除"))
            return notify_webhooks.PostOutcome(False, None, deleted, _ms(started))
        secret = notify_webhooks.decrypt_secret(hook, settings)
        headers = {
            notify_webhooks.EVENT_HEADER: str(delivery.payload.get("type", "change_event")),
            notify_webhooks.DELIVERY_HEADER: str(delivery.id),
        }
        return notify_webhooks.post_signed(hook.url, secret, delivery.payload, settings, headers=headers)
    except mailer.MailError as exc:
        return notify_webhooks.PostOutcome(False, None, wording.stored(exc.wording), _ms(started))
    except Exception as exc:  # noqa: BLE001 - every failure is recorded on the delivery
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return notify_webhooks.PostOutcome(False, None, str(message), _ms(started))


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def backoff_s(attempt: int, settings: Any) -> float:
    """Seconds to wait after failed attempt n: base, 2x base, 4x base ..."""
    return settings.notify_retry_base_s * 2 ** (attempt - 1)


def deliver(
    engine: sa.Engine, delivery_id: int, settings: Any, *, max_attempts: int | None = None
) -> str | None:
    """Make one attempt at a delivery, record it, and schedule the next on failure; returns the new state."""
    settings = runtime_settings.effective(settings, engine)
    max_attempts = max_attempts or settings.notify_max_attempts
    attempt = _claim(engine, delivery_id)
    if attempt is None:
        return None  # delivered, given up, or another copy of the task holds it
    with Session(engine, expire_on_commit=False) as session:
        delivery = session.get(Delivery, delivery_id)
        assert delivery is not None  # just claimed
        started_at = localtime.now()
        outcome = _send(session, delivery, settings)
        session.add(
            DeliveryAttempt(
                delivery_id=delivery_id,
                attempt=attempt,
                ok=outcome.ok,
                status_code=outcome.status_code,
                error=(outcome.error or None) and outcome.error[:ERROR_LIMIT],
                duration_ms=outcome.duration_ms,
                started_at=started_at,
            )
        )
        delay = None
        if outcome.ok:
            delivery.state, delivery.finished_at, delivery.last_error = "delivered", localtime.now(), None
        elif attempt < max_attempts:
            delay = backoff_s(attempt, settings)
            delivery.state, delivery.last_error = "retrying", (outcome.error or "")[:ERROR_LIMIT]
            delivery.next_attempt_at = localtime.now() + timedelta(seconds=delay)
        else:
            delivery.state, delivery.finished_at = "failed", localtime.now()
            delivery.last_error = (outcome.error or "")[:ERROR_LIMIT]
        session.add(delivery)
        session.commit()
        state = delivery.state
    if delay is not None and has_app_context():
        try:
            _enqueue([delivery_id], delay=delay)
        except Exception:
            logger.exception(
                "retry of delivery %s could not be scheduled; the sweep will queue it", delivery_id
            )
    return state


def deliver_in_order(engine: sa.Engine, delivery_ids: list[int], settings: Any) -> None:
    """Deliver one target's messages in order; when the target does not answer at all (refused, timed out),
    the rest wait for its first retry instead of each waiting out the timeout now."""
    for index, delivery_id in enumerate(delivery_ids):
        state = deliver(engine, delivery_id, settings)
        rest = delivery_ids[index + 1 :]
        if state != "retrying" or not rest or _answered(engine, delivery_id):
            continue
        delay = backoff_s(1, settings)
        table = Delivery.__table__
        with engine.begin() as connection:
            connection.execute(
                sa.update(table)
                .where(table.c.id.in_(rest), table.c.state.in_(("pending", "retrying")))
                .values(next_attempt_at=localtime.now() + timedelta(seconds=delay))
            )
        if has_app_context():
            try:
                _enqueue(rest, delay=delay)
            except Exception:
                logger.exception("deliveries %s could not be scheduled; the sweep will queue them", rest[:20])
        return


def _answered(engine: sa.Engine, delivery_id: int) -> bool:
    """Whether the latest attempt of a delivery got any answer from its target (an HTTP status)."""
    table = DeliveryAttempt.__table__
    with engine.connect() as connection:
        status = connection.execute(
            sa.select(table.c.status_code)
            .where(table.c.delivery_id == delivery_id)
            .order_by(table.c.attempt.desc())
            .limit(1)
        ).scalar()
    return status is not None


def sweep(engine: sa.Engine, now: datetime | None = None) -> list[int]:
    """Queue again the deliveries whose task was lost, and free sends whose worker died; returns the ids."""
    now = now or localtime.now()
    table = Delivery.__table__
    with engine.begin() as connection:
        connection.execute(
            sa.update(table)
            .where(table.c.state == "sending", table.c.claimed_at < now - SENDING_STALE)
            .values(state="retrying", next_attempt_at=now)
        )
        due = sa.func.coalesce(table.c.next_attempt_at, table.c.created_at)
        ids = list(
            connection.execute(
                sa.select(table.c.id)
                .where(table.c.state.in_(("pending", "retrying")), due < now - SWEEP_GRACE)
                .order_by(table.c.id)
                .limit(500)
            ).scalars()
        )
    if ids:
        with Session(engine) as session:
            queue_deliveries(by_target(session, ids))
    return ids


# ---------------------------------------------------------------- test sends and the log
def send_test(session: Session, webhook: Webhook) -> Delivery:
    """Send a signed test message to one webhook now (one attempt, recorded); returns its delivery."""
    settings = _settings()
    document = {
        "type": "test",
        "webhook_id": webhook.id,
        "message_zh": "这是 gpuvet 的测试消息",
        "message_en": "This is a test message from gpuvet",
        "at": localtime.when(localtime.now()),
    }
    delivery = Delivery(
        channel="webhook",
        target=webhook.url,
        user_id=webhook.user_id,
        webhook_id=webhook.id,
        payload=document,
    )
    session.add(delivery)
    session.commit()
    deliver(session.get_bind(), delivery.id, settings, max_attempts=1)
    session.refresh(delivery)
    return delivery


def send_test_mail(session: Session, user_id: int, address: str) -> Delivery:
    """Send a test e-mail to the user's address now (one attempt, recorded in their log); returns it."""
    settings = _settings()
    payload = {
        "subject": "[gpuvet] 测试邮件 / Test e-mail",
        "text": "这是 gpuvet 的测试邮件：邮件通知可以送达。\n"
        "This is a test e-mail from gpuvet: notification e-mails reach you.\n",
    }
    delivery = Delivery(channel="email", target=address[:500], user_id=user_id, payload=payload)
    session.add(delivery)
    session.commit()
    deliver(session.get_bind(), delivery.id, settings, max_attempts=1)
    session.refresh(delivery)
    return delivery


def delivery_log(
    session: Session, *, user_id: int | None, include_global: bool, limit: int = 30
) -> list[tuple[Delivery, list[DeliveryAttempt]]]:
    """Newest deliveries of a user's e-mail and webhooks (and the global webhooks), each with its attempts."""
    condition = Delivery.user_id == user_id
    if include_global:
        global_ids = select(Webhook.id).where(col(Webhook.user_id).is_(None))
        condition = condition | col(Delivery.webhook_id).in_(global_ids)
    deliveries = list(
        session.exec(select(Delivery).where(condition).order_by(col(Delivery.id).desc()).limit(limit)).all()
    )
    attempts: dict[int, list[DeliveryAttempt]] = defaultdict(list)
    if deliveries:
        for row in session.exec(
            select(DeliveryAttempt)
            .where(col(DeliveryAttempt.delivery_id).in_([d.id for d in deliveries]))
            .order_by(col(DeliveryAttempt.attempt))
        ):
            attempts[row.delivery_id].append(row)
    return [(delivery, attempts[delivery.id]) for delivery in deliveries]
