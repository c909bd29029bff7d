"""Parse and validate the 18-character unified social credit code (统一社会信用代码, GB 32100-2015)."""

from __future__ import annotations

from app.core import provinces
from app.core.provinces import Province
from app.vetting.identifier_common import (
    ALNUM,
    MAX_IDENTIFIER_LENGTH,
    SCAN_BY_KIND,
    Findings,
    Identifier,
    clean,
    not_this_kind,
)

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


def _uscc_chars(code: str, findings: Findings) -> None:
    """Report characters outside the USCC alphabet."""
    bad = [(i + 1, c) for i, c in enumerate(code) if c not in _USCC_VALUES]
    if bad:
        findings.error(
            "uscc_bad_chars",
            positions="、".join(str(i) for i, _ in bad),
            chars="、".join(c for _, c in bad),
        )


def _uscc_checks(code: str, findings: Findings) -> None:
    """Check both check characters of an 18-char code."""
    org_expected = org_code_check_char(code[8:16])
    if org_expected is not None and org_expected != code[16]:
        findings.error("uscc_check_17", expected=org_expected, actual=code[16])
    expected = uscc_check_char(code[:17])
    if expected is not None and expected != code[17]:
        findings.error("uscc_check_18", expected=expected, actual=code[17])


def _uscc_province(division: str, findings: Findings) -> Province | None:
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


def build_uscc(text: str, code: str) -> Identifier:
    """Return the Identifier for an 18-character candidate code."""
    findings = Findings()
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
    return findings.identifier(text, "uscc", code, parts, province)


def parse_uscc(text: str) -> Identifier:
    """Parse an 18-character unified social credit code such as "91110000802100433B"."""
    cleaned = clean(text)
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        return not_this_kind(text, "uscc", "not_uscc")
    if not ALNUM.fullmatch(cleaned):
        embedded = SCAN_BY_KIND["uscc"].search(cleaned)
        if embedded is None:
            return not_this_kind(text, "uscc", "not_uscc")
        cleaned = embedded.group()
    if len(cleaned) != 18:
        return not_this_kind(text, "uscc", "uscc_length", length=len(cleaned))
    return build_uscc(text, cleaned)
