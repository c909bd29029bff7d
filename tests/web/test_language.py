"""One language per page: the same bad input gives a Chinese-only message in zh, an English-only one in en."""

from __future__ import annotations

import re

import pytest
from flask_babel import force_locale

from app.core.errors import InvalidInput
from app.trials.server_addresses import address_policy
from app.trials.servers import cipher_from_settings, create_server, fetch_host_key
from tests.bench_support.sshd import free_port
from tests.web.conftest import field_error

CJK = re.compile(r"[\u4e00-\u9fff]")
PYDANTIC_PHRASES = ("should", "Value error", "Field required", "String should", "Input should")


def _quoted_removed(message: str) -> str:
    """The message without “quoted” names echoed back from the input."""
    return re.sub(r"“[^”]*”", "", message)


def assert_english(message: str | None) -> None:
    """Our English wording: no Chinese outside quoted names, no pydantic phrase."""
    assert message, message
    assert not CJK.search(_quoted_removed(message)), message
    assert not any(phrase in message for phrase in PYDANTIC_PHRASES), message


def assert_chinese(message: str | None) -> None:
    """Our Chinese wording: no English words other than codes, no pydantic phrase."""
    assert message and CJK.search(message), message
    assert not any(phrase in message for phrase in PYDANTIC_PHRASES), message
    assert not re.search(r"\((?:[a-z]+ ){2,}", message), message  # no "(english words ...)" in brackets


def _in(client, lang: str):
    assert client.get(f"/lang/{lang}").status_code in (302, 303)
    return client


BAD_PROVIDER = {
    "legal_name": "某",
    "short_name": "保留的简称",
    "contact_email": "not-an-email",
    "registered_capital_cny": "很多",
    "status": "approved",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_provider_form_errors_speak_the_page_language(login, lang):
    client = _in(login("analyst"), lang)
    response = client.post("/providers/new", data=BAD_PROVIDER)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    messages = [field_error(html, name) for name in ("legal_name", "contact_email", "registered_capital_cny")]
    check = assert_chinese if lang == "zh" else assert_english
    for message in messages:
        check(message)
    if lang == "zh":
        assert messages[0] == "至少 2 个字符" and "邮箱格式不正确" in messages[1]
        assert messages[2] == "须为整数"
    else:
        assert messages[0] == "at least 2 characters"
        assert "not a valid e-mail address" in messages[1] and messages[2] == "must be a whole number"


@pytest.mark.parametrize(
    ("lang", "wanted", "other"), [("zh", "请先登录", "please log in"), ("en", "please log in", "请先登录")]
)
def test_login_required_message(app, lang, wanted, other):
    client = _in(app.test_client(), lang)
    response = client.get("/providers", follow_redirects=True)
    html = response.get_data(as_text=True)
    assert response.request.path == "/login"
    assert wanted in html and other not in html


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_trial_server_form_errors_speak_the_page_language(login, make_provider, lang):
    provider = make_provider()
    client = _in(login("analyst"), lang)
    form = {
        "name": "试用机 A",
        "host": "bad host!",
        "port": "99999",
        "username": "root",
        "auth_method": "key",
        "private_key": "not a key",
    }
    response = client.post(f"/providers/{provider.id}/trials/new", data=form)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    host, port = field_error(html, "host"), field_error(html, "port")
    check = assert_chinese if lang == "zh" else assert_english
    check(host)
    check(port)
    if lang == "zh":
        assert host == "须为主机名或 IP 地址" and port == "不能大于 65535"
    else:
        assert host == "must be a host name or an IP address" and port == "must be at most 65535"


@pytest.fixture
def unreachable_server(app, session, make_provider):
    """A trial server on a loopback port nothing listens on, with the app's cipher and a loopback policy."""
    settings = app.config["GPUVET_SETTINGS"].model_copy(update={"trial_allow_cidrs": ("127.0.0.0/8",)})
    policy, cipher = address_policy(settings), cipher_from_settings(settings)
    data = {
        "name": "refused",
        "host": "127.0.0.1",
        "port": free_port(),
        "username": "root",
        "auth_method": "password",
        "password": "secret-password",
    }
    server = create_server(session, provider_id=make_provider().id, data=data, cipher=cipher, policy=policy)
    return server, cipher, policy


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_trial_server_ssh_error_speaks_the_language(app, unreachable_server, lang):
    server, cipher, policy = unreachable_server
    with app.test_request_context("/"), force_locale(lang), pytest.raises(InvalidInput) as caught:
        fetch_host_key(server, cipher, policy=policy, timeout=5)
    (error,) = caught.value.errors
    assert error.field == "host"
    where = f"127.0.0.1:{server.port}"
    if lang == "zh":
        assert_chinese(error.message)
        assert error.message == f"无法连接：{where} 拒绝连接：该端口没有 SSH 服务在监听"
    else:
        assert_english(error.message)
        refused = f"connection refused by {where}: no SSH server listens on that port"
        assert error.message == f"cannot connect: {refused}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_error_page_for_a_missing_record_speaks_the_page_language(login, lang):
    client = _in(login("viewer"), lang)
    response = client.get("/providers/999999")
    assert response.status_code == 404
    html = response.get_data(as_text=True)
    if lang == "zh":
        assert "供应商 999999 不存在" in html and "does not exist" not in html
    else:
        assert "provider 999999 does not exist" in html and "不存在" not in html
