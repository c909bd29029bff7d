"""`flask report provider|case ID -o FILE [--lang]` and `flask report prepare-font`."""

from __future__ import annotations

import hashlib
import re

import pytest
from sqlmodel import select

from app.credentials import report_exports as service
from app.models.reports import ExportRecord
from app.registry.providers import create_provider
from tests.registry.conftest import awkward
from tests.reports.conftest import needs_poppler, pdf_text

pytestmark = needs_poppler


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def test_provider_report_to_file(runner, session, tmp_path):
    provider = create_provider(session, data=awkward())
    output = tmp_path / "report.pdf"
    result = runner.invoke(args=["report", "provider", str(provider.id), "-o", str(output), "--lang", "en"])
    assert result.exit_code == 0, result.output
    data = output.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert re.search(
        rf"^GV-\d{{4}}-000001 .* \d+ pages +{len(data)} bytes +sha256 {digest}$", result.output, re.M
    )
    record = session.exec(select(ExportRecord)).one()
    assert record.sha256 == digest and record.created_by == "cli" and record.created_by_id is None
    assert "GPU Provider Vetting Report" in pdf_text(data, first=1, last=1)


def test_errors(runner, tmp_path):
    result = runner.invoke(args=["report", "provider", "424242", "-o", str(tmp_path / "x.pdf")])
    assert result.exit_code == 1 and "供应商 424242 不存在" in result.output
    assert not (tmp_path / "x.pdf").exists()
    result = runner.invoke(args=["report", "provider", "1", "-o", str(tmp_path / "x.pdf"), "--lang", "fr"])
    assert result.exit_code == 2 and "'fr' is not one of" in result.output


def test_case_report(runner, session, tmp_path):
    output = tmp_path / "case.pdf"
    result = runner.invoke(args=["report", "case", "424242", "-o", str(output)])
    if not service.cases_available():
        assert result.exit_code == 2 and "cases are not available yet" in result.output
        return
    assert result.exit_code == 1 and "424242" in result.output and not output.exists()
    from app.cases import cases
    from tests.cases.conftest import example

    case = cases.create_case(
        session, answers=example("interactive_inference"), owner=cases.Actor(None, "cli")
    )
    result = runner.invoke(args=["report", "case", str(case.id), "-o", str(output), "--lang", "en"])
    assert result.exit_code == 0, result.output
    assert "GPU Procurement Case Report" in pdf_text(output.read_bytes(), first=1, last=1)
    assert hashlib.sha256(output.read_bytes()).hexdigest() in result.output


def test_prepare_font(runner, app):
    result = runner.invoke(args=["report", "prepare-font"])
    assert result.exit_code == 0, result.output
    path = result.output.split()[0]
    assert path.startswith(str(app.config["GPUVET_SETTINGS"].instance_path)) and path.endswith(".ttf")
