"""`nvidia-smi -q` text and `-q -x` XML: real outputs of drivers 410 to 580 (sources in the data README).

Expected values are typed from reading the files, not from running the parser.
"""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session

from app.trials import bench_uploads
from benchmarks.compare import Claims, Verdict, compare
from benchmarks.probes import parse
from benchmarks.sample import ParseError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values
from tests.cases import test_measured_offers as measured

GPU = DATA / "nvidia-smi"
H200 = DATA / "real_h200"
offers = measured.offers  # two offers of one provider: 8x H800


def readings(samples: list, index: int = 0) -> dict:
    """metric -> value of one GPU."""
    return {s.metric: s.value for s in samples if s.metadata.get("gpu_index") == index}


def health(samples: list) -> dict[str, list]:
    """The gpu_health comparisons by subject."""
    found: dict[str, list] = {}
    for comparison in compare(Claims(), samples):
        if comparison.check == "gpu_health":
            found.setdefault(comparison.subject, []).append(comparison)
    return found


# ---------------------------------------------------------------- driver 580, recorded on the H200 machine
def test_q_of_an_idle_h200_reads_like_the_health_query():
    samples = parse("nvidia-smi", (H200 / "q_idle.txt").read_text())
    assert (
        readings(samples).items()
        >= {
            "gpu": "NVIDIA H200",
            "gpu_memory_total": 143771,
            "gpu_memory_used": 0,
            "gpu_utilization": 0,
            "gpu_temperature": 38,
            "gpu_power_draw": 78.78,  # "Average Power Draw" (the instantaneous one reads 78.69)
            "gpu_power_limit": 700,
            "gpu_sm_clock": 345,
            "gpu_sm_clock_max": 1980,
            "gpu_pcie_gen": 5,
            "gpu_pcie_gen_max": 5,
            "gpu_pcie_width": 16,
            "gpu_pcie_width_max": 16,
            "gpu_ecc_uncorrected": 0,
            "gpu_ecc_corrected": 0,
        }.items()
    )
    meta = samples[0].metadata
    assert meta["pci.bus_id"] == "00000000:00:06.0"
    assert meta["uuid"] == "GPU-ea30c399-4b94-d226-1a44-ddc2f7199b8f"
    assert meta["driver_version"] == "580.159.04" and meta["cuda_version"] == "13.0"
    assert meta["clocks_event_reasons.active"] == "0x0000000000000001"  # Idle: Active
    assert meta["retired_pages.pending"] == "N/A" and meta["remapped_rows.pending"] == "No"
    assert one(samples, "gpu_count") == 1 and samples[-1].metadata["models"] == ["NVIDIA H200"]


def test_q_under_load_names_the_power_cap_like_the_health_query_does():
    q_samples = parse("nvidia-smi", (H200 / "q_load.txt").read_text())
    assert (
        readings(q_samples).items()
        >= {
            "gpu_utilization": 99,
            "gpu_memory_utilization": 22,
            "gpu_memory_used": 883,
            "gpu_temperature": 59,
            "gpu_power_draw": 466.35,
            "gpu_sm_clock": 1440,
        }.items()
    )
    assert q_samples[0].metadata["clock_reasons_active"] == ["SW Power Cap"]
    csv_samples = parse("nvidia-smi", (H200 / "health_load.csv").read_text())
    from_q, from_csv = health(q_samples), health(csv_samples)
    assert [c.reason_en for c in from_q["gpu:0"]] == [c.reason_en for c in from_csv["gpu:0"]]
    assert "software power cap" in from_q["gpu:0"][0].reason_en


def test_q_with_a_display_selection_gives_only_what_it_prints():
    samples = parse("nvidia-smi", (H200 / "q_d_perf_load.txt").read_text())
    assert values(samples, "gpu") == []  # -d PERFORMANCE,UTILIZATION,CLOCK,POWER prints no product name
    assert readings(samples) == {
        "gpu_utilization": 100,
        "gpu_memory_utilization": 22,
        "gpu_power_draw": 505.12,
        "gpu_power_limit": 700,
        "gpu_sm_clock": 1440,
        "gpu_sm_clock_max": 1980,
        "gpu_performance_state": 0,  # P0
    }
    assert samples[0].metadata["clocks_event_reasons.active"] == "0x0000000000000004"
    assert "software power cap" in health(samples)["gpu:0"][0].reason_en  # no name printed, still checked


