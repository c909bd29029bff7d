"""The procurement checklist: items from the knowledge base, chosen for a case (and a provider), ticked
automatically from evidence (credential findings, measurements) or by hand."""

from __future__ import annotations

import functools
import operator
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.advice.facts import SOURCE_LABELS, Measurement, OfferFacts, ProviderFacts
from app.advice.figure_names import figure_name
from app.advice.knowledge import load
from app.advice.numbers import fmt, tidy, zh_unit
from app.advice.requirements import Needs, network_constants
from benchmarks.compare import model_key

OPEN, PASSED, FAILED, MEASURED = "open", "passed", "failed", "measured"
TOPICS = ("licence", "network", "storage", "gpu", "latency", "contract")
GPUVET_COMMAND = "flask --app wsgi"  # how a command of gpuvet's own begins (an analyst runs it)


@dataclass(frozen=True)
class ChecklistItem:
    """One thing to ask or verify, how to do it, and when it passes."""

    key: str
    topic: str
    title_zh: str
    title_en: str
    how_zh: str
    how_en: str
    pass_zh: str
    pass_en: str
    command: str | None = None
    target_zh: str | None = None
    target_en: str | None = None
    kinds: tuple[str, ...] = ()
    when: tuple[str, ...] = ()
    red_flags: tuple[int, ...] = ()
    measurements: tuple[str, ...] = ()
    suite: str | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def gpuvet_command(self) -> bool:
        """Whether `command` runs gpuvet itself (for analysts) rather than a tool on a trial server."""
        return bool(self.command and self.command.startswith(GPUVET_COMMAND))

    @property
    def bench_command(self) -> str | None:
        """The gpuvet command that runs this item's suite with its parameters on a trial server."""
        if self.suite is None:
            return None
        params = "".join(f" --param {name}={value}" for name, value in self.params)
        return f"{GPUVET_COMMAND} bench run SERVER_ID --suite {self.suite}{params}"


@dataclass(frozen=True)
class Tick:
    """A hand-made tick: who, when, why, and a link to the evidence."""

    item_key: str
    provider_id: int | None
    done: bool
    by: str
    at: datetime | None
    comment: str = ""
    evidence_url: str | None = None


@dataclass
class Entry:
    """An item as it stands for this case (and provider)."""

    item: ChecklistItem
    status: str = OPEN
    target_zh: str | None = None
    target_en: str | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    tick: Tick | None = None

    @property
    def effective_status(self) -> str:
        """A hand tick wins over the automatic status (both stay visible)."""
        if self.tick is not None:
            return PASSED if self.tick.done else (self.status if self.status != PASSED else OPEN)
        return self.status

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        item = self.item
        return {
            "key": item.key,
            "topic": item.topic,
            "title_zh": item.title_zh,
            "title_en": item.title_en,
            "how_zh": item.how_zh,
            "how_en": item.how_en,
            "command": item.command,
            "gpuvet_command": item.gpuvet_command,
            "suite": item.suite,
            "params": dict(item.params),
            "bench_command": item.bench_command,
            "pass_zh": item.pass_zh,
            "pass_en": item.pass_en,
            "target_zh": self.target_zh,
            "target_en": self.target_en,
            "auto_status": self.status,
            "status": self.effective_status,
            "evidence": self.evidence,
            "tick": None
            if self.tick is None
            else {
                "done": self.tick.done,
                "by": self.tick.by,
                "at": self.tick.at.isoformat() if self.tick.at else None,
                "comment": self.tick.comment,
                "evidence_url": self.tick.evidence_url,
            },
        }


# ---------------------------------------------------------------- the knowledge base
Condition = Callable[[Needs, ProviderFacts | None, list[OfferFacts]], bool]
CONDITIONS: dict[str, Condition] = {
    "cloud_offers": lambda needs, provider, offers: (
        provider is None or any(offer.offer_kind == "cloud_instance" for offer in offers)
    ),
    "certifications_required": lambda needs, provider, offers: needs.iso27001 or bool(needs.dengbao_level),
    "rdma": lambda needs, provider, offers: needs.rdma_recommended,
    "office_upload": lambda needs, provider, offers: needs.upload_s is not None or needs.uplink_unknown,
    "checkpoint": lambda needs, provider, offers: needs.checkpoint_write_mb_s is not None,
}


