"""Does the provider hold a licence that covers IDC (B11) where the offer's datacenter is?

A provincial licence (province prefix) is valid only in its province; a cross-regional licence issued by
MIIT lists the provinces or cities it covers. Elastic cloud instances also need the B11 scope to include
互联网资源协作服务. See DOMAIN.md §2.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from app.advice import cities
from app.advice.facts import LicenceFacts
from app.advice.reasons import Reason
from app.core import provinces, vocabulary

IDC_ITEM = "B11"
VALID_STATUS = "正常"
EXPIRY_WARNING_DAYS = 90


@dataclass(frozen=True)
class Coverage:
    """Result of the licence check for one datacenter: covered, not covered (why) or unverifiable (why)."""

    covered: bool | None  # None: cannot tell from the recorded data
    reason: Reason
    licence: str | None = None
    notes: tuple[Reason, ...] = ()


@functools.lru_cache(maxsize=4096)
def _coverage_provinces(entries: tuple[str, ...]) -> frozenset[str]:
    """Province names a cross-regional licence's coverage list names (provinces or cities)."""
    names: set[str] = set()
    for entry in entries:
        province = provinces.lookup(entry)
        if province is not None:
            names.add(province.name)
            continue
        city = cities.lookup(entry)
        if city is not None:
            names.add(city.province)
    return frozenset(names)


def _valid_on(licence: LicenceFacts, today: date) -> bool:
    if licence.status != VALID_STATUS:
        return False
    if licence.expires_on is not None and licence.expires_on < today:
        return False
    return licence.issued_on is None or licence.issued_on <= today


def _why_invalid(licence: LicenceFacts, today: date) -> tuple[str, str]:
    """Why a licence is not in force, in Chinese and English."""
    if licence.status != VALID_STATUS:
        english = vocabulary.label(licence.status, "en", kind="licence_status")
        return f"{licence.number} 状态为“{licence.status}”", f"{licence.number} has status {english}"
    if licence.expires_on is not None and licence.expires_on < today:
        return (
            f"{licence.number} 已于 {licence.expires_on.isoformat()} 到期",
            f"{licence.number} expired on {licence.expires_on.isoformat()}",
        )
    issued = licence.issued_on.isoformat() if licence.issued_on else ""
    return (
        f"{licence.number} 的发证日期 {issued} 在未来",
        f"{licence.number} is dated {issued}, in the future",
    )


def _outside_texts(idc: list[LicenceFacts], province: str) -> tuple[str, str]:
    """Why no B11 licence covers `province`, in Chinese and English."""
    scopes = "；".join(
        f"{lic.number} 仅在{lic.province}有效"
        if lic.issuer_level == "provincial"
        else f"{lic.number} 覆盖 {'、'.join(lic.coverage)}"
        for lic in idc
    )
    scopes_en = "; ".join(
        f"{lic.number} is valid only in {lic.province}"
        if lic.issuer_level == "provincial"
        else f"{lic.number} covers {', '.join(lic.coverage)}"
        for lic in idc
    )
    return (
        f"机房在{province}，但 B11 许可证不覆盖该省：{scopes}",
        f"the datacenter is in {province}, outside the B11 licences' coverage: {scopes_en}",
    )


def _covered_texts(licence: LicenceFacts, province: str) -> tuple[str, str]:
    """Which licence covers `province`, in Chinese and English."""
    provincial = licence.issuer_level == "provincial"
    scope = f"在{licence.province}有效" if provincial else f"覆盖{province}"
    scope_en = f"valid in {licence.province}" if provincial else f"covers {province}"
    return (
        f"许可证 {licence.number} 含 B11，{scope}，机房所在省份在范围内（登记数据）",
        f"licence {licence.number} includes B11 and is {scope_en}; the datacenter's province is inside it "
        "(registry data)",
    )


def _not_valid_texts(operating: list[LicenceFacts], today: date) -> tuple[str, str]:
    """Why none of the licences is in force, in Chinese and English."""
    states = [_why_invalid(lic, today) for lic in operating]
    return (
        f"没有状态正常且在有效期内的许可证：{'；'.join(zh for zh, _ in states)}",
        f"no licence is in force: {'; '.join(en for _, en in states)}",
    )


def _covers_province(licence: LicenceFacts, province: str) -> bool | None:
    if licence.issuer_level == "provincial":
        return licence.province == province
    if not licence.coverage:
        return None
    return province in _coverage_provinces(licence.coverage)


