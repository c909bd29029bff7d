"""What every identifier parser shares: the result, its problem messages, text normalisation, patterns."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from app.core import provinces
from app.core.provinces import Province

Kind = Literal["licence", "icp_filing", "icp_licence", "psb_filing", "uscc", "unknown"]


KINDS: tuple[str, ...] = ("licence", "icp_filing", "icp_licence", "psb_filing", "uscc", "unknown")


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


def message(key: str, **values: Any) -> str:
    """Return the problem message for key with values filled in."""
    return MESSAGES[key].format(**values)


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


class Findings:
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

    def identifier(
        self, text: str, kind: Kind, normalized: str, parts: dict[str, Any], province: Province | None
    ) -> Identifier:
        """The Identifier of a checked number: valid unless an error was recorded, with the problems found."""
        return Identifier(
            input=text,
            kind=kind,
            normalized=normalized,
            valid=not self.has_error,
            problems=self.problems,
            parts=parts,
            **province_fields(province),
        )


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


def scan_text(text: str) -> tuple[str, list[int]]:
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


_ABBR = f"[{provinces.ABBREVIATIONS}]"


_HAN = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"


SEP = r"[.、·・•/]"


SEP_RE = re.compile(SEP)


_LICENCE_DASH = r"[-一]"


# Whole-string patterns: lenient about the prefix so a wrong prefix can be reported.
LICENCE_FULL = re.compile(
    rf"(?:(?P<lead>{_HAN}{{0,4}}?)ICP(?:经营许可)?证)?(?P<f1>合字)?(?P<prefix>{_HAN}{{0,4}}?)"
    rf"(?P<f2>合字)?(?P<cats>[A-Z][0-9]{{1,3}}(?:{SEP}[A-Z][0-9]{{1,3}})*){_LICENCE_DASH}"
    r"(?P<digits>[0-9]+)号?"
)


ICP_FILING_FULL = re.compile(
    rf"(?P<prefix>{_HAN}{{0,4}}?)ICP备(?P<digits>[0-9]+)(?:号?-(?P<suffix>[0-9]+)号?|号)?"
)


ICP_LICENCE_FULL = re.compile(rf"(?P<prefix>{_HAN}{{0,4}}?)ICP证(?P<digits>[0-9]+)号?")


PSB_FULL = re.compile(rf"(?P<prefix>{_HAN}{{0,4}}?)公网安备(?P<digits>[0-9]+)号?")


# Scanning patterns: strict about shape, used on free text (whitespace kept) and as a fallback.
# Whitespace runs are collapsed to one space before scanning, so " ?" covers any spacing.
_LICENCE_SCAN = (
    rf"(?:{_ABBR}? ?ICP证 ?:? ?)?(?:合字)? ?{_ABBR}? ?(?:合字)? ?(?<![A-Z0-9])"
    rf"[AB][12](?: ?{SEP} ?[AB][12]){{0,3}} ?{_LICENCE_DASH} ?[0-9]{{8}}(?![0-9])(?: ?号)?"
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


SCAN_BY_KIND: dict[str, re.Pattern[str]] = {k: re.compile(p) for k, p in _SCAN_PATTERNS.items()}


SCAN_ALL = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _SCAN_PATTERNS.items()))


_LABEL_COLON = re.compile(r"(ICP(?:经营许可)?证|ICP备|公网安备):")


_WRAPPERS = "()[]{}<>【】〔〕〖〗「」『』《》〈〉\"'“”‘’"


_TRAILING = ".,;!?。，；、"


KIND_LICENCE = re.compile(rf"[A-Z][0-9]{{1,3}}(?:{SEP}[A-Z][0-9]{{1,3}}){{0,5}}{_LICENCE_DASH}[0-9]")


KIND_ICP_LICENCE = re.compile(r"ICP证[0-9]")


ALNUM = re.compile(r"[0-9A-Z]+")


USCC_LABEL = re.compile(r"(信用代码|社会信用|税号|纳税人识别号|注册号|USCC)")


USCC_LABEL_WINDOW = 30


#: Longest cleaned input the single-identifier parsers look at; longer text is not one identifier.
MAX_IDENTIFIER_LENGTH = 200


def clean(text: str) -> str:
    """Return normalised text without surrounding brackets, trailing punctuation or a label."""
    text = strip_wrappers(normalize_text(text))
    text = _LABEL_COLON.sub(r"\1", text)
    label, colon, rest = text.rpartition(":")
    if colon and rest and label:
        text = rest
    return strip_wrappers(text)


def strip_wrappers(text: str) -> str:
    """Return text without surrounding brackets/quotes and trailing punctuation."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip(_WRAPPERS).rstrip(_TRAILING)
    return text


def province_fields(province: Province | None) -> dict[str, str | None]:
    """Return the province_code/province keyword arguments for an Identifier."""
    if province is None:
        return {"province_code": None, "province": None}
    return {"province_code": province.code, "province": province.name}


def not_this_kind(text: str, kind: Kind, key: str, **values: Any) -> Identifier:
    """Return an invalid Identifier of kind for text that does not have that kind's shape."""
    return Identifier(input=text, kind=kind, problems=[message(key, **values)])


def match_number(text: str, full: re.Pattern[str], kind: str) -> re.Match[str] | None:
    """Return a whole-string match of the cleaned text, or a match of the first embedded number."""
    cleaned = clean(text)
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        return None
    found = full.fullmatch(cleaned)
    if found is not None:
        return found
    embedded = SCAN_BY_KIND[kind].search(cleaned)
    if embedded is None:
        return None
    return full.fullmatch(clean(embedded.group()))
