"""History lists say what changed, in words: the question or field, the value before and after, no keys."""

from __future__ import annotations

import re

import pytest
from cryptography.fernet import Fernet

from app.cases import cases
from app.core.audit import set_actor
from app.models import Provider
from app.registry.providers import create_provider
from app.trials import servers as trials
from tests.cases.conftest import example


def _history(html: str) -> str:
    """The text of the page's history table (tags dropped, spaces squeezed)."""
    block = html.split('id="history"', 1)[1]
    block = block.split("</table>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block))


@pytest.fixture
def edited_case(session):
    """A case started, filled, renamed in its answers and with one checklist item ticked, then unticked."""
    set_actor(session, user_id=None, name="alice")
    owner = cases.Actor(None, "alice")
    case = cases.start_case(
        session, workload={"kind": "interactive_inference", "title": "推理选型"}, owner=owner
    )
    answers = example("interactive_inference")
    for step in ("compute", "site", "users", "budget", "compliance"):
        case = cases.save_step(session, case_id=case.id, step=step, data=answers[step], version=case.version)
    changed = {**answers["compute"], "gpus_per_node": 4}
    case = cases.save_step(session, case_id=case.id, step="compute", data=changed, version=case.version)
    case = cases.finish_case(session, case_id=case.id, version=case.version)
    for done in (True, False):
        cases.tick_item(
            session, case_id=case.id, item_key="sla_contract", provider_id=None, done=done,
            comment="合同第 7 条", evidence_url=None, actor=owner,
        )  # fmt: skip
    return {"case": case, "gpus_before": answers["compute"]["gpus_per_node"]}


def test_case_history_names_questions_and_values_in_chinese(login, edited_case):
    client = login("analyst")
    text = _history(client.get(f"/cases/{edited_case['case'].id}").get_data(as_text=True))
    assert f"算力规模 · 每节点 GPU 数: {edited_case['gpus_before']} → 4" in text
    assert "填写进度:" in text and "已完成" in text
    assert "核查清单勾选 · " in text and "已核对: 是 → 否" in text
    assert "备注:" in text and "合同第 7 条" in text
    assert "预算与优先级 · 最看重的几项（最多 3 项）: — → 时延" in text
    assert " — → — " not in text  # nothing listed that did not change as shown
    for key in ("procurement_case", "checklist_tick", "gpus_per_node", "sla_contract", "item_key", "answers"):
        assert key not in text, key


def test_case_history_in_english(login, edited_case):
    client = login("analyst")
    client.get("/lang/en")
    text = _history(client.get(f"/cases/{edited_case['case'].id}").get_data(as_text=True))
    assert "Changed" in text and "Checklist tick" in text
    assert f": {edited_case['gpus_before']} → 4" in text
    assert "Checked: Yes → No" in text
    assert "Compute · GPUs per node" in text and "Progress:" in text and "Ticked by: alice" in text
    assert " — → — " not in text  # nothing listed that did not change as shown
    for key in ("procurement_case", "checklist_tick", "gpus_per_node", "sla_contract"):
        assert key not in text, key


def test_trial_server_changes_in_the_provider_history(app, session, login):
    set_actor(session, user_id=None, name="bob")
    provider = create_provider(
        session,
        data={
            "legal_name": "历史记录测试算力有限公司",
            "offers": [{"name": "八卡套餐", "gpu_model": "H800", "gpus_per_node": 8}],
        },
    )
    offer_id = session.get(Provider, provider.id).offers[0].id
    cipher = Fernet(Fernet.generate_key())
    server = trials.create_server(
        session, provider_id=provider.id, cipher=cipher,
        data={"name": "试用一号", "host": "93.184.216.34", "auth_method": "password", "password": "pw",
              "offer_id": offer_id},
    )  # fmt: skip
    trials.update_server(
        session, server_id=server.id, cipher=cipher,
        data={"name": "试用一号", "host": "93.184.216.34", "port": 2222, "auth_method": "password",
              "offer_id": offer_id, "version": server.version},
    )  # fmt: skip
    client = login("viewer")
    text = _history(client.get(f"/providers/{provider.id}").get_data(as_text=True))
    assert "SSH 端口: 22 → 2222" in text
    assert "登录方式: 密码" in text and "对应套餐: 八卡套餐" in text and "主机地址: 93.184.216.34" in text
    for key in ("auth_method", "offer_id", "host_key", "password", "trial_server", "port:"):
        assert key not in text, key
    client.get("/lang/en")
    text = _history(client.get(f"/providers/{provider.id}").get_data(as_text=True))
    assert "SSH port: 22 → 2222" in text and "Login method: Password" in text


def test_changes_made_by_gpuvet_itself_are_attributed_to_the_system_in_words(session, login):
    provider = create_provider(session, data={"legal_name": "系统导入测试算力有限公司"})  # no user: "system"
    client = login("viewer")
    text = _history(client.get(f"/providers/{provider.id}").get_data(as_text=True))
    assert " 系统 " in text and "system" not in text
    client.get("/lang/en")
    text = _history(client.get(f"/providers/{provider.id}").get_data(as_text=True))
    assert " System " in text and "system" not in text


def test_a_check_run_by_gpuvet_itself_is_attributed_to_the_system_in_words(session, login):
    from app.credentials import checks

    provider = create_provider(session, data={"legal_name": "系统核查测试算力有限公司"})
    checks.run_check(session, provider_id=provider.id)
    client = login("viewer")
    page = client.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    table = re.sub(
        r"\s+",
        " ",
        re.sub(
            r"<[^>]+>",
            " ",
            page.split('class="table align-middle mb-0 small check-history"')[1].split("</table>")[0],
        ),
    )
    assert " 系统 " in table and "system" not in table


def test_labels_of_the_provider_page_follow_each_request_language(session, login):
    """Jinja must not fold {{ 'uscc'|field_label }} at compile time into the first request's language."""
    provider = create_provider(session, data={"legal_name": "语言切换测试算力有限公司"})
    client = login("viewer")
    for language, label in (
        ("en", "Unified social credit code"),
        ("zh", "统一社会信用代码"),
        ("en", "Unified"),
    ):
        client.get(f"/lang/{language}")
        page = client.get(f"/providers/{provider.id}").get_data(as_text=True)
        assert f'<dt class="col-sm-3 col-lg-2">{label}' in page, language
