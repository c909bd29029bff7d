"""Parse and validate Chinese telecom licence, ICP, public-security filing and credit code numbers."""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from app.core import clock, provinces
from app.core.provinces import Province

Kind = Literal["licence", "icp_filing", "icp_licence", "psb_filing", "uscc", "unknown"]

KINDS: tuple[str, ...] = ("licence", "icp_filing", "icp_licence", "psb_filing", "uscc", "unknown")

# --------------------------------------------------------------------------------------------------
# Problem messages (Chinese first). Keep every user-facing sentence here so it can be translated.
# --------------------------------------------------------------------------------------------------
MESSAGES: dict[str, str] = {
    "empty": "编号为空，请填写完整的编号。",
    "too_long": "内容过长（超过 {limit} 个字符），请只填写编号本身；整段文字请用批量识别。",
    "unknown_format": (
        "无法识别的编号格式。支持：增值电信业务经营许可证号（如 B1-20190001、京B2-20202418）、"
        "ICP 备案号（如 京ICP备10046444号-9）、ICP 证（如 京ICP证030173号）、"
        "公网安备号（如 京公网安备11010802032137号）、18 位统一社会信用代码。"
    ),
    "not_licence": "这不是增值电信业务经营许可证号，许可证号形如 B1-20190001 或 京B2-20202418。",
    "not_icp_filing": "这不是 ICP 备案号，备案号形如 京ICP备10046444号 或 粤ICP备2021012345号-1。",
    "not_icp_licence": "这不是旧式 ICP 证编号，ICP 证编号形如 京ICP证030173号。",
    "icp_licence_is_licence": "这是许可证号（{number}），请按增值电信业务经营许可证号核对。",
    "not_psb_filing": "这不是公网安备号，公网安备号形如 京公网安备11010802032137号。",
    "not_uscc": "这不是统一社会信用代码，统一社会信用代码由 18 位数字或大写字母组成。",
    # licence
    "licence_unknown_category": "许可证号中的业务类别“{category}”无效，只能是 A1、A2、B1、B2。",
    "licence_subcategory": (
        "许可证号中的“{category}”是业务种类代码，许可证号只写大类（应为 {parent}），请核对。"
    ),
    "licence_digits_length": ("许可证号“-”后应为 8 位数字（4 位年份 + 4 位序号），实际为 {length} 位。"),
    "licence_year_future": "许可证号中的年份 {year} 晚于今年（{today}），请核对。",
    "licence_year_old": "许可证号中的年份 {year} 早于 2000 年，较为可疑，请向主管部门核实。",
    "licence_unknown_prefix": "许可证号前缀“{prefix}”不是省份简称，也不是“合字”。",
    "prefix_is_name": "编号前缀应写省份简称“{abbreviation}”，而不是“{prefix}”。",
    "licence_prefix_conflict": "“ICP证”前的省份“{lead}”与许可证号中的省份“{prefix}”不一致。",
    "licence_provincial_a": "省级许可证不能包含 A 类基础电信业务（{categories}），A 类只由工信部颁发。",
    # ICP filing
    "icp_filing_missing_province": "ICP 备案号缺少省份简称（如“京ICP备”中的“京”）。",
    "icp_filing_unknown_province": "ICP 备案号前缀“{prefix}”不是省份简称。",
    "icp_filing_digits_length": "ICP 备案号中的数字应为 8 位（旧式）或 10 位（新式），实际为 {length} 位。",
    "icp_filing_year_future": "ICP 备案号中的年份 {year} 晚于今年（{today}），请核对。",
    "icp_filing_year_old": "ICP 备案号中的年份 {year} 不合理（早于 2000 年），请核对。",
    "icp_filing_suffix_too_long": "ICP 备案号的网站序号“{suffix}”过长，请核对。",
    # ICP licence
    "icp_licence_missing_province": "ICP 证编号缺少省份简称（如“京ICP证”中的“京”）。",
    "icp_licence_unknown_province": "ICP 证编号前缀“{prefix}”不是省份简称。",
    "icp_licence_digits_length": "ICP 证编号通常为 6 位数字，实际为 {length} 位，请核对。",
    # public-security filing
    "psb_missing_province": "公网安备号缺少省份简称（如“京公网安备”中的“京”）。",
    "psb_unknown_province": "公网安备号前缀“{prefix}”不是省份简称。",
    "psb_digits_length": "公网安备号应为 14 位数字，实际为 {length} 位。",
    "psb_unknown_code": "公网安备号前两位“{code}”不是已知的省级行政区划代码。",
    "psb_province_mismatch": (
        "公网安备号前两位为 {code}（{code_name}），与前缀“{prefix}”（{prefix_name}，{prefix_code}）不一致。"
    ),
    # USCC
    "uscc_length": "统一社会信用代码应为 18 位，实际为 {length} 位。",
    "uscc_bad_chars": (
        "统一社会信用代码第 {positions} 位的字符“{chars}”无效（不使用 I、O、Z、S、V 及其他符号）。"
    ),
    "uscc_check_18": "统一社会信用代码第 18 位校验码应为 {expected}，实际为 {actual}。",
    "uscc_check_17": ("统一社会信用代码第 17 位（组织机构代码校验码）应为 {expected}，实际为 {actual}。"),
    "uscc_division_format": "统一社会信用代码第 3-8 位应为 6 位数字的行政区划代码，实际为“{division}”。",
    "uscc_unknown_province": "统一社会信用代码中的行政区划代码 {division} 不属于已知省份（前两位 {code}）。",
}

