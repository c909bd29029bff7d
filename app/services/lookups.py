"""Official lookups (ICP filing system, telecom licence system) with the analyst answering the captcha.

A lookup is a small state machine stored in the Lookup table:

    pending --(job: fetch captcha)--> awaiting_answer --(analyst answers)--> checking
    checking --(job: check + query)--> completed
                                   \\-> awaiting_answer (wrong answer / expired token or captcha: new captcha)
                                   \\-> failed (too many wrong answers, timeout, malformed reply, refusal)

Every exchange with the official system is stored as evidence (Recorder) and committed at once, so a
step that fails loses nothing. Wrong answers are counted per lookup and the lookup stops after
Settings.lookup_max_failures (at most 5: the ICP system locks a captcha uuid after six failures), and
a new lookup of the same kind waits out a cool-down after such a stop.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from app.jobs import background, enqueue, job_result_outcome
from app.localtime import aware
from app.models import Provider
from app.models.evidence import Lookup, LookupKind, LookupState
from app.models.jobs import Job, JobState
from app.services import evidence as evidence_service
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.facts import fact_source
from app.services.rechecks import recheck
from scrapers import miit_icp, miit_licence
from scrapers.http import UNREACHABLE_HINTS, FetchError, FetchTimeout, HttpClient, Unreachable
from scrapers.official import (
    Captcha,
    CaptchaExpired,
    LookupFailed,
    TokenExpired,
    WrongAnswer,
)

logger = logging.getLogger(__name__)

JOB_KINDS = {LookupKind.icp: "lookup.icp", LookupKind.licence: "lookup.licence"}
KIND_LABELS = {
    LookupKind.icp: ("ICP 备案查询", "ICP filing lookup"),
    LookupKind.licence: ("许可证查询", "licence lookup"),
}
COOL_DOWN = timedelta(minutes=10)
MAX_QUERY = 200
_ICP_ANSWER = re.compile(r"\d{1,4}")
_TEXT_ANSWER = re.compile(r"[0-9A-Za-z]{1,8}")

MESSAGES = {
    "captcha_ready": "请查看验证码并作答 (answer the captcha)",
    "wrong_answer": (
        "验证码答案不正确（第 {n}/{limit} 次），已换一张新的验证码 "
        "(wrong answer {n} of {limit}; here is a new captcha)"
    ),
    "too_many": (
        "验证码已连续答错 {n} 次，为免被官方系统封禁已停止；请 {minutes} 分钟后重新发起查询 "
        "(stopped after {n} wrong answers so the official system does not block us; start a new lookup "
        "in {minutes} minutes)"
    ),
    "token_expired": (
        "查询令牌已过期，已重新登录并换了新的验证码 (the session token expired; here is a new captcha)"
    ),
    "captcha_expired": "验证码已失效，已换一张新的验证码 (the captcha expired; here is a new one)",
    "unreachable": (
        "本机无法连接官方系统（{zh}）：请检查代理/网络，或手工查询后记录结果 "
        "(this machine cannot reach the official system: {en}; check the proxy/network, or record the lookup "
        "by hand)"
    ),
    "timeout": "官方系统响应超时：{detail}；可稍后点“重试” (the official system timed out; retry later)",
    "failed": "查询失败：{detail}；可稍后点“重试” (lookup failed; retry later)",
    "completed": "查询完成，共 {n} 条记录 (lookup finished: {n} records)",
}


def _now() -> datetime:
    return datetime.now(UTC)


def _actor(user: Any) -> tuple[int | None, str]:
    return (user.id, user.username) if user is not None else (None, "system")


# ------------------------------------------------------------------------------------------------ input
def parse_kind(value: Any) -> LookupKind:
    """The lookup kind, or InvalidInput naming the accepted values."""
    try:
        return LookupKind(str(value))
    except ValueError:
        raise InvalidInput(
            f"查询类型须为 {', '.join(kind.value for kind in LookupKind)} (kind must be icp or licence)",
            field="kind",
        ) from None


def clean_query(value: Any, provider: Provider) -> str:
    """The name to look up: the text given (trimmed) or the provider's legal name."""
    text = unicodedata.normalize("NFC", str(value or "")).strip() or provider.legal_name
    if len(text) < 2 or len(text) > MAX_QUERY:
        raise InvalidInput(
            f"查询名称须为 2-{MAX_QUERY} 个字符 (the name to look up must be 2-{MAX_QUERY} characters)",
            field="query",
        )
    return text


