"""Turn a case report's inputs (answers + advice snapshot) into what the case template shows."""

from __future__ import annotations

from typing import Any

from app.advice import questionnaire
from app.reports.charts import Series, bar_chart
from app.reports.decision_document import comparison_tables
from app.reports.document import figures, fmt_number, when_text
from app.reports.labels import Labels

ANSWER_ORDER = ("workload", "compute", "model", "data", "site", "users", "checkpoint", "budget", "compliance")
# Answer fields whose values are codes, and the label group (app.reports.labels.VALUES) that names them.
ANSWER_VALUE_GROUPS = {"source": "data_source", "batch_kind": "batch_kind", "residency": "residency"}
# "Not sure" flags: shown as the answer of the figure they stand for, not as rows of their own.
UNSURE_FLAGS = {"step_unknown": "target_step_seconds", "uplink_unknown": "uplink_mbps"}
MAX_RANKED = 10  # eligible offers listed in full; the rest are counted
MAX_EXCLUDED = 30  # excluded offers listed (fewest reasons first); the rest are counted
SECTIONS: list[tuple[str, str]] = [
    ("answers", "sec_answers"),
    ("requirements", "sec_requirements"),
    ("ranking", "sec_ranking"),
    ("excluded", "sec_excluded"),
    ("quotes", "sec_quotes"),
    ("checklist", "sec_case_checklist"),
    ("faq", "sec_faq"),
    ("appendix", "sec_case_appendix"),
]


def _criteria(labels: Labels) -> dict[str, str]:
    """Scoring criteria (the buyer's priorities) by key, in this language."""
    from app.advice.knowledge import load

    return {key: labels.pick(c["label_zh"], c["label_en"]) for key, c in load("scoring")["criteria"].items()}


def answer_value_label(key: str, value: Any, labels: Labels) -> str:
    """An answer's coded value (data source, batch kind, a priority) as words in this language."""
    if key == "priorities":
        return _criteria(labels).get(str(value), str(value))
    if key in ANSWER_VALUE_GROUPS:
        return labels.v(ANSWER_VALUE_GROUPS[key], value)
    return str(value)


def _answer_value(value: Any, labels: Labels, key: str = "") -> str:
    if isinstance(value, bool):
        return labels.t("yes") if value else labels.t("no")
    if isinstance(value, list):
        separator = "、" if labels.language == "zh" else ", "
        shown = [answer_value_label(key, item, labels) for item in value]
        return separator.join(shown) if shown else labels.t("dash")
    if isinstance(value, (int, float)):
        return fmt_number(value)
    return labels.t("dash") if value in (None, "") else answer_value_label(key, value, labels)


UNSURE = object()


def _with_unsure(values: dict[str, Any]) -> dict[str, Any]:
    """A section's answers, each "not sure" flag shown as the answer of its figure (unset flags hidden)."""
    out = {key: value for key, value in values.items() if key not in UNSURE_FLAGS}
    for flag, figure in UNSURE_FLAGS.items():
        if values.get(flag):
            out[figure] = UNSURE
    return out


def answer_rows(
    answers: dict[str, Any], labels: Labels, workload_label: str = ""
) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section label, [(field label, value)]) for every answered section, in questionnaire order."""
    answers = questionnaire.pruned(answers)  # an older case may hold sections its kind never asked
    order = [*ANSWER_ORDER, *(key for key in answers if key not in ANSWER_ORDER)]
    rows = []
    for section in order:
        values = answers.get(section)
        if not isinstance(values, dict) or not values:
            continue
        fields = []
        for key, value in _with_unsure(values).items():
            shown = (
                _answer_value(value, labels, key)
                if value is not UNSURE
                else labels.pick("不确定", "not sure")
            )
            if (section, key) == ("workload", "kind") and workload_label:
                shown = workload_label
            fields.append((labels.v("answer_field", key), shown))
        rows.append((labels.v("answer_section", section), fields))
    return rows


def _offer_title(offer: dict[str, Any]) -> str:
    name = offer.get("offer_name") or offer.get("gpu_model", "")
    return f"{name}（{offer.get('gpu_model')} × {offer.get('gpus_per_node')}）"


def case_charts(eligible: list[dict[str, Any]], labels: Labels) -> list[Any]:
    """Scores and monthly costs of the listed eligible offers."""
    names = [_offer_title(offer) for offer in eligible]
    return [
        bar_chart(
            "case-scores",
            labels.t("chart_scores"),
            "",
            names,
            [Series(labels.t("score"), tuple(offer.get("score") for offer in eligible))],
        ),
        bar_chart(
            "case-costs",
            labels.t("chart_costs"),
            "",
            names,
            [Series(labels.t("monthly_cost"), tuple(offer.get("monthly_cost_cny") for offer in eligible))],
        ),
    ]


def evidence_rows(evidence: dict[str, Any], labels: Labels) -> dict[str, list[dict[str, Any]]]:
    """The benchmark runs and check runs the advice used, each with its date and figures as text."""
    runs = [
        {
            **run,
            "when": when_text(run.get("at")),
            "figure_names": [labels.v("figure", key) for key in run.get("figures") or []],
        }
        for run in evidence.get("runs") or []
    ]
    checks = [{**check, "when": when_text(check.get("at"))} for check in evidence.get("check_runs") or []]
    return {"runs": runs, "check_runs": checks}


def _unlisted(total: Any, kept: list[dict[str, Any]], listed: int) -> int:
    """How many offers of a kind the report counts but does not list (the snapshot may keep fewer)."""
    return max(0, (total if isinstance(total, int) else len(kept)) - min(listed, len(kept)))


def case_context(inputs: dict[str, Any], meta: dict[str, Any], language: str) -> dict[str, Any]:
    """Everything the case report template needs."""
    labels = Labels(language)
    advice = inputs["advice"]
    offers = advice.get("offers") or []
    eligible = [offer for offer in offers if not offer.get("excluded")]
    excluded = [offer for offer in offers if offer.get("excluded")]
    case = inputs["case"]
    workload = advice.get("workload") or {}
    summary = advice.get("summary") or {}
    return {
        "L": labels,
        "lang": language,
        "meta": {**meta, "created_at_text": when_text(meta.get("created_at"))},
        "inputs": inputs,
        "case": case,
        "case_updated": when_text(case.get("updated_at")),
        "running_title": case.get("title") or "",
        "workload": workload,
        "summary": summary,
        "answers": answer_rows(
            inputs.get("answers") or {},
            labels,
            labels.pick(workload.get("label_zh"), workload.get("label_en")),
        ),
        "requirements": advice.get("requirements") or [],
        "rtt_table": advice.get("rtt_table") or [],
        "step_time": advice.get("step_time"),
        "ranked": eligible[:MAX_RANKED],
        "more_ranked": _unlisted(summary.get("eligible"), eligible, MAX_RANKED),
        "excluded": excluded[:MAX_EXCLUDED],
        "more_excluded": _unlisted(summary.get("excluded"), excluded, MAX_EXCLUDED),
        "comparison": inputs.get("comparison") or {},
        "comparison_tables": comparison_tables(inputs.get("comparison") or {}, labels),
        "checklist": advice.get("checklist") or [],
        "faq": advice.get("faq") or [],
        "assumptions": advice.get("assumptions") or [],
        "evidence": evidence_rows(advice.get("evidence") or {}, labels),
        "nearest": advice.get("nearest_misses"),
        "figures": figures(case_charts(eligible[:MAX_RANKED], labels), labels) if eligible else [],
        "sections": [(anchor, labels.t(key)) for anchor, key in SECTIONS],
        "num": fmt_number,
        "offer_title": _offer_title,
    }
