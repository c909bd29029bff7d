"""API test helpers: a provider payload, clients with tokens per role, and arranging providers directly."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from app.core.audit import set_actor
from app.registry import providers as svc

ROLES = ("viewer", "analyst", "admin")

PROVIDER = {
    "legal_name": "示例算力科技有限公司",
    "short_name": "示例算力",
    "uscc": "91440300 708461136t",
    "registered_province": "粤",
    "website": "gpu.example.cn",
    "registered_capital_cny": 50_000_000,
    "status": "candidate",
    "licences": [
        {
            "number_raw": "ICP证粤Ｂ１－２０１９０００１号",
            "business_items": "B14, b11",
            "b11_includes_resource_collab": True,
            "coverage": "广东",
            "issued_on": "2019-03-01",
            "expires_on": "2029-03-01",
        }
    ],
    "filings": [
        {
            "number_raw": "粤ICP备2021012345号-1",
            "entity_name": "示例算力科技有限公司",
            "domain": "gpu.example.cn",
        },
        {"number_raw": "粤公网安备 44030502000001号"},
    ],
    "certifications": [{"kind": "dengbao", "level": 3}, {"kind": "iso27001", "number": "ISMS-001"}],
    "datacenters": [
        {"name": "深圳一号", "province": "广东", "city": "深圳"},
        {"name": "贵安二号", "province": "黔", "city": "贵安"},
    ],
    "offers": [
        {
            "name": "H800 裸金属",
            "gpu_model": " H800   SXM ",
            "gpus_per_node": 8,
            "gpu_memory_gb": 80,
            "intranet_gbps": 400,
            "rdma_type": "roce",
            "rdma_gbps": 400,
            "public_mbps": 100,
            "bandwidth_type": "dedicated",
            "storage_type": "local_nvme",
            "storage_capacity_gb": 15360,
            "price_gpu_hour_cny": 12.5,
            "datacenter_name": "贵安二号",
        },
        {"gpu_model": "A100", "gpus_per_node": "4", "bandwidth_type": "shared", "storage_type": "cloud_disk"},
    ],
}


def provider_payload(**overrides: Any) -> dict[str, Any]:
    """A complete ProviderCreate body (a fresh copy), with top-level fields overridden."""
    data = copy.deepcopy(PROVIDER)
    data.update(overrides)
    return data


@pytest.fixture
def arrange(session):
    """Create a provider through the service (not the API), for tests about other endpoints."""
    set_actor(session, user_id=None, name="arranger")

    def _create(**overrides: Any):
        return svc.create_provider(session, data=provider_payload(**overrides))

    return _create


@pytest.fixture
def api(app):
    """The test client; JSON calls go through it with headers given per call."""
    return app.test_client()


@pytest.fixture
def tokens(token_for) -> dict[str, dict[str, str]]:
    """Bearer headers for one user of each role, plus {} for anonymous."""
    headers = {role: token_for(role) for role in ROLES}
    headers["anonymous"] = {}
    return headers


def assert_error_shape(response, status: int) -> list[dict[str, str]]:
    """The response has `status` and the one error shape; returns its errors."""
    assert response.status_code == status, response.get_data(as_text=True)[:1000]
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"errors"} and body["errors"], body
    for error in body["errors"]:
        assert set(error) in ({"field", "message"}, {"field", "message", "accepted"}), error
        assert isinstance(error["field"], str) and error["message"]
        if "accepted" in error:  # a choice error: the values accepted, as the request writes them
            assert error["accepted"] and all(isinstance(value, str) for value in error["accepted"]), error
    return body["errors"]