def clean_answer(kind: LookupKind, value: Any) -> str:
    """The captcha answer: the slider x offset (ICP) or the letters/digits shown (licence)."""
    text = unicodedata.normalize("NFKC", str(value or "")).strip().replace(" ", "")
    if kind == LookupKind.icp:
        text = text.split(".", 1)[0]
        if not _ICP_ANSWER.fullmatch(text):
            raise InvalidInput(
                "请在验证码大图上点击缺口位置，或填写缺口的横坐标（0-9999 的整数） "
                "(click the gap in the big picture, or enter its x offset as a whole number)",
                field="answer",
            )
        return str(int(text))
    if not _TEXT_ANSWER.fullmatch(text):
        raise InvalidInput(
            "请填写图片中的 1-8 个字母或数字 (enter the 1-8 letters or digits shown in the picture)",
            field="answer",
        )
    return text


# ------------------------------------------------------------------------------------------------ reading
def get_lookup(session: Session, *, lookup_id: int) -> Lookup:
    """One lookup, or NotFound."""
    lookup = session.get(Lookup, lookup_id)
    if lookup is None:
        raise NotFound(f"查询 {lookup_id} 不存在 (lookup not found)", field="lookup_id")
    return lookup


def list_lookups(session: Session, *, provider_id: int, limit: int = 20) -> list[Lookup]:
    """A provider's lookups, newest first."""
    return list(
        session.exec(
            select(Lookup)
            .where(Lookup.provider_id == provider_id)
            .order_by(col(Lookup.id).desc())
            .limit(limit)
        ).all()
    )


def latest_completed(session: Session, *, provider_id: int, kind: LookupKind) -> Lookup | None:
    """The provider's most recent completed lookup of a kind."""
    return session.exec(
        select(Lookup)
        .where(Lookup.provider_id == provider_id, Lookup.kind == kind, Lookup.state == LookupState.completed)
        .order_by(col(Lookup.completed_at).desc(), col(Lookup.id).desc())
        .limit(1)
    ).first()


# ------------------------------------------------------------------------------------------------ page side
def _cooling_down(session: Session, kind: LookupKind, max_failures: int) -> Lookup | None:
    since = _now() - COOL_DOWN
    return session.exec(
        select(Lookup)
        .where(Lookup.kind == kind, Lookup.failures >= max_failures, Lookup.updated_at >= since)
        .limit(1)
    ).first()


def _enqueue_step(session: Session, lookup: Lookup, user: Any, step: str, **params: Any) -> Lookup:
    job = enqueue(
        session,
        kind=JOB_KINDS[LookupKind(lookup.kind)],
        params={"lookup_id": lookup.id, "step": step, **params},
        user=user,
        provider_id=lookup.provider_id,
    )
    session.refresh(lookup)
    lookup.job_id = job.id
    session.add(lookup)
    session.commit()
    session.refresh(lookup)
    return lookup


