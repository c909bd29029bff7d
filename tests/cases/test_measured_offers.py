"""Benchmark runs stored against offers reach the ranking: measured figures with their run, link and date."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session

from app.cases import cases, registry_facts
from app.models import Offer
from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
from app.registry.providers import create_provider
from app.trials.bench_runs import claims_of
from benchmarks.compare import compare
from benchmarks.probes import PARSERS, load_probes
from tests.advice.factories import training_answers

DATA = Path(__file__).resolve().parents[1] / "data" / "bench"
TODAY = date(2026, 6, 1)
LINK = "/bench-runs/{}".format

OFFER = {
    "gpu_model": "H800",
    "gpus_per_node": 8,
    "intranet_gbps": 1,
    "public_mbps": 100,
    "bandwidth_type": "dedicated",
    "storage_type": "local_nvme",
    "nominal_iops": 500000,
    "price_month_cny": 60000,
    "datacenter_name": "示例测量机房",
}


def small_model_answers(parameters_billion: float):
    """Two 8-GPU nodes; a small model keeps the intranet need below 1 Gbps (0.1 B: 0.8 Gbps)."""
    return training_answers(
        compute={"nodes": 2, "gpus_per_node": 8, "gpu_models": ["H800"]},
        model={"parameters_billion": parameters_billion},
        checkpoint={"size_gb": 1, "acceptable_stall_seconds": 120},
    )


def beijing_offers(session: Session, legal_name: str, names: list[str], **provider: Any) -> list[Offer]:
    """A provider with a datacenter in Beijing and one OFFER (1 Gbps intranet, local NVMe, 500k IOPS) per
    name; `provider` adds to its record (e.g. licences)."""
    created = create_provider(
        session,
        data={
            "legal_name": legal_name,
            **provider,
            "datacenters": [{"name": "示例测量机房", "province": "北京", "city": "北京"}],
            "offers": [{**OFFER, "name": name} for name in names],
        },
    )
    return list(created.offers)


def beijing_licence(number: str) -> dict[str, Any]:
    """A valid B11 licence (resource collaboration included) covering Beijing, under `number`."""
    return {
        "number_raw": number,
        "business_items": ["B11"],
        "b11_includes_resource_collab": True,
        "coverage": ["北京"],
        "issued_on": "2024-03-15",
        "expires_on": "2029-03-14",
        "status": "正常",
    }


@pytest.fixture
def offers(session: Session) -> list[Offer]:
    """Two identical offers claiming 1 Gbps intranet, local NVMe and 500k IOPS, in Beijing."""
    licences = [beijing_licence("京B1.B2-20249901")]
    return beijing_offers(session, "示例测量算力有限公司", ["实测套餐", "未测套餐"], licences=licences)


def parsed(parser: str, text: str, **metadata: Any) -> list[dict[str, Any]]:
    """Samples of a recorded output read by the real parser, with the metadata the suite runner adds."""
    load_probes()
    return [sample.with_metadata(**metadata).to_dict() for sample in PARSERS[parser](text)]


def iperf3_output(mbit_s: float) -> str:
    """The recorded loopback iperf3 result, its received rate set to `mbit_s` (as a shaped link gives)."""
    data = json.loads((DATA / "iperf3_single.json").read_text())
    data["end"]["sum_received"]["bits_per_second"] = mbit_s * 1e6
    return json.dumps(data)


def quick_steps(intranet_mbit_s: float) -> dict[str, list[dict[str, Any]]]:
    """The quick suite's samples: intranet iperf3, ping, 4k random read and the disk type, all parsed."""
    return {
        "iperf3": parsed(
            "iperf3", iperf3_output(intranet_mbit_s), step="iperf3", path="intranet", purpose="throughput"
        ),
        "ping": parsed("ping", (DATA / "ping_ok.txt").read_text(), step="ping", path="gpuvet->target"),
        "fio_randread": parsed("fio", (DATA / "fio_randread.json").read_text(), step="fio_randread"),
        "disk_type": parsed("disk", (DATA / "disk_virtio_ext4.txt").read_text(), step="disk_type"),
    }


def store_run(
    session: Session, offer: Offer, steps: dict[str, list[dict[str, Any]]], finished: datetime, **extra: Any
) -> BenchRun:
    """A finished, successful run of `offer` with its steps' samples and its claim comparisons."""
    server = TrialServer(
        provider_id=offer.provider_id,
        offer_id=offer.id,
        name="试用机",
        host="192.0.2.10",
        secret_encrypted="-",
    )
    session.add(server)
    session.flush()
    claims = claims_of(offer)
    from benchmarks.sample import Sample

    samples = [Sample.from_dict(data) for rows in steps.values() for data in rows]
    run = BenchRun(
        trial_server_id=server.id,  # type: ignore[arg-type]
        provider_id=offer.provider_id,
        offer_id=offer.id,
        suite="quick",
        state=RunState.succeeded,
        claims=claims.__dict__,
        comparisons=[comparison.to_dict() for comparison in compare(claims, samples)],
        created_at=finished - timedelta(minutes=5),
        finished_at=finished,
        **extra,
    )
    session.add(run)
    session.flush()
    for position, (name, rows) in enumerate(steps.items()):
        session.add(
            BenchStep(run_id=run.id, position=position, step=name, probe=name, status="ok", samples=rows)
        )
    session.commit()
    return run


