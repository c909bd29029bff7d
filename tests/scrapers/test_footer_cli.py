"""`flask vet footer URL_OR_FILE`: saved files and a live site on loopback."""

from __future__ import annotations

import json

import pytest

from app import create_app
from app.core.config import Settings
from tests.fakes.web import SiteServer
from tests.scrapers.conftest import FOOTERS


def _app(tmp_path, **env):
    settings = Settings(
        GPUVET_INSTANCE_PATH=tmp_path / "instance",
        DATABASE_URL=f"sqlite:///{tmp_path / 'cli.sqlite3'}",
        GPUVET_FETCH_MIN_INTERVAL_S=0,
        **env,
    )
    return create_app(settings, TESTING=True)


@pytest.fixture
def runner(tmp_path):
    return _app(tmp_path, GPUVET_FETCH_ALLOW_CIDRS="127.0.0.0/8").test_cli_runner()


def test_file_is_decoded_like_a_fetched_page(runner):
    for name in ("02_gbk_meta.html", "04_gbk_undeclared.html", "07_split_tags.html"):
        outcome = runner.invoke(args=["vet", "footer", str(FOOTERS / name)])
        assert outcome.exit_code == 0, outcome.output
        expected = json.loads((FOOTERS / name).with_suffix(".json").read_text(encoding="utf-8"))
        assert json.loads(outcome.output) == expected


def test_missing_file_and_empty_page_are_clear_errors(runner, tmp_path):
    missing = runner.invoke(args=["vet", "footer", str(tmp_path / "nope.html")])
    assert missing.exit_code == 2 and "not a file or http(s) URL" in missing.output
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"  \n ")
    outcome = runner.invoke(args=["vet", "footer", str(empty)])
    assert outcome.exit_code == 1 and "页面为空" in outcome.output


def test_url_follows_linked_pages_and_merges(runner):
    with SiteServer(FOOTERS / "site") as site:
        outcome = runner.invoke(args=["vet", "footer", site.url("/")])
    assert outcome.exit_code == 0, outcome.output
    data = json.loads(outcome.output)
    found = {(item["kind"], item["normalized"]) for item in data["identifiers"]}
    assert ("licence", "陕B1-20210099") in found  # only on the linked about / 资质 pages
    assert ("psb_filing", "秦公网安备61019002000456号") in found
    assert data["company_name"] == "陕西长安智算科技有限公司"
    assert [page["url"].rsplit("/", 1)[1] for page in data["pages"]] == [
        "",
        "about.html",
        "zizhi.html",
        "license.html",
    ]


def test_url_refused_by_the_ssrf_guard_without_allow_list(tmp_path):
    runner = _app(tmp_path).test_cli_runner()
    with SiteServer(FOOTERS / "site") as site:
        outcome = runner.invoke(args=["vet", "footer", site.url("/")])
        assert site.hits["/"] == 0
    assert outcome.exit_code == 1
    assert "回环地址" in outcome.output
