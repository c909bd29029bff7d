"""The credit record on pages and the API: the form with an upload, the summary beside the legal identity."""

from __future__ import annotations

import io
import json
import re

from sqlmodel import select

from app.models.credit import CreditRecord
from tests.credentials.credit.conftest import USCC, gsxt_values, png_bytes


def _post(client, provider_id, data, screenshot=None, name="gsxt.png"):
    form = {**data, "screenshot": (io.BytesIO(png_bytes() if screenshot is None else screenshot), name)}
    return client.post(
        f"/providers/{provider_id}/credit/manual", data=form, content_type="multipart/form-data"
    )


def test_the_form_records_and_the_tab_shows_capital_founding_date_and_status(app, login, session, provider):
    analyst = login("analyst", "liwei")
    tab = analyst.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    assert 'id="credit"' in tab and 'data-status="unverified"' in tab and "尚无企业信用记录" in tab
    form = analyst.get(f"/providers/{provider.id}/credit/manual").get_data(as_text=True)
    assert 'enctype="multipart/form-data"' in form and 'name="screenshot"' in form
    assert f'value="{USCC}"' in form and "UTC+8" in form and form.count('name="enforcement_amount"') == 3

    data = {
        **gsxt_values(),
        "enforcement_amount": ["125000", ""],
        "enforcement_date": ["2026-05-01", ""],
        "enforcement_court": ["海淀法院（2026）京0108执1234号", ""],
    }
    response = _post(analyst, provider.id, data)
    assert response.status_code == 302, response.get_data(as_text=True)[:800]
    assert response.headers["Location"].endswith(f"/providers/{provider.id}/credentials#credit")
    record = session.exec(select(CreditRecord)).one()
    assert record.recorded_by_name == "liwei" and len(record.enforcements) == 1

    tab = analyst.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    credit = re.search(r'<section class="card shadow-sm mb-3" id="credit">(.*?)</section>', tab, re.S).group(
        1
    )
    assert 'data-status="verified_by_hand"' in credit and "人工核实" in credit
    assert "5000 万人民币" in re.search(r'id="credit-capital">(.*?)</dd>', credit).group(1)
    assert "2015-03-18" in re.search(r'id="credit-founded">(.*?)</dd>', credit).group(1)
    assert "存续" in credit and "被执行记录 1 条" in credit and "liwei" in credit
    assert f'href="/evidence/{record.evidence_id}"' in credit
    assert tab.index('id="provider-name"') < tab.index('id="credit"') < tab.index('id="verdict"')
    detail = analyst.get(f"/evidence/{record.evidence_id}").get_data(as_text=True)
    assert 'id="evidence-image"' in detail and "企业信用人工查询截图" in detail

    analyst.get("/lang/en")
    tab = analyst.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    assert "verified by hand" in tab and "Registered capital" in tab and "注册资本" not in tab
    form = analyst.get(f"/providers/{provider.id}/credit/manual").get_data(as_text=True)
    assert "Registration status" in form and "登记状态" not in form


def test_bad_input_comes_back_as_form_errors_naming_the_field(app, login, session, provider):
    analyst = login("analyst")
    data = {
        **gsxt_values(uscc="91310115EXAMPL020C", registered_capital_wan="lots"),
        "enforcement_amount": ["-5"],
        "enforcement_date": ["2026-05-01"],
        "enforcement_court": ["海淀法院"],
    }
    response = _post(analyst, provider.id, data, screenshot=b"plain text", name="shot.png")
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert 'id="credit-errors"' in page and 'id="uscc-error"' in page and USCC in page
    assert 'id="registered_capital_wan-error"' in page and 'id="screenshot-error"' in page
    assert 'id="enforcements-0-amount_cny-error"' in page and 'value="-5"' in page
    assert session.exec(select(CreditRecord)).all() == []


def test_viewers_see_the_summary_but_cannot_record(app, login, provider):
    viewer = login("viewer")
    tab = viewer.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    assert 'id="credit"' in tab and 'id="credit-record-link"' not in tab
    assert viewer.get(f"/providers/{provider.id}/credit/manual").status_code == 403
    assert _post(viewer, provider.id, gsxt_values()).status_code == 403


def test_api_records_and_lists_credit_with_the_usual_errors(app, session, provider, token_for):
    client = app.test_client()
    headers = token_for("analyst")
    url = f"/api/v1/providers/{provider.id}/credit"
    empty = client.get(url, headers=headers).get_json()
    assert empty == {"verification": {**empty["verification"], "status": "unverified"}, "items": []}

    rows = [{"amount_cny": "88000", "filed_on": "2026-03-03", "court": "朝阳法院（2026）京0105执7号"}]
    form = {
        **gsxt_values(source="zxgk", registration_status=""),
        "enforcements": json.dumps(rows, ensure_ascii=False),
        "screenshot": (io.BytesIO(png_bytes()), "zxgk.png"),
    }
    response = client.post(url + "/manual", data=form, headers=headers, content_type="multipart/form-data")
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    assert body["source"] == "zxgk" and body["recorded_by"] == "api-analyst"
    assert body["enforcements"] == [{**rows[0], "amount_cny": "88000.00"}]
    assert response.headers["Location"].endswith(url)
    listed = client.get(url, headers=headers).get_json()
    assert [item["id"] for item in listed["items"]] == [body["id"]]
    assert listed["verification"]["status"] == "verified_by_hand"
    assert listed["verification"]["evidence_id"] == body["evidence_id"]

    bad = {**gsxt_values(), "enforcements": "[{", "screenshot": (io.BytesIO(png_bytes()), "s.png")}
    refused = client.post(url + "/manual", data=bad, headers=headers, content_type="multipart/form-data")
    assert refused.status_code == 422 and refused.get_json()["errors"][0]["field"] == "enforcements"
    wrong = {**gsxt_values(uscc="91310115EXAMPL020C"), "screenshot": (io.BytesIO(b"hi"), "s.png")}
    refused = client.post(url + "/manual", data=wrong, headers=headers, content_type="multipart/form-data")
    assert refused.status_code == 422
    assert {error["field"] for error in refused.get_json()["errors"]} == {"uscc", "screenshot"}
    as_json = client.post(url + "/manual", json=gsxt_values(), headers=headers)
    assert as_json.status_code == 415 and as_json.get_json()["errors"][0]["field"] == "screenshot"
    viewer = token_for("viewer")
    assert client.post(url + "/manual", data={}, headers=viewer).status_code == 403
    assert client.get("/api/v1/providers/999999/credit", headers=headers).status_code == 404
