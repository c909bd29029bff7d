"""Tool outputs captured by hand: an analyst uploads the raw output of a registered upload tool (ping,
iperf3, fio, nvidia-smi, dcgmi ... see benchmarks.probes.upload_tools) for an offer, and it becomes a
finished benchmark run with origin "uploaded".

The text is kept verbatim with the SHA-256 of the uploaded bytes, parsed by the probes' own pure parsers
and compared with the offer's claims exactly as an executed run is (benchmarks.compare, thresholds from
app/knowledge/benchmarks.yaml). Output that cannot be read stores nothing: the parser's error names it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import clock
from app.core.errors import FieldError, InvalidInput
from app.core.events import EvidenceChanged, publish
from app.core.i18n import localized
from app.core.records import get_or_404
from app.models import Offer
from app.models.trials import BenchRun, BenchStep, RunOrigin, RunState
from app.trials.bench_runs import claims_of, thresholds
from benchmarks.compare import compare
from benchmarks.plausible import implausible
from benchmarks.probes import get_parser, upload_tools
from benchmarks.sample import ParseError, Sample, read_samples

MAX_UPLOAD_BYTES = 1024 * 1024  # fits bench_runs.MAX_STORED_OUTPUT, so the text is always kept whole
MAX_NOTE = 500
UPLOAD_SUITE = "upload"
PATHS = ("intranet", "public", "storage")
ENCODINGS = ("utf-8-sig", "gb18030")  # GB18030 reads GBK and GB2312 too


@dataclass(frozen=True)
class DecodedOutput:
    """Uploaded output: the text as read, the bytes as received, their SHA-256 and the encoding used."""

    text: str
    raw: bytes
    sha256: str
    encoding: str


# ---------------------------------------------------------------- checking the input
def decode_output(data: bytes | str | None) -> DecodedOutput:
    """The uploaded bytes as text (UTF-8, else GBK); InvalidInput on field "output" when unusable."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data or b"")
    if not raw.strip():
        raise InvalidInput(_("输出为空，请上传文件或粘贴输出"), "output")
    if len(raw) > MAX_UPLOAD_BYTES:
        raise InvalidInput(
            _(
                "输出过大：%(size)s 字节，上限 %(most)s 字节",
                size=format(len(raw), ","),
                most=format(MAX_UPLOAD_BYTES, ","),
            ),
            "output",
        )
    for encoding in ENCODINGS:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" in text:
            raise InvalidInput(_("输出含空字符 NUL，不是文本"), "output")
        return DecodedOutput(text, raw, hashlib.sha256(raw).hexdigest(), encoding.removesuffix("-sig"))
    raise InvalidInput(_("输出须为 UTF-8 或 GBK 文本"), "output")


def _tool_and_path(tool: str, path: str | None) -> tuple[list[FieldError], str | None]:
    """Problems with tool and path, and the path to use."""
    spec = upload_tools().get(tool)
    if spec is None:
        known = ", ".join(upload_tools())
        return [
            FieldError("tool", _("不支持的工具 %(tool)s；可选：%(known)s", tool=repr(tool), known=known))
        ], None
    path = (path or "").strip() or None
    if path is None and spec.path_required:
        choices = " / ".join(spec.paths)
        return [FieldError("path", _("%(tool)s 须指明链路：%(choices)s", tool=tool, choices=choices))], None
    if path is not None and path not in spec.paths:
        accepted = " / ".join(spec.paths) or _("无")
        message = _("%(tool)s 的链路须为 %(accepted)s", tool=tool, accepted=accepted)
        return [FieldError("path", message)], None
    return [], path or (spec.paths[0] if spec.paths else None)


def _note(note: str | None) -> tuple[list[FieldError], str | None]:
    note = (note or "").strip() or None
    if note is not None and len(note) > MAX_NOTE:
        return [FieldError("note", _("备注最多 %(most)s 字", most=MAX_NOTE))], None
    if note is not None and "\x00" in note:
        return [FieldError("note", _("不能包含空字符 NUL"))], None
    return [], note


