"""`flask bench`: parse a saved tool output, or run a suite on a trial server in the foreground."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click
from flask import current_app
from flask.cli import AppGroup

from app.cli.common import RECORD_ID, LazyChoice, cli_session, fail, print_json
from app.core.errors import InvalidInput, ServiceError

if TYPE_CHECKING:
    from benchmarks.suites import Progress

bench_group = AppGroup("bench", help="Trial-server benchmarks: parse tool outputs, run suites.")


class RegistryChoice(LazyChoice):
    """A LazyChoice read from a registry on every use, so a probe registered after start-up is offered too."""

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        """The values registered now."""
        return tuple(self._load())

    @choices.setter
    def choices(self, _value: Any) -> None:
        """click.Choice.__init__ assigns the (empty) values; the registry supplies them instead."""


def _tools() -> list[str]:
    from benchmarks.probes import PARSERS, load_probes

    load_probes()
    return sorted(PARSERS)


def _suites() -> list[str]:
    from benchmarks.suites import SUITES

    return sorted(SUITES)


@bench_group.command("parse")
@click.argument("tool", type=RegistryChoice(_tools))
@click.argument("file", type=click.File("r", encoding="utf-8", errors="replace"))
def parse_command(tool: str, file: Any) -> None:
    """Parse FILE (a saved output of TOOL; - for stdin) and print its samples as a JSON list."""
    from benchmarks.probes import PARSERS
    from benchmarks.sample import ParseError, read_samples

    try:
        samples = read_samples(PARSERS[tool], file.read(), tool)
    except ParseError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    print_json(
        [{"metric": s.metric, "value": s.value, "unit": s.unit, "metadata": s.metadata} for s in samples]
    )


def _params(pairs: tuple[str, ...]) -> dict[str, Any]:
    """NAME=VALUE pairs as a dict (values parsed as JSON when they are JSON, else kept as text)."""
    params: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InvalidInput(f"须为 名称=值 (must be NAME=VALUE): {pair!r}", field="param")
        try:
            params[name] = json.loads(value)
        except ValueError:
            params[name] = value
    return params


@bench_group.command("run")
@click.argument("server_id", type=RECORD_ID)
@click.option("--suite", type=LazyChoice(_suites), default="quick", show_default=True)
@click.option("--param", "pairs", multiple=True, metavar="NAME=VALUE", help="A suite parameter (repeatable).")
def run_command(server_id: int, suite: str, pairs: tuple[str, ...]) -> None:
    """Run SUITE on trial server SERVER_ID here (not on the queue), with a progress bar; prints the result."""
    from app.trials import bench_runs
    from app.trials.server_addresses import address_policy
    from app.trials.servers import cipher_from_settings

    settings = current_app.config["GPUVET_SETTINGS"]
    cipher, policy = cipher_from_settings(settings), address_policy(settings)
    with cli_session() as session:
        try:
            run = bench_runs.create_run(session, server_id=server_id, suite=suite, params=_params(pairs))
        except ServiceError as exc:
            fail(exc)
        total = len(bench_runs.run_steps(session, run_id=run.id))
        with click.progressbar(length=total, label=f"{suite} @ {run.host}", file=sys.stderr) as bar:

            def echo(progress: Progress) -> None:
                if progress.event == "finished":
                    bar.update(1)

            run = bench_runs.execute_run(session, run_id=run.id, cipher=cipher, echo=echo, policy=policy)
        steps = bench_runs.run_steps(session, run_id=run.id)
        print_json(
            {
                "run_id": run.id,
                "state": run.state,
                "error": run.error,
                "steps": [{"step": s.step, "status": s.status, "error": s.error} for s in steps],
                "comparisons": run.comparisons,
            }
        )
    if run.state != "succeeded":
        sys.exit(1)


def _upload_tools() -> list[str]:
    from benchmarks.probes import upload_tools

    return list(upload_tools())


@bench_group.command("upload")
@click.argument("offer_id", type=RECORD_ID)
@click.argument("file", type=click.File("rb"))
@click.option(
    "--tool", required=True, type=RegistryChoice(_upload_tools), help="The tool whose output FILE is."
)
@click.option("--path", type=click.Choice(["intranet", "public", "storage"]), help="What it measured.")
@click.option("--note", default=None, help="A note kept with the run (where and when it was captured).")
def upload_command(offer_id: int, file: Any, tool: str, path: str | None, note: str | None) -> None:
    """Store FILE (a tool output captured by hand, - for stdin) as an uploaded run of OFFER_ID; print JSON."""
    from app.trials import bench_uploads

    data = file.read(bench_uploads.MAX_UPLOAD_BYTES + 1)
    filename = None if file.name in ("<stdin>", "-") else str(file.name).rsplit("/", 1)[-1]
    with cli_session() as session:
        try:
            run = bench_uploads.upload_output(
                session, offer_id=offer_id, tool=tool, output=data, path=path, note=note, filename=filename
            )
        except ServiceError as exc:
            fail(exc)
        print_json(bench_uploads.upload_summary(session, run))


@bench_group.command("refresh-figures")
def refresh_figures_command() -> None:
    """Rebuild the measured figures (bench_figure) of every stored run from its samples; print JSON."""
    from app.trials import bench_figures

    with cli_session() as session:
        print_json(bench_figures.refresh_all(session))
