"""Screenshot pages as a user sees them, in Chinese and English at 1366 px, against a fresh demo instance.

  .venv/bin/python scripts/screenshots.py --out /tmp/shots [--port 5055] [--width 1366] /providers ...

Starts gunicorn (and a worker) on a temporary SQLite instance with the demo data and an admin account,
logs in, and writes OUT/<path>-zh.png and OUT/<path>-en.png for each path.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
ADMIN, PASSWORD = "reviewer", "Quiet-Lantern-Harbor-2026!"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def _flask(env: dict[str, str], *args: str, stdin: str | None = None) -> None:
    subprocess.run(
        [str(ROOT / ".venv/bin/flask"), "--app", "wsgi", *args],
        env=env,
        cwd=ROOT,
        input=stdin,
        text=True,
        check=True,
        capture_output=True,
    )


def _serve(env: dict[str, str], port: int) -> list[subprocess.Popen]:
    """Start gunicorn and the job worker; wait (at most 30 s) until the login page answers."""
    server = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "-c",
            "gunicorn.conf.py",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "wsgi:app",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [str(ROOT / ".venv/bin/flask"), "--app", "wsgi", "worker"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/login", timeout=1).ok:
                return [server, worker]
        except requests.RequestException:
            time.sleep(0.3)
    raise SystemExit("the server did not start within 30 s")


def _name(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_") or "home"


def shoot(paths: list[str], out: Path, port: int, width: int) -> None:
    """Write a zh and an en screenshot of every path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as instance:
        env = {
            **os.environ,
            "GPUVET_INSTANCE_PATH": instance,
            "DATABASE_URL": f"sqlite:///{instance}/db.sqlite3",
        }
        _flask(env, "db", "upgrade")
        _flask(env, "demo", "load")
        _flask(env, "users", "create", ADMIN, "--role", "admin", "--password-stdin", stdin=PASSWORD)
        processes = _serve(env, port)
        base = f"http://127.0.0.1:{port}"
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(f"{base}/login")
                page.fill("input[name=username]", ADMIN)
                page.fill("input[name=password]", PASSWORD)
                page.click("button[type=submit]")
                for language in ("zh", "en"):
                    page.goto(f"{base}/lang/{language}")
                    for path in paths:
                        page.goto(base + path)
                        target = out / f"{_name(path)}-{language}.png"
                        page.screenshot(path=str(target), full_page=True)
                        print(target)
                browser.close()
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=20)


def main(argv: list[str]) -> None:
    """Command-line entry."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--port", type=int, default=5055)
    parser.add_argument("--width", type=int, default=1366)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    shoot(args.paths, args.out, args.port, args.width)


if __name__ == "__main__":
    main(sys.argv[1:])
