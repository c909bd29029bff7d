"""A measured GPU name (as nvidia-smi spells it) matches the registry spelling, in ranking and checklist."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.advice import checklist
from app.advice.engine import advise
from app.advice.facts import Measurement
from app.advice.requirements import compute_needs
from benchmarks.compare import model_key
from tests.advice.factories import TODAY, offer, provider, training_answers

AT = datetime(2026, 5, 20, tzinfo=UTC)


def measured_gpu(name: str, run_id: int = 5) -> dict[str, Measurement]:
    """A run's measured GPU model, as benchmarks record what nvidia-smi printed."""
    return {"gpu_model": Measurement(name, "", at=AT, run_id=run_id, link=f"/bench-runs/{run_id}")}


@pytest.mark.parametrize(
    ("registry", "smi"),
    [
        ("H100", "NVIDIA H100 80GB HBM3"),
        ("A800", "NVIDIA A800-SXM4-80GB"),
        ("RTX 4090", "NVIDIA GeForce RTX 4090"),
        ("H100-SXM", "NVIDIA H100 SXM5 80GB"),
    ],
)
def test_model_key_finds_the_registry_spelling_in_the_nvidia_smi_name(registry, smi):
    assert model_key(smi).startswith(model_key(registry))


def test_a_trial_that_proves_a_required_model_keeps_the_offer_and_a_wrong_model_excludes_it():
    answers = training_answers(compute={"gpu_models": ["H100"], "gpu_strict": True})
    offers = [
        offer(1, gpu_model="H100", measurements=measured_gpu("NVIDIA H100 80GB HBM3")),
        offer(2, gpu_model="H100", measurements=measured_gpu("NVIDIA A100-SXM4-80GB", run_id=6)),
        offer(3, gpu_model="H100"),
    ]
    advice = advise(answers, offers, today=TODAY)
    by_id = {a.offer.id: a for a in advice.ranked}
    assert not by_id[1].excluded and not by_id[3].excluded
    assert [(r.code, r.source) for r in by_id[2].excluded] == [("gpu.model", "measured")]


def test_several_measured_names_all_must_be_a_required_model():
    answers = training_answers(compute={"gpu_models": ["H800", "H100"], "gpu_strict": True})
    both = offer(1, gpu_model="H800", measurements=measured_gpu("NVIDIA H100 80GB HBM3, NVIDIA H800"))
    mixed = offer(2, gpu_model="H800", measurements=measured_gpu("NVIDIA H800, NVIDIA L40S"))
    by_id = {a.offer.id: a for a in advise(answers, [both, mixed], today=TODAY).ranked}
    assert not by_id[1].excluded and [r.code for r in by_id[2].excluded] == ["gpu.model"]


@pytest.mark.parametrize(
    ("registry", "smi", "status"),
    [
        ("H100-SXM", "NVIDIA H100 SXM5 80GB", checklist.PASSED),
        ("H100", "NVIDIA H100 80GB HBM3", checklist.PASSED),
        ("H100", "NVIDIA A100-SXM4-80GB", checklist.FAILED),
    ],
)
def test_the_checklist_holds_the_measured_name_against_the_claim_by_the_same_key(registry, smi, status):
    needs = compute_needs(training_answers(compute={"gpus_per_node": 8}))
    offers = [offer(1, gpu_model=registry, measurements=measured_gpu(smi))]
    entry = next(
        e for e in checklist.build(needs, provider=provider(), offers=offers) if e.item.key == "gpu_inventory"
    )
    assert entry.status == status
