"""Compare what two revisions say for the same data: demo reports' PDF text, the OpenAPI document, CLI help.

`python scripts/same_output.py [BASE]` checks out BASE (default: the commit before issue 25's move) into a
temporary worktree, builds a fresh demo database in each tree with this virtualenv, and diffs the outputs with
times, hashes and report numbers masked. Exit 0 when everything reads the same, else 1 with a diff.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
DEFAULT_BASE = "bc9d854"  # main before the domain packages (issue 25)
CLI_HELP = (
    ("--help",),
    ("providers", "--help"),
    ("bench", "--help"),
    ("bench", "run", "--help"),
    ("report", "--help"),
    ("vet", "--help"),
)
OPENAPI = (
    "from app import create_app\n"
    "import json, sys\n"
    "app = create_app()\n"
    "print(json.dumps(app.test_client().get('/api/v1/openapi.json').get_json(), sort_keys=True, indent=1))\n"
)
MASKS = (
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<hex>"),  # hashes, also when the PDF wraps them over two lines
    (
        re.compile(
            r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?([+-]\d{2}:?\d{2}|Z| \(?UTC[+-]\d+\)?)?"
        ),
        "<time>",
    ),
    (re.compile(r"\d{4}-\d{2}-\d{2}"), "<date>"),
    (re.compile(r"\d{4}年\d{1,2}月\d{1,2}日"), "<date>"),
    (re.compile(r"GV-\d{4}-\d+|No\. ?\d+"), "<number>"),
    (re.compile(r"\d+(\.\d+)? ?(秒|s|ms|毫秒) ?(前|ago)"), "<age>"),
    (re.compile(r"\bapp(\.[a-z_]+)+"), "<module>"),  # module paths named in docstrings moved with issue 25
)


def run(tree: Path, *args: str, env: dict[str, str]) -> str:
    """Run a command in `tree`; its stdout, or a failure that names the command."""
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode:
        raise SystemExit(f"{tree}: {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def outputs(tree: Path, instance: Path) -> dict[str, str]:
    """Every compared output of one tree, masked."""
    env = {**os.environ, "GPUVET_INSTANCE_PATH": str(instance), "FLASK_APP": "wsgi", "LANG": "C.UTF-8"}
    env.pop("GPUVET_DATABASE_URL", None)
    flask = (str(PYTHON), "-m", "flask")
    run(tree, *flask, "db", "upgrade", env=env)
    run(tree, *flask, "demo", "load", env=env)
    found: dict[str, str] = {}
    for kind, record in (("provider", "1"), ("case", "1")):
        for lang in ("zh", "en"):
            pdf = instance / f"{kind}-{lang}.pdf"
            run(tree, *flask, "report", kind, record, "-o", str(pdf), "--lang", lang, env=env)
            text = run(tree, "pdftotext", "-layout", str(pdf), "-", env=env)
            found[f"{kind} report {record} ({lang})"] = text
    found["openapi.json"] = run(tree, str(PYTHON), "-c", OPENAPI, env=env)
    for args in CLI_HELP:
        found["flask " + " ".join(args)] = run(tree, *flask, *args, env=env)
    return {name: mask(text) for name, text in found.items()}


def mask(text: str) -> str:
    """The text with times, hashes, dates and report numbers replaced by placeholders."""
    for pattern, placeholder in MASKS:
        text = pattern.sub(placeholder, text)
    return re.sub(r"[ \t]+", " ", text)  # the PDF layout's spacing follows the masked widths


def main() -> int:
    """Build both trees' outputs and print their differences."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", nargs="?", default=DEFAULT_BASE, help="the revision to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuvet-same-") as scratch:
        before_tree = Path(scratch) / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(before_tree), args.base],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            before = outputs(before_tree, Path(scratch) / "before-instance")
            after = outputs(ROOT, Path(scratch) / "after-instance")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before_tree)], cwd=ROOT, check=False)
    different = 0
    for name in before:
        if before[name] != after.get(name):
            different += 1
            diff = difflib.unified_diff(
                before[name].splitlines(),
                after.get(name, "").splitlines(),
                f"{name} @ {args.base}",
                f"{name} @ working tree",
                lineterm="",
                n=1,
            )
            print("\n".join(diff))
    print(json.dumps({"compared": len(before), "different": different}))
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
