"""Where tools are required (CI, scripts/test.sh), a test whose tool is missing fails instead of skipping."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REQUIRE_TOOLS_VARIABLES, missing_tool

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# One test per tool, each reached through the fixture or mark that checks for the tool.
TOOL_TESTS = {
    "poppler": "tests/reports/test_fonts.py::test_rare_characters_print_from_the_full_font",
    "redis": "tests/core/jobs/test_redis_workers.py::test_two_workers_share_one_redis_queue[sqlite]",
    "ip netns": "tests/benchmarks/test_shaped_link.py::test_steady_link_is_stable",
    "chromium": "tests/browser/test_provider_flow.py::test_create_provider_with_licence_and_offer_then_find_it",  # noqa: E501
    "postgresql": "tests/migrations/test_migrations.py::test_upgrade_from_empty_matches_models[postgresql]",
}


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in REQUIRE_TOOLS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_missing_tool_skips_where_tools_are_not_required(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    with pytest.raises(pytest.skip.Exception, match="frobnicator"):
        missing_tool("frobnicator is not installed")


@pytest.mark.parametrize("variable", REQUIRE_TOOLS_VARIABLES)
def test_missing_tool_fails_where_tools_are_required(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    _clear(monkeypatch)
    monkeypatch.setenv(variable, "1")
    with pytest.raises(pytest.fail.Exception, match="frobnicator"):
        missing_tool("frobnicator is not installed")


def test_scripts_test_sh_requires_the_tools() -> None:
    script = (PROJECT_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert re.search(r"^export .*\bGPUVET_REQUIRE_TOOLS=1\b", script, re.MULTILINE)


def test_every_tool_test_fails_when_its_tool_is_missing_and_tools_are_required(tmp_path: Path) -> None:
    """One test per tool in a child pytest with no PATH (so no poppler, redis-server or ip), no Chromium
    and no PostgreSQL URL: with GPUVET_REQUIRE_TOOLS set, each fails (in its fixture) naming the tool."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in REQUIRE_TOOLS_VARIABLES and name != "GPUVET_TEST_POSTGRES_URL"
    }
    env |= {
        "PATH": str(tmp_path / "empty-bin"),
        "GPUVET_REQUIRE_TOOLS": "1",
        "GPUVET_TEST_CHROMIUM": str(tmp_path / "no-chromium"),
        "GPUVET_INSTANCE_PATH": str(tmp_path / "instance"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", *TOOL_TESTS.values()],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-4000:]
    assert not re.search(r"\d+ (passed|skipped)", output), output[-4000:]
    for tool, node in TOOL_TESTS.items():
        assert re.search(rf"^(FAILED|ERROR) {re.escape(node)}", output, re.MULTILINE), (tool, output[-4000:])


# The only skips left: missing_tool itself, and a test that is about SQLite's write lock alone.
ALLOWED_SKIPS = {"tests/conftest.py": 1, "tests/registry/test_import_job.py": 1}
_SKIP_NAMES = {"skip", "skipif", "importorskip", "xfail"}


def _skip_calls(tree: ast.AST) -> int:
    """How many `pytest.skip(...)`, `pytest.mark.skipif`, `pytest.importorskip(...)` ... a module has."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _SKIP_NAMES:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            count += isinstance(base, ast.Name) and base.id == "pytest"
    return count


def test_tests_skip_only_through_missing_tool() -> None:
    """A skip for a missing tool goes through missing_tool (which fails where tools are required)."""
    found = {}
    for path in sorted((PROJECT_ROOT / "tests").rglob("*.py")):
        name = str(path.relative_to(PROJECT_ROOT))
        if name == "tests/test_required_tools.py":
            continue
        count = _skip_calls(ast.parse(path.read_text(encoding="utf-8"), filename=name))
        if count:
            found[name] = count
    assert found == ALLOWED_SKIPS
