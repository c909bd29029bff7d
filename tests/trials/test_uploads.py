"""Tool outputs uploaded by hand (issue 10 item 4): service and CLI, on the recorded real outputs."""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.accounts.users import get_user
from app.core.errors import InvalidInput, NotFound
from app.credentials import checks, facts
from app.models import Offer, Provider
from app.models.trials import BenchRun, BenchStep, TrialServer
from app.registry.providers import create_provider
from app.trials import bench_runs, bench_uploads
from benchmarks.probes import parse
from tests.benchmarks.conftest import DATA

CLAIMS = {
    "gpu_model": "H800",
    "gpus_per_node": 8,
    "public_mbps": 1000,
    "intranet_gbps": 100,
    "bandwidth_type": "dedicated",
    "storage_type": "local_nvme",
    "nominal_iops": 500000,
}
# tool, recording, --path, the step it stands for, a comparison (check, verdict) it must give
RECORDINGS = [
    ("iperf3", "iperf3_single.json", "intranet", "iperf3", ("bandwidth", "fail")),  # 46 of 100 Gbit/s
    # 50 and 45 Gbit/s on a 1 Gbit/s public link: far above the claim, probably not over the sold link
    ("iperf3", "iperf3_parallel.json", "public", "iperf3_parallel", ("bandwidth", "warn")),
    ("iperf3", "iperf3_reverse.json", "public", "iperf3_reverse", ("bandwidth", "warn")),
    ("ping", "ping_partial_loss.txt", None, "ping", ("ping_loss", "fail")),
    ("fio", "fio_randread.json", None, "fio_randread", ("iops", "fail")),  # 133k of 500k claimed
    ("fio", "fio_write.json", "storage", "fio_write", ("write_throughput", "info")),
    ("lsblk", "lsblk_virtio.json", None, "disk_type", ("storage_type", "fail")),
    ("findmnt", "findmnt_nfs.json", None, "disk_type", ("storage_type", "fail")),
    ("nvidia-smi", "nvidia-smi/inventory_8xh800.csv", None, "gpu", ("gpu_count", "pass")),
]


@pytest.fixture
def claimed(session: Session) -> Provider:
    """A provider whose offer claims 8 x H800, 100 Gbit/s intranet, 1 Gbit/s public, local NVMe."""
    return create_provider(session, data={"legal_name": "示例上传算力有限公司", "offers": [CLAIMS]})


@pytest.fixture
def claimed_offer(claimed: Provider) -> Offer:
    """The claiming offer."""
    return claimed.offers[0]


@pytest.fixture
def analyst(session: Session, make_user):
    """An analyst account (the uploader)."""
    return get_user(session, username=make_user("张分析", "analyst"))


def _stored(session: Session) -> tuple[int, int]:
    session.expire_all()
    return len(session.exec(select(BenchRun)).all()), len(session.exec(select(BenchStep)).all())


@pytest.mark.parametrize(("tool", "recording", "path", "step", "expected"), RECORDINGS)
def test_each_recorded_output_becomes_an_uploaded_run(
    session, claimed_offer, analyst, tool, recording, path, step, expected
):
    raw = (DATA / recording).read_bytes()
    run = bench_uploads.upload_output(
        session, offer_id=claimed_offer.id, tool=tool, output=raw, path=path, note="机房实测", user=analyst
    )
    assert run.origin == "uploaded" and run.trial_server_id is None and run.state == "succeeded"
    assert run.uploaded_by_name == run.created_by_name == "张分析"
    assert run.raw_sha256 == hashlib.sha256(raw).hexdigest()
    assert run.offer_id == claimed_offer.id and run.provider_id == claimed_offer.provider_id
    assert run.claims["intranet_gbps"] == 100 and run.params["note"] == "机房实测"
    (stored,) = bench_runs.run_steps(session, run_id=run.id)
    assert stored.step == step and stored.probe == tool and stored.status == "ok"
    assert stored.outputs[0]["stdout"] == raw.decode()  # verbatim
    derived = 1 if tool in ("lsblk", "findmnt") else 0  # the storage class decided from it
    assert len(stored.samples) == len(parse(tool, raw.decode())) + derived
    assert {s["metadata"]["origin"] for s in stored.samples} == {"uploaded"}
    assert expected in {(c["check"], c["verdict"]) for c in run.comparisons}
    summary = bench_uploads.upload_summary(session, run)
    assert summary["samples"] == len(stored.samples) and summary["sha256"] == run.raw_sha256
    assert summary["uploaded_by"] == "张分析" and summary["comparisons"] == run.comparisons