@functools.cache
def items() -> tuple[ChecklistItem, ...]:
    """Every item of app/knowledge/advice/checklist.yaml (keys unique, conditions known)."""
    loaded = []
    for row in load("checklist")["items"]:
        evidence = row.get("evidence") or {}
        item = ChecklistItem(
            key=row["key"],
            topic=row["topic"],
            title_zh=tidy(row["title_zh"]),
            title_en=tidy(row["title_en"]),
            how_zh=tidy(row["how_zh"]),
            how_en=tidy(row["how_en"]),
            pass_zh=tidy(row["pass_zh"]),
            pass_en=tidy(row["pass_en"]),
            command=row.get("command"),
            target_zh=row.get("target_zh"),
            target_en=row.get("target_en"),
            kinds=tuple(row.get("kinds", ())),
            when=tuple(row.get("when", ())),
            red_flags=tuple(evidence.get("red_flags", ())),
            measurements=tuple(evidence.get("measurements", ())),
            suite=row.get("suite"),
            params=_suite_params(row),
        )
        unknown = [name for name in item.when if name not in CONDITIONS]
        if unknown or item.topic not in TOPICS:
            raise ValueError(f"checklist item {item.key}: unknown condition {unknown} or topic {item.topic}")
        if any(existing.key == item.key for existing in loaded):
            raise ValueError(f"checklist item {item.key} is listed twice")
        loaded.append(item)
    return tuple(loaded)


