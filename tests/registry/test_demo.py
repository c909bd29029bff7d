"""Demo data: clearly fictional, loaded whole, and between them every red flag of DOMAIN.md §4."""

from __future__ import annotations

import re
from datetime import date, timedelta
from urllib.parse import urlparse

import pytest

from app.core.errors import Conflict
from app.core.provinces import lookup
from app.models.enums import BandwidthType, OfferKind, StorageType
from app.registry import demo
from app.registry.provider_list import ProviderQuery, list_providers
from app.vetting.identifiers import identify


@pytest.fixture
def loaded(session):
    """Every demo provider, loaded through load_demo, by legal name."""
    count = demo.load_demo(session)
    providers = list_providers(session, query=ProviderQuery(per_page=100)).items
    assert count == len(providers)
    return {provider.legal_name: provider for provider in providers}


def _flagged(loaded):
    return [p for p in loaded.values() if p.legal_name.startswith("虚构")]


def _ident(number):
    return identify(number).to_dict()


def _province(text):
    province = lookup(text) if text else None
    return province.name if province else None


def _provincial(licence):
    parsed = _ident(licence.number_raw)
    return parsed["kind"] == "licence" and parsed.get("issuer_level") == "provincial"


def _ministry(licence):
    parsed = _ident(licence.number_raw)
    return parsed["kind"] == "licence" and parsed.get("issuer_level") == "ministry"


# ---------------------------------------------------------------- shape and fictionality


def test_loads_at_least_twelve_clearly_fictional_providers(loaded):
    assert len(loaded) >= 12
    for provider in loaded.values():
        assert provider.legal_name.startswith(("示例", "虚构")), provider.legal_name
        assert urlparse(provider.website).hostname.endswith(".example")
        assert provider.contact_email.endswith(".example")
        assert "555" in provider.contact_phone
        assert "虚构地址" in provider.registered_address
        assert provider.uscc and "EXAMPL" in provider.uscc
        assert provider.offers and provider.datacenters
        for filing in provider.filings:
            assert filing.domain.endswith(".example")


def test_offers_are_realistic_and_varied(loaded):
    offers = [offer for provider in loaded.values() for offer in provider.offers]
    assert {"H800", "H100", "A800", "A100", "L40S", "RTX 4090", "H20"} <= {o.gpu_model for o in offers}
    assert {o.offer_kind for o in offers} >= {OfferKind.bare_metal, OfferKind.cloud_instance}
    provinces = {dc.province for p in loaded.values() for dc in p.datacenters}
    assert len(provinces) >= 10
    for offer in offers:
        assert offer.price_gpu_hour_cny and 1 <= offer.price_gpu_hour_cny <= 30
        assert offer.public_mbps
        assert offer.datacenter is not None


def test_notes_say_which_red_flags_each_provider_demonstrates(loaded):
    mentioned = set()
    for provider in loaded.values():
        if provider.legal_name.startswith("示例"):
            assert "合规示例" in provider.notes
            continue
        numbers = {int(n) for n in re.findall(r"红旗\s*(\d+)", provider.notes)}
        assert numbers, provider.legal_name
        mentioned |= numbers
    assert mentioned == set(range(1, 14))


# ---------------------------------------------------------------- every red flag, asserted on the data


def test_flag_1_b2_only_licence_while_renting_servers(loaded):
    assert any(
        p.licences
        and all(licence.categories == ["B2"] for licence in p.licences)
        and any(o.offer_kind in (OfferKind.bare_metal, OfferKind.cloud_instance) for o in p.offers)
        for p in loaded.values()
    )


def test_flag_2_b11_without_resource_collaboration_selling_cloud(loaded):
    assert any(
        any("B11" in lic.business_items and lic.b11_includes_resource_collab is False for lic in p.licences)
        and not any(lic.b11_includes_resource_collab for lic in p.licences)
        and any(o.offer_kind == OfferKind.cloud_instance for o in p.offers)
        for p in loaded.values()
    )


