"""The evidence a procurement decision rests on, read afresh: the chosen providers' verdicts and open
findings, the measurements that count for the chosen offers, the quotes behind it and who else quoted.

`evidence_of` gathers it as JSON-plain data in a stable order, so that its SHA-256 (snapshot_sha256, as
report exports hash their inputs) changes only when the evidence does. A decision keeps the evidence it
was proposed on (and, once approved, the frozen one) in `snapshot["evidence"]`; `changes` names every
difference from the evidence now, in the reader's language.

Only what a re-check leaves alone when nothing changed is kept: a finding's rule, subject, severity and
red flag (not its wording, nor the check run's id), the verdict's level, each counting figure's run, value
and verdict, the quotes' prices, validity and whether they expired.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.cases import quotes as quote_service
from app.core import clock
from app.core.i18n import current_language
from app.core.vocabulary import label
from app.credentials.verdicts import verdicts_of
from app.models import Offer, Provider
from app.models.checks import StoredFinding
from app.models.decisions import Decision
from app.models.latest_runs import latest_run_ids
from app.models.quotes import Quote
from app.reports.assemble import snapshot_sha256
from app.trials.measurements import counting_runs

# DOMAIN.md section 4: a blocker on one of these licence red flags rules a provider out of any decision.
LICENCE_FLAGS = (1, 2, 3, 4, 10, 11)
# The severities of an open finding (verdict fail or needs review); notes (info) need no acceptance.
OPEN_SEVERITIES = ("blocker", "warning")


def open_findings_of(session: Session, provider_ids: Iterable[int]) -> dict[int, list[StoredFinding]]:
    """Each provider's open findings (blocker or warning) of its latest check run, most severe first."""
    ids = sorted(set(provider_ids))
    found: dict[int, list[StoredFinding]] = {provider_id: [] for provider_id in ids}
    if not ids:
        return found
    statement = (
        select(StoredFinding)
        .where(
            col(StoredFinding.check_run_id).in_(latest_run_ids(ids)),
            col(StoredFinding.severity).in_(OPEN_SEVERITIES),
        )
        .order_by(col(StoredFinding.provider_id), col(StoredFinding.position), col(StoredFinding.id))
    )
    for finding in session.exec(statement):
        found[finding.provider_id].append(finding)
    return found


def open_findings(session: Session, provider_id: int) -> list[StoredFinding]:
    """The provider's open findings (blocker or warning) of its latest check run, most severe first."""
    return open_findings_of(session, [provider_id])[provider_id]


def is_licence_block(finding: StoredFinding) -> bool:
    """Whether the finding is a blocker on a licence red flag (the provider cannot be chosen)."""
    return finding.severity == "blocker" and finding.red_flag in LICENCE_FLAGS


def licence_blocks(session: Session, provider_id: int) -> list[StoredFinding]:
    """The provider's blockers on licence red flags 1-4, 10, 11 (none: it may be chosen)."""
    return [finding for finding in open_findings(session, provider_id) if is_licence_block(finding)]


def joined(sentences: Iterable[str]) -> str:
    """Sentences joined as the reader's language joins them."""
    return ("；" if current_language() == "zh" else "; ").join(sentences)


def finding_key(rule_id: str, subject: str) -> str:
    """A finding named as re-checks keep it: its rule and subject."""
    return f"{rule_id}:{subject}" if subject else rule_id


# What the evidence keeps of a finding: what a re-check that found the same keeps the same.
FINDING_FIELDS = ("rule_id", "subject", "severity", "red_flag")


def _finding(finding: StoredFinding) -> dict[str, Any]:
    return {name: getattr(finding, name) for name in FINDING_FIELDS}


def _providers(session: Session, provider_ids: list[int]) -> list[dict[str, Any]]:
    names = dict(
        session.exec(select(Provider.id, Provider.legal_name).where(col(Provider.id).in_(provider_ids))).all()
    )
    verdicts = verdicts_of(session, provider_ids)
    findings = open_findings_of(session, provider_ids)
    return [
        {
            "id": provider_id,
            "name": names.get(provider_id),
            "verdict": verdicts[provider_id].level if provider_id in verdicts else None,
            "unverified": list(verdicts[provider_id].unverified) if provider_id in verdicts else [],
            "findings": sorted(
                (_finding(finding) for finding in findings[provider_id]),
                key=lambda item: (item["rule_id"], item["subject"]),
            ),
        }
        for provider_id in provider_ids
    ]


