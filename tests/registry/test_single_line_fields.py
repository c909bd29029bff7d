"""Single-line text fields (names, numbers, addresses, URLs, e-mail, cities ...) refuse line breaks and other
control characters with the field named, on the API, the pages and the import; multi-line fields keep them."""

from __future__ import annotations

import json
import types
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from pydantic import BaseModel
from sqlmodel import select

from app.disclosure import invitations
from app.disclosure import schema as disclosure_schema
from app.models import Provider
from app.models import io as registry_io
from app.models import provider as registry
from app.models.fields import multi_line, single_line
from app.registry.transfer.importing import import_providers
from tests.web.conftest import provider_data

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

BROKEN = "北京示例\r\n算力科技有限公司"
NOT_ONE_LINE = ["\r", "\n", "\r\n", "\x00", "\t", "\x0b", "\x1b", "\x7f", "\x85", "\x9f", "\u2028", "\u2029"]


@pytest.mark.parametrize("character", NOT_ONE_LINE)
def test_single_line_refuses_line_breaks_and_controls_saying_which(character):
    with pytest.raises(ValueError, match=f"U\\+{ord(character[0]):04X}"):
        single_line(f"北京示例{character}有限公司")


def test_single_line_keeps_ordinary_text_and_multi_line_keeps_breaks_and_tabs():
    for text in ("北京示例（算力）有限公司", "Example Ltd.", "１２３", "a b\u3000c", "https://x.cn/a?b=1"):
        assert single_line(text) == text
    assert multi_line("第一行\r\n第二行\t列\x00\x1b\x85") == "第一行\r\n第二行\t列"


def _line_typed(annotation: Any) -> bool:
    """Whether a text annotation is SingleLine or MultiLine (inside Optional/| None too)."""
    if get_origin(annotation) is Annotated:
        funcs = {getattr(meta, "func", None) for meta in annotation.__metadata__}
        return bool(funcs & {single_line, multi_line}) or _line_typed(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return all(_line_typed(arg) for arg in get_args(annotation) if arg is not type(None))
    return annotation is not str


INPUT_MODELS = [
    registry.ProviderBase,
    registry.LicenceBase,
    registry.FilingBase,
    registry.CertificationBase,
    registry.DatacenterBase,
    registry.OfferBase,
    registry_io.ProviderCreate,
    registry_io.OfferIn,
    disclosure_schema.Identity,
    disclosure_schema.DatacenterRow,
    disclosure_schema.OfferRow,
    disclosure_schema.Topology,
    disclosure_schema.Storage,
    disclosure_schema.Trial,
    invitations.InvitationIn,
]


@pytest.mark.parametrize("model", INPUT_MODELS, ids=lambda model: model.__name__)
def test_every_text_field_of_an_input_model_says_single_or_multi_line(model: type[BaseModel]):
    untyped = [
        name
        for name, info in model.model_fields.items()
        if not _line_typed(Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation)
    ]
    assert not untyped, f"{model.__name__}: text fields neither SingleLine nor MultiLine: {untyped}"


def test_the_api_refuses_a_provider_name_with_a_line_break_naming_the_field(app, session, token_for):
    headers = token_for("analyst")
    client = app.test_client()
    data = provider_data(legal_name=BROKEN, notes="第一行\n第二行")
    response = client.post("/api/v1/providers", json=data, headers=headers)
    assert response.status_code == 422, response.json
    errors = {error["field"]: error["message"] for error in response.json["errors"]}
    assert set(errors) == {"legal_name"} and "单行" in errors["legal_name"]
    licence = {"number_raw": "B1-2020\x1b4418"}
    response = client.post("/api/v1/providers", json=provider_data(licences=[licence]), headers=headers)
    assert response.status_code == 422
    assert [error["field"] for error in response.json["errors"]] == ["licences[0].number_raw"]
    notes = "第一行\n\t第二行\x1b"
    created = client.post("/api/v1/providers", json=provider_data(notes=notes), headers=headers)
    assert created.status_code == 201, created.json
    assert session.get(Provider, created.json["id"]).notes == "第一行\n\t第二行"
    assert session.exec(select(Provider)).one().legal_name == provider_data()["legal_name"]


def test_the_page_shows_the_error_at_the_field(login, session):
    client = login("analyst")
    response = client.post("/providers/new", data=provider_data(legal_name=BROKEN))
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    error = html[html.index('id="f-legal_name-error"') :][:400]
    assert "须为单行文本" in error
    assert session.exec(select(Provider)).first() is None


@SQLITE_ONLY
@pytest.mark.parametrize("format", ["json", "csv"])
def test_the_import_preview_names_the_row_and_field(app, session, format):
    if format == "json":
        data = json.dumps([provider_data(), provider_data(legal_name=BROKEN, short_name="二")]).encode()
    else:
        data = f'legal_name,short_name\n上海示例算力有限公司,一\n"{BROKEN}",二\n'.encode()
    with app.app_context():
        report = import_providers(session, data=data, format=format, dry_run=True)
    problems = [(problem.row, problem.field) for problem in report.problems]
    assert problems == [(2 if format == "json" else 3, "legal_name")]
    assert "单行" in report.problems[0].message