def at(days_before: int) -> datetime:
    return datetime(TODAY.year, TODAY.month, TODAY.day, 9, tzinfo=UTC) - timedelta(days=days_before)


def facts_by_name(session: Session) -> dict[str, Any]:
    return {o.name: o for o in registry_facts.offer_facts(session, today=TODAY, run_link=LINK)}


def test_stored_runs_become_measurements_with_source_run_link_and_date(session, offers):
    run = store_run(session, offers[0], quick_steps(200), at(3))
    facts = facts_by_name(session)
    measured = facts["实测套餐"].measurements
    assert facts["未测套餐"].measurements == {}
    intranet = measured["intranet_gbps"]
    assert (intranet.value, intranet.unit, intranet.source) == (0.2, "Gbps", "measured")
    assert (intranet.run_id, intranet.link, intranet.at.date()) == (
        run.id,
        f"/bench-runs/{run.id}",
        at(3).date(),
    )
    # the recorded fio run and the virtio disk of the test machine, read by the real parsers
    fio = json.loads((DATA / "fio_randread.json").read_text())
    assert measured["read_iops"].value == round(fio["jobs"][0]["read"]["iops"])
    assert measured["storage_type"].value == "cloud_disk"
    assert measured["rtt_ms"].unit == "ms" and measured["rtt_ms"].value > 0

    advice = cases.advise_answers(session, answers=small_model_answers(0.01), today=TODAY)
    data = {o["offer_name"]: o for o in advice.to_dict()["offers"]}
    figures = {f["key"]: f for f in data["实测套餐"]["figures"]}
    assert figures["intranet_gbps"]["source"] == "measured" and figures["intranet_gbps"]["run_id"] == run.id
    assert figures["intranet_gbps"]["measured_on"] == at(3).date().isoformat()
    assert (
        figures["storage_type"]["value"] == "cloud_disk" and figures["storage_type"]["source"] == "measured"
    )
    assert {f["key"]: f["source"] for f in data["未测套餐"]["figures"]}["intranet_gbps"] == "claimed"


def test_1_gbps_claimed_but_200_mbit_measured_ranks_lower_and_is_excluded_where_the_need_is_above(
    session, offers
):
    store_run(session, offers[0], quick_steps(200), at(3))
    # 0.01 B parameters: about 0.08 Gbps needed; both fit, the measured one falls with the reason
    data = {
        o["offer_name"]: o
        for o in cases.advise_answers(session, answers=small_model_answers(0.01), today=TODAY).to_dict()[
            "offers"
        ]
    }
    measured, claimed = data["实测套餐"], data["未测套餐"]
    assert (
        not measured["excluded"]
        and measured["rank"] > claimed["rank"]
        and measured["score"] < claimed["score"]
    )
    below = next(m for m in measured["marks"] if m["code"] == "evidence.below_claim.intranet_gbps")
    assert "20%" in below["message_en"] and "20%" in below["message_zh"] and below["source"] == "measured"
    assert measured["score_factor"] < 1
    # 0.1 B parameters: about 0.8 Gbps needed; the claim (0.94 Gbps of goodput) fits, the measurement does not
    data = {
        o["offer_name"]: o
        for o in cases.advise_answers(session, answers=small_model_answers(0.1), today=TODAY).to_dict()[
            "offers"
        ]
    }
    assert not data["未测套餐"]["excluded"]
    (reason,) = [r for r in data["实测套餐"]["excluded_because"] if r["code"] == "intranet.too_slow"]
    assert reason["source"] == "measured" and "0.2 Gbps" in reason["message_en"]


def test_a_stale_measurement_is_labelled_and_weighs_less(session, offers):
    store_run(session, offers[0], quick_steps(1000), at(120))
    store_run(session, offers[1], quick_steps(1000), at(10))
    data = {
        o["offer_name"]: o
        for o in cases.advise_answers(session, answers=small_model_answers(0.01), today=TODAY).to_dict()[
            "offers"
        ]
    }
    stale, fresh = data["实测套餐"], data["未测套餐"]
    assert "intranet_gbps" in stale["stale"] and fresh["stale"] == []
    assert {f["key"]: f["stale"] for f in stale["figures"]}["intranet_gbps"] is True
    mark = next(m for m in stale["marks"] if m["code"] == "evidence.stale")
    assert "90" in mark["message_zh"] and "stale" in mark["message_en"]
    intranet = {r["criterion"]: r for r in stale["reasons"]}["intranet"]
    assert intranet["score"] < {r["criterion"]: r for r in fresh["reasons"]}["intranet"]["score"]
    assert "stale" in intranet["message_en"] and "过期" in intranet["message_zh"]
    assert stale["score"] < fresh["score"] and stale["rank"] > fresh["rank"]


