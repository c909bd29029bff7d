"""One entry point: answers + the registry's offers -> requirements, ranked offers, checklist and FAQ."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from app.advice import checklist, faq, sizing
from app.advice.answers import Answers
from app.advice.deciding import rank_offers
from app.advice.facts import SOURCE_LABELS, OfferFacts
from app.advice.knowledge import assumptions, load
from app.advice.misses import nearest_misses
from app.advice.numbers import fmt, tidy
from app.advice.offer_table import OfferTable
from app.advice.provider_verdict import VerdictReader, verdicts_for
from app.advice.ranked import Ranking, RankSlice
from app.advice.ranking.assessment import Assessment
from app.advice.ranking.claims import effective_intranet
from app.advice.ranking.figures import VERIFY_ITEMS
from app.advice.ranking.run import assessment_dict
from app.advice.requirements import Needs, compute_needs, rtt_between
from app.core import clock
from benchmarks.gc_pause import without_gc


@dataclass
class Advice:
    """The whole answer for one case."""

    answers: Answers
    needs: Needs
    ranked: Ranking
    checklist: list[checklist.Entry]
    faq: list[dict[str, Any]]
    # Reads the providers' verdicts afresh (app.credentials.verdicts.verdicts_of on a session); without it the
    # verdict shown is the level of the latest check run the offers were read with.
    read_verdicts: VerdictReader | None = None

    @property
    def eligible(self) -> RankSlice:
        """Offers that pass every hard constraint, best first."""
        return self.ranked.eligible

    @property
    def excluded(self) -> RankSlice:
        """Offers excluded by a hard constraint, fewest reasons first."""
        return self.ranked.excluded

    def to_dict(
        self, *, limit: int | None = None, step_url: Callable[[str], str | None] | None = None
    ) -> dict[str, Any]:
        """JSON form (`flask advise`, the API's `advice`); `step_url(step)` links a questionnaire step."""
        offers = list(self.ranked) if limit is None else self.eligible[:limit] + self.excluded[:limit]
        return {
            "workload": workload_summary(self.needs),
            "requirements": [quantity.to_dict() for quantity in self.needs.quantities],
            "rtt_table": rtt_table(self.needs, self.ranked),
            "summary": {
                "offers": len(self.ranked),
                "eligible": len(self.eligible),
                "excluded": len(self.excluded),
                "unverified": unverified_notes(self.ranked),
                "to_confirm": self.ranked.to_confirm_count(),
            },
            "nearest_misses": _linked(nearest_misses(self.ranked, self.needs), step_url),
            "evidence": evidence_used(offers),
            "offers": self.offer_dicts(offers),
            "checklist": [entry.to_dict() for entry in self.checklist],
            "faq": self.faq,
            "assumptions": assumption_list(),
            **self.unsure_parts(offers),
        }

    def unsure_parts(self, offers: list[Assessment]) -> dict[str, Any]:
        """With the step time not known: each listed offer's shortest supported step (else nothing)."""
        if not self.needs.step_unknown:
            return {}
        return {"step_time": step_time_table(offers, self.needs, self.ranked.ctx)}

    def offer_dicts(self, assessed: list[Assessment]) -> list[dict[str, Any]]:
        """JSON form of the listed offers, each with its provider's verdict (read once for them all)."""
        verdicts = verdicts_for((a.offer.provider for a in assessed), self.read_verdicts)
        out = offer_dicts(assessed, self.needs)
        for shown, a in zip(out, assessed, strict=True):
            shown["verdict"] = verdicts[a.offer.provider.id]
        return out


def offer_dicts(assessed: list[Assessment], needs: Needs) -> list[dict[str, Any]]:
    """JSON form of the listed offers (thousands of small objects: the cyclic collector paused)."""
    with without_gc():
        return [assessment_dict(a, needs) for a in assessed]


def step_time_table(assessed: list[Assessment], needs: Needs, ctx: Any) -> dict[str, Any]:
    """Per offer, the shortest step its intranet supports within the sync share (measured where a run
    counts, else claimed), shortest first; an offer whose intranet is unknown has no step."""
    rows = []
    for a in assessed:
        if a.excluded:
            continue
        value, source, effective, transport = effective_intranet(a.offer, ctx)
        shortest = None
        if effective and needs.allreduce_bytes is not None:
            shortest = sizing.shortest_step_seconds(needs.allreduce_bytes, effective, 1.0, needs.sync_share)
        zh, en = SOURCE_LABELS[source]
        rows.append(
            {
                "offer_id": a.offer.id,
                "provider_name": a.offer.provider.name,
                "offer_name": a.offer.name or a.offer.gpu_model,
                "gbps": value,
                "transport": transport,
                "source": source,
                "source_zh": zh,
                "source_en": en,
                "shortest_step_s": shortest,
                "shortest_step_text": fmt(shortest) if shortest is not None else None,
            }
        )
    rows.sort(key=lambda row: (row["shortest_step_s"] is None, row["shortest_step_s"] or 0.0))
    return {"sync_share": needs.sync_share, "offers": rows}


def _linked(misses: dict[str, Any] | None, step_url: Callable[[str], str | None] | None) -> Any:
    """The nearest misses with a link to each questionnaire step that would relax them."""
    if misses is None:
        return None
    for item in [*misses["relaxations"], *(m for offer in misses["offers"] for m in offer["misses"])]:
        item["step_url"] = step_url(item["step"]) if step_url else None
    return misses


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def evidence_used(assessed: list[Assessment]) -> dict[str, list[dict[str, Any]]]:
    """The benchmark runs and credential check runs the listed offers' figures and verdicts rest on."""
    runs: dict[int, dict[str, Any]] = {}
    checks: dict[int, dict[str, Any]] = {}
    for a in assessed:
        offer, provider = a.offer, a.offer.provider
        for key, measured in (offer.measurements or {}).items():
            if measured.run_id is None:
                continue
            run = runs.get(measured.run_id)
            if run is None:
                run = runs[measured.run_id] = {
                    "run_id": measured.run_id,
                    "offer_id": offer.id,
                    "offer": offer.label,
                    "origin": measured.origin,
                    "at": _when(measured.at),
                    "link": measured.link,
                    "figures": [],
                }
            run["figures"].append(key)
        if provider.check is not None and provider.id not in checks:
            checks[provider.id] = {
                "check_run_id": provider.check.run_id,
                "provider_id": provider.id,
                "provider": provider.name,
                "at": _when(provider.check.at),
                "link": provider.check.link,
            }
    return {
        "runs": [runs[key] for key in sorted(runs)],
        "check_runs": sorted(checks.values(), key=lambda item: item["provider_id"]),
    }


def workload_summary(needs: Needs) -> dict[str, Any]:
    """Label and guidance of the case's workload kind."""
    scenario = load("scenarios")["kinds"][needs.kind.value]
    return {
        "kind": needs.kind.value,
        "label_zh": scenario["label_zh"],
        "label_en": scenario["label_en"],
        "sensitive_zh": scenario["sensitive_zh"],
        "sensitive_en": scenario["sensitive_en"],
        "guidance_zh": tidy(scenario["guidance_zh"]),
        "guidance_en": tidy(scenario["guidance_en"]),
        "dedicated_bandwidth": needs.dedicated_bandwidth,
    }


def rtt_table(needs: Needs, ranked: Ranking) -> list[dict[str, Any]]:
    """Estimated distance and round trip from the office and each user city to every datacenter city."""
    origins = [needs.office_city, *[city for city in needs.user_cities if city != needs.office_city]]
    rows = []
    for city in ranked.cities():
        row: dict[str, Any] = {"datacenter_city": city.name, "province": city.province, "from": []}
        for origin in origins:
            distance, rtt = rtt_between(origin, city)
            row["from"].append({"city": origin.name, "km": round(distance), "rtt_ms": round(rtt, 1)})
        rows.append(row)
    return sorted(rows, key=lambda row: row["from"][0]["rtt_ms"])


def unverified_notes(ranked: Ranking) -> list[dict[str, str]]:
    """What the advice rests on that nobody has verified yet."""
    providers = ranked.table.providers
    unchecked = [p for p in providers if p.check is None and not p.findings]
    measured = int(ranked.table.measured.sum())
    notes = []
    if unchecked:
        notes.append(
            {
                "code": "credentials.unchecked",
                "message_zh": f"{len(unchecked)} / {len(providers)} 家供应商尚无资质核查记录："
                "许可证等信息只是登记数据",
                "message_en": f"{len(unchecked)} of {len(providers)} providers have no credential check on "
                "record: their licences are registry data only",
            }
        )
    if measured < len(ranked):
        notes.append(
            {
                "code": "measurements.none",
                "message_zh": f"{len(ranked) - measured} / {len(ranked)} 个套餐没有实测数据："
                "带宽、IOPS 等都是服务商声称或按类型估算",
                "message_en": f"{len(ranked) - measured} of {len(ranked)} offers have no measurements: "
                "bandwidth, IOPS and the like are claimed by the provider or typical for the type",
            }
        )
    return notes


def assumption_list() -> list[dict[str, Any]]:
    """The constants the arithmetic used, with their source (domain fact or product assumption)."""
    data = assumptions()
    out = []
    for section in ("network", "latency"):
        for key, item in data[section].items():
            if isinstance(item, dict) and "zh" in item:
                value = item.get("value", f"{fmt(item.get('low'))}-{fmt(item.get('high'))}")
                out.append(
                    {
                        "key": f"{section}.{key}",
                        "value": value,
                        "source": item["source"],
                        "zh": item["zh"],
                        "en": item["en"],
                    }
                )
    storage = data["storage"]
    out.append(
        {
            "key": "storage.typical",
            "value": storage["typical"],
            "source": storage["source"],
            "zh": storage["zh"],
            "en": storage["en"],
        }
    )
    return out


def measure_first_counts(ranked: Iterable[Assessment]) -> dict[str, int]:
    """Per checklist item, how many ranked (not excluded) offers must be measured on it before signing."""
    counts: dict[str, int] = {}
    for a in ranked:
        if a.verify and not a.excluded:
            for key in a.verify:
                item = VERIFY_ITEMS[key]
                counts[item] = counts.get(item, 0) + 1
    return counts


def confirm_counts(ranked: Iterable[Assessment]) -> dict[str, int]:
    """Per unrecorded fact (待确认), how many ranked offers must confirm it with the provider."""
    counts: dict[str, int] = {}
    for a in ranked:
        if a.confirm and not a.excluded:
            for key in a.confirm:
                counts[key] = counts.get(key, 0) + 1
    return counts


def advise(
    answers: Answers,
    offers: list[OfferFacts] | OfferTable,
    *,
    today: date | None = None,
    ticks: list[checklist.Tick] | None = None,
) -> Advice:
    """Compute the needs, rank the offers, and build the case checklist and the FAQ."""
    needs = compute_needs(answers)
    ranked = rank_offers(offers, needs, today=today or clock.business_today())
    entries = checklist.build(
        needs,
        ticks=ticks or [],
        measure_first=ranked.measure_first_counts(),
        to_confirm=ranked.confirm_counts(),
    )
    return Advice(answers, needs, ranked, entries, faq.build(needs, ranked))
