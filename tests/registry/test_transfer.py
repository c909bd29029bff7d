"""Import/export: exact round trips, all-or-nothing imports, every problem with row and field."""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlmodel import select

from app.core.audit import set_actor
from app.core.errors import InvalidInput
from app.models import AuditEntry
from app.registry.demo import demo_providers
from app.registry.providers import create_provider
from app.registry.transfer.columns import csv_header
from app.registry.transfer.export import export_providers
from app.registry.transfer.formats import FORMAT_NAME, format_for_filename
from app.registry.transfer.importing import import_provider_dicts, import_providers
from tests.registry.conftest import BARE, awkward, empty_database, snapshot


def _load(session, providers):
    report = import_provider_dicts(session, providers=providers)
    assert report.ok, report.problems
    return report


def _problems(report):
    return {(p.row, p.field) for p in report.problems}


def _csv_rows(text):
    return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


def _csv_text(header, rows):
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


@pytest.fixture
def registry(session):
    """The demo providers plus two awkward ones, stored through the service."""
    _load(session, [*demo_providers(), awkward(), BARE])
    return snapshot(session)


# ---------------------------------------------------------------- export


def test_json_export_document(session, registry):
    document = json.loads(export_providers(session, "json"))
    assert document["format"] == FORMAT_NAME
    assert document["version"] == 1
    assert document["exported_at"]
    assert len(document["providers"]) == len(registry)
    first = document["providers"][0]
    assert first["id"] and "version" not in first  # the id lets a re-import update the provider
    assert all("id" not in offer and "datacenter_id" not in offer for offer in first["offers"])


def test_csv_export_has_one_row_per_offer_and_guards_formulas(session, registry):
    text = export_providers(session, "csv")
    assert text.startswith("\ufeff")
    rows = _csv_rows(text)
    by_name = {}
    for row in rows:
        by_name.setdefault(row["legal_name"], []).append(row)
    data = awkward()
    mine = by_name[data["legal_name"]]
    # 3 datacenter rows first (their stored order differs from first use by offers), then 4 offers
    assert len(mine) == 3 + 4
    assert [r["gpu_model"] for r in mine if r["gpu_model"]] == ["H800", "RTX 4090", "L40S", "A800"]
    assert mine[0]["short_name"] == "'=示例"
    assert mine[3]["offer_notes"].startswith("'=HYPERLINK")
    assert mine[0]["licence_1_business_items"] == "B11、B14、B25"
    assert mine[0]["licence_3_number_raw"] == "粤ICP备2022099901号"
    assert mine[0]["discloses_network_topology"] == "false"
    assert mine[0]["discloses_storage_config"] == ""
    assert len(by_name[BARE["legal_name"]]) == 1
    # every demo offer has a row
    offers = sum(len(p["offers"]) for p in registry)
    assert sum(1 for row in rows if row["gpu_model"]) == offers


def test_unknown_export_format_is_refused(session):
    with pytest.raises(InvalidInput) as info:
        export_providers(session, "xml")
    assert info.value.errors[0].field == "format"


# ---------------------------------------------------------------- round trips


def test_json_round_trip_into_empty_database_reproduces_every_record(app, session, registry):
    exported = export_providers(session, "json")
    empty_database(app, session)
    assert snapshot(session) == []
    report = import_providers(session, data=exported.encode("utf-8"), format="json")
    assert report.ok, report.problems
    assert report.created == len(registry)
    assert snapshot(session) == registry


def test_csv_round_trip_into_empty_database_reproduces_every_record(app, session, registry):
    exported = export_providers(session, "csv")
    empty_database(app, session)
    report = import_providers(session, data=exported.encode("utf-8"), format="csv")
    assert report.ok, report.problems
    assert report.created == len(registry)
    assert snapshot(session) == registry


def _without_ids(text):
    return [row[1:] for row in csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))]


def test_second_export_is_identical_but_for_the_new_ids(app, session, registry):
    first = export_providers(session, "csv")
    empty_database(app, session)
    import_providers(session, data=first, format="csv")
    second = export_providers(session, "csv")
    assert _without_ids(second) == _without_ids(first)
    assert [row[0] for row in _without_ids(first)] != []


