"""Start-up time of the command line, side by side with a bare Flask app's CLI.

Usage:
    .venv/bin/python perf/startup_perf.py [--runs N]

Runs each command N times (default 15) as a subprocess, interleaved round by round so that load on the
machine hits every command alike, and prints the median wall time of each and its ratio to a bare Flask
app's CLI command (a one-command app written to a temporary folder). The gpuvet commands run with a
temporary GPUVET_INSTANCE_PATH, so the working tree's instance folder is left alone. Target (issue 9,
item 12): `flask --app wsgi vet identify X` at most 3x the bare app.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 3.0

BARE_APP = """
import click
from flask import Flask

app = Flask(__name__)


@app.cli.command("identify")
@click.argument("text")
def identify(text):
    click.echo(text)
"""


def _flask_executable() -> str:
    """The `flask` script next to this interpreter (the virtual environment's)."""
    candidate = Path(sys.executable).with_name("flask")
    return str(candidate) if candidate.exists() else "flask"


def commands(bare_dir: Path) -> list[tuple[str, list[str], Path]]:
    """(label, argv, working directory) of each measured command; the bare app comes first."""
    flask = _flask_executable()
    return [
        ("bare Flask CLI (flask --app bare identify X)", [flask, "--app", "bare", "identify", "X"], bare_dir),
        ("flask --app wsgi vet identify X", [flask, "--app", "wsgi", "vet", "identify", "X"], PROJECT_ROOT),
        ("flask --app wsgi --help", [flask, "--app", "wsgi", "--help"], PROJECT_ROOT),
        ('python -c "import wsgi"', [sys.executable, "-c", "import wsgi"], PROJECT_ROOT),
    ]


def run_once(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall time of one run in seconds; a failing command stops the measurement."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return elapsed


def measure(runs: int) -> list[tuple[str, float]]:
    """Median seconds of each command over `runs` interleaved rounds (after one warm-up round)."""
    with tempfile.TemporaryDirectory(prefix="gpuvet-startup-") as tmp:
        bare_dir = Path(tmp) / "bare"
        bare_dir.mkdir()
        (bare_dir / "bare.py").write_text(BARE_APP, encoding="utf-8")
        env = {**os.environ, "GPUVET_INSTANCE_PATH": str(Path(tmp) / "instance")}
        for name in ("FLASK_APP", "PYTHONDONTWRITEBYTECODE"):  # .pyc files as a real install has them
            env.pop(name, None)
        measured = commands(bare_dir)
        times: dict[str, list[float]] = {label: [] for label, _, _ in measured}
        for round_number in range(runs + 1):
            for label, argv, cwd in measured:
                elapsed = run_once(argv, cwd, env)
                if round_number > 0:  # the first round only warms caches and writes .pyc files
                    times[label].append(elapsed)
    return [(label, statistics.median(values)) for label, values in times.items()]


def main() -> None:
    """Measure and print the medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    args = parser.parse_args()
    runs = max(1, min(args.runs, 1000))
    results = measure(runs)
    bare = results[0][1]
    print(f"start-up, median of {runs} runs each (python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    print(f"{'command':<48} {'median ms':>10} {'x bare':>8}")
    for label, seconds in results:
        print(f"{label:<48} {seconds * 1000:>10.1f} {seconds / bare:>8.2f}")
    identify = results[1][1] / bare
    verdict = "meets" if identify <= TARGET_RATIO else "misses"
    print(f"vet identify / bare = {identify:.2f} ({verdict} the target of <= {TARGET_RATIO:.0f}x)")


if __name__ == "__main__":
    main()
