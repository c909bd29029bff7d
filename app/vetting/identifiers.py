"""Parse and validate Chinese telecom licence, ICP, public-security filing and credit code numbers."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

from app.core import clock, provinces
from app.core.provinces import Province
from app.vetting.identifier_common import (
    ALNUM,
    ICP_FILING_FULL,
    ICP_LICENCE_FULL,
    KIND_ICP_LICENCE,
    KIND_LICENCE,
    LICENCE_FULL,
    MAX_IDENTIFIER_LENGTH,
    PSB_FULL,
    SCAN_ALL,
    SEP_RE,
    USCC_LABEL,
    USCC_LABEL_WINDOW,
    Findings,
    Identifier,
    Kind,
    clean,
    match_number,
    message,
    normalize_text,
    not_this_kind,
    scan_text,
)
from app.vetting.uscc import build_uscc, parse_uscc


def _today() -> datetime.date:
    """Return today's date (a seam for tests)."""
    return clock.business_today()


_CATEGORY_ORDER: tuple[str, ...] = ("A1", "A2", "B1", "B2")


_SUBCATEGORY = re.compile(r"(B[12])[1-9]")


def _category_key(category: str) -> tuple[int, str]:
    """Sort known categories in A1, A2, B1, B2 order, unknown ones after them."""
    if category in _CATEGORY_ORDER:
        return (_CATEGORY_ORDER.index(category), category)
    return (len(_CATEGORY_ORDER), category)


def _check_categories(categories: list[str], findings: Findings) -> None:
    """Report categories that are not A1, A2, B1 or B2."""
    for category in categories:
        if category in _CATEGORY_ORDER:
            continue
        sub = _SUBCATEGORY.fullmatch(category)
        if sub:
            findings.error("licence_subcategory", category=category, parent=sub.group(1))
        else:
            findings.error("licence_unknown_category", category=category)


def _check_year(year: int | None, findings: Findings, future_key: str, old_key: str) -> None:
    """Report a year in the future (error) or before 2000 (warning)."""
    if year is None:
        return
    today = _today().year
    if year > today:
        findings.error(future_key, year=year, today=today)
    elif year < 2000:
        findings.warn(old_key, year=year)


def _licence_province(match: re.Match[str], findings: Findings) -> tuple[str, Province | None]:
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


def _report_prefix(prefix: str, findings: Findings, unknown_key: str) -> None:
    """Report a prefix that is not a province abbreviation, suggesting one for a province name."""
    named = provinces.by_name(prefix)
    if named is not None:
        findings.error("prefix_is_name", abbreviation=named.abbreviation, prefix=prefix)
    else:
        findings.error(unknown_key, prefix=prefix)


def _parse_matched(
    text: str, full: re.Pattern[str], kind: Kind, build: Callable[[str, re.Match[str]], Identifier]
) -> Identifier:
    """Parse text as `kind`: build the Identifier of its number, or say it is not one ("not_<kind>")."""
    match = match_number(text, full, kind)
    if match is None:
        return not_this_kind(text, kind, f"not_{kind}")
    return build(text, match)


