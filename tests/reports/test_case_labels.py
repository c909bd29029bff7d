"""Case reports and pages name coded answers and figures in words (no `office_upload`, `cost、intranet`)."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from app.cases import cases
from app.registry import demo
from tests.reports.conftest import needs_poppler, pdf_text, squash

pytestmark = needs_poppler

ANSWERS = {
    "workload": {"kind": "distributed_training"},
    "compute": {"nodes": 4, "gpus_per_node": 8, "gpu_models": ["H800", "A800"]},
    "model": {"parameters_billion": 7, "precision": "bf16", "target_step_seconds": 10, "sync_share": 0.3},
    "data": {"dataset_gb": 1000, "source": "office_upload"},
    "site": {"office_city": "北京", "uplink_mbps": 200},
    "checkpoint": {"size_gb": 100, "acceptable_stall_seconds": 120},
    "budget": {"priorities": ["cost", "intranet"]},
}
CODES = ("office_upload", "cost、intranet", "intranet_gbps", "local_nvme", "read_iops")


@pytest.fixture
def case(session):
    demo.load_demo(session)
    return cases.create_case(session, answers=ANSWERS, owner=cases.Actor(None, "alice"))


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("zh", ("从办公室上传", "月成本、内网带宽")),
        ("en", ("Uploaded from the office", "monthly cost, intranet bandwidth")),
    ],
)
def test_case_pdf_answers_are_words(login, session, case, language, words):
    from sqlmodel import select

    from app.models.reports import ExportRecord

    analyst = login("analyst")
    response = analyst.post(f"/cases/{case.id}/reports", data={"lang": language})
    assert response.status_code == 302
    record = session.exec(select(ExportRecord)).one()
    text = pdf_text(record.pdf_bytes)
    for word in words:
        assert squash(word) in squash(text), word
    for code in CODES:
        assert squash(code) not in squash(text), code
    assert not re.search(r"\bcost,\s*intranet\b(?!\s*bandwidth)", text), "raw priorities in the English PDF"


def test_case_page_figures_are_labelled(login, case):
    client = login("viewer")
    for language, label in (("zh", "内网带宽"), ("en", "Intranet bandwidth")):
        client.get(f"/lang/{language}?next=/cases")
        html = client.get(f"/cases/{case.id}").get_data(as_text=True)
        figures = BeautifulSoup(html, "html.parser").select(".figures .figure")
        assert figures, "the ranked offers show their figures"
        shown = " ".join(figure.get_text(" ", strip=True) for figure in figures)
        assert label in shown
        for code in ("intranet_gbps", "read_iops", "local_nvme", "dedicated", " = "):
            assert code not in shown, (language, code)


def test_runs_used_by_a_case_name_their_figures():
    from app.reports.case_document import evidence_rows
    from app.reports.labels import Labels

    evidence = {
        "runs": [{"run_id": 4, "figures": ["intranet_gbps", "read_iops"], "at": "2026-03-01T02:00:00+00:00"}]
    }
    zh = evidence_rows(evidence, Labels("zh"))["runs"][0]
    assert zh["figure_names"] == ["内网带宽", "读 IOPS"] and zh["when"] == "2026-03-01 10:00 UTC+8"
    en = evidence_rows(evidence, Labels("en"))["runs"][0]
    assert en["figure_names"] == ["intranet bandwidth", "read IOPS"]
