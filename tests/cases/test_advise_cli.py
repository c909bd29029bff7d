"""`flask advise ANSWERS.json` with every example file, and with bad answers."""

from __future__ import annotations

import json

import pytest

from tests.cases.conftest import EXAMPLES, KINDS, codes, offers_named


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.mark.parametrize("kind", KINDS)
def test_advise_prints_requirements_offers_checklist_and_faq(runner, demo_loaded, kind):
    result = runner.invoke(args=["advise", str(EXAMPLES / f"{kind}.json")])
    assert result.exit_code == 0, result.output
    advice = json.loads(result.stdout)
    assert {"requirements", "offers", "checklist", "faq"} <= set(advice)
    for requirement in advice["requirements"]:
        assert {"value", "unit", "arithmetic_zh", "arithmetic_en"} <= set(requirement)
    eligible = [offer for offer in advice["offers"] if not offer["excluded"]]
    assert eligible and all(offer["score"] is not None and offer["reasons"] for offer in eligible)
    excluded = [offer for offer in advice["offers"] if offer["excluded"]]
    assert excluded and all(offer["excluded_because"] for offer in excluded)
    (b2_only,) = offers_named(advice["offers"], "虚构极光云科技有限公司")
    assert "licence.no_b11" in codes(b2_only)
    assert all(item["command"] or item["how_zh"] for item in advice["checklist"])
    assert all(item["answer_zh"] and item["answer_en"] for item in advice["faq"])


def test_top_limits_the_offers(runner, demo_loaded):
    result = runner.invoke(args=["advise", str(EXAMPLES / "offline_batch.json"), "--top", "1"])
    assert result.exit_code == 0, result.output
    advice = json.loads(result.stdout)
    assert [offer["excluded"] for offer in advice["offers"]] == [False, True]
    assert advice["summary"]["offers"] == 27


def test_today_decides_which_licences_are_in_force(runner, demo_loaded):
    result = runner.invoke(args=["advise", str(EXAMPLES / "offline_batch.json"), "--today", "2099-01-01"])
    assert result.exit_code == 0, result.output
    offers = json.loads(result.stdout)["offers"]
    licence_codes = {code for offer in offers for code in codes(offer) if code.startswith("licence.")}
    assert all(any(code.startswith("licence.") for code in codes(offer)) for offer in offers)
    # every real licence has lapsed by then; the ICP filing shown as a licence never was one
    assert licence_codes == {"licence.not_valid", "licence.not_a_licence"}


def test_bad_answers_exit_1_naming_each_field(runner, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            {"workload": {"kind": "x"}, "compute": {"gpus_per_node": -1}, "site": {"office_city": "火星"}}
        ),
        encoding="utf-8",
    )
    result = runner.invoke(args=["advise", str(path)])
    assert result.exit_code == 1
    assert "workload.kind" in result.stderr and "compute.gpus_per_node" in result.stderr
    assert "未知城市“火星”" in result.stderr
    path.write_text("{not json", encoding="utf-8")
    result = runner.invoke(args=["advise", str(path)])
    assert result.exit_code == 1 and "malformed JSON" in result.stderr
