"""DCGM diagnostics (`dcgmi diag -r 1 -j`): the parser on recorded documents of DCGM 2.x to 4.x, the findings,
the probe over the stand-in tools, and an upload through the API."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchmarks.compare import Claims, Verdict, compare
from benchmarks.probes import parse
from benchmarks.probes.dcgm import NOT_INSTALLED
from benchmarks.sample import ParseError, ToolError
from tests.bench_support.gpu import install_standin
from tests.benchmarks.conftest import DATA, short_params
from tests.benchmarks.test_parsers import one

DCGM = DATA / "dcgm"
GB10_FAIL = "diag_r1_4.2.3_gb10_persistence_fail.json"  # real: DCGM 4.2.3, software fails (persistence mode)
NVVS_PASS = "nvvs_3.1.0_8gpu_pass.json"  # real: DCGM 3.1.0 nvvs, everything passes
PCIE_FAIL = "diag_r2_3.3.5_4xa100_pcie_fail.json"  # 3.x layout: PCIe fails on GPU 2, Diagnostic skipped
PCIE_WARN = "diag_r2_4.2.3_8xh100_pcie_warn.json"  # 4.x layout: pcie warns on GPU 5, memory skipped on GPU 3


def diag(name: str) -> list:
    return parse("dcgmi", (DCGM / name).read_text())


def findings(samples: list) -> list:
    return [c for c in compare(Claims(), samples) if c.check == "gpu_health"]


def statuses(samples: list) -> dict[tuple[str, str], str]:
    return {(s.metadata["test"], s.metadata["entity"]): s.value for s in samples if s.metric == "dcgm_diag"}


# ---------------------------------------------------------------- parser
def test_the_real_dcgm_4_document_fails_its_software_check_on_persistence_mode():
    samples = diag(GB10_FAIL)
    assert statuses(samples) == {("software", "GPU 0"): "fail"}
    result = samples[0]
    assert result.metadata["gpu_index"] == 0 and result.metadata["deployment"] is True
    assert "Persistence mode for GPU 0 is disabled" in result.metadata["warnings"][0]
    facts = one(samples, "dcgm_diag_available")
    assert facts == 1.0
    available = next(s for s in samples if s.metric == "dcgm_diag_available")
    assert (available.metadata["dcgm_version"], available.metadata["driver_version"]) == (
        "4.2.3",
        "580.82.09",
    )


def test_the_real_nvvs_3_1_document_with_null_entries_and_a_gpu_list_passes():
    samples = diag(
        NVVS_PASS
    )  # starts with a warning line, has nulls in its tests arrays, gpu_ids "0,1,...,7"
    results = [s for s in samples if s.metric == "dcgm_diag"]
    assert len(results) == 9 + 8 and {s.value for s in results} == {"pass"}
    denylist = next(s for s in results if s.metadata["test"] == "Denylist")
    assert denylist.metadata["gpus"] == list(range(8)) and "gpu_index" not in denylist.metadata
    assert [s.metadata["gpu_index"] for s in results if s.metadata["test"] == "software"] == list(range(8))


def test_the_3_x_layout_one_sample_per_test_and_gpu():
    samples = diag(PCIE_FAIL)
    found = statuses(samples)
    assert found[("PCIe", "GPU 2")] == "fail" and found[("PCIe", "GPU 1")] == "pass"
    assert found[("Persistence Mode", "")] == "pass"  # deployment checks name no GPU
    assert {found[("Diagnostic", f"GPU {gpu}")] for gpu in range(4)} == {"skip"}
    pcie = next(s for s in samples if s.metadata.get("test") == "PCIe" and s.metadata.get("gpu_index") == 2)
    assert pcie.metadata["warnings"] == [
        "Detected 245 PCIe replays for GPU 2 which is above the threshold 8. "
        "Check the PCIe slot, riser and cable of this card."
    ]
    assert pcie.metadata["info"] == ["GPU 2 GPU to Host bandwidth: 6.93 GB/s"]


def test_the_4_x_layout_reads_entities_warnings_and_skips():
    found = statuses(diag(PCIE_WARN))
    assert found[("pcie", "GPU 5")] == "warn" and found[("memory", "GPU 3")] == "skip"
    assert sum(1 for status in found.values() if status == "pass") == 8 + 7 + 7


def test_the_2_x_layout_with_a_warning_as_text():
    document = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "GPU Memory",
                            "results": [{"gpu_ids": "1", "status": "Fail", "warnings": "DBE"}],
                        }
                    ],
                }
            ],
            "version": "2.4.7",
        }
    }
    samples = parse("dcgmi", json.dumps(document))
    assert statuses(samples) == {("GPU Memory", "GPU 1"): "fail"}
    assert samples[0].metadata["warnings"] == ["DBE"] and samples[0].metadata["deployment"] is False


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Successfully ran diagnostic for group.\n", "没有 JSON 对象"),
        ('{"iterations": []}', "“DCGM Diagnostic” / “DCGM GPU Diagnostic”"),
        ('{"DCGM Diagnostic": {"version": "4.2.3"}}', "DCGM Diagnostic.test_categories"),
        ('{"DCGM Diagnostic": {"test_categories": []}}', "没有任何测试结果"),
        (
            json.dumps(
                {"DCGM Diagnostic": {"test_categories": [{"tests": [{"name": "pcie", "results": [{}]}]}]}}
            ),
            "pcie 的状态 None 不认识",
        ),
        ('{"DCGM Diagnostic": {"test_categories": [{"category": "Deployment"}]}}', "tests"),
    ],
)
def test_unreadable_documents_get_a_named_error_listing_the_accepted_variants(text: str, names: str):
    with pytest.raises(ParseError) as caught:
        parse("dcgmi", text)
    assert names in str(caught.value.reason)
    assert "可读取：" in str(caught.value.reason) and "DCGM GPU Diagnostic" in str(caught.value.reason)


def test_dcgmi_that_could_not_run_is_an_error_when_pasted_and_a_note_from_the_probe():
    runtime = json.dumps(
        {"DCGM Diagnostic": {"version": "4.2.3", "runtime_error": "Error: Unable to complete"}}
    )
    text = "Error: Unable to start an embedded host engine. Host engine connection invalid/disconnected."
    for output in (runtime, text):
        with pytest.raises(ToolError):
            parse("dcgmi", output)
        (note,) = parse("dcgmi", output, optional=True)
        assert (note.metric, note.value, note.metadata["installed"]) == ("dcgm_diag_available", 0.0, True)
        (finding,) = findings([note])
        assert finding.verdict is Verdict.info and "nv-hostengine" in finding.reason_en
    assert (
        "Unable to start an embedded host engine"
        in findings(parse("dcgmi", text, optional=True))[0].reason_zh
    )


def test_an_output_cut_at_the_timeout_is_a_note_from_the_probe_and_an_error_when_pasted():
    cut = (DCGM / PCIE_WARN).read_text()[:700]
    with pytest.raises(ParseError):
        parse("dcgmi", cut)
    (note,) = parse("dcgmi", cut, optional=True)
    assert (note.value, note.metadata["installed"]) == (0.0, True) and "JSON" in note.metadata["error"]
    (finding,) = findings([note])
    assert finding.verdict is Verdict.info and "gave no result" in finding.reason_en


# ---------------------------------------------------------------- findings
def test_a_failed_deployment_check_asks_for_the_setup_to_be_fixed():
    (finding,) = findings(diag(GB10_FAIL))
    assert (finding.verdict, finding.subject) == (Verdict.failed, "dcgm:software")
    assert "fix the driver and system setup" in finding.reason_en and "Persistence mode" in finding.reason_en
    assert "修好驱动和系统设置" in finding.reason_zh


def test_a_failed_hardware_test_asks_for_the_card_or_node_to_be_replaced_and_skips_are_noted():
    found = {c.subject: c for c in findings(diag(PCIE_FAIL))}
    assert found["dcgm:PCIe"].verdict is Verdict.failed
    assert "failed on GPU 2" in found["dcgm:PCIe"].reason_en
    assert "replace the card or the node before signing" in found["dcgm:PCIe"].reason_en
    assert "更换这块卡或整台机器" in found["dcgm:PCIe"].reason_zh
    assert found["dcgm"].verdict is Verdict.info and "skipped Diagnostic" in found["dcgm"].reason_en
    assert not any(c.verdict is Verdict.passed for c in found.values())


def test_a_warning_warns_with_the_gpu_and_dcgms_words():
    found = {c.subject: c for c in findings(diag(PCIE_WARN))}
    assert found["dcgm:pcie"].verdict is Verdict.warn
    assert "warned on GPU 5: GPU 5: PCIe link generation is Gen 4" in found["dcgm:pcie"].reason_en
    assert "给出警告（GPU 5）" in found["dcgm:pcie"].reason_zh
    assert "memory" in found["dcgm"].reason_en and found["dcgm"].verdict is Verdict.info


def test_passes_and_skips_pass_with_the_skips_named():
    skipped = diag(NVVS_PASS) + [
        s for s in diag(PCIE_WARN) if s.metric == "dcgm_diag" and s.metadata["test"] == "memory"
    ]
    (finding,) = findings(skipped)
    assert finding.verdict is Verdict.passed and finding.subject == "dcgm"
    assert "DCGM 3.1.0" in finding.reason_en and "skipped: memory" in finding.reason_en
    assert "跳过：memory" in finding.reason_zh


def test_dcgm_failures_keep_the_whole_health_check_from_passing():
    healthy = (DATA / "nvidia-smi" / "health_8xh800.csv").read_text().splitlines()[:3]
    base = parse("nvidia-smi", "\n".join(healthy)) + parse("xid", "")
    assert [c.verdict for c in findings(base)] == [Verdict.passed]
    verdicts = [c.verdict for c in findings(base + diag(PCIE_FAIL))]
    assert Verdict.failed in verdicts and Verdict.passed not in verdicts


def test_dcgmi_not_installed_is_an_info_note_not_a_failure():
    samples = parse("dcgmi", f"{NOT_INSTALLED}\n")
    assert [(s.metric, s.value, s.metadata["installed"]) for s in samples] == [
        ("dcgm_diag_available", 0.0, False)
    ]
    (finding,) = findings(samples)
    assert finding.verdict is Verdict.info and "dcgmi diag -r 1 -j" in finding.reason_en


# ---------------------------------------------------------------- the probe over stand-in tools
def _stand_in_dcgmi(bin_dir: Path, recording: str) -> None:
    """A `dcgmi` printing a recorded document for `diag -r 1 -j`, exiting 226 as dcgmi does on failures."""
    script = bin_dir / "dcgmi"
    script.write_text(
        "#!/bin/sh\n"
        f'[ "$*" = "diag -r 1 -j" ] || {{ echo "stand-in dcgmi: unsupported arguments: $*" >&2; exit 2; }}\n'
        f"cat '{DCGM / recording}'\nexit 226\n"
    )
    script.chmod(0o755)


def _health_step(tmp_path: Path, monkeypatch, *, dcgmi: str | None):
    from benchmarks.ssh import LocalRunner
    from benchmarks.suites import Step, run_suite

    bin_dir, tools = tmp_path / "bin", tmp_path / "tools"
    install_standin(bin_dir)
    if dcgmi:
        _stand_in_dcgmi(bin_dir, dcgmi)
    tools.mkdir()  # only the programs the probe and the stand-ins use: a real dcgmi here stays out of sight
    for name in ("sh", "timeout", "dmesg", "journalctl", "cat", "head", "tail", "sleep"):
        if found := shutil.which(name):
            (tools / name).symlink_to(found)
    monkeypatch.setenv("PATH", f"{bin_dir}:{tools}")
    storage = tmp_path / "storage"
    storage.mkdir()
    result = run_suite(LocalRunner(), [Step("gpu_health", "gpu_health")], short_params(storage))
    return result.step("gpu_health")


def test_the_probe_runs_dcgmi_diag_where_it_is_installed(tmp_path, monkeypatch):
    step = _health_step(tmp_path, monkeypatch, dcgmi=GB10_FAIL)
    assert [output.label for output in step.outputs] == [
        "nvidia-smi health",
        "kernel log (Xid)",
        "dcgmi diag",
    ]
    ran = step.outputs[2]
    assert ran.exit_code == 226 and "dcgmi diag -r 1 -j" in ran.argv[-1] and ran.parser == "dcgmi"
    assert not [error for error in step.parse_errors if "dcgmi" in error]
    assert statuses(step.samples) == {("software", "GPU 0"): "fail"}
    assert {s.metadata["command"] for s in step.samples if s.metric == "dcgm_diag"} == {"dcgmi diag"}
    subjects = {c.subject: c.verdict for c in findings(step.samples)}
    assert subjects["dcgm:software"] is Verdict.failed and subjects["gpu:2"] is Verdict.warn


def test_the_probe_notes_a_missing_dcgmi_without_failing(tmp_path, monkeypatch):
    step = _health_step(tmp_path, monkeypatch, dcgmi=None)
    assert step.outputs[2].stdout.strip() == NOT_INSTALLED
    assert not [error for error in step.parse_errors if "dcgmi" in error]
    (note,) = [s for s in step.samples if s.metric.startswith("dcgm")]
    assert (note.value, note.metadata["installed"]) == (0.0, False)
    assert ("dcgm", Verdict.info) in {(c.subject, c.verdict) for c in findings(step.samples)}


# ---------------------------------------------------------------- upload, CLI
@pytest.fixture
def offer(session):
    from app.registry.providers import create_provider

    claims = {"gpu_model": "A100", "gpus_per_node": 4, "intranet_gbps": 100, "storage_type": "local_nvme"}
    return create_provider(session, data={"legal_name": "示例诊断算力有限公司", "offers": [claims]}).offers[0]


def test_an_uploaded_dcgmi_output_stores_a_run_whose_findings_show_the_failed_test(app, token_for, offer):
    client, analyst = app.test_client(), token_for("analyst")
    text = (DCGM / PCIE_FAIL).read_text()
    created = client.post(
        f"/api/v1/offers/{offer.id}/uploads",
        json={"tool": "dcgmi", "output": text},
        headers=analyst,
    )
    assert created.status_code == 201, created.get_json()
    summary = created.get_json()
    assert summary["tool"] == "dcgmi" and summary["samples"] == len(parse("dcgmi", text))
    failed = [c for c in summary["comparisons"] if c["subject"] == "dcgm:PCIe"]
    assert [(c["check"], c["verdict"]) for c in failed] == [("gpu_health", "fail")]
    run = client.get(created.headers["Location"], headers=token_for("viewer")).get_json()
    assert (run["origin"], run["steps"][0]["step"], run["steps"][0]["probe"]) == (
        "uploaded",
        "gpu_health",
        "dcgmi",
    )
    broken = json.dumps(
        {"DCGM Diagnostic": {"version": "4.2.3", "runtime_error": "Error: Unable to complete"}}
    )
    refused = client.post(
        f"/api/v1/offers/{offer.id}/uploads",
        json={"tool": "dcgmi", "output": broken},
        headers=analyst,
    )
    assert refused.status_code == 422
    (error,) = refused.get_json()["errors"]
    assert error["field"] == "output" and "dcgmi 本身运行失败" in error["message"]


def test_the_upload_page_lists_dcgmi_and_the_run_page_shows_the_warning(login, offer):
    client = login("analyst")
    page = client.get(f"/providers/{offer.provider_id}/trials").get_data(as_text=True)
    assert '<option value="dcgmi"' in page and "dcgmi diag -r 1 -j" in page
    form = {"offer_id": str(offer.id), "tool": "dcgmi", "path": "", "note": "", "output": ""}
    form["output"] = (DCGM / PCIE_WARN).read_text()
    posted = client.post(f"/providers/{offer.provider_id}/trials/uploads", data=form)
    assert posted.status_code == 302, posted.get_data(as_text=True)[:2000]
    run_page = client.get(posted.headers["Location"])
    html = run_page.get_data(as_text=True)
    assert run_page.status_code == 200 and "PCIe link generation is Gen 4" in html
    assert re.search(r'data-check="gpu_health">.*?data-verdict="warn"', html, re.S)


def test_bench_parse_reads_a_saved_dcgmi_output(app):
    result = app.test_cli_runner().invoke(args=["bench", "parse", "dcgmi", str(DCGM / GB10_FAIL)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert [(s["metric"], s["value"]) for s in printed] == [
        ("dcgm_diag", "fail"),
        ("dcgm_diag_available", 1.0),
    ]