def test_flag_3_provincial_licence_with_datacenter_in_another_province(loaded):
    assert any(
        _provincial(lic) and any(dc.province != _ident(lic.number_raw)["province"] for dc in p.datacenters)
        for p in loaded.values()
        for lic in p.licences
        if lic.status == "正常"
    )


def test_flag_3_cross_regional_coverage_lacks_a_datacenter(loaded):
    found = False
    for provider in loaded.values():
        for lic in provider.licences:
            if not _ministry(lic) or not lic.coverage:
                continue
            covered = {_province(item) for item in lic.coverage} | set(lic.coverage)
            if any(dc.province not in covered and dc.city not in covered for dc in provider.datacenters):
                found = True
    assert found


def test_flag_4_status_expiry_and_future_issue_year(loaded):
    today = date.today()
    licences = [lic for p in loaded.values() for lic in p.licences]
    assert {"吊销", "注销"} <= {lic.status for lic in licences}
    assert any(lic.expires_on and lic.expires_on < today and lic.status == "正常" for lic in licences)
    assert any(lic.expires_on and today <= lic.expires_on <= today + timedelta(days=90) for lic in licences)
    assert any(
        (_ident(lic.number_raw).get("year") or 0) > today.year and lic.issued_on > today for lic in licences
    )


def test_flag_5_names_on_licence_and_filing_differ_from_legal_name(loaded):
    assert any(
        any(lic.company_name and lic.company_name != p.legal_name for lic in p.licences)
        and any(f.entity_name and f.entity_name != p.legal_name for f in p.filings)
        for p in loaded.values()
    )


def test_flag_6_icp_filing_province_differs_from_registered_province(loaded):
    assert any(
        f.kind == "icp_filing" and _ident(f.number_raw)["province"] not in (None, p.registered_province)
        for p in loaded.values()
        for f in p.filings
    )


def test_flag_7_personal_filing_and_missing_filing(loaded):
    assert any(f.entity_nature == "个人" for p in loaded.values() for f in p.filings)
    assert any(not [f for f in p.filings if f.kind == "icp_filing"] for p in loaded.values())


def test_flag_8_psb_digits_do_not_match_prefix(loaded):
    assert any(
        f.kind == "psb_filing"
        and (parsed := _ident(f.number_raw))["province_code"]
        and parsed.get("division_code", "")[:2] != parsed["province_code"]
        for p in loaded.values()
        for f in p.filings
    )


def test_flag_9_malformed_numbers_and_bad_check_character(loaded):
    bad_uscc = [_ident(p.uscc) for p in loaded.values() if not identify(p.uscc).valid]
    assert any("校验码" in " ".join(parsed["problems"]) for parsed in bad_uscc)
    assert any(
        _provincial(lic) and any(c.startswith("A") for c in lic.categories)
        for p in loaded.values()
        for lic in p.licences
    )
    assert any(
        "不是省份简称" in " ".join(_ident(f.number_raw)["problems"])
        for p in loaded.values()
        for f in p.filings
    )


def test_flag_10_foreign_invested_licence(loaded):
    assert any(_ident(lic.number_raw).get("foreign_invested") for p in loaded.values() for lic in p.licences)


def test_flag_11_icp_filing_number_given_as_licence(loaded):
    assert any(lic.number_kind == "icp_filing" for p in loaded.values() for lic in p.licences)


def test_flag_12_shared_bandwidth_and_network_storage_on_training_offers(loaded):
    offers = [o for p in loaded.values() for o in p.offers]
    assert any(o.bandwidth_type == BandwidthType.shared for o in offers)
    training = [o for o in offers if o.gpus_per_node >= 8 and o.gpu_model in ("H800", "H100", "A800", "A100")]
    assert {StorageType.cloud_disk, StorageType.nfs} <= {o.storage_type for o in training}


def test_flag_13_provider_will_not_disclose_topology_or_storage(loaded):
    assert any(
        p.discloses_network_topology is False and p.discloses_storage_config is False for p in loaded.values()
    )


# ---------------------------------------------------------------- the clean ones pass everything


