"""The trial-server form: an offer must be chosen when the provider has any; credentials follow the method."""

from __future__ import annotations

import re

from sqlmodel import Session, select

from app.models.trials import TrialServer
from app.registry.providers import create_provider
from app.trials import servers as trials
from tests.web.conftest import field_error

FORM = {"name": "试用机 B", "host": "127.0.0.1", "port": "22", "username": "root", "auth_method": "password"}
OFFER_MESSAGE_ZH = "请选择这台服务器对应的报价：该供应商已登记报价，测试结果要与所选报价的标称值比较。"


def test_without_an_offer_the_form_is_refused_naming_the_field_with_the_other_problems(
    login, provider, session: Session
):
    client = login("analyst")
    response = client.post(f"/providers/{provider.id}/trials/new", data={**FORM, "port": "99999"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert field_error(html, "offer_id") == OFFER_MESSAGE_ZH
    assert field_error(html, "port") == "不能大于 65535"  # the other problems are named in the same answer
    assert session.exec(select(TrialServer)).all() == []

    client.get("/lang/en")
    html = client.post(f"/providers/{provider.id}/trials/new", data=FORM).get_data(as_text=True)
    assert field_error(html, "offer_id") == (
        "Choose the offer this server stands for: the provider has offers on record, "
        "and the results are compared with the chosen offer&#39;s claims."
    )
    assert field_error(html, "password") is not None  # a password login without a password, named too
    assert session.exec(select(TrialServer)).all() == []


def test_with_the_offer_chosen_the_server_is_saved(login, provider, offer, session: Session):
    client = login("analyst")
    form = {**FORM, "password": "secret", "offer_id": str(offer.id)}
    response = client.post(f"/providers/{provider.id}/trials/new", data=form)
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    assert session.exec(select(TrialServer)).one().offer_id == offer.id


def test_a_provider_without_offers_needs_none(login, session: Session):
    bare = create_provider(session, data={"legal_name": "无报价试用算力有限公司"})
    client = login("analyst")
    response = client.post(f"/providers/{bare.id}/trials/new", data={**FORM, "password": "secret"})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    page = client.get(f"/providers/{bare.id}/trials/new").get_data(as_text=True)
    assert 'id="f-offer_id" required' not in page and "（无）" in page


def test_editing_keeps_asking_for_an_offer_and_a_conflict_still_wins(
    login, provider, offer, session: Session, cipher, policy
):
    server = trials.create_server(
        session, provider_id=provider.id, data={**FORM, "password": "secret"}, cipher=cipher, policy=policy
    )
    client = login("analyst")
    edit = f"/trial-servers/{server.id}/edit"
    response = client.post(edit, data={**FORM, "version": str(server.version)})
    assert response.status_code == 422
    assert field_error(response.get_data(as_text=True), "offer_id") == OFFER_MESSAGE_ZH
    session.expire_all()
    assert session.get(TrialServer, server.id).offer_id is None

    stale = client.post(edit, data={**FORM, "version": str(server.version + 5)})
    assert stale.status_code == 409

    saved = client.post(edit, data={**FORM, "offer_id": str(offer.id), "version": str(server.version)})
    assert saved.status_code == 302
    session.expire_all()
    assert session.get(TrialServer, server.id).offer_id == offer.id


def test_the_form_groups_credentials_by_login_method(login, provider):
    html = login("analyst").get(f"/providers/{provider.id}/trials/new").get_data(as_text=True)
    assert re.search(r'class="[^"]*\bauth-key\b[^"]*">\s*<label[^>]*for="f-private_key"', html)
    assert re.search(r'class="[^"]*\bauth-key\b[^"]*">\s*<label[^>]*for="f-passphrase"', html)
    assert re.search(r'class="[^"]*\bauth-password\b[^"]*">\s*<label[^>]*for="f-password"', html)
    assert 'id="auth-note"' in html and "选择“密码”登录时只填写密码" in html  # shown when scripts are off
    assert 'src="/static/trial_form.js"' in html and "<script>" not in html  # CSP: scripts from 'self' only
    assert 'id="f-offer_id" required' in html and "（请选择）" in html
