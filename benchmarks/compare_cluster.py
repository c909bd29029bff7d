"""Checks on a GPU cluster: data loading, GPU health, all-reduce bandwidth, the intranet matrix and RDMA."""

from __future__ import annotations

from collections.abc import Iterable

from benchmarks.checks import Comparison, Inputs, Verdict, check, model_key, ratio_verdict
from benchmarks.probes.gpu_health import SERIOUS_XIDS, slowdowns


@check("dataload")
def dataload(inputs: Inputs) -> Iterable[Comparison]:
    """Small files read per second with 1 and with more readers: what the storage can feed the GPUs."""
    files = {int(s.metadata.get("readers", 1)): float(s.value) for s in inputs.of("dataload_files_per_s")}
    if not files:
        return
    mib = {int(s.metadata.get("readers", 1)): float(s.value) for s in inputs.of("dataload_mib_per_s")}
    best_readers = max(files, key=files.__getitem__)
    best, single = files[best_readers], files[min(files)]
    scaling = best / single if single else 1.0
    helps = scaling >= inputs.thresholds.dataload_min_scaling
    passes_zh = "、".join(
        f"{readers} 个读取者 {value:,.0f} 个/秒" for readers, value in sorted(files.items())
    )
    passes_en = ", ".join(
        f"{value:,.0f} files/s with {readers} reader{'s' if readers > 1 else ''}"
        for readers, value in sorted(files.items())
    )
    yield Comparison(
        "dataload",
        Verdict.info,
        round(best),
        None,
        round(scaling, 2),
        "files/s",
        f"小文件读取：{passes_zh}；最多 {best:,.0f} 个/秒（{mib.get(best_readers, 0):,.0f} MiB/s）。"
        f"训练每秒需要的样本超过 {best:,.0f} 个时，GPU 会等存储"
        + (
            f"；DataLoader 的 num_workers 至少设为 {best_readers}"
            if helps
            else "；增加读取者几乎不提速，瓶颈在存储本身"
        ),
        f"small-file reads: {passes_en}; at most {best:,.0f} files/s "
        f"({mib.get(best_readers, 0):,.0f} MiB/s). A job that needs more than {best:,.0f} samples/s "
        "will wait on storage, not on the GPUs"
        + (
            f"; set the DataLoader's num_workers to at least {best_readers}"
            if helps
            else "; more readers barely help: the storage itself is the limit"
        ),
        evidence={"files_per_s_by_readers": files},
    )


def _per_gpu(inputs: Inputs, metric: str) -> dict[int, float]:
    return {int(s.metadata.get("gpu_index", 0)): float(s.value) for s in inputs.of(metric)}


def _gpu_readings(inputs: Inputs) -> Iterable:
    """Each GPU's "gpu" sample, then any reading of a GPU (a `nvidia-smi -q -d ...` paste prints no name)."""
    yield from inputs.of("gpu")
    for samples in inputs.samples.values():
        yield from (sample for sample in samples if "gpu_index" in sample.metadata)


def _gpu_problems(inputs: Inputs) -> Iterable[tuple[Verdict, str, str, str]]:
    """(verdict, subject, zh, en) for every health problem the nvidia-smi health query shows."""
    width, width_max = _per_gpu(inputs, "gpu_pcie_width"), _per_gpu(inputs, "gpu_pcie_width_max")
    for index, lanes in sorted(width.items()):
        if index in width_max and lanes < width_max[index]:
            yield (
                Verdict.warn,
                f"gpu:{index}",
                f"GPU {index} 的 PCIe 链路只有 x{lanes:.0f}（最多 x{width_max[index]:.0f}）："
                "转接卡或插槽降级，请供应商重插或更换",
                f"GPU {index} runs its PCIe link at x{lanes:.0f} of x{width_max[index]:.0f}: "
                "a riser or a degraded slot; ask the provider to reseat or replace it",
            )
    for index, errors in sorted(_per_gpu(inputs, "gpu_ecc_uncorrected").items()):
        if errors > 0:
            yield (
                Verdict.failed,
                f"gpu:{index}",
                f"GPU {index} 有 {errors:.0f} 个未纠正 ECC 错误：要求更换这块卡",
                f"GPU {index} has {errors:.0f} uncorrected ECC errors: ask for the card to be replaced",
            )
    seen: set[int] = set()
    for sample in _gpu_readings(inputs):
        index = int(sample.metadata.get("gpu_index", 0))
        if index in seen:
            continue
        seen.add(index)
        if str(sample.metadata.get("retired_pages.pending", "")).lower() == "yes":
            yield (
                Verdict.warn,
                f"gpu:{index}",
                f"GPU {index} 有等待退役的显存页：重启后才生效，询问供应商这块卡的错误历史",
                f"GPU {index} has memory pages waiting for retirement (after a reboot): "
                "ask for the card's error history",
            )
        mask = sample.metadata.get("clocks_throttle_reasons.active") or sample.metadata.get(
            "clocks_event_reasons.active"
        )
        found = slowdowns(str(mask or ""))
        if found:
            yield (
                Verdict.warn,
                f"gpu:{index}",
                f"GPU {index} 正在降频（{'、'.join(zh for zh, _en in found)}）：询问散热和供电",
                f"GPU {index} is slowed down ({', '.join(en for _zh, en in found)}): "
                "ask about cooling and power",
            )


