"""requirements.txt pins every package the product imports itself, at the version installed; install.sh
names every Debian package the set-up needs."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("app", "scrapers", "benchmarks", "wsgi.py")
REMOTE = PROJECT_ROOT / "benchmarks" / "remote"  # programs shipped to trial servers (their own packages)
PROJECT_PACKAGES = {"app", "scrapers", "benchmarks", "wsgi", "migrations", "tests"}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)(\[[^\]]*\])?==([^\s;]+)\s*$")


def _normalize(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_requirements(path: Path) -> dict[str, str]:
    """{normalized distribution name: version}; a line that is not `name==version` fails the test."""
    pins: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _PIN.match(line)
        assert match, f"{path.name}:{number}: {raw!r} is not pinned as name==version"
        pins[_normalize(match[1])] = match[3]
    return pins


def imported_names(roots: tuple[str, ...] = PRODUCT) -> dict[str, str]:
    """{top-level module name: first file importing it} over every import statement (lazy ones too)."""
    files: list[Path] = []
    for root in roots:
        path = PROJECT_ROOT / root
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    files = [file for file in files if not file.is_relative_to(REMOTE)]  # runs on trial servers, not here
    names: dict[str, str] = {}
    for file in files:
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                names.setdefault(module.split(".")[0], str(file.relative_to(PROJECT_ROOT)))
    return names


def third_party(names: dict[str, str]) -> dict[str, str]:
    """The names that are neither the standard library nor this project."""
    return {
        name: where
        for name, where in names.items()
        if name not in sys.stdlib_module_names and name not in PROJECT_PACKAGES
    }


def test_the_import_scan_sees_lazy_imports_and_ignores_code_in_strings() -> None:
    names = imported_names()
    assert {"flask", "jinja2", "weasyprint", "pygal", "paramiko"} <= set(names)
    assert "torch" not in names  # only inside the remote GPU workload's source text


def test_every_package_the_product_imports_is_pinned() -> None:
    pins = pinned_requirements(PROJECT_ROOT / "requirements.txt")
    distributions = importlib.metadata.packages_distributions()
    unpinned = []
    for name, where in sorted(third_party(imported_names()).items()):
        candidates = distributions.get(name)
        assert candidates, f"{name} (imported in {where}) is not installed in this environment"
        if not any(_normalize(candidate) in pins for candidate in candidates):
            unpinned.append(f"{name} ({' / '.join(candidates)}, imported in {where})")
    assert not unpinned, "imported but not pinned in requirements.txt: " + ", ".join(unpinned)


def test_pins_match_the_installed_versions() -> None:
    mismatched = []
    for name, version in pinned_requirements(PROJECT_ROOT / "requirements.txt").items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            mismatched.append(f"{name}: pinned {version}, installed {installed}")
    assert not mismatched, "; ".join(mismatched)


def test_install_sh_installs_python3_venv() -> None:
    script = (PROJECT_ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    packages = re.search(r"apt_packages=\(([^)]*)\)", script)
    assert packages and "python3-venv" in packages[1].split()
