"""Knowledge YAML files load through their schema: required keys, both languages, no text cut off."""

from __future__ import annotations

import pytest
import yaml

from app.advice import knowledge
from app.advice.knowledge_schema import (
    KNOWLEDGE_ROOT,
    SCHEMAS,
    KnowledgeError,
    check,
    load_checked,
    text_problem,
)

FILES = sorted(path.relative_to(KNOWLEDGE_ROOT).as_posix() for path in KNOWLEDGE_ROOT.rglob("*.yaml"))


@pytest.mark.parametrize("name", FILES)
def test_every_knowledge_file_follows_its_schema(name):
    assert name in SCHEMAS, f"{name} has no schema"
    load_checked(KNOWLEDGE_ROOT / name)


@pytest.mark.parametrize(
    "text",
    [
        "when gradient sync needs more bandwidth,",
        "节点间梯度同步若需要超过约 25 Gbps 的有效带宽，",
        "状态、有效期、",
        "check the following:",
        "RDMA (RoCE / InfiniBand is needed",
        "RDMA（RoCE 或 InfiniBand",
        "the word “独享 was cut",
        'a "quoted word was cut',
        "往返不超过 {network_budget_ms ms",
        "   ",
    ],
)
def test_cut_or_broken_texts_are_named(text):
    assert text_problem(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "collective traffic over RDMA (RoCE / InfiniBand) is taken as 90% of the nominal rate",
        "RDMA（RoCE / InfiniBand）上集合通信按标称带宽的 90% 估算",
        "状态“正常”、未过期、含 B11",
        "round trip within {network_budget_ms} ms",
        "the datacenter's province is covered",
    ],
)
def test_whole_texts_pass(text):
    assert text_problem(text) is None


def assumptions_text() -> str:
    return (KNOWLEDGE_ROOT / "advice" / "assumptions.yaml").read_text(encoding="utf-8")


def test_an_unquoted_comma_in_a_flow_mapping_is_caught():
    # the way assumptions.yaml used to cut a text: YAML ends a plain scalar at ", " inside {...}
    line = "  equipment_delay_ms: {value: 5, source: assumption,\n"
    text = assumptions_text()
    start = text.index(line)
    end = text.index("}", start) + 1
    cut = line + "    zh: 设备另加约 5 ms, en: switches, routers and access gear add about 5 ms}"
    document = yaml.safe_load(text[:start] + cut + text[end:])
    with pytest.raises(KnowledgeError) as caught:
        check("advice/assumptions.yaml", document)
    assert "latency.equipment_delay_ms.routers and access gear add about 5 ms" in str(caught.value)
    assert "像是在逗号处被截断" in str(caught.value)


def test_a_quoted_text_ending_in_a_comma_is_caught_with_its_path():
    document = yaml.safe_load(assumptions_text())
    document["network"]["rdma_efficiency"]["en"] = "collective traffic over RDMA is taken as 90%,"
    with pytest.raises(KnowledgeError) as caught:
        check("advice/assumptions.yaml", document)
    assert "network.rdma_efficiency.en" in str(caught.value)


def test_required_keys_and_pairs_are_enforced_and_extra_keys_tolerated():
    checklist = yaml.safe_load((KNOWLEDGE_ROOT / "advice" / "checklist.yaml").read_text(encoding="utf-8"))
    checklist["items"][0]["suite_note"] = "extra keys are fine"
    check("advice/checklist.yaml", checklist)
    del checklist["items"][0]["pass_en"]
    checklist["items"][1]["title_zh"] = ""
    with pytest.raises(KnowledgeError) as caught:
        check("advice/checklist.yaml", checklist)
    message = str(caught.value)
    assert "items[0].pass_en" in message and "items[1].title_zh" in message
    scoring = {"priority_multiplier": 1.5, "criteria": {"cost": {"label_zh": "月成本"}}, "weights": {}}
    with pytest.raises(KnowledgeError) as caught:
        check("advice/scoring.yaml", scoring)
    assert "criteria.cost.label_en" in str(caught.value)


def test_the_advice_loader_refuses_a_file_that_breaks_its_schema(tmp_path, monkeypatch):
    (tmp_path / "scenarios.yaml").write_text(
        "kinds:\n  x: {label_zh: 推理, label_en: inference, sensitive_zh: 时延, sensitive_en: latency,\n"
        "      guidance_zh: 机房离用户近, guidance_en: close to users, cheap}\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(knowledge, "KNOWLEDGE_DIR", tmp_path)
    knowledge.load.cache_clear()
    try:
        with pytest.raises(KnowledgeError, match=r"kinds\.x\.cheap"):
            knowledge.load("scenarios")
    finally:
        knowledge.load.cache_clear()
