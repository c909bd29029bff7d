"""Questionnaire step pages: required marks, hints, derived defaults and what each answer changes."""

from __future__ import annotations

import re

from app.models.cases import ProcurementCase
from tests.web.conftest import field_error, input_value


def _version(html: str) -> str:
    return re.search(r'name="version" value="(\d+)"', html).group(1)


def _text(html: str) -> str:
    """The visible text of the page's main part (or of a fragment), tags removed and spaces collapsed."""
    main = html.split("<main", 1)[1].split("</main>", 1)[0] if "<main" in html else html
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main))


def _group(html: str, name: str) -> str:
    """The markup of one question: its label, input, hint, default and effects."""
    start = html.index(f'id="f-{name}-group"')
    following = html.find('-group"', start + len(name) + 12)
    return html[start:following] if following != -1 else html[start:]


def _start(client, kind: str = "distributed_training") -> int:
    response = client.post("/cases/new", data={"kind": kind, "title": "训练"})
    assert response.status_code == 302
    return int(response.headers["Location"].split("/")[2])


def _post(client, case_id: int, step: str, nav: str = "next", **values: str):
    html = client.get(f"/cases/{case_id}/steps/{step}").get_data(as_text=True)
    return client.post(
        f"/cases/{case_id}/steps/{step}", data={**values, "version": _version(html), "nav": nav}
    )


def _trained_to_checkpoint(client, *, parameters: str = "70") -> int:
    case_id = _start(client)
    assert _post(client, case_id, "compute", nodes="2", gpus_per_node="8").status_code == 302
    response = _post(
        client, case_id, "model", parameters_billion=parameters, precision="bf16", target_step_seconds="10"
    )
    assert response.status_code == 302
    return case_id


def test_multi_node_training_defaults_to_two_nodes_and_refuses_one(login, session):
    client = login("analyst")
    case_id = _start(client)
    html = client.get(f"/cases/{case_id}/steps/compute").get_data(as_text=True)
    assert input_value(html, "nodes") == "2"
    assert "按任务类型推算" in _group(html, "nodes")
    response = _post(client, case_id, "compute", nodes="1", gpus_per_node="8")
    assert response.status_code == 422
    assert "至少 2 个节点" in field_error(response.get_data(as_text=True), "nodes")
    assert _post(client, case_id, "compute", nodes="", gpus_per_node="8").status_code == 302
    case = session.get(ProcurementCase, case_id)
    session.refresh(case)
    assert case.answers["compute"]["nodes"] == 2
    assert case.answers["derived"] == ["compute.nodes"]


def test_checkpoint_defaults_are_derived_from_parameters_and_precision(login, session):
    client = login("analyst")
    case_id = _trained_to_checkpoint(client)
    html = client.get(f"/cases/{case_id}/steps/checkpoint").get_data(as_text=True)
    # 70 B parameters x 2 bytes (bf16) = 140 GB of weights; local NVMe writes them at 2,000 MB/s in 70 s.
    assert input_value(html, "size_gb") == "140"
    assert input_value(html, "acceptable_stall_seconds") == "70"
    size = _text(_group(html, "size_gb"))
    assert "默认值" in size and "70 B 参数 × 2 字节（bf16）= 140 GB" in size and "优化器状态" in size
    assert "140 GB 以本地 NVMe的典型写速 2,000 MB/s 写完约需 70 秒" in _text(
        _group(html, "acceptable_stall_seconds")
    )
    assert "每次保存需要持续写入 2,000 MB/s" in _text(_group(html, "acceptable_stall_seconds"))

    response = _post(
        client, case_id, "checkpoint", size_gb="", interval_minutes="30", acceptable_stall_seconds=""
    )
    assert response.status_code == 302
    case = session.get(ProcurementCase, case_id)
    session.refresh(case)
    assert case.answers["checkpoint"] == {
        "size_gb": 140,
        "interval_minutes": 30,
        "acceptable_stall_seconds": 70,
    }
    assert case.answers["derived"] == [
        "checkpoint.acceptable_stall_seconds",
        "checkpoint.size_gb",
        "compute.nodes",
    ]


