"""The one place that runs commands on trial servers: SSH (paramiko), and locally a subprocess.

Every command is an argv list, joined with shlex quoting, so no caller-supplied value reaches a shell
unquoted. Every command has a timeout (enforced on the server with coreutils `timeout` when it is there,
and always locally) and an output cap. Host keys are pinned by SHA256 fingerprint: an unknown key is
refused with its fingerprint so that an analyst can confirm and pin it; a changed key is refused loudly.

paramiko (and the cryptography it loads) is imported inside the functions that open SSH connections, so
parsers, probes and the app's other commands do not pay for it.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import hmac
import io
import logging
import os
import select
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    import paramiko

log = logging.getLogger(__name__)

DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024  # bytes kept per stream; the rest is read and dropped
KILL_AFTER_S = 5  # `timeout -k`: how long a command may ignore SIGTERM before SIGKILL
LOCAL_GRACE_S = KILL_AFTER_S + 5  # local deadline beyond the command's own timeout
EXIT_NOT_INSTALLED = 127
EXIT_TIMED_OUT = 124  # coreutils timeout
EXIT_KILLED = 137  # 128 + SIGKILL, coreutils timeout -k
# Prints the names (its arguments) that are not on PATH, one per line.
FIND_TOOLS = 'for t in "$@"; do command -v "$t" >/dev/null 2>&1 || echo "$t"; done; exit 0'


# ---------------------------------------------------------------- errors
class SSHError(Exception):
    """A trial server could not be reached or used; `kind` says why in one word."""

    kind = "ssh"

    def __init__(
        self, message: str, *, host: str = "", port: int = 0, reason: str = "", detail: str = ""
    ) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
        self.reason = reason  # a finer cause within the kind (resolve, no_route, handshake, method ...)
        self.detail = detail  # a value the cause names (the login methods the server accepts ...)


class ConnectionRefused(SSHError):
    """Nothing listens on the port (TCP reset)."""

    kind = "refused"


class Unreachable(SSHError):
    """No route to the host, the name does not resolve, or nothing answered within the timeout."""

    kind = "unreachable"


class ConnectTimeout(Unreachable):
    """The TCP connection or the SSH handshake did not finish within the timeout."""

    kind = "timeout"


class AuthenticationFailed(SSHError):
    """The server refused the key or password."""

    kind = "auth_failed"


class UnknownHostKey(SSHError):
    """The server's host key is not pinned yet: confirm `fingerprint` out of band, then pin it."""

    kind = "unknown_host_key"

    def __init__(self, *, host: str, port: int, key_type: str, fingerprint: str) -> None:
        super().__init__(
            f"host key of {host}:{port} is not pinned: {key_type} {fingerprint}; confirm it with the "
            "provider (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the server) and pin it",
            host=host,
            port=port,
        )
        self.key_type = key_type
        self.fingerprint = fingerprint


class HostKeyChanged(SSHError):
    """The server presented a different key than the pinned one: possible interception or reinstall."""

    kind = "host_key_changed"

    def __init__(self, *, host: str, port: int, key_type: str, expected: str, fingerprint: str) -> None:
        super().__init__(
            f"HOST KEY CHANGED for {host}:{port}: pinned {expected}, server presented {key_type} "
            f"{fingerprint}. Refusing to connect: the server was reinstalled or someone is in between; "
            "confirm with the provider before pinning the new key",
            host=host,
            port=port,
        )
        self.key_type = key_type
        self.expected = expected
        self.fingerprint = fingerprint


class Disconnected(SSHError):
    """The connection dropped while a command was running."""

    kind = "disconnected"


class InvalidKey(SSHError):
    """The private key text could not be loaded (format or passphrase)."""

    kind = "invalid_key"


class NotInstalled(Exception):
    """A tool a probe needs is not on the server's PATH."""

    def __init__(self, tool: str, host: str) -> None:
        super().__init__(f"{tool} is not installed on {host} (not found on PATH)")
        self.tool = tool
        self.host = host


# ---------------------------------------------------------------- results
@dataclass(frozen=True)
class CommandResult:
    """What one command did: its argv, exit code (None when killed or lost), output and timing."""

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    truncated: bool = False
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """True when the command exited 0 within its timeout."""
        return self.exit_code == 0 and not self.timed_out

    @property
    def not_installed(self) -> bool:
        """True when the shell could not find the program (exit status 127)."""
        return self.exit_code == EXIT_NOT_INSTALLED


def host_key_fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH-style SHA256 fingerprint of a public key, as `ssh-keygen -lf` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def normalize_fingerprint(text: str) -> str:
    """Accept `SHA256:abc`, `abc` or an `ssh-keygen -lf` line and return `SHA256:abc`."""
    for token in text.split():
        if token.startswith("SHA256:"):
            return token
    value = text.strip()
    return value if value.startswith("SHA256:") else f"SHA256:{value.rstrip('=')}"


