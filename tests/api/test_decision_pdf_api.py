"""GET /api/v1/decisions/<id>/pdf: the signed decision document for any signed-in reader, its SHA-256 in a
header, the same file while the decision is unchanged; unknown ids, languages and parameters refused in the
usual error shape; documented in OpenAPI as a PDF."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from sqlmodel import select

from app.api.openapi import build_document
from app.cases import decisions as service
from app.models.reports import ExportRecord
from tests.cases.test_decision_document import decided
from tests.cases.test_decisions import NAMES, body, quote, world  # noqa: F401 - fixture (arranged)
from tests.reports.conftest import needs_poppler, pdf_text, requires_poppler  # noqa: F401 - fixture


@pytest.fixture
def arranged(request) -> dict[str, Any]:
    """tests.cases.test_decisions' world: a case, three providers with one offer each, people of each role."""
    return request.getfixturevalue("world")


@needs_poppler
def test_a_viewer_downloads_the_signed_document(app, session, arranged, token_for):
    decision = decided(session, arranged, 2)
    client, headers = app.test_client(), token_for("viewer")
    response = client.get(f"/api/v1/decisions/{decision.id}/pdf?lang=en", headers=headers)
    assert response.status_code == 200 and response.mimetype == "application/pdf"
    assert response.headers["X-Report-SHA256"] == hashlib.sha256(response.data).hexdigest()
    record = session.exec(select(ExportRecord)).one()
    assert response.headers["Content-Disposition"] == f'attachment; filename="{record.number}.pdf"'
    text = "".join(pdf_text(response.data).split())
    assert "GPUProcurementDecision" in text and NAMES[2] in text and decision.snapshot_sha256 in text
    again = client.get(f"/api/v1/decisions/{decision.id}/pdf?lang=en", headers=headers)
    assert again.data == response.data  # unchanged decision: the same signed file, no new number


def test_refusals_have_the_usual_shape(app, session, arranged, token_for):
    client, headers = app.test_client(), token_for("viewer")
    missing = client.get("/api/v1/decisions/424242/pdf", headers=headers)
    assert missing.status_code == 404 and missing.json["errors"][0]["message"]
    for index in range(3):
        quote(session, arranged, index)
    data = body(arranged, 0)
    decision = service.propose(session, case_id=arranged["case"].id, data=data, actor=arranged["analyst"])
    for query, field in (("lang=fr", "lang"), ("language=en", "language")):
        refused = client.get(f"/api/v1/decisions/{decision.id}/pdf?{query}", headers=headers)
        assert refused.status_code == 422 and refused.json["errors"][0]["field"] == field
    assert client.get(f"/api/v1/decisions/{decision.id}/pdf").status_code == 401  # no token
    assert session.exec(select(ExportRecord)).first() is None


def test_the_openapi_document_says_it_is_a_pdf():
    operation = build_document("/api/v1")["paths"]["/decisions/{decision_id}/pdf"]["get"]
    content = operation["responses"]["200"]["content"]
    assert content == {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}
    assert [param["name"] for param in operation["parameters"] if param["in"] == "query"] == ["lang"]