def _xid_problems(inputs: Inputs) -> Iterable[tuple[Verdict, str, str, str]]:
    for sample in inputs.of("gpu_xid"):
        code, bus = int(float(sample.value)), sample.metadata.get("pci.bus_id", "")
        severity, zh, en = SERIOUS_XIDS.get(
            code, ("info", "多为应用程序错误", "usually an application error")
        )
        verdict = {"fail": Verdict.failed, "warn": Verdict.warn}.get(severity, Verdict.info)
        ask_zh = "询问供应商这块卡的维修记录" if verdict is not Verdict.info else "反复出现时再追查"
        ask_en = (
            "ask the provider for the card's repair history"
            if verdict is not Verdict.info
            else "look again if it repeats"
        )
        yield (
            verdict,
            f"xid:{bus}",
            f"内核日志有 Xid {code}（{bus}）：{zh}；{ask_zh}",
            f"the kernel log shows Xid {code} ({bus}): {en}; {ask_en}",
        )


def _gpus(samples: list) -> str:
    """The GPUs the results name ("0, 3"), or "" when they name none (a deployment check of the node)."""
    found = sorted({int(gpu) for sample in samples for gpu in sample.metadata.get("gpus") or []})
    return ", ".join(str(gpu) for gpu in found)


def _dcgm_problems(inputs: Inputs) -> Iterable[tuple[Verdict, str, str, str]]:
    """(verdict, subject, zh, en) per DCGM test that failed or warned, with its GPUs and DCGM's words."""
    by_test: dict[tuple[str, str], list] = {}
    for sample in inputs.of("dcgm_diag"):
        if sample.value in ("fail", "warn"):
            by_test.setdefault((str(sample.metadata.get("test") or ""), str(sample.value)), []).append(sample)
    failures_first = sorted(by_test.items(), key=lambda item: (item[0][1] != "fail", item[0][0]))
    for (test, status), samples in failures_first:
        gpus = _gpus(samples)
        where_zh, where_en = (f"（GPU {gpus}）", f" on GPU {gpus}") if gpus else ("", "")
        said = next((text for sample in samples for text in sample.metadata.get("warnings") or []), "")
        said = said.rstrip("。. ")
        said_zh, said_en = (f"：{said}", f": {said}") if said else ("", "")
        deployment = any(sample.metadata.get("deployment") for sample in samples)
        if status == "warn":
            verdict = Verdict.warn
            zh = f"DCGM 诊断 {test} 给出警告{where_zh}{said_zh}；请供应商说明原因，并在处理后重跑 dcgmi diag"
            en = (
                f"the DCGM diagnostic {test} warned{where_en}{said_en}; ask the provider to explain it "
                "and to run dcgmi diag again once it is dealt with"
            )
        elif deployment:
            verdict = Verdict.failed
            zh = (
                f"DCGM 部署检查 {test} 未通过{where_zh}{said_zh}；要求供应商修好驱动和系统设置，"
                "签约前重跑 dcgmi diag 并全部通过"
            )
            en = (
                f"the DCGM deployment check {test} failed{where_en}{said_en}; ask the provider to fix the "
                "driver and system setup it names and to pass dcgmi diag again before signing"
            )
        else:
            verdict = Verdict.failed
            zh = f"DCGM 诊断 {test} 未通过{where_zh}{said_zh}；签约前要求供应商更换这块卡或整台机器"
            en = (
                f"the DCGM diagnostic {test} failed{where_en}{said_en}; ask the provider to replace the card "
                "or the node before signing"
            )
        yield verdict, f"dcgm:{test}", zh, en


