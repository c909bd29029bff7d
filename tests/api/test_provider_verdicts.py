"""GET /providers and /providers/{id} carry the worded provider verdict; the list in constant statements."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlmodel import select

from app.credentials import checks
from app.models import Provider
from app.registry.demo import load_demo
from app.trials import bench_uploads

PREFIX = "/api/v1"
DATA = Path(__file__).resolve().parents[1] / "data" / "bench"
COMPLIANT = "示例星河算力科技有限公司"
from tests.credentials.checks.test_verdicts import REGISTRY_ONLY_EN, REGISTRY_ONLY_ZH  # noqa: E402

REGISTRY_ONLY = {
    "level": "pass",
    "label_zh": REGISTRY_ONLY_ZH,
    "label_en": REGISTRY_ONLY_EN,
    "unverified": ["lookup", "footer", "trial"],
}


def _without_items(verdict: dict) -> dict:
    """The verdict without its per-item list (checked on its own)."""
    return {key: value for key, value in verdict.items() if key != "unverified_items"}


def _statements(app, client, url: str, headers: dict[str, str]) -> tuple[int, dict]:
    engine = app.extensions["gpuvet.engine"]
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        response = client.get(url, headers=headers)
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return len(seen), response.get_json()


def test_the_verdict_is_worded_with_what_was_not_verified(api, tokens, session):
    load_demo(session)
    provider = session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()
    url = f"{PREFIX}/providers/{provider.id}"
    assert api.get(url, headers=tokens["viewer"]).get_json()["verdict"]["label_en"] == "not verified"

    checks.run_check(session, provider_id=provider.id)
    detail = api.get(url, headers=tokens["viewer"]).get_json()["verdict"]
    assert _without_items(detail) == REGISTRY_ONLY
    items = {item["subject"]: item for item in detail["unverified_items"]}
    licence = items[f"licence:{provider.licences[0].id}"]
    assert (licence["kind"], licence["name"], licence["status"]) == (
        "licence",
        "京B1.B2-20259901",
        "unverified",
    )
    assert licence["reason_en"] == "not looked up" and items["footer"]["status_zh"] == "未核实"
    listed = api.get(f"{PREFIX}/providers?q={COMPLIANT}", headers=tokens["viewer"]).get_json()
    assert [item["verdict"] for item in listed["items"]] == [detail]

    # An uploaded nvidia-smi inventory (8 x H800, as claimed) is a trial: the check re-runs, trial drops out.
    offer = next(offer for offer in provider.offers if offer.gpu_model == "H800")
    raw = (DATA / "nvidia-smi" / "inventory_8xh800.csv").read_bytes()
    bench_uploads.upload_output(session, offer_id=offer.id, tool="nvidia-smi", output=raw)
    verdict = api.get(url, headers=tokens["viewer"]).get_json()["verdict"]
    # one upload verifies what it measured (by hand); the other figures and offers stay unverified
    assert verdict["level"] == "pass" and verdict["unverified"] == ["lookup", "footer", "trial"]
    assert verdict["label_zh"].startswith("通过（未核实：许可证 京B1.B2-20259901 未经官方查询；")
    unverified = {item["subject"] for item in verdict["unverified_items"]}
    assert f"offer:{offer.id}:gpu_count" not in unverified and f"offer:{offer.id}:intranet_gbps" in unverified


def test_a_failing_provider_says_fails_in_the_list_and_the_detail(api, tokens, session):
    load_demo(session)
    revoked = session.exec(select(Provider).where(Provider.legal_name == "虚构吊销通信有限公司")).one()
    checks.run_check(session, provider_id=revoked.id)
    detail = api.get(f"{PREFIX}/providers/{revoked.id}", headers=tokens["viewer"]).get_json()
    assert detail["verdict"]["level"] == "fail" and detail["verdict"]["label_zh"] == "不通过"
    listed = api.get(f"{PREFIX}/providers?per_page=100", headers=tokens["viewer"]).get_json()
    verdicts = {item["id"]: item["verdict"] for item in listed["items"]}
    assert verdicts[revoked.id] == detail["verdict"]
    assert {verdict["level"] for verdict in verdicts.values()} >= {"fail", "unchecked"}


def test_list_statements_do_not_grow_with_providers(app, api, tokens, arrange, session):
    url = f"{PREFIX}/providers?per_page=100"
    first = arrange(legal_name="语句计数00科技有限公司", uscc=None)
    checks.run_check(session, provider_id=first.id)
    _statements(app, api, url, tokens["viewer"])  # the first request also notes the token's first use
    small, body = _statements(app, api, url, tokens["viewer"])
    assert len(body["items"]) == 1 and body["items"][0]["verdict"]["level"] != "unchecked"
    for index in range(1, 12):
        provider = arrange(legal_name=f"语句计数{index:02d}科技有限公司", uscc=None)
        if index % 2:
            checks.run_check(session, provider_id=provider.id)
    large, body = _statements(app, api, url, tokens["viewer"])
    assert len(body["items"]) == 12 and all("verdict" in item for item in body["items"])
    assert large == small
