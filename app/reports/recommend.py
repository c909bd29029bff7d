"""Recommendations of a provider report, each derived from the report's inputs by a registered function."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from app.core.plugins import register_once

Advice = tuple[str, str]  # (Chinese, English)
Recommender = Callable[[dict[str, Any]], Iterable[Advice]]


@dataclass(frozen=True)
class Recommendation:
    """One recommendation in both languages, with the id of the function that made it."""

    key: str
    zh: str
    en: str


RECOMMENDERS: dict[str, Recommender] = {}


def recommender(key: str) -> Callable[[Recommender], Recommender]:
    """Register the decorated function; it yields (zh, en) pairs for the inputs it is given."""

    def decorator(function: Recommender) -> Recommender:
        register_once(RECOMMENDERS, key, function, "recommender")
        return function

    return decorator


def recommendations(inputs: dict[str, Any]) -> list[Recommendation]:
    """Every registered recommender's advice for `inputs`, in registration order."""
    return [
        Recommendation(key, zh, en) for key, function in RECOMMENDERS.items() for zh, en in function(inputs)
    ]


def _source(inputs: dict[str, Any], key: str) -> dict[str, Any]:
    return inputs.get("sources", {}).get(key) or {"status": "unavailable", "data": None}


@recommender("verdict")
def _verdict(inputs: dict[str, Any]) -> Iterable[Advice]:
    check = _source(inputs, "checks")
    if check["status"] != "ok":
        yield (
            "尚未运行资质核查：签约前先运行核查（供应商页“核查”或 flask vet），"
            "并核对许可证与备案的官方记录。",
            "No credential check has been run: run one before signing and compare the licences and filings "
            "with the official records.",
        )
        return
    verdict = check["data"].get("verdict")
    if verdict == "fail":
        yield (
            "核查结论为不通过：在严重问题消除并重新核查之前，不建议签约。",
            "The check failed: do not sign until the blocking findings are resolved and a new check passes.",
        )
    elif verdict == "needs_review":
        yield (
            "核查结论为需人工复核：逐条按“核实方法”处理警告，并保留核实记录。",
            "The check needs review: work through each warning with its “how to verify” and keep the record.",
        )


@recommender("identifiers")
def _identifiers(inputs: dict[str, Any]) -> Iterable[Advice]:
    checks = [inputs.get("uscc_check")] + [
        item.get("check") for item in inputs["licences"] + inputs["filings"]
    ]
    bad = [check["input"] for check in checks if check and not check.get("valid")]
    if bad:
        shown = "、".join(bad[:5]) + ("…" if len(bad) > 5 else "")
        yield (
            f"以下编号格式有误，请供应商提供证照原件或截图并更正：{shown}",
            f"These numbers are malformed; ask the provider for the original documents: {', '.join(bad[:5])}",
        )
    if not inputs["licences"]:
        yield (
            "未登记增值电信业务经营许可证：出租服务器或云 GPU 须持有含 B11 的许可证，请供应商提供。",
            "No telecom licence is recorded: renting servers or cloud GPUs needs a licence with B11; "
            "ask for it.",
        )
    if not inputs["provider"].get("uscc"):
        yield (
            "未登记统一社会信用代码：请补充，并在国家企业信用信息公示系统核对企业名称。",
            "No unified social credit code is recorded: add it and check the company name in the "
            "official register.",
        )


@recommender("measurements")
def _measurements(inputs: dict[str, Any]) -> Iterable[Advice]:
    if _source(inputs, "measurements")["status"] != "ok" and inputs["offers"]:
        yield (
            "标称性能尚未实测：申请试用机，测试内网/公网带宽（iperf3，含晚高峰）、"
            "存储 IOPS（fio）和 GPU 利用率。",
            "The claimed performance is untested: ask for a trial server and measure bandwidth "
            "(iperf3, including the evening peak), storage IOPS (fio) and GPU utilisation.",
        )


@recommender("disclosure")
def _disclosure(inputs: dict[str, Any]) -> Iterable[Advice]:
    provider = inputs["provider"]
    if provider.get("discloses_network_topology") is not True:
        yield (
            "要求供应商书面说明网络拓扑（交换机、上联带宽、是否与他人共享），拒绝说明是共享资源的信号。",
            "Ask for the network topology in writing (switches, uplinks, sharing); "
            "refusal suggests shared links.",
        )
    if provider.get("discloses_storage_config") is not True:
        yield (
            "要求供应商说明存储配置（本地 NVMe 还是云盘/网络存储、型号与数量）。",
            "Ask for the storage configuration (local NVMe or cloud/network disks, models and counts).",
        )


@recommender("offers")
def _offers(inputs: dict[str, Any]) -> Iterable[Advice]:
    offers = inputs["offers"]
    if any(offer.get("bandwidth_type") == "unknown" for offer in offers):
        yield (
            "部分套餐未说明带宽是否独享：在合同中写明独享带宽及最低保障速率。",
            "Some offers do not say whether bandwidth is dedicated: put dedicated bandwidth "
            "and a floor in the contract.",
        )
    if any(offer.get("storage_type") == "unknown" for offer in offers):
        yield (
            "部分套餐未说明存储类型：在合同中写明磁盘类型与 IOPS。",
            "Some offers do not state the storage type: put the disk type and IOPS in the contract.",
        )


# Offer fields a measurement can refute, with how the recommendation names them.
MEASURED_NAMES = {
    "gpu": ("GPU 型号/数量", "GPU model/count"),
    "intranet_gbps": ("内网带宽", "intranet bandwidth"),
    "public_mbps": ("公网带宽", "public bandwidth"),
    "bandwidth_type": ("带宽独享", "dedicated bandwidth"),
    "storage_type": ("存储类型", "storage type"),
    "nominal_iops": ("存储 IOPS", "storage IOPS"),
}


@recommender("measured_failures")
def _measured_failures(inputs: dict[str, Any]) -> Iterable[Advice]:
    source = _source(inputs, "measurements")
    if source["status"] != "ok":
        return
    failed = [claim for claim in source["data"].get("claims", []) if claim.get("verdict") == "fail"]
    names = sorted(
        {claim.get("metric") for claim in failed} & set(MEASURED_NAMES), key=list(MEASURED_NAMES).index
    )
    if names:
        yield (
            f"实测不符合标称：{'、'.join(MEASURED_NAMES[name][0] for name in names)}。"
            "要求供应商书面解释并复测，或在合同中按实测值定价、写明最低保障。",
            f"Measurements fall short of the claims: {', '.join(MEASURED_NAMES[name][1] for name in names)}. "
            "Ask the provider to explain in writing and re-test, or contract on the measured figures "
            "with a floor.",
        )
