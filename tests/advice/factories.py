"""Plain facts for the pure advice tests (no database)."""

from __future__ import annotations

from datetime import date
from typing import Any

from app.advice.answers import validate_answers
from app.advice.facts import LicenceFacts, OfferFacts, ProviderFacts

TODAY = date(2026, 6, 1)


def licence(number: str = "京B1-20240001", **overrides: Any) -> LicenceFacts:
    """A licence record as the registry would hold it."""
    values: dict[str, Any] = {
        "number_raw": number,
        "business_items": ["B11"],
        "b11_includes_resource_collab": True,
        "coverage": [],
        "status": "正常",
        "issued_on": date(2024, 1, 1),
        "expires_on": date(2029, 1, 1),
    }
    values.update(overrides)
    return LicenceFacts.from_record(**values)


def provider(pid: int = 1, **overrides: Any) -> ProviderFacts:
    """A provider with one Beijing B11 licence unless told otherwise."""
    values: dict[str, Any] = {"id": pid, "name": f"示例供应商{pid}", "licences": (licence(),)}
    values.update(overrides)
    return ProviderFacts(**values)


def offer(oid: int = 1, **overrides: Any) -> OfferFacts:
    """An 8-GPU bare-metal H800 node in Beijing with RoCE, dedicated bandwidth and local NVMe."""
    values: dict[str, Any] = {
        "id": oid,
        "provider": provider(),
        "name": f"套餐{oid}",
        "offer_kind": "bare_metal",
        "gpu_model": "H800",
        "gpus_per_node": 8,
        "gpu_memory_gb": 80,
        "intranet_gbps": 100,
        "rdma_type": "roce",
        "rdma_gbps": 400,
        "public_mbps": 100,
        "bandwidth_type": "dedicated",
        "storage_type": "local_nvme",
        "storage_capacity_gb": 15000,
        "nominal_iops": 1_000_000,
        "price_month_cny": 80000,
        "datacenter_name": "北京机房",
        "datacenter_province": "北京",
        "datacenter_city": "北京",
    }
    values.update(overrides)
    return OfferFacts(**values)


def training_answers(**overrides: Any):
    """4 x 8 GPUs, 7B bf16, 10 s step with 30% for sync (needs 56 Gbps), 100 GB checkpoints in 120 s."""
    data: dict[str, Any] = {
        "workload": {"kind": "distributed_training"},
        "compute": {"nodes": 4, "gpus_per_node": 8, "gpu_models": ["H800", "A800"]},
        "model": {"parameters_billion": 7, "precision": "bf16", "target_step_seconds": 10, "sync_share": 0.3},
        "data": {"dataset_gb": 1000, "source": "at_provider"},
        "site": {"office_city": "北京"},
        "checkpoint": {"size_gb": 100, "acceptable_stall_seconds": 120},
    }
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value}
    return validate_answers(data)


def inference_answers(**overrides: Any):
    """Users in Shanghai and Hangzhou, 300 ms budget of which the model takes 260 ms (40 ms network)."""
    data: dict[str, Any] = {
        "workload": {"kind": "interactive_inference"},
        "compute": {"gpus_per_node": 2},
        "site": {"office_city": "上海"},
        "users": {"user_cities": ["上海", "杭州"], "latency_budget_ms": 300, "model_time_ms": 260},
    }
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value}
    return validate_answers(data)
