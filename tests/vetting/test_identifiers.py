"""Tests for the identifier parser: licences, ICP filings/licences, PSB filings and credit codes."""

from __future__ import annotations

import datetime
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.provinces import PROVINCES
from app.vetting import identifier_common, identifiers
from app.vetting.identifier_common import MESSAGES, Identifier, normalize_text
from app.vetting.identifiers import (
    find_identifiers,
    identify,
    parse_icp_filing,
    parse_icp_licence,
    parse_licence,
    parse_psb_filing,
)
from app.vetting.uscc import org_code_check_char, parse_uscc, uscc_check_char

FIXED_TODAY = datetime.date(2025, 6, 1)


@pytest.fixture(autouse=True)
def fixed_today(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin "today" so year checks are deterministic."""
    monkeypatch.setattr(identifiers, "_today", lambda: FIXED_TODAY)


# (input, kind, normalized, province_code)
VALID = [
    # licences
    ("B1-20190001", "licence", "B1-20190001", None),
    ("A2.B1.B2-20090001", "licence", "A2.B1.B2-20090001", None),
    ("京B2-20202418", "licence", "京B2-20202418", "11"),
    ("豫B2-20231089", "licence", "豫B2-20231089", "41"),
    ("合字B1.B2-20130004", "licence", "合字B1.B2-20130004", None),
    ("ICP证粤B2-20230674号", "licence", "粤B2-20230674", "44"),
    ("ICP证：粤B2-20230674号", "licence", "粤B2-20230674", "44"),
    ("京ICP证B2-20202418号", "licence", "京B2-20202418", "11"),
    ("蜀B1-20200012", "licence", "蜀B1-20200012", "51"),
    ("川B1-20200012", "licence", "川B1-20200012", "51"),
    ("黔B1-20180003", "licence", "黔B1-20180003", "52"),
    ("滇B2-20170012", "licence", "滇B2-20170012", "53"),
    ("陇B1-20190002", "licence", "陇B1-20190002", "62"),
    ("秦B2-20160005", "licence", "秦B2-20160005", "61"),
    ("京Ｂ２－２０２０２４１８", "licence", "京B2-20202418", "11"),
    ("b1-20190001", "licence", "B1-20190001", None),
    ("B2、B1-20190001", "licence", "B1.B2-20190001", None),
    ("B2·B1-20150001", "licence", "B1.B2-20150001", None),
    ("B1/B2-20150001", "licence", "B1.B2-20150001", None),
    ("B2．A2．B1-20090001", "licence", "A2.B1.B2-20090001", None),
    ("京 B2 - 20202418 号", "licence", "京B2-20202418", "11"),
    ("京B2—20202418", "licence", "京B2-20202418", "11"),
    ("京B2–20202418", "licence", "京B2-20202418", "11"),
    ("京B2\u200b-2020\u00a02418", "licence", "京B2-20202418", "11"),
    ("沪B2-20070217号", "licence", "沪B2-20070217", "31"),
    ("增值电信业务经营许可证：B1-20190001", "licence", "B1-20190001", None),
    ("京合字B2-20150001", "licence", "合字京B2-20150001", "11"),
    # ICP filings
    ("京ICP备10046444号-9", "icp_filing", "京ICP备10046444号-9", "11"),
    ("京ICP备10046444-9号", "icp_filing", "京ICP备10046444号-9", "11"),
    ("京ICP备10046444号", "icp_filing", "京ICP备10046444号", "11"),
    ("粤ICP备2021012345号", "icp_filing", "粤ICP备2021012345号", "44"),
    ("粤ICP备2021012345", "icp_filing", "粤ICP备2021012345号", "44"),
    ("京icp备10046444号", "icp_filing", "京ICP备10046444号", "11"),
    ("京ＩＣＰ备１００４６４４４号－９", "icp_filing", "京ICP备10046444号-9", "11"),
    ("京ICP备 10046444 号 - 9", "icp_filing", "京ICP备10046444号-9", "11"),
    ("ICP备案号：京ICP备10046444号", "icp_filing", "京ICP备10046444号", "11"),
    ("（京ICP备10046444号）", "icp_filing", "京ICP备10046444号", "11"),
    ("蜀ICP备2022001234号-1", "icp_filing", "蜀ICP备2022001234号-1", "51"),
    ("黔ICP备19004567号", "icp_filing", "黔ICP备19004567号", "52"),
    ("滇ICP备2023001122号-2", "icp_filing", "滇ICP备2023001122号-2", "53"),
    ("陇ICP备18000123号", "icp_filing", "陇ICP备18000123号", "62"),
    ("陕ICP备2024012345号", "icp_filing", "陕ICP备2024012345号", "61"),
    # legacy ICP licences
    ("京ICP证030173号", "icp_licence", "京ICP证030173号", "11"),
    ("京ICP证030173", "icp_licence", "京ICP证030173号", "11"),
    ("沪ICP证:130164号", "icp_licence", "沪ICP证130164号", "31"),
    # public-security filings
    ("京公网安备11010802032137号", "psb_filing", "京公网安备11010802032137号", "11"),
    ("京公网安备 11010802032137号", "psb_filing", "京公网安备11010802032137号", "11"),
    ("京公网安备11010802032137", "psb_filing", "京公网安备11010802032137号", "11"),
    ("粤公网安备 44030502008569号", "psb_filing", "粤公网安备44030502008569号", "44"),
    ("蜀公网安备51019002004309号", "psb_filing", "蜀公网安备51019002004309号", "51"),
    # unified social credit codes (real public codes and constructed ones)
    ("91110000802100433B", "uscc", "91110000802100433B", "11"),
    ("91440300708461136T", "uscc", "91440300708461136T", "44"),
    ("914403001922038216", "uscc", "914403001922038216", "44"),
    ("9111 0000 8021 0043 3b", "uscc", "91110000802100433B", "11"),
    ("统一社会信用代码：91440300708461136T", "uscc", "91440300708461136T", "44"),
    ("9151010010000018XH", "uscc", "9151010010000018XH", "51"),
    ("915201001000000402", "uscc", "915201001000000402", "52"),
    ("12100000400012086X", "uscc", "12100000400012086X", None),
]


@pytest.mark.parametrize(("text", "kind", "normalized", "province_code"), VALID)
def test_valid_identifiers(text: str, kind: str, normalized: str, province_code: str | None) -> None:
    result = identify(text)
    assert (result.kind, result.normalized, result.province_code) == (kind, normalized, province_code)
    assert result.valid, result.problems
    assert result.problems == []
    assert result.input == text


# (input, kind, normalized, fragment expected in one of the problems)
INVALID = [
    ("京A2.B1-20190001", "licence", "京A2.B1-20190001", "省级许可证不能包含 A 类基础电信业务"),
    ("京B2-20311234", "licence", "京B2-20311234", "许可证号中的年份 2031 晚于今年"),
    ("B2-20261234", "licence", "B2-20261234", "年份 2026 晚于今年"),
    ("B3-20190001", "licence", "B3-20190001", "“B3”无效"),
    ("C1-20190001", "licence", "C1-20190001", "“C1”无效"),
    ("B11-20190001", "licence", "B11-20190001", "应为 B1"),
    ("港B2-20190001", "licence", "港B2-20190001", "前缀“港”不是省份简称"),
    ("广东B2-20190001", "licence", "广东B2-20190001", "简称“粤”"),
    ("B1-2019001", "licence", "B1-2019001", "实际为 7 位"),
    ("粤ICP证京B2-20202418号", "licence", "京B2-20202418", "不一致"),
    ("京ICP备1004644号", "icp_filing", "京ICP备1004644号", "实际为 7 位"),
    ("粤ICP备2099012345号", "icp_filing", "粤ICP备2099012345号", "年份 2099 晚于今年"),
    ("粤ICP备1999012345号", "icp_filing", "粤ICP备1999012345号", "早于 2000 年"),
    ("ICP备10046444号", "icp_filing", "ICP备10046444号", "缺少省份简称"),
    ("港ICP备10046444号", "icp_filing", "港ICP备10046444号", "前缀“港”不是省份简称"),
    ("京ICP证03017号", "icp_licence", "京ICP证03017号", "实际为 5 位"),
    ("ICP证030173号", "icp_licence", "ICP证030173号", "缺少省份简称"),
    ("沪公网安备11010802032137号", "psb_filing", "沪公网安备11010802032137号", "11（北京）"),
    ("黔公网安备51019002004309号", "psb_filing", "黔公网安备51019002004309号", "“黔”（贵州，52）"),
    ("京公网安备1101080203213号", "psb_filing", "京公网安备1101080203213号", "实际为 13 位"),
    ("公网安备11010802032137号", "psb_filing", "公网安备11010802032137号", "缺少省份简称"),
    ("京公网安备99010802032137号", "psb_filing", "京公网安备99010802032137号", "“99”不是已知"),
    ("91110000802100433C", "uscc", "91110000802100433C", "第 18 位校验码应为 B，实际为 C"),
    ("91110000802100434E", "uscc", "91110000802100434E", "第 17 位（组织机构代码校验码）应为 3，实际为 4"),
    ("9111000080210O433B", "uscc", "9111000080210O433B", "“O”无效"),
    ("919900008021004332", "uscc", "919900008021004332", "990000 不属于已知省份"),
    ("91710000802100433K", "uscc", "91710000802100433K", "前两位 71"),
    ("91110000802100433", "uscc", None, "应为 18 位，实际为 17 位"),
    ("hello world", "unknown", None, "无法识别的编号格式"),
    ("", "unknown", None, "编号为空"),
    ("\u3000 \u00a0", "unknown", None, "编号为空"),
]


@pytest.mark.parametrize(("text", "kind", "normalized", "fragment"), INVALID)
def test_invalid_identifiers(text: str, kind: str, normalized: str | None, fragment: str) -> None:
    result = identify(text)
    assert (result.kind, result.normalized) == (kind, normalized)
    assert not result.valid
    assert any(fragment in problem for problem in result.problems), result.problems


def test_year_before_2000_is_a_warning_not_an_error() -> None:
    result = identify("京B2-19981234")
    assert result.valid
    assert result.problems == [identifier_common.message("licence_year_old", year=1998)]


def test_future_year_uses_the_real_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identifiers, "_today", datetime.date.today)
    next_year = datetime.date.today().year + 1
    assert not identify(f"京B2-{next_year}0001").valid
    assert not identify(f"粤ICP备{next_year}012345号").valid
    assert identify(f"京B2-{next_year - 1}0001").valid


def test_licence_parts() -> None:
    result = identify("ICP证粤B2-20230674号")
    assert result.parts == {
        "categories": ["B2"],
        "year": 2023,
        "serial": "0674",
        "foreign_invested": False,
        "issuer_level": "provincial",
    }
    assert result.province == "广东"
    foreign = identify("合字B1.B2-20130004")
    assert foreign.parts["foreign_invested"] is True
    assert foreign.parts["issuer_level"] == "ministry"
    assert foreign.parts["categories"] == ["B1", "B2"]


def test_icp_filing_parts() -> None:
    assert identify("京ICP备10046444号-9").parts == {
        "year": 2010,
        "serial": "046444",
        "site_suffix": 9,
        "entity_number": "京ICP备10046444号",
        "service_number": "京ICP备10046444号-9",
    }
    new_style = identify("粤ICP备2021012345号").parts
    assert (new_style["year"], new_style["serial"], new_style["site_suffix"]) == (2021, "012345", None)
    assert new_style["service_number"] is None


def test_psb_and_uscc_parts() -> None:
    assert identify("京公网安备11010802032137号").parts == {"division_code": "110108", "serial": "02032137"}
    uscc = identify("91440300708461136T")
    assert uscc.parts["registration_authority"] == "9"
    assert uscc.parts["entity_type"] == "1"
    assert uscc.parts["division_code"] == "440300"
    assert uscc.parts["org_code"] == "708461136"
    assert uscc.province == "广东"


def test_to_dict_is_json_ready_and_flat() -> None:
    data = identify("京ICP备10046444号-9").to_dict()
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data
    for key in ("input", "kind", "normalized", "province_code", "province", "valid", "problems"):
        assert key in data
    assert data["site_suffix"] == 9
    assert data["entity_number"] == "京ICP备10046444号"
    assert "parts" not in data
    licence = identify("A2.B1.B2-20090001").to_dict()
    assert licence["categories"] == ["A2", "B1", "B2"]
    assert licence["year"] == 2009


@pytest.mark.parametrize(
    ("parser", "text", "kind"),
    [
        (parse_licence, "京ICP备10046444号", "licence"),
        (parse_icp_filing, "京B2-20202418", "icp_filing"),
        (parse_icp_licence, "京公网安备11010802032137号", "icp_licence"),
        (parse_psb_filing, "91110000802100433B", "psb_filing"),
        (parse_uscc, "京ICP证030173号", "uscc"),
    ],
)
def test_parsers_given_another_kind(parser, text: str, kind: str) -> None:
    result = parser(text)
    assert (result.kind, result.valid, result.normalized) == (kind, False, None)
    assert len(result.problems) == 1


def test_icp_licence_parser_points_to_licence_number() -> None:
    result = parse_icp_licence("ICP证粤B2-20230674号")
    assert result.kind == "icp_licence"
    assert not result.valid
    assert "粤B2-20230674" in result.problems[0]
    assert identify("ICP证粤B2-20230674号").kind == "licence"


def test_parsers_accept_their_own_kind() -> None:
    assert parse_licence("京B2-20202418").valid
    assert parse_icp_filing("京ICP备10046444号-9").valid
    assert parse_icp_licence("京ICP证030173号").valid
    assert parse_psb_filing("京公网安备11010802032137号").valid
    assert parse_uscc("91110000802100433b").valid


def test_problem_messages_live_in_one_table() -> None:
    result = identify("91110000802100433C")
    assert result.problems == [MESSAGES["uscc_check_18"].format(expected="B", actual="C")]


def test_too_long_input_is_rejected_without_scanning() -> None:
    result = identify("B1." * 500 + "B2-20190001")
    assert (result.kind, result.valid) == ("unknown", False)


def test_identifier_is_frozen() -> None:
    result = identify("B1-20190001")
    with pytest.raises(AttributeError):
        result.valid = False  # type: ignore[misc]
    assert isinstance(result, Identifier)


# --------------------------------------------------------------------------------------------------
# normalize_text
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("京Ｂ２－２０２０２４１８", "京B2-20202418"),
        ("b1 ‐ 2019\u00a00001", "B1-20190001"),
        ("A‑B‒C–D—E―F－GーH", "A-B-C-D-E-F-G-H"),
        ("\ufeff粤\u200bicp\u200d备\u3000123", "粤ICP备123"),
        ("一二三", "一二三"),
        ("B2一20202418", "B2一20202418"),
    ],
)
def test_normalize_text(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


def test_every_dropped_character_is_unprintable_or_the_space():
    # _drop_invisible returns printable text without a space as it is: that is right only while no
    # printable character other than the space is whitespace or a format character
    dropped = [
        hex(code)
        for code in range(0x110000)
        if (char := chr(code)).isprintable() and char != " " and identifier_common._is_dropped(char)
    ]
    assert dropped == []


@given(st.text())
@settings(max_examples=500)
def test_normalize_text_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


# --------------------------------------------------------------------------------------------------
# find_identifiers
# --------------------------------------------------------------------------------------------------
FOOTER = (
    "Copyright © 2024 某某云计算有限公司 版权所有 京ICP备10046444号-9 "
    "京公网安备11010802032137号 增值电信业务经营许可证：B1-20190001"
)


def test_find_identifiers_in_a_footer() -> None:
    found = find_identifiers(FOOTER)
    assert [(i.kind, i.normalized, i.valid) for i in found] == [
        ("icp_filing", "京ICP备10046444号-9", True),
        ("psb_filing", "京公网安备11010802032137号", True),
        ("licence", "B1-20190001", True),
    ]
    assert [i.input for i in found] == ["京ICP备10046444号-9", "京公网安备11010802032137号", "B1-20190001"]


def test_find_identifiers_with_labels_brackets_and_noise() -> None:
    text = (
        "ICP备案号：粤ICP备2021012345号-1 | ICP证：粤B2-20230674号 | 粤公网安备 44030502008569号\n"
        "统一社会信用代码：91440300708461136T 电话 0755-86013388 © 2008-2024 订单号 ABCDEFGHJKLMNPQRTU\n"
        "（京ICP证030173号）合字B1.B2-20130004　京ＩＣＰ备１００４６４４４号－９"
    )
    found = find_identifiers(text)
    assert [(i.kind, i.normalized) for i in found] == [
        ("icp_filing", "粤ICP备2021012345号-1"),
        ("licence", "粤B2-20230674"),
        ("psb_filing", "粤公网安备44030502008569号"),
        ("uscc", "91440300708461136T"),
        ("icp_licence", "京ICP证030173号"),
        ("licence", "合字B1.B2-20130004"),
        ("icp_filing", "京ICP备10046444号-9"),
    ]
    assert found[-1].input == "京ＩＣＰ备１００４６４４４号－９"
    assert found[1].input == "ICP证：粤B2-20230674号"


def test_find_identifiers_deduplicates_by_normalized_form() -> None:
    text = "京ICP备10046444号 京icp备10046444号 京ICP备10046444 京ICP备10046444号-9"
    found = find_identifiers(text)
    assert [i.normalized for i in found] == ["京ICP备10046444号", "京ICP备10046444号-9"]


def test_find_identifiers_does_not_swallow_following_years() -> None:
    found = find_identifiers("粤ICP备2021012345 2023-2024 京ICP备10046444号 - 2008-2024")
    assert [i.normalized for i in found] == ["粤ICP备2021012345号", "京ICP备10046444号"]


def test_find_identifiers_reports_invalid_numbers() -> None:
    found = find_identifiers("沪公网安备11010802032137号 信用代码 91110000802100433C")
    assert [(i.kind, i.valid) for i in found] == [("psb_filing", False), ("uscc", False)]


def test_find_identifiers_skips_unlabelled_invalid_codes_and_embedded_categories() -> None:
    assert find_identifiers("SKU ABCDEFGHJKLMNPQRTU model XB2-20202418 0B1-20190001") == []


def test_find_identifiers_handles_empty_and_huge_text() -> None:
    assert find_identifiers("") == []
    assert find_identifiers(" " * 20000 + "B1." * 5000) == []


# --------------------------------------------------------------------------------------------------
# Property-based tests
# --------------------------------------------------------------------------------------------------
RELEVANT = st.text(
    alphabet=st.sampled_from(
        list("京沪粤蜀黔港ICPicp备证公网安备号合字一ABXYOZ0123456789.、·/-－—：:() （）\u3000\u200b")
    ),
    max_size=40,
)


@given(st.text())
@settings(max_examples=500)
def test_identify_never_raises(text: str) -> None:
    result = identify(text)
    assert result.kind in identifier_common.KINDS
    json.dumps(result.to_dict(), ensure_ascii=False)


@given(RELEVANT)
@settings(max_examples=1000)
def test_identify_never_raises_on_relevant_alphabet(text: str) -> None:
    result = identify(text)
    assert result.kind in identifier_common.KINDS
    assert not result.valid or result.normalized is not None


@given(st.one_of(st.text(), RELEVANT))
@settings(max_examples=500)
def test_find_identifiers_never_raises(text: str) -> None:
    for found in find_identifiers(text):
        assert found.kind != "unknown"
        assert found.input


ABBREVIATION = st.sampled_from([a for p in PROVINCES for a in p.abbreviations])
YEAR = st.integers(min_value=2000, max_value=FIXED_TODAY.year)
CATEGORIES = st.lists(st.sampled_from(["A1", "A2", "B1", "B2"]), min_size=1, max_size=4, unique=True)


@st.composite
def valid_licences(draw: st.DrawFn) -> str:
    """Licence numbers in assorted valid spellings."""
    categories = draw(CATEGORIES)
    prefix = "" if any(c.startswith("A") for c in categories) else draw(st.one_of(st.just(""), ABBREVIATION))
    foreign = draw(st.sampled_from(["", "合字"]))
    separator = draw(st.sampled_from([".", "、", "·", "/", "．"]))
    dash = draw(st.sampled_from(["-", "－", "—", "–"]))
    serial = draw(st.integers(min_value=0, max_value=9999))
    return f"{foreign}{prefix}{separator.join(categories)}{dash}{draw(YEAR)}{serial:04d}"


@st.composite
def valid_filings(draw: st.DrawFn) -> str:
    """ICP filing, ICP licence and PSB numbers in assorted valid spellings."""
    abbreviation = draw(ABBREVIATION)
    kind = draw(st.sampled_from(["icp8", "icp10", "icp_licence", "psb"]))
    serial = draw(st.integers(min_value=0, max_value=999999))
    if kind == "icp8":
        suffix = draw(st.sampled_from(["号", "", "号-3", "-12号"]))
        return f"{abbreviation}ICP备{draw(YEAR) % 100:02d}{serial:06d}{suffix}"
    if kind == "icp10":
        return f"{abbreviation}icp备{draw(YEAR)}{serial:06d}号"
    if kind == "icp_licence":
        return f"{abbreviation}ICP证{serial:06d}号"
    code = next(p.code for p in PROVINCES if abbreviation in p.abbreviations)
    return f"{abbreviation}公网安备 {code}{serial:06d}{draw(st.integers(0, 999999)):06d}"


@st.composite
def valid_usccs(draw: st.DrawFn) -> str:
    """Credit codes with both check characters computed."""
    province = draw(st.sampled_from(PROVINCES))
    body = draw(st.text(alphabet="0123456789ABCDEFGHJKLMNPQRTUWY", min_size=8, max_size=8))
    head = f"91{province.code}0100{body}{org_code_check_char(body)}"
    code = head + (uscc_check_char(head) or "")
    return draw(st.sampled_from([code, code.lower(), " ".join([code[:6], code[6:12], code[12:]])]))


@given(st.one_of(valid_licences(), valid_filings(), valid_usccs()))
@settings(max_examples=500)
def test_normalized_form_is_stable_for_valid_inputs(text: str) -> None:
    first = identify(text)
    assert first.valid, (text, first.problems)
    again = identify(first.normalized or "")
    assert (again.kind, again.normalized, again.valid) == (first.kind, first.normalized, True)
    assert again.parts == first.parts
    assert normalize_text(first.normalized or "") == first.normalized