def test_q_x_of_the_same_machine_reads_like_its_text():
    xml = parse("nvidia-smi", (H200 / "q_x_idle.xml").read_text())
    text = parse("nvidia-smi", (H200 / "q_idle.txt").read_text())
    assert readings(xml)["gpu_power_draw"] == 78.76 and readings(text)["gpu_power_draw"] == 78.78
    same = {metric: value for metric, value in readings(xml).items() if metric != "gpu_power_draw"}
    assert same == {metric: value for metric, value in readings(text).items() if metric != "gpu_power_draw"}
    assert xml[0].metadata["clocks_event_reasons.active"] == "0x0000000000000001"
    assert xml[0].metadata["layout"] == "query-xml"


# ---------------------------------------------------------------- older drivers, several GPUs
def test_q_of_driver_535_with_eight_a100():
    samples = parse("nvidia-smi", (GPU / "q_535_8xa100.txt").read_text())
    assert one(samples, "gpu_count") == 8
    assert values(samples, "gpu") == ["NVIDIA A100-SXM4-40GB"] * 8
    assert values(samples, "gpu_power_draw") == [52.12, 53.16, 51.79, 52.33, 53.05, 55.01, 52.17, 53.10]
    assert values(samples, "gpu_memory_total") == [40960] * 8
    assert one(samples, "gpu_temperature", gpu_index=4) == 23
    assert one(samples, "gpu_pcie_gen_max", gpu_index=0) == 4  # the GPU's maximum, not "Host Max: 3"
    buses = [s.metadata["pci.bus_id"] for s in samples if s.metric == "gpu"]
    assert buses[0] == "00000000:2F:00.0" and buses[-1] == "00000000:CD:00.0"
    assert list(health(samples)) == [""] and health(samples)[""][0].verdict is Verdict.passed


def test_q_of_eight_rtx_4090_without_ecc_is_not_failed_for_it():
    samples = parse("nvidia-smi", (GPU / "q_550_8x4090.txt").read_text())
    assert one(samples, "gpu_count") == 8
    assert values(samples, "gpu_ecc_uncorrected") == []
    assert "ecc.errors.uncorrected.volatile.total" in samples[0].metadata["not_available"]
    assert readings(samples, 2).items() >= {"gpu_power_draw": 27.62, "gpu_temperature": 26}.items()
    assert one(samples, "gpu_power_limit", gpu_index=0) == 450
    assert one(samples, "gpu_pcie_gen", gpu_index=0) == 1  # Gen 1 of 4 at idle: power saving
    assert list(health(samples)) == [""] and health(samples)[""][0].verdict is Verdict.passed


def test_q_of_driver_565_with_eight_h100():
    samples = parse("nvidia-smi", (GPU / "q_565_8xh100.txt").read_text())
    assert one(samples, "gpu_count") == 8
    assert set(values(samples, "gpu")) == {"NVIDIA H100 80GB HBM3"}
    assert one(samples, "gpu_memory_total", gpu_index=7) == 81559
    assert values(samples, "gpu_power_draw")[:2] == [100.89, 82.81]


def test_q_of_driver_410_with_throttle_reasons_and_the_old_ecc_layout():
    samples = parse("nvidia-smi", (GPU / "q_410_v100_first_of_four.txt").read_text())
    assert (
        readings(samples).items()
        >= {
            "gpu": "Tesla V100-PCIE-32GB",
            "gpu_utilization": 44,
            "gpu_memory_used": 31194,
            "gpu_memory_total": 32480,
            "gpu_power_draw": 58.81,  # "Power Readings / Power Draw" before driver 530
            "gpu_power_limit": 250,
            "gpu_pcie_gen": 3,
            "gpu_ecc_uncorrected": 0,  # "Volatile / Double Bit / Total"
            "gpu_retired_pages_double_bit": 0,
        }.items()
    )
    meta = samples[0].metadata
    assert meta["clocks_throttle_reasons.active"] == "0x0000000000000000"
    assert meta["retired_pages.pending"] == "No" and meta["cuda_version"] is None
    count = samples[-1]
    assert count.value == 1 and count.metadata["attached_gpus"] == 4  # the article shows one of four


