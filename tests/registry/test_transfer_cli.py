"""`flask providers export/import`: the preview as JSON on stdout, --apply writes it all or nothing."""

from __future__ import annotations

import json

import pytest

from app.registry.providers import create_provider
from tests.registry.conftest import BARE, awkward, snapshot


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def _json_part(output: str) -> dict:
    """The JSON document the command prints (stdout; the summary line goes to stderr)."""
    return json.loads(output[: output.rindex("}") + 1])


def test_import_prints_the_preview_and_writes_only_with_apply(runner, session, tmp_path):
    create_provider(session, data=awkward())
    create_provider(session, data=BARE)
    path = tmp_path / "registry.csv"
    result = runner.invoke(
        args=["providers", "export", "--format", "csv", "--headers", "zh", "-o", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert path.read_text(encoding="utf-8-sig").startswith("供应商ID,企业名称,")

    result = runner.invoke(args=["providers", "import", str(path)])
    assert result.exit_code == 0, result.output
    preview = _json_part(result.stdout)
    assert preview["unchanged"] == 2 and preview["updated"] == 0 and preview["plans"] == []

    text = path.read_text(encoding="utf-8-sig").replace("北京市通信管理局", "河北省通信管理局", 1)
    path.write_text(text, encoding="utf-8-sig")
    before = snapshot(session)
    preview = _json_part(runner.invoke(args=["providers", "import", str(path)]).stdout)
    [plan] = preview["plans"]
    assert plan["action"] == "update"
    assert [(c["collection"], c["number"], c["field"], c["old"], c["new"]) for c in plan["changes"]] == [
        ("licences", 1, "issuer", "北京市通信管理局", "河北省通信管理局")
    ]
    assert snapshot(session) == before

    result = runner.invoke(args=["providers", "import", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    assert _json_part(result.stdout)["applied"] is True
    [stored] = [p for p in snapshot(session) if p["licences"]]
    assert stored["licences"][0]["issuer"] == "河北省通信管理局"


def test_refused_rows_exit_1_with_row_and_field(runner, session, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("企业名称,注册省份\n示例有限公司,火星\n", encoding="utf-8")
    result = runner.invoke(args=["providers", "import", str(path), "--apply"])
    assert result.exit_code == 1
    report = _json_part(result.stdout)
    assert [(p["row"], p["field"]) for p in report["problems"]] == [(2, "注册省份")]
    assert snapshot(session) == []