def test_an_own_figure_is_not_recorded_as_a_default(login, session):
    client = login("analyst")
    case_id = _trained_to_checkpoint(client, parameters="7")
    response = _post(client, case_id, "checkpoint", size_gb="100", acceptable_stall_seconds="")
    assert response.status_code == 302
    case = session.get(ProcurementCase, case_id)
    session.refresh(case)
    # The stall follows the buyer's own size: 100 GB at 2,000 MB/s = 50 s.
    assert case.answers["checkpoint"] == {"size_gb": 100, "acceptable_stall_seconds": 50}
    assert "checkpoint.size_gb" not in case.answers["derived"]
    assert "checkpoint.acceptable_stall_seconds" in case.answers["derived"]


def test_a_derived_default_follows_a_changed_model(login, session):
    client = login("analyst")
    case_id = _trained_to_checkpoint(client)
    assert _post(client, case_id, "checkpoint", size_gb="", acceptable_stall_seconds="").status_code == 302
    response = _post(
        client, case_id, "model", parameters_billion="7", precision="fp32", target_step_seconds="10"
    )
    assert response.status_code == 302
    # 7e9 x 4 bytes = 28 GB, written at 2,000 MB/s in 14 s: the stored defaults moved with the model.
    case = session.get(ProcurementCase, case_id)
    session.refresh(case)
    assert case.answers["checkpoint"] == {"size_gb": 28, "acceptable_stall_seconds": 14}
    html = client.get(f"/cases/{case_id}/steps/checkpoint").get_data(as_text=True)
    assert input_value(html, "size_gb") == "28"
    # An own figure stays when the model changes again.
    assert _post(client, case_id, "checkpoint", size_gb="300", acceptable_stall_seconds="").status_code == 302
    response = _post(
        client, case_id, "model", parameters_billion="70", precision="bf16", target_step_seconds="10"
    )
    session.refresh(case)
    assert case.answers["checkpoint"] == {"size_gb": 300, "acceptable_stall_seconds": 150}


def test_a_one_second_step_shows_that_rdma_becomes_mandatory(login):
    client = login("analyst")
    case_id = _start(client)
    assert _post(client, case_id, "compute", nodes="4", gpus_per_node="8").status_code == 302
    # Without JavaScript: "check" shows the effect of the answers on the page, and saves nothing.
    response = _post(
        client,
        case_id,
        "model",
        nav="check",
        parameters_billion="7",
        precision="bf16",
        target_step_seconds="1",
    )
    assert response.status_code == 200
    effect = _text(_group(response.get_data(as_text=True), "target_step_seconds"))
    # 7e9 x 2 bytes = 14 GB; ring over 4 nodes 1.5 x 14 = 21 GB; 21 GB x 8 / (1 s x 30%) = 560 Gbps.
    assert "1 秒一步需要 560 Gbps：必须 RDMA" in effect
    assert "21 GB × 8 ÷ 0.3 s = 560 Gbps" in effect
    assert "model" not in client.get(f"/cases/{case_id}/answers.json").get_json()
    wrong = _post(client, case_id, "model", nav="check", parameters_billion="7", target_step_seconds="-1")
    assert wrong.status_code == 422 and field_error(wrong.get_data(as_text=True), "target_step_seconds")
    relaxed = _post(
        client,
        case_id,
        "model",
        nav="check",
        parameters_billion="7",
        precision="bf16",
        target_step_seconds="60",
    )
    assert "60 秒一步需要 9.33 Gbps：以太网 TCP 即可" in _text(relaxed.get_data(as_text=True))


