"""Benchmark outcomes in the credential verdict (issue 10 item 2): recorded outputs, uploaded or executed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.credentials import checks
from app.models import Offer, Provider
from app.models.trials import BenchRun, TrialServer
from app.registry.demo import load_demo
from app.trials import bench_runs, bench_uploads
from benchmarks.compare import compare
from benchmarks.probes import parse

DATA = Path(__file__).resolve().parents[2] / "data" / "bench"
COMPLIANT = "示例星河算力科技有限公司"  # a demo provider that passes on its registry data


@pytest.fixture
def compliant(session: Session) -> Provider:
    """The compliant demo provider (its first offer claims 8 x H800, 200 Gbit/s intranet, local NVMe)."""
    load_demo(session)
    provider = session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()
    assert checks.evaluate(session, provider_id=provider.id).verdict == "pass"
    return provider


def _offer(provider: Provider) -> Offer:
    return next(offer for offer in provider.offers if offer.gpu_model == "H800")


INTRANET = {"path": "intranet", "purpose": "throughput"}  # what the suite runner adds to iperf3 samples


def executed_run(
    session: Session, provider: Provider, offer: Offer, *recordings: tuple[str, str, dict]
) -> BenchRun:
    """A run gpuvet executed on a trial server, compared from recorded (tool, file, metadata) outputs."""
    server = TrialServer(
        provider_id=provider.id,
        offer_id=offer.id,
        name="试用机 H800",
        host="192.0.2.10",
        secret_encrypted="-",
    )
    session.add(server)
    session.flush()
    claims = bench_runs.claims_of(offer)
    samples = [
        sample.with_metadata(**metadata)
        for tool, recording, metadata in recordings
        for sample in parse(tool, (DATA / recording).read_text())
    ]
    run = BenchRun(
        trial_server_id=server.id,
        provider_id=provider.id,
        offer_id=offer.id,
        suite="quick",
        state="succeeded",
        claims=dataclasses.asdict(claims),
        comparisons=[c.to_dict() for c in compare(claims, samples, thresholds=bench_runs.thresholds())],
    )
    session.add(run)
    session.commit()
    return run


def _by_rule(findings, rule_id):
    return [finding for finding in findings if finding["rule_id"] == rule_id]


def test_vet_check_on_an_upload_far_below_the_claimed_bandwidth_no_longer_passes(app, session, compliant):
    offer = _offer(compliant)
    raw = (DATA / "iperf3_single.json").read_bytes()  # 46 Gbit/s against 200 claimed
    run = bench_uploads.upload_output(session, offer_id=offer.id, tool="iperf3", output=raw, path="intranet")
    result = app.test_cli_runner().invoke(args=["vet", "check", str(compliant.id)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["verdict"] == "needs_review"
    (finding,) = _by_rule(out["findings"], "benchmarks.bandwidth_below_claim")
    assert finding["red_flag"] == 12 and finding["severity"] == "warning"  # uploaded: at most a warning
    assert (
        f"uploaded by system (run #{run.id}" in finding["message_en"]
        and "system 上传的 iperf3 输出" in finding["message_zh"]
    )
    assert "iperf3" in finding["how_to_verify_zh"] and "iperf3" in finding["how_to_verify_en"]
    assert finding["evidence"][0]["origin"] == "uploaded" and finding["evidence"][0]["path"] == "intranet"


def test_an_executed_run_far_below_the_claim_is_blocking(session, compliant):
    offer = _offer(compliant)
    run = executed_run(session, compliant, offer, ("iperf3", "iperf3_single.json", INTRANET))
    stored = checks.run_check(session, provider_id=compliant.id)
    assert stored.verdict == "fail"
    findings = [checks.finding_dict(f) for f in checks.run_findings(session, check_run_id=stored.id)]
    (finding,) = _by_rule(findings, "benchmarks.bandwidth_below_claim")
    assert finding["severity"] == "blocker" and finding["subject"] == f"trial_server:{run.trial_server_id}"
    assert "试用服务器“试用机 H800”" in finding["message_zh"]


def test_a_trial_that_found_no_gpu_against_eight_claimed_fails(app, session, compliant):
    executed_run(session, compliant, _offer(compliant), ("inventory", "inventory_no_gpu.txt", {}))
    result = app.test_cli_runner().invoke(args=["vet", "check", str(compliant.id), "--dry-run"])
    out = json.loads(result.output)
    assert out["verdict"] == "fail"
    (finding,) = _by_rule(out["findings"], "benchmarks.gpu_mismatch")
    assert finding["severity"] == "blocker" and finding["evidence"][0]["measured"] == 0
    assert (
        "0 GPUs found, the offer says 8" in finding["message_en"]
        and "nvidia-smi" in finding["how_to_verify_en"]
    )


def test_iops_and_fsync_writes_far_below_the_claim_are_findings(session, compliant):
    offer = _offer(compliant)
    for recording in ("fio_randread.json", "fio_write.json"):  # 133k of 2M IOPS; 438 MiB/s on "NVMe"
        bench_uploads.upload_output(
            session, offer_id=offer.id, tool="fio", output=(DATA / recording).read_bytes()
        )
    evaluation = checks.evaluate(session, provider_id=compliant.id)
    rules = {finding.rule_id: finding for finding in evaluation.findings}
    assert {"benchmarks.iops_below_claim", "benchmarks.write_below_claim"} <= set(rules)
    assert "fsync" in rules["benchmarks.write_below_claim"].message_en
    assert evaluation.verdict != "pass"


def test_a_path_whose_best_test_reaches_the_claim_raises_no_bandwidth_finding(session, compliant):
    offer = _offer(compliant)
    offer.intranet_gbps = 100  # one stream: 46 % (fail); four streams: 51 % (warn)
    session.add(offer)
    session.commit()
    run = executed_run(
        session,
        compliant,
        offer,
        ("iperf3", "iperf3_single.json", INTRANET),
        ("iperf3", "iperf3_parallel.json", INTRANET),
    )
    assert {c["verdict"] for c in run.comparisons if c["check"] == "bandwidth"} == {"fail", "warn"}
    rules = {finding.rule_id for finding in checks.evaluate(session, provider_id=compliant.id).findings}
    assert "benchmarks.bandwidth_below_claim" not in rules
