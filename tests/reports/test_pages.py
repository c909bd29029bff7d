"""Report pages by role: viewers read and download, analysts export; errors name the field."""

from __future__ import annotations

import hashlib
import re

import pytest
from bs4 import BeautifulSoup
from sqlmodel import select

from app.models.reports import ExportRecord
from app.registry.providers import create_provider
from tests.registry.conftest import awkward
from tests.reports.conftest import needs_poppler, pdf_text

pytestmark = needs_poppler


@pytest.fixture
def provider(session):
    return create_provider(
        session, data=awkward(legal_name="<b>粗体</b>示例数据有限公司", short_name="\u202e反转简称")
    )


def test_analyst_exports_and_viewer_downloads(login, provider, session):
    analyst = login("analyst")
    page = analyst.get(f"/providers/{provider.id}/reports")
    assert page.status_code == 200
    soup = BeautifulSoup(page.get_data(as_text=True), "html.parser")
    assert soup.select_one("#export-form") is not None and soup.select_one("#no-exports") is not None
    assert soup.select_one("#provider-tabs a.active").get_text(strip=True) == "报告"

    response = analyst.post(f"/providers/{provider.id}/reports", data={"lang": "en"})
    assert response.status_code == 302 and response.headers["Location"].endswith(
        f"/providers/{provider.id}/reports"
    )
    record = session.exec(select(ExportRecord)).one()
    assert record.created_by == "analyst" and record.language == "en"
    listing = analyst.get(f"/providers/{provider.id}/reports").get_data(as_text=True)
    assert record.number in listing and "已导出报告" in listing  # the flash links the download
    assert f'href="/reports/{record.id}.pdf"' in listing

    viewer = login("viewer")
    listing = BeautifulSoup(
        viewer.get(f"/providers/{provider.id}/reports").get_data(as_text=True), "html.parser"
    )
    assert listing.select_one("#export-form") is None
    assert listing.select_one(f"#export-{record.id}").select_one("td").get_text(strip=True) == record.number
    pdf = viewer.get(f"/reports/{record.id}.pdf")
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"
    assert pdf.headers["Content-Disposition"] == f'attachment; filename="{record.number}.pdf"'
    assert pdf.headers["X-Report-SHA256"] == hashlib.sha256(pdf.data).hexdigest() == record.sha256
    assert "GPU Provider Vetting Report" in pdf_text(pdf.data, first=1, last=1)
    view = viewer.get(f"/reports/{record.id}")
    assert view.status_code == 200 and record.number in view.get_data(as_text=True)
    assert viewer.post(f"/providers/{provider.id}/reports", data={"lang": "zh"}).status_code == 403


def test_html_view_escapes_provider_fields(login, provider):
    client = login("viewer")
    response = client.get(f"/providers/{provider.id}/report?lang=zh")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "&lt;b&gt;粗体&lt;/b&gt;示例数据有限公司" in html and "<b>粗体</b>" not in html
    assert "[U+202E]反转简称" in html and "\u202e" not in html
    assert "<script" not in html.lower()
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    english = client.get(f"/providers/{provider.id}/report?lang=en").get_data(as_text=True)
    assert "GPU Provider Vetting Report" in english and "Not verified" in english


def test_bad_input_and_missing_records(login, provider, session):
    client = login("analyst")
    response = client.post(f"/providers/{provider.id}/reports", data={"lang": "fr"})
    assert response.status_code == 422
    errors = BeautifulSoup(response.get_data(as_text=True), "html.parser").select_one("#export-errors")
    assert re.search(r"报告语言须为 zh\s*(或|/)\s*en", errors.get_text())
    assert session.exec(select(ExportRecord)).all() == []
    assert client.get(f"/providers/{provider.id}/report?lang=xx").status_code == 422
    assert client.get("/reports/999.pdf").status_code == 404
    assert client.get("/reports/999").status_code == 404
    assert client.get("/providers/99999/reports").status_code == 404
    assert client.post("/providers/99999/reports", data={"lang": "zh"}).status_code == 404


def test_tab_on_provider_page_and_login_required(app, login, provider):
    detail = login("viewer").get(f"/providers/{provider.id}").get_data(as_text=True)
    assert f'href="/providers/{provider.id}/reports"' in detail
    anonymous = app.test_client()
    assert anonymous.get(f"/providers/{provider.id}/reports").status_code == 302
    assert anonymous.get("/reports/1.pdf").status_code == 302


def test_case_report_pages(login, session):
    from app.cases import cases
    from tests.cases.conftest import example

    case = cases.create_case(
        session, answers=example("single_node_training"), owner=cases.Actor(None, "alice")
    )
    viewer = login("viewer")
    page = viewer.get(f"/cases/{case.id}/reports")
    assert page.status_code == 200 and "export-form" not in page.get_data(as_text=True)
    preview = viewer.get(f"/cases/{case.id}/report?lang=zh").get_data(as_text=True)
    assert "GPU 算力采购需求评估报告" in preview and case.title in preview
    assert viewer.post(f"/cases/{case.id}/reports", data={"lang": "zh"}).status_code == 403

    analyst = login("analyst")
    response = analyst.post(f"/cases/{case.id}/reports", data={"lang": "zh"})
    assert response.status_code == 302 and response.headers["Location"].endswith(f"/cases/{case.id}/reports")
    record = session.exec(select(ExportRecord)).one()
    assert record.kind == "case" and record.subject_id == case.id
    assert viewer.get(f"/reports/{record.id}.pdf").headers["X-Report-SHA256"] == record.sha256
    view = viewer.get(f"/reports/{record.id}").get_data(as_text=True)
    assert f'href="/cases/{case.id}/reports"' in view
    assert analyst.get("/cases/424242/reports").status_code == 404
