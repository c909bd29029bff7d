"""One selection of "latest upload": the findings and the report read the same uploads, in one statement."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session

from app.credentials import facts
from app.models import Provider
from app.models.trials import BenchRun, BenchStep, TrialServer
from app.reports.sources import gather
from app.trials import bench_uploads
from benchmarks.compare import Comparison, Verdict
from tests.cases import test_measured_offers as measured

offers = measured.offers  # the fixture: two offers of one provider, claiming 1 Gbps intranet and local NVMe


def upload(session: Session, offer_id: int, tool: str, output: bytes | str, path: str | None = None) -> int:
    run = bench_uploads.upload_output(session, offer_id=offer_id, tool=tool, output=output, path=path)
    return run.id  # type: ignore[return-value]


def executed_run(session: Session, offer, checks: list[str]) -> int:
    """A successful suite gpuvet ran itself on the offer's trial server, settling `checks`."""
    server = TrialServer(
        provider_id=offer.provider_id,
        offer_id=offer.id,
        name="试用机",
        host="192.0.2.1",
        secret_encrypted="-",
    )
    session.add(server)
    session.flush()
    run = BenchRun(
        trial_server_id=server.id,
        provider_id=offer.provider_id,
        offer_id=offer.id,
        suite="quick",
        state="succeeded",
        comparisons=[
            Comparison(
                check, Verdict.passed, "local_nvme", "local_nvme", None, "", "相符", "as claimed"
            ).to_dict()
            for check in checks
        ],
    )
    session.add(run)
    session.flush()
    # what it measured: the disk class the storage_type comparison rests on (the figure the ranking reads)
    disk = {"metric": "storage_class", "value": "local_nvme", "unit": "", "metadata": {"reason": "nvme"}}
    samples = [disk] if "storage_type" in checks else []
    session.add(BenchStep(run_id=run.id, position=0, step="disk_type", probe="disk", samples=samples))
    session.commit()
    return run.id  # type: ignore[return-value]


def report_run_ids(session: Session, provider: Provider) -> set[int]:
    source = gather(session, provider)["measurements"]
    assert source["status"] == "ok", source
    return {entry["run_id"] for entry in source["data"]["runs"]}


def fact_run_ids(session: Session, provider: Provider) -> set[int]:
    return {entry["run_id"] for entry in facts.gather_facts(session, provider)["benchmarks"]["runs"]}


def test_an_upload_replaced_by_an_executed_run_leaves_the_report_and_the_findings_alike(session, offers):
    first, second = offers
    provider = session.get(Provider, first.provider_id)
    disk = upload(session, first.id, "lsblk", (measured.DATA / "lsblk_virtio.json").read_bytes())
    intranet = upload(session, first.id, "iperf3", measured.iperf3_output(900), path="intranet")
    other_offer = upload(session, second.id, "lsblk", (measured.DATA / "lsblk_virtio.json").read_bytes())
    assert {disk, intranet, other_offer} <= report_run_ids(session, provider) & fact_run_ids(
        session, provider
    )

    executed = executed_run(session, first, ["storage_type"])  # settles the disk type of the first offer only
    in_report, in_facts = report_run_ids(session, provider), fact_run_ids(session, provider)
    assert disk not in in_report and disk not in in_facts
    assert {intranet, other_offer, executed} <= in_report and {intranet, other_offer} <= in_facts
    assert [run.id for run in bench_uploads.latest_uploads(session, provider.id)] == [other_offer, intranet]


def test_a_newer_upload_of_the_same_tool_path_and_checks_replaces_the_older(session, offers):
    first, _second = offers
    older = upload(session, first.id, "iperf3", measured.iperf3_output(900), path="intranet")
    newer = upload(session, first.id, "iperf3", measured.iperf3_output(400), path="intranet")
    public = upload(session, first.id, "iperf3", measured.iperf3_output(90), path="public")
    provider = session.get(Provider, first.provider_id)
    assert [run.id for run in bench_uploads.latest_uploads(session, provider.id)] == [public, newer]
    assert older not in report_run_ids(session, provider) | fact_run_ids(session, provider)


def test_latest_uploads_sends_one_statement_however_many_uploads(session, offers):
    first, second = offers
    for mbit_s in (100, 200, 300):
        upload(session, first.id, "iperf3", measured.iperf3_output(mbit_s), path="intranet")
        upload(session, second.id, "iperf3", measured.iperf3_output(mbit_s), path="public")
    executed_run(session, first, ["bandwidth"])
    statements: list[str] = []
    engine = session.get_bind()
    listener = lambda *args: statements.append(args[2])  # noqa: E731
    sa.event.listen(engine, "before_cursor_execute", listener)
    try:
        found = bench_uploads.latest_uploads(session, first.provider_id)
    finally:
        sa.event.remove(engine, "before_cursor_execute", listener)
    assert len(statements) == 1 and len(found) == 1  # the first offer's intranet upload was measured since
