"""Id arguments of CLI commands: out of the INTEGER range is a usage error (exit 2), never a traceback."""

from __future__ import annotations

import pytest

from app.core.limits import MAX_ID

COMMANDS = [
    ["report", "provider", "{id}", "-o", "{out}"],
    ["report", "case", "{id}", "-o", "{out}"],
    ["vet", "check", "{id}"],
    ["bench", "run", "{id}"],
]


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("value", ["99999999999999999999", str(MAX_ID + 1), "0", "9" * 5000])
def test_ids_out_of_range_are_usage_errors(runner, tmp_path, command, value):
    args = [part.format(id=value, out=tmp_path / "x.pdf") for part in command]
    result = runner.invoke(args=args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Invalid value" in result.output
