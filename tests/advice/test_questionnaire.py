"""The questionnaire's own arithmetic: defaults derived from earlier answers, required questions, previews."""

from __future__ import annotations

import pytest

from app.advice import questionnaire
from app.advice.answers import validate_answers
from app.advice.requirements import compute_needs, preview, storage_types_writing
from app.core.errors import InvalidInput
from tests.advice.factories import training_answers

TRAINING = {
    "workload": {"kind": "distributed_training"},
    "compute": {"nodes": 2, "gpus_per_node": 8},
    "model": {"parameters_billion": 70, "precision": "bf16", "target_step_seconds": 10},
}


def test_seventy_billion_bf16_parameters_give_140_gb_of_weights_and_a_70_s_stall():
    defaults = questionnaire.derived_defaults(TRAINING, "checkpoint", {})
    # 70e9 parameters x 2 bytes = 140 GB; local NVMe (best for this kind) writes 2,000 MB/s: 70 s.
    assert defaults["size_gb"].value == 140
    assert defaults["acceptable_stall_seconds"].value == 70
    assert "仅权重" in defaults["size_gb"].basis and "优化器状态" in defaults["size_gb"].basis
    fp32 = {**TRAINING, "model": {**TRAINING["model"], "precision": "fp32"}}
    assert questionnaire.derived_defaults(fp32, "checkpoint", {})["size_gb"].value == 280
    # The stall follows the size typed on the page, not the derived one.
    typed = questionnaire.derived_defaults(TRAINING, "checkpoint", {"size_gb": "500"})
    assert typed["acceptable_stall_seconds"].value == 250


def test_no_default_without_what_it_is_derived_from():
    no_model = {key: value for key, value in TRAINING.items() if key != "model"}
    assert questionnaire.derived_defaults(no_model, "checkpoint", {}) == {}
    rendering = {"workload": {"kind": "offline_batch", "batch_kind": "rendering"}, "model": TRAINING["model"]}
    assert questionnaire.derived_defaults(rendering, "checkpoint", {}) == {}
    assert questionnaire.derived_defaults(rendering, "compute", {}) == {}
    assert questionnaire.derived_defaults(TRAINING, "compute", {})["nodes"].value == 2
    single = {"workload": {"kind": "single_node_training"}}
    assert questionnaire.derived_defaults(single, "compute", {})["nodes"].value == 1
    inference = {"workload": {"kind": "interactive_inference"}}
    assert questionnaire.derived_defaults(inference, "compute", {}) == {}


def test_a_blank_answer_takes_the_default_and_is_recorded_as_derived():
    filled, derived = questionnaire.with_defaults(
        TRAINING, "checkpoint", {"size_gb": "", "interval_minutes": "30", "acceptable_stall_seconds": "90"}
    )
    assert filled == {"size_gb": 140, "interval_minutes": "30", "acceptable_stall_seconds": "90"}
    assert derived == ["size_gb"]
    same, derived = questionnaire.with_defaults(TRAINING, "checkpoint", {"size_gb": "140"})
    assert derived == ["size_gb", "acceptable_stall_seconds"] and same["acceptable_stall_seconds"] == 70
    raw = questionnaire.with_derived({**TRAINING, "derived": ["compute.nodes"]}, "checkpoint", derived)
    assert raw["derived"] == ["checkpoint.acceptable_stall_seconds", "checkpoint.size_gb", "compute.nodes"]
    assert questionnaire.with_derived(raw, "checkpoint", [])["derived"] == ["compute.nodes"]
    assert "derived" not in questionnaire.with_derived({"derived": ["compute.nodes"]}, "compute", [])


def test_the_record_of_defaults_is_kept_with_its_sections_and_validated():
    answers = training_answers().model_dump(mode="json")
    answers["derived"] = ["checkpoint.size_gb", "users.user_cities"]
    pruned = questionnaire.pruned(answers)
    assert pruned["derived"] == ["checkpoint.size_gb"]  # distributed training asks no users step
    assert validate_answers(pruned).derived == ["checkpoint.size_gb"]
    with pytest.raises(InvalidInput) as caught:
        validate_answers({**pruned, "derived": ["checkpoint.colour"]})
    assert [error.field for error in caught.value.errors] == ["derived"]
    assert "checkpoint.colour" in caught.value.errors[0].message


def test_required_questions_follow_the_workload_kind():
    assert questionnaire.required_fields(TRAINING, "model", {}) == {
        "parameters_billion",
        "target_step_seconds",
    }
    assert "size_gb" in questionnaire.required_fields(TRAINING, "checkpoint", {})
    inference = {"workload": {"kind": "interactive_inference"}}
    assert questionnaire.required_fields(inference, "users", {}) == {"user_cities"}
    office = {**TRAINING, "data": {"dataset_gb": 100, "source": "office_upload"}}
    assert questionnaire.required_fields(office, "site", {}) == {"uplink_mbps"}
    pulled = {**TRAINING, "data": {"dataset_gb": 100, "source": "object_storage"}}
    assert questionnaire.required_fields(pulled, "site", {}) == set()


def test_the_preview_uses_the_result_pages_arithmetic_on_partial_answers():
    raw = {
        "workload": {"kind": "distributed_training"},
        "compute": {"nodes": 4, "gpus_per_node": 8},
        "model": {"parameters_billion": 7, "target_step_seconds": 1},
    }
    quantities = preview(raw)
    assert quantities["intranet_gbps_needed"].value == pytest.approx(560)
    assert quantities["rdma"].value == "required"
    full = {q.key: q for q in compute_needs(training_answers()).quantities}
    assert preview(training_answers().model_dump(mode="json"))["allreduce_gb"] == full["allreduce_gb"]
    assert preview({"workload": {"kind": "distributed_training"}, "model": {"parameters_billion": "x"}}) == {
        "storage_type": preview({"workload": {"kind": "distributed_training"}})["storage_type"]
    }
    assert preview({}) == {} and preview({"workload": {"kind": "nope"}}) == {}


def test_storage_types_that_write_fast_enough():
    assert storage_types_writing(2000) == ["local_nvme", "parallel_fs"]
    assert storage_types_writing(100)[-1] == "cloud_disk"
    assert storage_types_writing(10_000) == []


def test_derived_answers_are_worked_out_again_when_their_inputs_change():
    raw = {
        **TRAINING,
        "checkpoint": {"size_gb": 140, "acceptable_stall_seconds": 70},
        "derived": ["checkpoint.acceptable_stall_seconds", "checkpoint.size_gb"],
    }
    smaller = {**TRAINING["model"], "parameters_billion": 13}
    moved = questionnaire.with_derived({**raw, "model": smaller}, "model", [])
    assert moved["checkpoint"] == {"size_gb": 26, "acceptable_stall_seconds": 13}
    own = {**raw, "checkpoint": {"size_gb": 400, "acceptable_stall_seconds": 70}}
    own["derived"] = ["checkpoint.acceptable_stall_seconds"]
    kept = questionnaire.with_derived({**own, "model": smaller}, "model", [])
    assert kept["checkpoint"] == {"size_gb": 400, "acceptable_stall_seconds": 200}
