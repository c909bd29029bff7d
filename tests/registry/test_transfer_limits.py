"""Issue 9 items 3-5 in imports: nesting depth, huge numbers, list caps, broken CSV quoting and booleans
are problems in the report (CLI, page and service alike), never an exception."""

from __future__ import annotations

import io
import json

import pytest

from app.core.limits import COLLECTION_LIMITS, MAX_JSON_DEPTH
from app.registry.transfer.importing import import_providers
from tests.registry.conftest import BARE, snapshot

DEEP = "[" * 100_000 + "]" * 100_000


def _problems(report):
    return [(p.row, p.field, p.message) for p in report.problems]


def _offers(count: int) -> list[dict[str, object]]:
    return [{"gpu_model": "A100", "gpus_per_node": 1} for _ in range(count)]


def test_json_nested_100000_deep_is_one_file_problem(session):
    report = import_providers(session, data=DEEP, format="json")
    [(row, field, message)] = _problems(report)
    assert (row, field) == (0, "") and f"最多 {MAX_JSON_DEPTH} 层" in message
    assert snapshot(session) == []


def test_json_nested_past_the_limit_names_where(session):
    notes: object = "x"
    for _ in range(MAX_JSON_DEPTH + 2):
        notes = [notes]
    text = json.dumps({"providers": [{**BARE, "notes": notes}]})
    [(_row, field, message)] = _problems(import_providers(session, data=text, format="json"))
    assert field.startswith("providers[0].notes[0]") and f"最多 {MAX_JSON_DEPTH} 层" in message


def test_json_number_too_long_for_int_is_a_file_problem(session):
    text = '[{"legal_name": "示例超长数字有限公司", "registered_capital_cny": ' + "9" * 5000 + "}]"
    [(row, _field, message)] = _problems(import_providers(session, data=text, format="json"))
    assert row == 0 and "JSON 无法解析" in message


def test_json_version_true_is_refused(session):
    text = json.dumps({"format": "gpuvet-providers", "version": True, "providers": [BARE]})
    assert [(p.row, p.field) for p in import_providers(session, data=text, format="json").problems] == [
        (0, "version")
    ]


def test_json_offers_over_the_cap_name_row_field_and_limit(session):
    limit = COLLECTION_LIMITS["offers"]
    text = json.dumps([{**BARE, "offers": _offers(limit + 1)}])
    [(row, field, message)] = _problems(import_providers(session, data=text, format="json", dry_run=True))
    assert (row, field) == (1, "offers") and f"最多 {limit} 项" in message


def test_json_booleans_and_unknown_nested_fields_are_problems(session):
    offers = [
        {"gpu_model": "A100", "gpus_per_node": True},
        {"gpu_model": "A100", "gpus_per_node": 2, "gpus": 8},
    ]
    text = json.dumps([{**BARE, "offers": offers}])
    fields = {p.field for p in import_providers(session, data=text, format="json").problems}
    assert {"offers[0].gpus_per_node", "offers[1].gpus"} <= fields


def test_csv_unbalanced_quote_names_the_row(session):
    text = (
        "legal_name,gpu_model,gpus_per_node\n"
        '示例一有限公司,A100,8\n示例二有限公司,"H800,8\n示例三有限公司,A100,8\n'
    )
    [(row, _field, message)] = _problems(import_providers(session, data=text, format="csv"))
    assert row == 3 and "第 3 行" in message and "引号不成对" in message
    assert snapshot(session) == []


def test_csv_text_after_a_closing_quote_names_the_row(session):
    text = 'legal_name,gpu_model,gpus_per_node\n"示例一有限公司"x,A100,8\n'
    [(row, _field, message)] = _problems(import_providers(session, data=text, format="csv"))
    assert row == 2 and "第 2 行" in message


def test_csv_numbered_column_with_thousands_of_digits_is_an_unknown_column(session):
    column = "licence_" + "9" * 5000 + "_number_raw"
    text = f"legal_name,{column}\n示例一有限公司,x\n"
    report = import_providers(session, data=text, format="csv")
    assert [(p.row, p.field) for p in report.problems] == [(1, column)]


def test_csv_offers_over_the_cap_name_the_limit(session):
    limit = COLLECTION_LIMITS["offers"]
    buffer = io.StringIO()
    buffer.write("legal_name,gpu_model,gpus_per_node\n")
    buffer.writelines(f"示例一有限公司,A100,{1 + i % 8}\n" for i in range(limit + 1))
    report = import_providers(session, data=buffer.getvalue(), format="csv", dry_run=True)
    assert any(p.field == "offers" and f"最多 {limit} 项" in p.message for p in report.problems)


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def test_cli_import_of_deep_json_exits_1_with_the_message(runner, tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(DEEP, encoding="utf-8")
    result = runner.invoke(args=["providers", "import", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert f"最多 {MAX_JSON_DEPTH} 层" in result.output


def test_web_import_of_deep_json_is_a_422_page(login):
    client = login("analyst")
    data = {"file": (io.BytesIO(DEEP.encode()), "deep.json")}
    response = client.post("/transfer/import", data=data, content_type="multipart/form-data")
    assert response.status_code == 422
    assert f"最多 {MAX_JSON_DEPTH} 层" in response.get_data(as_text=True)