def _offers(session: Session, offer_ids: list[int], provider_ids: list[int], today: date) -> list[dict]:
    """Each chosen offer and, per figure, the run whose figure counts (trials.measurements)."""
    rows = session.exec(select(Offer.id, Offer.provider_id).where(col(Offer.id).in_(offer_ids))).all()
    existing = dict(rows)
    counting = counting_runs(session, today=today, providers=provider_ids) if provider_ids else {}
    return [
        {
            "id": offer_id,
            "provider_id": existing.get(offer_id),
            "runs": [
                {
                    "figure": figure,
                    "run_id": counted.run_id,
                    "value": counted.value,
                    "unit": counted.unit,
                    "verdict": counted.verdict,
                }
                for figure, counted in sorted(counting.get(offer_id, {}).items())
            ],
        }
        for offer_id in offer_ids
    ]


def _quotes(session: Session, quote_ids: list[int], today: date) -> list[dict[str, Any]]:
    rows = {quote.id: quote for quote in session.exec(select(Quote).where(col(Quote.id).in_(quote_ids)))}
    return [
        {
            "id": quote_id,
            "provider_id": quote.provider_id,
            "offer_id": quote.offer_id,
            "price_gpu_hour_cny": quote.price_gpu_hour_cny,
            "price_month_cny": quote.price_month_cny,
            "valid_until": quote.valid_until.isoformat(),
            "expired": quote_service.is_expired(quote, today),
        }
        if (quote := rows.get(quote_id)) is not None
        else {"id": quote_id, "missing": True}
        for quote_id in quote_ids
    ]


def valid_quotes(session: Session, case_id: int, today: date) -> list[Quote]:
    """The case's quotes still valid on `today`."""
    statement = select(Quote).where(Quote.case_id == case_id, col(Quote.valid_until) >= today)
    return list(session.exec(statement.order_by(col(Quote.id))))


def evidence_of(
    session: Session,
    *,
    case_id: int,
    provider_ids: Iterable[int],
    offer_ids: Iterable[int],
    quote_ids: Iterable[int],
    today: date | None = None,
) -> dict[str, Any]:
    """The evidence of a decision on these providers, offers and quotes, as JSON-plain data."""
    today = today or clock.business_today()
    providers = sorted(set(provider_ids))
    return {
        "providers": _providers(session, providers),
        "offers": _offers(session, sorted(set(offer_ids)), providers, today),
        "quotes": _quotes(session, sorted(set(quote_ids)), today),
        "compared_providers": sorted({quote.provider_id for quote in valid_quotes(session, case_id, today)}),
    }


def decision_evidence(session: Session, decision: Decision, today: date | None = None) -> dict[str, Any]:
    """The evidence of a stored decision, read now."""
    return evidence_of(
        session,
        case_id=decision.case_id,
        provider_ids=decision.provider_ids,
        offer_ids=decision.offer_ids,
        quote_ids=decision.quote_ids,
        today=today,
    )


def evidence_sha256(evidence: dict[str, Any]) -> str:
    """The SHA-256 of the evidence's canonical JSON (app.reports.assemble)."""
    return snapshot_sha256(evidence)


# --- what changed ------------------------------------------------------------------------------------


