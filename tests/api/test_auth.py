"""Bearer-token auth and the role matrix: viewer reads, analyst writes, admin deletes."""

from __future__ import annotations

import pytest
from sqlmodel import col, select

from app.models import ApiToken, Provider, User
from tests.api.conftest import assert_error_shape, provider_payload

# endpoint -> expected status for anonymous, viewer, analyst, admin
MATRIX = {
    "list": (401, 200, 200, 200),
    "create": (401, 403, 201, 201),
    "read": (401, 200, 200, 200),
    "patch": (401, 403, 200, 200),
    "delete": (401, 403, 403, 204),
    "history": (401, 200, 200, 200),
}
WHO = ("anonymous", "viewer", "analyst", "admin")


def _call(api, endpoint: str, provider: Provider, headers: dict[str, str], index: int):
    one = f"/api/v1/providers/{provider.id}"
    if endpoint == "list":
        return api.get("/api/v1/providers", headers=headers)
    if endpoint == "create":
        return api.post(
            "/api/v1/providers",
            json=provider_payload(uscc=None, legal_name=f"新建公司{index}"),
            headers=headers,
        )
    if endpoint == "read":
        return api.get(one, headers=headers)
    if endpoint == "patch":
        return api.patch(one, json={"version": provider.version, "notes": "改过"}, headers=headers)
    if endpoint == "delete":
        return api.delete(one, headers=headers)
    return api.get(one + "/history", headers=headers)


@pytest.mark.parametrize("endpoint", list(MATRIX))
def test_role_matrix(api, tokens, arrange, session, endpoint):
    for index, (who, expected) in enumerate(zip(WHO, MATRIX[endpoint], strict=True)):
        provider = arrange(uscc=None, legal_name=f"矩阵测试公司{index}")
        response = _call(api, endpoint, provider, tokens[who], index)
        if expected >= 400:
            errors = assert_error_shape(response, expected)
            if expected == 401:
                assert response.headers["WWW-Authenticate"].startswith("Bearer")
                assert errors[0]["field"] == "Authorization"
            # A refused request changed nothing.
            session.expire_all()
            stored = session.get(Provider, provider.id)
            assert stored is not None and stored.version == provider.version and stored.notes is None
        else:
            assert response.status_code == expected, (who, response.get_json())


def test_invalid_tokens_are_401_with_challenge(api, tokens):
    cases = {
        "Bearer gv_not-a-real-token": 'error="invalid_token"',
        "Bearer ": 'error="invalid_token"',
        "Basic dXNlcjpwYXNz": 'error="invalid_token"',
        tokens["admin"]["Authorization"].replace("Bearer ", "Token "): 'error="invalid_token"',
        tokens["admin"]["Authorization"] + "x": 'error="invalid_token"',
    }
    for header, challenge in cases.items():
        response = api.get("/api/v1/providers", headers={"Authorization": header})
        assert_error_shape(response, 401)
        assert challenge in response.headers["WWW-Authenticate"], header


def test_token_scheme_is_case_insensitive_and_use_is_noted(api, tokens, session):
    token = tokens["viewer"]["Authorization"].split(" ", 1)[1]
    assert api.get("/api/v1/providers", headers={"Authorization": f"bearer  {token}"}).status_code == 200
    assert session.exec(select(ApiToken).where(col(ApiToken.last_used_at).is_not(None))).first() is not None


def test_deactivated_user_token_is_refused(api, tokens, session):
    user = session.exec(select(User).where(User.username == "api-admin")).one()
    user.active = False
    session.add(user)
    session.commit()
    assert_error_shape(api.get("/api/v1/providers", headers=tokens["admin"]), 401)


def test_session_cookie_does_not_authenticate_the_api(app, login, session):
    client = login("admin", name="cookie-admin")
    assert client.get("/providers").status_code == 200  # the cookie works for pages ...
    for method, path, body in (
        ("get", "/api/v1/providers", None),
        ("post", "/api/v1/providers", provider_payload()),
    ):
        response = getattr(client, method)(path, json=body)
        assert_error_shape(response, 401)  # ... but never for the API (no CSRF through it)
    assert session.exec(select(Provider)).first() is None


def test_openapi_needs_no_token(api):
    assert api.get("/api/v1/openapi.json").status_code == 200
