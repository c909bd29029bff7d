"""What a probe is (prepare / run / cleanup) and the context it runs commands through.

Probes never parse: every command goes through `ProbeContext.execute`, which stores the raw output
verbatim (with the name of the pure parser to apply later) before anything reads it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from benchmarks.messages import message as _
from benchmarks.params import SuiteParams
from benchmarks.ssh import DEFAULT_MAX_OUTPUT, CommandResult, Runner

TARGET, PEER, LOCAL = "target", "peer", "local"


@dataclass
class RawOutput:
    """One command as it ran: where, what, and its output verbatim; `parser` names how to read it."""

    label: str
    role: str
    host: str
    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    truncated: bool = False
    timed_out: bool = False
    parser: str | None = None
    parse_args: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    started_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__} | {"argv": list(self.argv)}


@dataclass
class ProbeContext:
    """The machines a probe may use, the suite parameters, and the hooks back to the suite runner."""

    target: Runner
    local: Runner
    params: SuiteParams
    peer: Runner | None = None
    should_cancel: Callable[[], bool] = lambda: False
    on_detail: Callable[[str], None] = lambda detail: None
    outputs: list[RawOutput] = field(default_factory=list)
    versions: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def target_address(self) -> str:
        """Address the gpuvet host uses to reach the target."""
        return self.params.target_address or self.target.host

    @property
    def peer_address(self) -> str:
        """Address the target uses to reach the peer."""
        if self.peer is None:
            raise ValueError("no peer server")
        return self.params.peer_address or self.peer.host

    def runner(self, role: str) -> Runner:
        """The runner playing `role` (target, peer or local)."""
        runner = {TARGET: self.target, PEER: self.peer, LOCAL: self.local}[role]
        if runner is None:
            raise ValueError(f"no {role} server")
        return runner

    def execute(
        self,
        role: str,
        label: str,
        argv: Sequence[str],
        *,
        timeout: float,
        parser: str | None = None,
        parse_args: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> CommandResult:
        """Run `argv` on `role` and record its output verbatim before anyone parses it."""
        runner = self.runner(role)
        started_at = time.time()
        result = runner.run(argv, timeout=timeout, max_output=max_output)
        self.outputs.append(
            RawOutput(
                label=label,
                role=role,
                host=runner.host,
                argv=result.argv,
                exit_code=result.exit_code,
                stdout=result.stdout,
                stderr=result.stderr,
                duration=result.duration,
                truncated=result.truncated,
                timed_out=result.timed_out,
                parser=parser,
                parse_args=dict(parse_args or {}),
                metadata=dict(metadata or {}),
                started_at=started_at,
            )
        )
        return result

    def tool_version(self, role: str, argv: Sequence[str]) -> str:
        """First line of the tool's version output on `role` (cached; empty when it prints none)."""
        key = (role, argv[0])
        if key not in self.versions:
            result = self.runner(role).run(argv, timeout=15, max_output=4096)
            text = (result.stdout or result.stderr).strip()
            self.versions[key] = text.splitlines()[0].strip() if text else ""
        return self.versions[key]

    def sleep(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when cancelled; True when the run was cancelled."""
        end = time.monotonic() + seconds
        while (remaining := end - time.monotonic()) > 0:
            if self.should_cancel():
                return True
            time.sleep(min(remaining, 0.2))
        return self.should_cancel()


class ProbeFailed(Exception):
    """The probe could not measure (a command failed or timed out); the message says which and why."""


class Probe:
    """A benchmark step: prepare (checks, temp files), run (commands), cleanup (always called)."""

    name: ClassVar[str]
    tool: ClassVar[str]

    def __init__(self, **options: Any) -> None:
        self.options = options

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """Programs the probe needs, per role; the suite runner looks them all up in one round trip."""
        return {}

    def prepare(self, ctx: ProbeContext) -> None:
        """Check tools and create what the run needs; raises NotInstalled when a tool is missing."""
        for role, names in self.tools(ctx).items():
            ctx.runner(role).require(*names)

    def run(self, ctx: ProbeContext) -> None:
        """Run the measuring commands through `ctx.execute`."""
        raise NotImplementedError

    def cleanup(self, ctx: ProbeContext) -> None:
        """Remove temporary files and stop servers; must be safe after a failed prepare or run."""

    def estimated_seconds(self, params: SuiteParams) -> float:
        """Rough duration, for progress display."""
        return 2.0


def check_result(result: CommandResult, what: str, *, ok_codes: tuple[int, ...] = (0,)) -> None:
    """Raise ProbeFailed when `result` timed out or exited with a code outside `ok_codes`."""
    if result.timed_out:
        raise ProbeFailed(_("%(what)s 在 %(seconds).0f 秒后超时", what=what, seconds=result.duration))
    if result.exit_code not in ok_codes:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise ProbeFailed(
            _(
                "%(what)s 以状态 %(code)s 退出：%(detail)s",
                what=what,
                code=result.exit_code,
                detail=detail[-1] if detail else "",
            )
        )
