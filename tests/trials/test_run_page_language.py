"""A real run's page reads in the analyst's language: labels instead of codes (zh and en), units on every
figure, a chart even for a quick run, and a warning when the measured bandwidth is far above the claim."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from sqlmodel import Session

from app.models.trials import BenchRun, RunState, TrialServer
from app.registry.providers import create_provider
from app.trials import bench_runs
from app.trials import servers as trials
from tests.bench_support.sshd import Sshd
from tests.trials.conftest import server_data
from tests.trials.recorded_runs import SOLD, Recording

pytestmark = pytest.mark.slow

# Codes that must not be read as words on the page (outside the raw outputs); English words such as
# "bandwidth" are codes only on the Chinese page.
CODES = ("storage_type", "ping_jitter", "ping_loss", "gpuvet->target", "virtual_disk", "local_nvme")
CODES += ("fio_randread", "disk_type", "iperf3_parallel", "gpu_count", "not_installed")
WORD_CODES = ("bandwidth", "pending", "running", "succeeded", "quick", "target", "ok")


def visible(html: str) -> str:
    """The page's text as a reader sees it, without scripts and the raw outputs (verbatim by design)."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "title"]):
        tag.decompose()
    for tag in soup.select("details.raw-output"):
        tag.decompose()
    return soup.get_text(" ")


def sold_server(session: Session, sshd: Sshd, cipher, policy) -> TrialServer:
    """A trial server reaching `sshd`, host key pinned, lent for an offer selling a 500 Mbit/s link."""
    provider = create_provider(session, data={"legal_name": "示例链路算力有限公司", "offers": [SOLD]})
    server = trials.create_server(
        session,
        provider_id=provider.id,
        data=server_data(sshd, offer_id=provider.offers[0].id),
        cipher=cipher,
        policy=policy,
    )
    return trials.pin_host_key(
        session, server_id=server.id, fingerprint=sshd.host_fingerprint, key_type="ssh-ed25519"
    )


@pytest.fixture
def sold_run(restored_runs: Recording, session: Session) -> BenchRun:
    """A finished quick run over loopback of a server whose offer sells a 500 Mbit/s public link."""
    run = session.get(BenchRun, restored_runs.run_ids[0])
    assert run is not None and run.state == RunState.succeeded
    return run


def _page(client, path: str, language: str) -> tuple[str, str]:
    client.get(f"/lang/{language}?next={path}")
    html = client.get(path).get_data(as_text=True)
    return html, visible(html)


PAGE_WORDS = [
    ("zh", ("带宽", "单流带宽", "本机 → 目标服务器", "存储类型", "成功", "已完成", "快速测试", "所售")),
    (
        "en",
        (
            "Bandwidth",
            "Single-stream bandwidth",
            "this server → target",
            "Storage type",
            "Succeeded",
            "Quick test",
            "link that was sold",
        ),
    ),
]


def assert_page_speaks(client, run: BenchRun, language: str, words: tuple[str, ...]) -> None:
    """The run page in `language`: labels and units, no codes."""
    html, text = _page(client, f"/bench-runs/{run.id}", language)
    for word in words:
        assert word in text, word
    for code in CODES:
        assert code not in text, f"code {code!r} is shown on the {language} page"
    for code in WORD_CODES if language == "zh" else ("ok",):
        assert not re.search(rf"(?<![\w-]){code}(?![\w-])", text), f"code {code!r} on the {language} page"
    rows = BeautifulSoup(html, "html.parser").select("#comparisons tbody tr")
    assert rows
    for row in rows:
        if row["data-check"] == "gpu_model":
            continue  # a model name, not a figure
        for cell in row.select("td.measured, td.claimed"):
            figure = cell.get_text(" ").strip()
            if re.search(r"\d", figure):
                assert re.search(r"(Mbit/s|Gbit/s|IOPS|MiB/s|%|ms|毫秒|块|GPUs|次)", figure), figure
    bandwidth = BeautifulSoup(html, "html.parser").select_one('#comparisons tr[data-check="bandwidth"]')
    assert "Gbit/s" in bandwidth.select_one("td.measured").get_text()
    assert bandwidth.select_one("td.claimed").get_text().strip() == "500 Mbit/s"


def assert_far_above_the_claim_is_a_warning(client, sold_run: BenchRun) -> None:
    """Far above the claim: a warning (probably not the link that was sold), never a pass."""
    bandwidth = [c for c in sold_run.comparisons if c["check"] == "bandwidth"]
    assert bandwidth and all(c["ratio"] > 1.5 for c in bandwidth)
    assert {c["verdict"] for c in bandwidth} == {"warn"}
    assert "所售链路" in bandwidth[0]["reason_zh"] and "link that was sold" in bandwidth[0]["reason_en"]
    html = client.get(f"/bench-runs/{sold_run.id}").get_data(as_text=True)
    assert 'id="beyond-claim"' in html
    row = BeautifulSoup(html, "html.parser").select_one('#comparisons tr[data-check="bandwidth"]')
    assert row["data-beyond-claim"] == "true" and row.select_one(".verdict")["data-verdict"] == "warn"


def test_a_run_stored_as_a_pass_far_above_the_claim_is_shown_as_a_warning(
    login, session: Session, sold_run: BenchRun
):
    old = [
        {**c, "verdict": "pass", "reason_zh": "公网实测 达成 4300%", "reason_en": "public measured: 4300%"}
        if c["check"] == "bandwidth"
        else c
        for c in sold_run.comparisons
    ]
    sold_run.comparisons = old
    session.add(sold_run)
    session.commit()
    html = login("viewer").get(f"/bench-runs/{sold_run.id}").get_data(as_text=True)
    row = BeautifulSoup(html, "html.parser").select_one('#comparisons tr[data-check="bandwidth"]')
    assert row.select_one(".verdict")["data-verdict"] == "warn"
    assert "所售链路" in row.get_text() and "4300%" not in row.get_text()


def assert_a_quick_run_draws_its_throughput(client, session: Session, sold_run: BenchRun) -> None:
    """A quick run's few throughput samples still make a chart, with dots."""
    samples = bench_runs.run_samples(session, run_id=sold_run.id)
    intervals = [sample for sample in samples if sample.metric == "throughput_interval"]
    assert 1 <= len(intervals) < 3  # a 1-second iperf3 test: too few points for a line
    html = client.get(f"/bench-runs/{sold_run.id}").get_data(as_text=True)
    chart = BeautifulSoup(html, "html.parser").select_one("#chart-gv-throughput-public")
    assert chart is not None, "no throughput-over-time chart for a quick run"
    assert chart.select(".dot"), "the few samples of a quick run are not marked"


def test_one_real_run_page_in_both_languages_with_its_warning_and_chart(login, session: Session, sold_run):
    """One quick run (4 s of real tools) serves every reading of its page."""
    client = login("viewer")
    for language, words in PAGE_WORDS:
        assert_page_speaks(client, sold_run, language, words)
    client.get("/lang/zh?next=/")
    assert_far_above_the_claim_is_a_warning(client, sold_run)
    assert_a_quick_run_draws_its_throughput(client, session, sold_run)
