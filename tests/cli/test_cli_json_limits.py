"""`flask advise FILE` with absurd JSON: a message naming the limit and exit 1, never a traceback."""

from __future__ import annotations

import json

import pytest

from app.core.limits import MAX_JSON_DEPTH


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, f"最多 {MAX_JSON_DEPTH} 层"),
        (
            json.dumps({"workload": [[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]}),
            f"最多 {MAX_JSON_DEPTH} 层",
        ),
        ('{"gpus": ' + "9" * 5000 + "}", "malformed JSON"),
    ],
    ids=["100000 deep", "past the limit", "4301+ digits"],
)
def test_advise_refuses_unreadable_json_with_exit_1(runner, tmp_path, text, expected):
    path = tmp_path / "answers.json"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(args=["advise", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert expected in result.output
