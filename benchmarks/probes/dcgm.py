"""DCGM diagnostics: `dcgmi diag -r 1 -j` where NVIDIA DCGM is installed, one sample per test and GPU.

The JSON layouts read (recordings and where they come from: tests/data/bench/README.md):
- DCGM 2.x: "DCGM GPU Diagnostic" > test_categories > tests > results, a GPU as "gpu_ids": "0" and the
  warning as plain text;
- DCGM 3.x: the same root, a GPU as "gpu_id" (nvvs itself: "gpu_ids" "0,1,2" or a number) and the warnings as
  [{"warning", "error_id", ...}];
- DCGM 4.x: "DCGM Diagnostic" > test_categories, results per entity ("entity_group", "entity_id"), a
  "test_summary" per test, and "metadata" (version, driver) beside the root.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_upload
from benchmarks.probes._json import load_json_object
from benchmarks.sample import ParseError, Sample, ToolError, new_sample

TOOL = "dcgmi"
DIAG_COMMAND = "dcgmi diag -r 1 -j"
DIAG_TIMEOUT_S = 120  # run level 1 (deployment checks) takes seconds; a hung host engine must not hold us
NOT_INSTALLED = "### dcgmi not installed"
RUN_DIAG = f"if command -v dcgmi >/dev/null 2>&1; then {DIAG_COMMAND}; else echo '{NOT_INSTALLED}'; fi"
ROOTS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")  # 4.x, then 2.x / 3.x
STATUSES = {
    "pass": "pass",
    "passed": "pass",
    "warn": "warn",
    "warning": "warn",
    "fail": "fail",
    "failed": "fail",
    "skip": "skip",
    "skipped": "skip",
    "not run": "skip",
}
ACCEPTED_STATUSES = "Pass / Warn / Fail / Skip"
DEPLOYMENT = ("deployment", "software")  # the software checks (driver, libraries, persistence mode ...)
MAX_TEXTS, MAX_TEXT = 5, 300  # warnings kept per result, characters per warning


@register_parser(
    TOOL,
    accepts=_(
        "dcgmi diag -j 的 JSON：DCGM 2.x/3.x 的 “DCGM GPU Diagnostic” 与 4.x 的 “DCGM Diagnostic”，"
        "各含 test_categories"
    ),
)
def parse_dcgm_diag(text: str, *, optional: bool = False) -> list[Sample]:
    """`dcgm_diag` per test and GPU (value pass/warn/fail/skip) and `dcgm_diag_available` (1, or 0 with why).

    `optional` (the probe): dcgmi missing, unable to run or unreadable (cut at the timeout) is a note (0)
    with the reason, not an error that fails the health step; an upload raises.
    """
    if NOT_INSTALLED in text:
        return [_unavailable(installed=False)]
    if not optional:
        return _read(text)
    try:
        return _read(text)
    except ParseError as exc:  # ToolError too
        return [_unavailable(installed=True, error=str(exc.reason)[:MAX_TEXT])]


def _read(text: str) -> list[Sample]:
    """The samples of a whole document; ToolError when dcgmi says it could not run, else ParseError."""
    if "{" not in text:
        reason = _last_error_line(text)
        if reason is None:
            raise ParseError(TOOL, _("输出中没有 JSON 对象"))
        raise ToolError(TOOL, reason[:MAX_TEXT])
    data = load_json_object(text, TOOL)
    root_name = next((name for name in ROOTS if name in data), None)
    if root_name is None:
        raise ParseError(TOOL, _("缺少 %(names)s 对象", names=" / ".join(f"“{name}”" for name in ROOTS)))
    root = data[root_name]
    if not isinstance(root, dict):
        raise ParseError(TOOL, _("%(path)s 的类型不对（%(type)s）", path=root_name, type=type(root).__name__))
    if root.get("runtime_error"):
        raise ToolError(TOOL, str(root["runtime_error"]).strip()[:MAX_TEXT])
    categories = root.get("test_categories")
    if not isinstance(categories, list):
        raise ParseError(TOOL, _("缺少 %(path)s", path=f"{root_name}.test_categories"))
    samples = _results(categories, root_name)
    if not samples:
        raise ParseError(TOOL, _("没有任何测试结果"))
    facts = _facts(data, root)
    samples.append(Sample("dcgm_diag_available", 1.0, "", {**facts, "results": len(samples)}))
    return samples


def _unavailable(*, installed: bool, error: str | None = None) -> Sample:
    """The note that no diagnostic ran: dcgmi missing, or why its output gave none (dcgmi's words)."""
    return Sample("dcgm_diag_available", 0.0, "", {"installed": installed, "error": error})


def _last_error_line(text: str) -> str | None:
    """dcgmi's own error line ("Error: Unable to ...") when it printed no JSON at all."""
    lines = [line.strip() for line in text.splitlines() if line.strip().lower().startswith("error")]
    return lines[-1] if lines else None


def _results(categories: list[Any], root_name: str) -> list[Sample]:
    """One sample per result of every test (nvvs leaves null entries in its arrays: skipped)."""
    samples: list[Sample] = []
    now = time.time()
    for category_index, category in enumerate(categories):
        if not isinstance(category, dict):
            continue
        category_name = str(category.get("category") or "")
        tests = category.get("tests")
        if not isinstance(tests, list):
            where = f"{root_name}.test_categories.{category_index}.tests"
            raise ParseError(TOOL, _("缺少 %(path)s", path=where))
        for test in tests:
            if not isinstance(test, dict):
                continue
            name = str(test.get("name") or "")
            results = [result for result in test.get("results") or [] if isinstance(result, dict)]
            if not results and isinstance(test.get("test_summary"), dict):
                results = [test["test_summary"]]
            for result in results:
                entity, gpus = _entity(result)
                metadata = {
                    "test": name,
                    "category": category_name,
                    "deployment": category_name.lower() in DEPLOYMENT or name.lower() in DEPLOYMENT,
                    "entity": entity,
                    "gpus": gpus,
                    "warnings": _texts(result.get("warnings"), "warning", "warnings"),
                    "info": _texts(result.get("info")),
                }
                if len(gpus) == 1:
                    metadata["gpu_index"] = gpus[0]
                samples.append(new_sample("dcgm_diag", _status(result, name), "", metadata, now))
    return samples


def _status(result: dict[str, Any], test: str) -> str:
    raw = result.get("status")
    status = STATUSES.get(str(raw).strip().lower()) if isinstance(raw, str) else None
    if status is None:
        message = _(
            "测试 %(test)s 的状态 %(status)s 不认识（可为 %(accepted)s）",
            test=test,
            status=repr(raw),
            accepted=ACCEPTED_STATUSES,
        )
        raise ParseError(TOOL, message)
    return status


def _entity(result: dict[str, Any]) -> tuple[str, list[int]]:
    """("GPU 3", [3]) for a 4.x entity or a 2.x/3.x GPU id; ("GPU 0,1", [0, 1]) for nvvs's list; ("", [])."""
    if "entity_id" in result:
        group = str(result.get("entity_group") or "GPU")
        index = _int(result["entity_id"])
        if index is None:
            return f"{group} {result['entity_id']}", []
        return f"{group} {index}", [index] if group.upper() == "GPU" else []
    raw = result.get("gpu_id", result.get("gpu_ids"))
    if raw is None or raw == "":
        return "", []
    parts = [part.strip() for part in str(raw).split(",") if part.strip()]
    gpus = [index for index in (_int(part) for part in parts) if index is not None]
    return "GPU " + ",".join(parts), gpus


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _texts(value: Any, *keys: str) -> list[str]:
    """Warning or info texts: a string, a list of strings, or a list of {"warning": ...} objects."""
    items = value if isinstance(value, list) else [value]
    texts = []
    for item in items:
        if isinstance(item, dict):
            item = next((item[key] for key in keys if isinstance(item.get(key), str)), None)
        if isinstance(item, str) and item.strip():
            texts.append(" ".join(item.split())[:MAX_TEXT])
        if len(texts) == MAX_TEXTS:
            break
    return texts


def _facts(data: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """DCGM and driver versions: in 4.x under "metadata" beside the root, before that in or beside it."""
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    places = (metadata, root, data)
    version = next((place["version"] for place in places if isinstance(place.get("version"), str)), None)
    driver = next(
        (
            place[key]
            for place in places
            for key in ("Driver Version Detected", "driver_version_detected")
            if isinstance(place.get(key), str)
        ),
        None,
    )
    return {"dcgm_version": version, "driver_version": driver}


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(UploadTool("dcgmi", TOOL, "gpu_health", (), DIAG_COMMAND, order=90))