REGISTRATION_AUTHORITIES: dict[str, str] = {
    "1": "机构编制",
    "2": "外交",
    "3": "司法行政",
    "4": "文化",
    "5": "民政",
    "6": "旅游",
    "7": "宗教",
    "8": "工会",
    "9": "工商（市场监管）",
    "A": "中央军委改革和编制办公室",
    "N": "农业",
    "Y": "其他",
}

ENTITY_TYPES: dict[str, str] = {
    "11": "机关",
    "12": "事业单位",
    "13": "中央编办直接管理机构编制的群众团体",
    "19": "其他",
    "51": "社会团体",
    "52": "民办非企业单位",
    "53": "基金会",
    "59": "其他",
    "91": "企业",
    "92": "个体工商户",
    "93": "农民专业合作社",
}


def message(key: str, **values: Any) -> str:
    """Return the problem message for key with values filled in."""
    return MESSAGES[key].format(**values)


# --------------------------------------------------------------------------------------------------
# The result type
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Identifier:
    """One parsed identifier; valid is False only for definite errors, problems may hold warnings."""

    input: str
    kind: Kind
    normalized: str | None = None
    province_code: str | None = None
    province: str | None = None
    valid: bool = False
    problems: list[str] = field(default_factory=list)
    parts: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict with the parts flattened in at top level."""
        data: dict[str, Any] = {
            "input": self.input,
            "kind": self.kind,
            "normalized": self.normalized,
            "province_code": self.province_code,
            "province": self.province,
            "valid": self.valid,
            "problems": list(self.problems),
        }
        for key, value in self.parts.items():
            data.setdefault(key, list(value) if isinstance(value, (list, tuple)) else value)
        return data


class _Findings:
    """Collects errors and warnings while one identifier is being checked."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.has_error = False

    def error(self, key: str, **values: Any) -> None:
        """Record a problem that makes the identifier invalid."""
        self.problems.append(message(key, **values))
        self.has_error = True

    def warn(self, key: str, **values: Any) -> None:
        """Record a problem worth a look that does not make the identifier invalid."""
        self.problems.append(message(key, **values))


# --------------------------------------------------------------------------------------------------
# Text normalisation
# --------------------------------------------------------------------------------------------------
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2796\u2e3a\u2e3b\ufe58\ufe63\uff0d\u30fc\uff70"
_TRANSLATE = {ord(c): "-" for c in _DASHES} | {ord(c): c.upper() for c in "abcdefghijklmnopqrstuvwxyz"}
_MAX_PASSES = 4