def _clean_problems(provider) -> list[str]:
    today = date.today()
    problems = []
    uscc = identify(provider.uscc)
    if not uscc.valid or uscc.to_dict()["province"] != provider.registered_province:
        problems.append(f"uscc {uscc.problems}")
    dc_provinces = {dc.province for dc in provider.datacenters}
    sells_cloud = any(o.offer_kind == OfferKind.cloud_instance for o in provider.offers)
    if not any("B11" in lic.business_items for lic in provider.licences):
        problems.append("no B11")
    for lic in provider.licences:
        parsed = _ident(lic.number_raw)
        if not parsed["valid"] or parsed["kind"] != "licence" or parsed.get("foreign_invested"):
            problems.append(f"licence {parsed}")
        if lic.status != "正常" or not lic.expires_on or lic.expires_on <= today + timedelta(days=90):
            problems.append("licence status/expiry")
        if (parsed.get("year") or 0) > today.year or not lic.issued_on or lic.issued_on > today:
            problems.append("licence year")
        if lic.company_name != provider.legal_name:
            problems.append("licence name")
        if sells_cloud and not lic.b11_includes_resource_collab:
            problems.append("cloud without resource collaboration")
        if parsed.get("issuer_level") == "provincial" and dc_provinces != {parsed["province"]}:
            problems.append("provincial licence outside its province")
        if parsed.get("issuer_level") == "ministry":
            covered = {_province(item) for item in lic.coverage}
            if not dc_provinces <= covered:
                problems.append("coverage")
    kinds = {f.kind for f in provider.filings}
    if not {"icp_filing", "psb_filing"} <= kinds:
        problems.append("filings missing")
    for filing in provider.filings:
        parsed = _ident(filing.number_raw)
        if not parsed["valid"] or parsed["kind"] != filing.kind:
            problems.append(f"filing {parsed}")
        if filing.entity_name != provider.legal_name:
            problems.append("filing name")
        if filing.kind == "icp_filing" and (
            filing.entity_nature != "企业" or parsed["province"] != provider.registered_province
        ):
            problems.append("icp filing nature/province")
    for offer in provider.offers:
        if offer.bandwidth_type != BandwidthType.dedicated or offer.storage_type != StorageType.local_nvme:
            problems.append(f"offer {offer.name}")
    if not (provider.discloses_network_topology and provider.discloses_storage_config):
        problems.append("disclosure")
    return problems


def test_three_or_four_clean_providers_pass_every_check(loaded):
    clean = [p for p in loaded.values() if p.legal_name.startswith("示例")]
    assert 3 <= len(clean) <= 4
    for provider in clean:
        assert _clean_problems(provider) == [], provider.legal_name


def test_every_flagged_provider_fails_some_check(loaded):
    for provider in _flagged(loaded):
        assert _clean_problems(provider), provider.legal_name


# ---------------------------------------------------------------- loading


def test_dates_are_relative_to_the_load_day(session):
    day = date(2031, 5, 1)
    demo.load_demo(session, today=day)
    licences = [
        lic for p in list_providers(session, query=ProviderQuery(per_page=100)).items for lic in p.licences
    ]
    assert any(lic.expires_on == day + timedelta(days=45) for lic in licences)
    assert any(lic.expires_on == day - timedelta(days=120) for lic in licences)
    assert any(_ident(lic.number_raw).get("year") == 2032 for lic in licences)


def test_loading_twice_is_refused_and_changes_nothing(session):
    assert not demo.has_providers(session)
    count = demo.load_demo(session)
    assert demo.has_providers(session)
    with pytest.raises(Conflict) as info:
        demo.load_demo(session)
    assert "示例数据已加载" in info.value.errors[0].message
    assert list_providers(session, query=ProviderQuery(per_page=1)).total == count


def test_demo_file_parses_with_every_provider_unique():
    providers = demo.demo_providers()
    usccs = [p["uscc"] for p in providers]
    assert len(set(usccs)) == len(usccs)
    assert len({p["legal_name"] for p in providers}) == len(providers)
    assert "{year" not in repr(providers) and "today" not in repr(providers)