def _build_licence(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched licence number."""
    findings = Findings()
    categories = sorted(dict.fromkeys(SEP_RE.split(match.group("cats"))), key=_category_key)
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
    return findings.identifier(text, "licence", f"{prefix}{'.'.join(categories)}-{digits}", parts, province)


def parse_licence(text: str) -> Identifier:
    """Parse a value-added telecom licence number such as "京B2-20202418"."""
    return _parse_matched(text, LICENCE_FULL, "licence", _build_licence)


def _prefixed_province(
    prefix: str, findings: Findings, missing_key: str, unknown_key: str
) -> Province | None:
    """Return the Province for a filing prefix, reporting a missing or unknown one."""
    if not prefix:
        findings.error(missing_key)
        return None
    province = provinces.by_abbreviation(prefix)
    if province is None:
        _report_prefix(prefix, findings, unknown_key)
    return province


def _filing_year(digits: str, findings: Findings) -> int | None:
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


def _site_suffix(suffix: str | None, findings: Findings) -> int | None:
    """Return the site number after the '-' of an ICP filing, if any."""
    if suffix is None:
        return None
    if len(suffix) > 6:
        findings.error("icp_filing_suffix_too_long", suffix=suffix)
        return None
    return int(suffix)


def _build_icp_filing(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched ICP filing number."""
    findings = Findings()
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
    return findings.identifier(text, "icp_filing", service or entity, parts, province)


def parse_icp_filing(text: str) -> Identifier:
    """Parse an ICP filing number such as "京ICP备10046444号-9"."""
    return _parse_matched(text, ICP_FILING_FULL, "icp_filing", _build_icp_filing)


def _build_icp_licence(text: str, match: re.Match[str]) -> Identifier:
    """Return the Identifier for a matched legacy ICP licence number."""
    findings = Findings()
    prefix, digits = match.group("prefix"), match.group("digits")
    province = _prefixed_province(
        prefix, findings, "icp_licence_missing_province", "icp_licence_unknown_province"
    )
    if len(digits) != 6:
        findings.error("icp_licence_digits_length", length=len(digits))
    return findings.identifier(text, "icp_licence", f"{prefix}ICP证{digits}号", {"serial": digits}, province)


def parse_icp_licence(text: str) -> Identifier:
    """Parse a legacy ICP licence number such as "京ICP证030173号"."""
    match = match_number(text, ICP_LICENCE_FULL, "icp_licence")
    if match is not None:
        return _build_icp_licence(text, match)
    licence = match_number(text, LICENCE_FULL, "licence")
    if licence is not None:
        number = _build_licence(text, licence).normalized
        return not_this_kind(text, "icp_licence", "icp_licence_is_licence", number=number)
    return not_this_kind(text, "icp_licence", "not_icp_licence")


def _check_psb_code(
    digits: str, prefix: str, province: Province | None, findings: Findings
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
    findings = Findings()
    prefix, digits = match.group("prefix"), match.group("digits")
    province = _prefixed_province(prefix, findings, "psb_missing_province", "psb_unknown_province")
    if len(digits) != 14:
        findings.error("psb_digits_length", length=len(digits))
    coded = _check_psb_code(digits, prefix, province, findings)
    return findings.identifier(
        text,
        "psb_filing",
        f"{prefix}公网安备{digits}号",
        {"division_code": digits[:6], "serial": digits[6:]},
        province or coded,
    )


def parse_psb_filing(text: str) -> Identifier:
    """Parse a public-security filing number such as "京公网安备11010802032137号"."""
    return _parse_matched(text, PSB_FULL, "psb_filing", _build_psb)


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
    cleaned = clean(text)
    if len(cleaned) > MAX_IDENTIFIER_LENGTH:
        return "unknown"
    if "公网安备" in cleaned:
        return "psb_filing"
    if "ICP备" in cleaned:
        return "icp_filing"
    if KIND_ICP_LICENCE.search(cleaned):
        return "icp_licence"
    if KIND_LICENCE.search(cleaned):
        return "licence"
    if ALNUM.fullmatch(cleaned) and len(cleaned) in _USCC_LENGTHS:
        return "uscc"
    return "unknown"


def identify(text: str) -> Identifier:
    """Parse text as whichever kind of identifier its shape suggests; never raises."""
    cleaned = clean(text)
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
    return bool(USCC_LABEL.search(scanned, max(0, start - USCC_LABEL_WINDOW), start))


def _scan_match(text: str, scanned: str, origin: list[int], match: re.Match[str]) -> Identifier | None:
    """Return the Identifier for one scanner match, or None for an unlabelled invalid USCC."""
    kind = match.lastgroup or "unknown"
    start, end = match.span()
    original = text[origin[start] : origin[end - 1] + 1].strip()
    if kind == "uscc":
        found = build_uscc(original, match.group())
        if not found.valid and not _has_uscc_label(scanned, start):
            return None
        return found
    return _PARSERS[kind](original)


def find_identifiers(text: str) -> list[Identifier]:
    """Return every identifier found in free text, deduplicated, in order of appearance."""
    scanned, origin = scan_text(text)
    found: list[Identifier] = []
    seen: set[tuple[str, str]] = set()
    for match in SCAN_ALL.finditer(scanned):
        identifier = _scan_match(text, scanned, origin, match)
        if identifier is None:
            continue
        key = (identifier.kind, identifier.normalized or normalize_text(match.group()))
        if key not in seen:
            seen.add(key)
            found.append(identifier)
    return found