def shell_join(argv: Sequence[str]) -> str:
    """Quote an argv list for a POSIX shell; the only way commands become shell text."""
    if not argv:
        raise ValueError("empty command")
    return shlex.join(str(arg) for arg in argv)


class _Capture:
    """Keeps the first `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = self.limit - len(self.buffer)
        if room > 0:
            self.buffer += data[:room]
        self.dropped += max(0, len(data) - max(room, 0))

    def text(self) -> str:
        return self.buffer.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- runners
class Runner(Protocol):
    """What probes need from a machine: run an argv with a timeout and an output cap."""

    host: str

    def run(
        self, argv: Sequence[str], *, timeout: float, max_output: int = DEFAULT_MAX_OUTPUT
    ) -> CommandResult: ...

    def has_tool(self, name: str) -> bool: ...

    def check_tools(self, names: Sequence[str]) -> dict[str, bool]: ...

    def require(self, *names: str) -> None: ...


class BaseRunner:
    """Shared helpers: tool look-up through `command -v`, cached per runner."""

    host = ""

    def __init__(self) -> None:
        self._tools: dict[str, bool] = {}

    def run(
        self, argv: Sequence[str], *, timeout: float, max_output: int = DEFAULT_MAX_OUTPUT
    ) -> CommandResult:
        """Run `argv`; subclasses implement it."""
        raise NotImplementedError

    def has_tool(self, name: str) -> bool:
        """True when `name` is on the machine's PATH."""
        return self.check_tools([name])[name]

    def check_tools(self, names: Sequence[str]) -> dict[str, bool]:
        """Which of `names` are on PATH, asked in one round trip for those not known yet (cached)."""
        unknown = [name for name in dict.fromkeys(names) if name not in self._tools]
        if unknown:
            result = self._run_unwrapped(["sh", "-c", FIND_TOOLS, "sh", *unknown], timeout=15)
            if result.exit_code != 0:
                raise SSHError(
                    f"cannot look up tools on {self.host}: {result.stderr.strip()[-200:]}", host=self.host
                )
            missing = set(result.stdout.split())
            self._tools.update({name: name not in missing for name in unknown})
        return {name: self._tools[name] for name in names}

    def _run_unwrapped(self, argv: Sequence[str], *, timeout: float) -> CommandResult:
        """Run without any wrapper (subclasses that wrap commands override this)."""
        return self.run(argv, timeout=timeout)

    def require(self, *names: str) -> None:
        """Raise NotInstalled for the first tool in `names` that is missing."""
        found = self.check_tools(names)
        for name in names:
            if not found[name]:
                raise NotInstalled(name, self.host)


@dataclass(frozen=True)
class SSHTarget:
    """How to reach a trial server. `host_key_fingerprint` is the pinned SHA256 fingerprint, if any."""

    host: str
    port: int = 22
    username: str = "root"
    password: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)  # PEM / OpenSSH private key text
    passphrase: str | None = field(default=None, repr=False)
    host_key_fingerprint: str | None = None
    connect_timeout: float = 10.0


class _PinnedKeyPolicy:
    """Accept only the pinned fingerprint; we never consult known_hosts files.

    A paramiko missing-host-key policy: paramiko only calls missing_host_key, so this need not subclass
    paramiko.MissingHostKeyPolicy (which would import paramiko with this module).
    """

    def __init__(self, target: SSHTarget) -> None:
        self.target = target
        self.seen: tuple[str, str] | None = None

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        fingerprint = host_key_fingerprint(key)
        self.seen = (key.get_name(), fingerprint)
        pinned = self.target.host_key_fingerprint
        where = {"host": self.target.host, "port": self.target.port, "key_type": key.get_name()}
        if not pinned:
            raise UnknownHostKey(fingerprint=fingerprint, **where)
        expected = normalize_fingerprint(pinned)
        if not hmac.compare_digest(expected.encode(), fingerprint.encode()):
            raise HostKeyChanged(expected=expected, fingerprint=fingerprint, **where)


def load_private_key(text: str, passphrase: str | None = None) -> paramiko.PKey:
    """Load an Ed25519, ECDSA or RSA private key from its text; InvalidKey when none fits."""
    import paramiko

    reasons = []
    for key_class in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return key_class.from_private_key(io.StringIO(text), password=passphrase)
        except paramiko.PasswordRequiredException as exc:
            raise InvalidKey("the private key is encrypted: give its passphrase", reason="encrypted") from exc
        except (paramiko.SSHException, ValueError, TypeError) as exc:
            reasons.append(f"{key_class.__name__}: {exc}")
    raise InvalidKey("cannot load the private key (" + "; ".join(reasons) + ")")


