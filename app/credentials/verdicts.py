"""The provider verdict, one for every page and report: the latest check run's verdict (rule and benchmark
findings), worded honestly about what was verified besides the registry: it names each licence, filing,
certification, the footer and each offer figure no current evidence vouches for (verification.py).

`verdicts_of` answers a whole page of providers in a constant number of SQL statements; `verdict_of` is
the same for one provider.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from app.core.vocabulary import LABELS
from app.credentials.verification import ItemVerification, verifications_of
from app.models import Provider
from app.models.checks import CheckRun
from app.models.latest_runs import latest_run_ids

# What can be verified beyond the registry, in the order the labels name it.
SOURCES: dict[str, tuple[str, str]] = {
    "lookup": ("官方查询", "lookup"),
    "footer": ("网站页脚", "footer"),
    "trial": ("试用测试", "trial"),
}
LEVELS = LABELS["verdict_level"]  # level -> (zh, en), worst first
MAX_LISTED = 4  # unverified items a label names before "and N more"
# The order a label names unverified items in (stable within a kind).
LABEL_ORDER = {
    kind: rank
    for rank, kind in enumerate(
        ("licence", "icp_filing", "icp_licence", "footer", "psb_filing", "credit", "certification", "offer")
    )
}


@dataclass(frozen=True)
class ProviderVerdict:
    """A provider's verdict: level, its label in both languages and what was not verified."""

    provider_id: int
    level: str  # pass / needs_review / fail / unchecked
    label_zh: str
    label_en: str
    unverified: tuple[str, ...] = ()  # the SOURCES with an item still unverified
    check_run_id: int | None = None
    outdated: bool = False  # the registry changed after the check run
    items: tuple[ItemVerification, ...] = ()  # every item's verification (app.credentials.verification)

    def label(self, language: str = "zh") -> str:
        """The label in `language` (zh or en)."""
        return self.label_en if language == "en" else self.label_zh

    @property
    def unverified_items(self) -> list[ItemVerification]:
        """The items nothing current vouches for (never verified, or verified too long ago)."""
        return [item for item in self.items if item.needs_verifying]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (API, report snapshots)."""
        return {
            "provider_id": self.provider_id,
            "level": self.level,
            "label_zh": self.label_zh,
            "label_en": self.label_en,
            "unverified": list(self.unverified),
            "unverified_items": [item.to_dict() for item in self.unverified_items],
            "check_run_id": self.check_run_id,
            "outdated": self.outdated,
        }


def source_of(item: ItemVerification) -> str:
    """Which of SOURCES an item belongs to: numbers and certificates to lookup, offers to trial."""
    return {"footer": "footer", "offer": "trial"}.get(item.kind, "lookup")


def _missing(items: list[ItemVerification], language: str) -> str:
    """'许可证 京B2-20202418 未经官方查询；网站页脚 未核查' with at most MAX_LISTED items named, the
    credentials a buyer checks first first (LABEL_ORDER)."""
    items = sorted(items, key=lambda item: LABEL_ORDER.get(item.kind, len(LABEL_ORDER)))
    named = [f"{item.title(language)} {item.reason(language)}" for item in items[:MAX_LISTED]]
    rest = len(items) - len(named)
    if rest:
        named.append(f"等 {rest} 项" if language == "zh" else f"and {rest} more")
    return ("；" if language == "zh" else "; ").join(named)


def labels(level: str, items: Iterable[ItemVerification]) -> tuple[str, str]:
    """The zh and en label of a level, naming each item not verified (a failure needs no such note)."""
    zh, en = LEVELS[level]
    items = list(items)
    missing = [item for item in items if item.needs_verifying]
    if level in ("fail", "unchecked") or not missing:
        return zh, en
    if not any(item.is_current for item in items):
        return (
            f"{zh}（仅依据登记数据；未核实：{_missing(missing, 'zh')}）",
            f"{en} on registry data; not verified: {_missing(missing, 'en')}",
        )
    return f"{zh}（未核实：{_missing(missing, 'zh')}）", f"{en}; not verified: {_missing(missing, 'en')}"


def _latest_runs(session: Session, ids: list[int]) -> dict[int, CheckRun]:
    """Each provider's latest check run (its pointer, app.models.latest_runs), in one statement."""
    runs = session.exec(select(CheckRun).where(col(CheckRun.id).in_(latest_run_ids(ids)))).all()
    return {run.provider_id: run for run in runs}


def verdicts_of(session: Session, provider_ids: Iterable[int]) -> dict[int, ProviderVerdict]:
    """The verdict of each provider id (a constant number of SQL statements whatever their number)."""
    ids = sorted(set(provider_ids))
    if not ids:
        return {}
    versions = dict(
        session.exec(select(Provider.id, Provider.version).where(col(Provider.id).in_(ids))).all()
    )
    runs = _latest_runs(session, ids)
    verified = verifications_of(session, ids, check_run_ids=[run.id for run in runs.values()])
    out: dict[int, ProviderVerdict] = {}
    for provider_id in ids:
        run = runs.get(provider_id)
        level = run.verdict if run is not None else "unchecked"
        items = tuple(verified.get(provider_id, ()))
        missing = {source_of(item) for item in items if item.needs_verifying}
        zh, en = labels(level, items)
        out[provider_id] = ProviderVerdict(
            provider_id=provider_id,
            level=level,
            label_zh=zh,
            label_en=en,
            unverified=tuple(name for name in SOURCES if name in missing),
            check_run_id=run.id if run is not None else None,
            outdated=run is not None and run.provider_version != versions.get(provider_id),
            items=items,
        )
    return out


def verdict_of(session: Session, provider_id: int) -> ProviderVerdict:
    """The verdict of one provider (see verdicts_of)."""
    found = verdicts_of(session, [provider_id]).get(provider_id)
    if found is None:
        zh, en = labels("unchecked", ())
        return ProviderVerdict(provider_id, "unchecked", zh, en, tuple(SOURCES))
    return found
