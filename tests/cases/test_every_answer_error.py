"""Bad answers get every problem in one reply: command line, API and questionnaire pages."""

from __future__ import annotations

import json
import re

from tests.cases.conftest import example
from tests.web.conftest import field_error

# Types, ranges, an unknown city and what distributed training requires, all wrong at once.
EXPECTED = [
    "compute.gpus_per_node",
    "compute.nodes",
    "model.parameters_billion",
    "model.target_step_seconds",
    "site.office_city",
    "checkpoint.acceptable_stall_seconds",
]


def bad_answers() -> dict:
    answers = example("distributed_training")
    answers["compute"].update({"nodes": 1, "gpus_per_node": "eight"})
    answers["model"] = {"parameters_billion": -7, "precision": "bf16"}
    answers["site"]["office_city"] = "火星"
    del answers["checkpoint"]["acceptable_stall_seconds"]
    return answers


def test_the_cli_prints_every_problem(app, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad_answers(), ensure_ascii=False), encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["advise", str(path)])
    assert result.exit_code == 1
    printed = re.findall(r"^error: (\S+):", result.stderr, re.M)
    assert printed == EXPECTED


def test_the_api_answers_every_problem(app, token_for):
    response = app.test_client().post("/api/v1/cases", json=bad_answers(), headers=token_for("analyst"))
    assert response.status_code == 422
    assert [error["field"] for error in response.get_json()["errors"]] == EXPECTED


def version_of(html: str) -> str:
    return re.search(r'name="version" value="(\d+)"', html).group(1)


def test_a_step_page_shows_its_errors_and_the_kind_rules_together(login):
    client = login("analyst")
    location = client.post("/cases/new", data={"kind": "distributed_training"}).headers["Location"]
    html = client.get(location).get_data(as_text=True)
    response = client.post(
        location, data={"nodes": "1", "gpus_per_node": "-8", "version": version_of(html), "nav": "next"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert field_error(html, "gpus_per_node") == "不能小于 1"
    assert "至少 2 个节点" in field_error(html, "nodes")


def test_finishing_lists_missing_steps_and_kind_rules_at_once(login):
    client = login("analyst")
    location = client.post("/cases/new", data={"kind": "distributed_training"}).headers["Location"]
    html = client.get(location).get_data(as_text=True)
    client.post(
        location, data={"nodes": "2", "gpus_per_node": "8", "version": version_of(html), "nav": "save"}
    )
    compliance = location.replace("compute", "compliance")
    html = client.get(compliance).get_data(as_text=True)
    response = client.post(
        compliance, data={"dengbao_level": "0", "version": version_of(html), "nav": "finish"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "办公室与上行：本步尚未填写" in html
    assert "模型与步长 · 参数量（十亿）: 必填项" in html
    assert "检查点 · 可接受的停顿（秒）: 必填项" in html
