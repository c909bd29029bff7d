"""Unknown is not failure, nearest misses instead of dead ends, checklist ticks from runs, case freshness."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.accounts.users import get_user
from app.cases import cases
from app.credentials import checks
from app.models import Licence
from app.models.checks import CheckRun
from app.trials import bench_uploads
from tests.cases import test_measured_offers as measured

offers = measured.offers  # the fixture: two offers claiming 1 Gbps intranet, local NVMe, 60,000 a month


@pytest.fixture
def analyst(session: Session, make_user):
    """An analyst account (the uploader)."""
    return get_user(session, username=make_user("证据分析", "analyst"))


def answers(**sections):
    """The small-model case (0.1 B parameters: well under 1 Gbps of intranet needed), sections replaced."""
    data = measured.small_model_answers(0.1).model_dump(mode="json", exclude_none=True)
    data.update(sections)
    return data


def new_case(session: Session, data) -> int:
    return cases.create_case(session, answers=data, owner=cases.Actor(None, "test")).id  # type: ignore[return-value]


def check_run(provider_id: int) -> CheckRun:
    """A stored credential check run of the provider (its findings do not matter here)."""
    return CheckRun(provider_id=provider_id, verdict="pass", checked_on=date.today(), rules_version="test")


def upload_iperf3(session: Session, offer_id: int, mbit_s: float, user) -> int:
    """An analyst's hand-run intranet iperf3 result, stored as an uploaded run."""
    run = bench_uploads.upload_output(
        session,
        offer_id=offer_id,
        tool="iperf3",
        output=measured.iperf3_output(mbit_s),
        path="intranet",
        user=user,
    )
    return run.id  # type: ignore[return-value]


def test_an_unrecorded_iso27001_keeps_the_offer_ranked_and_to_confirm(session, offers, token_for, login, app):
    case_id = new_case(session, answers(compliance={"iso27001": True}))
    response = app.test_client().get(f"/api/v1/cases/{case_id}", headers=token_for("viewer"))
    advice = response.get_json()["advice"]
    ranked = [offer for offer in advice["offers"] if not offer["excluded"]]
    assert len(ranked) == 2 and advice["summary"]["to_confirm"] == 2
    first = ranked[0]
    assert first["to_confirm"] and first["confirm"][0]["key"] == "iso27001"
    assert (
        first["confirm"][0]["checklist_key"] == "certifications"
        and "ISO 27001" in first["confirm"][0]["ask_zh"]
    )
    item = next(entry for entry in advice["checklist"] if entry["key"] == "certifications")
    note = next(ev for ev in item["evidence"] if ev["kind"] == "to_confirm")
    assert note["count"] == 2 and "ISO 27001 certificate" in note["message_en"]
    html = login("analyst").get(f"/cases/{case_id}").get_data(as_text=True)
    row = html.split(f'id="offer-{offers[0].id}"')[1].split("</details>")[0]
    assert "to-confirm" in row and "待确认" in row and 'class="mb-1 ps-3 confirm-asks"' in row


def test_no_eligible_offer_shows_the_nearest_misses_on_the_page_api_and_cli(
    session, offers, token_for, login, app
):
    demanding = answers(budget={"monthly_cny": 100000})  # 2 nodes x 60,000 = 120,000 a month
    case_id = new_case(session, demanding)
    html = login("analyst").get(f"/cases/{case_id}").get_data(as_text=True)
    section = html.split('id="nearest-misses"')[1]
    assert "budget ¥120,000/month" not in section  # the page is in Chinese by default
    assert "预算：每月 ¥120,000，预算 ¥100,000" in section
    assert f'href="/cases/{case_id}/steps/budget"' in section and "可让 2 个套餐入选" in section
    response = app.test_client().get(f"/api/v1/cases/{case_id}", headers=token_for("viewer"))
    advice = response.get_json()["advice"]
    misses = advice["nearest_misses"]
    assert advice["summary"]["eligible"] == 0 and misses["relaxations"][0]["brings_in"] == 2
    miss = misses["offers"][0]["misses"][0]
    assert (
        miss["gap_en"] == "budget ¥120,000/month vs ¥100,000"
        and miss["step_url"] == f"/cases/{case_id}/steps/budget"
    )
    path = Path(app.instance_path) / "demanding.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(demanding), encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["advise", str(path)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)["nearest_misses"]["offers"][0]["misses"][0]
    assert printed["step"] == "budget" and printed["brings_in"] == 2 and printed["step_url"] is None