def test_q_d_page_retirement_of_eight_gpus_names_the_pending_pages():
    clean = parse("nvidia-smi", (GPU / "q_d_page_retirement_535_8gpu.txt").read_text())
    assert values(clean, "gpu_retired_pages_single_bit") == [0] * 8
    pending = parse("nvidia-smi", (GPU / "q_d_page_retirement_535_8gpu_pending.txt").read_text())
    assert values(pending, "gpu_retired_pages_single_bit") == [60, 2, 0, 6, 0, 20, 0, 8]
    assert values(pending, "gpu_retired_pages_double_bit") == [5, 61, 0, 0, 0, 45, 0, 56]
    flagged = {s.metadata["gpu_index"] for s in pending if s.metadata.get("retired_pages.pending") == "Yes"}
    assert flagged == {1, 3, 5, 7}
    warned = health(pending)
    assert sorted(warned) == ["gpu:1", "gpu:3", "gpu:5", "gpu:7"]
    assert all("waiting for retirement" in c.reason_en for found in warned.values() for c in found)
    assert pending[0].metadata["pci.bus_id"] == "00000001:00:00.0"


def test_q_x_of_an_a100_with_two_mig_devices():
    samples = parse("nvidia-smi", (GPU / "q_x_510_a100_mig.xml").read_text())
    meta = samples[0].metadata
    assert meta["mig.mode.current"] == "Enabled" and meta["mig_devices"] == 2
    assert meta["clocks_throttle_reasons.active"] == "0x0000000000000000"
    assert "utilization.gpu" in meta["not_available"]  # N/A with MIG enabled
    assert readings(samples).items() >= {"gpu_memory_total": 40960, "gpu_power_draw": 66.92}.items()
    assert values(samples, "gpu_ecc_uncorrected") == []  # volatile counters N/A, aggregate 0


def test_q_x_of_a_p100_with_single_and_double_bit_totals():
    samples = parse("nvidia-smi", (GPU / "q_x_510_p100.xml").read_text())
    assert (
        readings(samples).items()
        >= {
            "gpu": "Tesla P100-PCIE-16GB",
            "gpu_memory_total": 16384,
            "gpu_power_draw": 26.16,
            "gpu_ecc_uncorrected": 0,
            "gpu_sm_clock_max": 1328,
        }.items()
    )
    assert samples[0].metadata["retired_pages.pending"] == "No"


# ---------------------------------------------------------------- health problems in -q reach the checks
def test_a_narrow_link_and_ecc_errors_in_q_are_named_like_in_the_query():
    text = (H200 / "q_idle.txt").read_text()
    width = "Current                                : 16x"  # the one under "Link Width"
    narrow = text.replace(width, width.replace("16x", "8x"))
    errors = narrow.replace(
        "DRAM Uncorrectable                         : 0", "DRAM Uncorrectable                         : 2", 1
    )
    assert errors.count(": 8x") == 1 and errors != narrow
    found = health(parse("nvidia-smi", errors))["gpu:0"]
    assert {c.verdict for c in found} == {Verdict.warn, Verdict.failed}
    assert any("x8 of x16" in c.reason_en for c in found)
    assert any("2 uncorrected ECC errors" in c.reason_en for c in found)


# ---------------------------------------------------------------- refused layouts
def test_xml_with_an_entity_declaration_is_refused_unread():
    bomb = (
        '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>\n<nvidia_smi_log>&a;</nvidia_smi_log>'
    )
    with pytest.raises(ParseError) as caught:
        parse("nvidia-smi", bomb)
    assert "ENTITY" in str(caught.value)


def test_q_without_a_gpu_block_is_named():
    header = (H200 / "q_idle.txt").read_text().split("GPU 00000000")[0]
    with pytest.raises(ParseError) as caught:
        parse("nvidia-smi", header)
    assert "GPU" in str(caught.value.reason) and "可读取：" in str(caught.value.reason)


def test_a_file_of_no_known_layout_lists_the_accepted_ones():
    with pytest.raises(ParseError) as caught:
        parse("nvidia-smi", "Product Name : Tesla V100\nGPU UUID : GPU-1234\n")
    reason = str(caught.value.reason)
    assert "'Product Name : Tesla V100'" in reason
    layouts = ("--format=csv", "表格", "nvidia-smi -q 的文本", "-q -x 的 XML")
    assert all(layout in reason for layout in layouts)


# ---------------------------------------------------------------- the command line and the upload path
def test_bench_parse_recognises_q_by_itself(app):
    result = app.test_cli_runner().invoke(args=["bench", "parse", "nvidia-smi", str(H200 / "q_load.txt")])
    assert result.exit_code == 0, result.output
    samples = json.loads(result.output)
    assert {"metric": "gpu_utilization", "value": 99.0} in [
        {"metric": s["metric"], "value": s["value"]} for s in samples
    ]