def test_intranet_and_public_are_compared_with_their_own_claim(session, claimed_offer, analyst):
    raw = (DATA / "iperf3_single.json").read_bytes()
    runs = [
        bench_uploads.upload_output(session, offer_id=claimed_offer.id, tool="iperf3", output=raw, path=path)
        for path in ("intranet", "public")
    ]
    claims = [next(c for c in run.comparisons if c["check"] == "bandwidth")["claimed"] for run in runs]
    assert claims == [100000, 1000]


def test_half_the_storage_evidence_decides_nothing(session, claimed_offer):
    run = bench_uploads.upload_output(
        session, offer_id=claimed_offer.id, tool="findmnt", output=(DATA / "findmnt_ext4.json").read_bytes()
    )
    assert "storage_type" not in {c["check"] for c in run.comparisons}  # ext4 on a disk lsblk would name


def test_gbk_text_is_read_and_hashed_as_uploaded(session, claimed_offer):
    raw = ("# 上海机房 到 北京机房\n" + (DATA / "ping_ok.txt").read_text()).encode("gbk")
    run = bench_uploads.upload_output(session, offer_id=claimed_offer.id, tool="ping", output=raw)
    (stored,) = bench_runs.run_steps(session, run_id=run.id)
    assert stored.outputs[0]["stdout"].startswith("# 上海机房") and stored.outputs[0]["encoding"] == "gb18030"
    assert run.raw_sha256 == hashlib.sha256(raw).hexdigest()


def test_a_garbled_output_gets_the_parsers_error_and_stores_nothing(session, claimed_offer):
    cut = (DATA / "iperf3_single.json").read_bytes()[:500]
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(
            session, offer_id=claimed_offer.id, tool="iperf3", output=cut, path="public"
        )
    (error,) = caught.value.errors
    assert error.field == "output"
    assert "无法解析 iperf3 输出" in error.message and "输出不是完整的 JSON" in error.message
    assert "未保存任何内容" in error.message
    assert _stored(session) == (0, 0)


def test_a_tool_that_failed_is_named_as_such(session, claimed_offer):
    refused = (DATA / "iperf3_refused.json").read_bytes()
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(
            session, offer_id=claimed_offer.id, tool="iperf3", output=refused, path="public"
        )
    assert "iperf3 本身运行失败" in caught.value.errors[0].message
    assert "connection refused" in caught.value.errors[0].message.lower()
    assert _stored(session) == (0, 0)


def test_every_input_problem_is_reported_at_once(session, claimed_offer):
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(
            session, offer_id=claimed_offer.id, tool="iperf3", output=b" \n", path=None, note="x" * 501
        )
    assert {error.field for error in caught.value.errors} == {"path", "note", "output"}
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(
            session, offer_id=claimed_offer.id, tool="netperf", output=b"x", path="public"
        )
    assert caught.value.errors[0].field == "tool" and "netperf" in caught.value.errors[0].message
    big = b"x" * (bench_uploads.MAX_UPLOAD_BYTES + 1)
    with pytest.raises(InvalidInput, match="上限"):
        bench_uploads.upload_output(session, offer_id=claimed_offer.id, tool="ping", output=big)
    with pytest.raises(InvalidInput, match="UTF-8 或 GBK"):
        bench_uploads.upload_output(
            session, offer_id=claimed_offer.id, tool="ping", output=b"\xff\xfe\xfa\x80\x81"
        )
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(
            session, offer_id=claimed_offer.id, tool="fio", output=b"{}", path="public"
        )
    assert caught.value.errors[0].field == "path"
    with pytest.raises(NotFound):
        bench_uploads.upload_output(session, offer_id=999999, tool="ping", output=b"x")
    assert _stored(session) == (0, 0)


def test_uploaded_runs_raise_red_flag_12_in_the_credential_check(session, claimed, claimed_offer, analyst):
    raw = (DATA / "lsblk_virtio.json").read_bytes()
    run = bench_uploads.upload_output(
        session, offer_id=claimed_offer.id, tool="lsblk", output=raw, user=analyst
    )
    fact = facts.gather_facts(session, claimed)["benchmarks"]
    assert [entry["run_id"] for entry in fact["runs"]] == [run.id]
    assert fact["runs"][0]["origin"] == "uploaded" and fact["runs"][0]["uploaded_by"] == "张分析"
    evaluation = checks.evaluate(session, provider_id=claimed.id)
    (finding,) = [f for f in evaluation.findings if f.rule_id == "benchmarks.storage_not_nvme"]
    assert "张分析 上传的 lsblk 输出" in finding.message_zh and "uploaded by 张分析" in finding.message_en
    assert finding.subject == f"bench_run:{run.id}" and finding.evidence[0]["run_id"] == run.id