def idc_licences(licences: Iterable[LicenceFacts], today: date) -> list[LicenceFacts] | Coverage:
    """The B11 licences in force, or (when there are none) a Coverage saying why, wherever the datacenter."""
    licences = list(licences)
    if not licences:
        return Coverage(
            False,
            Reason(
                "licence.none",
                "登记中没有任何增值电信业务经营许可证",
                "no value-added telecom licence is on record",
            ),
        )
    operating = [lic for lic in licences if lic.kind == "licence"]
    if not operating:
        shown = "、".join(lic.number for lic in licences)
        return Coverage(
            False,
            Reason(
                "licence.not_a_licence",
                f"登记的“许可证”{shown} 不是经营许可证编号（像是 ICP 备案号），备案不等于经营许可",
                f"the recorded 'licence' {shown} is not an operating-licence number (it looks like an ICP "
                "filing, which is not a licence)",
            ),
        )
    valid = [lic for lic in operating if _valid_on(lic, today)]
    if not valid:
        return Coverage(False, Reason("licence.not_valid", lambda: _not_valid_texts(operating, today)))
    idc = [lic for lic in valid if IDC_ITEM in lic.business_items]
    if idc:
        return idc
    items = sorted({item for lic in valid for item in lic.business_items})
    return Coverage(
        False,
        Reason(
            "licence.no_b11",
            f"有效许可证只含 {'、'.join(items) or '无'}，没有 B11 互联网数据中心业务；"
            "B2 类业务不能出租服务器或云主机",
            f"the licences in force list only {', '.join(items) or 'none'}, without B11 (IDC); "
            "B2 items do not cover renting servers or cloud hosts",
        ),
    )


def check_coverage(
    licences: Iterable[LicenceFacts],
    *,
    province: str | None,
    offer_kind: str,
    today: date,
    standing: list[LicenceFacts] | Coverage | None = None,
) -> Coverage:
    """Whether any recorded licence lets the provider run IDC (and cloud, for cloud offers) in `province`.

    `standing` is idc_licences(licences, today) when the caller already has it (one per provider).
    """
    if province is None:
        return Coverage(
            None,
            Reason(
                "licence.no_datacenter",
                "套餐未关联机房，无法核对许可证是否覆盖机房所在省份",
                "the offer names no datacenter, so licence coverage cannot be checked",
            ),
        )
    if standing is None:
        standing = idc_licences(licences, today)
    if isinstance(standing, Coverage):
        return standing
    idc = standing
    covering = [lic for lic in idc if _covers_province(lic, province)]
    if not covering:
        unknown = [lic for lic in idc if _covers_province(lic, province) is None]
        if unknown:
            return Coverage(
                None,
                Reason(
                    "licence.coverage_unknown",
                    f"跨地区许可证 {unknown[0].number} 未登记覆盖范围，无法确认是否覆盖{province}",
                    f"cross-regional licence {unknown[0].number} has no coverage on record; cannot tell "
                    f"whether it covers {province}",
                ),
                unknown[0].number,
            )
        return Coverage(False, Reason("licence.outside_coverage", _outside_texts, args=(idc, province)))
    notes: list[Reason] = []
    licence = covering[0]
    if offer_kind == "cloud_instance":
        with_cloud = [lic for lic in covering if lic.resource_collab is True]
        if not with_cloud:
            if any(lic.resource_collab is False for lic in covering):
                return Coverage(
                    False,
                    Reason(
                        "licence.no_cloud_scope",
                        f"这是弹性云主机，但许可证 {licence.number} 的 B11 范围注明不含互联网资源协作服务",
                        f"this is an elastic cloud offer, but licence {licence.number} excludes "
                        "Internet resource collaboration services from its B11 scope",
                    ),
                    licence.number,
                )
            return Coverage(
                None,
                Reason(
                    "licence.cloud_scope_unknown",
                    f"这是弹性云主机，登记中没有说明许可证 {licence.number} 的 B11 是否含互联网资源协作服务",
                    f"this is an elastic cloud offer; the record does not say whether {licence.number}'s B11 "
                    "includes Internet resource collaboration services",
                ),
                licence.number,
            )
        licence = with_cloud[0]
    if licence.expires_on is not None and (licence.expires_on - today).days <= EXPIRY_WARNING_DAYS:
        notes.append(
            Reason(
                "licence.expiring",
                f"许可证 {licence.number} 将于 {licence.expires_on.isoformat()} 到期，须确认续期",
                f"licence {licence.number} expires on {licence.expires_on.isoformat()}; confirm the renewal",
            )
        )
    if licence.foreign_invested:
        notes.append(
            Reason(
                "licence.foreign_invested",
                f"{licence.number} 是“合字”（外商投资）许可证，IDC / 云业务对外资有限制，须人工复核",
                f"{licence.number} is a foreign-invested licence; IDC and cloud business is "
                "restricted for foreign investment and needs a manual review",
            )
        )
    return Coverage(
        True,
        Reason("licence.covered", _covered_texts, args=(licence, province)),
        licence.number,
        tuple(notes),
    )
