"""A case's quote comparison (比价表): one column per quote, with the quoted offer's verdict and its price per
useful GPU-hour at the figures the advice judges the offer on; whether a single source must be justified.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flask_babel import gettext as _

from app.advice import useful_hours as useful
from app.advice.engine import Advice
from app.advice.facts import SOURCE_LABELS
from app.advice.ranking.assessment import Assessment
from app.advice.ranking.claims import effective_intranet
from app.advice.ranking.figures import storage_figures
from app.advice.ranking.run import context
from app.cases import quotes as service
from app.core import clock

# At least this many providers with a valid quote, else a single-source justification is needed (三家比价).
COMPARED_PROVIDERS = 3
# The quote's own rows of the comparison, shown as stored (labels and units from the vocabulary).
QUOTE_ROWS = (
    "price_gpu_hour_cny",
    "price_month_cny",
    "min_term_months",
    "delivery_on",
    "sla_availability_pct",
    "sla_compensation",
    "bandwidth_type",
    *service.YES_NO,
    "received_via",
)


def _figure(value: Any, source: str) -> dict[str, Any]:
    """A figure with its source in both languages (what the source badge shows)."""
    zh, en = SOURCE_LABELS[source]
    return {"value": value, "source": source, "source_zh": zh, "source_en": en}


def _offer_figures(a: Assessment, ctx: Any) -> tuple[useful.Figure, useful.Figure, bool]:
    """The intranet and write figures the advice judges the offer on, and whether the intranet is RDMA."""
    value, source, _effective, transport = effective_intranet(a.offer, ctx)
    _iops, (write, write_source) = storage_figures(a.offer, ctx.typical_storage)
    return useful.Figure(value, source), useful.Figure(write, write_source), transport != "tcp"


def _useful_hours(quote: Any, a: Assessment | None, ctx: Any, workload: useful.Workload) -> dict[str, Any]:
    """The offer's figures and the quote's price per useful GPU-hour with its arithmetic in both languages."""
    if a is None:
        return {"missing": _("该套餐已不在登记中，无法计算")}
    intranet, write, rdma = _offer_figures(a, ctx)
    figures = {
        "intranet": _figure(intranet.value, intranet.source),
        "write": _figure(write.value, write.source),
    }
    price = useful.Price(quote.price_gpu_hour_cny, quote.price_month_cny)
    try:
        result = useful.useful_hours(workload, price, intranet, write, rdma=rdma)
    except ValueError:
        return {**figures, "missing": _("缺少内网带宽或写入速率，无法计算")}
    return {
        **figures,
        "value": result.price_per_useful_gpu_hour_cny,
        "share": result.useful_share,
        "explanation_zh": result.explanation("zh"),
        "explanation_en": result.explanation("en"),
    }


def _assessments(advice: Advice, quotes: list[Any]) -> dict[int, Assessment]:
    """The advice's assessment of each quoted offer that is still in the registry, by offer id."""
    found: dict[int, Assessment] = {}
    for provider_id in {quote.provider_id for quote in quotes}:
        for a in advice.ranked.of_provider(provider_id):
            found[a.offer.id] = a
    return {quote.offer_id: found[quote.offer_id] for quote in quotes if quote.offer_id in found}


def _offer_dicts(
    advice: Advice, assessed: dict[int, Assessment], shown: list[dict[str, Any]]
) -> dict[int, Any]:
    """The advice's dict (with its verdict) of each quoted offer: the page's own, else made for it."""
    offers = {offer["offer_id"]: offer for offer in shown if offer["offer_id"] in assessed}
    missing = [a for offer_id, a in assessed.items() if offer_id not in offers]
    offers.update((a.offer.id, offer) for a, offer in zip(missing, advice.offer_dicts(missing), strict=True))
    return offers


def comparison(
    session: Any, *, case_id: int, advice: Advice, shown: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One column per quote (latest entered first) and whether a single source must be justified; `shown`:
    the offer dicts the page already has (their verdicts are not read again)."""
    quotes = service.list_quotes(session, case_id=case_id)
    names = service.provider_names(session, quotes)
    today = clock.business_today()
    assessed = _assessments(advice, quotes)
    offers = _offer_dicts(advice, assessed, shown or [])
    ctx = context(advice.needs, today)
    workload = useful.Workload.of_case(advice.answers, advice.needs)
    columns = [
        {
            "quote": service.quote_dict(quote, names.get(quote.provider_id, ""), today),
            "offer": offers.get(quote.offer_id),
            "useful": _useful_hours(quote, assessed.get(quote.offer_id), ctx, workload),
        }
        for quote in quotes
    ]
    valid = {column["quote"]["provider_id"] for column in columns if not column["quote"]["expired"]}
    return {
        "columns": columns,
        "rows": QUOTE_ROWS,
        "valid_providers": len(valid),
        "single_source": len(valid) < COMPARED_PROVIDERS,
    }


# What a report keeps of a column's offer and its verdict (the inputs are stored with the export).
OFFER_KEYS = ("offer_id", "provider_name", "offer_name", "gpu_model", "gpus_per_node", "verdict")
VERDICT_KEYS = ("level", "level_zh", "level_en", "label_zh", "label_en")


def _report_verdict(offer: dict[str, Any] | None) -> dict[str, Any] | None:
    verdict = (offer or {}).get("verdict")
    return {key: verdict.get(key) for key in VERDICT_KEYS} if isinstance(verdict, dict) else None


def _report_offer(offer: dict[str, Any] | None) -> dict[str, Any] | None:
    if offer is None:
        return None
    return {**{key: offer.get(key) for key in OFFER_KEYS}, "verdict": _report_verdict(offer)}


def report_comparison(
    session: Any, *, case_id: int, advice: Advice, chosen: Iterable[int] = ()
) -> dict[str, Any]:
    """The comparison as a report stores it (case report, decision document); `chosen` offers marked."""
    found = comparison(session, case_id=case_id, advice=advice)
    picked = set(chosen)
    columns = [
        {
            "quote": column["quote"],
            "offer": _report_offer(column["offer"]),
            "useful": {key: value for key, value in column["useful"].items() if key != "missing"},
            "chosen": column["quote"]["offer_id"] in picked,
        }
        for column in found["columns"]
    ]
    verdicts = {c["quote"]["offer_id"]: c["offer"]["verdict"] for c in columns if c["offer"]}
    return {
        "columns": columns,
        "rows": list(found["rows"]),
        "valid_providers": found["valid_providers"],
        "single_source": found["single_source"],
        "verdicts": verdicts,
    }