# ---------------------------------------------------------------- CLI
def test_cli_upload_prints_the_run(app, session, claimed_offer):
    recording = DATA / "fio_randread.json"
    result = app.test_cli_runner().invoke(
        args=["bench", "upload", str(claimed_offer.id), "--tool", "fio", str(recording), "--note", "自测"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    run = session.get(BenchRun, summary["run_id"])
    assert run is not None and run.origin == "uploaded" and run.uploaded_by_name == "cli"
    assert summary["origin"] == "uploaded" and summary["uploaded_by"] == "cli" and summary["note"] == "自测"
    assert summary["sha256"] == hashlib.sha256(recording.read_bytes()).hexdigest()
    assert summary["samples"] == len(parse("fio", recording.read_text()))
    assert ("iops", "fail") in {(c["check"], c["verdict"]) for c in summary["comparisons"]}
    assert run.params["filename"] == "fio_randread.json"


def test_cli_upload_names_the_parse_error_and_stores_nothing(app, session, claimed_offer, tmp_path: Path):
    broken = tmp_path / "ping.txt"
    broken.write_text("PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n64 bytes from 10.0.0.2: icmp_seq=1\n")
    result = app.test_cli_runner().invoke(
        args=["bench", "upload", str(claimed_offer.id), "--tool", "ping", str(broken), "--path", "intranet"]
    )
    assert result.exit_code == 1
    assert "error: output: 无法解析 ping 输出" in result.output and "packets transmitted" in result.output
    assert _stored(session) == (0, 0)


def test_cli_upload_refuses_unknown_tools_and_paths(app, claimed_offer):
    runner = app.test_cli_runner()
    ping = str(DATA / "ping_ok.txt")
    assert (
        runner.invoke(args=["bench", "upload", str(claimed_offer.id), "--tool", "netperf", ping]).exit_code
        == 2
    )
    wrong = runner.invoke(
        args=["bench", "upload", str(claimed_offer.id), "--tool", "ping", ping, "--path", "x"]
    )
    assert wrong.exit_code == 2


# ---------------------------------------------------------------- API
def _upload_url(offer: Offer) -> str:
    return f"/api/v1/offers/{offer.id}/uploads"


def test_api_upload_json_and_read_the_run(app, session, token_for, claimed_offer):
    client = app.test_client()
    text = (DATA / "iperf3_single.json").read_text()
    body = {"tool": "iperf3", "path": "intranet", "note": "两台试用机之间", "output": text}
    created = client.post(_upload_url(claimed_offer), json=body, headers=token_for("analyst", "李上传"))
    assert created.status_code == 201, created.get_json()
    summary = created.get_json()
    assert summary["origin"] == "uploaded" and summary["uploaded_by"] == "李上传"
    assert summary["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert summary["samples"] == len(parse("iperf3", text))
    assert ("bandwidth", "fail") in {(c["check"], c["verdict"]) for c in summary["comparisons"]}
    run = client.get(created.headers["Location"], headers=token_for("viewer")).get_json()
    assert run["id"] == summary["run_id"] and run["trial_server_id"] is None
    assert (run["origin"], run["uploaded_by"], run["raw_sha256"]) == ("uploaded", "李上传", summary["sha256"])
    assert run["steps"][0]["step"] == "iperf3" and run["steps"][0]["status"] == "ok"


def test_api_upload_multipart_file(app, token_for, claimed_offer):
    raw = (DATA / "nvidia-smi" / "inventory_8xh800.csv").read_bytes()
    created = app.test_client().post(
        _upload_url(claimed_offer),
        data={"tool": "nvidia-smi", "file": (io.BytesIO(raw), "smi.csv")},
        headers=token_for("analyst"),
        content_type="multipart/form-data",
    )
    assert created.status_code == 201, created.get_json()
    summary = created.get_json()
    assert summary["sha256"] == hashlib.sha256(raw).hexdigest() and summary["tool"] == "nvidia-smi"
    verdicts = {(c["check"], c["verdict"]) for c in summary["comparisons"]}
    assert {("gpu_count", "pass"), ("gpu_model", "pass")} <= verdicts


def test_api_upload_refusals_store_nothing(app, session, token_for, claimed_offer):
    client = app.test_client()
    good = {"tool": "ping", "output": (DATA / "ping_ok.txt").read_text()}
    assert client.post(_upload_url(claimed_offer), json=good, headers=token_for("viewer")).status_code == 403
    assert client.post(_upload_url(claimed_offer), json=good).status_code == 401
    analyst = token_for("analyst")
    garbled = client.post(
        _upload_url(claimed_offer), json={**good, "output": "64 bytes from"}, headers=analyst
    )
    assert garbled.status_code == 422
    (error,) = garbled.get_json()["errors"]
    assert error["field"] == "output" and "无法解析 ping 输出" in error["message"]
    extra = client.post(_upload_url(claimed_offer), json={**good, "server": 1, "note": 5}, headers=analyst)
    assert extra.status_code == 422
    assert {e["field"] for e in extra.get_json()["errors"]} == {"server", "note"}
    missing = client.post("/api/v1/offers/999999/uploads", json=good, headers=analyst)
    assert missing.status_code == 404
    assert _stored(session) == (0, 0)


def test_api_upload_is_in_the_openapi_document(app):
    doc = app.test_client().get("/api/v1/openapi.json").get_json()
    operation = doc["paths"]["/offers/{offer_id}/uploads"]["post"]
    assert operation["x-required-role"] == "analyst" and "201" in operation["responses"]
    assert "403" in operation["responses"] and "422" in operation["responses"]


# ---------------------------------------------------------------- pages
def test_page_upload_file_then_the_run_page_shows_the_provenance(login, session, claimed, claimed_offer):
    client = login("analyst", "王页面")
    tab = client.get(f"/providers/{claimed.id}/trials?offer={claimed_offer.id}").get_data(as_text=True)
    assert 'id="upload-form"' in tab and f'<option value="{claimed_offer.id}" selected>' in tab
    raw = (DATA / "lsblk_virtio.json").read_bytes()
    posted = client.post(
        f"/providers/{claimed.id}/trials/uploads",
        data={
            "offer_id": str(claimed_offer.id),
            "tool": "lsblk",
            "path": "",
            "note": "<b>机房</b>",
            "file": (io.BytesIO(raw), "lsblk.json"),
        },
        content_type="multipart/form-data",
    )
    assert posted.status_code == 302, posted.get_data(as_text=True)[:2000]
    run = session.exec(select(BenchRun)).one()
    assert posted.headers["Location"].endswith(f"/bench-runs/{run.id}")
    assert (run.origin, run.uploaded_by_name, run.trial_server_id) == ("uploaded", "王页面", None)
    sha = hashlib.sha256(raw).hexdigest()
    assert run.raw_sha256 == sha

    html = client.get(f"/bench-runs/{run.id}").get_data(as_text=True)
    assert "由 王页面 上传" in html and f'title="{sha}"' in html and sha[:12] in html
    assert "&lt;b&gt;机房&lt;/b&gt;" in html and "<b>机房</b>" not in html  # the note is escaped
    assert "&#34;blockdevices&#34;" in html  # the raw text, verbatim and escaped
    assert re.search(r'data-check="storage_type">.*?data-verdict="fail"', html, re.S)
    assert "退出码 None" not in html and "主机密钥" not in html
    listed = client.get(f"/providers/{claimed.id}/trials").get_data(as_text=True)
    assert f'data-run="{run.id}"' in listed and 'data-origin="uploaded"' in listed
    assert client.get(f"/lang/en?next=/bench-runs/{run.id}").status_code == 302
    english = client.get(f"/bench-runs/{run.id}").get_data(as_text=True)
    assert "uploaded by 王页面" in english


def test_page_upload_pasted_text_and_garbled_text(login, session, claimed, claimed_offer):
    client = login("analyst")
    url = f"/providers/{claimed.id}/trials/uploads"
    form = {"offer_id": str(claimed_offer.id), "tool": "ping", "path": "intranet"}
    bad = client.post(url, data={**form, "output": "<script>alert(1)</script>"})
    assert bad.status_code == 422
    html = bad.get_data(as_text=True)
    assert 'data-error="output"' in html and "无法解析 ping 输出" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert _stored(session) == (0, 0)
    other = create_provider(session, data={"legal_name": "别家算力有限公司", "offers": [CLAIMS]})
    foreign = client.post(url, data={**form, "offer_id": str(other.offers[0].id), "output": "x"})
    assert foreign.status_code == 422 and 'data-error="offer_id"' in foreign.get_data(as_text=True)
    good = client.post(url, data={**form, "output": (DATA / "ping_ok.txt").read_text()})
    assert good.status_code == 302
    run = session.exec(select(BenchRun)).one()
    assert run.params["path"] == "intranet" and run.comparisons


def test_page_upload_names_a_garbled_fio_output_in_one_language(login, session, claimed, claimed_offer):
    client = login("analyst")
    url = f"/providers/{claimed.id}/trials/uploads"
    form = {"offer_id": str(claimed_offer.id), "tool": "fio", "path": "storage", "output": '{"jobs": [{'}

    def error_text() -> str:
        response = client.post(url, data=form)
        assert response.status_code == 422
        found = re.search(r'data-error="output">([^<]*)</div>', response.get_data(as_text=True))
        assert found, "no error under the output field"
        return found[1]

    chinese = error_text()
    assert chinese.startswith("无法解析 fio 输出：输出不是完整的 JSON（在第 11 个字符处中断）（可读取：")
    assert "可读取：fio 2.x 或 3.x" in chinese and not re.search(r"[a-z]{3,} [a-z]{3,}", chinese)
    client.get("/lang/en")
    english = error_text()
    assert english.startswith(
        "could not read the fio output: output is not complete JSON (it breaks off at char 11"
    )
    assert "(accepted: fio --output-format=json from fio 2.x or 3.x" in english
    assert not re.search(r"[\u4e00-\u9fff]", english)
    assert _stored(session) == (0, 0)


def test_viewers_cannot_upload_from_the_page(login, session, claimed, claimed_offer):
    client = login("viewer")
    assert 'id="upload-form"' not in client.get(f"/providers/{claimed.id}/trials").get_data(as_text=True)
    data = {"offer_id": str(claimed_offer.id), "tool": "ping", "output": (DATA / "ping_ok.txt").read_text()}
    assert client.post(f"/providers/{claimed.id}/trials/uploads", data=data).status_code == 403
    assert _stored(session) == (0, 0)


def test_uploaded_runs_compare_with_the_offers_other_runs(login, session, claimed_offer):
    first, second = (
        bench_uploads.upload_output(
            session,
            offer_id=claimed_offer.id,
            tool="iperf3",
            output=(DATA / name).read_bytes(),
            path="public",
        )
        for name in ("iperf3_single.json", "iperf3_parallel.json")
    )
    client = login("viewer")
    page = client.get(f"/bench-runs/{second.id}").get_data(as_text=True)
    assert 'id="compare-form"' in page and f'<option value="{first.id}">' in page
    compared = client.get(f"/bench-runs/compare?a={first.id}&b={second.id}")
    assert compared.status_code == 200
    html = compared.get_data(as_text=True)
    assert 'data-metric="throughput"' in html and f"#{first.id}" in html and f"#{second.id}" in html


def test_a_later_executed_run_of_the_same_checks_replaces_the_upload_as_evidence(
    session, claimed, claimed_offer
):
    upload = bench_uploads.upload_output(
        session, offer_id=claimed_offer.id, tool="lsblk", output=(DATA / "lsblk_virtio.json").read_bytes()
    )
    server = TrialServer(
        provider_id=claimed.id,
        offer_id=claimed_offer.id,
        name="试用机",
        host="192.0.2.1",
        secret_encrypted="-",
    )
    session.add(server)
    session.flush()
    passed = {"check": "storage_type", "verdict": "pass", "red_flag": None}
    executed = BenchRun(
        trial_server_id=server.id,
        provider_id=claimed.id,
        offer_id=claimed_offer.id,
        suite="quick",
        state="succeeded",
        comparisons=[passed],
    )
    session.add(executed)
    session.flush()
    disk = {"metric": "storage_class", "value": "local_nvme", "unit": "", "metadata": {"reason": "nvme"}}
    session.add(BenchStep(run_id=executed.id, step="disk_type", probe="disk", samples=[disk]))  # measured
    session.commit()
    assert executed.origin == "executed" and executed.id > upload.id
    fact = facts.gather_facts(session, claimed)["benchmarks"]
    assert [entry["run_id"] for entry in fact["runs"]] == [executed.id]
    evaluation = checks.evaluate(session, provider_id=claimed.id)
    assert "benchmarks.storage_not_nvme" not in {finding.rule_id for finding in evaluation.findings}


def test_uploaded_runs_reach_the_report_measurements(session, claimed, claimed_offer, analyst):
    from app.reports.sources import gather

    raw = (DATA / "iperf3_single.json").read_bytes()
    run = bench_uploads.upload_output(
        session, offer_id=claimed_offer.id, tool="iperf3", output=raw, path="intranet", user=analyst
    )
    source = gather(session, claimed)["measurements"]
    assert source["status"] == "ok", source
    assert run.id in {entry["run_id"] for entry in source["data"]["runs"]}