def _connect_error(exc: BaseException, target: SSHTarget) -> SSHError:
    """Translate socket and paramiko errors into the SSHError an analyst can act on."""
    import paramiko

    where = f"{target.host}:{target.port}"
    kw = {"host": target.host, "port": target.port}
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
        codes = {getattr(error, "errno", None) for error in exc.errors.values()}
        if codes <= {errno.ECONNREFUSED}:
            return ConnectionRefused(f"connection refused by {where}: no SSH server listens there", **kw)
        return Unreachable(f"cannot reach {where}: {exc}", **kw)
    if isinstance(exc, ConnectionRefusedError):
        return ConnectionRefused(f"connection refused by {where}: no SSH server listens there", **kw)
    if isinstance(exc, TimeoutError | socket.timeout):
        return ConnectTimeout(f"no answer from {where} within {target.connect_timeout:g} s", **kw)
    if isinstance(exc, socket.gaierror):
        return Unreachable(f"cannot resolve {target.host}: {exc.strerror}", reason="resolve", **kw)
    if isinstance(exc, paramiko.BadAuthenticationType):
        allowed = ", ".join(exc.allowed_types) or "none"
        return AuthenticationFailed(
            f"{where} does not accept this login method (accepts: {allowed})",
            reason="method",
            detail=allowed,
            **kw,
        )
    if isinstance(exc, paramiko.AuthenticationException):
        return AuthenticationFailed(
            f"{where} refused the login of {target.username!r}: wrong password or key ({exc})", **kw
        )
    if isinstance(exc, paramiko.SSHException) and any(
        # paramiko stops waiting for the handshake at the timeout and then finds "No existing session"
        text in str(exc).lower()
        for text in ("banner", "no existing session", "negotiation failed")
    ):
        return ConnectTimeout(
            f"{where} accepted the connection but sent no SSH greeting (handshake not done within "
            f"{target.connect_timeout:g} s)",
            reason="handshake",
            **kw,
        )
    if isinstance(exc, OSError) and exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return Unreachable(f"no route to {where}: {exc.strerror}", reason="no_route", **kw)
    if isinstance(exc, EOFError | ConnectionResetError):
        return Disconnected(f"{where} closed the connection during the SSH handshake", **kw)
    return SSHError(f"SSH to {where} failed: {exc.__class__.__name__}: {exc}", **kw)


