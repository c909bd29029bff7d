"""The checklist knowledge base, selection by workload kind, and automatic ticks from evidence."""

from __future__ import annotations

from datetime import datetime

import pytest

from app.advice import checklist
from app.advice.facts import CheckFacts, FindingFacts, Measurement
from app.advice.requirements import compute_needs
from tests.advice.factories import inference_answers, offer, provider, training_answers


def keys(entries):
    return [entry.item.key for entry in entries]


def test_every_item_says_what_how_and_when_it_passes_in_both_languages():
    for item in checklist.items():
        for text in (item.title_zh, item.title_en, item.how_zh, item.how_en, item.pass_zh, item.pass_en):
            assert text and text.strip(), item.key
        assert bool(item.target_zh) == bool(item.target_en), item.key


def test_items_carry_the_exact_commands():
    commands = {item.key: item.command for item in checklist.items()}
    assert commands["intranet_iperf3"] == "iperf3 -c NODE_A_INTRANET_IP -t 30 -P 4 -J"
    assert commands["fio_randread"].startswith("fio --name=randread --rw=randread --bs=4k --numjobs=32")
    assert commands["gpu_inventory"].startswith(
        "nvidia-smi --query-gpu=index,name,memory.total,driver_version"
    )
    assert "lsblk -d -o NAME,ROTA,TRAN,MODEL,SIZE" in commands["storage_type_evidence"]


def test_selection_follows_the_workload_kind():
    training = keys(checklist.build(compute_needs(training_answers())))
    inference = keys(checklist.build(compute_needs(inference_answers())))
    assert {"intranet_iperf3", "rdma_nccl", "fio_checkpoint_write", "gpu_utilisation_trial"} <= set(training)
    assert "inference_latency_trial" not in training
    assert "inference_latency_trial" in inference
    assert not {"intranet_iperf3", "rdma_nccl", "fio_checkpoint_write"} & set(inference)


def test_targets_carry_the_case_numbers():
    entries = {entry.item.key: entry for entry in checklist.build(compute_needs(training_answers()))}
    assert entries["intranet_iperf3"].target_zh == "有效带宽至少 56 Gbps（以太网线速约 59.6 Gbps）"
    assert entries["fio_checkpoint_write"].target_en == "at least 833 MB/s (100 GB within 120 s)"
    # no read rate given, so the IOPS target is left out rather than guessed
    assert entries["fio_randread"].target_zh is None


def test_findings_fail_related_items_and_a_clean_check_passes_them():
    needs = compute_needs(training_answers())
    finding = FindingFacts(
        "licence.coverage", "blocker", "机房不在许可范围", "datacenter outside coverage", 3, link="/x"
    )
    checked = provider(
        1, check=CheckFacts(at=datetime(2026, 5, 1), link="/providers/1/credentials"), findings=(finding,)
    )
    entries = {
        e.item.key: e for e in checklist.build(needs, provider=checked, offers=[offer(1, provider=checked)])
    }
    assert entries["licence_b11_coverage"].status == checklist.FAILED
    assert entries["licence_b11_coverage"].evidence[0]["message_en"] == "datacenter outside coverage"
    assert entries["company_identity"].status == checklist.PASSED
    assert entries["company_identity"].evidence[0]["link"] == "/providers/1/credentials"
    # items without red flags are left to people or benchmarks
    assert entries["sla_contract"].status == checklist.OPEN
    unchecked = {e.item.key: e for e in checklist.build(needs, provider=provider(2), offers=[offer(2)])}
    assert unchecked["licence_b11_coverage"].status == checklist.OPEN


def test_measurements_pass_or_fail_against_the_case_numbers():
    needs = compute_needs(training_answers())
    fast = offer(1, measurements={"intranet_gbps": Measurement(80, "Gbps", link="/runs/1")})
    slow = offer(2, measurements={"intranet_gbps": Measurement(30, "Gbps")})
    entry = {e.item.key: e for e in checklist.build(needs, provider=provider(), offers=[fast])}[
        "intranet_iperf3"
    ]
    assert entry.status == checklist.PASSED and entry.evidence[0]["link"] == "/runs/1"
    entry = {e.item.key: e for e in checklist.build(needs, provider=provider(), offers=[fast, slow])}[
        "intranet_iperf3"
    ]
    assert entry.status == checklist.FAILED


def test_gpus_tick_against_the_claim_and_the_evidence_names_run_and_date():
    needs = compute_needs(training_answers(compute={"gpus_per_node": 2}))
    at = datetime(2026, 5, 20, 9)
    short = Measurement(4, "GPUs", link="/bench-runs/7", at=at, run_id=7, origin="uploaded")
    full = Measurement(8, "GPUs", link="/bench-runs/8", at=at, run_id=8)

    def gpu_entry(measured):
        built = checklist.build(
            needs, provider=provider(), offers=[offer(1, measurements={"gpu_count": measured})]
        )
        return next(entry for entry in built if entry.item.key == "gpu_inventory")

    # 4 GPUs found on an 8-GPU offer: enough for the case, but not what was sold
    entry = gpu_entry(short)
    assert entry.status == checklist.FAILED
    (evidence,) = entry.evidence
    assert (
        evidence["run_id"] == 7
        and evidence["measured_on"] == "2026-05-20"
        and evidence["link"] == "/bench-runs/7"
    )
    assert (
        "run #7, 2026-05-20, uploaded" in evidence["message_en"] and "required >= 8" in evidence["message_en"]
    )
    assert "GPU 数量 4 卡（" in evidence["message_zh"] and "GPUs" not in evidence["message_zh"]
    assert gpu_entry(full).status == checklist.PASSED


def test_hand_ticks_apply_per_provider_and_keep_the_automatic_status():
    needs = compute_needs(training_answers())
    at = datetime(2026, 5, 2, 10, 30)
    ticks = [
        checklist.Tick("sla_contract", None, True, "alice", at, "合同第 7 条", "https://docs.example/sla"),
        checklist.Tick("licence_b11_coverage", 1, True, "bob", at, "法务已人工复核"),
    ]
    case_level = {e.item.key: e for e in checklist.build(needs, ticks=ticks)}
    assert case_level["sla_contract"].effective_status == checklist.PASSED
    assert case_level["licence_b11_coverage"].tick is None
    blocked = provider(1, check=CheckFacts(at=at), findings=(FindingFacts("r", "blocker", "x", "x", 1),))
    entry = {e.item.key: e for e in checklist.build(needs, provider=blocked, offers=[offer(1)], ticks=ticks)}
    data = entry["licence_b11_coverage"].to_dict()
    assert (data["status"], data["auto_status"]) == ("passed", "failed")
    assert data["tick"]["by"] == "bob" and data["tick"]["at"].startswith("2026-05-02T10:30")


def test_an_unknown_condition_in_the_knowledge_base_is_refused(monkeypatch):
    from app.advice import knowledge

    original = knowledge.load("checklist")
    broken = {"items": [*original["items"], {**original["items"][0], "key": "extra", "when": ["nonsense"]}]}
    checklist.items.cache_clear()
    monkeypatch.setattr(checklist, "load", lambda name: broken)
    with pytest.raises(ValueError, match="unknown condition"):
        checklist.items()
    monkeypatch.undo()
    checklist.items.cache_clear()
    assert checklist.items()