def _dcgm_note(
    verdict: Verdict, zh: str, en: str, *, value: float | None = None, unit: str = ""
) -> Comparison:
    """One gpu_health line about the DCGM diagnostic as a whole."""
    return Comparison("gpu_health", verdict, value, None, None, unit, zh, en, subject="dcgm")


def _dcgm_notes(inputs: Inputs) -> Iterable[Comparison]:
    """DCGM's diagnostic passed (skipped tests named), or why it did not run; nothing without DCGM data."""
    results = inputs.of("dcgm_diag")
    skipped = sorted({str(s.metadata.get("test") or "") for s in results if s.value == "skip"})
    if skipped and any(sample.value in ("fail", "warn") for sample in results):
        yield _dcgm_note(
            Verdict.info,
            f"DCGM 诊断跳过了：{'、'.join(skipped)}（未检查）",
            f"the DCGM diagnostic skipped {', '.join(skipped)} (not checked)",
        )
    if results and not any(sample.value in ("fail", "warn") for sample in results):
        tests = sorted({str(sample.metadata.get("test") or "") for sample in results})
        version = next((s.metadata.get("dcgm_version") for s in inputs.of("dcgm_diag_available")), None)
        dcgm = f"DCGM {version} " if version else "DCGM "
        skipped_zh = f"；跳过：{'、'.join(skipped)}" if skipped else ""
        skipped_en = f"; skipped: {', '.join(skipped)}" if skipped else ""
        yield _dcgm_note(
            Verdict.passed,
            f"{dcgm}诊断（dcgmi diag）{len(tests)} 项测试无失败、无警告{skipped_zh}",
            f"the {dcgm}diagnostic (dcgmi diag): {len(tests)} tests, none failed or warned{skipped_en}",
            value=len(tests),
            unit="tests",
        )
        return
    if inputs.of("dcgm_diag_available", installed=False):
        yield _dcgm_note(
            Verdict.info,
            "目标服务器未安装 DCGM（dcgmi），未运行 dcgmi diag；可请供应商运行 dcgmi diag -r 1 -j 并提供输出",
            "DCGM (dcgmi) is not installed on the target, so dcgmi diag did not run; you can ask the "
            "provider to run dcgmi diag -r 1 -j and send its output",
        )
    for sample in inputs.of("dcgm_diag_available", installed=True)[:1]:
        if float(sample.value) == 0:
            error = str(sample.metadata.get("error") or "")
            yield _dcgm_note(
                Verdict.info,
                f"目标服务器装有 DCGM，但 dcgmi diag 没有给出结果：{error}；"
                "请供应商检查 nv-hostengine，自行运行 dcgmi diag -r 1 -j 并提供输出",
                f"DCGM is installed on the target but dcgmi diag gave no result: {error}; ask the provider "
                "to check nv-hostengine, run dcgmi diag -r 1 -j and send its output",
            )


@check("gpu_health")
def gpu_health(inputs: Inputs) -> Iterable[Comparison]:
    """ECC errors, pages awaiting retirement, slowdowns, narrow PCIe links, Xid events, DCGM's diagnostic."""
    checked = bool(inputs.of("gpu_pcie_width") or inputs.of("gpu_xid_events"))
    problems = [*_gpu_problems(inputs), *_xid_problems(inputs), *_dcgm_problems(inputs)]
    for verdict, subject, zh, en in problems:
        yield Comparison("gpu_health", verdict, None, None, None, "", zh, en, subject=subject)
    yield from _dcgm_notes(inputs)
    if checked and not any(verdict is not Verdict.info for verdict, *_rest in problems):
        yield Comparison(
            "gpu_health",
            Verdict.passed,
            None,
            None,
            None,
            "",
            "GPU 健康检查未发现问题：无未纠正 ECC 错误、PCIe 链路满宽、未降频、无硬件类 Xid",
            "GPU health: no uncorrected ECC errors, full-width PCIe links, no slowdown, no hardware Xid",
        )