def test_an_uploaded_q_counts_the_gpus_against_the_offer(session: Session, offers):
    text = (GPU / "q_535_8xa100.txt").read_text()
    run = bench_uploads.upload_output(session, offer_id=offers[0].id, tool="nvidia-smi", output=text)
    found = {comparison["check"]: comparison for comparison in run.comparisons}
    assert found["gpu_count"]["verdict"] == "pass" and found["gpu_count"]["measured"] == 8
    assert found["gpu_model"]["verdict"] == "fail"  # A100 against the H800 of the offer


# ---------------------------------------------------------------- the H200's query outputs
def test_the_health_query_of_driver_580_names_its_column_clocks_event_reasons():
    idle = parse("nvidia-smi", (H200 / "health.csv").read_text())
    assert idle[0].metadata["clocks_event_reasons.active"] == "0x0000000000000001"
    assert [c.verdict for c in health(idle)[""]] == [Verdict.passed]  # Idle is not a slowdown
    both = parse("nvidia-smi", (H200 / "health_event_reasons.csv").read_text())
    assert both == []  # index and the reasons twice: no numbers, nothing to refuse either


def test_the_inventory_query_without_header_and_units_is_not_taken_for_sampling():
    samples = parse("nvidia-smi", (H200 / "inventory_noheader_nounits.csv").read_text())
    assert one(samples, "gpu") == "NVIDIA H200" and one(samples, "gpu_memory_total") == 143771
    assert samples[0].metadata["driver_version"] == "580.159.04"


def test_sampling_without_a_workload_says_none_ran():
    samples = parse("nvidia-smi-sampling", (H200 / "sampling_idle.txt").read_text())
    assert values(samples, "gpu_utilization") == [45, 0, 0, 0, 0, 0]  # the tail of the previous load first
    assert values(samples, "gpu_power_draw")[-1] == 98.90
    assert values(samples, "gpu_workload_exit_code") == []


def test_the_h200_table_under_load():
    samples = parse("nvidia-smi", (H200 / "table_load.txt").read_text())
    assert readings(samples) == {
        "gpu": "NVIDIA H200",
        "gpu_memory_used": 883,
        "gpu_memory_total": 143771,
        "gpu_utilization": 99,
        "gpu_power_draw": 394,
        "gpu_power_limit": 700,
        "gpu_temperature": 58,
        "gpu_ecc_uncorrected": 0,
    }


def test_uncorrected_ecc_errors_in_the_table_reach_the_health_check():
    samples = parse("nvidia-smi", (GPU / "table_470_2xv100.txt").read_text())
    assert one(samples, "gpu_ecc_uncorrected", gpu_index=1) == 2
    assert [c.verdict for c in health(samples)["gpu:1"]] == [Verdict.failed]


def test_xml_nested_past_any_nvidia_smi_layout_is_refused():
    deep = "<nvidia_smi_log><gpu id='0'>" + "<a>" * 5000 + "1" + "</a>" * 5000 + "</gpu></nvidia_smi_log>"
    with pytest.raises(ParseError) as caught:
        parse("nvidia-smi", deep)
    assert "16" in str(caught.value.reason)


def test_q_d_ecc_page_retirement_and_row_remapper_of_the_h200():
    samples = parse("nvidia-smi", (H200 / "q_d_ecc_retire_remap.txt").read_text())
    assert readings(samples) == {"gpu_ecc_uncorrected": 0, "gpu_ecc_corrected": 0}
    meta = samples[0].metadata
    assert meta["ecc.mode.current"] == "Enabled" and meta["remapped_rows.pending"] == "No"
    assert meta["remapped_rows.failure"] == "No" and meta["retired_pages.pending"] == "N/A"
    assert meta["not_available"] == ["retired_pages.single_bit_ecc.count", "retired_pages.double_bit.count"]


def test_q_d_performance_of_the_idle_h200():
    samples = parse("nvidia-smi", (H200 / "q_d_perf_idle.txt").read_text())
    assert readings(samples) == {"gpu_performance_state": 0}  # -d PERFORMANCE: the P-state and the reasons
    assert samples[0].metadata["clock_reasons_active"] == ["Idle"]
    assert health(samples) == {}  # Idle is no slowdown; without link or Xid readings nothing else to say
    assert one(samples, "gpu_count") == 1
    meta = samples[-1].metadata
    assert meta["driver_version"] == "580.159.04" and meta["models"] == []