def test_a_fresh_run_beats_a_stale_one_and_an_executed_run_an_uploaded_one(session, offers):
    old = store_run(session, offers[0], quick_steps(900), at(200))
    new = store_run(session, offers[0], quick_steps(300), at(5))
    measured = facts_by_name(session)["实测套餐"].measurements
    assert measured["intranet_gbps"].run_id == new.id and old.id != new.id
    uploaded = store_run(session, offers[0], quick_steps(100), at(1), origin="uploaded")
    measured = facts_by_name(session)["实测套餐"].measurements
    assert measured["intranet_gbps"].run_id == new.id != uploaded.id


def test_failed_runs_are_not_measurements(session, offers):
    run = store_run(session, offers[0], quick_steps(200), at(3))
    run.state = RunState.failed
    session.add(run)
    session.commit()
    assert facts_by_name(session)["实测套餐"].measurements == {}


def test_the_case_page_names_the_source_of_an_exclusion_and_links_the_run(session, offers, login):
    now = datetime.now(UTC)
    run = store_run(session, offers[0], quick_steps(200), now - timedelta(days=120))
    answers = small_model_answers(0.1).model_dump(mode="json", exclude_none=True)
    answers["checkpoint"] = {"size_gb": 100, "acceptable_stall_seconds": 120}
    case = cases.create_case(session, answers=answers, owner=cases.Actor(None, "test"))
    client = login("viewer")
    html = client.get(f"/cases/{case.id}").get_data(as_text=True)
    excluded = html.split('id="excluded"')[1]
    assert f'href="/bench-runs/{run.id}"' in excluded
    # measured 0.2 Gbps against about 0.8 Gbps needed: excluded on the measurement, which says so
    assert 'data-code="intranet.too_slow"' in excluded and 'data-source="measured"' in excluded
    # the unmeasured offer is ranked; its checkpoint write rate is only typical for NVMe, so nothing to flag
    ranked = html.split('id="excluded"')[0]
    assert "未测套餐" in ranked
    client.get("/lang/en")
    english = client.get(f"/cases/{case.id}").get_data(as_text=True)
    assert "measured" in english.split('id="excluded"')[1]


def test_a_stale_measured_disk_marks_the_ranked_offer_measure_first_on_the_page(session, offers, login):
    now = datetime.now(UTC)
    run = store_run(session, offers[0], quick_steps(1000), now - timedelta(days=120))
    answers = small_model_answers(0.01).model_dump(mode="json", exclude_none=True)
    answers["checkpoint"] = {"size_gb": 100, "acceptable_stall_seconds": 120}
    case = cases.create_case(session, answers=answers, owner=cases.Actor(None, "test"))
    html = login("viewer").get(f"/cases/{case.id}").get_data(as_text=True)
    row = html.split(f'id="offer-{offers[0].id}"')[1].split("</details>")[0]
    # the run found a virtual disk: its write rate is only typical for a cloud disk, below the 833 MB/s needed
    assert "measure-first" in row and "先实测再签约" in row
    assert f'href="/bench-runs/{run.id}"' in row and 'class="badge text-bg-warning stale"' in row


def test_the_provider_checklist_names_the_suite_that_settles_a_measure_first_offer(session, offers):
    store_run(session, offers[0], quick_steps(1000), at(3))  # a virtual disk: writes only typical for it
    answers = small_model_answers(0.01).model_dump(mode="json", exclude_none=True)
    answers["checkpoint"] = {"size_gb": 100, "acceptable_stall_seconds": 120}
    case = cases.create_case(session, answers=answers, owner=cases.Actor(None, "test"))
    advice = cases.advise_case(session, case_id=case.id, today=TODAY)
    entries = cases.provider_checklist(advice, provider_id=offers[0].provider_id, ticks=[])
    entry = next(e.to_dict() for e in entries if e.item.key == "fio_checkpoint_write")
    note = next(ev for ev in entry["evidence"] if ev["kind"] == "measure_first")
    assert note["count"] == 1 and "measure before signing" in note["message_en"]  # the command is in the fold
    assert "--suite standard" in entry["bench_command"] and "flask" not in note["message_en"]
    assert "--param write_size_mib=10240" in entry["bench_command"]


def test_measured_words_tick_the_checklist_against_the_claim(session, offers):
    run = store_run(session, offers[0], quick_steps(1000), at(3))
    case = cases.create_case(
        session, answers=small_model_answers(0.01).model_dump(mode="json"), owner=cases.Actor(None, "t")
    )
    advice = cases.advise_case(session, case_id=case.id, today=TODAY, run_link=LINK)
    entries = {
        e.item.key: e for e in cases.provider_checklist(advice, provider_id=offers[0].provider_id, ticks=[])
    }
    storage = entries["storage_type_evidence"].to_dict()
    # the run found a virtual disk where the offer says local NVMe: the item fails, linked to the run
    assert storage["auto_status"] == "failed"
    (evidence,) = [ev for ev in storage["evidence"] if ev["kind"] == "measurement"]
    assert evidence["value"] == "cloud_disk" and evidence["link"] == f"/bench-runs/{run.id}"
    assert "the offer says local_nvme" in evidence["message_en"]