def test_api_shaped_json_is_accepted(app, session):
    provider = create_provider(session, data=awkward())
    public = {
        "items": [
            {
                "id": provider.id,
                "version": provider.version,
                "created_at": "2024-01-01T00:00:00",
                "updated_at": "2024-01-01T00:00:00",
                **json.loads(json.dumps(awkward(), ensure_ascii=False)),
            }
        ]
    }
    dc_ids = {dc.name: dc.id for dc in provider.datacenters}
    for item in public["items"]:
        for dc in item["datacenters"]:
            dc["id"] = dc_ids[dc["name"]]
        for offer in item["offers"]:
            name = offer.pop("datacenter_name", None)
            offer["datacenter_id"] = dc_ids.get(name)
            offer["id"] = 1
    before = snapshot(session)
    empty_database(app, session)
    report = import_providers(session, data=json.dumps(public, ensure_ascii=False), format="json")
    assert report.ok, report.problems
    assert snapshot(session) == before


# ---------------------------------------------------------------- all or nothing


def test_invalid_json_rows_import_nothing_and_every_problem_is_listed(session):
    bad_offer = awkward(uscc=None)
    bad_offer["offers"][0]["gpus_per_node"] = 0
    bad_offer["licences"][0]["business_items"] = ["B11", "B99"]
    no_name = {
        "legal_name": "",
        "offers": [{"gpu_model": "H100", "gpus_per_node": 8, "datacenter_name": "无此机房"}],
    }
    bad_types = {"legal_name": "示例类型错误有限公司", "registered_capital_cny": "很多", "status": "maybe"}
    document = {"format": FORMAT_NAME, "version": 1, "providers": [BARE, bad_offer, no_name, bad_types, "x"]}
    report = import_providers(session, data=json.dumps(document, ensure_ascii=False), format="json")
    assert not report.ok
    assert report.created == 0
    assert report.providers == 5
    assert _problems(report) >= {
        (2, "offers[0].gpus_per_node"),
        (2, "licences[0].business_items"),
        (3, "legal_name"),
        (3, "offers[0].datacenter_name"),
        (4, "registered_capital_cny"),
        (4, "status"),
        (5, ""),
    }
    assert 1 not in {p.row for p in report.problems}
    message = next(p for p in report.problems if p.field == "offers[0].gpus_per_node")
    assert str(message).startswith("第 2 行, offers[0].gpus_per_node: ")
    assert snapshot(session) == []


def test_failure_after_valid_rows_leaves_nothing_behind(session):
    create_provider(session, data={"legal_name": "示例已存在有限公司", "uscc": "91310115EXAMPL020C"})
    before = snapshot(session)
    audited = len(session.exec(select(AuditEntry)).all())
    providers = [
        awkward(),
        BARE,
        {"legal_name": "示例冲突有限公司", "uscc": "91310115EXAMPL020C"},
        {"legal_name": "示例后面的有限公司", "offers": [{"gpu_model": "A100", "gpus_per_node": 99}]},
    ]
    report = import_provider_dicts(session, providers=providers)
    assert _problems(report) == {(4, "offers[0].gpus_per_node")}
    assert [plan.action for plan in report.plans] == ["create", "create", "update", "create"]
    assert report.created == 0 and not report.applied
    assert snapshot(session) == before
    assert len(session.exec(select(AuditEntry)).all()) == audited


def test_duplicate_uscc_in_file_is_a_problem_of_the_later_row(session):
    providers = [
        {"legal_name": "示例甲有限公司", "uscc": "91110108EXAMPL0120"},
        {"legal_name": "示例乙有限公司"},
        {"legal_name": "示例丙有限公司", "uscc": " 91110108exampl0120 ", "offers": [{"gpu_model": ""}]},
    ]
    report = import_provider_dicts(session, providers=providers)
    assert (3, "uscc") in _problems(report)
    duplicate = next(p for p in report.problems if p.field == "uscc")
    assert "第 1 行" in duplicate.message
    # the rest of that row is still checked, without a second uscc complaint
    assert {p.field for p in report.problems if p.row == 3} >= {
        "offers[0].gpu_model",
        "offers[0].gpus_per_node",
    }
    assert [p.field for p in report.problems].count("uscc") == 1
    assert snapshot(session) == []


