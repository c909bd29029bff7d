"""Turn a provider report's inputs (the stored snapshot) into what the template shows, in one language."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from markupsafe import Markup

from app.core import clock as localtime
from app.core import vocabulary
from app.reports.charts import Chart, Series, bar_chart, render_svg, timeline_chart
from app.reports.evidence_text import fact_lines
from app.reports.labels import Labels
from app.reports.measurements import PATH_NAMES
from app.reports.recommend import recommendations
from app.vetting.subjects import findings_by_record, record_numbers

SOURCE_LABELS = {
    "checks": "src_checks",
    "evidence": "src_evidence",
    "measurements": "src_measurements",
    "checklist": "src_checklist",
    "changes": "src_changes",
    "disclosure": "src_disclosure",
    "credit": "src_credit",
}
SEVERITY_FIRST = vocabulary.sort_key("severity")  # most severe first
MAX_SERIES_CHARTS = 3  # throughput charts drawn at most (one per measured link)


@dataclass
class NumberCheck:
    """A number's format check: state ok|warn|bad, what it was read as, and the problems found."""

    state: str
    label: str
    kind: str
    normalized: str
    problems: list[str]


@dataclass
class Figure:
    """A chart ready to place: its title, the SVG (None when there is nothing to draw) and a note."""

    title: str
    svg: Markup | None
    note: str = ""


@dataclass
class ClaimCell:
    """One claimed value of an offer and what was measured for it."""

    claimed: str
    measured: str = ""
    ratio: str = ""
    result: str = ""
    tested: bool = False


@dataclass
class OfferClaims:
    """An offer's title and its claims by metric key (absent: the offer claims nothing there)."""

    title: str
    cells: dict[str, ClaimCell] = field(default_factory=dict)


def fmt_number(value: Any) -> str:
    """A number for tables: thousands separators, at most two decimals; text passes through."""
    if value is None:
        return ""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{int(value):,}" if isinstance(value, (int, float)) else str(value)


def when_text(text: str | None) -> str:
    """An ISO timestamp in the display zone, labelled ('2026-03-01 10:03 UTC+8'); a date stays a date."""
    if not text:
        return ""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return text
    return localtime.when(value) if "T" in text else value.strftime("%Y-%m-%d")


def number_check(check: dict[str, Any] | None, labels: Labels) -> NumberCheck | None:
    """Summarise an identify() result for the report."""
    if not check:
        return None
    problems = list(check.get("problems") or [])
    if not check.get("valid"):
        state, label = "bad", labels.t("format_bad")
    elif problems:
        state, label = "warn", labels.t("format_warn")
    else:
        state, label = "ok", labels.t("format_ok")
    return NumberCheck(
        state=state,
        label=label,
        kind=labels.v("identifier_kind", check.get("kind")),
        normalized=check.get("normalized") or "",
        problems=problems,
    )


def offer_title(offer: dict[str, Any]) -> str:
    """How an offer is named in tables and charts."""
    base = f"{offer['gpu_model']} × {offer['gpus_per_node']}"
    return f"{offer['name']}（{base}）" if offer.get("name") else base


# ---------------------------------------------------------------- claims against measurements
# (metric key, label key, unit): the performance claims of an offer, in table order. The key is what a
# measurement names in the measurements source ("gpu" or an Offer field).
CLAIM_METRICS: tuple[tuple[str, str, str], ...] = (
    ("gpu", "m_gpu", ""),
    ("intranet_gbps", "m_intranet", "Gbps"),
    ("rdma_gbps", "m_rdma", "Gbps"),
    ("public_mbps", "m_public", "Mbps"),
    ("bandwidth_type", "m_bandwidth_type", ""),
    ("storage_type", "m_storage_type", ""),
    ("nominal_iops", "m_iops", "IOPS"),
)


def _claimed(offer: dict[str, Any], key: str, labels: Labels) -> Any:
    """The value an offer claims for a metric (None when it claims nothing)."""
    if key == "gpu":
        return f"{offer['gpu_model']} × {offer['gpus_per_node']}"
    if key in ("bandwidth_type", "storage_type"):
        return labels.v(key, offer.get(key))
    return offer.get(key)


def _claimed_text(offer: dict[str, Any], key: str, value: Any, unit: str, labels: Labels) -> str:
    text = f"{fmt_number(value)} {unit}".strip()
    if key == "rdma_gbps" and offer.get("rdma_type") not in (None, "none"):
        text = f"{labels.v('rdma_type', offer['rdma_type'])} {text}"
    return text


