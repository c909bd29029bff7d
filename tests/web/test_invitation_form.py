"""The invitation form and the provider's questionnaire (issue 27 item 12): a provider picker instead of a
number, the created page naming the provider with a copy button, a confirmed submit, network storage types."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from sqlmodel import Session, select

from app.models.disclosure import Invitation
from app.registry.providers import create_provider
from tests.disclosure import samples
from tests.disclosure.test_form import COMPLETE

SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def _soup(response) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def test_the_form_offers_providers_by_name_and_the_created_page_names_one(login, session):
    create_provider(session, data={"legal_name": "深圳乙算力有限公司"})
    chosen = create_provider(session, data={"legal_name": "北京甲算力有限公司", "short_name": "甲算力"})
    client = login("analyst")
    form = _soup(client.get("/invitations/new"))
    options = [(o["value"], o.get_text()) for o in form.select("select#provider_id option")]
    # a blank first (a new provider), then every provider by name: no number to know
    assert options[0][0] == ""
    assert (str(chosen.id), "北京甲算力有限公司（甲算力）") in options[1:]
    assert {text for _value, text in options[1:]} == {"北京甲算力有限公司（甲算力）", "深圳乙算力有限公司"}
    assert form.select_one("#provider-filter")["data-filter-select"] == "provider_id"
    assert form.find("input", attrs={"name": "provider_id"}) is None  # the numeric box is gone
    created = client.post("/invitations/new", data={"provider_id": str(chosen.id)})
    page = _soup(created)
    assert created.status_code == 200
    named = page.select_one("#invitation-provider")
    assert "北京甲算力有限公司" in named.get_text() and named.a["href"] == f"/providers/{chosen.id}"
    copy = page.select_one("#copy-link")
    assert copy["data-copy"] == "invitation-link" and copy.get_text() == "复制链接"
    assert page.select_one('script[src$="widgets.js"]') is not None
    stored = session.exec(select(Invitation).where(Invitation.provider_id == chosen.id)).one()
    assert stored.legal_name == "北京甲算力有限公司"


def test_a_new_provider_is_named_on_the_created_page_in_english(login):
    client = login("analyst")
    client.get("/lang/en")
    page = _soup(client.post("/invitations/new", data={"legal_name": "杭州丙算力有限公司"}))
    named = page.select_one("#invitation-provider").get_text(" ", strip=True)
    assert named.startswith("Provider") and "杭州丙算力有限公司" in named
    assert page.select_one("#copy-link").get_text() == "Copy link"


@SQLITE_ONLY
def test_submit_asks_for_confirmation_and_network_storage_offers_no_local_disk(app):
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        with app.app_context():
            invitation, token = samples.invite(session)
        client = app.test_client()
        page = _soup(client.get(f"/d/{token}"))
        assert page.select_one("#confirm-submit")["name"] == "confirm_submit"
        assert "不能撤回" in page.select_one('label[for="confirm-submit"]').get_text()
        offered = [
            o["value"] for o in page.select('select[name="storage.network_type"] option') if o["value"]
        ]
        assert offered == ["cloud_disk", "nfs", "parallel_fs", "unknown"]
        # the location question still offers local NVMe
        assert "local_nvme" in [o["value"] for o in page.select('select[name="storage.location"] option')]
        # an older draft that said "local NVMe" as the network type is refused next to the field
        local = {
            **COMPLETE,
            "storage.location": "both",
            "storage.network_type": "local_nvme",
            "action": "submit",
        }
        refused = _soup(client.post(f"/d/{token}", data={**local, "action": "submit"}))
        assert "本地盘不是网络存储" in refused.select_one("#storage-network_type-error").get_text()
        # a complete form submitted without the box ticked is kept as a draft and says why
        unticked = {key: value for key, value in COMPLETE.items() if key != "confirm_submit"}
        asked = _soup(client.post(f"/d/{token}", data={**unticked, "action": "submit"}))
        assert "请勾选确认" in asked.select_one("#confirm-submit-error").get_text()
        session.refresh(invitation)
        assert invitation.status == "draft" and not invitation.answers
        # ticked, it is submitted
        done = client.post(f"/d/{token}", data={**COMPLETE, "action": "submit"})
        session.refresh(invitation)
        assert done.status_code == 200 and invitation.status == "submitted"


def test_neither_or_both_is_said_in_the_forms_words(login, session):
    chosen = create_provider(session, data={"legal_name": "北京丁算力有限公司"})
    client = login("analyst")
    for data in ({}, {"provider_id": str(chosen.id), "legal_name": "杭州戊算力有限公司"}):
        refused = client.post("/invitations/new", data=data)
        assert refused.status_code == 422
        text = _soup(refused).select_one("#form-errors").get_text()
        assert "二者选一" in text and "provider_id" not in text and "legal_name" not in text
