"""Re-importing an edited export updates matched providers: preview per field, then apply all or nothing."""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlmodel import select

from app.core.audit import set_actor
from app.models import AuditEntry, Provider
from app.registry.demo import demo_providers
from app.registry.providers import create_provider, get_provider, update_provider
from app.registry.transfer.export import export_providers
from app.registry.transfer.importing import import_provider_dicts, import_providers
from tests.registry.conftest import BARE, awkward, snapshot


@pytest.fixture
def registry(session):
    """The demo providers plus two awkward ones (one without a credit code), stored through the service."""
    report = import_provider_dicts(session, providers=[*demo_providers(), awkward(), BARE])
    assert report.ok and report.created == len(demo_providers()) + 2, report.problems
    return snapshot(session)


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


def _excel(rows: list[list[str]]) -> bytes:
    """A CSV as Excel saves "CSV UTF-8": BOM, CRLF line ends, every cell quoted where needed."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


def _edit(rows: list[list[str]], row: int, column: str, value: str) -> str:
    index = rows[0].index(column)
    old = rows[row][index]
    rows[row][index] = value
    return old


def _field_changes(report):
    return [
        (plan.name, change.collection, change.number, change.field, change.old, change.new)
        for plan in report.plans
        for change in plan.changes
    ]


@pytest.mark.parametrize("headers", ["en", "zh"])
def test_an_export_reimported_unchanged_shows_no_change_for_every_provider(session, registry, headers):
    for data in (export_providers(session, "csv", headers=headers), export_providers(session, "json")):
        fmt = "json" if data.lstrip().startswith("{") else "csv"
        report = import_providers(session, data=data, format=fmt, dry_run=True)
        assert report.ok, report.problems
        assert report.unchanged == len(registry) and report.updated == 0 and report.new == 0
        assert {plan.action for plan in report.plans} == {"unchanged"}
        applied = import_providers(session, data=data, format=fmt)
        assert applied.ok and not applied.applied and applied.created == 0
    assert snapshot(session) == registry


def test_a_spreadsheet_edit_previews_exactly_two_changes_and_applies_them(session, registry):
    rows = _rows(export_providers(session, "csv", headers="zh"))
    header = rows[0]
    assert "统一社会信用代码" in header and "企业名称" in header
    name = header.index("企业名称")
    priced = next(i for i, row in enumerate(rows) if i and row[header.index("单价（元/卡·时）")])
    licensed = next(
        i
        for i, row in enumerate(rows)
        if i and row[name] != rows[priced][name] and row[header.index("许可证1·编号（原文）")]
    )
    old_price = _edit(rows, priced, "单价（元/卡·时）", "9.9")
    old_licence = _edit(rows, licensed, "许可证1·编号（原文）", "B1-20260001")
    priced_name = rows[priced][header.index("企业名称")]
    licensed_name = rows[licensed][header.index("企业名称")]
    data = _excel(rows)
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data

    preview = import_providers(session, data=data, format="csv", dry_run=True)
    assert preview.ok, preview.problems
    changes = _field_changes(preview)
    offer_number = sum(
        1 for row in rows[1:priced] if row[name] == priced_name and row[header.index("GPU 型号")]
    )
    assert sorted(changes, key=str) == sorted(
        [
            (priced_name, "offers", offer_number + 1, "price_gpu_hour_cny", float(old_price), 9.9),
            (licensed_name, "licences", 1, "number_raw", old_licence, "B1-20260001"),
        ],
        key=str,
    )
    assert preview.updated == 2 and preview.unchanged == len(registry) - 2 and preview.new == 0
    assert snapshot(session) == registry  # a preview writes nothing

    set_actor(session, user_id=None, name="表格导入")
    applied = import_providers(session, data=data, format="csv", expected=preview.expected)
    assert applied.ok and applied.applied, applied.problems
    after = {p["legal_name"]: p for p in snapshot(session)}
    assert [o["price_gpu_hour_cny"] for o in after[priced_name]["offers"]][offer_number] == 9.9
    assert after[licensed_name]["licences"][0]["number_raw"] == "B1-20260001"
    entries = session.exec(select(AuditEntry).where(AuditEntry.actor_name == "表格导入")).all()
    changed = sorted((e.entity, tuple(sorted(e.changes))) for e in entries if e.action == "update")
    assert ("offer", ("price_gpu_hour_cny",)) in changed
    assert any(entity == "licence" and "number_raw" in fields for entity, fields in changed)
    assert {e.action for e in entries} == {"update"}  # nothing created or deleted by the re-import
    again = import_providers(session, data=export_providers(session, "csv", headers="zh"), format="csv")
    assert again.unchanged == len(registry) and not again.applied, _field_changes(again)


def test_apply_is_refused_when_a_provider_changed_after_the_preview(session, registry):
    document = json.loads(export_providers(session, "json"))
    document["providers"][0]["website"] = "https://changed.example"
    document["providers"].append({"legal_name": "示例新供应商有限公司"})
    data = json.dumps(document, ensure_ascii=False)
    preview = import_providers(session, data=data, format="json", dry_run=True)
    assert preview.ok and preview.updated == 1 and preview.new == 1
    target = document["providers"][-2 if len(document["providers"]) > 1 else 0]
    first = document["providers"][0]
    set_actor(session, user_id=None, name="另一位分析员")
    stored = get_provider(session, provider_id=first["id"])
    update_provider(session, provider_id=stored.id, patch={"version": stored.version, "notes": "他人刚改"})
    before = snapshot(session)
    audited = len(session.exec(select(AuditEntry)).all())
    refused = import_providers(session, data=data, format="json", expected=preview.expected)
    assert not refused.ok and refused.conflict and not refused.applied
    assert [(p.row, p.field) for p in refused.problems] == [(1, "")]
    assert (
        "另一位分析员" in refused.problems[0].message and first["legal_name"] in refused.problems[0].message
    )
    assert snapshot(session) == before and len(session.exec(select(AuditEntry)).all()) == audited
    assert target  # the file is unchanged: a fresh preview then apply goes through
    fresh = import_providers(session, data=data, format="json", dry_run=True)
    assert [c.field for plan in fresh.plans for c in plan.changes] == ["website", "notes"]
    assert import_providers(session, data=data, format="json", expected=fresh.expected).applied


def test_a_provider_registered_after_the_preview_refuses_the_apply(session):
    data = json.dumps([{"legal_name": "示例迟到有限公司", "uscc": "91310115EXAMPL020C"}], ensure_ascii=False)
    preview = import_providers(session, data=data, format="json", dry_run=True)
    assert preview.new == 1
    create_provider(session, data={"legal_name": "示例抢先有限公司", "uscc": "91310115EXAMPL020C"})
    refused = import_providers(session, data=data, format="json", expected=preview.expected)
    assert refused.conflict and "已由他人登记" in refused.problems[0].message
    assert [p.legal_name for p in session.exec(select(Provider)).all()] == ["示例抢先有限公司"]


def test_rows_match_by_credit_code_then_by_id_and_columns_left_out_keep_their_values(session):
    coded = create_provider(session, data=awkward())
    bare = create_provider(
        session, data={"legal_name": "示例无代码有限公司", "website": "https://bare.example"}
    )
    text = _excel(
        [
            ["id", "legal_name", "uscc", "registered_province"],
            ["999", coded.legal_name, coded.uscc.lower(), "上海"],  # the credit code wins over a foreign id
            [str(bare.id), "示例无代码（改名）有限公司", "", ""],
            ["", "示例全新有限公司", "", "广东"],
        ]
    )
    report = import_providers(session, data=text, format="csv", dry_run=True)
    assert report.ok, report.problems
    assert [(p.action, p.provider_id) for p in report.plans] == [
        ("update", coded.id),
        ("update", bare.id),
        ("create", None),
    ]
    assert _field_changes(report)[0][3:] == ("registered_province", "北京", "上海")
    assert [c.field for c in report.plans[1].changes] == ["legal_name"]  # website kept: no such column
    assert import_providers(session, data=text, format="csv", expected=report.expected).applied
    stored = get_provider(session, provider_id=coded.id)
    assert len(stored.offers) == 4 and len(stored.licences) == 3  # no offer or licence columns: kept
    assert get_provider(session, provider_id=bare.id).website == "https://bare.example"


def test_two_rows_for_one_stored_provider_and_bad_ids_are_refused_by_row(session):
    stored = create_provider(session, data={"legal_name": "示例重复有限公司"})
    text = f"id,legal_name\n{stored.id},示例甲有限公司\n{stored.id},示例乙有限公司\nabc,示例丙有限公司\n"
    report = import_providers(session, data=text, format="csv", dry_run=True)
    assert [(p.row, p.field) for p in report.problems] == [(3, "id"), (4, "id")]
    assert "第 2 行" in report.problems[0].message and "正整数" in report.problems[1].message


def test_removed_and_added_nested_records_are_listed(session):
    stored = create_provider(session, data=awkward())
    data = json.loads(export_providers(session, "json"))["providers"][0]
    data["offers"] = [*data["offers"][:2], {"gpu_model": "H20", "gpus_per_node": 8}, *data["offers"][3:]]
    del data["licences"][2]
    report = import_provider_dicts(session, providers=[data], dry_run=True)
    kinds = [(c.kind, c.collection, c.number, c.field) for c in report.plans[0].changes]
    assert ("removed", "licences", 3, "") in kinds
    assert ("changed", "offers", 3, "gpu_model") in kinds
    applied = import_provider_dicts(session, providers=[data])
    assert applied.applied
    after = get_provider(session, provider_id=stored.id)
    assert [o.gpu_model for o in after.offers] == ["H800", "RTX 4090", "H20", "A800"]
    assert len(after.licences) == 2


def test_chinese_and_alias_headers_are_read(session):
    text = (
        "公司名称,credit_code,注册省份,套餐名称,GPU 型号,每节点 GPU 数\n"
        "示例中文列有限公司,,广东,H800 x8,H800,8\n"
    )
    report = import_providers(session, data=text.encode("gb18030"), format="csv")
    assert report.ok and report.applied, report.problems
    [provider] = snapshot(session)
    assert provider["registered_province"] == "广东" and provider["offers"][0]["gpu_model"] == "H800"
    bad = import_providers(session, data="公司名称,颜色\n示例有限公司,红\n", format="csv")
    assert [(p.row, p.field) for p in bad.problems] == [(1, "颜色")]
    refused = import_providers(session, data="公司名称,注册省份\n示例有限公司,火星\n", format="csv")
    assert [(p.row, p.field) for p in refused.problems] == [(2, "注册省份")]


def test_an_edit_in_one_of_several_rows_of_a_provider_is_taken_and_two_edits_are_refused(session):
    stored = create_provider(session, data=awkward())
    rows = _rows(export_providers(session, "csv"))
    header = rows[0]
    jia = [i for i, row in enumerate(rows) if i and row[header.index("datacenter_name")] == "甲机房"]
    assert len(jia) >= 2 and len(rows) > 3
    _edit(rows, jia[-1], "datacenter_city", "通州")
    _edit(rows, 2, "website", "https://new.example")  # one row of several
    report = import_providers(session, data=_excel(rows), format="csv", dry_run=True)
    assert report.ok, report.problems
    assert [(c.collection, c.field, c.new) for c in report.plans[0].changes] == [
        ("", "website", "https://new.example"),
        ("datacenters", "city", "通州"),
    ]
    _edit(rows, 3, "website", "https://other.example")  # two different edits: which one is meant?
    refused = import_providers(session, data=_excel(rows), format="csv", dry_run=True)
    assert {(p.row, p.field) for p in refused.problems} == {(3, "website"), (4, "website")}
    assert get_provider(session, provider_id=stored.id).website == "https://awkward.example"