class SSHRunner(BaseRunner):
    """Runs commands on one trial server over one SSH connection (use as a context manager)."""

    def __init__(self, target: SSHTarget) -> None:
        super().__init__()
        self.target = target
        self.host = target.host
        self.host_key_type = ""
        self.host_key_fingerprint = ""
        self._client: paramiko.SSHClient | None = None
        self._remote_timeout: bool | None = None

    # -- connection
    def connect(self) -> Self:
        """Open the connection and authenticate; raises an SSHError subclass on any failure."""
        import paramiko

        target = self.target
        pkey = load_private_key(target.private_key, target.passphrase) if target.private_key else None
        if pkey is None and target.password is None:
            raise AuthenticationFailed(
                "give a private key or a password",
                host=target.host,
                port=target.port,
                reason="no_credentials",
            )
        client = paramiko.SSHClient()
        policy = _PinnedKeyPolicy(target)
        client.set_missing_host_key_policy(policy)
        started = time.monotonic()
        try:
            client.connect(
                target.host,
                port=target.port,
                username=target.username,
                password=target.password,
                pkey=pkey,
                timeout=target.connect_timeout,
                banner_timeout=target.connect_timeout,
                auth_timeout=target.connect_timeout,
                channel_timeout=target.connect_timeout,
                allow_agent=False,
                look_for_keys=False,
            )
        except SSHError:
            client.close()
            raise
        except (OSError, EOFError, paramiko.SSHException) as exc:
            transport = client.get_transport()
            cause = (transport.get_exception() if transport else None) or exc
            client.close()
            raise _connect_error(cause, target) from exc
        transport = client.get_transport()
        assert transport is not None
        transport.set_keepalive(15)
        server_key = transport.get_remote_server_key()
        self.host_key_type = server_key.get_name()
        self.host_key_fingerprint = host_key_fingerprint(server_key)
        self._client = client
        log.info(
            "connected to %s:%s as %s in %.2f s",
            target.host,
            target.port,
            target.username,
            time.monotonic() - started,
        )
        return self

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Self:
        if self._client is None:
            self.connect()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        """True while the SSH transport is up."""
        transport = self._client.get_transport() if self._client else None
        return bool(transport and transport.is_active())

    # -- commands
    def command_line(self, argv: Sequence[str], *, timeout: float) -> str:
        """The exact shell text sent for `argv`: quoted, and wrapped in `timeout` when the server has it."""
        line = shell_join(argv)
        if self._remote_timeout:
            return f"timeout -k {KILL_AFTER_S} {timeout:g} {line}"
        return line

    def run(
        self, argv: Sequence[str], *, timeout: float, max_output: int = DEFAULT_MAX_OUTPUT
    ) -> CommandResult:
        """Run `argv` on the server; stdout/stderr beyond `max_output` bytes are dropped (truncated)."""
        if self._remote_timeout is None:
            self._remote_timeout = self.has_tool("timeout")
        return self._exec(argv, timeout, max_output)

    def _run_unwrapped(self, argv: Sequence[str], *, timeout: float) -> CommandResult:
        wrapped, self._remote_timeout = self._remote_timeout, False
        try:
            return self._exec(argv, timeout, 64 * 1024)
        finally:
            self._remote_timeout = wrapped

    def _exec(self, argv: Sequence[str], timeout: float, max_output: int) -> CommandResult:
        import paramiko

        transport = self._client.get_transport() if self._client else None
        if transport is None or not transport.is_active():
            raise Disconnected(f"not connected to {self.host}", host=self.host, port=self.target.port)
        command = self.command_line(argv, timeout=timeout)
        started = time.monotonic()
        deadline = started + timeout + (LOCAL_GRACE_S if self._remote_timeout else 0)
        out, err = _Capture(max_output), _Capture(max_output)
        try:
            channel = transport.open_session(timeout=self.target.connect_timeout)
            channel.exec_command(command)
            channel.shutdown_write()
            timed_out = self._pump(channel, out, err, deadline)
            exit_code = None if timed_out else channel.recv_exit_status()
            channel.close()
        except (OSError, EOFError, paramiko.SSHException) as exc:
            if not transport.is_active():
                raise Disconnected(
                    f"connection to {self.host} dropped while running {argv[0]}: {exc}",
                    host=self.host,
                    port=self.target.port,
                ) from exc
            raise SSHError(f"running {argv[0]} on {self.host} failed: {exc}", host=self.host) from exc
        if exit_code == -1 and not transport.is_active():  # paramiko: closed without an exit status
            raise Disconnected(
                f"connection to {self.host} dropped while running {argv[0]}",
                host=self.host,
                port=self.target.port,
            )
        if self._remote_timeout and exit_code in (EXIT_TIMED_OUT, EXIT_KILLED):
            timed_out = True
        return CommandResult(
            argv=tuple(str(arg) for arg in argv),
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration=time.monotonic() - started,
            truncated=bool(out.dropped or err.dropped),
            timed_out=timed_out,
        )

    @staticmethod
    def _pump(channel: paramiko.Channel, out: _Capture, err: _Capture, deadline: float) -> bool:
        """Read both streams until the command exits or the deadline passes; True when it timed out."""
        while True:
            while channel.recv_ready():
                out.feed(channel.recv(65536))
            while channel.recv_stderr_ready():
                err.feed(channel.recv_stderr(65536))
            if channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                return False
            if channel.closed and not channel.recv_ready() and not channel.recv_stderr_ready():
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            if channel.eof_received:  # all output is in: wait for the exit status rather than spin on select
                channel.status_event.wait(min(remaining, 0.5))
                continue
            select.select([channel], [], [], min(remaining, 0.5))


class LocalRunner(BaseRunner):
    """Runs commands on this machine with the same interface (the gpuvet end of iperf3 and ping)."""

    def __init__(self, host: str = "localhost") -> None:
        super().__init__()
        self.host = host

    def run(
        self, argv: Sequence[str], *, timeout: float, max_output: int = DEFAULT_MAX_OUTPUT
    ) -> CommandResult:
        """Run `argv` without a shell; the whole process group is killed at the timeout."""
        argv = tuple(str(arg) for arg in argv)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            return CommandResult(argv, EXIT_NOT_INSTALLED, "", f"{argv[0]}: {exc.strerror}", 0.0)
        out, err = _Capture(max_output), _Capture(max_output)
        readers = [
            threading.Thread(target=_drain, args=(process.stdout, out), daemon=True),
            threading.Thread(target=_drain, args=(process.stderr, err), daemon=True),
        ]
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            exit_code: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            exit_code = None
        for reader in readers:
            reader.join(timeout=5)
        return CommandResult(
            argv=argv,
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration=time.monotonic() - started,
            truncated=bool(out.dropped or err.dropped),
            timed_out=timed_out,
        )


def _drain(stream: IO[bytes] | None, capture: _Capture) -> None:
    if stream is None:
        return
    with stream:
        for chunk in iter(lambda: stream.read1(65536), b""):
            capture.feed(chunk)


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
