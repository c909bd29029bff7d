"""Report text in words, never keys (issue 27 item 11): a benchmark run's suite in the sources table, the
IOPS chart's step and the throughput chart's network path."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.reports.render import render_html
from tests.reports.conftest import make_inputs, make_meta


def _html(language: str) -> str:
    runs = [
        {"run_id": 3, "server": "试用机B", "suite": "quick", "finished_at": "2026-12-01T10:00:00+08:00"},
        {"run_id": 4, "server": "试用机B", "suite": "upload", "finished_at": "2026-12-02T10:00:00+08:00"},
    ]
    series = {
        "throughput": [
            {
                "name": "试用机B · 内网/intranet",
                "server": "试用机B",
                "path": "intranet",
                "unit": "Gbps",
                "nominal": 100,
                "points": [[m, 90 + m % 3] for m in range(10)],
            }
        ],
        "iops": [
            {
                "name": "试用机B fio_randread",
                "server": "试用机B",
                "step": "fio_randread",
                "nominal": 5,
                "measured": 4,
            }
        ],
    }
    data = {"claims": [], "series": series, "runs": runs}
    inputs = make_inputs(sources={"measurements": {"status": "ok", "data": data}})
    return render_html("provider", inputs, make_meta(), language, screen=False)


def test_the_sources_table_names_each_runs_suite():
    rows = BeautifulSoup(_html("zh"), "html.parser").select("#sources-table tr")
    runs = next(row for row in rows if "#3" in row.get_text()).get_text(" ", strip=True)
    assert "快速测试" in runs and "上传的输出" in runs and "quick" not in runs and "upload" not in runs


def test_charts_name_the_step_and_the_path_in_the_reports_language():
    chinese, english = _html("zh"), _html("en")
    assert "fio_randread" not in chinese and "内网/intranet" not in chinese
    assert "吞吐随时间变化（实测 vs 标称） · 试用机B · 内网<" in chinese and ">试用机B 4k 随机读<" in chinese
    assert "fio_randread" not in english and "内网/intranet" not in english
    assert "(measured vs nominal) · 试用机B · intranet<" in english and ">试用机B 4k random read<" in english