def claims(inputs: dict[str, Any], labels: Labels) -> list[OfferClaims]:
    """Every offer's claims with the measurement of each (from the measurements source) or 'not tested'."""
    measured: dict[tuple[Any, str], dict[str, Any]] = {}
    source = inputs["sources"].get("measurements") or {}
    for item in (source.get("data") or {}).get("claims", []) if source.get("status") == "ok" else []:
        measured[(item.get("offer_id"), item.get("metric"))] = item
    result = []
    for offer in inputs["offers"]:
        block = OfferClaims(title=offer_title(offer))
        for key, _label, unit in CLAIM_METRICS:
            value = _claimed(offer, key, labels)
            found = measured.get((offer.get("id"), key))
            if value in (None, "") and found is None:
                continue  # the offer claims nothing here and nothing was measured
            cell = ClaimCell(
                claimed=_claimed_text(offer, key, value, unit, labels)
                if value not in (None, "")
                else labels.t("dash"),
                measured=labels.t("not_tested"),
            )
            if found is not None:
                cell.tested = True
                text = labels.pick(found.get("text_zh"), found.get("text_en"))
                cell.measured = (
                    text or f"{fmt_number(found.get('value'))} {found.get('unit') or unit}".strip()
                )
                if isinstance(value, (int, float)) and value and isinstance(found.get("value"), (int, float)):
                    cell.ratio = f"{found['value'] / value:.0%}"
                cell.result = labels.v("verdict", found["verdict"]) if found.get("verdict") else ""
            block.cells[key] = cell
        result.append(block)
    return result


def claim_columns(labels: Labels) -> list[tuple[str, str]]:
    """(metric key, column heading) of the claims table."""
    return [(key, labels.t(label)) for key, label, _unit in CLAIM_METRICS]


# ---------------------------------------------------------------- charts
def registry_charts(inputs: dict[str, Any], labels: Labels) -> list[Chart]:
    """Charts of what the registry holds: each offer's nominal intranet bandwidth and its price."""
    offers = inputs["offers"]
    names = [offer_title(offer) for offer in offers]
    return [
        bar_chart(
            "offer-intranet",
            labels.t("chart_intranet"),
            "Gbps",
            names,
            [Series(labels.t("series_nominal"), tuple(offer.get("intranet_gbps") for offer in offers))],
        ),
        bar_chart(
            "offer-price",
            labels.t("chart_price"),
            "",
            names,
            [Series(labels.t("series_nominal"), tuple(offer.get("price_gpu_hour_cny") for offer in offers))],
        ),
    ]


def _points(raw: Any) -> tuple[tuple[float, float | None], ...]:
    return tuple((float(x), None if y is None else float(y)) for x, y in raw or ())


def series_name(item: dict[str, Any], labels: Labels) -> str:
    """A chart series' name in the report's language: the server and the network path or benchmark step
    it measured ("试用机 · 内网", "试用机 4k 随机读"), never their keys; older snapshots keep their name."""
    server = str(item.get("server") or "")
    if item.get("path") in PATH_NAMES:
        return f"{server} · {labels.pick(*PATH_NAMES[item['path']])}"
    if item.get("step"):
        return f"{server} {labels.v('bench_step', item['step'])}".strip()
    return str(item.get("name", ""))


def measurement_charts(series: dict[str, Any], labels: Labels) -> list[Chart]:
    """Charts fed by benchmark series: throughput over time, IOPS against nominal, GPU utilisation.

    `series` is plain data: {"throughput": [{"name", "unit", "nominal", "points": [[minute, value], ...]}],
    "iops": [{"name", "nominal", "measured"}], "gpu_util": [{"name", "points": [[minute, percent], ...]}]}.
    """
    charts: list[Chart] = []
    for index, link in enumerate((series.get("throughput") or [])[:MAX_SERIES_CHARTS]):
        charts.append(
            timeline_chart(
                f"throughput-{index}",
                f"{labels.t('chart_throughput')} · {series_name(link, labels)}",
                link.get("unit") or "Gbps",
                [Series(labels.t("series_measured"), points=_points(link.get("points")))],
                x_title=labels.t("minutes"),
                reference=link.get("nominal"),
                reference_label=labels.t("series_nominal"),
            )
        )
    iops = series.get("iops") or []
    if iops:
        charts.append(
            bar_chart(
                "iops",
                labels.t("chart_iops"),
                "IOPS",
                [series_name(item, labels) for item in iops],
                [
                    Series(labels.t("series_nominal"), tuple(item.get("nominal") for item in iops)),
                    Series(labels.t("series_measured"), tuple(item.get("measured") for item in iops)),
                ],
            )
        )
    gpus = series.get("gpu_util") or []
    if gpus:
        charts.append(
            timeline_chart(
                "gpu-util",
                labels.t("chart_gpu_util"),
                "%",
                [Series(gpu.get("name", ""), points=_points(gpu.get("points"))) for gpu in gpus],
                x_title=labels.t("minutes"),
                y_range=(0, 100),
            )
        )
    return charts


