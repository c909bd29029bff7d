"""API messages in one language: the session's choice, else Accept-Language (zh or en), else zh."""

from __future__ import annotations

import re

import pytest

from tests.api.conftest import assert_error_shape, provider_payload
from tests.cases.conftest import example

CJK = re.compile(r"[\u4e00-\u9fff]")
PYDANTIC_PHRASES = ("should", "Value error", "Field required", "String should", "Input should")

BAD_PROVIDER = provider_payload(legal_name="某", contact_email="nope", registered_capital_cny="lots")


def _messages(errors: list[dict[str, str]]) -> dict[str, str]:
    return {error["field"]: error["message"] for error in errors}


def _assert_one_language(messages: dict[str, str], lang: str) -> None:
    for message in messages.values():
        assert not any(phrase in message for phrase in PYDANTIC_PHRASES), message
        without_names = re.sub(r"“[^”]*”", "", message)
        if lang == "en":
            assert not CJK.search(without_names), message
        else:
            assert CJK.search(message), message


@pytest.mark.parametrize(
    ("accept", "lang"),
    [(None, "zh"), ("en-US,en;q=0.9", "en"), ("zh-CN,zh;q=0.9,en;q=0.5", "zh"), ("fr-FR", "zh")],
)
def test_validation_messages_follow_accept_language(api, tokens, accept, lang):
    headers = {**tokens["analyst"], **({"Accept-Language": accept} if accept else {})}
    response = api.post("/api/v1/providers", json=BAD_PROVIDER, headers=headers)
    messages = _messages(assert_error_shape(response, 422))
    assert set(messages) == {"legal_name", "contact_email", "registered_capital_cny"}
    _assert_one_language(messages, lang)
    expected = (
        {"legal_name": "至少 2 个字符", "registered_capital_cny": "须为整数"}
        if lang == "zh"
        else {"legal_name": "at least 2 characters", "registered_capital_cny": "must be a whole number"}
    )
    assert {key: messages[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("accept", "wanted"),
    [("en", "an API token is required: send Authorization: Bearer <token>"), ("zh", "需要 API 令牌")],
)
def test_missing_token_message_follows_accept_language(api, accept, wanted):
    response = api.get("/api/v1/providers", headers={"Accept-Language": accept})
    (error,) = assert_error_shape(response, 401)
    assert error["message"].startswith(wanted)
    _assert_one_language({"": error["message"]}, accept)


def test_the_session_choice_comes_before_accept_language(api, tokens):
    assert api.get("/lang/en").status_code in (302, 303)
    headers = {**tokens["analyst"], "Accept-Language": "zh-CN"}
    response = api.post("/api/v1/providers", json=BAD_PROVIDER, headers=headers)
    messages = _messages(assert_error_shape(response, 422))
    assert messages["legal_name"] == "at least 2 characters"
    _assert_one_language(messages, "en")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_questionnaire_answers_errors_in_one_language(api, tokens, lang):
    answers = example("distributed_training")
    answers["compute"]["gpus_per_node"] = -8
    answers["compute"]["nodes"] = 1
    del answers["model"]["target_step_seconds"]
    response = api.post("/api/v1/cases", json=answers, headers={**tokens["analyst"], "Accept-Language": lang})
    messages = _messages(assert_error_shape(response, 422))
    assert set(messages) == {"compute.gpus_per_node", "compute.nodes", "model.target_step_seconds"}
    _assert_one_language(messages, lang)
    if lang == "zh":
        assert messages["compute.nodes"] == "多机分布式训练至少 2 个节点"
        step = "必填项：估算所需内网带宽需要目标步长；不知道就勾选“不确定”"
        assert messages["model.target_step_seconds"] == step
    else:
        assert messages["compute.nodes"] == "distributed training needs at least 2 nodes"
        step = (
            "required: the step time is needed to work out the intranet bandwidth;"
            ' if you do not know it, tick "not sure"'
        )
        assert messages["model.target_step_seconds"] == step


def test_http_errors_follow_accept_language(api, tokens):
    zh = api.get("/api/v1/providers/2147483647", headers=tokens["viewer"])
    en = api.get("/api/v1/providers/2147483647", headers={**tokens["viewer"], "Accept-Language": "en"})
    assert assert_error_shape(zh, 404)[0]["message"] == "供应商 2147483647 不存在"
    assert assert_error_shape(en, 404)[0]["message"] == "provider 2147483647 does not exist"


def test_openapi_documents_the_message_language(api):
    description = api.get("/api/v1/openapi.json").get_json()["info"]["description"]
    assert "Accept-Language" in description and "zh by default" in description