def _by_id(items: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {item["id"]: item for item in items}


def _severity(value: str | None) -> str:
    return label(value, current_language(), kind="severity") if value else "-"


def _verdict(value: str | None) -> str:
    return label(value, current_language(), kind="verdict_level") if value else "-"


def _provider_changes(before: dict[str, Any], now: dict[str, Any] | None) -> list[str]:
    name = before.get("name") or before["id"]
    if now is None or now.get("name") is None:
        return [_("供应商 %(name)s 已不在登记中", name=name)]
    out = []
    if before["verdict"] != now["verdict"]:
        out.append(
            _(
                "供应商 %(name)s 的结论由“%(old)s”变为“%(new)s”",
                name=name,
                old=_verdict(before["verdict"]),
                new=_verdict(now["verdict"]),
            )
        )
    old = {finding_key(item["rule_id"], item["subject"]): item for item in before["findings"]}
    new = {finding_key(item["rule_id"], item["subject"]): item for item in now["findings"]}
    for key in sorted(new.keys() - old.keys()):
        out.append(
            _(
                "供应商 %(name)s 新增未解决的发现 %(finding)s（%(severity)s）",
                name=name,
                finding=key,
                severity=_severity(new[key]["severity"]),
            )
        )
    for key in sorted(old.keys() - new.keys()):
        out.append(_("供应商 %(name)s 的发现 %(finding)s 已解决", name=name, finding=key))
    for key in sorted(old.keys() & new.keys()):
        if old[key]["severity"] != new[key]["severity"] or old[key]["red_flag"] != new[key]["red_flag"]:
            out.append(
                _(
                    "供应商 %(name)s 的发现 %(finding)s 由“%(old)s”变为“%(new)s”",
                    name=name,
                    finding=key,
                    old=_severity(old[key]["severity"]),
                    new=_severity(new[key]["severity"]),
                )
            )
    if before["name"] != now["name"]:
        out.append(_("供应商名称由 %(old)s 改为 %(new)s", old=before["name"], new=now["name"]))
    return out


def _offer_changes(before: dict[str, Any], now: dict[str, Any] | None) -> list[str]:
    if now is None or now.get("provider_id") is None:
        return [_("套餐 %(id)s 已不在登记中", id=before["id"])]
    old = {run["figure"]: run for run in before["runs"]}
    new = {run["figure"]: run for run in now["runs"]}
    out = []
    for figure in sorted(old.keys() | new.keys()):
        if old.get(figure) != new.get(figure):
            shown = label(figure, current_language(), kind="figure")
            run = new[figure]["run_id"] if figure in new else "-"
            out.append(
                _("套餐 %(id)s 的“%(figure)s”现由测试 %(run)s 计", id=before["id"], figure=shown, run=run)
            )
    return out


def _quote_changes(before: dict[str, Any], now: dict[str, Any] | None) -> list[str]:
    if now is None or now.get("missing"):
        return [_("报价单 %(id)s 已不存在", id=before["id"])]
    if now["expired"] and not before.get("expired"):
        return [_("报价单 %(id)s 已于 %(day)s 过期", id=before["id"], day=now["valid_until"])]
    if now != before:
        return [_("报价单 %(id)s 已变更", id=before["id"])]
    return []


def changes_between(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two evidence dicts (evidence_of), one sentence each in the reader's language."""
    out: list[str] = []
    providers_now = _by_id(now.get("providers", []))
    for item in before.get("providers", []):
        out.extend(_provider_changes(item, providers_now.get(item["id"])))
    offers_now = _by_id(now.get("offers", []))
    for item in before.get("offers", []):
        out.extend(_offer_changes(item, offers_now.get(item["id"])))
    quotes_now = _by_id(now.get("quotes", []))
    for item in before.get("quotes", []):
        out.extend(_quote_changes(item, quotes_now.get(item["id"])))
    old, new = before.get("compared_providers", []), now.get("compared_providers", [])
    if old != new:
        out.append(
            _(
                "有效报价的供应商由 %(old)s 家变为 %(new)s 家",
                old=len(old),
                new=len(new),
            )
            if len(old) != len(new)
            else _("有效报价的供应商已变化")
        )
    return out


def changes_from(decision: Decision, now: dict[str, Any]) -> list[str]:
    """What differs between the evidence the decision keeps and `now` (decision_evidence)."""
    before = (decision.snapshot or {}).get("evidence")
    if before is None or evidence_sha256(now) == evidence_sha256(before):
        return []
    return changes_between(before, now) or [_("决定所依据的证据已变化")]


def changes(session: Session, decision: Decision, today: date | None = None) -> list[str]:
    """What changed in the decision's evidence since it was proposed (or, once approved, since approval)."""
    return changes_from(decision, decision_evidence(session, decision, today))
