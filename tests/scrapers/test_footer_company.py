"""Company names in footers without a copyright line: lone name lines and labels, GBK included, no prose."""

from __future__ import annotations

import pytest

from scrapers import footer


def fetched(name, footer_server, client) -> footer.FooterResult:
    result = client.fetch(footer_server.url(f"/{name}"))
    assert result.status == 200
    return footer.parse(result.body, result.final_url, content_type=result.headers.get("content-type"))


@pytest.mark.parametrize(
    ("page", "name", "source"),
    [
        ("18_lone_name_line.html", "杭州青岚智算科技有限公司", "lone_line"),
        ("19_gbk_label_group.html", "四川瀚洋数智集团", "operator"),
        ("20_copyright_label_institute.html", "南京星澜智算研究院", "copyright"),
        ("21_english_lone_name.html", "Shenzhen Harbourline Compute Technology Co., Ltd.", "lone_line"),
        ("22_prose_near_miss.html", None, None),
    ],
)
def test_saved_pages_name_their_company_and_say_how(page, name, source, footer_server, client):
    parsed = fetched(page, footer_server, client)
    assert (parsed.company_name, parsed.company_name_source) == (name, source)


def test_the_gbk_page_is_decoded_and_its_label_beats_the_lone_line(footer_server, client):
    result = client.fetch(footer_server.url("/19_gbk_label_group.html"))
    assert result.encoding == "gb18030" and "\ufffd" not in result.text
    assert "瀚洋数智集团（成都）云计算有限公司" in result.text  # a lone name line, which the label outranks
    assert fetched("19_gbk_label_group.html", footer_server, client).company_name == "四川瀚洋数智集团"


@pytest.mark.parametrize(
    ("html", "name"),
    [
        ("<p>主办单位：示例数据集团</p>", "示例数据集团"),
        ("<p>运营单位：示例集团（上海）网络科技有限公司</p>", "示例集团（上海）网络科技有限公司"),
        ("<p>版权所有：示例智算研究院</p>", "示例智算研究院"),
        ("<p>版权所有 示例云（杭州）集团有限公司</p>", "示例云（杭州）集团有限公司"),
        ("<dl><dt>网站所有者</dt><dd>示例算力股份有限公司</dd></dl>", "示例算力股份有限公司"),
        ("<p>经营主体：示例超算有限责任公司</p>", "示例超算有限责任公司"),
        ("<footer><p>北京示例集团科技有限公司</p></footer>", "北京示例集团科技有限公司"),
        ("<footer><p>Example Compute Cloud Co., Ltd.</p></footer>", "Example Compute Cloud Co., Ltd."),
        ("<footer><div>Example Lattice Inc.</div></footer>", "Example Lattice Inc."),
    ],
)
def test_labelled_and_lone_names(html, name):
    assert footer.parse(html).company_name == name


@pytest.mark.parametrize(
    "html",
    [
        "<p>本站由示例科技有限公司提供技术支持，欢迎咨询。</p>",
        "<p>我们是一家专注GPU的有限公司</p>",
        "<p>机房由多家有限公司共同运营</p>",
        "<p><a href='/a'>关于集团</a></p><p><a href='/b'>加入研究院</a></p>",
        "<p>We partner with Acme Cloud Inc.</p>",
        "<p>有限公司</p>",
    ],
)
def test_a_sentence_or_menu_entry_is_not_a_name(html):
    assert footer.parse(html).company_name is None


def test_precedence_copyright_then_label_then_lone_line():
    lone = "<p>示例甲有限公司</p>"
    label = "<p>主办单位：示例乙有限公司</p>"
    copyright_line = "<p>© 2024 示例丙有限公司</p>"
    assert footer.parse(label + lone).company_name == "示例乙有限公司"
    assert footer.parse(lone + label).company_name == "示例乙有限公司"
    assert footer.parse(lone + label + copyright_line).company_name == "示例丙有限公司"


def test_a_lone_name_counts_only_in_the_footer():
    body = "<h2>示例新闻集团</h2>" + "".join(f"<p>第 {n} 段正文。</p>" for n in range(footer.FOOTER_LINES))
    assert footer.parse(body).company_name is None
    assert footer.parse(body + "<footer><p>示例页脚有限公司</p></footer>").company_name == "示例页脚有限公司"
