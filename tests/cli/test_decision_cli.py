"""`flask decision export`: the signed decision document written to a file, its number and hash printed;
the same file again while the decision is unchanged; unknown ids and languages refused without a traceback."""

from __future__ import annotations

import hashlib
import re
import subprocess
from typing import Any

import pytest
from sqlmodel import select

from app.core.limits import MAX_ID
from app.models.reports import ExportRecord
from tests.cases.test_decision_document import decided
from tests.cases.test_decisions import NAMES, body, quote, world  # noqa: F401 - fixture (arranged)
from tests.reports.conftest import needs_poppler, pdf_text, requires_poppler  # noqa: F401 - fixture
from tests.reports.test_signing import requires_pdfsig  # noqa: F401 - fixture


@pytest.fixture
def arranged(request) -> dict[str, Any]:
    """tests.cases.test_decisions' world: a case, three providers with one offer each, people of each role."""
    return request.getfixturevalue("world")


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@needs_poppler
@pytest.mark.usefixtures("requires_pdfsig")
def test_export_writes_the_signed_document(runner, session, arranged, tmp_path):
    decision = decided(session, arranged, 1)
    output = tmp_path / "decision.pdf"
    result = runner.invoke(args=["decision", "export", str(decision.id), "-o", str(output), "--lang", "en"])
    assert result.exit_code == 0, result.output
    written = output.read_bytes()
    digest = hashlib.sha256(written).hexdigest()
    assert re.search(
        rf"^GV-\d{{4}}-000001 .* \d+ pages +{len(written)} bytes +sha256 {digest}$", result.output, re.M
    )
    record = session.exec(select(ExportRecord)).one()
    assert record.kind == "decision" and record.created_by == "cli" and record.sha256 == digest
    text = "".join(pdf_text(written).split())
    assert "GPUProcurementDecision" in text and NAMES[1] in text
    checked = subprocess.run(["pdfsig", str(output)], capture_output=True, text=True, timeout=60, check=False)
    assert "Signature is Valid." in checked.stdout, checked.stdout + checked.stderr

    again = runner.invoke(
        args=["decision", "export", str(decision.id), "-o", str(tmp_path / "again.pdf"), "--lang", "en"]
    )
    assert again.exit_code == 0 and (tmp_path / "again.pdf").read_bytes() == written  # unchanged: same file
    assert len(session.exec(select(ExportRecord)).all()) == 1


def test_unknown_decision_and_bad_arguments_are_refused(runner, tmp_path):
    output = tmp_path / "x.pdf"
    result = runner.invoke(args=["decision", "export", "424242", "-o", str(output)])
    assert result.exit_code == 1 and "采购决定 424242 不存在" in result.output and not output.exists()
    result = runner.invoke(args=["decision", "export", "1", "-o", str(output), "--lang", "fr"])
    assert result.exit_code == 2 and "'fr' is not one of" in result.output
    for value in ("0", str(MAX_ID + 1), "9" * 5000):
        result = runner.invoke(args=["decision", "export", value, "-o", str(output)])
        assert result.exit_code == 2 and "Invalid value" in result.output
    assert runner.invoke(args=["decision", "export", "1"]).exit_code == 2  # -o is required
