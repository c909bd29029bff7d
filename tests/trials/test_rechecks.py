"""The credential check re-runs itself when a run gpuvet executed finishes (issue 10 item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, func, select

from app.credentials import checks
from app.models.checks import CheckRun
from app.models.trials import RunState, TrialServer
from app.trials import bench_runs
from app.trials import servers as trials
from tests.bench_support.sshd import Sshd
from tests.trials.conftest import quick_params, server_data


@pytest.fixture
def pinned(session: Session, provider, offer, cipher, policy, trial_server: Sshd) -> TrialServer:
    """A trial server for the provider's offer, host key pinned."""
    data = server_data(trial_server, offer_id=offer.id, host_key_fingerprint=trial_server.host_fingerprint)
    return trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)


def _check_runs(session: Session, provider_id: int) -> int:
    return session.exec(select(func.count()).where(CheckRun.provider_id == provider_id)).one()


def test_an_executed_run_stores_a_new_check_run_with_its_findings(
    session: Session, provider, pinned: TrialServer, cipher, policy, tmp_path: Path
):
    checks.run_check(session, provider_id=provider.id)
    before = _check_runs(session, provider.id)
    run = bench_runs.create_run(session, server_id=pinned.id, suite="quick", params=quick_params(tmp_path))
    done = bench_runs.execute_run(session, run_id=run.id, cipher=cipher, policy=policy)
    assert done.state == RunState.succeeded
    assert _check_runs(session, provider.id) == before + 1
    latest = checks.latest_check(session, provider_id=provider.id)
    rules = {finding.rule_id for finding in checks.run_findings(session, check_run_id=latest.id)}
    assert "benchmarks.storage_not_nvme" in rules  # this machine's virtio disk against the claimed NVMe
    assert latest.verdict != "pass"
