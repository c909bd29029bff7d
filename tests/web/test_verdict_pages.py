"""The worded provider verdict (issue 10 item 5) on the findings overview and the provider's report list."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.credentials import checks
from app.credentials import report_exports as report_service
from app.models import Provider
from app.models.reports import ExportRecord
from app.registry.demo import load_demo
from app.reports.pdf import RenderedPdf
from app.trials import bench_uploads

DATA = Path(__file__).resolve().parents[1] / "data" / "bench"
COMPLIANT = "示例星河算力科技有限公司"
REVOKED = "虚构吊销通信有限公司"
from tests.credentials.checks.test_verdicts import REGISTRY_ONLY_EN, REGISTRY_ONLY_ZH  # noqa: E402

# After one upload the label no longer says "registry data only", but still names what is unverified.
AFTER_UPLOAD_ZH = "通过（未核实：许可证 京B1.B2-20259901 未经官方查询；"
AFTER_UPLOAD_EN = "passes; not verified: licence 京B1.B2-20259901 not looked up;"


class StandInRenderer:
    """Stands in for WeasyPrint: the list reads the snapshot stored with an export, not its PDF."""

    def render(self, html: str) -> RenderedPdf:
        """A one-page stand-in PDF."""
        assert "<html" in html
        return RenderedPdf(b"%PDF-1.7 stand-in", 1)


@pytest.fixture
def demo(session: Session) -> dict[str, int]:
    """The demo providers, each checked once on registry data; legal name -> id."""
    load_demo(session, today=date.today())
    ids = {p.legal_name: p.id for p in session.exec(select(Provider)).all()}
    for provider_id in ids.values():
        checks.run_check(session, provider_id=provider_id)
    return ids


def _row(html: str, marker: str) -> str:
    """The table row holding `marker`."""
    rows = [row for row in re.findall(r"<tr[^>]*>.*?</tr>", html, flags=re.S) if marker in row]
    assert len(rows) == 1, marker
    return rows[0]


def _upload_gpus(session: Session, provider_id: int) -> None:
    provider = session.get(Provider, provider_id)
    offer = next(offer for offer in provider.offers if offer.gpu_model == "H800")
    raw = (DATA / "nvidia-smi" / "inventory_8xh800.csv").read_bytes()
    bench_uploads.upload_output(session, offer_id=offer.id, tool="nvidia-smi", output=raw)


def test_findings_overview_shows_the_worded_verdict(login, demo, session):
    client = login("viewer")
    html = client.get("/findings?per_page=100").get_data(as_text=True)
    assert REGISTRY_ONLY_ZH in _row(html, COMPLIANT)
    revoked = _row(html, REVOKED)
    assert 'data-level="fail"' in revoked and "不通过" in revoked

    _upload_gpus(session, demo[COMPLIANT])
    html = client.get("/findings?per_page=100").get_data(as_text=True)
    assert AFTER_UPLOAD_ZH in _row(html, COMPLIANT) and REGISTRY_ONLY_ZH not in _row(html, COMPLIANT)

    client.get("/lang/en")
    english = client.get("/findings?per_page=100").get_data(as_text=True)
    assert AFTER_UPLOAD_EN in _row(english, COMPLIANT)


def test_report_list_shows_the_current_verdict_and_the_one_each_report_states(login, demo, session):
    provider_id = demo[COMPLIANT]
    author = report_service.Author(id=None, name="审计员")
    exported = report_service.export_provider_report(
        session, provider_id=provider_id, language="en", author=author, renderer=StandInRenderer()
    )
    # An export from before the worded verdict: its snapshot has only the check's level.
    older = ExportRecord(
        number="GV-2025-000001",
        year=2025,
        seq=1,
        kind="provider",
        subject_id=provider_id,
        subject_name=COMPLIANT,
        provider_id=provider_id,
        language="zh",
        created_by="审计员",
        created_at=datetime(2025, 6, 1, tzinfo=UTC),
        verdict="needs_review",
        pages=1,
        size_bytes=17,
        sha256="0" * 64,
        inputs_sha256="0" * 64,
        inputs_json={"meta": {}, "inputs": {"sources": {"checks": {"status": "ok"}}}},
        pdf_bytes=b"%PDF-1.7 stand-in",
    )
    session.add(older)
    session.commit()
    _upload_gpus(session, provider_id)  # the verdict moves on after the export

    client = login("viewer")
    html = client.get(f"/providers/{provider_id}/reports").get_data(as_text=True)
    current = re.search(r'<p class="mb-3" id="provider-verdict">.*?</p>', html, flags=re.S)
    assert current and AFTER_UPLOAD_ZH in current.group(0)
    assert REGISTRY_ONLY_ZH in _row(html, f'id="export-{exported.id}"')
    old_row = _row(html, f'id="export-{older.id}"')
    assert 'data-level="needs_review"' in old_row and ">需复核<" in old_row

    client.get("/lang/en")
    english = client.get(f"/providers/{provider_id}/reports").get_data(as_text=True)
    assert REGISTRY_ONLY_EN in _row(english, f'id="export-{exported.id}"')


def test_the_report_tab_shows_the_current_verdict_before_any_export(login, demo):
    html = login("viewer").get(f"/providers/{demo[REVOKED]}/reports").get_data(as_text=True)
    assert 'id="no-exports"' in html and "不通过" in html


def test_list_overview_and_credentials_tab_speak_the_chosen_language(login, demo):
    client = login("viewer")
    provider_id = demo[COMPLIANT]
    client.get("/lang/en")
    pages = ["/providers", f"/providers/{provider_id}", f"/providers/{provider_id}/credentials"]
    for url in pages:
        html = client.get(url).get_data(as_text=True)
        assert REGISTRY_ONLY_EN in html and REGISTRY_ONLY_ZH not in html, url
    client.get("/lang/zh")
    for url in pages:
        assert REGISTRY_ONLY_ZH in client.get(url).get_data(as_text=True), url
