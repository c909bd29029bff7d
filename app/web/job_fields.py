"""A job's subject, parameters and result as labelled fields a person reads (no JSON, no codes)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from flask import url_for
from flask_babel import format_timedelta
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from sqlmodel import Session

from app.core import clock as localtime
from app.models import Provider
from app.models.evidence import Lookup
from app.models.jobs import Job
from app.models.trials import BenchRun, TrialServer
from app.web import labels

# Keys that name the job's subject (shown as links) or its outcome (shown in the status box).
SUBJECT_KEYS = frozenset({"provider_id", "server_id", "run_id", "lookup_id", "upload_id", "check_run_id"})
HIDDEN_KEYS = frozenset(
    {"outcome", "outcome_message_zh", "outcome_message_en", "answer"}
    | {
        "plans",
        "expected",
        "locale",
        "_locale",
        "preview_job",
        "conflict",
    }  # an import's plan: shown on /transfer
)

KEY_LABELS: dict[str, Any] = {
    "url": _l("网址"),
    "ok": _l("是否成功"),
    "error": _l("错误"),
    "error_code": _l("错误类型"),
    "fetched_at": _l("抓取时间"),
    "evidence": _l("证据"),
    "evidence_ids": _l("证据"),
    "identifiers": _l("页面上的编号"),
    "company_name": _l("页面上的公司名"),
    "company_name_evidence": _l("公司名依据"),
    "checked": _l("已核查供应商"),
    "verdicts": _l("结论分布"),
    "verdict": _l("结论"),
    "blockers": _l("阻断"),
    "warnings": _l("警告"),
    "infos": _l("提示"),
    "only_unchecked": _l("只核查从未核查过的"),
    "state": _l("状态"),
    "message": _l("说明"),
    "comparisons": _l("对比项"),
    "step": _l("步骤"),
    "host": _l("主机"),
    "port": _l("端口"),
    "key_type": _l("密钥类型"),
    "fingerprint": _l("主机密钥指纹"),
    "uname": _l("系统信息"),
    "filename": _l("文件名"),
    "format": _l("文件格式"),
    "dry_run": _l("只检查不写入"),
    "size": _l("文件大小"),
    "providers": _l("供应商数"),
    "created": _l("新建供应商"),
    "updated": _l("更新供应商"),
    "new": _l("文件中新增的供应商"),
    "unchanged": _l("无变化的供应商"),
    "applied": _l("已写入"),
    "names": _l("供应商名称"),
    "problems": _l("问题"),
    "omitted": _l("未列出的问题"),
    "address": _l("地址"),
    "period": _l("周期"),
    "changes": _l("发现的变化"),
    "expiry_events": _l("到期提醒"),
    "queued_jobs": _l("已排队的任务"),
}
MONO_KEYS = frozenset({"url", "fingerprint", "uname", "host", "filename"})
LOOKUP_STEPS = {"captcha": _l("获取验证码"), "answer": _l("提交验证码")}


@dataclass(frozen=True)
class JobField:
    """One labelled line: its text, optional link, and further links (e.g. several pieces of evidence)."""

    label: Any
    text: Any
    url: str | None = None
    mono: bool = False
    links: list[tuple[str, str]] = field(default_factory=list)


def _yes_no(value: bool) -> Any:
    return labels.TRISTATE["true" if value else "false"]


def _verdict(value: Any) -> Any:
    return labels.CHECK_VERDICT.get(value, value)


def _state_labels(values: dict[str, Any]) -> dict[str, Any]:
    if "run_id" in values:
        return labels.JOB_STATE
    if "lookup_id" in values:
        return labels.LOOKUP_STATE
    return {}


def subjects(session: Session, job: Job) -> list[JobField]:
    """What the job worked on, by name, each linked to its page."""
    values = {**(job.params or {}), **(job.result if isinstance(job.result, dict) else {})}
    found: list[JobField] = []
    provider_id = job.provider_id or values.get("provider_id")
    provider = session.get(Provider, provider_id) if isinstance(provider_id, int) else None
    if provider is not None:
        url = url_for("web.provider_detail", provider_id=provider.id)
        found.append(JobField(_l("供应商"), provider.short_name or provider.legal_name, url))
    server_id = values.get("server_id")
    server = session.get(TrialServer, server_id) if isinstance(server_id, int) else None
    if server is not None:
        url = url_for("web.trial_server", server_id=server.id)
        found.append(JobField(_l("试用服务器"), f"{server.name}（{server.host}）", url))
    run_id = values.get("run_id")
    run = session.get(BenchRun, run_id) if isinstance(run_id, int) else None
    if run is not None:
        url = url_for("web.bench_run", run_id=run.id)
        found.append(JobField(_l("测试"), _("测试 #%(id)s · %(suite)s", id=run.id, suite=run.suite), url))
    lookup_id = values.get("lookup_id")
    lookup = session.get(Lookup, lookup_id) if isinstance(lookup_id, int) else None
    if lookup is not None:
        url = url_for("web.lookup_detail", lookup_id=lookup.id)
        text = _("查询 #%(id)s · %(query)s", id=lookup.id, query=lookup.query)
        found.append(JobField(_l("官方查询"), text, url))
    check_run_id = values.get("check_run_id")
    if isinstance(check_run_id, int) and provider is not None:
        url = url_for("web.provider_credentials", provider_id=provider.id, run=check_run_id)
        found.append(JobField(_l("核查记录"), _("核查 #%(id)s", id=check_run_id), url))
    if "upload_id" in values:
        url = url_for("web.transfer", job=job.id)
        found.append(JobField(_l("导入文件"), values.get("filename") or "—", url))
    return found


def short_hash(value: Any) -> str:
    """The first 12 hex digits of a SHA-256 (the full hash is on the evidence page)."""
    return str(value or "")[:12]


def _evidence_links(items: list[Any]) -> list[tuple[str, str]]:
    links = []
    for item in items:
        evidence_id = item.get("evidence_id") if isinstance(item, dict) else item
        if isinstance(evidence_id, int):
            text = f"#{evidence_id}"
            if isinstance(item, dict) and item.get("sha256"):
                text += f" · {short_hash(item['sha256'])}"
            links.append((text, url_for("web.evidence_detail", evidence_id=evidence_id)))
    return links


def _problem_text(problem: Any) -> str:
    if not isinstance(problem, dict):
        return str(problem)
    where = _("第 %(row)s 行", row=problem["row"]) if problem.get("row") else ""
    if problem.get("field"):
        where = f"{where} {labels.field_label(str(problem['field']))}".strip()
    message = str(problem.get("message", ""))
    return _("%(where)s：%(message)s", where=where, message=message) if where else message


def _value_text(key: str, value: Any, values: dict[str, Any]) -> Any:
    """A value in words: labels for codes, yes/no, counts, joined lists; plain JSON only as a last resort."""
    if isinstance(value, bool):
        return _yes_no(value)
    if key == "verdict":
        return _verdict(value)
    if key == "verdicts" and isinstance(value, dict):
        return " · ".join(f"{_verdict(name)} {count}" for name, count in value.items()) or "—"
    if key == "state":
        return _state_labels(values).get(value, value)
    if key == "step":
        return LOOKUP_STEPS.get(value, value)
    if key == "size" and isinstance(value, int):
        return _("%(n)s 字节", n=labels.number(value))
    if key == "fetched_at" and isinstance(value, str):
        try:
            return localtime.when(datetime.fromisoformat(value))
        except ValueError:
            return value
    if key == "identifiers" and isinstance(value, list):
        numbers = [item.get("normalized") if isinstance(item, dict) else item for item in value]
        return "、".join(str(number) for number in numbers if number) or _("未找到")
    if key == "problems" and isinstance(value, list):
        return "\n".join(_problem_text(problem) for problem in value) or "—"
    if isinstance(value, list) and not any(isinstance(item, (dict, list)) for item in value):
        return "、".join(str(item) for item in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return labels.number(value)
    return "—" if value in (None, "") else value


def fields(values: Any) -> list[JobField]:
    """Labelled fields of a job's parameters or result, subject ids and outcome bookkeeping left out."""
    if not isinstance(values, dict):
        return [] if values is None else [JobField(_l("结果"), _value_text("", values, {}))]
    shown = []
    for key, value in values.items():
        if key in SUBJECT_KEYS or key in HIDDEN_KEYS or value in (None, "", [], {}):
            continue
        label = KEY_LABELS.get(key) or labels.FIELD.get(key) or key
        if key == "queued_jobs" and isinstance(value, list):
            links = [(f"#{job_id}", url_for("web.job_detail", job_id=job_id)) for job_id in value[:50]]
            total = _("共 %(n)s 个", n=len(value)) if len(value) > len(links) else ""
            shown.append(JobField(label, total, links=links))
            continue
        if key in ("evidence", "evidence_ids", "company_name_evidence") and isinstance(value, (list, dict)):
            items = value if isinstance(value, list) else [value]
            shown.append(JobField(label, "", links=_evidence_links(items)))
            continue
        shown.append(JobField(label, _value_text(key, value, values), mono=key in MONO_KEYS))
    return shown


def duration(start: datetime | None, end: datetime | None) -> str:
    """How long the job ran, in words ('3 seconds', '3秒钟'); empty until it started and ended."""
    if start is None or end is None:
        return ""
    elapsed = max(localtime.aware(end) - localtime.aware(start), timedelta(seconds=1))  # never "0 seconds"
    return format_timedelta(elapsed, threshold=1.5)


def raw_json(value: Any) -> str:
    """The stored JSON for admins, readable (Chinese as characters, not \\u escapes)."""
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
