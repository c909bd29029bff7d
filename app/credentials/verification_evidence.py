"""The evidence the per-item verification decides on, read for a page of providers at once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from sqlalchemy.orm import defer
from sqlmodel import Session, col, func, select

from app.core.clock import aware
from app.models import Provider
from app.models.checks import StoredFinding
from app.models.credit import CreditRecord
from app.models.evidence import Evidence, Lookup, LookupState
from app.models.latest_runs import latest_run_ids
from app.models.provider import Certification, Filing, Licence, Offer
from app.trials.measurements import Counting, counting_runs

FOOTER_HOME = "footer"  # app.credentials.evidence.FOOTER_HOME (not imported: it pulls in the scraper)
# Findings from evidence (not from registry data alone) that contradict an item.
EVIDENCE_RULES = ("lookup.", "footer.", "credit.")
CONTRADICTING = {"blocker", "warning"}  # findings that contradict the footer


@dataclass
class ItemEvidence:
    """Everything stored about a set of providers that can verify an item, read in a few statements."""

    licences: dict[int, list[Licence]] = field(default_factory=lambda: defaultdict(list))
    filings: dict[int, list[Filing]] = field(default_factory=lambda: defaultdict(list))
    certifications: dict[int, list[Certification]] = field(default_factory=lambda: defaultdict(list))
    offers: dict[int, list[Offer]] = field(default_factory=lambda: defaultdict(list))
    lookups: dict[tuple[int, str], Lookup] = field(default_factory=dict)
    footers: dict[int, Evidence] = field(default_factory=dict)
    findings: dict[int, list[StoredFinding]] = field(default_factory=lambda: defaultdict(list))
    measured: Counting = field(default_factory=dict)
    websites: dict[int, str | None] = field(default_factory=dict)
    usccs: dict[int, str | None] = field(default_factory=dict)
    credit: dict[int, CreditRecord] = field(default_factory=dict)


def _children(session: Session, ids: list[int], found: ItemEvidence) -> None:
    for table, target in (
        (Licence, found.licences),
        (Filing, found.filings),
        (Certification, found.certifications),
        (Offer, found.offers),
    ):
        for row in session.exec(
            select(table).where(col(table.provider_id).in_(ids)).order_by(col(table.id))
        ).all():
            target[row.provider_id].append(row)


def _counting_lookups(session: Session, ids: list[int]) -> dict[tuple[int, str], Lookup]:
    """Per (provider, kind): the latest automatic lookup, else the latest manual one (as the rules read)."""
    rows = session.exec(
        select(Lookup).where(
            col(Lookup.provider_id).in_(ids),
            col(Lookup.state).in_((LookupState.completed, LookupState.manual)),
        )
    ).all()
    chosen: dict[tuple[int, str], Lookup] = {}
    for lookup in sorted(rows, key=_lookup_rank):
        chosen[(lookup.provider_id, str(getattr(lookup.kind, "value", lookup.kind)))] = lookup
    return chosen


def _lookup_rank(lookup: Lookup) -> tuple[bool, datetime, int]:
    """Ascending rank: manual before automatic; automatic ones by completion, then id (the last one wins)."""
    automatic = lookup.state == LookupState.completed
    moment = (
        aware(lookup.completed_at) if automatic and lookup.completed_at else datetime.min.replace(tzinfo=UTC)
    )
    return automatic, moment, lookup.id or 0


def _latest_footers(session: Session, ids: list[int]) -> dict[int, Evidence]:
    latest = (
        select(func.max(Evidence.id))
        .where(col(Evidence.provider_id).in_(ids), Evidence.purpose == FOOTER_HOME)
        .group_by(col(Evidence.provider_id))
    )
    rows = session.exec(
        select(Evidence).where(col(Evidence.id).in_(latest)).options(defer(Evidence.body))  # type: ignore[arg-type]
    ).all()
    return {row.provider_id: row for row in rows if row.provider_id is not None}


def _latest_findings(
    session: Session, ids: list[int], check_run_ids: Collection[int] | None
) -> dict[int, list[StoredFinding]]:
    """The evidence findings that contradict an item, of each provider's latest check run (`check_run_ids`
    when the caller read them already)."""
    latest = latest_run_ids(ids) if check_run_ids is None else sorted(check_run_ids)
    found: dict[int, list[StoredFinding]] = defaultdict(list)
    for row in session.exec(select(StoredFinding).where(col(StoredFinding.check_run_id).in_(latest))).all():
        if row.rule_id.startswith(EVIDENCE_RULES) and str(row.severity) in CONTRADICTING:
            found[row.provider_id].append(row)
    return found


def _latest_credit(session: Session, ids: list[int]) -> dict[int, CreditRecord]:
    """Each provider's latest enterprise credit record (app.credentials.credit: the latest one decides)."""
    rows = session.exec(
        select(CreditRecord)
        .where(col(CreditRecord.provider_id).in_(ids))
        .options(defer(CreditRecord.enforcements))  # type: ignore[arg-type]
        .order_by(col(CreditRecord.looked_at), col(CreditRecord.id))
    ).all()
    return {row.provider_id: row for row in rows}


def read_evidence(
    session: Session, ids: list[int], today: date, check_run_ids: Collection[int] | None
) -> ItemEvidence:
    """The evidence the items of providers `ids` are decided on, read in a fixed number of statements."""
    found = ItemEvidence()
    _children(session, ids, found)
    found.lookups = _counting_lookups(session, ids)
    found.footers = _latest_footers(session, ids)
    found.findings = _latest_findings(session, ids, check_run_ids)
    for provider_id, website, uscc in session.exec(
        select(Provider.id, Provider.website, Provider.uscc).where(col(Provider.id).in_(ids))
    ).all():
        found.websites[provider_id], found.usccs[provider_id] = website, uscc
    found.credit = _latest_credit(session, ids)
    found.measured = counting_runs(session, today=today, providers=ids)
    return found
