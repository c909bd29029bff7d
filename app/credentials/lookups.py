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
from datetime import timedelta
from typing import Any

from flask_babel import force_locale
from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import clock
from app.core.clock import aware
from app.core.errors import Conflict, InvalidInput
from app.core.events import EvidenceChanged, publish
from app.core.i18n import current_language
from app.core.jobs import background, enqueue, job_result_outcome
from app.core.records import get_or_404
from app.credentials import evidence as evidence_service
from app.credentials import manual_lookups
from app.credentials.facts import fact_source
from app.models import Provider
from app.models.evidence import Lookup, LookupKind, LookupState
from app.models.jobs import Job, JobState
from app.registry.providers import provider_row
from scrapers import miit_icp, miit_licence
from scrapers.http import FetchError, HttpClient, Unreachable
from scrapers.official import (
    N_,
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

# What a lookup says about itself: msgids, stored as {"msgid", "params"} and translated when shown.
MESSAGES = {
    "captcha_ready": N_("请查看验证码并作答"),
    "wrong_answer": N_("验证码答案不正确（第 %(n)d/%(limit)d 次），已换一张新的验证码"),
    "too_many": N_("验证码已连续答错 %(n)d 次，为免被官方系统封禁已停止；请 %(minutes)d 分钟后重新发起查询"),
    "token_expired": N_("查询令牌已过期，已重新登录并换了新的验证码"),
    "captcha_expired": N_("验证码已失效，已换一张新的验证码"),
    "unreachable": N_("本机无法连接官方系统（%(cause)s）：请检查代理/网络，或手工查询后记录结果"),
    "timeout": N_("官方系统响应超时：%(detail)s；可稍后点“重试”，或手工查询后记录结果"),
    "failed": N_("查询失败：%(detail)s；可稍后点“重试”，或手工查询后记录结果"),
    "completed": N_("查询完成，共 %(n)d 条记录"),
}
# Why this machine could not reach the official system (scrapers.http Unreachable.reason).
UNREACHABLE_CAUSES = {
    "dns": N_("域名无法解析"),
    "refused": N_("连接被拒绝"),
    "network": N_("网络不可达"),
}
# A fetch failure (scrapers.http FetchError.code) in words, for the "timeout"/"failed" messages.
FETCH_PROBLEMS = {
    "timeout": N_("在规定时间内没有回复"),
    "too_large": N_("回复超过大小上限"),
    "blocked_address": N_("官方系统的地址不在允许访问的范围内（见 fetch_allow_cidrs 设置）"),
    "bad_url": N_("官方系统的网址配置无效"),
    "too_many_redirects": N_("重定向次数过多"),
    "connection": N_("连接中断"),
    "fetch_failed": N_("未能取得回复"),
}
# A lookup error whose message has no translation, by its code (scrapers.official LookupFailed.code).
LOOKUP_PROBLEMS = {
    "refused": N_("官方系统拒绝了请求"),
    "malformed": N_("官方系统的回复格式无法识别"),
    "failed": N_("官方系统没有给出结果"),
}
INTERNAL_ERROR = N_("内部错误")


def translate(value: Any) -> str:
    """A stored {"msgid", "params"} (params may nest) in the current UI language; plain text as it is."""
    if isinstance(value, dict) and isinstance(value.get("msgid"), str):
        params = {
            name: translate(item) if isinstance(item, dict) else item
            for name, item in (value.get("params") or {}).items()
        }
        fallback = value.get("fallback")
        text = _(value["msgid"])
        if fallback and text == value["msgid"] and current_language() != "zh":
            text = _(fallback)  # no translation of the system's own words: say what kind of failure it was
        return text % params if params else text
    return "" if value is None else str(value)


def message_of(key: str, **params: Any) -> dict[str, Any]:
    """A lookup message to store: its msgid and values (a value may itself be such a message)."""
    return {"msgid": MESSAGES[key], "params": params}


def message_text(lookup: Lookup, locale: str | None = None) -> str:
    """The lookup's message in the UI language (or `locale`), from the stored msgid; else the stored text."""
    stored = (lookup.captcha_extra or {}).get("message")
    if stored is None:
        return lookup.message or ""
    if locale is None:
        return translate(stored)
    with force_locale(locale):
        return translate(stored)


def _actor(user: Any) -> tuple[int | None, str]:
    return (user.id, user.username) if user is not None else (None, "system")


# ------------------------------------------------------------------------------------------------ input
AUTOMATIC_KINDS = (LookupKind.icp, LookupKind.licence)  # the kinds a job can ask the official system


def parse_kind(value: Any, *, automatic: bool = False) -> LookupKind:
    """The lookup kind (`automatic`: one a job can run), or InvalidInput naming the accepted values."""
    try:
        kind = LookupKind(str(value))
    except ValueError:
        kind = None
    if kind is not None and (not automatic or kind in AUTOMATIC_KINDS):
        return kind
    if automatic:
        raise InvalidInput(_("查询类型须为 icp（ICP 备案）或 licence（许可证）"), field="kind")
    raise InvalidInput(
        _("查询类型须为 icp（ICP 备案）、licence（许可证）、psb（公安备案）或 certification（认证证书）"),
        field="kind",
    )


def clean_query(value: Any, provider: Provider) -> str:
    """The name to look up: the text given (trimmed) or the provider's legal name."""
    text = unicodedata.normalize("NFC", str(value or "")).strip() or provider.legal_name
    if len(text) < 2 or len(text) > MAX_QUERY:
        raise InvalidInput(_("查询名称须为 2-%(max)d 个字符", max=MAX_QUERY), field="query")
    return text


def clean_answer(kind: LookupKind, value: Any) -> str:
    """The captcha answer: the slider x offset (ICP) or the letters/digits shown (licence)."""
    text = unicodedata.normalize("NFKC", str(value or "")).strip().replace(" ", "")
    if kind == LookupKind.icp:
        text = text.split(".", 1)[0]
        if not _ICP_ANSWER.fullmatch(text):
            raise InvalidInput(
                _("请在验证码大图上点击缺口位置，或填写缺口的横坐标（0-9999 的整数）"), field="answer"
            )
        return str(int(text))
    if not _TEXT_ANSWER.fullmatch(text):
        raise InvalidInput(_("请填写图片中的 1-8 个字母或数字"), field="answer")
    return text


# ------------------------------------------------------------------------------------------------ reading
def get_lookup(session: Session, *, lookup_id: int) -> Lookup:
    """One lookup, or NotFound."""
    return get_or_404(session, Lookup, lookup_id, _("查询 %(id)d 不存在", id=lookup_id), field="lookup_id")


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
    since = clock.now() - COOL_DOWN
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
    provider = provider_row(session, provider_id)
    kind = parse_kind(kind, automatic=True)
    text = clean_query(query, provider)
    if _cooling_down(session, kind, max_failures) is not None:
        minutes = int(COOL_DOWN.total_seconds() // 60)
        raise Conflict(
            _("最近有查询因验证码答错过多而停止，请 %(minutes)d 分钟后再试", minutes=minutes), field="kind"
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
        raise Conflict(_("当前没有等待作答的验证码，请刷新页面"), field="answer")
    cleaned = clean_answer(LookupKind(lookup.kind), answer)
    lookup.state, lookup.message, lookup.updated_at = LookupState.checking, None, clock.now()
    lookup.captcha_extra = {**(lookup.captcha_extra or {}), "message": None}
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
        raise Conflict(_("此查询因验证码答错过多而停止，请稍后新建查询"), field="lookup_id")
    if not can_retry(session, lookup, max_failures=max_failures):
        raise Conflict(_("只有失败或中断的查询可以重试"), field="lookup_id")
    lookup.state, lookup.message, lookup.updated_at = LookupState.pending, None, clock.now()
    lookup.captcha_extra = {}
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
    def save(self, state: LookupState, message: dict[str, Any]) -> None:
        """Store the state and its message (msgid + values for the page; Chinese text for API and logs)."""
        lookup = self.lookup
        with force_locale("zh"):
            text = translate(message)
        lookup.state, lookup.message, lookup.updated_at = state, text, clock.now()
        lookup.captcha_extra = {**(lookup.captcha_extra or {}), "message": message}
        self.session.add(lookup)
        self.session.commit()

    def fail(self, message: dict[str, Any], *, code: str | None = None) -> None:
        self.lookup.captcha_uuid = None
        # Why it failed, for the page to say in the UI language (a new captcha replaces captcha_extra).
        self.lookup.captcha_extra = {"failure": code} if code is not None else {}
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

    def new_captcha(self, message: dict[str, Any] | None = None) -> None:
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
        self.save(LookupState.awaiting_answer, message or message_of("captcha_ready"))

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
                self.fail(message_of("too_many", n=lookup.failures, minutes=minutes))
                return
            self.new_captcha(message_of("wrong_answer", n=lookup.failures, limit=limit))
            return
        except TokenExpired:
            lookup.token = None
            self.new_captcha(message_of("token_expired"))
            return
        except CaptchaExpired:
            self.new_captcha(message_of("captcha_expired"))
            return
        result = self.recorder.last(purpose)
        lookup.records = records
        lookup.result_evidence_id = result.id if result is not None else None
        lookup.completed_at = clock.now()
        self.save(LookupState.completed, message_of("completed", n=len(records)))


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
            raise InvalidInput(_("未知步骤 %(step)s（可选 captcha 或 answer）", step=step), field="step")
    except Unreachable as exc:
        cause = {"msgid": UNREACHABLE_CAUSES.get(exc.reason, FETCH_PROBLEMS["connection"])}
        work.fail(message_of("unreachable", cause=cause), code=exc.code)
    except FetchError as exc:
        key = "timeout" if exc.code == "timeout" else "failed"
        detail = {"msgid": FETCH_PROBLEMS.get(exc.code, FETCH_PROBLEMS["fetch_failed"])}
        work.fail(message_of(key, detail=detail), code=exc.code)
    except LookupFailed as exc:
        detail = {**exc.as_json(), "fallback": LOOKUP_PROBLEMS.get(exc.code, LOOKUP_PROBLEMS["failed"])}
        work.fail(message_of("failed", detail=detail))
    except Exception:
        # A bug must not leave the page waiting forever: fail the lookup visibly, then the job.
        session.rollback()
        work.fail(message_of("failed", detail={"msgid": INTERNAL_ERROR}))
        raise
    if lookup.state == LookupState.completed:
        publish(
            session,
            EvidenceChanged(
                provider_id=lookup.provider_id, since=lookup.completed_at, cause=f"lookup {lookup.id}"
            ),
        )
    result = {"lookup_id": lookup.id, "state": str(lookup.state), "message": lookup.message}
    if lookup.state == LookupState.failed:
        result |= job_result_outcome(
            "failed",
            f"官方查询未完成：{message_text(lookup, 'zh')}",
            f"The official lookup did not finish: {message_text(lookup, 'en')}",
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
def latest_manual(session: Session, *, provider_id: int, kind: LookupKind) -> Lookup | None:
    """The provider's most recent lookup of a kind recorded by hand."""
    return session.exec(
        select(Lookup)
        .where(Lookup.provider_id == provider_id, Lookup.kind == kind, Lookup.state == LookupState.manual)
        .order_by(col(Lookup.id).desc())
        .limit(1)
    ).first()


def lookup_facts(session: Session, *, provider_id: int, kind: LookupKind) -> dict[str, Any] | None:
    """The lookup the rules read: the latest automatic one, else the latest recorded by hand.

    An automatic lookup (the official system's own reply) outranks an analyst's record of what the site
    showed; a manual one outranks none. The fact carries "manual" (who, when they looked) for the findings.
    """
    lookup = latest_completed(session, provider_id=provider_id, kind=kind) or latest_manual(
        session, provider_id=provider_id, kind=kind
    )
    if lookup is None:
        return None
    row = None
    if lookup.result_evidence_id is not None:
        row = evidence_service.get_evidence(session, evidence_id=lookup.result_evidence_id, with_body=False)
    return lookup_fact_of(lookup, row)


def lookup_fact_of(lookup: Lookup, result: Any) -> dict[str, Any]:
    """The lookup fact of one stored lookup and its result evidence (None when it has none)."""
    refs = [evidence_service.evidence_ref(result)] if result is not None else []
    completed = aware(lookup.completed_at)
    fact: dict[str, Any] = {
        "lookup_id": lookup.id,
        "query": lookup.query,
        "completed_at": completed.isoformat() if completed else None,
        "records": lookup.records,
        "evidence": refs,
    }
    manual = manual_lookups.manual_info(lookup)
    if manual is not None:
        looked = manual["looked_at"]
        fact["manual"] = {"by": manual["by"], "looked_at": looked.isoformat() if looked else None}
    return fact


@fact_source("icp_lookup")
def _icp_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    return lookup_facts(session, provider_id=provider.id, kind=LookupKind.icp)


@fact_source("licence_lookup")
def _licence_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    return lookup_facts(session, provider_id=provider.id, kind=LookupKind.licence)
