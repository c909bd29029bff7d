"""Answers validation: field-level messages in Chinese and English, rules by workload kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.advice.answers import WorkloadKind, validate_answers, validate_section, validate_step
from app.core.errors import InvalidInput

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "answers"


def minimal(kind: str = "interactive_inference", **sections) -> dict:
    answers = {
        "workload": {"kind": kind},
        "compute": {"gpus_per_node": 1},
        "site": {"office_city": "上海"},
        "users": {"user_cities": ["上海"]},
    }
    answers.update(sections)
    return answers


def errors_of(data) -> dict[str, str]:
    with pytest.raises(InvalidInput) as caught:
        validate_answers(data)
    return {error.field: error.message for error in caught.value.errors}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_example_is_valid_and_named_after_its_kind(path):
    answers = validate_answers(json.loads(path.read_text(encoding="utf-8")))
    assert answers.kind.value == path.stem


def test_there_is_one_example_per_workload_kind():
    assert {path.stem for path in EXAMPLES.glob("*.json")} == {kind.value for kind in WorkloadKind}


def test_negative_sizes_are_refused_at_their_fields():
    errors = errors_of(
        minimal(
            "distributed_training",
            compute={"nodes": 4, "gpus_per_node": -8},
            data={"dataset_gb": -10},
            checkpoint={"size_gb": -1, "acceptable_stall_seconds": 0},
        )
    )
    assert (
        errors["compute.gpus_per_node"] == "不能小于 1"  # our words with the limit, no pydantic English
    )
    assert "data.dataset_gb" in errors
    assert "checkpoint.size_gb" in errors
    assert "checkpoint.acceptable_stall_seconds" in errors


def test_unknown_cities_are_named_with_their_position():
    errors = errors_of(minimal(site={"office_city": "火星"}, users={"user_cities": "上海, 月球"}))
    assert errors["site.office_city"].startswith("未知城市“火星”")
    assert (
        "请填写地级市名称" in errors["site.office_city"] and "(unknown city" not in errors["site.office_city"]
    )
    assert "users.user_cities[1]" in errors
    assert "users.user_cities[0]" not in errors


def test_missing_required_fields_are_named():
    errors = errors_of({"compute": {}, "site": {}})
    assert set(errors) >= {"workload", "compute.gpus_per_node", "site.office_city"}
    assert errors["workload"].startswith("必填项")


def test_kind_rules_require_what_the_sizing_needs():
    errors = errors_of(minimal("distributed_training", compute={"nodes": 1, "gpus_per_node": 8}))
    assert set(errors) == {
        "compute.nodes",
        "model.parameters_billion",
        "model.target_step_seconds",
        "data.dataset_gb",
        "checkpoint.size_gb",
        "checkpoint.acceptable_stall_seconds",
    }
    assert errors["compute.nodes"] == "多机分布式训练至少 2 个节点"
    assert errors["model.parameters_billion"].startswith("必填项")


def test_inference_needs_user_cities_and_room_for_the_network():
    errors = errors_of(minimal(users={"user_cities": [], "latency_budget_ms": 200, "model_time_ms": 250}))
    assert set(errors) == {"users.user_cities", "users.model_time_ms"}


def test_uploading_from_the_office_needs_the_uplink():
    data = minimal(
        "offline_batch",
        workload={"kind": "offline_batch", "batch_kind": "rendering"},
        data={"dataset_gb": 100},
    )
    assert set(errors_of(data)) == {"site.uplink_mbps"}
    data["data"]["source"] = "at_provider"
    assert validate_answers(data).data.dataset_gb == 100


def test_offline_batch_must_say_training_or_rendering_and_training_needs_checkpoints():
    assert "workload.batch_kind" in errors_of(
        minimal("offline_batch", data={"dataset_gb": 1, "source": "at_provider"})
    )
    errors = errors_of(
        minimal(
            "offline_batch",
            workload={"kind": "offline_batch", "batch_kind": "training"},
            data={"dataset_gb": 1, "source": "at_provider"},
        )
    )
    assert set(errors) == {"checkpoint.size_gb", "checkpoint.acceptable_stall_seconds"}


def test_unknown_keys_and_values_are_refused():
    errors = errors_of(minimal(compute={"gpus_per_node": 1, "gpu": "H800"}, budget={"priorities": ["speed"]}))
    assert "compute.gpu" in errors
    assert "budget.priorities[0]" in errors


def test_text_is_cleaned_and_blank_means_default():
    answers = validate_answers(
        minimal(
            compute={"gpus_per_node": "２", "gpu_models": "rtx 4090，H20", "nodes": ""},
            site={"office_city": "杭州市"},
            users={"user_cities": "上海、南京", "latency_budget_ms": ""},
        )
    )
    assert answers.compute.gpus_per_node == 2
    assert answers.compute.nodes == 1
    assert answers.compute.gpu_models == ["RTX 4090", "H20"]
    assert answers.site.office_city == "杭州"
    assert answers.users.user_cities == ["上海", "南京"]
    assert answers.users.latency_budget_ms == 300


def test_duplicates_and_too_many_priorities_are_refused():
    errors = errors_of(minimal(budget={"priorities": ["cost", "gpu", "storage", "latency"]}))
    assert "budget.priorities" in errors
    errors = errors_of(minimal(users={"user_cities": ["上海", "上海市"]}))
    assert "有重复项" in errors["users.user_cities"]


def test_a_section_validates_on_its_own_with_prefixed_fields():
    with pytest.raises(InvalidInput) as caught:
        validate_section("checkpoint", {"size_gb": "abc"})
    assert caught.value.errors[0].field == "checkpoint.size_gb"
    with pytest.raises(InvalidInput):
        validate_section("nope", {})


def test_answers_must_be_an_object():
    with pytest.raises(InvalidInput):
        validate_answers(["not", "an", "object"])


def fields_in_order(data) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        validate_answers(data)
    return [error.field for error in caught.value.errors]


def test_type_range_city_and_kind_errors_come_in_one_reply():
    fields = fields_in_order(
        {
            "workload": {"kind": "distributed_training"},
            "compute": {"nodes": 1, "gpus_per_node": -8},
            "model": {"parameters_billion": "abc"},
            "data": {"dataset_gb": 100},
            "site": {"office_city": "火星"},
            "checkpoint": {"size_gb": -1},
        }
    )
    assert fields == [
        "compute.gpus_per_node",
        "compute.nodes",
        "model.parameters_billion",
        "model.target_step_seconds",
        "site.office_city",
        "site.uplink_mbps",
        "checkpoint.size_gb",
        "checkpoint.acceptable_stall_seconds",
    ]


def test_a_bad_city_does_not_hide_the_kind_rules_of_other_sections():
    errors = errors_of(
        minimal(
            users={"user_cities": "上海, 月球", "latency_budget_ms": 100, "model_time_ms": 200},
            compute={"gpus_per_node": "two"},
        )
    )
    assert set(errors) == {"compute.gpus_per_node", "users.user_cities[1]", "users.model_time_ms"}
    assert "月球" in errors["users.user_cities[1]"] and "时延预算" in errors["users.model_time_ms"]


def test_a_rule_does_not_judge_on_an_answer_that_failed():
    # the data source is invalid, so whether the office uplink is needed is unknown: no guess
    errors = errors_of(
        minimal(
            "offline_batch",
            workload={"kind": "offline_batch", "batch_kind": "rendering"},
            data={"dataset_gb": 100, "source": "usb_stick"},
        )
    )
    assert set(errors) == {"data.source"}
    # an invalid kind leaves nothing for the kind rules to judge, but every section error is listed
    errors = errors_of(
        {"workload": {"kind": "training"}, "compute": {"gpus_per_node": 0}, "site": {"office_city": "x"}}
    )
    assert set(errors) == {"workload.kind", "compute.gpus_per_node", "site.office_city"}


def test_the_field_that_failed_is_not_reported_twice():
    errors = errors_of(minimal("distributed_training", compute={"nodes": "many", "gpus_per_node": 8}))
    assert "须为整数" in errors["compute.nodes"] and "at least 2 nodes" not in errors["compute.nodes"]


def test_a_step_reports_its_own_errors_and_its_kind_rules_together():
    stored = {"workload": {"kind": "distributed_training"}}
    with pytest.raises(InvalidInput) as caught:
        validate_step("compute", {"nodes": 1, "gpus_per_node": "x"}, stored)
    assert [error.field for error in caught.value.errors] == ["compute.gpus_per_node", "compute.nodes"]
    with pytest.raises(InvalidInput) as caught:
        validate_step("checkpoint", {"size_gb": "abc"}, stored)
    fields = [error.field for error in caught.value.errors]
    assert fields == ["checkpoint.size_gb", "checkpoint.acceptable_stall_seconds"]
    assert validate_step("compute", {"nodes": 2, "gpus_per_node": 8}, stored).nodes == 2
