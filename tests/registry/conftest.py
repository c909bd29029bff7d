"""Helpers for the transfer and demo tests: awkward provider data and a snapshot of the registry."""

from __future__ import annotations

import copy
from typing import Any

from sqlmodel import Session

from app.registry.import_plan import plain as _plain
from app.registry.provider_list import ProviderQuery, list_providers
from app.registry.providers import provider_input
from tests.conftest import _empty_tables


def snapshot(session: Session) -> list[dict[str, Any]]:
    """Every provider as provider_input(portable=True), JSON-plain, ordered by legal name then USCC."""
    session.expire_all()
    result = []
    page = 1
    while True:
        batch = list_providers(session, query=ProviderQuery(sort="name", page=page, per_page=100))
        result.extend(_plain(provider_input(p, portable=True)) for p in batch.items)
        if page >= batch.pages:
            break
        page += 1
    return sorted(result, key=lambda p: (p["legal_name"], p["uscc"] or ""))


def empty_database(app, session: Session) -> None:
    """Remove every row, as if the registry had just been created (ending `session`'s transaction first)."""
    session.rollback()  # PostgreSQL: emptying would wait for the locks the open transaction holds
    _empty_tables(app.extensions["gpuvet.engine"])


AWKWARD = {
    "legal_name": "示例“引号, 逗号”数据有限公司",
    "legal_name_en": 'Example "Quotes, Commas" Data Co., Ltd.',
    "short_name": "=示例",
    "uscc": "91110108EXAMPL995L",
    "registered_province": "北京",
    "registered_address": "北京市海淀区示例路 1 号，二号楼",  # one line: addresses refuse line breaks
    "website": "https://awkward.example",
    "registered_capital_cny": 12345678,
    "contact_name": "张示例",
    "contact_phone": "+86 10 5550 0101",
    "contact_email": "a@awkward.example",
    "notes": '-第一行\n第二行，含逗号, 和 "引号"\n@第三行',
    "status": "suspended",
    "discloses_network_topology": False,
    "discloses_storage_config": None,
    "licences": [
        {
            "number_raw": "ICP证京B1.B2-20219901号",
            "company_name": "示例“引号, 逗号”数据有限公司",
            "business_items": ["B25", "B11", "B14"],
            "b11_includes_resource_collab": False,
            "coverage": ["北京", "河北"],
            "issuer": "北京市通信管理局",
            "issued_on": "2021-03-15",
            "expires_on": "2026-03-14",
            "status": "过期",
        },
        {"number_raw": "B1-20199901", "coverage": [], "status": "正常"},
        {"number_raw": "粤ICP备2022099901号"},
    ],
    "filings": [
        {
            "number_raw": "京ICP备2021099901号-1",
            "entity_name": "某个人",
            "entity_nature": "个人",
            "domain": "a.example",
        },
        {"kind": "psb_filing", "number_raw": "京公网安备11010802099901号"},
        {"kind": "icp_licence", "number_raw": "京ICP证099901号"},
    ],
    "certifications": [
        {"kind": "dengbao", "level": 3, "number": "D-1", "issuer": "示例", "expires_on": "2027-12-31"},
        {"kind": "other", "name": "可信云（示例）"},
        {"kind": "iso9001"},
    ],
    # Stored order differs from the order in which offers first mention them.
    "datacenters": [
        {"name": "乙机房", "province": "河北", "city": "廊坊"},
        {"name": "甲机房", "province": "北京", "city": "北京"},
        {"name": "空机房", "province": "北京"},
    ],
    "offers": [
        {
            "name": "H800, 训练",
            "offer_kind": "bare_metal",
            "gpu_model": "H800",
            "gpus_per_node": 8,
            "gpu_memory_gb": 80,
            "vcpu": 192,
            "ram_gb": 2048,
            "intranet_gbps": 200.5,
            "rdma_type": "roce",
            "rdma_gbps": 3200,
            "public_mbps": 100,
            "bandwidth_type": "dedicated",
            "storage_type": "local_nvme",
            "storage_capacity_gb": 30720,
            "nominal_iops": 2000000,
            "price_gpu_hour_cny": 15.8,
            "price_month_cny": 86000,
            "notes": '=HYPERLINK("x")',
            "datacenter_name": "甲机房",
        },
        {"gpu_model": "RTX 4090", "gpus_per_node": 4, "datacenter_name": "乙机房"},
        {"gpu_model": "L40S", "gpus_per_node": 2, "offer_kind": "cloud_instance"},
        {"gpu_model": "A800", "gpus_per_node": 8, "datacenter_name": "甲机房", "bandwidth_type": "shared"},
    ],
}

BARE = {"legal_name": "示例空壳有限公司"}


def awkward(**overrides: Any) -> dict[str, Any]:
    """A provider with every kind of record and values that are hard to carry through CSV."""
    data = copy.deepcopy(AWKWARD)
    data.update(overrides)
    return data