def get_offer(session: Session, offer_id: int) -> Offer:
    """The offer an upload is for, or NotFound naming offer_id."""
    return get_or_404(session, Offer, offer_id, _("报价 %(id)s 不存在", id=offer_id), field="offer_id")


# ---------------------------------------------------------------- parsing
def parse_upload(tool: str, text: str) -> list[Sample]:
    """Samples of `text` by the tool's registered parser, each plausible; else InvalidInput on "output"."""
    try:
        samples = read_samples(get_parser(upload_tools()[tool].parser), text, tool)
    except ParseError as exc:
        if exc.kind == "tool_error":
            message = _(
                "输出表明 %(tool)s 本身运行失败：%(reason)s；未保存任何内容",
                tool=tool,
                reason=localized(exc.reason),
            )
        else:
            message = _(
                "无法解析 %(tool)s 输出：%(reason)s；未保存任何内容", tool=tool, reason=localized(exc.reason)
            )
        raise InvalidInput(message, "output") from None
    refuse_implausible(tool, samples)
    return samples


def refuse_implausible(tool: str, samples: list[Sample]) -> None:
    """InvalidInput on "output" naming each metric whose value no real machine can show (see
    benchmarks.plausible): such evidence is refused whole, never stored as measured."""
    problems = [
        FieldError(
            "output",
            _(
                "%(tool)s 输出中 %(metric)s 的值 %(value)s 不可信：可接受范围 %(accepted)s；未保存任何内容",
                tool=tool,
                metric=found.metric,
                value=found.shown_value(),
                accepted=found.accepted.describe(found.unit),
            ),
        )
        for found in implausible(samples)
    ]
    if problems:
        raise InvalidInput(problems)


def step_name(tool: str, samples: list[Sample]) -> str:
    """The suite step the upload stands for (iperf3 parallel / reverse, fio write), as in executed runs."""
    return upload_tools()[tool].step_for(samples)


def _with_context(samples: list[Sample], *, tool: str, step: str, path: str | None) -> list[Sample]:
    """Samples with the metadata the suite runner gives executed ones (step, path, purpose ...)."""
    extra = {
        "host": "",
        "role": "upload",
        "step": step,
        "probe": tool,
        "command": f"uploaded {tool}",
        "origin": RunOrigin.uploaded.value,
        "path": path if path != "storage" else None,
        "purpose": upload_tools()[tool].purpose,
    }
    return [sample.with_metadata(**{k: v for k, v in extra.items() if v is not None}) for sample in samples]


# ---------------------------------------------------------------- storing
def _uploader(session: Session, user: Any) -> tuple[int | None, str]:
    if user is not None:
        return user.id, user.username
    return session.info.get("actor", (None, "system"))


def upload_output(
    session: Session,
    *,
    offer_id: int,
    tool: str,
    output: bytes | str | None,
    path: str | None = None,
    note: str | None = None,
    filename: str | None = None,
    user: Any = None,
) -> BenchRun:
    """Store an uploaded tool output as a finished run of the offer, or raise and store nothing."""
    offer = get_offer(session, offer_id)
    problems, path = _tool_and_path(str(tool or ""), path)
    note_problems, note = _note(note)
    problems += note_problems
    try:
        decoded = decode_output(output)
    except InvalidInput as exc:
        problems += exc.errors
    if problems:
        raise InvalidInput(problems)
    parsed = parse_upload(tool, decoded.text)
    step = step_name(tool, parsed)
    derived = upload_tools()[tool].derived(parsed)
    samples = _with_context([*derived, *parsed], tool=tool, step=step, path=path)
    claims = claims_of(offer)
    comparisons = compare(claims, samples, thresholds=thresholds())
    actor_id, actor_name = _uploader(session, user)
    now = clock.now()
    run = BenchRun(
        provider_id=offer.provider_id,
        offer_id=offer.id,
        origin=RunOrigin.uploaded.value,
        uploaded_by_name=actor_name,
        raw_sha256=decoded.sha256,
        suite=UPLOAD_SUITE,
        params={"tool": tool, "path": path, "note": note, "filename": filename},
        state=RunState.succeeded,
        claims=dataclasses.asdict(claims),
        comparisons=[comparison.to_dict() for comparison in comparisons],
        created_by_id=actor_id,
        created_by_name=actor_name,
        started_at=now,
        finished_at=now,
    )
    session.add(run)
    session.flush()
    session.add(_step(run, tool=tool, step=step, path=path, decoded=decoded, samples=samples))
    session.commit()
    session.refresh(run)
    publish(
        session, EvidenceChanged(provider_id=run.provider_id, since=run.finished_at, cause=f"upload {run.id}")
    )
    return run


