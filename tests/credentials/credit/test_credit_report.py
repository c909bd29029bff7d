"""The provider report's credit block (1.7): each system's latest record, the verification, both languages."""

from __future__ import annotations

from datetime import date

from app.credentials import credit
from app.credentials.report_inputs import provider_inputs
from app.reports.render import render_html
from tests.credentials.credit.conftest import gsxt_values, png_bytes
from tests.reports.conftest import make_meta


def _html(session, provider, language="zh"):
    inputs = provider_inputs(session, provider_id=provider.id, today=date(2026, 12, 4))
    meta = {**make_meta(language=language), "earlier_export": None}
    return inputs, render_html("provider", inputs, meta, language, screen=False)


def test_without_a_record_the_report_says_credit_was_not_looked_up(session, provider):
    inputs, html = _html(session, provider)
    assert inputs["sources"]["credit"] == {"status": "empty", "data": None}
    assert 'id="credit"' in html and "尚无企业信用记录" in html and 'id="credit-table"' not in html


def test_the_report_shows_the_latest_record_of_each_system(session, provider, analyst):
    for values, rows in (
        (
            gsxt_values(
                registration_status="吊销",
                abnormal_listed="yes",
                abnormal_since="2025-07-02",
                abnormal_reason="通过登记的住所无法联系",
            ),
            [],
        ),
        (
            gsxt_values(source="zxgk", registration_status=""),
            [{"amount_cny": "88000", "filed_on": "2026-03-03", "court": "朝阳法院（2026）京0105执7号"}],
        ),
    ):
        credit.record_manual(
            session,
            provider_id=provider.id,
            values=values,
            enforcements=rows,
            screenshot=png_bytes(),
            user=analyst,
        )
    inputs, html = _html(session, provider)
    data = inputs["sources"]["credit"]["data"]
    assert [record["source"] for record in data["records"]] == ["gsxt", "zxgk"]
    assert data["verification"]["status"] in ("verified_by_hand", "expired")
    table = html[html.index('id="credit-table"') :]
    assert "国家企业信用信息公示系统" in table and "吊销" in table and "5000 万CNY" in table
    assert "自 2025-07-02 列入：通过登记的住所无法联系" in table
    assert "执行标的 88000.00 元，立案 2026-03-03，朝阳法院（2026）京0105执7号" in table
    _inputs, english = _html(session, provider, "en")
    table = english[english.index('id="credit-table"') :]
    assert "Registration status" in table and "listed since 2025-07-02" in table
    assert "CNY 88000.00, filed 2026-03-03" in table and "5000 × 10,000 CNY" in table
