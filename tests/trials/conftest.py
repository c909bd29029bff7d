"""Fixtures of the trial-server tests: a provider with an offer, the app's cipher, a real sshd."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from sqlmodel import Session

from app.models import Offer, Provider
from app.registry.providers import create_provider
from app.trials.server_addresses import address_policy
from app.trials.servers import cipher_from_settings
from scrapers.addresses import AddressPolicy
from tests.bench_support.sshd import Sshd, free_port
from tests.benchmarks.conftest import trial_server  # noqa: F401 - re-exported fixture
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
from tests.trials.recorded_runs import recorded_runs, restored_runs  # noqa: F401 - re-exported fixtures

OFFER = {
    "gpu_model": "H800",
    "gpus_per_node": 8,
    "public_mbps": 1000,
    "bandwidth_type": "dedicated",
    "storage_type": "local_nvme",
    "nominal_iops": 500000,
}


@pytest.fixture
def provider(session: Session) -> Provider:
    """A provider with one offer that claims dedicated 1 Gbps and local NVMe."""
    return create_provider(session, data={"legal_name": "示例试用算力有限公司", "offers": [OFFER]})


@pytest.fixture
def offer(provider: Provider) -> Offer:
    """The provider's offer."""
    return provider.offers[0]


LOOPBACK = ("127.0.0.0/8",)


@pytest.fixture(autouse=True)
def allow_loopback_trials(app):
    """The test sshd listens on 127.0.0.1: admit loopback explicitly (refused by default)."""
    settings = app.config["GPUVET_SETTINGS"]
    app.config["GPUVET_SETTINGS"] = settings.model_copy(update={"trial_allow_cidrs": LOOPBACK})
    yield
    app.config["GPUVET_SETTINGS"] = settings


def set_trial_allow_cidrs(app, cidrs: tuple[str, ...]) -> None:
    """Replace GPUVET_TRIAL_ALLOW_CIDRS of the running app (() is the default: nothing admitted)."""
    settings = app.config["GPUVET_SETTINGS"]
    app.config["GPUVET_SETTINGS"] = settings.model_copy(update={"trial_allow_cidrs": cidrs})


@pytest.fixture
def policy(app) -> AddressPolicy:
    """The app's trial address policy (loopback admitted, see allow_loopback_trials)."""
    return address_policy(app.config["GPUVET_SETTINGS"])


@pytest.fixture
def cipher(app) -> Fernet:
    """The app's cipher for trial-server secrets."""
    return cipher_from_settings(app.config["GPUVET_SETTINGS"])


def server_data(sshd: Sshd, **overrides: Any) -> dict[str, Any]:
    """Form/API data for a trial server reaching `sshd` with its generated key."""
    return {
        "name": "试用机 A",
        "host": sshd.address,
        "port": sshd.port,
        "username": "root",
        "auth_method": "key",
        "private_key": sshd.user_key_text,
        **overrides,
    }


def quick_params(storage: Path) -> dict[str, Any]:
    """Short quick-suite parameters for real runs."""
    return {
        "iperf3_seconds": 1,
        "iperf3_port": free_port(),
        "fio_seconds": 1,
        "fio_size_mib": 16,
        "ping_count": 3,
        "storage_path": str(storage),
    }
