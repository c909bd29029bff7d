"""Suites (ordered probe steps) and the runner that executes one on a trial server.

`run_suite` records every command's raw output before parsing, parses with the registered pure parsers,
reports progress, honours cancellation between and inside steps, always runs each probe's cleanup, and
stops (status failed) when the SSH connection is lost. It never raises for a probe's failure.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.params import SuiteParams
from benchmarks.plausible import implausible, implausible_message
from benchmarks.probes import PARSERS, load_probes
from benchmarks.probes.base import ProbeContext, ProbeFailed, RawOutput
from benchmarks.sample import ParseError, Sample, read_samples
from benchmarks.ssh import LocalRunner, NotInstalled, Runner, SSHError, SSHRunner, SSHTarget
from benchmarks.ssh_messages import ssh_message

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- suites
@dataclass(frozen=True)
class Step:
    """One probe run within a suite: a unique step name, the probe, and its options."""

    name: str
    probe: str
    options: dict[str, Any] = field(default_factory=dict)


SUITES: dict[str, Callable[[], list[Step]]] = {}


def suite(name: str) -> Callable[[Callable[[], list[Step]]], Callable[[], list[Step]]]:
    """Register a suite definition; a duplicate name raises."""

    def decorator(function: Callable[[], list[Step]]) -> Callable[[], list[Step]]:
        if name in SUITES:
            raise ValueError(f"suite {name!r} is registered twice")
        SUITES[name] = function
        return function

    return decorator


@suite("quick")
def quick() -> list[Step]:
    """Inventory, ping, one iperf3 test, 4k random read, storage type."""
    return [
        Step("inventory", "inventory"),
        Step("ping", "ping"),
        Step("iperf3", "iperf3"),
        Step("fio_randread", "fio", {"mode": "randread"}),
        Step("disk_type", "disk"),
    ]


@suite("standard")
def standard() -> list[Step]:
    """Quick, plus parallel and reverse iperf3, the checkpoint write test and GPU sampling."""
    return [
        *quick(),
        Step("iperf3_parallel", "iperf3", {"parallel": True}),
        Step("iperf3_reverse", "iperf3", {"reverse": True}),
        Step("fio_write", "fio", {"mode": "write"}),
        Step("gpu", "nvidia-smi", {"mode": "sampling"}),
    ]


@suite("gpu")
def gpu() -> list[Step]:
    """What an ML engineer checks: inventory, GPU health, all-reduce, GPUs under load, data loading."""
    return [
        Step("inventory", "inventory"),
        Step("gpu_health", "gpu_health"),
        Step("collective", "collective"),
        Step("gpu", "nvidia-smi", {"mode": "sampling"}),
        Step("dataload", "dataload"),
    ]


@suite("stability")
def stability() -> list[Step]:
    """The throughput test repeated at an interval, to catch bandwidth that sags at peak times."""
    return [Step("inventory", "inventory"), Step("stability", "iperf3", {"purpose": "stability"})]


def suite_steps(name: str) -> list[Step]:
    """The steps of suite `name`; KeyError names the known suites."""
    try:
        return SUITES[name]()
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known: {', '.join(SUITES)}") from None


def resolve(suite: str | Sequence[Step]) -> tuple[str, list[Step]]:
    """(name, steps) of a registered suite name, or ("custom", steps) for a list of steps."""
    if isinstance(suite, str):
        return suite, suite_steps(suite)
    return "custom", list(suite)


# ---------------------------------------------------------------- results
class StepStatus:
    """Step states."""

    pending = "pending"
    running = "running"
    ok = "ok"
    failed = "failed"
    not_installed = "not_installed"
    cancelled = "cancelled"
    skipped = "skipped"


class SuiteStatus:
    """Suite states: succeeded (every step ran; some may have failed), failed (aborted), cancelled."""

    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


@dataclass
class ProbeResult:
    """One step: its raw outputs (verbatim), samples, parse errors and outcome."""

    step: str
    probe: str
    options: dict[str, Any]
    status: str = StepStatus.pending
    outputs: list[RawOutput] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    parse_errors: list[str] = field(default_factory=list)
    error: str | None = None
    missing_tool: str | None = None  # set when the step was not_installed
    started_at: float | None = None
    duration: float = 0.0

    @property
    def exit_codes(self) -> list[int | None]:
        """Exit codes of the measuring commands (those with a parser)."""
        return [output.exit_code for output in self.outputs if output.parser]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "step": self.step,
            "probe": self.probe,
            "options": self.options,
            "status": self.status,
            "outputs": [output.to_dict() for output in self.outputs],
            "samples": [sample.to_dict() for sample in self.samples],
            "parse_errors": list(self.parse_errors),
            "error": self.error,
            "missing_tool": self.missing_tool,
            "started_at": self.started_at,
            "duration": self.duration,
        }


@dataclass
class SuiteResult:
    """A whole run: suite, parameters, status, and the per-step results."""

    suite: str
    params: dict[str, Any]
    host: str
    status: str = SuiteStatus.running
    probes: list[ProbeResult] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None  # SSHError.kind when SSH failed (auth_failed, host_key_changed ...)
    started_at: float = field(default_factory=time.time)
    duration: float = 0.0

    @property
    def samples(self) -> list[Sample]:
        """Every sample of every step."""
        return [sample for probe in self.probes for sample in probe.samples]

    @property
    def missing_tools(self) -> set[str]:
        """Tools that steps found missing."""
        return {probe.missing_tool for probe in self.probes if probe.missing_tool}

    def step(self, name: str) -> ProbeResult:
        """The result of step `name`."""
        return next(probe for probe in self.probes if probe.step == name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "suite": self.suite,
            "params": self.params,
            "host": self.host,
            "status": self.status,
            "error": self.error,
            "error_kind": self.error_kind,
            "started_at": self.started_at,
            "duration": self.duration,
            "probes": [probe.to_dict() for probe in self.probes],
        }


@dataclass(frozen=True)
class Progress:
    """What on_progress receives: position, current step and what it is doing, the partial result."""

    done: int
    total: int
    step: str | None
    event: str  # started, detail, outputs (raw outputs complete, not parsed yet), finished, done
    detail: str
    elapsed: float
    result: SuiteResult


# ---------------------------------------------------------------- runner
def parse_outputs(result: ProbeResult) -> None:
    """Apply each output's registered parser; samples get host, step and command metadata."""
    for output in result.outputs:
        if output.parser is None:
            continue
        parser = functools.partial(PARSERS[output.parser], **output.parse_args)
        try:
            samples = read_samples(parser, output.stdout, output.parser)
        except ParseError as exc:
            note = " (output was truncated at the cap)" if output.truncated else ""
            result.parse_errors.append(f"{output.label}: {exc}{note}")
            continue
        refused = implausible(samples)
        if refused:  # impossible values are not evidence: none of this output's samples is kept
            result.parse_errors += [f"{output.label}: {implausible_message(found)}" for found in refused]
            continue
        extra = {
            "host": output.host,
            "role": output.role,
            "step": result.step,
            "probe": result.probe,
            "command": output.label,
            **{key: value for key, value in output.metadata.items() if value is not None},
        }
        result.samples += [sample.with_metadata(**extra) for sample in samples]


