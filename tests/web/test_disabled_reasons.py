"""Disabled start buttons say why, in words next to them (issue 27 item 6): a phone has no hover title."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.models.trials import TrialServer
from app.registry.providers import create_provider


def _server(session, fingerprint: str | None) -> TrialServer:
    provider = create_provider(session, data={"legal_name": "示例按钮算力有限公司"})
    server = TrialServer(
        provider_id=provider.id,
        name="示例试用机",
        host="203.0.113.7",
        secret_encrypted="not used here",
        host_key_fingerprint=fingerprint,
        host_key_type="ssh-ed25519" if fingerprint else None,
    )
    session.add(server)
    session.commit()
    return server


def test_an_unpinned_server_says_why_it_cannot_start(login, session):
    server = _server(session, None)
    client = login("analyst")
    soup = BeautifulSoup(client.get(f"/trial-servers/{server.id}").get_data(as_text=True), "html.parser")
    start = soup.select_one("#start-run button[type=submit]")
    assert start.has_attr("disabled") and start["aria-describedby"] == "start-disabled-reason"
    assert "主机密钥尚未固定" in soup.select_one("#start-disabled-reason").get_text()
    campaign = soup.select_one("#campaign-form button[type=submit]")
    assert campaign.has_attr("disabled") and campaign["aria-describedby"] == "campaign-disabled-reason"
    assert "主机密钥尚未固定" in soup.select_one("#campaign-disabled-reason").get_text()
    assert "固定主机密钥后才能测试连接" in soup.select_one("#check-disabled-reason").get_text()
    client.get("/lang/en")
    english = BeautifulSoup(client.get(f"/trial-servers/{server.id}").get_data(as_text=True), "html.parser")
    assert "host key" in english.select_one("#start-disabled-reason").get_text()


def test_a_pinned_server_has_live_buttons_and_no_reasons(login, session):
    server = _server(session, "SHA256:" + "A" * 43)
    soup = BeautifulSoup(
        login("analyst").get(f"/trial-servers/{server.id}").get_data(as_text=True), "html.parser"
    )
    assert not soup.select_one("#start-run button[type=submit]").has_attr("disabled")
    assert not soup.select(".disabled-reason")
