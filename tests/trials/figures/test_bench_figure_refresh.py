"""When figures are rebuilt: succeeded runs, runs leaving succeeded, deleted runs; never while running."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.models import Offer
from app.models.trials import BenchRun, BenchStep, RunState
from app.trials import bench_runs, matrix_runs
from benchmarks.sample import Sample
from benchmarks.suites import ProbeResult, Progress, SuiteResult
from tests.cases.test_advice_statements import counted
from tests.cases.test_measured_offers import at, beijing_offers, quick_steps, store_run
from tests.trials.figures.test_bench_figures import figures_of

PROJECT_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def offers(session: Session) -> list[Offer]:
    """Two offers of one provider (1 Gbps intranet claimed)."""
    return beijing_offers(session, "示例图表刷新有限公司", ["刷新套餐甲", "刷新套餐乙"])


def running_run(session: Session, offer: Offer, names: list[str], suite: str = "quick") -> BenchRun:
    """A run being executed: running, one pending step row per name."""
    run = BenchRun(
        provider_id=offer.provider_id, offer_id=offer.id, suite=suite, state=RunState.running, claims={}
    )
    session.add(run)
    session.flush()
    session.add_all(BenchStep(run_id=run.id, position=i, step=n, probe=n) for i, n in enumerate(names))
    session.commit()
    return run


def probe_result(name: str, samples: list[dict]) -> ProbeResult:
    return ProbeResult(
        step=name, probe=name, options={}, status="ok", samples=[Sample.from_dict(s) for s in samples]
    )


def test_a_running_runs_step_saves_cost_one_statement_and_its_success_writes_figures(session, offers):
    steps = quick_steps(700)
    run = running_run(session, offers[0], list(steps))
    result = SuiteResult(suite="quick", params={}, host="192.0.2.10")
    recorder = bench_runs._Recorder(session, run, None, None)  # what execute_run stores each event with
    for done, (name, samples) in enumerate(steps.items()):
        result.probes.append(probe_result(name, samples))
        for event in ("started", "finished"):
            with counted(session) as seen:
                recorder(Progress(done, len(steps), name, event, "", 1.0, result))
            assert len(seen) == 1 and seen[0].startswith("UPDATE bench_step"), seen
    assert figures_of(session, run.id) == {}
    run.state, run.finished_at = RunState.succeeded, at(1)  # as execute_run finishes it
    session.add(run)
    with counted(session) as seen:
        session.commit()
    assert any(s.startswith("DELETE FROM bench_figure") for s in seen)
    assert figures_of(session, run.id)["intranet_gbps"].value_num == 0.7


def test_a_matrix_run_gets_its_figures_when_it_finishes(session, offers):
    run = running_run(session, offers[0], ["pair_1", "ping"], suite=matrix_runs.MATRIX_SUITE)
    recorder = matrix_runs._Recorder(session, run, None, None)
    with counted(session) as seen:
        recorder.step("pair_1", probe_result("pair_1", quick_steps(400)["iperf3"]))
    assert not any("bench_figure" in s for s in seen), seen
    assert figures_of(session, run.id) == {}
    matrix_runs._finish(session, run, RunState.succeeded, None, None)
    assert figures_of(session, run.id)["intranet_gbps"].value_num == 0.4


def test_deleting_a_succeeded_run_or_one_of_its_steps_rebuilds_its_figures(session, offers):
    run = store_run(session, offers[0], quick_steps(800), at(3))
    assert {"intranet_gbps", "rtt_ms"} <= set(figures_of(session, run.id))
    ping = session.exec(select(BenchStep).where(BenchStep.run_id == run.id, BenchStep.step == "ping")).one()
    session.delete(ping)
    session.commit()
    assert "rtt_ms" not in figures_of(session, run.id) and "intranet_gbps" in figures_of(session, run.id)
    session.delete(session.get(BenchRun, run.id))
    session.commit()
    assert figures_of(session, run.id) == {}


@pytest.mark.parametrize("state", [RunState.interrupted, RunState.running])
def test_a_run_moving_out_of_succeeded_loses_its_figures(app, session, offers, state):
    run = store_run(session, offers[0], quick_steps(800), at(3))
    assert figures_of(session, run.id)
    with Session(app.extensions["gpuvet.engine"]) as other:  # a fresh session: the stored state is loaded
        loaded = other.get(BenchRun, run.id)
        loaded.state = state
        other.commit()
    assert figures_of(session, run.id) == {}


def test_a_state_changed_without_its_old_value_loaded_still_rebuilds(session, offers):
    run = store_run(session, offers[0], quick_steps(800), at(3))
    session.expire(run, ["state"])  # the old state is unknown to the flush: rebuilt to be safe
    run.state = RunState.failed
    session.add(run)
    session.commit()
    assert figures_of(session, run.id) == {}


def test_a_succeeded_run_moved_to_another_offer_moves_its_figures(session, offers):
    run = store_run(session, offers[0], quick_steps(800), at(3))
    run.offer_id = offers[1].id
    session.add(run)
    session.commit()
    assert {row.offer_id for row in figures_of(session, run.id).values()} == {offers[1].id}


def test_a_step_of_a_succeeded_run_not_loaded_in_the_session_rebuilds_its_figures(app, session, offers):
    run = store_run(session, offers[0], {"ping": quick_steps(800)["ping"]}, at(3))
    assert "intranet_gbps" not in figures_of(session, run.id)
    with Session(app.extensions["gpuvet.engine"]) as other:  # knows nothing of the run: asks the database
        other.add(BenchStep(run_id=run.id, step="iperf3", probe="iperf3", samples=quick_steps(600)["iperf3"]))
        other.commit()
    assert figures_of(session, run.id)["intranet_gbps"].value_num == 0.6


def test_the_trials_domain_registers_the_figures_hook_not_the_models():
    """Importing any trials module installs the after-flush hook; app.models imports no domain package."""
    code = (
        "import sys\n"
        "import app.models\n"
        "from sqlalchemy import event, orm\n"
        "from app.models import bench_figure\n"
        "assert not any(name.startswith('app.trials') for name in sys.modules), 'models import trials'\n"
        "assert not hasattr(bench_figure, '_after_flush')\n"
        "import app.trials.servers\n"
        "from app.trials import bench_figures\n"
        "assert event.contains(orm.Session, 'after_flush', bench_figures._after_flush)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
