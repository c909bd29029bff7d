"""Report test helpers: one shared renderer, report inputs built by hand, and poppler to read PDFs back."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.reports.fonts import DEFAULT_FONT
from app.reports.pdf import PdfRenderer
from tests.conftest import missing_tool

POPPLER = shutil.which("pdftotext") and shutil.which("pdftoppm")
# Skipped without poppler, except where tools are required (CI, scripts/test.sh): there it fails.
needs_poppler = pytest.mark.usefixtures("requires_poppler")


@pytest.fixture
def requires_poppler() -> None:
    """poppler-utils (pdftotext, pdftoppm) reads the PDFs back; scripts/install.sh installs it."""
    if not POPPLER:
        missing_tool("poppler-utils (pdftotext, pdftoppm) is not installed")


@pytest.fixture(scope="session")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> PdfRenderer:
    """One renderer for the whole run (the font subset is built once)."""
    return PdfRenderer(font_path=DEFAULT_FONT, cache_dir=tmp_path_factory.mktemp("report-fonts"))


def pdf_text(data: bytes, *, first: int | None = None, last: int | None = None, layout: bool = False) -> str:
    """The PDF's text as pdftotext reads it (pages split by form feeds)."""
    args = ["pdftotext", "-enc", "UTF-8"]
    if layout:
        args.append("-layout")
    if first:
        args += ["-f", str(first)]
    if last:
        args += ["-l", str(last)]
    result = subprocess.run([*args, "-", "-"], input=data, capture_output=True, check=True, timeout=60)
    return result.stdout.decode("utf-8")


def pages_text(data: bytes) -> list[str]:
    """The text of each page."""
    return pdf_text(data).split("\f")[:-1]


def squash(text: str) -> str:
    """Text without any whitespace (pdftotext breaks long values over lines)."""
    return re.sub(r"\s+", "", text)


def render_pages(data: bytes, folder: Path, *, dpi: int = 40) -> list[Path]:
    """Render every page to PNG with pdftoppm; returns the images in page order."""
    pdf = folder / "report.pdf"
    pdf.write_bytes(data)
    subprocess.run(
        ["pdftoppm", "-r", str(dpi), "-png", str(pdf), str(folder / "page")], check=True, timeout=120
    )
    return sorted(folder.glob("page-*.png"))


def pdf_fonts(data: bytes, folder: Path) -> list[str]:
    """The font lines of pdffonts (name, type, encoding, embedded, subset, unicode map, object)."""
    pdf = folder / "fonts.pdf"
    pdf.write_bytes(data)
    result = subprocess.run(["pdffonts", str(pdf)], capture_output=True, check=True, timeout=60)
    return result.stdout.decode("utf-8").splitlines()[2:]


def word_boxes(data: bytes) -> list[tuple[int, float, float, float, str]]:
    """(page, xMin, xMax, page width, word) of every word, from pdftotext -bbox."""
    result = subprocess.run(
        ["pdftotext", "-bbox", "-enc", "UTF-8", "-", "-"],
        input=data,
        capture_output=True,
        check=True,
        timeout=60,
    )
    html = result.stdout.decode("utf-8")
    boxes = []
    for number, (width, body) in enumerate(_PAGE.findall(html), 1):
        for x_min, x_max, word in _WORD.findall(body):
            boxes.append((number, float(x_min), float(x_max), float(width), word))
    return boxes


_PAGE = re.compile(r'<page width="([\d.]+)"[^>]*>(.*?)</page>', re.S)
_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)"[^>]*>(.*?)</word>')


PROVIDER = {
    "id": 7,
    "version": 3,
    "created_at": "2026-01-05T08:00:00+00:00",
    "updated_at": "2026-03-01T09:30:00+00:00",
    "legal_name": "北京示例算力科技有限公司",
    "legal_name_en": "Example Compute Technology Co., Ltd.",
    "short_name": "示例算力",
    "uscc": "91110108EXAMPL995L",
    "registered_province": "北京",
    "registered_address": "北京市海淀区示例路 1 号",
    "website": "https://compute.example",
    "registered_capital_cny": 20000000,
    "contact_name": "张示例",
    "contact_phone": "010-5550-0101",
    "contact_email": "sales@compute.example",
    "notes": None,
    "status": "candidate",
    "discloses_network_topology": None,
    "discloses_storage_config": False,
}