def _is_dropped(char: str) -> bool:
    """Return True for whitespace and invisible format characters (zero-width space, BOM, ...)."""
    return char.isspace() or unicodedata.category(char) == "Cf"


def _drop_invisible(text: str) -> str:
    """Return text without whitespace and zero-width/format characters."""
    # Every whitespace and format character is unprintable but the plain space (a test checks all of
    # Unicode), so most identifiers pass with two checks in C instead of a look at each character.
    if text.isprintable() and " " not in text:
        return text
    return "".join(c for c in text if not _is_dropped(c))


def _normalize_once(text: str) -> str:
    """Run one pass of the normalisation pipeline."""
    text = unicodedata.normalize("NFKC", _drop_invisible(text))
    return _drop_invisible(text).translate(_TRANSLATE)


def normalize_text(text: str) -> str:
    """Return text with NFKC applied, spaces and zero-width chars removed, dashes unified, A-Z upper."""
    for _ in range(_MAX_PASSES):
        again = _normalize_once(text)
        if again == text:
            break
        text = again
    return text


@lru_cache(maxsize=8192)
def _scan_char(char: str) -> str:
    """Return the normalised form of one character for scanning free text (whitespace kept as ' ')."""
    if char.isspace():
        return " "
    if unicodedata.category(char) == "Cf":
        return ""
    text = unicodedata.normalize("NFKC", char)
    text = "".join(" " if c.isspace() else c for c in text if unicodedata.category(c) != "Cf")
    return text.translate(_TRANSLATE)