def test_dry_run_validates_and_writes_nothing(session):
    set_actor(session, user_id=None, name="tester")
    text = json.dumps({"providers": [awkward(), BARE]}, ensure_ascii=False)
    report = import_providers(session, data=text, format="json", dry_run=True)
    assert report.ok and report.dry_run
    assert report.providers == 2 and report.created == 0
    assert report.names == [awkward()["legal_name"], BARE["legal_name"]]
    assert snapshot(session) == []
    assert session.exec(select(AuditEntry)).all() == []
    bad = import_providers(session, data=json.dumps([{"legal_name": "x"}]), format="json", dry_run=True)
    assert _problems(bad) == {(1, "legal_name")}


def test_import_is_audited_with_the_sessions_actor(session):
    set_actor(session, user_id=None, name="importer")
    import_provider_dicts(session, providers=[awkward()])
    entries = session.exec(select(AuditEntry)).all()
    assert entries and {entry.actor_name for entry in entries} == {"importer"}
    assert {entry.entity for entry in entries} >= {"provider", "licence", "offer", "datacenter"}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("{not json", ""),
        ('{"format": "something-else", "providers": []}', "format"),
        ('{"format": "gpuvet-providers", "version": 99, "providers": []}', "version"),
        ('{"providers": {"a": 1}}', "providers"),
        ("[]", "providers"),
    ],
)
def test_unreadable_json_files_are_one_file_problem(session, text, field):
    report = import_providers(session, data=text, format="json")
    assert [(p.row, p.field) for p in report.problems] == [(0, field)]


def test_unknown_import_format_is_refused(session):
    with pytest.raises(InvalidInput):
        import_providers(session, data="", format="xlsx")


def test_format_from_filename():
    assert format_for_filename("a.JSON") == "json"
    assert format_for_filename("dir/x.csv") == "csv"
    assert format_for_filename("x.xlsx") is None
    assert format_for_filename("noext") is None
    assert format_for_filename(None) is None


# ---------------------------------------------------------------- CSV specifics

CSV_HEADER = [
    "legal_name",
    "uscc",
    "registered_province",
    "discloses_network_topology",
    "licence_1_number_raw",
    "licence_1_business_items",
    "licence_1_expires_on",
    "datacenter_name",
    "datacenter_province",
    "datacenter_city",
    "gpu_model",
    "gpus_per_node",
    "bandwidth_type",
]


def test_csv_written_by_hand_groups_rows_and_accepts_loose_forms(session):
    rows = [
        [
            "示例手写有限公司",
            "91110108EXAMPL0120",
            "京",
            "是",
            "京B1-20219901",
            "B11，B14",
            "2027/1/5",
            "甲",
            "北京",
            "北京",
            "H800",
            "8",
            "dedicated",
        ],
        ["", "", "", "", "", "", "", "甲", "", "", "A800", "8", "shared"],
        ["示例手写有限公司", "", "", "", "", "", "", "乙", "河北", "廊坊", "H20", "8", ""],
        ["示例第二家有限公司", "", "粤", "否", "", "", "", "", "", "", "", "", ""],
        ["", "", "", "", "", "", "", "", "", "", "", "", ""],
    ]
    report = import_providers(session, data=_csv_text(CSV_HEADER, rows), format="csv")
    assert report.ok, report.problems
    assert report.created == 2
    first, second = sorted(snapshot(session), key=lambda p: p["legal_name"] != "示例手写有限公司")
    assert first["discloses_network_topology"] is True
    assert first["registered_province"] == "北京"
    assert first["licences"][0]["business_items"] == ["B11", "B14"]
    assert first["licences"][0]["expires_on"] == "2027-01-05"
    assert [dc["name"] for dc in first["datacenters"]] == ["甲", "乙"]
    assert [(o["gpu_model"], o["datacenter_name"]) for o in first["offers"]] == [
        ("H800", "甲"),
        ("A800", "甲"),
        ("H20", "乙"),
    ]
    assert second["discloses_network_topology"] is False and second["offers"] == []


