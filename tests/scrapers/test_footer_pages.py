"""Every saved footer page, fetched over real HTTP through the real client, gives its expected JSON."""

from __future__ import annotations

import json

import pytest

from scrapers import footer
from tests.scrapers.conftest import FOOTERS

PAGES = sorted(path.name for path in FOOTERS.glob("*.html"))


def test_there_are_enough_pages_and_some_are_gbk():
    assert len(PAGES) >= 15
    gbk = []
    for name in PAGES:
        data = (FOOTERS / name).read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            data.decode("gbk")  # really GBK, not just broken
            gbk.append(name)
    assert len(gbk) >= 3, gbk
    for name in PAGES:
        assert (FOOTERS / name).with_suffix(".json").is_file(), f"{name} has no expected JSON"


@pytest.mark.parametrize("name", PAGES)
def test_page_fetched_and_parsed_matches_expected_json(name, footer_server, client):
    result = client.fetch(footer_server.url(f"/{name}"))
    assert result.status == 200 and not result.truncated
    parsed = footer.parse(result.body, result.final_url, content_type=result.headers.get("content-type"))
    expected = json.loads((FOOTERS / name).with_suffix(".json").read_text(encoding="utf-8"))
    assert parsed.to_dict() == expected


@pytest.mark.parametrize("name", ["02_gbk_meta.html", "03_gb2312_header.html", "04_gbk_undeclared.html"])
def test_gbk_pages_decode_without_replacement_characters(name, footer_server, client):
    result = client.fetch(footer_server.url(f"/{name}"))
    assert result.encoding == "gb18030"
    assert "\ufffd" not in result.text
    assert "有限公司" in result.text


def test_header_charset_wins_and_characters_beyond_gb2312_decode(footer_server, client):
    # Declared GB2312 in the HTTP header only; 堃 exists in GBK/GB18030 but not in GB2312.
    result = client.fetch(footer_server.url("/03_gb2312_header.html"))
    assert result.headers["content-type"] == "text/html; charset=gb2312"
    assert "浙江堃云数据科技有限公司" in result.text