def _reference(inputs: Inputs, models: list[str]) -> tuple[str, float] | None:
    """(model key, single-node busbw reference) for the GPUs the benchmark ran on, if one is known."""
    keys = {model_key(model) for model in models}
    for key, busbw in inputs.thresholds.collective_busbw_gbs.items():
        if any(model_key(key) in found for found in keys):
            return key, busbw
    return None


@check("collective")
def collective(inputs: Inputs) -> Iterable[Comparison]:
    """All-reduce bus bandwidth: one node against its GPU's reference, several against the claimed network."""
    peaks = inputs.of("nccl_busbw_peak")
    if not peaks:
        return
    peak = peaks[0]
    busbw, nodes = float(peak.value), int(peak.metadata.get("nodes") or 1)
    ranks, models = peak.metadata.get("ranks"), list(peak.metadata.get("gpu_models") or [])
    size_gib = int(peak.metadata.get("largest_size_bytes") or 0) / 2**30
    small_zh = "；最大消息不足 1 GiB，峰值可能偏低" if size_gib < 1 else ""
    small_en = "; the largest message was under 1 GiB, so the peak may be low" if size_gib < 1 else ""
    thresholds, claims = inputs.thresholds, inputs.claims
    # Between nodes a ring is held to what each node can send: its RDMA fabric if claimed, else the intranet
    link = (
        ("RDMA", "RDMA", claims.rdma_gbps) if claims.rdma_gbps else ("内网", "intranet", claims.intranet_gbps)
    )
    if nodes > 1 and link[2]:
        link_zh, link_en, gbps = link
        network = gbps / 8  # GB/s each node can send: the inter-node ceiling of a ring
        ratio = busbw / network
        yield Comparison(
            "collective",
            ratio_verdict(ratio, thresholds.bandwidth_pass, thresholds.bandwidth_warn),
            round(busbw, 1),
            round(network, 1),
            round(ratio, 3),
            "GB/s",
            f"{nodes} 台 {ranks} 卡 all-reduce 总线带宽峰值 {busbw:.1f} GB/s，"
            f"报价{link_zh} {gbps:g} Gbps（{network:.1f} GB/s），达成 {ratio:.0%}{small_zh}",
            f"all-reduce over {nodes} nodes ({ranks} GPUs) peaks at {busbw:.1f} GB/s bus bandwidth "
            f"against the claimed {gbps:g} Gbps {link_en} ({network:.1f} GB/s): "
            f"{ratio:.0%}{small_en}",
        )
        return
    reference = _reference(inputs, models)
    if reference is None or nodes > 1:
        yield Comparison(
            "collective",
            Verdict.info,
            round(busbw, 1),
            None,
            None,
            "GB/s",
            f"all-reduce 总线带宽峰值 {busbw:.1f} GB/s（{ranks} 卡，{', '.join(models)}），"
            f"无参考值可比{small_zh}",
            f"all-reduce peaks at {busbw:.1f} GB/s bus bandwidth ({ranks} GPUs, {', '.join(models)}); "
            f"no reference to compare with{small_en}",
        )
        return
    key, expected = reference
    ratio = busbw / expected
    verdict = ratio_verdict(ratio, thresholds.bandwidth_pass, thresholds.bandwidth_warn)
    low = verdict is not Verdict.passed
    yield Comparison(
        "collective",
        verdict,
        round(busbw, 1),
        expected,
        round(ratio, 3),
        "GB/s",
        f"单机 {ranks} 卡 all-reduce 总线带宽峰值 {busbw:.1f} GB/s，{key} 参考 {expected:g} GB/s，"
        f"达成 {ratio:.0%}{small_zh}"
        + ("；询问 NVLink/NVSwitch 是否完整、GPU 间是否只走 PCIe" if low else ""),
        f"all-reduce on {ranks} GPUs of one node peaks at {busbw:.1f} GB/s bus bandwidth, {key} reference "
        f"{expected:g} GB/s: {ratio:.0%}{small_en}"
        + ("; ask whether NVLink/NVSwitch is complete or the GPUs talk over PCIe only" if low else ""),
    )


