"""The SSH runner against a real OpenSSH sshd on loopback: commands, quoting, limits, host keys, failures."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from benchmarks.ssh import (
    AuthenticationFailed,
    ConnectionRefused,
    ConnectTimeout,
    HostKeyChanged,
    InvalidKey,
    LocalRunner,
    NotInstalled,
    SSHRunner,
    SSHTarget,
    UnknownHostKey,
    Unreachable,
    normalize_fingerprint,
)
from tests.bench_support.netns import ShapedLink
from tests.bench_support.procs import command_lines
from tests.bench_support.sshd import Sshd, free_port, keygen
from tests.benchmarks.conftest import target_for

pytestmark = pytest.mark.slow

NASTY = [
    "a b",
    "'single'",
    '"double"',
    "$(touch /tmp/gpuvet-pwned)",
    "`id`",
    "x; rm -rf /nonexistent",
    "*",
    "\\",
    "",
]


@pytest.fixture
def runner(trial_server: Sshd):
    with SSHRunner(target_for(trial_server)) as connected:
        yield connected


def test_runs_a_command_and_reports_everything(runner: SSHRunner):
    result = runner.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert result.argv == ("sh", "-c", "echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.duration > 0 and not result.truncated and not result.timed_out and not result.ok


def test_arguments_reach_the_program_verbatim(runner: SSHRunner):
    Path("/tmp/gpuvet-pwned").unlink(missing_ok=True)
    result = runner.run(["printf", "%s\\n", *NASTY], timeout=10)
    assert result.ok
    assert result.stdout.split("\n")[:-1] == NASTY
    assert not Path("/tmp/gpuvet-pwned").exists()


def test_timeout_stops_the_command(runner: SSHRunner):
    started = time.monotonic()
    result = runner.run(["sleep", "37.5"], timeout=1)
    assert result.timed_out and not result.ok
    assert time.monotonic() - started < 8
    assert command_lines("sleep 37.5") == []


def test_output_is_capped_and_marked_truncated(runner: SSHRunner):
    result = runner.run(["head", "-c", "3000000", "/dev/zero"], timeout=20, max_output=1000)
    assert result.truncated and result.exit_code == 0
    assert len(result.stdout) == 1000


def test_missing_tool_is_not_installed(runner: SSHRunner):
    result = runner.run(["gpuvet-no-such-tool", "--version"], timeout=10)
    assert result.not_installed and result.exit_code == 127
    assert not runner.has_tool("gpuvet-no-such-tool")
    assert runner.has_tool("iperf3")
    with pytest.raises(NotInstalled, match=r"gpuvet-no-such-tool is not installed on 127\.0\.0\.1"):
        runner.require("sh", "gpuvet-no-such-tool")


def test_unknown_host_key_is_refused_with_its_fingerprint(trial_server: Sshd):
    with pytest.raises(UnknownHostKey) as caught:
        SSHRunner(target_for(trial_server, host_key_fingerprint=None)).connect()
    assert caught.value.fingerprint == trial_server.host_fingerprint  # what ssh-keygen -lf prints
    assert caught.value.key_type == "ssh-ed25519"
    assert trial_server.host_fingerprint in str(caught.value)


@pytest.mark.parametrize("style", ["bare", "prefixed", "keygen-line"])
def test_pinned_fingerprint_in_any_common_spelling(trial_server: Sshd, style: str):
    fingerprint = trial_server.host_fingerprint
    spelled = {
        "bare": fingerprint.removeprefix("SHA256:"),
        "prefixed": fingerprint,
        "keygen-line": f"256 {fingerprint} root@trial (ED25519)",
    }[style]
    assert normalize_fingerprint(spelled) == fingerprint
    with SSHRunner(target_for(trial_server, host_key_fingerprint=spelled)) as connected:
        assert connected.host_key_fingerprint == fingerprint


def test_changed_host_key_is_refused_loudly(tmp_path: Path):
    with Sshd(tmp_path) as sshd:
        pinned = sshd.host_fingerprint
        sshd.regenerate_host_key()
        with pytest.raises(HostKeyChanged) as caught:
            SSHRunner(target_for(sshd, host_key_fingerprint=pinned)).connect()
    assert caught.value.expected == pinned
    assert caught.value.fingerprint == sshd.host_fingerprint != pinned
    assert "HOST KEY CHANGED" in str(caught.value)


def test_wrong_password_is_an_authentication_error(trial_server: Sshd):
    target = target_for(trial_server, private_key=None, password="not-the-password")
    started = time.monotonic()
    with pytest.raises(AuthenticationFailed, match="refused the login of 'root'"):
        SSHRunner(target).connect()
    assert time.monotonic() - started < 10


def test_passphrase_protected_key(trial_server: Sshd, tmp_path: Path):
    key = keygen(tmp_path / "id_protected", passphrase="correct horse")
    authorized = trial_server.workdir / "authorized_keys"
    authorized.write_text(authorized.read_text() + key.with_suffix(".pub").read_text())
    with pytest.raises(InvalidKey, match="passphrase"):
        SSHRunner(target_for(trial_server, private_key=key.read_text())).connect()
    target = target_for(trial_server, private_key=key.read_text(), passphrase="correct horse")
    with SSHRunner(target) as connected:
        assert connected.run(["true"], timeout=10).ok


def test_refused_connection(trial_server: Sshd):
    target = target_for(trial_server, port=free_port())
    started = time.monotonic()
    with pytest.raises(ConnectionRefused, match="no SSH server listens there"):
        SSHRunner(target).connect()
    assert time.monotonic() - started < 5


def test_silent_port_times_out():
    """Something accepts TCP but never speaks SSH: bounded by the connect timeout, not a hang."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        target = SSHTarget("127.0.0.1", port, password="x", connect_timeout=1.0)
        started = time.monotonic()
        with pytest.raises(ConnectTimeout, match="no SSH greeting"):
            SSHRunner(target).connect()
        assert time.monotonic() - started < 5