def _scan_text(text: str) -> tuple[str, list[int]]:
    """Return text normalised for scanning (space runs collapsed) and each char's source index."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for out in _scan_char(char):
            if out == " " and chars and chars[-1] == " ":
                continue
            chars.append(out)
            origin.append(index)
    return "".join(chars), origin


# --------------------------------------------------------------------------------------------------
# Patterns. All run on normalised text: ASCII digits, upper-case letters, '-' as the only dash.
# --------------------------------------------------------------------------------------------------
_ABBR = f"[{provinces.ABBREVIATIONS}]"
_HAN = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_SEP = r"[.、·・•/]"
_SEP_RE = re.compile(_SEP)
_LICENCE_DASH = r"[-一]"

# Whole-string patterns: lenient about the prefix so a wrong prefix can be reported.
_LICENCE_FULL = re.compile(
    rf"(?:(?P<lead>{_HAN}{{0,4}}?)ICP(?:经营许可)?证)?(?P<f1>合字)?(?P<prefix>{_HAN}{{0,4}}?)"
    rf"(?P<f2>合字)?(?P<cats>[A-Z][0-9]{{1,3}}(?:{_SEP}[A-Z][0-9]{{1,3}})*){_LICENCE_DASH}"
    r"(?P<digits>[0-9]+)号?"
)
_ICP_FILING_FULL = re.compile(
    rf"(?P<prefix>{_HAN}{{0,4}}?)ICP备(?P<digits>[0-9]+)(?:号?-(?P<suffix>[0-9]+)号?|号)?"
)
_ICP_LICENCE_FULL = re.compile(rf"(?P<prefix>{_HAN}{{0,4}}?)ICP证(?P<digits>[0-9]+)号?")
_PSB_FULL = re.compile(rf"(?P<prefix>{_HAN}{{0,4}}?)公网安备(?P<digits>[0-9]+)号?")

# Scanning patterns: strict about shape, used on free text (whitespace kept) and as a fallback.
# Whitespace runs are collapsed to one space before scanning, so " ?" covers any spacing.
_LICENCE_SCAN = (
    rf"(?:{_ABBR}? ?ICP证 ?:? ?)?(?:合字)? ?{_ABBR}? ?(?:合字)? ?(?<![A-Z0-9])"
    rf"[AB][12](?: ?{_SEP} ?[AB][12]){{0,3}} ?{_LICENCE_DASH} ?[0-9]{{8}}(?![0-9])(?: ?号)?"
)
_ICP_FILING_SCAN = rf"{_ABBR}? ?ICP备 ?:? ?[0-9]+(?: ?号? ?- ?[0-9]{{1,3}}(?![0-9])(?: ?号)?| ?号)?"
_ICP_LICENCE_SCAN = rf"{_ABBR}? ?ICP证 ?:? ?[0-9]+(?: ?号)?"
_PSB_SCAN = rf"{_ABBR}? ?公网安备 ?:? ?[0-9]+(?: ?号)?"
_USCC_SCAN = r"(?<![0-9A-Z])[0-9A-Z]{18}(?![0-9A-Z])"

_SCAN_PATTERNS: dict[str, str] = {
    "psb_filing": _PSB_SCAN,
    "icp_filing": _ICP_FILING_SCAN,
    "licence": _LICENCE_SCAN,
    "icp_licence": _ICP_LICENCE_SCAN,
    "uscc": _USCC_SCAN,
}
_SCAN_BY_KIND: dict[str, re.Pattern[str]] = {k: re.compile(p) for k, p in _SCAN_PATTERNS.items()}
_SCAN_ALL = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _SCAN_PATTERNS.items()))

_LABEL_COLON = re.compile(r"(ICP(?:经营许可)?证|ICP备|公网安备):")
_WRAPPERS = "()[]{}<>【】〔〕〖〗「」『』《》〈〉\"'“”‘’"
_TRAILING = ".,;!?。，；、"
_KIND_LICENCE = re.compile(rf"[A-Z][0-9]{{1,3}}(?:{_SEP}[A-Z][0-9]{{1,3}}){{0,5}}{_LICENCE_DASH}[0-9]")
_KIND_ICP_LICENCE = re.compile(r"ICP证[0-9]")
_ALNUM = re.compile(r"[0-9A-Z]+")
_USCC_LABEL = re.compile(r"(信用代码|社会信用|税号|纳税人识别号|注册号|USCC)")
_USCC_LABEL_WINDOW = 30
#: Longest cleaned input the single-identifier parsers look at; longer text is not one identifier.
MAX_IDENTIFIER_LENGTH = 200


def _clean(text: str) -> str:
    """Return normalised text without surrounding brackets, trailing punctuation or a label."""
    text = _strip_wrappers(normalize_text(text))
    text = _LABEL_COLON.sub(r"\1", text)
    label, colon, rest = text.rpartition(":")
    if colon and rest and label:
        text = rest
    return _strip_wrappers(text)


def _strip_wrappers(text: str) -> str:
    """Return text without surrounding brackets/quotes and trailing punctuation."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip(_WRAPPERS).rstrip(_TRAILING)
    return text


def _today() -> datetime.date:
    """Return today's date (a seam for tests)."""
    return clock.business_today()


def _province_fields(province: Province | None) -> dict[str, str | None]:
    """Return the province_code/province keyword arguments for an Identifier."""
    if province is None:
        return {"province_code": None, "province": None}
    return {"province_code": province.code, "province": province.name}


def _not_this_kind(text: str, kind: Kind, key: str, **values: Any) -> Identifier:
    """Return an invalid Identifier of kind for text that does not have that kind's shape."""
    return Identifier(input=text, kind=kind, problems=[message(key, **values)])


def _match(text: str, full: re.Pattern[str], kind: str) -> re.Match[str] | None:
    """Return a whole-string match of the cleaned text, or a match of the first embedded number."""
    cleaned = _clean(text)
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        return None
    found = full.fullmatch(cleaned)
    if found is not None:
        return found
    embedded = _SCAN_BY_KIND[kind].search(cleaned)
    if embedded is None:
        return None
    return full.fullmatch(_clean(embedded.group()))


# --------------------------------------------------------------------------------------------------
# Licence numbers
# --------------------------------------------------------------------------------------------------
_CATEGORY_ORDER: tuple[str, ...] = ("A1", "A2", "B1", "B2")
_SUBCATEGORY = re.compile(r"(B[12])[1-9]")


