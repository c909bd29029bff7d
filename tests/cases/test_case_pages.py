"""The questionnaire without JavaScript: plain forms, one step per page, back/next, state on the server."""

from __future__ import annotations

import re

import pytest

from tests.cases.conftest import example
from tests.web.conftest import field_error, input_value

STEP_FORMS = {
    "compute": {
        "nodes": "4",
        "gpus_per_node": "8",
        "gpu_models": "H800, H100, A800",
        "min_gpu_memory_gb": "80",
    },
    "model": {
        "parameters_billion": "7",
        "precision": "bf16",
        "target_step_seconds": "10",
        "sync_share": "0.3",
    },
    "data": {"dataset_gb": "2000", "source": "object_storage", "samples_per_second": "", "sample_kb": ""},
    "site": {"office_city": "北京", "uplink_mbps": "100"},
    "checkpoint": {"size_gb": "100", "interval_minutes": "60", "acceptable_stall_seconds": "120"},
    "budget": {
        "monthly_cny": "400000",
        "hours_per_month": "720",
        "contract_months": "6",
        "priorities": "intranet",
    },
    "compliance": {"dengbao_level": "0", "dedicated_bandwidth": ""},
}


def version_of(html: str) -> str:
    return re.search(r'name="version" value="(\d+)"', html).group(1)


def start(client, kind="distributed_training") -> str:
    response = client.post("/cases/new", data={"kind": kind, "title": "四机训练"})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    return response.headers["Location"]


def test_complete_the_questionnaire_with_plain_forms(login, demo_loaded):
    client = login("analyst")
    assert "选型问卷" in client.get("/cases").get_data(as_text=True)
    location = start(client)
    assert location.endswith("/steps/compute")
    visited = []
    while "/steps/" in location:
        page = client.get(location)
        html = page.get_data(as_text=True)
        assert page.status_code == 200 and "<script" not in html.split("</main>")[0].split("<main")[1]
        step = location.rsplit("/", 1)[-1]
        visited.append(step)
        nav = "finish" if 'value="finish"' in html else "next"
        response = client.post(location, data={**STEP_FORMS[step], "version": version_of(html), "nav": nav})
        assert response.status_code == 302, response.get_data(as_text=True)[:2000]
        location = response.headers["Location"]
    assert visited == ["compute", "model", "data", "site", "checkpoint", "budget", "compliance"]
    html = client.get(location).get_data(as_text=True)
    assert "本案需要什么（附算式）" in html
    assert "2×(4−1)/4 × 14 GB" in html
    assert 'data-code="licence.no_b11"' in html and 'data-code="licence.outside_coverage"' in html
    assert "服务商声称" in html and "按类型估算" in html
    assert "4 台节点之间用 1 Gbps 内网够不够？" in html
    case_id = re.search(r"/cases/(\d+)", location).group(1)
    checklist = client.get(f"/cases/{case_id}/checklist").get_data(as_text=True)
    assert "iperf3 -c NODE_A_INTRANET_IP -t 30 -P 4 -J" in checklist


def test_back_keeps_what_was_typed_on_the_server(login):
    client = login("analyst")
    location = start(client)
    html = client.get(location).get_data(as_text=True)
    response = client.post(
        location, data={**STEP_FORMS["compute"], "version": version_of(html), "nav": "next"}
    )
    model_url = response.headers["Location"]
    html = client.get(model_url).get_data(as_text=True)
    response = client.post(
        model_url, data={**STEP_FORMS["model"], "version": version_of(html), "nav": "back"}
    )
    assert response.headers["Location"].endswith("/steps/compute")
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert input_value(html, "gpus_per_node") == "8"
    assert input_value(html, "gpu_models") == "H800, H100, A800"
    # the answers are kept: a new session (another browser) sees them too
    assert input_value(client.get(model_url).get_data(as_text=True), "parameters_billion") == "7"


def test_bad_answers_are_shown_under_their_inputs(login):
    client = login("analyst")
    location = start(client)
    html = client.get(location).get_data(as_text=True)
    bad = {**STEP_FORMS["compute"], "gpus_per_node": "-8", "version": version_of(html), "nav": "next"}
    response = client.post(location, data=bad)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert field_error(html, "gpus_per_node") == "不能小于 1"
    assert input_value(html, "gpus_per_node") == "-8"
    site_url = location.replace("compute", "site")
    html = client.get(site_url).get_data(as_text=True)
    response = client.post(
        site_url,
        data={"office_city": "火星", "uplink_mbps": "100", "version": version_of(html), "nav": "next"},
    )
    assert response.status_code == 422
    assert "未知城市“火星”" in field_error(response.get_data(as_text=True), "office_city")