def test_unreachable_host_times_out(shaped_link: ShapedLink):
    """An address on the test namespace's subnet where no host answers (ARP fails)."""
    silent = shaped_link.outer_address.rsplit(".", 1)[0] + ".77"
    target = SSHTarget(silent, 22, password="x", connect_timeout=1.5)
    started = time.monotonic()
    with pytest.raises(Unreachable) as caught:
        SSHRunner(target).connect()
    assert time.monotonic() - started < 6
    assert silent in str(caught.value)


def test_no_credentials_is_refused_before_connecting():
    with pytest.raises(AuthenticationFailed, match="give a private key or a password"):
        SSHRunner(SSHTarget("127.0.0.1", 1)).connect()


def test_one_connection_serves_parallel_threads_safely(trial_server: Sshd):
    """Separate runners (one per server, as the job queue uses them) work side by side."""
    results: list[str] = []

    def work(number: int) -> None:
        with SSHRunner(target_for(trial_server)) as connected:
            results.append(connected.run(["echo", str(number)], timeout=10).stdout.strip())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results) == ["0", "1", "2", "3"]


# ---------------------------------------------------------------- local runner
def test_local_runner_same_interface(tmp_path: Path):
    local = LocalRunner()
    result = local.run(["printf", "%s\\n", *NASTY], timeout=10)
    assert result.ok and result.stdout.split("\n")[:-1] == NASTY
    assert local.run(["gpuvet-no-such-tool"], timeout=5).not_installed
    assert local.run(["sh", "-c", "exit 127"], timeout=5).not_installed
    started = time.monotonic()
    slow = local.run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)
    assert slow.timed_out and slow.exit_code is None and time.monotonic() - started < 5
    capped = local.run(["head", "-c", "100000", "/dev/zero"], timeout=10, max_output=10)
    assert capped.truncated and len(capped.stdout) == 10