def test_invalid_csv_rows_import_nothing_and_name_row_and_column(session):
    rows = [
        [
            "示例甲有限公司",
            "91110108EXAMPL0120",
            "北京",
            "",
            "",
            "",
            "",
            "甲",
            "北京",
            "北京",
            "H800",
            "8",
            "",
        ],
        ["示例甲有限公司", "", "上海", "", "", "", "", "甲", "上海", "", "H800", "0", "fast"],
        ["示例乙有限公司", "", "火星", "", "京B1-20219901", "B99", "2027-13-01", "", "", "", "", "", ""],
        ["示例丙有限公司", "91110108EXAMPL0120", "", "", "", "", "", "", "河北", "", "", "", ""],
    ]
    report = import_providers(session, data=_csv_text(CSV_HEADER, rows), format="csv")
    assert not report.ok and report.created == 0
    assert _problems(report) >= {
        (3, "registered_province"),  # contradicts row 2
        (3, "datacenter_province"),  # datacenter 甲 was 北京 on row 2
        (3, "gpus_per_node"),
        (3, "bandwidth_type"),
        (4, "registered_province"),
        (4, "licence_1_business_items"),
        (4, "licence_1_expires_on"),
        (5, "uscc"),  # same code as row 2, not adjacent
        (5, "datacenter_name"),  # province without a datacenter name
    }
    assert 2 not in {p.row for p in report.problems}
    assert snapshot(session) == []


def test_csv_header_problems(session):
    text = "legal_name,colour,legal_name\n示例有限公司,red,x\n"
    report = import_providers(session, data=text, format="csv")
    assert _problems(report) == {(1, "colour"), (1, "legal_name")}
    report = import_providers(session, data="gpu_model\nH800\n", format="csv")
    assert (1, "legal_name") in _problems(report)
    report = import_providers(session, data="", format="csv")
    assert _problems(report) == {(0, "")}


def test_csv_in_gbk_and_with_bom(session):
    rows = [["示例编码有限公司", "", "粤", "", "", "", "", "深圳机房", "广东", "深圳", "RTX 4090", "8", ""]]
    text = _csv_text(CSV_HEADER, rows)
    gbk = import_providers(session, data=text.encode("gbk"), format="csv", dry_run=True)
    assert gbk.ok, gbk.problems
    assert gbk.names == ["示例编码有限公司"]
    report = import_providers(session, data=b"\xef\xbb\xbf" + text.encode("utf-8"), format="csv")
    assert report.ok, report.problems
    stored = snapshot(session)
    assert stored[0]["legal_name"] == "示例编码有限公司"
    assert stored[0]["datacenters"] == [{"name": "深圳机房", "province": "广东", "city": "深圳"}]


def test_csv_semicolon_delimiter_and_undecodable_bytes(session):
    report = import_providers(
        session, data="legal_name;gpu_model;gpus_per_node\n示例分号有限公司;H100;8\n", format="csv"
    )
    assert report.ok, report.problems
    bad = import_providers(session, data=b"\xff\xfe\x00legal_name\x81\x30", format="csv")
    assert [(p.row, p.field) for p in bad.problems] == [(0, "encoding")]


def test_csv_header_lists_every_field():
    header = csv_header({"licences": 2})
    assert "licence_2_b11_includes_resource_collab" in header
    assert "filing_1_entity_nature" in header and "filing_2_kind" not in header
    assert {"offer_name", "offer_notes", "offer_kind", "nominal_iops", "datacenter_city"} <= set(header)
    assert len(header) == len(set(header))


def test_import_keeps_the_order_of_offers_across_datacenters(session):
    # Offers alternate between datacenters listed in another order; ids must follow the file.
    import_provider_dicts(session, providers=[awkward()])
    stored = snapshot(session)[0]
    assert [(o["gpu_model"], o["datacenter_name"]) for o in stored["offers"]] == [
        (o["gpu_model"], o.get("datacenter_name")) for o in awkward()["offers"]
    ]


def _audit_trail(session) -> list[tuple[str, int, dict]]:
    """(entity, entity id, changes) of every audit entry, in the order written."""
    entries = session.exec(select(AuditEntry).order_by(AuditEntry.id)).all()
    return sorted((entry.entity, entry.entity_id, entry.changes) for entry in entries)


def test_bulk_import_writes_the_same_records_and_audit_trail_as_creating_one_by_one(app, session):
    create_provider(session, data=awkward())
    one_by_one, trail = snapshot(session), _audit_trail(session)
    empty_database(app, session)
    import_provider_dicts(session, providers=[awkward()])
    assert snapshot(session) == one_by_one
    assert _audit_trail(session) == trail