@check("matrix")
def matrix(inputs: Inputs) -> Iterable[Comparison]:
    """Each pair of nodes against the claimed intranet and against the other pairs (a slow link drags all)."""
    from benchmarks.matrix import slow_links

    throughput = {
        (str(s.metadata.get("from")), str(s.metadata.get("to"))): float(s.value)
        for s in inputs.of("throughput", matrix=True)
    }
    if not throughput:
        return
    thresholds, claimed = inputs.thresholds, inputs.claims.intranet_gbps
    for (source, target), mbit_s in sorted(throughput.items()):
        if claimed:
            ratio = mbit_s / (claimed * 1000)
            yield Comparison(
                "matrix",
                ratio_verdict(ratio, thresholds.bandwidth_pass, thresholds.bandwidth_warn),
                round(mbit_s / 1000, 2),
                claimed,
                round(ratio, 3),
                "Gbit/s",
                f"{source} → {target} 实测 {mbit_s / 1000:.2f} Gbps，"
                f"报价内网 {claimed:g} Gbps，达成 {ratio:.0%}",
                f"{source} → {target} measured {mbit_s / 1000:.2f} Gbit/s "
                f"against the claimed {claimed:g} Gbps: {ratio:.0%}",
                subject=f"{source}->{target}",
            )
    for source, target, mbit_s, median in slow_links(throughput, thresholds.stability_min_over_median):
        yield Comparison(
            "matrix",
            Verdict.warn,
            round(mbit_s / 1000, 2),
            round(median / 1000, 2),
            round(mbit_s / median, 3),
            "Gbit/s",
            f"{source} 与 {target} 之间只有 {mbit_s / 1000:.2f} Gbps，"
            f"节点对的中位数 {median / 1000:.2f} Gbps：这条链路会拖慢整个集群的同步，询问端口、线缆和交换机",
            f"only {mbit_s / 1000:.2f} Gbit/s between {source} and {target}, the median pair reaches "
            f"{median / 1000:.2f}: this link slows every synchronisation; "
            "ask about its port, cable and switch",
            subject=f"{source}->{target}",
        )


@check("rdma")
def rdma(inputs: Inputs) -> Iterable[Comparison]:
    """Measured RDMA Gbit/s (perftest ib_write_bw) against the offer's claimed RDMA; the latency as info."""
    from benchmarks.probes.rdma import RDMA_FIGURE

    measured = inputs.of(RDMA_FIGURE)
    thresholds, claimed = inputs.thresholds, inputs.claims.rdma_gbps
    if measured:
        best = max(measured, key=lambda sample: float(sample.value))
        gbps, size = float(best.value), int(best.metadata.get("message_bytes") or 0)
        if claimed:
            ratio = gbps / claimed
            low = ratio < thresholds.bandwidth_pass
            yield Comparison(
                "rdma",
                ratio_verdict(ratio, thresholds.bandwidth_pass, thresholds.bandwidth_warn),
                round(gbps, 1),
                claimed,
                round(ratio, 3),
                "Gbit/s",
                f"RDMA 写带宽实测 {gbps:.1f} Gbit/s（{size} 字节消息），报价 RDMA {claimed:g} Gbps，"
                f"达成 {ratio:.0%}"
                + ("；询问网卡、端口速率和交换机配置（是否降速或走了以太网）" if low else ""),
                f"RDMA write bandwidth measured {gbps:.1f} Gbit/s ({size}-byte messages) against the "
                f"claimed {claimed:g} Gbps RDMA: {ratio:.0%}"
                + (
                    "; ask about the adapter, its port speed and the switch (downgraded, or over Ethernet?)"
                    if low
                    else ""
                ),
                subject="target->peer",
            )
        else:
            yield Comparison(
                "rdma",
                Verdict.info,
                round(gbps, 1),
                None,
                None,
                "Gbit/s",
                f"RDMA 写带宽实测 {gbps:.1f} Gbit/s（{size} 字节消息）；报价未写 RDMA 带宽",
                f"RDMA write bandwidth measured {gbps:.1f} Gbit/s ({size}-byte messages); "
                "the offer states no RDMA bandwidth",
                subject="target->peer",
            )
    for sample in inputs.of("rdma_latency_t_typical")[:1]:
        size = int(sample.metadata.get("message_bytes") or 0)
        yield Comparison(
            "rdma",
            Verdict.info,
            round(float(sample.value), 2),
            None,
            None,
            "us",
            f"RDMA 读延迟典型值 {float(sample.value):.2f} 微秒（{size} 字节消息）",
            f"RDMA read latency typically {float(sample.value):.2f} us ({size}-byte messages)",
            subject="target->peer",
        )
