"""The provider verdict, one for every page and report: the latest check run's verdict (rule and benchmark
findings), worded honestly about what was verified besides the registry (official lookup, footer scrape,
trial run or uploaded output).

`verdicts_of` answers a whole page of providers in a constant number of SQL statements; `verdict_of` is
the same for one provider.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, func, select

from app.models import Provider
from app.models.checks import CheckRun
from app.models.evidence import Evidence, Lookup, LookupState
from app.models.trials import BenchRun, RunState

# What can be verified beyond the registry, in the order the labels name it.
SOURCES: dict[str, tuple[str, str]] = {
    "lookup": ("官方查询", "lookup"),
    "footer": ("网站页脚", "footer"),
    "trial": ("试用测试", "trial"),
}
LEVELS: dict[str, tuple[str, str]] = {
    "pass": ("通过", "passes"),
    "needs_review": ("需复核", "needs review"),
    "fail": ("不通过", "fails"),
    "unchecked": ("未核验", "not verified"),  # never checked: the reports' word for "no evidence"
}
FOOTER_HOME = "footer"  # app.services.evidence.FOOTER_HOME (not imported: it pulls in the scraper)


@dataclass(frozen=True)
class ProviderVerdict:
    """A provider's verdict: level, its label in both languages and what was not verified."""

    provider_id: int
    level: str  # pass / needs_review / fail / unchecked
    label_zh: str
    label_en: str
    unverified: tuple[str, ...] = ()
    check_run_id: int | None = None
    outdated: bool = False  # the registry changed after the check run

    def label(self, language: str = "zh") -> str:
        """The label in `language` (zh or en)."""
        return self.label_en if language == "en" else self.label_zh

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (API, report snapshots)."""
        return {
            "provider_id": self.provider_id,
            "level": self.level,
            "label_zh": self.label_zh,
            "label_en": self.label_en,
            "unverified": list(self.unverified),
            "check_run_id": self.check_run_id,
            "outdated": self.outdated,
        }


def labels(level: str, unverified: Iterable[str]) -> tuple[str, str]:
    """The zh and en label of a level, naming the sources not verified (a failure needs no such note)."""
    zh, en = LEVELS[level]
    missing = [name for name in SOURCES if name in set(unverified)]
    if level in ("fail", "unchecked") or not missing:
        return zh, en
    missing_zh = "、".join(SOURCES[name][0] for name in missing)
    missing_en = ", ".join(SOURCES[name][1] for name in missing)
    if len(missing) == len(SOURCES):
        return (
            f"{zh}（仅依据登记数据；{missing_zh}未核实）",
            f"{en} on registry data; {missing_en} not verified",
        )
    return f"{zh}（{missing_zh}未核实）", f"{en}; {missing_en} not verified"


def _latest_runs(session: Session, ids: list[int]) -> dict[int, CheckRun]:
    latest = (
        select(func.max(CheckRun.id))
        .where(col(CheckRun.provider_id).in_(ids))
        .group_by(col(CheckRun.provider_id))
    )
    runs = session.exec(select(CheckRun).where(col(CheckRun.id).in_(latest))).all()
    return {run.provider_id: run for run in runs}


def _verified(session: Session, ids: list[int]) -> dict[str, set[int]]:
    """The providers with a completed lookup, a readable latest footer scrape, a finished run or upload."""
    lookups = session.exec(
        select(Lookup.provider_id)
        .where(
            col(Lookup.provider_id).in_(ids),
            col(Lookup.state).in_((LookupState.completed, LookupState.manual)),  # by hand counts too
        )
        .distinct()
    ).all()
    latest_home = (
        select(func.max(Evidence.id))
        .where(col(Evidence.provider_id).in_(ids), Evidence.purpose == FOOTER_HOME)
        .group_by(col(Evidence.provider_id))
    )
    footers = session.exec(
        select(Evidence.provider_id).where(col(Evidence.id).in_(latest_home), col(Evidence.error).is_(None))
    ).all()
    trials = session.exec(
        select(BenchRun.provider_id)
        .where(col(BenchRun.provider_id).in_(ids), BenchRun.state == RunState.succeeded)
        .distinct()
    ).all()
    return {"lookup": set(lookups), "footer": {i for i in footers if i is not None}, "trial": set(trials)}


def verdicts_of(session: Session, provider_ids: Iterable[int]) -> dict[int, ProviderVerdict]:
    """The verdict of each provider id (five SQL statements whatever their number)."""
    ids = sorted(set(provider_ids))
    if not ids:
        return {}
    versions = dict(
        session.exec(select(Provider.id, Provider.version).where(col(Provider.id).in_(ids))).all()
    )
    runs = _latest_runs(session, ids)
    verified = _verified(session, ids)
    out: dict[int, ProviderVerdict] = {}
    for provider_id in ids:
        run = runs.get(provider_id)
        level = run.verdict if run is not None else "unchecked"
        unverified = tuple(name for name in SOURCES if provider_id not in verified[name])
        zh, en = labels(level, unverified)
        out[provider_id] = ProviderVerdict(
            provider_id=provider_id,
            level=level,
            label_zh=zh,
            label_en=en,
            unverified=unverified,
            check_run_id=run.id if run is not None else None,
            outdated=run is not None and run.provider_version != versions.get(provider_id),
        )
    return out


def verdict_of(session: Session, provider_id: int) -> ProviderVerdict:
    """The verdict of one provider (see verdicts_of)."""
    found = verdicts_of(session, [provider_id]).get(provider_id)
    if found is None:
        zh, en = labels("unchecked", SOURCES)
        return ProviderVerdict(provider_id, "unchecked", zh, en, tuple(SOURCES))
    return found
