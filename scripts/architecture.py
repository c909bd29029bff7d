"""Measure the structure of the product: imports up the layers, import circles, folder shares, module sizes.

Run `python scripts/architecture.py` from the project root; it prints the figures of issue 25's targets and
exits 1 when one is missed (`--no-fail` only prints). Every import counts, also those inside functions.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("app", "benchmarks", "scrapers")

# Lower number = lower layer. A module may import its own layer or lower ones; anything else runs up.
LAYERS = {
    "app.core": 0,
    "app.models": 1,
    # the core services that read or write rows sit with the models
    "app.core.audit": 1,
    "app.core.jobs": 1,
    "app.core.versions": 1,
    "app.core.vocabulary": 1,
    "benchmarks": 2,
    "scrapers": 2,
    "app.vetting": 2,
    "app.advice": 2,
    "app.reports": 3,
    "app.registry": 4,
    "app.credentials": 4,
    "app.trials": 4,
    "app.cases": 4,
    "app.disclosure": 4,
    "app.notify": 4,
    "app.accounts": 4,
    "app.web": 5,
    "app.api": 5,
    "app.cli": 5,
    "app.worker": 5,  # the queue's process, started like the CLI
    "app.factory": 5,  # builds the app from the pages, the API and the CLI
    "app": 6,
}

TARGETS = {"upward": 2, "circle": 2, "folder_share": 0.15, "module_lines": 600, "flask_in_pure": 0}


def module_name(path: Path) -> str:
    """The dotted module name of a product file."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_files() -> list[Path]:
    """Every Python file of the product, sorted."""
    return sorted(p for top in PRODUCT for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The product modules a file imports, resolved to the nearest known module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for name in names:
            target = nearest_module(name, modules)
            if target and target != own:
                found.add(target)
    return found


def nearest_module(name: str, modules: set[str]) -> str | None:
    """The longest known module that is `name` or a prefix of it."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def layer_of(module: str) -> int:
    """The layer of a module: the longest matching prefix in LAYERS."""
    best = ""
    for prefix in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    return LAYERS.get(best, LAYERS["app"])


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    item = stack.pop()
                    on_stack.discard(item)
                    component.append(item)
                    if item == node:
                        break
                result.append(sorted(component))
    return result


def measure() -> dict:
    """Every figure of the targets, with the offenders behind each."""
    files = product_files()
    modules = {module_name(p): p for p in files}
    graph = {name: imported_modules(path, set(modules)) for name, path in modules.items()}
    upward = sorted(
        (src, dst) for src, targets in graph.items() for dst in targets if layer_of(dst) > layer_of(src)
    )
    circles = sorted((c for c in strongly_connected(graph) if len(c) > 1), key=len, reverse=True)
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules.items()}
    total = sum(lines.values())
    folders: dict[str, int] = defaultdict(int)
    for name, path in modules.items():
        parts = path.relative_to(ROOT).parts
        folder = "/".join(parts[:2]) if parts[0] == "app" and len(parts) > 2 else parts[0]
        if folder.endswith(".py"):
            folder = "app (top-level files)"
        folders[folder] += lines[name]
    big = sorted(
        ((n, c) for n, c in lines.items() if n.startswith("app") and c > TARGETS["module_lines"]),
        key=lambda item: -item[1],
    )
    flask_pure = sorted(
        name
        for name, targets in external_imports(modules).items()
        if name.split(".")[0] in ("benchmarks", "scrapers")
        and any(t.split(".")[0].startswith("flask") for t in targets)
    )
    return {
        "upward": upward,
        "circles": circles,
        "total": total,
        "folders": dict(folders),
        "big": big,
        "flask_pure": flask_pure,
    }


def external_imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Top-level names every module imports, product or not."""
    out: dict[str, set[str]] = {}
    for name, path in modules.items():
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module)
        out[name] = names
    return out


def report(figures: dict) -> bool:
    """Print the figures; True when every target is met."""
    ok = True
    upward = figures["upward"]
    print(f"imports up the layers: {len(upward)} (target <= {TARGETS['upward']})")
    for src, dst in upward:
        print(f"  {src} -> {dst}")
    ok &= len(upward) <= TARGETS["upward"]
    largest = max((len(c) for c in figures["circles"]), default=0)
    print(
        f"import circles: {len(figures['circles'])}, largest {largest} files (target <= {TARGETS['circle']})"
    )
    for circle in figures["circles"]:
        print(f"  {len(circle)}: {', '.join(circle)}")
    ok &= largest <= TARGETS["circle"]
    total = figures["total"]
    print(f"product lines: {total}")
    for folder, count in sorted(figures["folders"].items(), key=lambda item: -item[1]):
        share = count / total
        mark = "  <-- over" if share > TARGETS["folder_share"] else ""
        print(f"  {folder:28} {count:6} {share:6.1%}{mark}")
        ok &= share <= TARGETS["folder_share"]
    print(f"modules under app/ over {TARGETS['module_lines']} lines: {len(figures['big'])}")
    for name, count in figures["big"]:
        print(f"  {name}: {count}")
    ok &= not figures["big"]
    print(f"Flask imports in benchmarks/ and scrapers/: {len(figures['flask_pure'])} files")
    for name in figures["flask_pure"]:
        print(f"  {name}")
    ok &= not figures["flask_pure"]
    return ok


def main() -> int:
    """Measure, print, and exit 1 when a target is missed (unless --no-fail)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-fail", action="store_true", help="print only; always exit 0")
    args = parser.parse_args()
    ok = report(measure())
    print("all targets met" if ok else "some targets missed")
    return 0 if ok or args.no_fail else 1


if __name__ == "__main__":
    sys.exit(main())
