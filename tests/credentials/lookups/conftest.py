"""Fixtures for the official-lookup tests: the fake official server and an app pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.accounts import users
from app.models import Provider
from app.registry import providers as provider_service
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
from tests.fakes.miit import FakeMiit

LEGAL_NAME = "北京北辰算力科技有限公司"


@pytest.fixture
def fake() -> Iterator[FakeMiit]:
    """Both official systems on 127.0.0.1, with one company's records."""
    with FakeMiit() as server:
        server.icp_records[LEGAL_NAME] = [
            {
                "unitName": LEGAL_NAME,
                "natureName": "企业",
                "mainLicence": "京ICP备19012345号",
                "serviceLicence": "京ICP备19012345号-1",
                "domain": "beichen-gpu.example.cn",
                "updateRecordTime": "2024-03-01 10:00:00",
            }
        ]
        server.licence_records[LEGAL_NAME] = [
            {
                "companyName": LEGAL_NAME,
                "licenceNo": "B1-20190001",
                "status": "正常",
                "businessItems": ["B11-互联网数据中心业务（含互联网资源协作服务）", "B14-互联网接入服务业务"],
                "coverage": "北京、上海、广东",
                "issueDate": "2019-05-20",
                "expiryDate": "2029-05-20",
            }
        ]
        yield server


@pytest.fixture
def lookup_app(immediate_jobs, fake):  # noqa: F811 - pytest fixture injection
    """The app with jobs inline, loopback allowed, fast limits, and lookup endpoints at the fake."""
    app = immediate_jobs
    settings = app.config["GPUVET_SETTINGS"]
    app.config["GPUVET_SETTINGS"] = settings.model_copy(
        update={
            "fetch_allow_cidrs": ("127.0.0.0/8",),
            "fetch_min_interval_s": 0.0,
            "fetch_total_timeout_s": 2.0,
            "fetch_read_timeout_s": 1.5,
            "fetch_retries": 0,
            "lookup_icp_base_url": fake.icp_base,
            "lookup_licence_base_url": fake.licence_base,
            "lookup_max_failures": 3,
        }
    )
    return app


@pytest.fixture
def provider(session) -> Provider:
    """A provider whose legal name the fake knows."""
    data: dict[str, Any] = {
        "legal_name": LEGAL_NAME,
        "registered_province": "北京",
        "website": "https://beichen-gpu.example.cn/",
        "filings": [{"kind": "icp_filing", "number_raw": "京ICP备19012345号"}],
    }
    return provider_service.create_provider(session, data=data)


@pytest.fixture
def analyst(session):
    """An analyst account (the actor of the lookups)."""
    return users.create_user(session, username="analyst1", password="correct horse battery", role="analyst")
