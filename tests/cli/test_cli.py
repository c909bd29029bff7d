"""Command line: providers export/import, demo load, vet identify, users create/token."""

from __future__ import annotations

import json

import pytest
from sqlmodel import select

from app.accounts import users
from app.models import AuditEntry
from app.registry.providers import create_provider
from tests.registry.conftest import BARE, awkward, empty_database, snapshot


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


# ---------------------------------------------------------------- providers export / import


def test_export_json_to_stdout_and_import_it_back(app, session, runner, tmp_path):
    create_provider(session, data=awkward())
    create_provider(session, data=BARE)
    before = snapshot(session)
    result = runner.invoke(args=["providers", "export", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format"] == "gpuvet-providers" and len(document["providers"]) == 2
    path = tmp_path / "registry.json"
    path.write_text(result.stdout, encoding="utf-8")

    empty_database(app, session)
    result = runner.invoke(args=["providers", "import", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["applied"] is True and "applied: 2 created, 0 updated" in result.stderr
    assert snapshot(session) == before
    actors = {entry.actor_name for entry in session.exec(select(AuditEntry)).all()}
    assert actors == {"cli"}


def test_export_csv_to_file_and_import_with_dry_run(app, session, runner, tmp_path):
    create_provider(session, data=awkward())
    before = snapshot(session)
    path = tmp_path / "registry.csv"
    result = runner.invoke(args=["providers", "export", "--format", "csv", "-o", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")

    empty_database(app, session)
    result = runner.invoke(args=["providers", "import", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dry_run"] is True and "preview: 1 new, 0 to update" in result.stderr
    assert snapshot(session) == []
    result = runner.invoke(args=["providers", "import", str(path)])  # a preview by default: nothing written
    assert result.exit_code == 0, result.output
    assert snapshot(session) == []
    result = runner.invoke(args=["providers", "import", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    assert snapshot(session) == before


def test_import_with_problems_lists_each_on_stderr_and_exits_1(session, runner, tmp_path):
    bad = [
        BARE,
        {"legal_name": "示例坏套餐有限公司", "offers": [{"gpu_model": "H100", "gpus_per_node": 0}]},
        {"legal_name": "x", "status": "maybe"},
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(args=["providers", "import", str(path), "--apply"])
    assert result.exit_code == 1
    assert "第 2 行, offers[0].gpus_per_node: 不能小于 1" in result.stderr  # the CLI speaks Chinese (default)
    assert "第 3 行, legal_name: " in result.stderr
    assert "第 3 行, status: 取值无效，可选：candidate" in result.stderr
    assert json.loads(result.stdout)["applied"] is False
    assert snapshot(session) == []


def test_import_format_option_and_unknown_extension(session, runner, tmp_path):
    path = tmp_path / "providers.txt"
    path.write_text("legal_name,gpu_model,gpus_per_node\n示例文本有限公司,H20,8\n", encoding="gbk")
    result = runner.invoke(args=["providers", "import", str(path)])
    assert result.exit_code == 2
    assert "--format" in result.output
    result = runner.invoke(args=["providers", "import", str(path), "--format", "csv", "--apply"])
    assert result.exit_code == 0, result.output
    assert [p["legal_name"] for p in snapshot(session)] == ["示例文本有限公司"]


# ---------------------------------------------------------------- demo load


def test_demo_load_then_refuse_then_if_empty(session, runner):
    result = runner.invoke(args=["demo", "load", "--if-empty"])
    assert result.exit_code == 0, result.output
    count = len(snapshot(session))
    assert count >= 12 and f"loaded {count}" in result.stdout

    result = runner.invoke(args=["demo", "load", "--if-empty"])
    assert result.exit_code == 0, result.output
    assert "not loaded" in result.stdout
    assert len(snapshot(session)) == count

    result = runner.invoke(args=["demo", "load"])
    assert result.exit_code == 1
    assert "示例数据已加载" in result.stderr
    assert len(snapshot(session)) == count


def test_demo_load_if_empty_skips_any_existing_provider(session, runner):
    create_provider(session, data=BARE)
    result = runner.invoke(args=["demo", "load", "--if-empty"])
    assert result.exit_code == 0
    assert len(snapshot(session)) == 1


# ---------------------------------------------------------------- vet identify

IDENTIFY_KEYS = {"input", "kind", "normalized", "province_code", "province", "valid", "problems"}


def test_vet_identify_prints_one_object_per_text(runner):
    texts = [
        "京B2-20202418",
        "粤ICP备2022099901号-1",
        "沪公网安备11010802099901号",
        "91110108EXAMPL0120",
        "hello",
    ]
    result = runner.invoke(args=["vet", "identify", *texts])
    assert result.exit_code == 0, result.output
    parsed = json.loads(result.stdout)
    assert isinstance(parsed, list) and len(parsed) == len(texts)
    for item, text in zip(parsed, texts, strict=True):
        assert set(item) >= IDENTIFY_KEYS
        assert item["input"] == text
        assert isinstance(item["valid"], bool) and isinstance(item["problems"], list)
    assert [item["kind"] for item in parsed] == ["licence", "icp_filing", "psb_filing", "uscc", "unknown"]
    licence = parsed[0]
    assert licence["province_code"] == "11" and licence["province"] == "北京"
    assert licence["categories"] == ["B2"] and licence["year"] == 2020
    assert parsed[1]["site_suffix"] == 1
    assert parsed[2]["valid"] is False and parsed[2]["problems"]
    assert parsed[3]["valid"] is True and parsed[3]["province_code"] == "11"
    assert parsed[4]["valid"] is False and parsed[4]["province_code"] is None


def test_vet_identify_needs_a_text(runner):
    assert runner.invoke(args=["vet", "identify"]).exit_code == 2


# ---------------------------------------------------------------- users


def test_users_create_with_password_stdin_and_token(session, runner):
    result = runner.invoke(
        args=["users", "create", "ana", "--role", "analyst", "--password-stdin"], input="long enough pass\n"
    )
    assert result.exit_code == 0, result.output
    user = users.authenticate(session, username="ana", password="long enough pass")
    assert user is not None and user.role == "analyst"

    result = runner.invoke(args=["users", "token", "ana"])
    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert token.startswith("gv_")
    assert users.user_for_token(session, token=token).username == "ana"


def test_users_create_refusals_exit_1_with_the_field(runner):
    result = runner.invoke(
        args=["users", "create", "bob", "--role", "viewer", "--password-stdin"], input="short\n"
    )
    assert result.exit_code == 1
    assert "password" in result.stderr
    runner.invoke(
        args=["users", "create", "bob", "--role", "viewer", "--password-stdin"], input="long enough 1\n"
    )
    again = runner.invoke(
        args=["users", "create", "bob", "--role", "viewer", "--password-stdin"], input="long enough 1\n"
    )
    assert again.exit_code == 1 and "username" in again.stderr
    assert runner.invoke(args=["users", "create", "eve", "--role", "root", "--password-stdin"]).exit_code == 2


def test_users_token_for_unknown_user(runner):
    result = runner.invoke(args=["users", "token", "nobody"])
    assert result.exit_code == 1
    assert "username" in result.stderr


def test_users_create_refuses_a_common_password_or_the_user_name(runner, session):
    for password in ("iloveyou12", "bobby-bobby"):
        result = runner.invoke(
            args=["users", "create", "bobby", "--role", "viewer", "--password-stdin"], input=f"{password}\n"
        )
        assert result.exit_code == 1
        assert "error: password: 密码" in result.stderr and "(password " not in result.stderr  # CLI: Chinese
    assert users.list_users(session) == []


def test_users_tokens_lists_and_revoke_token_revokes(runner, session, make_user):
    make_user("ana", "analyst")
    kept = runner.invoke(args=["users", "token", "ana"]).stdout.strip()
    expiring = runner.invoke(args=["users", "token", "ana", "--expires-days", "7"]).stdout.strip()
    assert users.user_for_token(session, token=kept) is not None
    listing = runner.invoke(args=["users", "tokens", "ana"])
    assert listing.exit_code == 0, listing.output
    header, newest, oldest = listing.stdout.strip().splitlines()
    assert header.split("\t") == ["id", "created", "last_used", "expires", "state"]
    newest_id, _, last_used, expires, state = newest.split("\t")
    assert (last_used, state) == ("-", "active") and expires != "-"
    oldest_id, _, last_used, expires, state = oldest.split("\t")
    assert last_used != "-" and expires == "-"
    result = runner.invoke(args=["users", "revoke-token", newest_id])
    assert result.exit_code == 0 and f"revoked token {newest_id}" in result.stdout
    assert users.user_for_token(session, token=expiring) is None
    assert users.user_for_token(session, token=kept) is not None
    assert runner.invoke(args=["users", "tokens", "ana"]).stdout.strip().splitlines()[1].endswith("\trevoked")
    assert int(oldest_id) < int(newest_id)


def test_users_token_expiry_and_revoke_refusals(runner, make_user):
    make_user("ana", "analyst")
    assert runner.invoke(args=["users", "token", "ana", "--expires-days", "0"]).exit_code == 2
    missing = runner.invoke(args=["users", "revoke-token", "12345"])
    assert missing.exit_code == 1 and "error: id:" in missing.stderr
    assert runner.invoke(args=["users", "revoke-token", "99999999999999999999"]).exit_code == 2
    assert runner.invoke(args=["users", "tokens", "nobody"]).exit_code == 1


def test_the_cli_expiry_limit_is_the_services():
    from app.cli import users as users_cli

    assert users_cli.MAX_TOKEN_DAYS == users.MAX_TOKEN_DAYS