def start_lookup(
    session: Session, *, provider_id: int, kind: Any, user: Any, max_failures: int, query: Any = None
) -> Lookup:
    """Create a lookup and queue the job that fetches its first captcha."""
    provider = session.get(Provider, provider_id)
    if provider is None:
        raise NotFound(f"供应商 {provider_id} 不存在 (provider not found)", field="provider_id")
    kind = parse_kind(kind)
    text = clean_query(query, provider)
    if _cooling_down(session, kind, max_failures) is not None:
        minutes = int(COOL_DOWN.total_seconds() // 60)
        raise Conflict(
            f"最近有查询因验证码答错过多而停止，请 {minutes} 分钟后再试 "
            f"(a recent lookup stopped after too many wrong answers; try again in {minutes} minutes)",
            field="kind",
        )
    actor_id, actor_name = _actor(user)
    lookup = Lookup(
        provider_id=provider_id, kind=kind, query=text, created_by_id=actor_id, created_by_name=actor_name
    )
    session.add(lookup)
    session.commit()
    return _enqueue_step(session, lookup, user, "captcha")


def submit_answer(session: Session, *, lookup_id: int, answer: Any, user: Any) -> Lookup:
    """Take the analyst's captcha answer and queue the job that checks it and runs the query."""
    lookup = get_lookup(session, lookup_id=lookup_id)
    if lookup.state != LookupState.awaiting_answer or not lookup.captcha_uuid:
        raise Conflict(
            "当前没有等待作答的验证码，请刷新页面 (no captcha is waiting for an answer; reload the page)",
            field="answer",
        )
    cleaned = clean_answer(LookupKind(lookup.kind), answer)
    lookup.state, lookup.message, lookup.updated_at = LookupState.checking, None, _now()
    session.add(lookup)
    session.commit()
    return _enqueue_step(session, lookup, user, "answer", answer=cleaned)


def stalled(session: Session, lookup: Lookup) -> bool:
    """True when the lookup waits on a job that ended without finishing it (e.g. the worker died)."""
    if lookup.state not in (LookupState.pending, LookupState.checking) or lookup.job_id is None:
        return False
    job = session.get(Job, lookup.job_id)
    return job is not None and job.finished and job.state != JobState.succeeded


def can_retry(session: Session, lookup: Lookup, *, max_failures: int) -> bool:
    """A failed (or stalled) lookup may fetch a new captcha unless it stopped on too many wrong answers."""
    failed = lookup.state == LookupState.failed or stalled(session, lookup)
    return failed and lookup.failures < max_failures


def retry_lookup(session: Session, *, lookup_id: int, user: Any, max_failures: int) -> Lookup:
    """Fetch a new captcha for a failed or stalled lookup (not for one stopped by wrong answers)."""
    lookup = get_lookup(session, lookup_id=lookup_id)
    if lookup.failures >= max_failures:
        raise Conflict(
            "此查询因验证码答错过多而停止，请稍后新建查询 "
            "(stopped after too many wrong answers; start a new one later)",
            field="lookup_id",
        )
    if not can_retry(session, lookup, max_failures=max_failures):
        raise Conflict(
            "只有失败或中断的查询可以重试 (only a failed or interrupted lookup can be retried)",
            field="lookup_id",
        )
    lookup.state, lookup.message, lookup.updated_at = LookupState.pending, None, _now()
    session.add(lookup)
    session.commit()
    return _enqueue_step(session, lookup, user, "captcha")


# ------------------------------------------------------------------------------------------------ worker side
class _Step:
    """One job step of a lookup: the official client, the evidence recorder and the state changes."""

    def __init__(
        self, session: Session, lookup: Lookup, *, client: HttpClient, settings: Any, job_id: int | None
    ) -> None:
        self.session, self.lookup, self.settings = session, lookup, settings
        actor = (lookup.created_by_id, lookup.created_by_name)
        self.recorder = evidence_service.Recorder(
            session, client, provider_id=lookup.provider_id, actor=actor, job_id=job_id, lookup_id=lookup.id
        )
        self.kind = LookupKind(lookup.kind)
        if self.kind == LookupKind.icp:
            self.icp = miit_icp.IcpClient(self.recorder, settings.lookup_icp_base_url)
        else:
            self.licence = miit_licence.LicenceClient(self.recorder, settings.lookup_licence_base_url)

    # state -------------------------------------------------------------------------------------
    def save(self, state: LookupState, message: str | None = None) -> None:
        lookup = self.lookup
        lookup.state, lookup.message, lookup.updated_at = state, message, _now()
        self.session.add(lookup)
        self.session.commit()

    def fail(self, message: str, *, code: str | None = None) -> None:
        self.lookup.captcha_uuid = None
        if code is not None:
            # Why it failed, for the page to say in the UI language (a new captcha replaces captcha_extra).
            self.lookup.captcha_extra = {"failure": code}
        self.save(LookupState.failed, message)

    # ICP token ---------------------------------------------------------------------------------
    def stored_token(self) -> miit_icp.Token | None:
        """The lookup's token while it is still valid (with a safety margin)."""
        lookup = self.lookup
        expires = aware(lookup.token_expires_at)
        if lookup.token and expires is not None:
            token = miit_icp.Token(lookup.token, expires)
            if token.valid(self.icp.now()):
                return token
        return None

    def token(self, *, fresh: bool = False) -> miit_icp.Token:
        stored = None if fresh else self.stored_token()
        if stored is not None:
            return stored
        token = self.icp.authenticate()
        self.lookup.token, self.lookup.token_expires_at = token.value, token.expires_at
        return token

    # captcha -----------------------------------------------------------------------------------
    def _fetch_captcha(self) -> tuple[Captcha, str]:
        if self.kind == LookupKind.licence:
            return self.licence.captcha(), "licence_captcha"
        try:
            return self.icp.captcha(self.token()), "icp_captcha"
        except TokenExpired:
            return self.icp.captcha(self.token(fresh=True)), "icp_captcha"

    def new_captcha(self, message: str | None = None) -> None:
        captcha, purpose = self._fetch_captcha()
        parent = self.recorder.last(purpose)
        assert parent is not None  # the recorder stored the reply before it was parsed
        images = [
            evidence_service.record_blob(
                self.session,
                parent=parent,
                name=image.name,
                data=image.data,
                content_type=image.content_type,
                purpose=evidence_service.CAPTCHA_IMAGE,
            )
            for image in captcha.images
        ]
        lookup = self.lookup
        lookup.captcha_uuid = captcha.uuid
        lookup.captcha_evidence_id = images[0].id
        lookup.captcha_extra = {**captcha.extra, "images": [row.id for row in images]}
        self.save(LookupState.awaiting_answer, message or MESSAGES["captcha_ready"])

    # answer ------------------------------------------------------------------------------------
    def _query(self, answer: str) -> tuple[list[dict[str, Any]], str]:
        lookup = self.lookup
        uuid = lookup.captcha_uuid or ""
        lookup.captcha_uuid = None  # an answer uses the captcha up, right or wrong
        if self.kind == LookupKind.licence:
            records, _ = self.licence.query(lookup.query, uuid, answer)
            return [record.to_dict() for record in records], "licence_query"
        token = self.stored_token()
        if token is None:
            raise TokenExpired("token expired before the answer was sent")
        sign = self.icp.check(token, uuid, answer)
        icp_records, _ = self.icp.query(token, sign, uuid, lookup.query)
        return [record.to_dict() for record in icp_records], "icp_query"

    def answer(self, answer: str) -> None:
        lookup = self.lookup
        try:
            records, purpose = self._query(answer)
        except WrongAnswer:
            lookup.failures += 1
            limit = self.settings.lookup_max_failures
            if lookup.failures >= limit:
                minutes = int(COOL_DOWN.total_seconds() // 60)
                self.fail(MESSAGES["too_many"].format(n=lookup.failures, minutes=minutes))
                return
            self.new_captcha(MESSAGES["wrong_answer"].format(n=lookup.failures, limit=limit))
            return
        except TokenExpired:
            lookup.token = None
            self.new_captcha(MESSAGES["token_expired"])
            return
        except CaptchaExpired:
            self.new_captcha(MESSAGES["captcha_expired"])
            return
        result = self.recorder.last(purpose)
        lookup.records = records
        lookup.result_evidence_id = result.id if result is not None else None
        lookup.completed_at = _now()
        self.save(LookupState.completed, MESSAGES["completed"].format(n=len(records)))


def run_step(
    session: Session,
    *,
    lookup_id: int,
    step: str,
    client: HttpClient,
    settings: Any,
    answer: str | None = None,
    job_id: int | None = None,
) -> dict[str, Any]:
    """Run one step ("captcha" or "answer") of a lookup; every outcome ends in a clear stored state."""
    lookup = get_lookup(session, lookup_id=lookup_id)
    work = _Step(session, lookup, client=client, settings=settings, job_id=job_id)
    try:
        if step == "captcha":
            work.new_captcha()
        elif step == "answer":
            work.answer(answer or "")
        else:
            raise InvalidInput(f"未知步骤 {step} (unknown step; captcha or answer)", field="step")
    except Unreachable as exc:
        zh, en = UNREACHABLE_HINTS[exc.reason]
        work.fail(MESSAGES["unreachable"].format(zh=zh, en=en), code=exc.code)
    except FetchTimeout as exc:
        work.fail(MESSAGES["timeout"].format(detail=exc.message))
    except FetchError as exc:
        work.fail(MESSAGES["failed"].format(detail=exc.message))
    except LookupFailed as exc:
        work.fail(MESSAGES["failed"].format(detail=exc.message))
    except Exception:
        # A bug must not leave the page waiting forever: fail the lookup visibly, then the job.
        session.rollback()
        work.fail(MESSAGES["failed"].format(detail="内部错误 (internal error)"))
        raise
    if lookup.state == LookupState.completed:
        recheck(
            session, provider_id=lookup.provider_id, since=lookup.completed_at, cause=f"lookup {lookup.id}"
        )
    result = {"lookup_id": lookup.id, "state": str(lookup.state), "message": lookup.message}
    if lookup.state == LookupState.failed:
        result |= job_result_outcome(
            "failed",
            f"官方查询未完成：{lookup.message}",
            f"The official lookup did not finish: {lookup.message}",
        )
    return result


def _job(kind: LookupKind) -> Any:
    def run(session: Session, job: Job, *, lookup_id: int, step: str, answer: str | None = None) -> Any:
        from flask import current_app

        settings = current_app.config["GPUVET_SETTINGS"]
        with evidence_service.http_client(settings) as client:
            return run_step(
                session,
                lookup_id=lookup_id,
                step=step,
                client=client,
                settings=settings,
                answer=answer,
                job_id=job.id,
            )

    zh, en = KIND_LABELS[kind]
    return background(JOB_KINDS[kind], title_zh=zh, title_en=en)(run)


_icp_job = _job(LookupKind.icp)
_licence_job = _job(LookupKind.licence)


# ------------------------------------------------------------------------------------------------ facts
def lookup_facts(session: Session, *, provider_id: int, kind: LookupKind) -> dict[str, Any] | None:
    """The latest completed lookup of a kind: its query, records and the evidence behind them."""
    lookup = latest_completed(session, provider_id=provider_id, kind=kind)
    if lookup is None:
        return None
    refs = []
    if lookup.result_evidence_id is not None:
        row = evidence_service.get_evidence(session, evidence_id=lookup.result_evidence_id, with_body=False)
        refs.append(evidence_service.evidence_ref(row))
    completed = aware(lookup.completed_at)
    return {
        "lookup_id": lookup.id,
        "query": lookup.query,
        "completed_at": completed.isoformat() if completed else None,
        "records": lookup.records,
        "evidence": refs,
    }


@fact_source("icp_lookup")
def _icp_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    return lookup_facts(session, provider_id=provider.id, kind=LookupKind.icp)


@fact_source("licence_lookup")
def _licence_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    return lookup_facts(session, provider_id=provider.id, kind=LookupKind.licence)