def test_finishing_early_lists_the_missing_answers_by_step(login):
    client = login("analyst")
    location = start(client, "interactive_inference")
    compliance = location.replace("compute", "compliance")
    html = client.get(compliance).get_data(as_text=True)
    response = client.post(
        compliance, data={"dengbao_level": "0", "version": version_of(html), "nav": "finish"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "算力规模：本步尚未填写" in html and "办公室与上行：本步尚未填写" in html
    compute = location
    html = client.get(compute).get_data(as_text=True)
    client.post(compute, data={"gpus_per_node": "2", "version": version_of(html), "nav": "save"})
    users = location.replace("compute", "users")
    html = client.get(users).get_data(as_text=True)
    response = client.post(
        users,
        data={"user_cities": "", "latency_budget_ms": "300", "version": version_of(html), "nav": "save"},
    )
    assert "用户所在城市" in field_error(response.get_data(as_text=True), "user_cities")


def test_a_stale_form_is_refused_with_409(login):
    client = login("analyst")
    location = start(client)
    html = client.get(location).get_data(as_text=True)
    old = version_of(html)
    client.post(location, data={**STEP_FORMS["compute"], "version": old, "nav": "save"})
    response = client.post(
        location, data={**STEP_FORMS["compute"], "gpus_per_node": "4", "version": old, "nav": "next"}
    )
    assert response.status_code == 409
    assert "analyst" in response.get_data(as_text=True)


def test_viewers_read_results_but_cannot_answer_or_tick(login, session, demo_loaded):
    from app.cases import cases

    case = cases.create_case(session, answers=example("offline_batch"), owner=cases.Actor(None, "x"))
    viewer = login("viewer")
    assert viewer.get(f"/cases/{case.id}").status_code == 200
    assert viewer.get(f"/cases/{case.id}/checklist").status_code == 200
    assert viewer.get("/cases/new").status_code == 403
    assert viewer.get(f"/cases/{case.id}/steps/compute").status_code == 403
    response = viewer.post(
        f"/cases/{case.id}/checklist/tick", data={"item_key": "sla_contract", "comment": "x"}
    )
    assert response.status_code == 403


def test_ticking_by_hand_from_the_checklist_page(login, session, demo_loaded):
    from app.cases import cases

    case = cases.create_case(session, answers=example("distributed_training"), owner=cases.Actor(None, "x"))
    client = login("analyst", "dana")
    advice = cases.advise_case(session, case_id=case.id)
    provider_id = advice.eligible[0].offer.provider.id
    page = client.get(f"/cases/{case.id}/checklist?provider_id={provider_id}").get_data(as_text=True)
    assert 'name="item_key" value="sla_contract"' in page
    response = client.post(
        f"/cases/{case.id}/checklist/tick",
        data={
            "item_key": "sla_contract",
            "provider_id": str(provider_id),
            "done": "1",
            "comment": "已核对合同",
        },
    )
    assert response.status_code == 302 and response.headers["Location"].endswith("#item-sla_contract")
    page = client.get(f"/cases/{case.id}/checklist?provider_id={provider_id}").get_data(as_text=True)
    assert "已手动打勾 · dana" in page and "已核对合同" in page
    # a tick without a comment is refused with the reason
    client.post(
        f"/cases/{case.id}/checklist/tick", data={"item_key": "fio_randread", "done": "1", "comment": ""}
    )
    page = client.get(f"/cases/{case.id}/checklist").get_data(as_text=True)
    assert "手动打勾须写明依据" in page
    assert client.get(f"/cases/{case.id}/checklist?provider_id=abc").status_code == 422


@pytest.mark.parametrize("path", ["/cases/999999", "/cases/999999/checklist", "/cases/1/steps/nope"])
def test_unknown_cases_and_steps_are_404(login, path):
    client = login("analyst")
    assert client.get(path).status_code == 404


def test_results_and_checklist_in_english(login, session, demo_loaded):
    from app.cases import cases

    case = cases.create_case(session, answers=example("interactive_inference"), owner=cases.Actor(None, "x"))
    client = login("viewer")
    client.get("/lang/en")
    html = client.get(f"/cases/{case.id}").get_data(as_text=True)
    assert "Interactive inference" in html
    assert "latency budget 300 ms − model time 275 ms = 25 ms" in html
    assert "claimed by provider" in html
    assert 'Our users are in <span lang="zh">上海、杭州、南京</span>' in html  # Chinese names marked as such
    checklist = client.get(f"/cases/{case.id}/checklist").get_data(as_text=True)
    assert "Time a full request from the users&#39; cities" in checklist
