"""Provider report rendering from snapshot inputs: real WeasyPrint PDFs read back with poppler."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from PIL import Image

from app.reports.render import render_html
from tests.reports.conftest import (
    make_inputs,
    make_meta,
    needs_poppler,
    pages_text,
    pdf_fonts,
    pdf_text,
    render_pages,
    squash,
    word_boxes,
)

pytestmark = needs_poppler

CHECK_RUN = {
    "id": 42,
    "verdict": "fail",
    "checked_on": "2026-03-02",
    "created_at": "2026-03-02T06:00:00+00:00",
    "created_by": "analyst-li",
    "provider_version": 3,
    "rules_version": "test",
    "counts": {"blocker": 1, "warning": 1, "info": 0},
    "fact_errors": {},
    "findings": [
        {
            "rule_id": "licence.coverage",
            "severity": "warning",
            "message_zh": "机房所在省份不在许可证覆盖范围内。",
            "message_en": "A datacenter lies outside the licence coverage.",
            "how_to_verify_zh": "核对许可证附件中的覆盖地区。",
            "how_to_verify_en": "Check the coverage annex of the licence.",
            "subject": "licence:1",
            "evidence": [
                {"kind": "registry", "entity": "datacenter", "id": 3, "field": "province", "value": "北京"}
            ],
        },
        {
            "rule_id": "licence.missing_b11",
            "severity": "blocker",
            "message_zh": "许可证不含 B11 互联网数据中心业务。",
            "message_en": "No licence includes B11.",
            "how_to_verify_zh": "在工信部系统查询许可证业务种类。",
            "how_to_verify_en": "Look the licence up in the MIIT system.",
            "subject": "provider",
            "evidence": [
                {
                    "kind": "evidence",
                    "evidence_id": 5,
                    "url": "https://compute.example/about",
                    "sha256": "0123456789abcdef" * 4,
                    "fetched_at": "2026-03-01T02:03:04+00:00",
                }
            ],
        },
    ],
}


@pytest.fixture(scope="module")
def plain_zh(renderer):
    """The default report: registry data only, no optional source installed."""
    return renderer.render(render_html("provider", make_inputs(), make_meta(), "zh", screen=False))


def test_chinese_report_text_in_the_right_places(plain_zh):
    pages = pages_text(plain_zh.data)
    assert 3 <= plain_zh.pages <= 6 and len(pages) == plain_zh.pages
    cover = pages[0]
    assert "GPU 算力供应商尽职调查报告" in cover
    assert "北京示例算力科技有限公司" in cover
    assert "GV-2026-000123" in cover and "analyst-li" in cover
    # no check run: the verdict and the counts are marked, and the cover says why
    assert re.search(r"总体结论\s+未核验", cover)
    assert "目录" in cover and "主体与资质" in cover
    body = "\n".join(pages[1:])
    # each number with its format check; the malformed public-security filing shows its problem
    assert "京B1.B2-20219901" in body and "格式正确" in body
    assert "格式错误" in body and "不一致" in body
    # claims with their figures, each marked untested
    assert "200 Gbps" in body and "100 Mbps" in body and "RoCE 3,200" in body and "3,000 IOPS" in body
    assert body.count("未测试") >= 10
    # header on later pages (short name and number), footer on every page
    for number, page in enumerate(pages, 1):
        assert f"第{number}页/共{len(pages)}页" in squash(page)  # pdftotext drops the spaces around numbers
        if number > 1:
            assert "示例算力" in page and "GV-2026-000123" in page


def test_table_of_contents_gives_page_numbers(plain_zh):
    pages = pages_text(plain_zh.data)
    toc = pages[0].split("目录", 1)[1]
    for title in ("主体与资质", "核查发现", "标称与实测", "图表", "建议"):
        match = re.search(rf"{title}\s+(\d+)", toc)
        assert match, title
        target = int(match.group(1))
        assert title in pages[target - 1], f"{title} is not on page {target}"


def test_every_page_renders_and_has_content(plain_zh, tmp_path: Path):
    images = render_pages(plain_zh.data, tmp_path)
    assert len(images) == plain_zh.pages
    for image in images:
        with Image.open(image) as page:
            grey = page.convert("L")
            assert grey.getextrema()[0] < 128, f"{image.name} is blank"


def test_font_is_embedded_as_a_subset_and_size_is_small(plain_zh, tmp_path: Path):
    assert len(plain_zh.data) < 1_000_000
    fonts = pdf_fonts(plain_zh.data, tmp_path)
    # one font, the pre-subset WenQuanYi copy, embedded ("yes") as a subset ("yes", ABCDEF+ prefix)
    assert len(fonts) == 1 and re.match(r"[A-Z]{6}\+GV-Sans\s.*\byes\s+yes\s+yes\b", fonts[0]), fonts


def test_charts_are_the_same_svg_in_html_and_pdf(renderer):
    inputs = make_inputs()
    html = render_html("provider", inputs, make_meta(), "zh", screen=True)
    pdf_html = render_html("provider", inputs, make_meta(), "zh", screen=False)
    svgs = re.findall(r"<svg .*?</svg>", html, re.S)
    assert len(svgs) == 2 and svgs == re.findall(r"<svg .*?</svg>", pdf_html, re.S)
    assert all("<script" not in svg for svg in svgs)
    text = pdf_text(renderer.render(pdf_html).data)
    assert "各套餐标称内网带宽" in text and "200 Gbps" in text


def test_findings_with_evidence_and_verdict(renderer):
    inputs = make_inputs(
        sources={
            "checks": {"status": "ok", "data": CHECK_RUN},
            "evidence": {"status": "empty", "data": None},
        }
    )
    html = render_html("provider", inputs, make_meta(), "zh", screen=False)
    pdf = renderer.render(html)
    pages = pages_text(pdf.data)
    assert re.search(r"总体结论\s+不通过", pages[0])
    text = "\n".join(pages)
    findings = text[text.index("2 核查发现") : text.index("3 标称与实测")]
    # most severe first, with how to verify and the evidence reference
    assert findings.index("许可证不含 B11") < findings.index("机房所在省份不在")
    assert (
        "阻断" in findings
        and "严重" not in findings.replace("严重程度", "")
        and "警告" in findings
        and "E1" in findings
    )
    assert "在工信部系统查询" in squash(findings) and "核对许可证附件中的覆盖地区" in squash(findings)
    # the licence row's check-result cell carries its finding; other numbers show none
    licence_row = BeautifulSoup(html, "html.parser").select("#licences tbody tr")[0]
    assert "警告：机房所在省份不在许可证覆盖范围内" in licence_row.select("td")[-1].get_text()
    filing_cells = [
        row.select("td")[-1].get_text(strip=True)
        for row in BeautifulSoup(html, "html.parser").select("#filings tbody tr")
    ]
    assert filing_cells == ["核查未发现问题", "核查未发现问题"]
    # the appendix lists the evidence with its time and hash
    appendix = squash(text[text.rindex("A 附录") :])
    assert "https://compute.example/about" in appendix
    assert "0123456789abcdef" * 4 in appendix
    assert "2026-03-01" in appendix


def test_english_report(renderer):
    inputs = make_inputs(sources={"checks": {"status": "ok", "data": CHECK_RUN}})
    pdf = renderer.render(render_html("provider", inputs, make_meta(language="en"), "en", screen=False))
    pages = pages_text(pdf.data)
    assert "GPU Provider Vetting Report" in pages[0]
    assert re.search(r"Overall verdict\s+Fail", pages[0])
    assert f"Page1of{len(pages)}" in squash(pages[0])
    text = "\n".join(pages)
    assert "No licence includes B11." in text and "Not tested" in text
    assert "Nominal intranet bandwidth per offer" in text


def test_measurements_feed_claims_and_charts(renderer):
    series = {
        "throughput": [
            {
                "name": "node1→node2",
                "unit": "Gbps",
                "nominal": 200,
                "points": [[m, 95 + m % 5] for m in range(30)],
            }
        ],
        "iops": [{"name": "randread 4k", "nominal": 2000000, "measured": 410000}],
        "gpu_util": [
            {"name": f"GPU{i}", "points": [[m, 90 - i * 20 + m % 3] for m in range(30)]} for i in range(2)
        ],
    }
    claims = [
        {"offer_id": 11, "metric": "intranet_gbps", "value": 96.5, "unit": "Gbps", "verdict": "fail"},
        {"offer_id": 11, "metric": "nominal_iops", "value": 410000, "unit": "IOPS"},
    ]
    inputs = make_inputs(
        sources={"measurements": {"status": "ok", "data": {"claims": claims, "series": series}}}
    )
    html = render_html("provider", inputs, make_meta(), "zh", screen=False)
    assert html.count("<svg") == 5  # two registry charts, throughput, IOPS, GPU utilisation
    row = BeautifulSoup(html, "html.parser").select("#claims-table tbody tr")[0]
    cells = [cell.get_text(" ", strip=True) for cell in row.select("td")]
    assert cells[2] == "200 Gbps 实测 96.5 Gbps (48%) 不通过"
    assert cells[7] == "2,000,000 IOPS 实测 410,000 IOPS (20%)"
    assert cells[1] == "H800 × 8 未测试"
    text = pdf_text(renderer.render(html).data)
    assert "96.5" in text and "48%" in text and "不通过" in text and "410,000" in text
    for title in ("吞吐随时间变化", "存储 IOPS（实测 vs 标称）", "GPU 利用率随时间变化"):
        assert title in text


HOSTILE_NAME = "<script>alert(1)</script><img src=https://evil.example/x.png>\u202e公司名反转\u202c"
LONG_WORD = "超长名称" + "A" * 400


def test_hostile_strings_are_escaped_and_the_layout_holds(renderer):
    inputs = make_inputs(
        provider={
            "legal_name": HOSTILE_NAME,
            "short_name": LONG_WORD,
            "registered_address": '<b>粗体</b> & "引号" \' <style>body{display:none}</style>',
            "notes": "\u200f" + "x" * 3000,
            "website": "javascript:alert(1)",
        },
        offers=[{**make_inputs()["offers"][0], "name": "<iframe src=file:///etc/passwd>" + "B" * 200}],
    )
    html = render_html("provider", inputs, make_meta(), "zh", screen=False)
    assert "<script>" not in html and "<img src=https://evil" not in html and "<iframe" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\u202e" not in html and "[U+202E]" in html and "[U+200F]" in html
    pdf = renderer.render(html)  # nothing in the fields was fetched, or this would raise ResourceRefused
    text = squash(pdf_text(pdf.data))
    assert "<script>alert(1)</script>" in text and "[U+202E]公司名反转[U+202C]" in text
    assert '<b>粗体</b>&"引号"\'' in text
    assert ("A" * 400) in text  # the long word is all there, wrapped
    # Layout holds: no word runs past the right page edge, and the page count stays bounded.
    for page, _x_min, x_max, width, word in word_boxes(pdf.data):
        assert x_max <= width - 20, f"page {page}: {word[:30]} overflows ({x_max} > {width})"
    assert pdf.pages <= 8


def test_only_long_provider_reports_get_a_table_of_contents(renderer):
    from app.reports.render import render_pdf

    short = render_pdf(renderer, "provider", make_inputs(), make_meta(), "zh")
    assert short.pages < 6 and "目录" not in pdf_text(short.data, first=1, last=1)
    licence = make_inputs()["licences"][0]
    many = [{**licence, "id": number, "number_raw": f"京B1-2021{number:04d}"} for number in range(1, 41)]
    long = render_pdf(renderer, "provider", make_inputs(licences=many), make_meta(), "zh")
    cover = pdf_text(long.data, first=1, last=1)
    assert long.pages >= 6 and "目录" in cover
    assert re.search(r"核查发现\s+(\d+)", cover.split("目录", 1)[1])
