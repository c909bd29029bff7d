"""Evidence and lookup pages: fetched HTML never served live, downloads locked down, captcha in the page."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from app.models.evidence import Evidence, Lookup
from app.registry import providers as provider_service
from tests.credentials.lookups.conftest import LEGAL_NAME
from tests.fakes.web import SiteServer
from tests.scrapers.conftest import FOOTERS


@pytest.fixture
def site():
    with SiteServer(FOOTERS) as server:
        yield server


@pytest.fixture
def site_provider(session, site):
    return provider_service.create_provider(
        session,
        data={
            "legal_name": LEGAL_NAME,
            "registered_province": "北京",
            "website": site.url("/01_utf8_basic.html"),
        },
    )


def _scrape(client, provider_id):
    response = client.post(f"/providers/{provider_id}/evidence/footer", data={"url": ""})
    assert response.status_code == 302, response.get_data(as_text=True)[:500]


def test_footer_scrape_from_the_evidence_tab(lookup_app, login, session, site_provider):
    analyst = login("analyst")
    page = analyst.get(f"/providers/{site_provider.id}/evidence").get_data(as_text=True)
    assert "抓取官网页脚" in page and "官方查询" in page and 'id="no-evidence"' in page
    _scrape(analyst, site_provider.id)
    page = analyst.get(f"/providers/{site_provider.id}/evidence").get_data(as_text=True)
    assert "京ICP备19012345号-1" in page and "北京北辰算力科技有限公司" in page
    assert 'id="evidence-table"' in page
    viewer = login("viewer")
    viewer_page = viewer.get(f"/providers/{site_provider.id}/evidence").get_data(as_text=True)
    assert 'id="footer-scrape-form"' not in viewer_page and "京ICP备19012345号-1" in viewer_page
    assert viewer.post(f"/providers/{site_provider.id}/evidence/footer").status_code == 403


def test_bad_url_is_a_field_error_not_a_500(lookup_app, login, site_provider):
    analyst = login("analyst")
    response = analyst.post(
        f"/providers/{site_provider.id}/evidence/footer", data={"url": "ftp://x.example/"}
    )
    assert response.status_code == 422
    assert 'id="footer-url-error"' in response.get_data(as_text=True)


def test_fetched_html_is_shown_escaped_and_downloaded_as_an_attachment(
    lookup_app, login, session, site_provider
):
    analyst = login("analyst")
    _scrape(analyst, site_provider.id)
    row = session.exec(select(Evidence).where(Evidence.provider_id == site_provider.id)).one()
    page = analyst.get(f"/evidence/{row.id}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert "&lt;script&gt;var _hmt" in html and "<script>var _hmt" not in html
    assert row.sha256 in html
    download = analyst.get(f"/evidence/{row.id}/download")
    assert download.mimetype == "application/octet-stream"
    assert download.headers["Content-Disposition"].startswith("attachment;")
    assert download.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in download.headers["Content-Security-Policy"]
    assert download.data == row.body
    assert analyst.get(f"/evidence/{row.id}/image").status_code == 404  # HTML is never served inline


def test_lookup_page_shows_the_captcha_and_completes_with_a_click(lookup_app, login, session, provider, fake):
    analyst = login("analyst")
    started = analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "icp", "query": ""})
    assert started.status_code == 302
    lookup = session.exec(select(Lookup).where(Lookup.provider_id == provider.id)).one()
    page = analyst.get(started.headers["Location"]).get_data(as_text=True)
    image_url = re.search(r'<input type="image" name="pt"[^>]*src="([^"]+)"', page).group(1)
    image = analyst.get(image_url)
    assert image.mimetype == "image/png" and image.data.startswith(b"\x89PNG")
    assert image.headers["X-Content-Type-Options"] == "nosniff"
    # A click on the gap submits pt.x / pt.y like a browser does for <input type="image">.
    x = fake.icp_answer(lookup.captcha_uuid)
    done = analyst.post(f"/lookups/{lookup.id}/answer", data={"pt.x": str(x), "pt.y": "30"})
    assert done.status_code == 302
    result = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    assert "京ICP备19012345号-1" in result and 'id="records-' in result


def test_wrong_and_invalid_answers_in_the_page(lookup_app, login, session, provider, fake):
    analyst = login("analyst")
    analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "licence"})
    lookup = session.exec(select(Lookup).where(Lookup.provider_id == provider.id)).one()
    invalid = analyst.post(f"/lookups/{lookup.id}/answer", data={"answer": "不是字母"})
    assert invalid.status_code == 422 and "answer-error" in invalid.get_data(as_text=True)
    analyst.post(f"/lookups/{lookup.id}/answer", data={"answer": "WRONG"})
    page = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    assert "验证码答案不正确（第 1/3 次）" in page and 'class="border captcha-image"' in page
    assert "Wrong captcha" not in page
    bad_kind = analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "gsxt"})
    assert bad_kind.status_code == 422 and "查询类型须为 icp" in bad_kind.get_data(as_text=True)
    analyst.get("/lang/en")
    page = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    assert "Wrong captcha answer (1 of 3)" in page and "验证码答案不正确" not in page
    bad_kind = analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "gsxt"}).get_data(as_text=True)
    assert "The kind must be icp (ICP filing) or licence" in bad_kind and "查询类型须为" not in bad_kind
    viewer = login("viewer")
    assert viewer.post(f"/lookups/{lookup.id}/answer", data={"answer": "AB12"}).status_code == 403
    assert 'name="answer"' not in viewer.get(f"/lookups/{lookup.id}").get_data(as_text=True)


def test_credentials_tab_shows_the_captcha_step_and_footer_panel(lookup_app, login, session, provider):
    analyst = login("analyst")
    analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "icp"})
    page = analyst.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    assert 'id="panel-footer"' in page and 'id="panel-lookups"' in page
    assert '<input type="image" name="pt"' in page


def test_every_kind_of_evidence_has_a_detail_page(lookup_app, login, session, provider, fake):
    analyst = login("analyst")
    analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "icp"})
    lookup = session.exec(select(Lookup).where(Lookup.provider_id == provider.id)).one()
    fake.delays["icp_query"] = 4.0  # ends in a timeout: a fetch with no reply
    analyst.post(f"/lookups/{lookup.id}/answer", data={"answer": str(fake.icp_answer(lookup.captcha_uuid))})
    rows = session.exec(select(Evidence).where(Evidence.lookup_id == lookup.id)).all()
    shown, ids = {}, {}
    for row in rows:
        page = analyst.get(f"/evidence/{row.id}")
        assert page.status_code == 200, row.purpose
        shown[row.purpose], ids[row.purpose] = page.get_data(as_text=True), row.id
    assert f'src="/evidence/{ids["captcha_image"]}/image"' in shown["captcha_image"]
    assert "&#34;bussiness&#34;" in shown["icp_auth"] or "&quot;bussiness&quot;" in shown["icp_auth"]
    assert 'id="evidence-error"' in shown["icp_query"] and "超时" in shown["icp_query"]
    tab = analyst.get(f"/providers/{provider.id}/evidence?purpose=icp_query").get_data(as_text=True)
    assert "<td>备案系统：查询结果</td>" in tab and "<td>备案系统：令牌</td>" not in tab


@pytest.fixture
def refused_app(lookup_app):
    """The lookup app with the ICP system at a loopback port nothing listens on (bound, then closed)."""
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    settings = lookup_app.config["GPUVET_SETTINGS"]
    lookup_app.config["GPUVET_SETTINGS"] = settings.model_copy(
        update={"lookup_icp_base_url": f"http://127.0.0.1:{port}"}
    )
    return lookup_app


def test_refused_official_system_says_unreachable_in_the_ui_language(refused_app, login, session, provider):
    analyst = login("analyst")
    started = analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "icp", "query": ""})
    assert started.status_code == 302
    lookup = session.exec(select(Lookup).where(Lookup.provider_id == provider.id)).one()
    assert lookup.state == "failed" and "超时" not in lookup.message and "timed out" not in lookup.message
    assert "本机无法连接官方系统" in lookup.message and "手工查询后记录结果" in lookup.message
    assert "cannot reach" not in lookup.message  # stored in one language; the page translates
    failed = session.exec(select(Evidence).where(Evidence.lookup_id == lookup.id)).all()
    assert [row.error_code for row in failed] == ["unreachable_refused"]

    zh = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    message = re.search(r'id="lookup-message"[^>]*>([^<]*)<', zh).group(1)
    assert (
        "本机无法连接官方系统（连接被拒绝）" in message
        and "手工查询" in message
        and "cannot reach" not in message
    )
    evidence_page = analyst.get(f"/providers/{provider.id}/evidence").get_data(as_text=True)
    assert "连接被拒绝" in evidence_page

    assert analyst.get(f"/lang/en?next=/lookups/{lookup.id}").status_code == 302
    en = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    message = re.search(r'id="lookup-message"[^>]*>([^<]*)<', en).group(1)
    assert "cannot reach the official system (the connection was refused)" in message
    assert "by hand" in message and "本机" not in message and "timed out" not in message


def test_footer_scrape_of_an_unresolvable_site_says_unreachable(lookup_app, login, session, monkeypatch):
    import socket

    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if str(host).endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    provider = provider_service.create_provider(
        session,
        data={
            "legal_name": LEGAL_NAME,
            "registered_province": "北京",
            "website": "http://gpuvet-test.invalid/",
        },
    )
    analyst = login("analyst")
    _scrape(analyst, provider.id)
    row = session.exec(select(Evidence).where(Evidence.provider_id == provider.id)).one()
    assert row.error_code == "unreachable_dns" and "timed out" not in (row.error or "")
    zh = analyst.get(f"/providers/{provider.id}/evidence").get_data(as_text=True)
    error = re.search(r'id="footer-error">([^<]*)<', zh).group(1)
    assert "本机无法连接该网站（域名无法解析）" in error and "cannot reach" not in error
    assert analyst.get(f"/lang/en?next=/providers/{provider.id}/evidence").status_code == 302
    en = analyst.get(f"/providers/{provider.id}/evidence").get_data(as_text=True)
    error = re.search(r'id="footer-error">([^<]*)<', en).group(1)
    assert "cannot reach the site (the host name does not resolve)" in error and "域名" not in error