def _step(
    run: BenchRun, *, tool: str, step: str, path: str | None, decoded: DecodedOutput, samples: list[Sample]
) -> BenchStep:
    """The run's one step: the uploaded text verbatim as its output, and the parsed samples."""
    output = {
        "label": f"uploaded {tool}",
        "role": "upload",
        "host": "",
        "argv": [],
        "exit_code": None,
        "stdout": decoded.text,
        "stderr": "",
        "duration": 0.0,
        "truncated": False,
        "timed_out": False,
        "parser": upload_tools()[tool].parser,
        "parse_args": {},
        "metadata": {"path": path, "sha256": decoded.sha256, "bytes": len(decoded.raw)},
        "encoding": decoded.encoding,
        "started_at": run.started_at.timestamp() if run.started_at else 0.0,
    }
    return BenchStep(
        run_id=run.id,
        position=0,
        step=step,
        probe=tool,
        options={"tool": tool, "path": path},
        status="ok",
        outputs=[output],
        samples=[sample.to_dict() for sample in samples],
    )


# ---------------------------------------------------------------- reading
def is_uploaded(run: BenchRun) -> bool:
    """True for a run made from an uploaded output."""
    return getattr(run, "origin", RunOrigin.executed.value) == RunOrigin.uploaded.value


def upload_summary(session: Session, run: BenchRun) -> dict[str, Any]:
    """What the CLI and API answer for an upload: run id, provenance, sample count, comparisons."""
    steps = session.exec(select(BenchStep).where(BenchStep.run_id == run.id)).all()
    return {
        "run_id": run.id,
        "offer_id": run.offer_id,
        "provider_id": run.provider_id,
        "origin": run.origin,
        "tool": run.params.get("tool"),
        "path": run.params.get("path"),
        "note": run.params.get("note"),
        "uploaded_by": run.uploaded_by_name,
        "sha256": run.raw_sha256,
        "samples": sum(len(step.samples) for step in steps),
        "comparisons": run.comparisons,
    }


def latest_uploads(session: Session, provider_id: int) -> list[BenchRun]:
    """The latest upload per offer, tool, path and the checks it settles (fio random reads and fio writes
    are different evidence), unless gpuvet itself later ran a suite for that offer that measured one of
    the same checks; newest first, in one statement. The findings and the report both read these."""
    runs = session.exec(
        select(BenchRun)
        .where(BenchRun.provider_id == provider_id, BenchRun.state == RunState.succeeded)
        .order_by(col(BenchRun.id).desc())
    ).all()
    return pick_latest_uploads(runs)


def pick_latest_uploads(runs: Sequence[BenchRun]) -> list[BenchRun]:
    """latest_uploads' choice among one provider's finished runs given newest first."""
    executed_after: dict[int, set[str]] = {}  # per offer: the checks of executed runs newer than this one
    latest: dict[tuple[Any, ...], BenchRun] = {}
    superseded: set[int] = set()
    for run in runs:
        checks = frozenset(comparison["check"] for comparison in run.comparisons or [])
        if run.origin != RunOrigin.uploaded.value:
            if run.offer_id is not None:
                executed_after.setdefault(run.offer_id, set()).update(checks)
            continue
        key = (run.offer_id, run.params.get("tool"), run.params.get("path"), checks)
        if key not in latest:
            latest[key] = run
            if run.offer_id is not None and checks & executed_after.get(run.offer_id, set()):
                superseded.add(run.id)  # type: ignore[arg-type]
    return [run for run in latest.values() if run.id not in superseded]