def _category_key(category: str) -> tuple[int, str]:
    """Sort known categories in A1, A2, B1, B2 order, unknown ones after them."""
    if category in _CATEGORY_ORDER:
        return (_CATEGORY_ORDER.index(category), category)
    return (len(_CATEGORY_ORDER), category)


def _check_categories(categories: list[str], findings: _Findings) -> None:
    """Report categories that are not A1, A2, B1 or B2."""
    for category in categories:
        if category in _CATEGORY_ORDER:
            continue
        sub = _SUBCATEGORY.fullmatch(category)
        if sub:
            findings.error("licence_subcategory", category=category, parent=sub.group(1))
        else:
            findings.error("licence_unknown_category", category=category)


def _check_year(year: int | None, findings: _Findings, future_key: str, old_key: str) -> None:
    """Report a year in the future (error) or before 2000 (warning)."""
    if year is None:
        return
    today = _today().year
    if year > today:
        findings.error(future_key, year=year, today=today)
    elif year < 2000:
        findings.warn(old_key, year=year)


def _licence_province(match: re.Match[str], findings: _Findings) -> tuple[str, Province | None]:
    """Return the province abbreviation to print and its Province, reporting bad prefixes."""
    lead, prefix = match.group("lead") or "", match.group("prefix") or ""
    lead_province = provinces.by_abbreviation(lead) if lead else None
    if lead and lead_province is None:
        _report_prefix(lead, findings, "licence_unknown_prefix")
    if not prefix:
        return lead if lead_province else "", lead_province
    province = provinces.by_abbreviation(prefix)
    if province is None:
        _report_prefix(prefix, findings, "licence_unknown_prefix")
        return prefix, None
    if lead_province is not None and lead_province != province:
        findings.error("licence_prefix_conflict", lead=lead, prefix=prefix)
    return prefix, province


def _report_prefix(prefix: str, findings: _Findings, unknown_key: str) -> None:
    """Report a prefix that is not a province abbreviation, suggesting one for a province name."""
    named = provinces.by_name(prefix)
    if named is not None:
        findings.error("prefix_is_name", abbreviation=named.abbreviation, prefix=prefix)
    else:
        findings.error(unknown_key, prefix=prefix)


