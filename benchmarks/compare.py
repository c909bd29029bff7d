"""Claims versus measurements (pure): what the offer says against what the probes measured.

`compare(claims, samples)` runs every registered check and returns plain `Comparison` records (verdict,
measured, claimed, ratio, reasons in Chinese and English); the app turns them into findings. Thresholds
default to DOMAIN.md section 5 and are passed in to change them.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from benchmarks.checks import (
    CHECKS,
    Claims,
    Comparison,
    Inputs,
    Thresholds,
    Verdict,
    check,
    model_key,
    ratio_verdict,
)
from benchmarks.sample import Sample


def thresholds_from(data: Mapping[str, Any]) -> Thresholds:
    """Thresholds from a mapping of field values (a missing field keeps its default); unknown keys raise."""
    known = {item.name for item in dataclasses.fields(Thresholds)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown thresholds {unknown}; known: {sorted(known)}")
    values = dict(data)
    if "typical_iops" in values:
        values["typical_iops"] = {kind: tuple(bounds) for kind, bounds in values["typical_iops"].items()}
    return Thresholds(**values)


# ---------------------------------------------------------------- bandwidth
PATH_NAMES = {
    "public": ("公网", "public"),
    "intranet": ("内网", "intranet"),
    "gpuvet->target": ("本机 → 目标服务器", "this server → target"),
    "target->peer": ("目标服务器 → 对端服务器", "target → peer"),
}


def _nominal_mbps(claims: Claims, path: str) -> float | None:
    if path == "intranet":
        return claims.intranet_gbps * 1000 if claims.intranet_gbps else None
    return float(claims.public_mbps) if claims.public_mbps else None


def beyond_claim(ratio: float | None, thresholds: Thresholds) -> bool:
    """Whether a throughput is so far above the nominal that the test probably missed the sold link."""
    return ratio is not None and ratio > thresholds.bandwidth_beyond_claim


def beyond_claim_reason(
    path: str, measured: float, nominal: float, thresholds: Thresholds
) -> tuple[str, str]:
    """(zh, en) wording of a throughput far above the nominal: not a pass, the test missed the link."""
    zh_path, en_path = PATH_NAMES.get(path, (path, path))
    ratio = measured / nominal
    return (
        f"{zh_path}实测 {measured:g} Mbit/s，是标称 {nominal:g} Mbit/s 的 {ratio:.1f} 倍"
        f"（超过 {thresholds.bandwidth_beyond_claim:g} 倍）：测试很可能没有经过所售链路"
        "（例如走了内网或本机回环），不能作为该链路的带宽证据，请对所售链路的地址重测",
        f"{en_path.capitalize()} measured {measured:g} Mbit/s, {ratio:.1f} times the nominal "
        f"{nominal:g} Mbit/s "
        f"(more than {thresholds.bandwidth_beyond_claim:g} times): the test probably did not run over the "
        "link that was sold (it may have gone over the intranet or loopback), so it is no evidence of that "
        "link's bandwidth; test again against the sold link's address",
    )


@check("bandwidth")
def bandwidth(inputs: Inputs) -> Iterable[Comparison]:
    """Each throughput test against the nominal bandwidth of its path."""
    thresholds = inputs.thresholds
    for sample in inputs.of("throughput", purpose="throughput"):
        path = str(sample.metadata.get("path", "public"))
        nominal = _nominal_mbps(inputs.claims, path)
        zh_path, en_path = PATH_NAMES.get(path, (path, path))
        step = str(sample.metadata.get("step", ""))
        measured = round(float(sample.value), 1)
        if nominal is None:
            yield Comparison(
                "bandwidth",
                Verdict.info,
                measured,
                None,
                None,
                "Mbit/s",
                f"实测{zh_path}吞吐 {measured} Mbit/s；报价未写标称带宽",
                f"measured {en_path} throughput {measured} Mbit/s; the offer states no nominal bandwidth",
                subject=step,
            )
            continue
        ratio = float(sample.value) / nominal
        verdict = ratio_verdict(ratio, thresholds.bandwidth_pass, thresholds.bandwidth_warn)
        reason_zh = (
            f"{zh_path}实测 {measured} Mbit/s，标称 {nominal:g} Mbit/s，达成 {ratio:.0%}"
            f"（≥{thresholds.bandwidth_pass:.0%} 通过，<{thresholds.bandwidth_warn:.0%} 不合格）"
        )
        reason_en = (
            f"{en_path} measured {measured} Mbit/s against nominal {nominal:g} Mbit/s: {ratio:.0%} "
            f"(pass at >= {thresholds.bandwidth_pass:.0%}, fail below {thresholds.bandwidth_warn:.0%})"
        )
        if beyond_claim(ratio, thresholds):
            verdict = Verdict.warn
            reason_zh, reason_en = beyond_claim_reason(path, measured, nominal, thresholds)
        yield Comparison(
            "bandwidth",
            verdict,
            measured,
            nominal,
            round(ratio, 3),
            "Mbit/s",
            reason_zh,
            reason_en,
            subject=step,
            evidence={
                "streams": sample.metadata.get("streams"),
                "reverse": sample.metadata.get("reverse"),
                "path": path,
            },
        )


@check("stability")
def stability(inputs: Inputs) -> Iterable[Comparison]:
    """Repeated throughput: a high coefficient of variation or a low minimum means shared bandwidth."""
    thresholds = inputs.thresholds
    values = [float(sample.value) for sample in inputs.of("throughput", purpose="stability")]
    if not values:
        return
    if len(values) < thresholds.stability_min_samples:
        yield Comparison(
            "stability",
            Verdict.info,
            len(values),
            None,
            None,
            "samples",
            f"只有 {len(values)} 次吞吐测量，不足以判断稳定性",
            f"only {len(values)} throughput measurements: too few to judge stability",
        )
        return
    mean = statistics.fmean(values)
    cv = statistics.pstdev(values) / mean if mean > 0 else float("inf")
    median = statistics.median(values)
    low = min(values) / median if median > 0 else 0.0
    unstable = cv > thresholds.stability_max_cv or low < thresholds.stability_min_over_median
    dedicated = inputs.claims.bandwidth_type == "dedicated"
    evidence = {"values": [round(value, 1) for value in values], "cv": round(cv, 3), "min_over_median": low}
    figures_zh = f"变异系数 {cv:.2f}，最小值为中位数的 {low:.0%}"
    figures_en = f"coefficient of variation {cv:.2f}, minimum {low:.0%} of the median"
    if not unstable:
        yield Comparison(
            "stability",
            Verdict.passed,
            round(cv, 3),
            inputs.claims.bandwidth_type,
            round(low, 3),
            "cv",
            f"{len(values)} 次吞吐测量稳定（{figures_zh}）",
            f"{len(values)} throughput measurements are steady ({figures_en})",
            evidence=evidence,
        )
        return
    yield Comparison(
        "stability",
        Verdict.failed if dedicated else Verdict.warn,
        round(cv, 3),
        inputs.claims.bandwidth_type,
        round(low, 3),
        "cv",
        f"带宽波动大，表现像共享带宽（{figures_zh}）" + ("，但报价声称独享带宽" if dedicated else ""),
        f"bandwidth swings: behaves like shared bandwidth ({figures_en})"
        + ("; the offer claims dedicated bandwidth" if dedicated else ""),
        red_flag=12 if dedicated else None,
        evidence=evidence,
    )


# ---------------------------------------------------------------- storage
# Detected storage classes that satisfy each claimed Offer.storage_type.
STORAGE_MATCHES: dict[str, set[str]] = {
    "local_nvme": {"local_nvme"},
    "local_sata_ssd": {"local_ssd", "local_nvme"},
    "cloud_disk": {"virtual_disk", "network_block"},
    "nfs": {"network_fs"},
    "parallel_fs": {"network_fs"},
}


def offer_storage_type(detected: str, claimed: str | None = None) -> str | None:
    """The Offer.storage_type a detected storage class stands for (None: no offer type has it).

    The most specific type that the class satisfies (local NVMe is sold as NVMe, not as SATA SSD); between
    equally specific ones (NFS or a parallel filesystem: lsblk / findmnt cannot tell them apart), the claim.
    """
    kinds = [kind for kind, classes in STORAGE_MATCHES.items() if detected in classes]
    if not kinds:
        return None
    return min(kinds, key=lambda kind: (len(STORAGE_MATCHES[kind]), kind != claimed, kinds.index(kind)))


STORAGE_NAMES = {
    "local_nvme": ("本地 NVMe", "local NVMe"),
    "local_ssd": ("本地 SATA/SAS SSD", "local SATA/SAS SSD"),
    "local_sata_ssd": ("本地 SATA SSD", "local SATA SSD"),
    "local_hdd": ("本地机械硬盘", "local hard disk"),
    "virtual_disk": ("虚拟磁盘", "virtual disk"),
    "cloud_disk": ("云盘", "cloud disk"),
    "network_block": ("网络块存储", "network block storage"),
    "network_fs": ("网络文件系统", "network filesystem"),
    "nfs": ("NFS", "NFS"),
    "parallel_fs": ("并行文件系统", "parallel filesystem"),
    "memory": ("内存文件系统", "memory filesystem"),
    "unknown": ("未知", "unknown"),
}


def _name(kind: str | None) -> tuple[str, str]:
    return STORAGE_NAMES.get(kind or "unknown", (str(kind), str(kind)))


@check("storage_type")
def storage_type(inputs: Inputs) -> Iterable[Comparison]:
    """Detected storage class against the claimed storage type."""
    for sample in inputs.of("storage_class"):
        detected = str(sample.value)
        claimed = inputs.claims.storage_type
        (dzh, den), (czh, cen) = _name(detected), _name(claimed)
        reason = str(sample.metadata.get("reason", ""))
        evidence = {"reason": reason, "fstype": sample.metadata.get("fstype")}
        if not claimed or claimed == "unknown" or claimed not in STORAGE_MATCHES:
            yield Comparison(
                "storage_type",
                Verdict.info,
                detected,
                claimed,
                None,
                "",
                f"检测到的存储类型：{dzh}；报价未写明存储类型",
                f"detected storage: {den}; the offer states none",
                evidence=evidence,
            )
        elif detected in STORAGE_MATCHES[claimed]:
            yield Comparison(
                "storage_type",
                Verdict.passed,
                detected,
                claimed,
                None,
                "",
                f"检测到 {dzh}，与报价的 {czh} 相符",
                f"detected {den}, as the offer claims ({cen})",
                evidence=evidence,
            )
        else:
            nvme = claimed == "local_nvme"
            yield Comparison(
                "storage_type",
                Verdict.failed if nvme else Verdict.warn,
                detected,
                claimed,
                None,
                "",
                f"报价声称 {czh}，实测数据目录位于 {dzh}" + ("：存储不是本地 NVMe" if nvme else ""),
                f"the offer claims {cen}, but the data directory is on {den}"
                + (": storage is not local NVMe" if nvme else ""),
                red_flag=12 if nvme else None,
                evidence=evidence,
            )


def _storage_kind(claimed: str | None) -> str:
    """The detected-storage kind whose usual figures a claimed Offer.storage_type is held to."""
    aliases = {"local_sata_ssd": "local_ssd", "cloud_disk": "virtual_disk", "nfs": "network_fs"}
    return aliases.get(claimed or "", claimed or "")


@check("iops")
def iops(inputs: Inputs) -> Iterable[Comparison]:
    """4k random-read IOPS against the nominal IOPS and the typical range of the claimed storage."""
    thresholds = inputs.thresholds
    claims = inputs.claims
    for sample in inputs.of("read_iops"):
        measured = round(float(sample.value))
        step = str(sample.metadata.get("step", ""))
        if claims.nominal_iops:
            ratio = measured / claims.nominal_iops
            verdict = ratio_verdict(ratio, thresholds.iops_pass, thresholds.iops_warn)
            yield Comparison(
                "iops",
                verdict,
                measured,
                claims.nominal_iops,
                round(ratio, 3),
                "IOPS",
                f"4k 随机读实测 {measured:,} IOPS，标称 {claims.nominal_iops:,.0f} IOPS，达成 {ratio:.0%}",
                f"4k random read measured {measured:,} IOPS against nominal "
                f"{claims.nominal_iops:,.0f}: {ratio:.0%}",
                subject=step,
            )
        kind = _storage_kind(claims.storage_type)
        if kind in thresholds.typical_iops:
            low, high = thresholds.typical_iops[kind]
            zh, en = _name(claims.storage_type)
            if measured < low:
                yield Comparison(
                    "iops_range",
                    Verdict.warn,
                    measured,
                    f"{low:,.0f}-{high:,.0f}",
                    round(measured / low, 3),
                    "IOPS",
                    f"实测 {measured:,} IOPS，低于 {zh} 常见范围 {low:,.0f}-{high:,.0f}",
                    f"measured {measured:,} IOPS, below the usual {low:,.0f}-{high:,.0f} for {en}",
                    subject=step,
                )


@check("write_throughput")
def write_throughput(inputs: Inputs) -> Iterable[Comparison]:
    """Checkpoint write speed, for the record (no claim to compare with)."""
    for sample in inputs.of("write_effective_bandwidth"):
        measured = round(float(sample.value), 1)
        seconds_per_10g = 10 * 1024 / measured if measured > 0 else float("inf")
        yield Comparison(
            "write_throughput",
            Verdict.info,
            measured,
            None,
            None,
            "MiB/s",
            f"1 MiB 顺序写（含 fsync）{measured} MiB/s：写 10 GiB 检查点约 {seconds_per_10g:.0f} 秒",
            f"1 MiB sequential writes with fsync: {measured} MiB/s, a 10 GiB checkpoint takes about "
            f"{seconds_per_10g:.0f} s",
            subject=str(sample.metadata.get("step", "")),
        )


@check("write_rate")
def write_rate(inputs: Inputs) -> Iterable[Comparison]:
    """Checkpoint writes (fsync'd) against what the claimed storage type usually sustains at least."""
    thresholds = inputs.thresholds
    floor = thresholds.typical_write_mib_s.get(_storage_kind(inputs.claims.storage_type))
    if not floor:
        return
    zh, en = _name(inputs.claims.storage_type)
    for sample in inputs.of("write_effective_bandwidth"):
        measured = round(float(sample.value), 1)
        ratio = measured / floor
        yield Comparison(
            "write_rate",
            ratio_verdict(ratio, thresholds.write_pass, thresholds.write_warn),
            measured,
            floor,
            round(ratio, 3),
            "MiB/s",
            f"含 fsync 的 1 MiB 顺序写实测 {measured} MiB/s，"
            f"报价的{zh}通常至少 {floor:g} MiB/s，达成 {ratio:.0%}",
            f"1 MiB sequential writes with fsync measured {measured} MiB/s; the claimed {en} usually "
            f"sustains at least {floor:g} MiB/s: {ratio:.0%}",
            subject=str(sample.metadata.get("step", "")),
        )


# ---------------------------------------------------------------- latency
@check("ping")
def ping(inputs: Inputs) -> Iterable[Comparison]:
    """Any packet loss warns (much loss fails); high mdev relative to the average warns."""
    thresholds = inputs.thresholds
    for loss_sample in inputs.of("packet_loss"):
        path = str(loss_sample.metadata.get("path", ""))
        path_zh, path_en = PATH_NAMES.get(path, (path, path))
        loss = float(loss_sample.value)
        verdict = (
            Verdict.passed
            if loss == 0
            else Verdict.failed
            if loss >= thresholds.ping_loss_fail_pct
            else Verdict.warn
        )
        yield Comparison(
            "ping_loss",
            verdict,
            loss,
            0.0,
            None,
            "%",
            f"{path_zh} 丢包 {loss:g}%",
            f"{path_en} packet loss {loss:g}%",
            subject=path,
        )
        mdev = inputs.of("rtt_mdev", path=path)
        avg = inputs.of("rtt_avg", path=path)
        if mdev and avg:
            jitter, mean = float(mdev[0].value), float(avg[0].value)
            high = jitter > thresholds.jitter_warn_ms and jitter > thresholds.jitter_warn_ratio * mean
            yield Comparison(
                "ping_jitter",
                Verdict.warn if high else Verdict.passed,
                jitter,
                None,
                round(jitter / mean, 3) if mean else None,
                "ms",
                f"{path_zh} 延迟 平均 {mean:g} ms，抖动 (mdev) {jitter:g} ms"
                + ("，抖动偏大" if high else ""),
                f"{path_en} latency avg {mean:g} ms, jitter (mdev) {jitter:g} ms"
                + (": unstable" if high else ""),
                subject=path,
            )


# ---------------------------------------------------------------- GPUs
def _gpu_names(inputs: Inputs) -> dict[tuple[str, int], str]:
    """GPU name per (host, index), from inventory or nvidia-smi steps."""
    return {
        (str(sample.metadata.get("host")), int(sample.metadata.get("gpu_index", 0))): str(sample.value)
        for sample in inputs.of("gpu")
    }


@check("gpu")
def gpu(inputs: Inputs) -> Iterable[Comparison]:
    """GPU model and count against the offer."""
    claims = inputs.claims
    names = _gpu_names(inputs)
    nvidia_missing = "nvidia-smi" in inputs.missing_tools or any(
        sample.metadata.get("nvidia_smi") == "not installed" for sample in inputs.of("gpu_count")
    )
    if not names and not nvidia_missing:
        return
    count = len(names)
    models = sorted(set(names.values()))
    if claims.gpus_per_node:
        verdict = Verdict.passed if count == claims.gpus_per_node else Verdict.failed
        extra_zh = "（服务器上没有 nvidia-smi）" if nvidia_missing else ""
        extra_en = " (nvidia-smi is not installed on the server)" if nvidia_missing else ""
        yield Comparison(
            "gpu_count",
            verdict,
            count,
            claims.gpus_per_node,
            None,
            "GPUs",
            f"检测到 {count} 块 GPU，报价 {claims.gpus_per_node} 块{extra_zh}",
            f"{count} GPUs found, the offer says {claims.gpus_per_node}{extra_en}",
        )
    if claims.gpu_model and models:
        wanted = model_key(claims.gpu_model)
        wrong = [model for model in models if wanted not in model_key(model)]
        yield Comparison(
            "gpu_model",
            Verdict.failed if wrong else Verdict.passed,
            ", ".join(models),
            claims.gpu_model,
            None,
            "",
            f"检测到 GPU 型号 {', '.join(models)}，报价 {claims.gpu_model}" + ("，不符" if wrong else ""),
            f"GPU model found: {', '.join(models)}; the offer says {claims.gpu_model}"
            + (": mismatch" if wrong else ""),
        )


@check("gpu_utilization")
def gpu_utilization(inputs: Inputs) -> Iterable[Comparison]:
    """Mean utilisation per GPU during the workload (DOMAIN.md: >= 90 % busy, < 80 % a bottleneck)."""
    thresholds = inputs.thresholds
    per_gpu: dict[int, list[float]] = defaultdict(list)
    for sample in inputs.of("gpu_utilization"):
        per_gpu[int(sample.metadata.get("gpu_index", 0))].append(float(sample.value))
    workload = inputs.of("gpu_workload_exit_code")
    if workload and float(workload[0].value) not in (0.0, 124.0):
        output = str(workload[0].metadata.get("workload_output", ""))
        yield Comparison(
            "gpu_utilization",
            Verdict.info,
            None,
            None,
            None,
            "%",
            f"GPU 负载未能运行（{output}），利用率为空闲值",
            f"the GPU workload did not run ({output}): idle figures",
        )
        return
    if not workload and all(len(values) <= 1 for values in per_gpu.values()):
        if per_gpu:
            yield _idle_snapshot(len(per_gpu))
        return
    for index, readings in sorted(per_gpu.items()):
        values = _after_warm_up(readings)
        mean = statistics.fmean(values)
        verdict = (
            Verdict.passed
            if mean >= thresholds.gpu_busy_pct
            else Verdict.warn
            if mean < thresholds.gpu_low_pct
            else Verdict.info
        )
        yield Comparison(
            "gpu_utilization",
            verdict,
            round(mean, 1),
            None,
            None,
            "%",
            f"GPU {index} 负载期间平均利用率 {mean:.0f}%",
            f"GPU {index} mean utilisation under load {mean:.0f}%",
            subject=f"gpu:{index}",
            evidence={
                "samples": len(values),
                "warm_up_samples": len(readings) - len(values),
                "min": min(values),
                "max": max(values),
            },
        )


def _after_warm_up(readings: list[float]) -> list[float]:
    """The readings from the first busy one on: idle readings before it are the workload starting up (the
    probe's torch workload takes seconds to reach the GPU); a GPU never busy keeps all its readings."""
    first_busy = next((i for i, value in enumerate(readings) if value > 0), 0)
    return readings[first_busy:]


def _idle_snapshot(gpus: int) -> Comparison:
    """One reading per GPU and no workload (a pasted table, -q or inventory query): nothing to judge."""
    return Comparison(
        "gpu_utilization",
        Verdict.info,
        None,
        None,
        None,
        "%",
        f"{gpus} 块 GPU 各只有一个读数且未运行负载（空闲快照）：不据此评判利用率",
        f"one reading for each of {gpus} GPU(s) and no workload ran (an idle snapshot): "
        "utilisation not judged",
    )


# ---------------------------------------------------------------- entry point
def compare(
    claims: Claims,
    samples: Iterable[Sample],
    *,
    thresholds: Thresholds | None = None,
    missing_tools: Iterable[str] = (),
) -> list[Comparison]:
    """Every registered check on `samples` against `claims`."""
    grouped: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        grouped[sample.metric].append(sample)
    inputs = Inputs(claims, dict(grouped), thresholds or Thresholds(), frozenset(missing_tools))
    return [comparison for function in CHECKS.values() for comparison in function(inputs)]


# The matrix checks register on import, after this module's own (the order of the comparisons stays).
from benchmarks import compare_cluster  # noqa: E402, F401