def _suite_params(row: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """An item's benchmark parameters, checked against the suites and SuiteParams (a typo fails loading)."""
    from benchmarks.params import SuiteParams
    from benchmarks.suites import SUITES

    suite, params = row.get("suite"), row.get("params") or {}
    if suite is None and not params:
        return ()
    if suite not in SUITES:
        raise ValueError(f"checklist item {row['key']}: unknown suite {suite!r}")
    SuiteParams.model_validate(params)
    return tuple(sorted(params.items()))


def item_keys() -> set[str]:
    """Keys of every checklist item."""
    return {item.key for item in items()}


@functools.cache
def confirm_asks() -> dict[str, dict[str, str]]:
    """Per fact that may be unrecorded (待确认): what to ask the provider and the item that checks it."""
    asks = {key: dict(value) for key, value in (load("checklist").get("confirm") or {}).items()}
    unknown = sorted(key for key, ask in asks.items() if ask.get("item") not in item_keys())
    if unknown:
        raise ValueError(f"checklist.yaml confirm: unknown item for {unknown}")
    return asks


def _values(needs: Needs, extra: dict[str, Any]) -> dict[str, str]:
    """Case numbers the item targets may name."""
    values: dict[str, Any] = {
        "needed_gbps": needs.needed_effective_gbps,
        "needed_line_gbps": needs.needed_effective_gbps / network_constants()["tcp"]
        if needs.needed_effective_gbps
        else None,
        "network_budget_ms": needs.network_budget_ms,
        "upload_hours": needs.upload_s / 3600 if needs.upload_s is not None else None,
        "read_iops": needs.read_iops,
        "checkpoint_write_mb_s": needs.checkpoint_write_mb_s,
        "checkpoint_gb": needs.checkpoint_gb,
        "stall_s": needs.checkpoint_gb * 1000 / needs.checkpoint_write_mb_s
        if needs.checkpoint_gb and needs.checkpoint_write_mb_s
        else None,
        "gpus_per_node": needs.gpus_per_node,
        "gpu_models": " / ".join(needs.gpu_models) if needs.gpu_models else None,
        "contract_months": needs.contract_months,
        "iso27001_required": "required" if needs.iso27001 else None,
        "dengbao_level": needs.dengbao_level or None,
        **extra,
    }
    return {
        key: fmt(value) if isinstance(value, (int, float)) else value
        for key, value in values.items()
        if value
    }


def _fill(template: str | None, values: dict[str, str]) -> str | None:
    """The template with the case's numbers, or None when a number it names is not known."""
    if not template:
        return None
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    if any(name not in values for name in names):
        return None
    return template.format_map(values)


# ---------------------------------------------------------------- automatic evidence
COMPARE = {">=": operator.ge, "<=": operator.le}
# Which case number a measured metric is held against.
MEASUREMENT_TARGETS: dict[str, tuple[Callable[[Needs], float | None], str]] = {
    "intranet_gbps": (lambda needs: needs.needed_effective_gbps, ">="),
    "rdma_gbps": (lambda needs: needs.needed_effective_gbps, ">="),
    "read_iops": (lambda needs: needs.read_iops, ">="),
    "write_mb_s": (lambda needs: needs.checkpoint_write_mb_s, ">="),
    "rtt_ms": (lambda needs: needs.network_budget_ms, "<="),
    "gpu_count": (lambda needs: needs.gpus_per_node, ">="),
}


def _same_gpu(offer: OfferFacts, found: Any) -> bool:
    """Every measured GPU name is the claimed model (the rule of benchmarks.compare's gpu check)."""
    wanted = model_key(offer.gpu_model)
    return all(wanted in model_key(name) for name in str(found).split(", "))


# Measured words (not numbers) are held against what the offer claims.
CLAIM_CHECKS: dict[str, Callable[[OfferFacts, Any], bool | None]] = {
    "storage_type": lambda offer, found: (
        None if offer.storage_type == "unknown" else found == offer.storage_type
    ),
    "gpu_model": _same_gpu,
    "bandwidth_type": lambda offer, found: (
        found == "dedicated" if offer.bandwidth_type == "dedicated" else None
    ),
}


def _verdict(metric: str, value: Any, needs: Needs, offer: OfferFacts) -> tuple[bool | None, str, str]:
    """Whether a measured value passes (None: nothing to hold it against) and the requirement in words."""
    if metric in CLAIM_CHECKS:
        ok = CLAIM_CHECKS[metric](offer, value)
        claimed = getattr(offer, metric)
        return (
            ok,
            "" if ok is None else f"，报价 {claimed}",
            "" if ok is None else f", the offer says {claimed}",
        )
    target, op = MEASUREMENT_TARGETS.get(metric, (lambda _needs: None, ">="))
    goal = target(needs)
    if metric == "gpu_count":  # as many GPUs as the offer claims, and as the case needs
        goal = max(goal or 0, offer.gpus_per_node)
    if goal is None or not isinstance(value, int | float):
        return None, "", ""
    return COMPARE[op](value, goal), f"，要求 {op} {fmt(goal)}", f", required {op} {fmt(goal)}"


def _from_findings(entry: Entry, provider: ProviderFacts) -> None:
    item = entry.item
    if not item.red_flags:
        return
    related = [f for f in provider.findings if f.red_flag in item.red_flags and f.severity != "info"]
    for finding in related:
        entry.evidence.append(
            {
                "kind": "finding",
                "rule_id": finding.rule_id,
                "severity": finding.severity,
                "message_zh": finding.message_zh,
                "message_en": finding.message_en,
                "link": finding.link,
            }
        )
    if related:
        entry.status = FAILED
    elif provider.check is not None:
        entry.status = PASSED
        when = provider.check.at.strftime("%Y-%m-%d") if provider.check.at else ""
        entry.evidence.append(
            {
                "kind": "check",
                "message_zh": f"资质核查（{when}）未发现相关问题",
                "message_en": f"the credential check ({when}) raised nothing related",
                "link": provider.check.link,
            }
        )


def _from_measurements(entry: Entry, needs: Needs, offers: list[OfferFacts]) -> None:
    results = []
    for offer in offers:
        for metric in entry.item.measurements:
            measured = offer.measurements.get(metric)
            if measured is None:
                continue
            ok, goal_zh, goal_en = _verdict(metric, measured.value, needs, offer)
            results.append(ok)
            entry.evidence.append(_measurement_evidence(offer, metric, measured, ok, goal_zh, goal_en))
    if not results or entry.status == FAILED:
        return
    if any(ok is False for ok in results):
        entry.status = FAILED
    elif all(ok is True for ok in results):
        entry.status = PASSED
    elif entry.status == OPEN:
        entry.status = MEASURED


def _measurement_evidence(
    offer: OfferFacts, metric: str, measured: Measurement, ok: bool | None, goal_zh: str, goal_en: str
) -> dict[str, Any]:
    """Evidence line of one measured figure: the value, its run (number, date, link) and the verdict."""
    zh, en = SOURCE_LABELS[measured.source]
    shown = fmt(measured.value) if isinstance(measured.value, int | float) else measured.value
    day = measured.at.date().isoformat() if measured.at else None
    run_zh = f"，测试 #{measured.run_id}" if measured.run_id else ""
    run_en = f", run #{measured.run_id}" if measured.run_id else ""
    if day:
        run_zh, run_en = f"{run_zh}，{day}", f"{run_en}, {day}"
    if measured.origin == "uploaded":
        run_zh, run_en = f"{run_zh}，手工上传", f"{run_en}, uploaded"
    name = offer.name or offer.gpu_model
    figure_zh, figure_en = figure_name(metric)
    return {
        "kind": "measurement",
        "metric": metric,
        "value": measured.value,
        "unit": measured.unit,
        "ok": ok,
        "run_id": measured.run_id,
        "measured_on": day,
        "origin": measured.origin,
        "message_zh": f"{name}：{figure_zh} {shown}{zh_unit(measured.unit)}（{zh}{run_zh}）{goal_zh}",
        "message_en": f"{name}: {figure_en} {shown} {measured.unit} ({en}{run_en}){goal_en}",
        "link": measured.link,
    }


def select(
    needs: Needs, provider: ProviderFacts | None = None, offers: Iterable[OfferFacts] = ()
) -> list[ChecklistItem]:
    """The items that apply to the case's workload kind (and to the provider's offers)."""
    offers = list(offers)
    return [
        item
        for item in items()
        if (not item.kinds or needs.kind.value in item.kinds)
        and all(CONDITIONS[name](needs, provider, offers) for name in item.when)
    ]


def build(
    needs: Needs,
    *,
    provider: ProviderFacts | None = None,
    offers: Iterable[OfferFacts] = (),
    ticks: Iterable[Tick] = (),
    extra_values: dict[str, Any] | None = None,
    measure_first: dict[str, int] | None = None,
    to_confirm: dict[str, int] | None = None,
) -> list[Entry]:
    """A case's checklist (per provider if given): auto- and hand-ticked, measure-first and 待确认 added."""
    offers = list(offers)
    values = _values(needs, extra_values or {})
    provider_id = provider.id if provider else None
    by_key = {tick.item_key: tick for tick in ticks if tick.provider_id == provider_id}
    chosen = select(needs, provider, offers)
    wanted = measure_first or {}
    asks = _confirm_by_item(to_confirm or {})
    chosen += [item for item in items() if (item.key in wanted or item.key in asks) and item not in chosen]
    entries = []
    for item in chosen:
        entry = Entry(item, target_zh=_fill(item.target_zh, values), target_en=_fill(item.target_en, values))
        if item.key in wanted:
            entry.evidence.append(_measure_first_note(wanted[item.key]))
        entry.evidence.extend(_confirm_note(key, count) for key, count in asks.get(item.key, ()))
        if provider is not None:
            _from_findings(entry, provider)
            _from_measurements(entry, needs, offers)
        entry.tick = by_key.get(item.key)
        entries.append(entry)
    return entries


def _measure_first_note(count: int) -> dict[str, Any]:
    """Evidence line: how many ranked offers wait on this item's measurement before signing (how to run
    the measurement is the item's command, shown to analysts)."""
    return {
        "kind": "measure_first",
        "count": count,
        "message_zh": f"{count} 个排名中的套餐在这一项上只有典型值或估算值，先实测再签约（按本项的做法实测）",
        "message_en": f"{count} ranked offer(s) rest on a typical value or an estimate here; "
        "measure before signing (as this item says)",
        "link": None,
    }


def _confirm_by_item(counts: dict[str, int]) -> dict[str, list[tuple[str, int]]]:
    """Unrecorded facts (and how many ranked offers lack each), grouped by the item that checks them."""
    grouped: dict[str, list[tuple[str, int]]] = {}
    asks = confirm_asks()
    for key, count in counts.items():
        grouped.setdefault(asks[key]["item"], []).append((key, count))
    return grouped


def _confirm_note(key: str, count: int) -> dict[str, Any]:
    """Evidence line: how many ranked offers have this fact unrecorded, and what to ask the provider."""
    ask = confirm_asks()[key]
    why_zh = ask.get("why_zh") or "在登记中没有这项记录（不算不合格）"
    why_en = ask.get("why_en") or "have nothing on record here (not a failure)"
    return {
        "kind": "to_confirm",
        "fact": key,
        "count": count,
        "message_zh": f"待确认：{count} 个排名中的套餐{why_zh}。{ask['ask_zh']}",
        "message_en": f"to confirm: {count} ranked offer(s) {why_en}. {ask['ask_en']}",
        "link": None,
    }