def _outcome(result: ProbeResult) -> str:
    if result.error:
        return StepStatus.failed
    if result.parse_errors:
        result.error = "; ".join(result.parse_errors)
        return StepStatus.failed
    return StepStatus.ok


def run_suite(
    runner: Runner,
    suite: str | Sequence[Step],
    params: SuiteParams | None = None,
    *,
    local: Runner | None = None,
    peer: Runner | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> SuiteResult:
    """Run a suite (by name, or a list of steps) on `runner`; never raises for probe failures."""
    params = params or SuiteParams()
    name, steps = resolve(suite)
    probes = load_probes()
    cancelled = should_cancel or (lambda: False)
    result = SuiteResult(suite=name, params=params.model_dump(mode="json"), host=runner.host)
    result.probes = [ProbeResult(step.name, step.probe, dict(step.options)) for step in steps]
    started = time.monotonic()
    current: dict[str, Any] = {"step": None, "done": 0}

    def report(event: str, detail: str = "") -> None:
        if on_progress is None:
            return
        progress = Progress(
            current["done"], len(steps), current["step"], event, detail, time.monotonic() - started, result
        )
        try:
            on_progress(progress)
        except Exception:  # a broken progress sink must not kill the run
            log.exception("progress callback failed")

    context = ProbeContext(
        target=runner,
        local=local or LocalRunner(),
        params=params,
        peer=peer,
        should_cancel=cancelled,
        on_detail=lambda detail: report("detail", detail),
    )
    instances = [probes[step.probe](**step.options) for step in steps]
    try:
        _look_up_tools(instances, context)
    except SSHError as exc:
        result.status, result.error, result.error_kind = SuiteStatus.failed, str(ssh_message(exc)), exc.kind
    for step, probe, probe_result in zip(steps, instances, result.probes, strict=True):
        if result.status != SuiteStatus.running:
            probe_result.status = StepStatus.skipped
            continue
        if cancelled():
            result.status = SuiteStatus.cancelled
            probe_result.status = StepStatus.skipped
            continue
        current["step"] = step.name
        probe_result.status = StepStatus.running
        probe_result.started_at = time.time()
        report("started")
        context.outputs = probe_result.outputs
        _run_step(probe, context, probe_result, result)
        report("outputs")  # raw outputs are complete: a listener can store them before they are parsed
        parse_outputs(probe_result)
        if probe_result.status == StepStatus.running:
            probe_result.status = StepStatus.cancelled if cancelled() else _outcome(probe_result)
        if probe_result.status == StepStatus.cancelled:
            result.status = SuiteStatus.cancelled
        probe_result.duration = time.time() - probe_result.started_at
        current["done"] += 1
        report("finished", probe_result.status)
    if result.status == SuiteStatus.running:
        result.status = SuiteStatus.succeeded
    result.duration = time.monotonic() - started
    report("done", result.status)
    return result


def _look_up_tools(probes: list[Any], context: ProbeContext) -> None:
    """Ask each machine once for every program the suite will need (and for coreutils timeout)."""
    wanted: dict[str, list[str]] = {"target": ["timeout"]}
    for probe in probes:
        for role, names in probe.tools(context).items():
            wanted.setdefault(role, []).extend(names)
    for role, names in wanted.items():
        context.runner(role).check_tools(names)


def _run_step(probe: Any, context: ProbeContext, probe_result: ProbeResult, result: SuiteResult) -> None:
    """prepare / run / cleanup with errors recorded on the step (and on the suite when SSH is lost)."""
    try:
        probe.prepare(context)
        probe.run(context)
    except NotInstalled as exc:
        probe_result.status = StepStatus.not_installed
        probe_result.error = str(ssh_message(exc))
        probe_result.missing_tool = exc.tool
    except ProbeFailed as exc:
        probe_result.error = str(exc)
    except SSHError as exc:
        probe_result.status = StepStatus.failed
        probe_result.error = str(ssh_message(exc))
        result.status = SuiteStatus.failed
        result.error = f"{probe_result.step}: {exc}"
        result.error_kind = exc.kind
    except Exception as exc:  # a probe bug must not lose the run: record it and go on
        log.exception("probe %s failed unexpectedly", probe_result.probe)
        probe_result.error = f"unexpected error: {exc.__class__.__name__}: {exc}"
    finally:
        try:
            probe.cleanup(context)
        except Exception as exc:  # cleanup problems are reported, never raised
            log.exception("cleanup of %s failed", probe_result.step)
            probe_result.error = (probe_result.error or "") + f" (cleanup failed: {exc})"


def run_on_server(
    target: SSHTarget,
    suite: str | Sequence[Step],
    params: SuiteParams | None = None,
    *,
    peer: SSHTarget | None = None,
    local: Runner | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> SuiteResult:
    """Connect to the target (and peer), run the suite, close; an SSH failure gives a failed result."""
    params = params or SuiteParams()
    runners: list[SSHRunner] = []
    try:
        runners.append(SSHRunner(target).connect())
        if peer is not None:
            runners.append(SSHRunner(peer).connect())
    except SSHError as exc:
        for runner in runners:
            runner.close()
        name, steps = resolve(suite)
        failed = SuiteResult(suite=name, params=params.model_dump(mode="json"), host=target.host)
        failed.probes = [
            ProbeResult(step.name, step.probe, dict(step.options), StepStatus.skipped) for step in steps
        ]
        failed.status, failed.error, failed.error_kind = SuiteStatus.failed, str(ssh_message(exc)), exc.kind
        return failed
    try:
        return run_suite(
            runners[0],
            suite,
            params,
            local=local,
            peer=runners[1] if peer is not None else None,
            on_progress=on_progress,
            should_cancel=should_cancel,
        )
    finally:
        for runner in runners:
            runner.close()
