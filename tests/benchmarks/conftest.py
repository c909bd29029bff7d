"""Fixtures for the benchmark tests: a real sshd on loopback (with a stand-in nvidia-smi on its PATH)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.params import SuiteParams
from benchmarks.ssh import SSHTarget
from tests.bench_support.gpu import install_standin
from tests.bench_support.netns import ShapedLink, netns_supported
from tests.bench_support.sshd import Sshd, free_port
from tests.conftest import missing_tool

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"

# Skipped when not root, except where tools are required (CI, scripts/test.sh): there it fails.
needs_root = pytest.mark.usefixtures("requires_root")


@pytest.fixture
def requires_root() -> None:
    """sshd privilege separation and `ip netns` need root (the README's commands run as root)."""
    if os.geteuid() != 0:
        missing_tool("sshd privilege separation and ip netns need root")


def short_params(storage: Path, **overrides) -> SuiteParams:
    """Suite parameters cut down so a real run takes seconds."""
    values = {
        "iperf3_seconds": 2,
        "iperf3_parallel": 2,
        "iperf3_port": free_port(),
        "fio_seconds": 1,
        "fio_size_mib": 16,
        "write_size_mib": 16,
        "storage_path": str(storage),
        "ping_count": 3,
        "gpu_seconds": 1,
        "gpu_sample_ms": 100,
        "stability_repeats": 3,
        "stability_interval_s": 0.1,
        "stability_test_seconds": 1,
        "command_grace_s": 20,
    }
    return SuiteParams(**(values | overrides))


def target_for(sshd: Sshd, **overrides) -> SSHTarget:
    """An SSHTarget for the test sshd: its generated user key and pinned host key."""
    values = {
        "host": sshd.address,
        "port": sshd.port,
        "username": "root",
        "private_key": sshd.user_key_text,
        "host_key_fingerprint": sshd.host_fingerprint,
        "connect_timeout": 5.0,
    }
    return SSHTarget(**(values | overrides))


@pytest.fixture(scope="session")
def trial_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """A trial server: OpenSSH sshd on 127.0.0.1, stand-in nvidia-smi first on its PATH."""
    if os.geteuid() != 0:
        missing_tool("sshd privilege separation needs root")
    base = tmp_path_factory.mktemp("trial-server")
    install_standin(base / "bin")
    with Sshd(base / "sshd", path_prefix=[str(base / "bin")]) as sshd:
        yield sshd


@pytest.fixture(scope="session")
def shaped_link() -> Iterator[ShapedLink]:
    """A namespace behind a veth pair shaped to 200 Mbit/s both ways (skipped where netns is refused)."""
    if os.geteuid() != 0:
        missing_tool("ip netns needs root")
    supported, reason = netns_supported()
    if not supported:
        missing_tool(reason)
    with ShapedLink(rate_mbit=200) as link:
        yield link


@pytest.fixture(scope="session")
def shaped_server(shaped_link: ShapedLink, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """sshd inside the shaped namespace, on its veth address."""
    base = tmp_path_factory.mktemp("shaped-server")
    with Sshd(base, address=shaped_link.inner_address, port=2222, netns=shaped_link.namespace) as sshd:
        yield sshd
