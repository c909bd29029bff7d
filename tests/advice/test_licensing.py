"""Licence coverage: B11, in force, covering the datacenter's province (and cloud scope for cloud offers)."""

from __future__ import annotations

from datetime import date

import pytest

from app.advice.licensing import check_coverage
from tests.advice.factories import TODAY, licence


def covered(licences, province="北京", offer_kind="bare_metal"):
    return check_coverage(licences, province=province, offer_kind=offer_kind, today=TODAY)


def test_provincial_b11_covers_its_own_province_only():
    result = covered([licence("京B1-20240001")])
    assert result.covered is True and result.reason.code == "licence.covered"
    outside = covered([licence("浙B1-20240007")], province="贵州")
    assert outside.covered is False and outside.reason.code == "licence.outside_coverage"
    assert "仅在浙江有效" in outside.reason.zh and "valid only in 浙江" in outside.reason.en


def test_cross_regional_licence_covers_the_listed_provinces_and_cities():
    national = licence("B1-20230008", coverage=["北京", "上海", "广东"])
    assert covered([national], province="上海").covered is True
    assert covered([national], province="内蒙古").reason.code == "licence.outside_coverage"
    # a city in the coverage list counts for its province
    assert covered([licence("B1-20230009", coverage=["乌兰察布"])], province="内蒙古").covered is True
    unknown = covered([licence("B1-20230010", coverage=[])], province="上海")
    assert unknown.covered is None and unknown.reason.code == "licence.coverage_unknown"


def test_b2_only_and_filings_do_not_cover_idc():
    b2 = covered([licence("京B2-20240005", business_items=["B21", "B25"])])
    assert b2.covered is False and b2.reason.code == "licence.no_b11"
    assert "B21、B25" in b2.reason.zh
    filing = covered([licence("津ICP备2024099916号")], province="天津")
    assert filing.covered is False and filing.reason.code == "licence.not_a_licence"
    assert covered([], province="北京").reason.code == "licence.none"


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"status": "吊销"}, "吊销"),
        ({"expires_on": date(2026, 1, 1)}, "到期"),
        ({"issued_on": date(2027, 1, 1)}, "在未来"),
    ],
)
def test_licences_not_in_force_do_not_count(overrides, words):
    result = covered([licence(**overrides)])
    assert result.covered is False and result.reason.code == "licence.not_valid"
    assert words in result.reason.zh


def test_cloud_offers_need_resource_collaboration_in_the_b11_scope():
    assert covered(
        [licence(b11_includes_resource_collab=False)], offer_kind="cloud_instance"
    ).reason.code == ("licence.no_cloud_scope")
    assert covered([licence(b11_includes_resource_collab=None)], offer_kind="cloud_instance").covered is None
    assert covered([licence(b11_includes_resource_collab=False)], offer_kind="bare_metal").covered is True


def test_notes_for_foreign_invested_and_expiring_licences():
    foreign = covered([licence("合字B1.B2-20230015", coverage=["北京"])])
    assert foreign.covered is True
    assert [note.code for note in foreign.notes] == ["licence.foreign_invested"]
    soon = covered([licence(expires_on=date(2026, 7, 1))])
    assert [note.code for note in soon.notes] == ["licence.expiring"]


def test_an_offer_without_datacenter_cannot_be_checked():
    assert covered([licence()], province=None).covered is None
