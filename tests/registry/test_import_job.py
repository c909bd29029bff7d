"""Large imports: checked without a write lock, run as a job with progress, written in one transaction."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import time

import pytest
from sqlmodel import select

from app.models.jobs import Job, JobState
from app.models.uploads import ImportUpload
from app.registry.providers import create_provider
from app.registry.transfer.importing import import_providers
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - fixture
from tests.registry.conftest import BARE, awkward, snapshot


def _document(*providers) -> bytes:
    return json.dumps({"providers": list(providers)}, ensure_ascii=False).encode()


def _many(count: int) -> list[dict]:
    return [{"legal_name": f"示例批量{index:05d}有限公司"} for index in range(count)]


def _upload(client, content: bytes, filename: str, **form):
    data = {"file": (io.BytesIO(content), filename), **form}
    return client.post("/transfer/import", data=data, content_type="multipart/form-data")


@pytest.fixture
def sqlite_file(database_url) -> str:
    if not database_url.startswith("sqlite"):
        pytest.skip("the write lock held here is SQLite's")
    return database_url.removeprefix("sqlite:///")


def test_a_dry_run_takes_no_write_lock(session, sqlite_file):
    holder = sqlite3.connect(sqlite_file, timeout=0.1)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database's write lock
    try:
        started = time.monotonic()
        report = import_providers(session, data=_document(awkward(), BARE), format="json", dry_run=True)
        elapsed = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert report.ok, report.problems
    assert elapsed < 10, "the dry run waited for the write lock"
    assert snapshot(session) == []


def test_checking_reads_while_another_writer_holds_the_lock_and_previews_the_update(session, sqlite_file):
    create_provider(session, data=awkward())
    holder = sqlite3.connect(sqlite_file, timeout=0.1)
    holder.execute("BEGIN IMMEDIATE")
    try:
        report = import_providers(
            session, data=_document(awkward(legal_name="另一家有限公司")), format="json", dry_run=True
        )
    finally:
        holder.rollback()
        holder.close()
    assert report.ok, report.problems
    [plan] = report.plans
    assert plan.action == "update" and [(c.field, c.new) for c in plan.changes] == [
        ("legal_name", "另一家有限公司")
    ]


def test_progress_is_reported_while_rows_are_checked(session):
    calls = []
    report = import_providers(
        session, data=_document(*_many(250)), format="json", progress=lambda *call: calls.append(call)
    )
    assert report.ok and report.created == 250
    done = [call[0] for call in calls]
    assert done == sorted(done) and done[0] == 0 and done[-1] == 250 and len(calls) > 10
    assert {call[1] for call in calls} == {250}


def _apply_fields(html: str) -> dict[str, str]:
    form = html[html.index('id="import-apply"') :]
    return dict(re.findall(r'name="(upload|preview_job)" value="(\d+)"', form[: form.index("</form>")]))


def test_a_large_web_import_is_previewed_then_applied_by_jobs(
    app,
    login,
    session,
    immediate_jobs,  # noqa: F811
):
    app.config["IMPORT_INLINE_MAX_BYTES"] = 1024
    client = login("analyst")
    content = _document(*_many(120))
    assert len(content) > 1024
    response = _upload(client, content, "big.json")
    assert response.status_code == 303 and "/transfer?job=" in response.location
    preview = session.exec(select(Job).where(Job.kind == "providers.import")).one()
    assert preview.state == JobState.succeeded, preview.error
    assert preview.progress["done"] == 120 and preview.progress["total"] == 120
    assert len(session.exec(select(ImportUpload)).all()) == 1  # kept for the apply
    html = client.get(response.location).get_data(as_text=True)
    assert "预览：新增 120 家" in html and f'id="job-{preview.id}"' in html
    assert snapshot(session) == []

    applied = client.post("/transfer/apply", data=_apply_fields(html))
    assert applied.status_code == 303
    html = client.get(applied.location).get_data(as_text=True)
    assert "已应用：新增 120 家供应商" in html
    assert len(snapshot(session)) == 120
    session.expire_all()
    assert session.exec(select(ImportUpload)).all() == []  # not kept once applied


def test_a_large_web_import_with_problems_writes_nothing_and_lists_them(app, login, session, immediate_jobs):  # noqa: F811
    app.config["IMPORT_INLINE_MAX_BYTES"] = 1024
    client = login("analyst")
    providers = _many(120)
    providers[7]["registered_province"] = "火星"
    response = _upload(client, _document(*providers), "big.json")
    html = client.get(response.location).get_data(as_text=True)
    assert "发现 1 个问题，没有导入任何数据" in html and "注册省份" in html
    assert 'id="import-apply"' not in html
    assert snapshot(session) == []


def test_a_queued_import_page_waits_for_the_worker(app, login, session):
    app.config["IMPORT_INLINE_MAX_BYTES"] = 1024
    app.config["JOBS_IMMEDIATE"] = False
    app.extensions.pop("gpuvet.huey", None)
    app.extensions.pop("gpuvet.huey_task", None)
    client = login("analyst")
    response = _upload(client, _document(*_many(120)), "big.json")
    html = client.get(response.location).get_data(as_text=True)
    assert 'id="import-waiting"' in html and 'data-reload-when-done="true"' in html
    assert snapshot(session) == []


def test_other_jobs_are_not_shown_as_imports(app, login):
    client = login("viewer")
    assert client.get("/transfer?job=999999").status_code == 404
    assert client.get("/transfer?job=99999999999999999999999").status_code == 404
    assert client.get("/transfer?job=²").status_code == 404