def figures(charts: list[Chart], labels: Labels) -> list[Figure]:
    """Draw each chart; a chart without values becomes a note instead of an empty plot."""
    return [
        Figure(chart.title, render_svg(chart))
        if chart.has_data()
        else Figure(chart.title, None, labels.t("chart_no_values"))
        for chart in charts
    ]


# ---------------------------------------------------------------- findings and evidence
SHORT_HASH = 12  # hex digits of a SHA-256 in a finding's reference; the appendix gives all 64


def _evidence_key(item: dict[str, Any]) -> tuple[Any, ...]:
    """One stored fetch is one appendix entry, however its reference spells the time."""
    if item.get("evidence_id") is not None:
        return ("id", item["evidence_id"])
    return (item.get("url"), item.get("sha256"), item.get("fetched_at"))


def evidence_index(inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """Every piece of evidence with a URL, from the findings and the evidence source, numbered E1, E2 ..."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    checks = inputs["sources"].get("checks") or {}
    from_findings = [
        item
        for finding in ((checks.get("data") or {}).get("findings") or [])
        for item in finding.get("evidence") or []
        if isinstance(item, dict) and item.get("url")
    ]
    stored = (inputs["sources"].get("evidence") or {}).get("data") or []
    for item in [*stored, *from_findings]:
        key = _evidence_key(item)
        if key not in seen:
            seen[key] = {
                **item,
                "ref": f"E{len(seen) + 1}",
                "short_hash": str(item.get("sha256") or "")[:SHORT_HASH],
                "fetched_at_text": when_text(item.get("fetched_at")),
            }
    return list(seen.values())


def finding_rows(
    inputs: dict[str, Any], labels: Labels, evidence: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The stored findings in this language, most severe first, with their evidence references."""
    refs = {_evidence_key(item): item for item in evidence}
    data = (inputs["sources"].get("checks") or {}).get("data") or {}
    rows = []
    for finding in sorted(data.get("findings") or [], key=lambda f: SEVERITY_FIRST(f.get("severity"))):
        items = [item for item in finding.get("evidence") or [] if isinstance(item, dict)]
        rows.append(
            {
                "severity": finding.get("severity"),
                "severity_label": labels.v("severity", finding.get("severity")),
                "rule_id": finding.get("rule_id", ""),
                "rule_title": rule_title(finding.get("rule_id", ""), labels),
                "message": labels.pick(finding.get("message_zh"), finding.get("message_en")),
                "how_to_verify": labels.pick(
                    finding.get("how_to_verify_zh"), finding.get("how_to_verify_en")
                ),
                "refs": [refs[_evidence_key(item)] for item in items if item.get("url")],
                "facts": [fact_lines(item, labels) for item in items if not item.get("url")],
            }
        )
    return rows


def rule_title(rule_id: str, labels: Labels) -> str:
    """A rule's title in the report's language (the id when the rule is not registered)."""
    from app.vetting.findings import load_rules

    entry = load_rules().get(rule_id)
    return labels.pick(entry.title_zh, entry.title_en) if entry else rule_id


def subject_results(inputs: dict[str, Any], labels: Labels) -> tuple[bool, dict[str, list[str]]]:
    """Whether a check ran, and the findings (severity: message) for each subject such as 'licence:3'."""
    checks = inputs["sources"].get("checks") or {}
    if checks.get("status") != "ok":
        return False, {}
    records = [
        (entity, item.get("id"), item.get("number") or item.get("number_raw"))
        for entity, key in (("licence", "licences"), ("filing", "filings"))
        for item in inputs.get(key) or []
    ]
    grouped = findings_by_record((checks.get("data") or {}).get("findings") or [], record_numbers(records))
    separator = "：" if labels.language == "zh" else ": "
    return True, {
        subject: [
            f"{labels.v('severity', finding.get('severity'))}{separator}"
            + labels.pick(finding.get("message_zh"), finding.get("message_en"))
            for finding in found
        ]
        for subject, found in grouped.items()
    }


def cover_verdict(inputs: dict[str, Any], verdict: str | None, labels: Labels) -> tuple[str, str]:
    """(level, label) on the cover: the shared provider verdict, else (older snapshots) the check's own."""
    shared = (inputs["sources"].get("verdict") or {}).get("data")
    if shared:
        level = "not_verified" if shared["level"] == "unchecked" else shared["level"]
        return level, labels.pick(shared["label_zh"], shared["label_en"])
    level = verdict or "not_verified"
    return level, labels.v("verdict", level)


# ---------------------------------------------------------------- the whole document
SECTIONS: list[tuple[str, str]] = [
    ("identity", "sec_identity"),
    ("findings", "sec_findings"),
    ("claims", "sec_claims"),
    ("charts", "sec_charts"),
    ("checklist", "sec_checklist"),
    ("recommendations", "sec_recommendations"),
    ("changes", "sec_changes"),
    ("appendix", "sec_appendix"),
]


def verification_by_subject(sources: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each item's verification from the snapshot's verdict ('licence:3' -> status, reason, by, at)."""
    verdict = sources.get("verdict") or {}
    items = (verdict.get("data") or {}).get("items") or [] if verdict.get("status") == "ok" else []
    return {item["subject"]: item for item in items if isinstance(item, dict) and item.get("subject")}


def provider_context(inputs: dict[str, Any], meta: dict[str, Any], language: str) -> dict[str, Any]:
    """Everything the provider report template needs, computed from the snapshot and the export's meta."""
    labels = Labels(language)
    sources = inputs["sources"]
    checks = sources.get("checks") or {"status": "unavailable"}
    check_data = checks.get("data") or {}
    verdict = check_data.get("verdict") if checks.get("status") == "ok" else None
    evidence = evidence_index(inputs)
    checked, by_subject = subject_results(inputs, labels)
    measurements = sources.get("measurements") or {"status": "unavailable"}
    series = (
        (measurements.get("data") or {}).get("series") or {} if measurements.get("status") == "ok" else {}
    )
    return {
        "L": labels,
        "lang": language,
        "meta": {**meta, "created_at_text": when_text(meta.get("created_at"))},
        "inputs": inputs,
        "provider": inputs["provider"],
        "running_title": inputs["provider"].get("short_name") or inputs["provider"]["legal_name"],
        "registry_updated": when_text(inputs["provider"].get("updated_at")),
        "verdict": verdict or "not_verified",
        "cover_verdict": cover_verdict(inputs, verdict, labels),
        "check": check_data if verdict else None,
        "check_when": when_text(check_data.get("created_at")) if verdict else "",
        "checks_status": checks.get("status"),
        "checked": checked,
        "by_subject": by_subject,
        "verification": verification_by_subject(sources),
        "uscc_check": number_check(inputs.get("uscc_check"), labels),
        "licences": [(item, number_check(item.get("check"), labels)) for item in inputs["licences"]],
        "filings": [(item, number_check(item.get("check"), labels)) for item in inputs["filings"]],
        "findings": finding_rows(inputs, labels, evidence),
        "evidence": evidence,
        "claims": claims(inputs, labels),
        "claim_columns": claim_columns(labels),
        "measured": measurements.get("status") == "ok",
        "measurements_status": measurements.get("status"),
        "measurement_runs": (measurements.get("data") or {}).get("runs") or []
        if measurements.get("status") == "ok"
        else [],
        "registry_figures": figures(registry_charts(inputs, labels), labels),
        "measurement_figures": figures(measurement_charts(series, labels), labels),
        "checklist": sources.get("checklist") or {"status": "unavailable"},
        "recommendations": recommendations(inputs),
        "sources": [
            (labels.t(label), (sources.get(key) or {}).get("status", "unavailable"))
            for key, label in SOURCE_LABELS.items()
        ],
        "sections": [(anchor, labels.t(key)) for anchor, key in SECTIONS],
        "when": when_text,
        "num": fmt_number,
    }
