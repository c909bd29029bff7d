"""Language switch and the English catalog: complete, compilable, used by the pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.frontend import CommandLineInterface
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from app import create_app
from app.core.config import PROJECT_ROOT, Settings

TRANSLATIONS = PROJECT_ROOT / "app" / "translations"
EN_PO = TRANSLATIONS / "en" / "LC_MESSAGES" / "messages.po"
KEYWORDS = ["-k", "_l", "-k", "lazy_gettext", "-k", "lazy_pgettext:1c,2"]


def _catalog():
    with EN_PO.open("rb") as handle:
        return read_po(handle, locale="en")


def _extract(target: Path):
    """Extract the msgids from the code and templates now, as babel.cfg describes."""
    CommandLineInterface().run(
        ["pybabel", "-q", "extract", "-F", str(PROJECT_ROOT / "babel.cfg"), *KEYWORDS, "-o", str(target), "."]
    )
    with target.open("rb") as handle:
        return read_po(handle)


def test_english_catalog_translates_every_msgid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(PROJECT_ROOT)
    template = _extract(tmp_path / "messages.pot")
    catalog = _catalog()
    assert len(template) > 100
    missing = [
        message.id
        for message in template
        if message.id and catalog.get(message.id, context=message.context) is None
    ]
    assert not missing, f"msgids not in the English catalog (run pybabel extract + update): {missing}"
    empty = [message.id for message in catalog if message.id and not message.string]
    fuzzy = [message.id for message in catalog if message.id and message.fuzzy]
    assert not empty, f"untranslated: {empty}"
    assert not fuzzy, f"fuzzy: {fuzzy}"


@pytest.fixture
def en_app(app, database_url: str, tmp_path: Path):
    """The app with catalogs compiled from the .po files just now (not relying on committed .mo)."""
    target = tmp_path / "translations" / "en" / "LC_MESSAGES"
    target.mkdir(parents=True)
    with (target / "messages.mo").open("wb") as handle:
        write_mo(handle, _catalog())
    settings = Settings(GPUVET_INSTANCE_PATH=tmp_path / "en-instance", DATABASE_URL=database_url)
    flask_app = create_app(
        settings,
        TESTING=True,
        WTF_CSRF_ENABLED=False,
        BABEL_TRANSLATION_DIRECTORIES=str(tmp_path / "translations"),
    )
    yield flask_app
    flask_app.extensions["gpuvet.engine"].dispose()


def test_language_switch(en_app, make_user, make_provider):
    from tests.conftest import PASSWORD

    provider = make_provider(
        status="approved",
        offers=[
            {
                "gpu_model": "H800",
                "gpus_per_node": 8,
                "bandwidth_type": "shared",
                "storage_type": "cloud_disk",
            }
        ],
    )
    make_user("fay", "analyst")
    client = en_app.test_client()
    assert client.post("/login", data={"username": "fay", "password": PASSWORD}).status_code == 302

    html = client.get("/providers").get_data(as_text=True)
    assert "供应商列表" in html and 'lang="zh-CN"' in html

    response = client.get(f"/lang/en?next=/providers/{provider.id}")
    assert response.status_code == 302
    assert response.location == f"/providers/{provider.id}"
    html = client.get(f"/providers/{provider.id}").get_data(as_text=True)
    assert 'lang="en"' in html
    for text in ("Providers", "Approved", "Shared", "Cloud disk", "Change history", "Edit", "Log out"):
        assert text in html, text
    assert "修改记录" not in html

    form = client.get(f"/providers/{provider.id}/offers/new").get_data(as_text=True)
    assert "GPU model" in form and "GPUs per node" in form

    assert (
        client.get("/lang/zh", headers={"Referer": "http://localhost/providers?q=x"}).location
        == "/providers?q=x"
    )
    assert "供应商列表" in client.get("/providers").get_data(as_text=True)


def test_language_switch_rejects_other_codes_and_foreign_targets(app):
    client = app.test_client()
    assert client.get("/lang/fr").status_code == 404
    assert client.get("/lang/en?next=https://evil.example/").location == "/providers"
    with client.session_transaction() as session:
        assert session["lang"] == "en"
