"""One measurement that counts (app.trials.measurements): red flags, ranking, report and per-item verification
cite the same run for the same offer and figure, whatever mix of executed runs and uploads there is."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlmodel import Session, select

from app.cases import registry_facts
from app.credentials import facts
from app.credentials.checks import run_check
from app.credentials.verification import verification_of
from app.models import Offer, Provider
from app.models.checks import StoredFinding
from app.models.trials import BenchRun
from app.reports.sources import gather
from app.trials import bench_uploads
from app.trials.measurements import counting_runs, figure_of
from tests.cases import test_measured_offers as measured

offers = measured.offers  # the fixture: two offers of one provider, claiming 1 Gbps intranet and local NVMe
STORAGE, INTRANET = "storage_type", "intranet_gbps"
VIRTIO = (measured.DATA / "lsblk_virtio.json").read_bytes()  # a virtual disk: not the local NVMe claimed


def executed(session: Session, offer: Offer, days_ago: int, intranet_mbit_s: float = 200) -> int:
    """A quick suite gpuvet ran on the offer `days_ago` days ago: a virtio disk, slow intranet (both fail)."""
    finished = datetime.now(UTC) - timedelta(days=days_ago)
    return measured.store_run(session, offer, measured.quick_steps(intranet_mbit_s), finished).id  # type: ignore[return-value]


def uploaded(session: Session, offer: Offer) -> int:
    """An lsblk output an analyst uploads now: a virtio disk (fails the local NVMe claim)."""
    return bench_uploads.upload_output(session, offer_id=offer.id, tool="lsblk", output=VIRTIO).id  # type: ignore[return-value]


def citations(session: Session, offer: Offer, figure: str) -> dict[str, set[int]]:
    """The runs each reader rests the offer's `figure` on."""
    today = date.today()
    provider_id = offer.provider_id
    check = run_check(session, provider_id=provider_id)
    findings = session.exec(select(StoredFinding).where(StoredFinding.check_run_id == check.id)).all()
    provider = session.get(Provider, provider_id)
    fact_runs = facts.gather_facts(session, provider)
    report = gather(session, provider)["measurements"]["data"]
    items = {item.subject: item for item in verification_of(session, provider_id)}
    ranked = {fact.id: fact for fact in registry_facts.offer_facts(session, today=today)}
    return {
        "counting": {counting_runs(session, today=today)[offer.id][figure].run_id},
        "ranking": {ranked[offer.id].measurements[figure].run_id},
        "red flags": {
            evidence["run_id"]
            for finding in findings
            for evidence in finding.evidence
            if evidence.get("kind") == "benchmark"
            and evidence.get("offer_id") == offer.id
            and _figure(evidence) == figure
        },
        "fact": {
            run["run_id"]
            for run in fact_runs["benchmarks"]["runs"]
            if run["offer_id"] == offer.id
            and any(figure_of(c, offer_claims(offer)) == figure for c in run["comparisons"])
        },
        "report": {
            claim["run_id"]
            for claim in report["claims"]
            if claim["offer_id"] == offer.id and claim["metric"] == figure  # named as the figure
        },
        "verification": {items[f"offer:{offer.id}:{figure}"].run_id},
    }


def offer_claims(offer: Offer) -> dict[str, Any]:
    return {"intranet_gbps": offer.intranet_gbps, "public_mbps": offer.public_mbps}


def _figure(evidence: dict[str, Any]) -> str | None:
    comparison = {"check": evidence["check"], "claimed": evidence.get("claimed"), "evidence": evidence}
    return figure_of(comparison, {"intranet_gbps": 1, "public_mbps": 100})


def assert_all_cite(found: dict[str, set[int]], run_id: int) -> None:
    assert found == {reader: {run_id} for reader in found}


def test_a_fresh_upload_counts_over_a_stale_executed_run_for_what_it_measured_only(session, offers):
    first, _second = offers
    stale = executed(session, first, days_ago=200)
    upload = uploaded(session, first)

    assert_all_cite(citations(session, first, STORAGE), upload)  # fresh before stale
    assert_all_cite(citations(session, first, INTRANET), stale)  # the upload measured no bandwidth


def test_a_fresh_executed_run_counts_over_a_newer_upload(session, offers):
    first, _second = offers
    run = executed(session, first, days_ago=2)
    uploaded(session, first)

    assert_all_cite(citations(session, first, STORAGE), run)  # executed before uploaded
    assert_all_cite(citations(session, first, INTRANET), run)


def test_of_two_trial_servers_the_newer_run_counts(session, offers):
    first, _second = offers
    executed(session, first, days_ago=20, intranet_mbit_s=300)
    newer = executed(session, first, days_ago=5, intranet_mbit_s=400)

    assert_all_cite(citations(session, first, STORAGE), newer)
    assert_all_cite(citations(session, first, INTRANET), newer)


def test_a_newer_upload_counts_over_an_older_one(session, offers):
    first, _second = offers
    uploaded(session, first)
    newer = uploaded(session, first)

    assert_all_cite(citations(session, first, STORAGE), newer)


def test_an_older_run_of_a_trial_server_counts_for_what_its_latest_run_did_not_measure(session, offers):
    first, _second = offers
    older = measured.store_run(
        session, first, measured.quick_steps(200), datetime.now(UTC) - timedelta(days=9)
    )
    disk_only = {"disk_type": measured.quick_steps(200)["disk_type"]}
    latest = measured.store_run(session, first, disk_only, datetime.now(UTC) - timedelta(days=1))
    latest.trial_server_id = (
        older.trial_server_id
    )  # both on one trial server: the latest measured the disk only
    session.commit()

    assert_all_cite(citations(session, first, INTRANET), older.id)  # type: ignore[arg-type]
    assert_all_cite(citations(session, first, STORAGE), latest.id)  # type: ignore[arg-type]


def marked_runs(html: str) -> dict[int, str]:
    """Run id -> the 'counts for' badge of its row."""
    return {int(run): text for run, text in re.findall(r'data-counts="(\d+)">([^<]*)<', html)}


def test_the_trials_tab_and_the_server_page_mark_what_each_run_counts_for(session, offers, login):
    first, _second = offers
    stale = executed(session, first, days_ago=200)
    upload = uploaded(session, first)
    server_id = session.get(BenchRun, stale).trial_server_id  # type: ignore[union-attr]
    client = login("viewer")

    tab = marked_runs(client.get(f"/providers/{first.provider_id}/trials").get_data(as_text=True))
    assert tab[upload] == "计入：存储类型"  # the fresh upload, over the stale run's disk
    assert "内网带宽" in tab[stale] and "存储类型" not in tab[stale]
    server = marked_runs(client.get(f"/trial-servers/{server_id}").get_data(as_text=True))
    assert server == {stale: tab[stale]}

    client.get("/lang/en")
    english = marked_runs(client.get(f"/providers/{first.provider_id}/trials").get_data(as_text=True))
    assert english[upload] == "counts for: storage type"
