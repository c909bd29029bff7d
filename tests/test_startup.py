"""Start-up structure: light CLI commands import no heavy library, and the deferred app still works.

How fast start-up is gets measured by perf/startup_perf.py; these tests guard what makes it fast.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import url_for

from app import create_app
from app.core.config import Settings

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# Libraries only some commands, pages or jobs need: PDFs, charts, SSH, the queue, migrations, scraping.
HEAVY = (
    "weasyprint",
    "pygal",
    "paramiko",
    "cryptography",
    "huey",
    "redis",
    "alembic",
    "bs4",
    "fontTools",
    "pyhanko",
)
# The database layer: `vet identify` and `--help` never touch it.
DATABASE = ("sqlalchemy", "sqlmodel")
# What the pages and API import only when a request needs it (cryptography: trial-server secrets, loaded).
WEB_LAZY = ("weasyprint", "pygal", "paramiko", "huey", "redis", "alembic", "fontTools", "pyhanko")
# Models, services, pages and API (app.core.errors, plain exception classes, is allowed).
APP_LAYERS = (
    "app.models",
    "app.registry.",
    "app.credentials.",
    "app.trials.",
    "app.cases.",
    "app.disclosure.",
    "app.notify.",
    "app.accounts.",
    "app.web",
    "app.api",
)
_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)\s*$")


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "GPUVET_INSTANCE_PATH": str(tmp_path / "instance"), "LANG": "C.UTF-8"}


def run_flask(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run `flask --app wsgi ARGS` as the README does, under -X importtime; returns the modules imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "flask", "--app", "wsgi", *args],
        cwd=PROJECT_ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    imported = {match[1] for line in done.stderr.splitlines() if (match := _IMPORT_LINE.match(line))}
    assert imported, done.stderr[-2000:]
    return done, imported


def loaded(imported: set[str], packages: tuple[str, ...]) -> list[str]:
    """The given top-level packages that were imported."""
    return sorted(name for name in packages if name in imported)


def test_vet_identify_imports_no_heavy_library_and_no_database_layer(tmp_path: Path) -> None:
    done, imported = run_flask(tmp_path, "vet", "identify", "ICP证粤B2-20230674号")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)[0]["normalized"] == "粤B2-20230674"
    assert loaded(imported, HEAVY + DATABASE) == []
    layers = sorted(name for name in imported if name.startswith(APP_LAYERS))
    assert layers in ([], ["app.core.errors"])


def test_help_lists_every_command_group_without_importing_heavy_libraries(tmp_path: Path) -> None:
    done, imported = run_flask(tmp_path, "--help")
    assert done.returncode == 0, done.stderr[-3000:]
    commands = set(re.findall(r"^  (\S+)", done.stdout.split("Commands:", 1)[1], re.MULTILINE))
    expected = {"advise", "bench", "db", "demo", "providers", "report", "users", "vet", "worker"}
    assert expected <= commands
    assert loaded(imported, HEAVY + DATABASE) == []


def test_bench_parse_needs_neither_ssh_nor_the_database(tmp_path: Path) -> None:
    sample = PROJECT_ROOT / "tests" / "data" / "bench"
    ping = next(iter(sorted(sample.glob("ping*"))), None)
    if ping is None:
        pytest.fail(f"no saved ping output under {sample}")
    done, imported = run_flask(tmp_path, "bench", "parse", "ping", str(ping))
    assert done.returncode == 0, done.stderr[-3000:]
    assert isinstance(json.loads(done.stdout), list)
    assert loaded(imported, HEAVY + DATABASE) == []


def test_the_web_app_leaves_pdf_chart_ssh_queue_and_migration_libraries_unloaded(tmp_path: Path) -> None:
    """Pages, API and sign-in set up (as a gunicorn worker does) import none of them until used."""
    code = (
        "import sys, json, wsgi; wsgi.app.finish_setup(); "
        f"print(json.dumps([m for m in {list(WEB_LAZY)!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def _settings(tmp_path: Path) -> Settings:
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    return Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=url, SECRET_KEY="test-secret")


def test_deferred_app_sets_itself_up_on_the_first_request(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path), defer_setup=True, TESTING=True)
    assert not flask_app.setup_finished and "web" not in flask_app.blueprints
    response = flask_app.test_client().get("/login")
    assert response.status_code == 200
    assert flask_app.setup_finished and {"web", "api"} <= set(flask_app.blueprints)
    assert "gpuvet.engine" in flask_app.extensions


def test_deferred_app_builds_urls_in_a_request_context(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path), defer_setup=True)
    with flask_app.test_request_context("/"):
        assert url_for("web.login") == "/login"
    assert flask_app.setup_finished


def test_deferred_app_lists_every_route_for_flask_routes(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path), defer_setup=True)
    from flask.cli import routes_command

    result = flask_app.test_cli_runner().invoke(routes_command)
    assert result.exit_code == 0, result.output
    assert "web.login" in result.output and "api.create_provider" in result.output


def test_deferred_cli_app_context_does_not_set_up_the_pages(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path), defer_setup=True)
    result = flask_app.test_cli_runner().invoke(args=["vet", "identify", "京公网安备11010802032137号"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["kind"] == "psb_filing"
    assert not flask_app.setup_finished


def test_concurrent_first_requests_set_up_once(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path), defer_setup=True, TESTING=True)
    calls: list[int] = []
    flask_app.deferred_setup.append(lambda _app: calls.append(1))
    barrier = threading.Barrier(6)
    statuses: list[int] = []

    def first_request() -> None:
        barrier.wait(timeout=30)
        statuses.append(flask_app.test_client().get("/login").status_code)

    threads = [threading.Thread(target=first_request) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == [200] * 6 and calls == [1]


def test_a_failed_set_up_fails_every_request_instead_of_serving_half_an_app(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path), defer_setup=True, TESTING=True)

    def broken(_app: object) -> None:
        raise RuntimeError("set-up broke")

    flask_app.deferred_setup.insert(0, broken)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            flask_app.test_client().get("/login")
    assert "web" not in flask_app.blueprints


def test_create_app_without_deferral_is_complete(tmp_path: Path) -> None:
    flask_app = create_app(_settings(tmp_path))
    assert flask_app.setup_finished and {"web", "api"} <= set(flask_app.blueprints)
    assert any(rule.rule == "/login" for rule in flask_app.url_map.iter_rules())


def test_lazy_choices_load_on_use_and_still_refuse_unknown_values() -> None:
    import click

    from app.cli.common import LazyChoice

    loads: list[int] = []

    def values() -> list[str]:
        loads.append(1)
        return ["json", "csv"]

    @click.command()
    @click.option("--format", "fmt", type=LazyChoice(values), default="json", show_default=True)
    def command(fmt: str) -> None:
        click.echo(fmt)

    assert loads == []
    assert CliRunner().invoke(command, ["--format", "csv"]).output == "csv\n"
    refused = CliRunner().invoke(command, ["--format", "xml"])
    assert refused.exit_code == 2 and "'json', 'csv'" in refused.output
    assert loads == [1]


def test_cli_limits_copied_from_services_match() -> None:
    from app.accounts import users as users_service
    from app.cli import users as users_cli

    assert users_cli.MAX_TOKEN_DAYS == users_service.MAX_TOKEN_DAYS
