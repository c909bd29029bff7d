"""Pure footer parsing: split numbers, links, company names, and what must not be picked up."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from scrapers import footer


def _ids(html: str) -> dict[tuple[str, str], str]:
    return {(item.kind, item.normalized): item.source for item in footer.parse(html).identifiers}


def test_digits_are_joined_only_when_they_make_a_valid_length():
    assert footer.join_split_numbers("京ICP备1234 5678号") == "京ICP备12345678号"
    assert footer.join_split_numbers("京公网安备 1101 0802 0321 37号") == "京公网安备 11010802032137号"
    # "2024" after the number is not glued on: 12 digits fit no ICP filing length.
    assert footer.join_split_numbers("京ICP备12345678 2024") == "京ICP备12345678 2024"
    assert footer.join_split_numbers("京B2-2020 2418") == "京B2-20202418"


def test_scripts_comments_and_phone_numbers_are_ignored():
    html = """<script>var x="京ICP备11111111号";</script><!-- 沪ICP备22222222号 -->
    <p>电话 010-12345678 订单 20240101123456</p><p>粤ICP备2021098765号</p>"""
    assert _ids(html) == {("icp_filing", "粤ICP备2021098765号"): "text"}


def test_link_source_beats_text_and_recordcode_gives_the_province():
    html = """<a href="https://beian.miit.gov.cn/">京ICP备19012345号-1</a>
    <a href="http://www.beian.gov.cn/portal/registerSystemInfo?RecordCode=44010602008765"><img src=x></a>"""
    assert _ids(html) == {
        ("icp_filing", "京ICP备19012345号-1"): "link",
        ("psb_filing", "粤公网安备44010602008765号"): "recordcode",
    }


def test_a_link_elsewhere_is_plain_text():
    html = '<a href="https://beian.miit.gov.cn.evil.example/">京ICP备19012345号</a>'
    assert _ids(html) == {("icp_filing", "京ICP备19012345号"): "text"}


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("Copyright © 2015-2024 北京示例云计算有限公司 All Rights Reserved", "北京示例云计算有限公司"),
        ("版权所有©示例（上海）信息技术股份有限公司", "示例（上海）信息技术股份有限公司"),
        ("示例网络有限责任公司 版权所有 2024", "示例网络有限责任公司"),
        ("© 2024 示例云 | 深圳示例算力有限公司", "深圳示例算力有限公司"),
        ("(c) 2024 Example Cloud Co., Ltd. All rights reserved.", "Example Cloud Co., Ltd."),
    ],
)
def test_copyright_company_names(line, name):
    assert footer.parse(f"<p>{line}</p>").company_name == name


def test_copyright_without_company_and_no_operator_gives_none():
    result = footer.parse("<p>版权所有 2024 示例云</p><p>京ICP备19012345号</p>")
    assert result.company_name is None and result.company_name_source is None


def test_candidate_links_same_site_only():
    soup = BeautifulSoup(
        """<a href="/about">关于我们</a><a href="https://example.cn/zz">资质</a>
        <a href="https://other.example/about">About</a><a href="javascript:void(0)">关于</a>
        <a href="/news">新闻</a><a href="/licence.html">Licence</a>""",
        "html.parser",
    )
    assert footer.candidate_links(soup.find_all("a"), "https://www.example.cn/") == (
        "https://www.example.cn/about",
        "https://example.cn/zz",
        "https://www.example.cn/licence.html",
    )


def test_empty_page_is_a_named_error():
    with pytest.raises(footer.ParseError):
        footer.parse(b"   \n")


def test_full_dict_keeps_validity_and_problems():
    item = footer.parse("<p>京ICP备1234567号</p>").identifiers[0].to_dict(full=True)
    assert item["valid"] is False and "7 位" in item["problems"][0]