def test_the_effects_are_also_served_as_json_for_the_live_hints(login):
    client = login("analyst")
    case_id = _start(client)
    assert _post(client, case_id, "compute", nodes="4", gpus_per_node="8").status_code == 302
    body = client.get(
        f"/cases/{case_id}/steps/model/preview?parameters_billion=7&precision=bf16&target_step_seconds=1"
    ).get_json()
    texts = [effect["text"] for effect in body["fields"]["target_step_seconds"]["effects"]]
    assert texts == ["1 秒一步需要 560 Gbps：必须 RDMA"]
    blank = client.get(f"/cases/{case_id}/steps/model/preview?parameters_billion=7").get_json()
    examples = [effect["text"] for effect in blank["fields"]["target_step_seconds"]["effects"]]
    assert examples == [
        "例如 1 秒一步需要 560 Gbps：必须 RDMA",
        "例如 10 秒一步需要 56 Gbps：必须 RDMA",
        "例如 60 秒一步需要 9.33 Gbps：以太网 TCP 即可",
    ]
    wrong = client.get(f"/cases/{case_id}/steps/model/preview?parameters_billion=abc").get_json()
    assert wrong["fields"]["target_step_seconds"]["effects"] == []
    assert client.get(f"/cases/{case_id}/steps/nope/preview").status_code == 404


def test_required_questions_are_marked_for_the_workload_kind(login):
    client = login("analyst")
    case_id = _trained_to_checkpoint(client)
    html = client.get(f"/cases/{case_id}/steps/model").get_data(as_text=True)
    marked = {
        name
        for name in ("parameters_billion", "precision", "target_step_seconds", "sync_share")
        if 'class="visually-hidden">必填</span>' in _group(html, name)
    }
    assert marked == {"parameters_billion", "target_step_seconds"}
    assert 'aria-required="true"' in _group(html, "target_step_seconds")
    assert 'aria-required="true"' not in _group(html, "sync_share")
    inference = _start(client, "interactive_inference")
    html = client.get(f"/cases/{inference}/steps/compute").get_data(as_text=True)
    assert 'class="visually-hidden">必填</span>' in _group(html, "gpus_per_node")
    assert 'class="visually-hidden">必填</span>' not in _group(html, "nodes")


STEPS = ("compute", "model", "data", "site", "checkpoint", "budget", "compliance")


def test_step_pages_show_no_raw_keys_in_either_language(login):
    client = login("analyst")
    case_id = _trained_to_checkpoint(client)
    for lang in ("zh", "en"):
        client.get(f"/lang/{lang}")
        for step in STEPS:
            html = client.get(f"/cases/{case_id}/steps/{step}").get_data(as_text=True)
            text = _text(html)
            assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), (lang, step, text)
            assert "%(" not in text and "\\u" not in text
    client.get("/lang/en")
    html = client.get(f"/cases/{case_id}/steps/checkpoint").get_data(as_text=True)
    text = _text(html)
    assert not re.search(r"[\u4e00-\u9fff]", text.split("Checkpoints", 1)[1]), text
    assert "derived from the parameter count: 70 B parameters × 2 bytes (bf16) = 140 GB" in text
    assert "Each save needs 2,000 MB/s sustained. Storage types fast enough" in text and "Default" in text
    assert '<span class="visually-hidden">Required</span>' in _group(html, "size_gb")
    body = client.get(
        f"/cases/{case_id}/steps/model/preview?parameters_billion=7&precision=bf16&target_step_seconds=1"
    ).get_json()
    texts = [effect["text"] for effect in body["fields"]["target_step_seconds"]["effects"]]
    assert texts == ["1 s steps need 373 Gbps: RDMA becomes mandatory"]


def test_odd_input_to_the_live_hints_gets_json_never_an_error(login):
    client = login("analyst")
    case_id = _trained_to_checkpoint(client)
    for step in STEPS:
        for odd in ("inf", "1e400", "-5", "abc", "nan", "0", "9" * 40):
            response = client.get(
                f"/cases/{case_id}/steps/{step}/preview",
                query_string={
                    "size_gb": odd,
                    "acceptable_stall_seconds": odd,
                    "nodes": odd,
                    "dataset_gb": odd,
                },
            )
            assert response.status_code == 200, (step, odd)
            assert "Infinity" not in response.get_data(as_text=True) and "NaN" not in response.get_data(
                as_text=True
            )
    assert client.get("/cases/999999/steps/model/preview").status_code == 404
