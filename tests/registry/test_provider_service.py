"""Provider service: validation, nested records, version checks, audit, search and filters."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from app.core.audit import set_actor
from app.core.errors import Conflict, InvalidInput, NotFound
from app.models import AuditEntry, Licence, Offer
from app.registry import provider_list
from app.registry import providers as svc


def _data(**overrides):
    data = {
        "legal_name": "示例算力科技有限公司",
        "registered_province": "粤",
        "uscc": "91440300708461136t",
        "licences": [
            {"number_raw": "ICP证粤B1-20190001号", "business_items": "B11, B14", "coverage": "广东"}
        ],
        "filings": [{"number_raw": "粤ICP备2021012345号-1", "entity_name": "示例算力科技有限公司"}],
        "datacenters": [{"name": "深圳一号", "province": "广东", "city": "深圳"}],
        "offers": [
            {
                "gpu_model": "H800",
                "gpus_per_node": 8,
                "datacenter_name": "深圳一号",
                "bandwidth_type": "dedicated",
                "storage_type": "local_nvme",
            }
        ],
    }
    data.update(overrides)
    return data


@pytest.fixture
def audited(session):
    set_actor(session, user_id=None, name="tester")
    return session


def test_create_normalises_numbers_and_links_offer_to_datacenter(audited):
    provider = svc.create_provider(audited, data=_data())
    licence, filing, offer = provider.licences[0], provider.filings[0], provider.offers[0]
    assert provider.uscc == "91440300708461136T"
    assert provider.registered_province == "广东"
    assert (licence.number, licence.number_kind, licence.categories) == ("粤B1-20190001", "licence", ["B1"])
    assert licence.business_items == ["B11", "B14"]
    assert (filing.kind, filing.number) == ("icp_filing", "粤ICP备2021012345号-1")
    assert offer.datacenter_id == provider.datacenters[0].id


def test_validation_names_nested_fields(audited):
    bad = _data(
        legal_name="x",
        licences=[{"number_raw": ""}],
        certifications=[{"kind": "dengbao"}],
        offers=[{"gpu_model": "A100", "gpus_per_node": 0, "rdma_gbps": 100}],
    )
    with pytest.raises(InvalidInput) as caught:
        svc.create_provider(audited, data=bad)
    fields = {error.field for error in caught.value.errors}
    assert fields == {
        "legal_name",
        "licences[0].number_raw",
        "certifications[0].level",
        "offers[0].gpus_per_node",
        "offers[0].rdma_gbps",
    }
    assert all(re.search(r"[\u4e00-\u9fff]", error.message) for error in caught.value.errors)  # Chinese
    assert not any("(" in error.message for error in caught.value.errors)  # no English in brackets


def test_unknown_datacenter_name_and_province_are_refused(audited):
    with pytest.raises(InvalidInput) as caught:
        svc.create_provider(
            audited, data=_data(offers=[{"gpu_model": "A100", "gpus_per_node": 8, "datacenter_name": "无"}])
        )
    assert caught.value.errors[0].field == "offers[0].datacenter_name"
    with pytest.raises(InvalidInput) as caught:
        svc.create_provider(audited, data=_data(datacenters=[{"name": "x", "province": "火星"}], offers=[]))
    assert caught.value.errors[0].field == "datacenters[0].province"


def test_filing_kind_must_be_detectable_or_given(audited):
    with pytest.raises(InvalidInput) as caught:
        svc.create_provider(audited, data=_data(filings=[{"number_raw": "hello"}]))
    assert caught.value.errors[0].field == "filings[0].kind"


def test_duplicate_uscc_is_a_conflict(audited):
    svc.create_provider(audited, data=_data())
    with pytest.raises(Conflict) as caught:
        svc.create_provider(audited, data=_data(legal_name="另一家公司"))
    assert caught.value.errors[0].field == "uscc"


def test_stale_version_is_refused_and_nothing_overwritten(audited):
    provider = svc.create_provider(audited, data=_data())
    svc.update_provider(audited, provider_id=provider.id, patch={"version": 1, "short_name": "先到"})
    with pytest.raises(Conflict) as caught:
        svc.update_provider(audited, provider_id=provider.id, patch={"version": 1, "short_name": "后到"})
    assert caught.value.errors[0].field == "version"
    assert "tester" in caught.value.errors[0].message
    assert svc.get_provider(audited, provider_id=provider.id).short_name == "先到"


def test_patch_item_with_id_changes_only_given_fields(audited):
    provider = svc.create_provider(audited, data=_data())
    offer_id = provider.offers[0].id
    patched = svc.update_provider(
        audited,
        provider_id=provider.id,
        patch={"version": 1, "offers": [{"id": offer_id, "gpus_per_node": 4}]},
    )
    offer = patched.offers[0]
    assert (offer.id, offer.gpus_per_node, offer.bandwidth_type) == (offer_id, 4, "dedicated")
    assert offer.datacenter_id == patched.datacenters[0].id
    assert patched.version == 2


def test_patch_refuses_unknown_fields_and_foreign_ids(audited):
    provider = svc.create_provider(audited, data=_data())
    with pytest.raises(InvalidInput) as caught:
        svc.update_provider(audited, provider_id=provider.id, patch={"version": 1, "colour": "red"})
    assert caught.value.errors[0].field == "colour"
    with pytest.raises(InvalidInput) as caught:
        svc.update_provider(audited, provider_id=provider.id, patch={"version": 1, "offers": [{"id": 999}]})
    assert caught.value.errors[0].field.startswith("offers[0]")


def test_failed_change_leaves_nothing_behind(audited):
    provider = svc.create_provider(audited, data=_data())
    with pytest.raises(InvalidInput):
        svc.update_provider(
            audited,
            provider_id=provider.id,
            patch={"version": 1, "short_name": "新", "offers": [{"gpu_model": "", "gpus_per_node": 1}]},
        )
    fresh = svc.get_provider(audited, provider_id=provider.id)
    assert (fresh.short_name, fresh.version, len(fresh.offers)) == (None, 1, 1)


def test_child_save_and_delete_bump_version_and_check_it(audited):
    provider = svc.create_provider(audited, data=_data())
    svc.save_child(
        audited,
        provider_id=provider.id,
        collection="certifications",
        child_id=None,
        data={"kind": "iso27001", "number": "ISMS-001"},
        expected_version=1,
    )
    with pytest.raises(Conflict):
        svc.delete_child(
            audited,
            provider_id=provider.id,
            collection="offers",
            child_id=provider.offers[0].id,
            expected_version=1,
        )
    svc.delete_child(
        audited,
        provider_id=provider.id,
        collection="offers",
        child_id=provider.offers[0].id,
        expected_version=2,
    )
    fresh = svc.get_provider(audited, provider_id=provider.id)
    assert (fresh.version, len(fresh.certifications), fresh.offers) == (3, 1, [])
    with pytest.raises(NotFound):
        svc.save_child(
            audited, provider_id=provider.id, collection="bogus", child_id=None, data={}, expected_version=3
        )


def test_every_change_is_audited_with_actor_and_values(audited):
    provider = svc.create_provider(audited, data=_data())
    svc.update_provider(audited, provider_id=provider.id, patch={"version": 1, "status": "approved"})
    svc.delete_provider(audited, provider_id=provider.id, expected_version=2)
    entries = audited.exec(select(AuditEntry).order_by(AuditEntry.id)).all()
    actions = [(entry.action, entry.entity) for entry in entries]
    assert ("create", "provider") in actions and ("create", "offer") in actions
    assert ("update", "provider") in actions and ("delete", "licence") in actions
    update = next(entry for entry in entries if entry.action == "update")
    assert update.changes == {"status": ["candidate", "approved"]}
    assert {entry.actor_name for entry in entries} == {"tester"}
    assert all(entry.provider_id == provider.id for entry in entries)
    assert audited.exec(select(Licence)).all() == [] and audited.exec(select(Offer)).all() == []


def test_search_by_identifier_typed_differently(audited):
    svc.create_provider(audited, data=_data())
    svc.create_provider(audited, data=_data(legal_name="别家公司", uscc=None, licences=[], filings=[]))
    for text in ["粤ＩＣＰ备２０２１０１２３４５号", "粤B1-20190001", "示例算力", "91440300708461136T"]:
        page = provider_list.list_providers(audited, query=provider_list.parse_query({"q": text}))
        assert [p.legal_name for p in page.items] == ["示例算力科技有限公司"], text


def test_filters_combine_on_one_offer(audited):
    svc.create_provider(audited, data=_data())
    query = provider_list.parse_query({"gpu_model": "h800", "bandwidth_type": "dedicated", "province": "44"})
    assert provider_list.list_providers(audited, query=query).total == 1
    query = provider_list.parse_query({"gpu_model": "h800", "bandwidth_type": "shared"})
    assert provider_list.list_providers(audited, query=query).total == 0


def test_bad_query_parameters_name_the_field():
    with pytest.raises(InvalidInput) as caught:
        provider_list.parse_query({"status": "great", "per_page": "1000", "sort": "x", "province": "火星"})
    assert {error.field for error in caught.value.errors} == {"status", "per_page", "sort", "province"}


def test_pagination(audited):
    for index in range(5):
        svc.create_provider(audited, data=_data(legal_name=f"公司{index:02d}", uscc=None))
    page = provider_list.list_providers(
        audited, query=provider_list.parse_query({"per_page": "2", "page": "3"})
    )
    assert (page.total, page.pages, [p.legal_name for p in page.items]) == (5, 3, ["公司04"])


def test_patch_that_drops_an_item_audits_its_deletion(audited):
    provider = svc.create_provider(audited, data=_data())
    offer_id = provider.offers[0].id
    patched = svc.update_provider(audited, provider_id=provider.id, patch={"version": 1, "offers": []})
    assert patched.offers == []
    deletions = audited.exec(
        select(AuditEntry).where(AuditEntry.action == "delete", AuditEntry.entity == "offer")
    ).all()
    assert [entry.entity_id for entry in deletions] == [offer_id]
    assert deletions[0].changes["gpu_model"] == ["H800", None]