OFFERS = [
    {
        "id": 11,
        "name": "H800 训练型",
        "offer_kind": "bare_metal",
        "gpu_model": "H800",
        "gpus_per_node": 8,
        "gpu_memory_gb": 80,
        "vcpu": 192,
        "ram_gb": 2048,
        "intranet_gbps": 200.0,
        "rdma_type": "roce",
        "rdma_gbps": 3200.0,
        "public_mbps": 100.0,
        "bandwidth_type": "dedicated",
        "storage_type": "local_nvme",
        "storage_capacity_gb": 30720,
        "nominal_iops": 2000000,
        "price_gpu_hour_cny": 15.8,
        "price_month_cny": 86000.0,
        "notes": None,
        "datacenter_id": 3,
        "datacenter_name": "甲机房",
    },
    {
        "id": 12,
        "name": None,
        "offer_kind": "cloud_instance",
        "gpu_model": "RTX 4090",
        "gpus_per_node": 4,
        "gpu_memory_gb": 24,
        "vcpu": None,
        "ram_gb": None,
        "intranet_gbps": 25.0,
        "rdma_type": "none",
        "rdma_gbps": None,
        "public_mbps": 50.0,
        "bandwidth_type": "shared",
        "storage_type": "cloud_disk",
        "storage_capacity_gb": None,
        "nominal_iops": 3000,
        "price_gpu_hour_cny": 2.6,
        "price_month_cny": None,
        "notes": None,
        "datacenter_id": None,
        "datacenter_name": None,
    },
]


def _check(text: str, kind: str, valid: bool = True, problems: list[str] | None = None) -> dict[str, Any]:
    return {"input": text, "kind": kind, "normalized": text, "valid": valid, "problems": problems or []}


LICENCES = [
    {
        "id": 1,
        "number_raw": "京B1.B2-20219901",
        "company_name": "北京示例算力科技有限公司",
        "business_items": ["B11", "B25"],
        "b11_includes_resource_collab": True,
        "coverage": ["北京"],
        "issuer": "北京市通信管理局",
        "issued_on": "2021-03-15",
        "expires_on": "2026-03-14",
        "status": "正常",
        "number": "京B1.B2-20219901",
        "number_kind": "licence",
        "categories": ["B1", "B2"],
        "check": _check("京B1.B2-20219901", "licence"),
    }
]

FILINGS = [
    {
        "id": 2,
        "kind": "icp_filing",
        "number_raw": "京ICP备2021099901号-1",
        "entity_name": "北京示例算力科技有限公司",
        "entity_nature": "企业",
        "domain": "compute.example",
        "number": "京ICP备2021099901号-1",
        "check": _check("京ICP备2021099901号-1", "icp_filing"),
    },
    {
        "id": 3,
        "kind": "psb_filing",
        "number_raw": "京公网安备12010802099901号",
        "entity_name": None,
        "entity_nature": None,
        "domain": None,
        "number": "京公网安备12010802099901号",
        "check": _check(
            "京公网安备12010802099901号",
            "psb_filing",
            valid=False,
            problems=["公网安备号前两位为 12（天津），与前缀“京”（北京，11）不一致。"],
        ),
    },
]


def unavailable() -> dict[str, dict[str, Any]]:
    """Every optional source missing, as on an installation without checks, benchmarks or checklists."""
    return {
        key: {"status": "unavailable", "data": None}
        for key in ("checks", "evidence", "measurements", "checklist")
    }


def make_inputs(**overrides: Any) -> dict[str, Any]:
    """Report inputs shaped like app.credentials.report_inputs.provider_inputs, changed by `overrides`."""
    inputs = {
        "schema": "gpuvet-provider-report/1",
        "today": "2026-03-02",
        "provider": copy.deepcopy(PROVIDER),
        "uscc_check": _check(PROVIDER["uscc"], "uscc"),
        "licences": copy.deepcopy(LICENCES),
        "filings": copy.deepcopy(FILINGS),
        "certifications": [],
        "datacenters": [{"id": 3, "name": "甲机房", "province": "北京", "city": "北京"}],
        "offers": copy.deepcopy(OFFERS),
        "sources": unavailable(),
    }
    provider = overrides.pop("provider", None)
    if provider:
        inputs["provider"].update(provider)
    sources = overrides.pop("sources", None)
    if sources:
        inputs["sources"].update(sources)
    inputs.update(overrides)
    return inputs


def make_meta(number: str | None = "GV-2026-000123", language: str = "zh") -> dict[str, Any]:
    """Export metadata as the service builds it."""
    return {
        "number": number,
        "created_at": datetime(2026, 3, 2, 6, 30, tzinfo=UTC).isoformat(),
        "author": "analyst-li",
        "language": language,
        "inputs_sha256": "ab" * 32,
    }
