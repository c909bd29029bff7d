"""A real OpenSSH sshd for tests: generated host and user keys, private config in a temp dir, high port.

Runs as root (as the tests do): root logs in with the generated key; its password is never known, so any
password is a wrong one. Optionally inside a network namespace and with extra directories first on PATH
(sshd's SetEnv), which is how a stand-in nvidia-smi reaches the trial server's PATH.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
from pathlib import Path

log = logging.getLogger(__name__)

SSHD = "/usr/sbin/sshd"
STARTUP_TIMEOUT_S = 10.0
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def keygen(path: Path, *, passphrase: str = "", kind: str = "ed25519") -> Path:
    """Generate an OpenSSH key pair at `path` (private) and `path`.pub."""
    argv = ["ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-C", "gpuvet-test", "-f", str(path)]
    subprocess.run(argv, check=True, capture_output=True, timeout=30)
    return path


def fingerprint(public_key: Path) -> str:
    """SHA256 fingerprint of a public key file, as ssh-keygen -lf prints it."""
    line = subprocess.run(
        ["ssh-keygen", "-lf", str(public_key)], check=True, capture_output=True, text=True, timeout=30
    ).stdout
    return next(token for token in line.split() if token.startswith("SHA256:"))


class Sshd:
    """One sshd process; use as a context manager or call start() / stop()."""

    def __init__(
        self,
        workdir: Path,
        *,
        address: str = "127.0.0.1",
        port: int | None = None,
        netns: str | None = None,
        path_prefix: list[str] | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.address = address
        self.port = port or free_port(address)
        self.netns = netns
        self.path_prefix = path_prefix or []
        self.process: subprocess.Popen | None = None
        self.host_key = self.workdir / "ssh_host_ed25519_key"
        self.user_key = self.workdir / "id_ed25519"
        self.config = self.workdir / "sshd_config"
        self.log_file = self.workdir / "sshd.log"

    @property
    def host_fingerprint(self) -> str:
        """SHA256 fingerprint of the current host key."""
        return fingerprint(self.host_key.with_suffix(".pub"))

    @property
    def user_key_text(self) -> str:
        """The user's private key (OpenSSH format)."""
        return self.user_key.read_text()

    def _write_config(self) -> None:
        path = ":".join([*self.path_prefix, DEFAULT_PATH])
        self.config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    f"ListenAddress {self.address}",
                    f"HostKey {self.host_key}",
                    f"PidFile {self.workdir / 'sshd.pid'}",
                    f"AuthorizedKeysFile {self.workdir / 'authorized_keys'}",
                    "PermitRootLogin yes",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication yes",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "MaxStartups 64:30:128",
                    "MaxSessions 64",
                    "LogLevel INFO",
                    f"SetEnv PATH={path}",
                    "",
                ]
            )
        )

    def start(self) -> Sshd:
        """Generate keys (once), write the config and start sshd; waits for its greeting (bounded)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.host_key.exists():
            keygen(self.host_key)
        if not self.user_key.exists():
            keygen(self.user_key)
            (self.workdir / "authorized_keys").write_text(self.user_key.with_suffix(".pub").read_text())
        self._write_config()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir sshd insists on
        argv = [SSHD, "-D", "-e", "-f", str(self.config)]
        if self.netns:
            argv = ["ip", "netns", "exec", self.netns, *argv]
        with self.log_file.open("ab") as log_handle:
            self.process = subprocess.Popen(argv, stdout=log_handle, stderr=subprocess.STDOUT)
        self._wait_for_banner()
        return self

    def _wait_for_banner(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.process.returncode}: {self.log_file.read_text()}")
            try:
                with socket.create_connection((self.address, self.port), timeout=1) as sock:
                    if sock.recv(64).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"sshd did not answer on {self.address}:{self.port} within {STARTUP_TIMEOUT_S} s")

    def regenerate_host_key(self) -> None:
        """Replace the host key (simulates a reinstalled server or a machine in the middle); restarts."""
        self.stop()
        for path in (self.host_key, self.host_key.with_suffix(".pub")):
            path.unlink(missing_ok=True)
        keygen(self.host_key)
        self.start()

    def stop(self) -> None:
        """Stop sshd (SIGTERM, then SIGKILL after 5 s)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None

    def __enter__(self) -> Sshd:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def running_as_root() -> bool:
    """sshd's privilege separation and `ip netns` need root."""
    return os.geteuid() == 0