def _build_licence(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched licence number."""
    findings = _Findings()
    categories = sorted(dict.fromkeys(_SEP_RE.split(match.group("cats"))), key=_category_key)
    _check_categories(categories, findings)
    abbreviation, province = _licence_province(match, findings)
    digits = match.group("digits")
    if len(digits) != 8:
        findings.error("licence_digits_length", length=len(digits))
    year = int(digits[:4]) if len(digits) >= 4 else None
    _check_year(year, findings, "licence_year_future", "licence_year_old")
    a_class = [c for c in categories if c.startswith("A")]
    if abbreviation and a_class:
        findings.error("licence_provincial_a", categories="、".join(a_class))
    foreign = bool(match.group("f1") or match.group("f2"))
    prefix = ("合字" if foreign else "") + abbreviation
    parts = {
        "categories": categories,
        "year": year,
        "serial": digits[4:] if len(digits) >= 4 else None,
        "foreign_invested": foreign,
        "issuer_level": "provincial" if abbreviation else "ministry",
    }
    return Identifier(
        input=text,
        kind="licence",
        normalized=f"{prefix}{'.'.join(categories)}-{digits}",
        valid=not findings.has_error,
        problems=findings.problems,
        parts=parts,
        **_province_fields(province),
    )


def parse_licence(text: str) -> Identifier:
    """Parse a value-added telecom licence number such as "京B2-20202418"."""
    match = _match(text, _LICENCE_FULL, "licence")
    if match is None:
        return _not_this_kind(text, "licence", "not_licence")
    return _build_licence(text, match)


# --------------------------------------------------------------------------------------------------
# ICP filings, legacy ICP licences and public-security filings share the "<province>LABEL<digits>" shape
# --------------------------------------------------------------------------------------------------
def _prefixed_province(
    prefix: str, findings: _Findings, missing_key: str, unknown_key: str
) -> Province | None:
    """Return the Province for a filing prefix, reporting a missing or unknown one."""
    if not prefix:
        findings.error(missing_key)
        return None
    province = provinces.by_abbreviation(prefix)
    if province is None:
        _report_prefix(prefix, findings, unknown_key)
    return province


def _filing_year(digits: str, findings: _Findings) -> int | None:
    """Return the year encoded in an ICP filing number, reporting bad lengths or years."""
    if len(digits) == 8:
        year = 2000 + int(digits[:2])
    elif len(digits) == 10:
        year = int(digits[:4])
    else:
        findings.error("icp_filing_digits_length", length=len(digits))
        return None
    today = _today().year
    if year > today:
        findings.error("icp_filing_year_future", year=year, today=today)
    elif year < 2000:
        findings.error("icp_filing_year_old", year=year)
    return year


def _site_suffix(suffix: str | None, findings: _Findings) -> int | None:
    """Return the site number after the '-' of an ICP filing, if any."""
    if suffix is None:
        return None
    if len(suffix) > 6:
        findings.error("icp_filing_suffix_too_long", suffix=suffix)
        return None
    return int(suffix)


def _build_icp_filing(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched ICP filing number."""
    findings = _Findings()
    prefix, digits = match.group("prefix"), match.group("digits")
    province = _prefixed_province(
        prefix, findings, "icp_filing_missing_province", "icp_filing_unknown_province"
    )
    year = _filing_year(digits, findings)
    site = _site_suffix(match.group("suffix"), findings)
    entity = f"{prefix}ICP备{digits}号"
    service = f"{entity}-{match.group('suffix')}" if match.group("suffix") is not None else None
    parts = {
        "year": year,
        "serial": digits[-6:] if len(digits) in (8, 10) else None,
        "site_suffix": site,
        "entity_number": entity,
        "service_number": service,
    }
    return Identifier(
        input=text,
        kind="icp_filing",
        normalized=service or entity,
        valid=not findings.has_error,
        problems=findings.problems,
        parts=parts,
        **_province_fields(province),
    )


def parse_icp_filing(text: str) -> Identifier:
    """Parse an ICP filing number such as "京ICP备10046444号-9"."""
    match = _match(text, _ICP_FILING_FULL, "icp_filing")
    if match is None:
        return _not_this_kind(text, "icp_filing", "not_icp_filing")
    return _build_icp_filing(text, match)


def _build_icp_licence(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched legacy ICP licence number."""
    findings = _Findings()
    prefix, digits = match.group("prefix"), match.group("digits")
    province = _prefixed_province(
        prefix, findings, "icp_licence_missing_province", "icp_licence_unknown_province"
    )
    if len(digits) != 6:
        findings.error("icp_licence_digits_length", length=len(digits))
    return Identifier(
        input=text,
        kind="icp_licence",
        normalized=f"{prefix}ICP证{digits}号",
        valid=not findings.has_error,
        problems=findings.problems,
        parts={"serial": digits},
        **_province_fields(province),
    )


def parse_icp_licence(text: str) -> Identifier:
    """Parse a legacy ICP licence number such as "京ICP证030173号"."""
    match = _match(text, _ICP_LICENCE_FULL, "icp_licence")
    if match is not None:
        return _build_icp_licence(text, match)
    licence = _match(text, _LICENCE_FULL, "licence")
    if licence is not None:
        number = _build_licence(text, licence).normalized
        return _not_this_kind(text, "icp_licence", "icp_licence_is_licence", number=number)
    return _not_this_kind(text, "icp_licence", "not_icp_licence")


def _check_psb_code(
    digits: str, prefix: str, province: Province | None, findings: _Findings
) -> Province | None:
    """Check the first two digits against the prefix; return the province they encode."""
    code = digits[:2]
    coded = provinces.by_code(code) if len(code) == 2 else None
    if coded is None:
        findings.error("psb_unknown_code", code=code)
    elif province is not None and coded != province:
        findings.error(
            "psb_province_mismatch",
            code=code,
            code_name=coded.name,
            prefix=prefix,
            prefix_name=province.name,
            prefix_code=province.code,
        )
    return coded


def _build_psb(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched public-security filing number."""
    findings = _Findings()
    prefix, digits = match.group("prefix"), match.group("digits")
    province = _prefixed_province(prefix, findings, "psb_missing_province", "psb_unknown_province")
    if len(digits) != 14:
        findings.error("psb_digits_length", length=len(digits))
    coded = _check_psb_code(digits, prefix, province, findings)
    return Identifier(
        input=text,
        kind="psb_filing",
        normalized=f"{prefix}公网安备{digits}号",
        valid=not findings.has_error,
        problems=findings.problems,
        parts={"division_code": digits[:6], "serial": digits[6:]},
        **_province_fields(province or coded),
    )


def parse_psb_filing(text: str) -> Identifier:
    """Parse a public-security filing number such as "京公网安备11010802032137号"."""
    match = _match(text, _PSB_FULL, "psb_filing")
    if match is None:
        return _not_this_kind(text, "psb_filing", "not_psb_filing")
    return _build_psb(text, match)


# --------------------------------------------------------------------------------------------------
# Unified social credit codes (GB 32100-2015, organisation code check per GB 11714-1997)
# --------------------------------------------------------------------------------------------------
USCC_ALPHABET = "0123456789ABCDEFGHJKLMNPQRTUWXY"
_USCC_VALUES = {c: i for i, c in enumerate(USCC_ALPHABET)}
_USCC_WEIGHTS = (1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28)
_ORG_WEIGHTS = (3, 7, 9, 10, 5, 8, 4, 2)
_NATIONAL_DIVISION = "100000"


def uscc_check_char(first17: str) -> str | None:
    """Return the GB 32100 check character (18th) for 17 chars, or None if a char is not allowed."""
    if len(first17) != 17 or any(c not in _USCC_VALUES for c in first17):
        return None
    total = sum(_USCC_VALUES[c] * w for c, w in zip(first17, _USCC_WEIGHTS, strict=True))
    return USCC_ALPHABET[(31 - total % 31) % 31]


def org_code_check_char(body: str) -> str | None:
    """Return the GB 11714 check character for the 8 body chars of an organisation code."""
    if len(body) != 8 or not all(c.isascii() and c.isalnum() for c in body):
        return None
    total = sum(int(c, 36) * w for c, w in zip(body.upper(), _ORG_WEIGHTS, strict=True))
    value = 11 - total % 11
    return {10: "X", 11: "0"}.get(value, str(value))


def _uscc_chars(code: str, findings: _Findings) -> None:
    """Report characters outside the USCC alphabet."""
    bad = [(i + 1, c) for i, c in enumerate(code) if c not in _USCC_VALUES]
    if bad:
        findings.error(
            "uscc_bad_chars",
            positions="、".join(str(i) for i, _ in bad),
            chars="、".join(c for _, c in bad),
        )


def _uscc_checks(code: str, findings: _Findings) -> None:
    """Check both check characters of an 18-char code."""
    org_expected = org_code_check_char(code[8:16])
    if org_expected is not None and org_expected != code[16]:
        findings.error("uscc_check_17", expected=org_expected, actual=code[16])
    expected = uscc_check_char(code[:17])
    if expected is not None and expected != code[17]:
        findings.error("uscc_check_18", expected=expected, actual=code[17])


def _uscc_province(division: str, findings: _Findings) -> Province | None:
    """Return the province of the division code; "100000" (national level) has none."""
    if not division.isdigit():
        findings.error("uscc_division_format", division=division)
        return None
    if division == _NATIONAL_DIVISION:
        return None
    province = provinces.by_code(division[:2])
    if province is None:
        findings.error("uscc_unknown_province", division=division, code=division[:2])
    return province


def _build_uscc(text: str, code: str) -> Identifier:
    """Return the Identifier for an 18-character candidate code."""
    findings = _Findings()
    _uscc_chars(code, findings)
    _uscc_checks(code, findings)
    division = code[2:8]
    province = _uscc_province(division, findings)
    parts = {
        "registration_authority": code[0],
        "registration_authority_name": REGISTRATION_AUTHORITIES.get(code[0]),
        "entity_type": code[1],
        "entity_type_name": ENTITY_TYPES.get(code[:2]),
        "division_code": division,
        "org_code": code[8:17],
    }
    return Identifier(
        input=text,
        kind="uscc",
        normalized=code,
        valid=not findings.has_error,
        problems=findings.problems,
        parts=parts,
        **_province_fields(province),
    )


def parse_uscc(text: str) -> Identifier:
    """Parse an 18-character unified social credit code such as "91110000802100433B"."""
    cleaned = _clean(text)
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        return _not_this_kind(text, "uscc", "not_uscc")
    if not _ALNUM.fullmatch(cleaned):
        embedded = _SCAN_BY_KIND["uscc"].search(cleaned)
        if embedded is None:
            return _not_this_kind(text, "uscc", "not_uscc")
        cleaned = embedded.group()
    if len(cleaned) != 18:
        return _not_this_kind(text, "uscc", "uscc_length", length=len(cleaned))
    return _build_uscc(text, cleaned)


# --------------------------------------------------------------------------------------------------
# Dispatch and free-text scanning
# --------------------------------------------------------------------------------------------------
_PARSERS: dict[str, Callable[[str], Identifier]] = {
    "licence": parse_licence,
    "icp_filing": parse_icp_filing,
    "icp_licence": parse_icp_licence,
    "psb_filing": parse_psb_filing,
    "uscc": parse_uscc,
}
_USCC_LENGTHS = range(16, 21)


def detect_kind(text: str) -> Kind:
    """Return the kind an identifier's shape suggests, or "unknown"."""
    cleaned = _clean(text)
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        return "unknown"
    if "公网安备" in cleaned:
        return "psb_filing"
    if "ICP备" in cleaned:
        return "icp_filing"
    if _KIND_ICP_LICENCE.search(cleaned):
        return "icp_licence"
    if _KIND_LICENCE.search(cleaned):
        return "licence"
    if _ALNUM.fullmatch(cleaned) and len(cleaned) in _USCC_LENGTHS:
        return "uscc"
    return "unknown"


def identify(text: str) -> Identifier:
    """Parse text as whichever kind of identifier its shape suggests; never raises."""
    cleaned = _clean(text)
    if not cleaned:
        return Identifier(input=text, kind="unknown", problems=[message("empty")])
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        problem = message("too_long", limit=MAX_IDENTIFIER_LENGTH)
        return Identifier(input=text, kind="unknown", problems=[problem])
    kind = detect_kind(text)
    if kind == "unknown":
        return Identifier(input=text, kind="unknown", problems=[message("unknown_format")])
    return _PARSERS[kind](text)


def _has_uscc_label(scanned: str, start: int) -> bool:
    """Return True when a credit-code label appears shortly before position start."""
    return bool(_USCC_LABEL.search(scanned, max(0, start - _USCC_LABEL_WINDOW), start))


def _scan_match(text: str, scanned: str, origin: list[int], match: re.Match[str]) -> Identifier | None:
    """Return the Identifier for one scanner match, or None for an unlabelled invalid USCC."""
    kind = match.lastgroup or "unknown"
    start, end = match.span()
    original = text[origin[start] : origin[end - 1] + 1].strip()
    if kind == "uscc":
        found = _build_uscc(original, match.group())
        if not found.valid and not _has_uscc_label(scanned, start):
            return None
        return found
    return _PARSERS[kind](original)


def find_identifiers(text: str) -> list[Identifier]:
    """Return every identifier found in free text, deduplicated, in order of appearance."""
    scanned, origin = _scan_text(text)
    found: list[Identifier] = []
    seen: set[tuple[str, str]] = set()
    for match in _SCAN_ALL.finditer(scanned):
        identifier = _scan_match(text, scanned, origin, match)
        if identifier is None:
            continue
        key = (identifier.kind, identifier.normalized or normalize_text(match.group()))
        if key not in seen:
            seen.add(key)
            found.append(identifier)
    return found
