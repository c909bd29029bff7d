"""One place to add a probe: a probe module's registrations reach the CLI, the upload form and the API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.registry.providers import create_provider
from benchmarks import probes
from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload, upload_tools
from benchmarks.probes.base import TARGET, Probe, ProbeContext
from benchmarks.sample import ParseError, Sample

TOOL = "uptime-test"
OFFER = {"gpu_model": "H800", "gpus_per_node": 8, "public_mbps": 1000}


@pytest.fixture
def uptime_probe() -> Iterator[str]:
    """A probe, its parser and its upload tool, defined only here and registered as a probe module does."""

    def parse_uptime(text: str) -> list[Sample]:
        """The first load average of `uptime`."""
        if "load average:" not in text:
            raise ParseError(TOOL, _("没有 'load average:'（不是 uptime 的输出）"))
        first = text.split("load average:", 1)[1].split(",")[0]
        return [Sample("load_average_1m", float(first), "")]

    class UptimeProbe(Probe):
        name = TOOL
        tool = "uptime"

        def run(self, ctx: ProbeContext) -> None:
            ctx.execute(TARGET, "uptime", ["uptime"], timeout=10, parser=TOOL)

    probes.load_probes()
    register_parser(TOOL, accepts=_("uptime 的输出"))(parse_uptime)
    register_probe(UptimeProbe)
    register_upload(UploadTool(TOOL, TOOL, TOOL, (), "uptime"))
    try:
        yield TOOL
    finally:
        del probes.PARSERS[TOOL], probes.PROBES[TOOL], probes.UPLOADS[TOOL]


def test_a_registered_upload_tool_is_listed_after_the_built_in_ones_in_their_order(uptime_probe):
    names = list(upload_tools())
    assert names[:4] == ["ping", "iperf3", "fio", "lsblk"] and names[-1] == uptime_probe
    with pytest.raises(ValueError, match="registered twice"):
        register_upload(UploadTool("ping", "ping", "ping", (), "ping"))


def test_the_cli_offers_a_probe_registered_after_start_up(app, uptime_probe, tmp_path: Path):
    runner = app.test_cli_runner()
    assert uptime_probe in runner.invoke(args=["bench", "parse", "--help"]).output
    assert uptime_probe in runner.invoke(args=["bench", "upload", "--help"]).output
    recorded = tmp_path / "uptime.txt"
    recorded.write_text(" 10:00:00 up 3 days,  1 user,  load average: 0.42, 0.30, 0.25\n")
    parsed = runner.invoke(args=["bench", "parse", uptime_probe, str(recorded)])
    assert parsed.exit_code == 0, parsed.output
    assert json.loads(parsed.output)[0]["value"] == 0.42


def test_the_upload_form_offers_and_stores_a_registered_probe(login, session, uptime_probe):
    provider = create_provider(session, data={"legal_name": "示例探针算力有限公司", "offers": [OFFER]})
    offer = provider.offers[0]
    client = login("analyst")
    tab = client.get(f"/providers/{provider.id}/trials").get_data(as_text=True)
    assert f'<option value="{uptime_probe}"' in tab and '<code class="wrap-anywhere">uptime</code>' in tab

    from app.trials import bench_uploads

    run = bench_uploads.upload_output(
        session, offer_id=offer.id, tool=uptime_probe, output="load average: 1.5, 1.0, 0.5\n"
    )
    assert run.params["tool"] == uptime_probe and run.suite == bench_uploads.UPLOAD_SUITE