def test_the_checklist_ticks_itself_from_an_uploaded_run_with_its_link(session, offers, analyst, login):
    run_id = upload_iperf3(session, offers[0].id, 2000, analyst)  # 2 Gbps, above the ~0.53 needed
    case_id = new_case(session, answers())
    client = login("viewer")
    html = client.get(f"/cases/{case_id}/checklist?provider_id={offers[0].provider_id}").get_data(
        as_text=True
    )
    item = html.split('id="item-intranet_iperf3"')[1].split('class="card shadow-sm checklist-item"')[0]
    assert "status-passed" in item
    assert f'href="/bench-runs/{run_id}"' in item and f"测试 #{run_id}" in item
    assert "内网带宽 2 Gbps" in item and 'data-ok="True"' in item and "intranet_gbps" not in item
    gpu = html.split('id="item-gpu_inventory"')[1].split('class="card shadow-sm checklist-item"')[0]
    assert "status-passed" not in gpu  # nothing measured about the GPUs: the item stays open


def test_a_case_saved_before_a_run_landed_says_the_evidence_changed_until_saved_again(
    session, offers, analyst, login
):
    case_id = new_case(session, answers())
    client = login("analyst")
    assert 'id="evidence-changed"' not in client.get(f"/cases/{case_id}").get_data(as_text=True)
    upload_iperf3(session, offers[0].id, 500, analyst)
    session.add(check_run(offers[0].provider_id))
    session.commit()
    html = client.get(f"/cases/{case_id}").get_data(as_text=True)
    notice = html.split('id="evidence-changed"')[1].split("</div>")[0]
    # the upload may re-run the provider's check too: at least the one stored here has landed
    assert "案例保存后证据有更新" in notice and "1 次基准测试" in notice and "0 次资质核查" not in notice
    version = cases.get_case(session, case_id=case_id).version
    response = client.post(f"/cases/{case_id}/resave", data={"version": str(version)})
    assert response.status_code == 302
    assert 'id="evidence-changed"' not in client.get(f"/cases/{case_id}").get_data(as_text=True)


def test_the_case_report_names_the_runs_and_check_runs_it_used(session, offers, analyst, login):
    run_id = upload_iperf3(session, offers[0].id, 500, analyst)
    check = check_run(offers[0].provider_id)
    session.add(check)
    session.commit()
    case_id = new_case(session, answers())
    html = login("viewer").get(f"/cases/{case_id}/report?lang=en").get_data(as_text=True)
    table = html.split('id="evidence-used"')[1].split("</table>")[0]
    assert f"benchmark run #{run_id}" in table and "(uploaded)" in table and "intranet bandwidth" in table
    assert f"credential check #{check.id}" in table and "示例测量算力有限公司" in table


def test_the_case_report_lists_the_nearest_misses_when_nothing_fits(session, offers, login):
    case_id = new_case(session, answers(budget={"monthly_cny": 100000}))
    html = login("viewer").get(f"/cases/{case_id}/report?lang=en").get_data(as_text=True)
    table = html.split('id="nearest-misses"')[1].split("</table>")[0]
    assert "budget ¥120,000/month vs ¥100,000" in table and "would bring in 2 offer(s)" in table


def test_a_recheck_that_finds_the_same_leaves_the_case_alone_and_a_changed_one_flags_it(
    session, offers, login
):
    provider_id = offers[0].provider_id
    checks.run_check(session, provider_id=provider_id)  # checked before the case was saved
    case_id = new_case(session, answers())
    client = login("viewer")
    checks.run_check(session, provider_id=provider_id)  # the daily re-check: same findings, same verdict
    assert 'id="evidence-changed"' not in client.get(f"/cases/{case_id}").get_data(as_text=True)
    licence = session.exec(select(Licence).where(Licence.provider_id == provider_id)).one()
    licence.status = "吊销"
    session.commit()
    checks.run_check(session, provider_id=provider_id)  # now the licence is revoked: a finding is added
    html = client.get(f"/cases/{case_id}").get_data(as_text=True)
    notice = html.split('id="evidence-changed"')[1].split("</div>")[0]
    assert "保存后有 1 次资质核查得出了新结果" in notice and "基准测试" not in notice


def test_a_first_credential_check_after_the_case_was_saved_flags_it(session, offers, token_for, app):
    case_id = new_case(session, answers())
    checks.run_check(session, provider_id=offers[0].provider_id)  # never checked before: a first check
    response = app.test_client().get(f"/api/v1/cases/{case_id}", headers=token_for("viewer"))
    assert response.get_json()["evidence_since_saved"] == {"runs": 0, "check_runs": 1}
