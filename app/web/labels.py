"""Human-readable (translatable) labels for enum values, field names and audit vocabulary."""

from __future__ import annotations

from typing import Any

from flask_babel import lazy_gettext as _l
from flask_babel import lazy_pgettext
from sqlmodel import SQLModel

PROVIDER_STATUS = {
    "candidate": _l("候选"),
    "approved": _l("已批准"),
    "rejected": _l("已拒绝"),
    "suspended": _l("已暂停"),
}

# Bootstrap colour of each provider status badge.
PROVIDER_STATUS_COLOUR = {
    "candidate": "secondary",
    "approved": "success",
    "rejected": "danger",
    "suspended": "warning",
}

LICENCE_STATUS = {
    "正常": _l("正常"),
    "撤销": _l("撤销"),
    "无效": _l("无效"),
    "吊销": _l("吊销"),
    "注销": _l("注销"),
    "过期": _l("过期"),
}

CERTIFICATE_STATUS = {
    "有效": _l("有效"),
    "暂停": _l("暂停"),
    "撤销": _l("撤销"),
    "注销": _l("注销"),
    "过期": _l("过期"),
}

FILING_KIND = {
    "icp_filing": _l("ICP 备案"),
    "icp_licence": _l("ICP 证"),
    "psb_filing": _l("公网安备"),
}

# Kinds that identify() can detect, shown next to a licence number.
IDENTIFIER_KIND = {
    "licence": _l("经营许可证"),
    "icp_filing": _l("ICP 备案"),
    "icp_licence": _l("ICP 证"),
    "psb_filing": _l("公网安备"),
    "uscc": _l("统一社会信用代码"),
    "unknown": _l("无法识别"),
}

CERTIFICATION_KIND = {
    "iso9001": _l("ISO 9001 质量管理"),
    "iso27001": _l("ISO 27001 信息安全"),
    "dengbao": _l("等保（网络安全等级保护）"),
    "other": _l("其他"),
}

OFFER_KIND = {
    "bare_metal": _l("裸金属 / 独享服务器"),
    "cloud_instance": _l("弹性云 GPU 实例"),
    "colocation": _l("机柜托管"),
}

RDMA_TYPE = {
    "none": _l("无"),
    "roce": _l("RoCE"),
    "infiniband": _l("InfiniBand"),
}

BANDWIDTH_TYPE = {
    "dedicated": _l("独享"),
    "shared": _l("共享"),
    "unknown": _l("未知"),
}

STORAGE_TYPE = {
    "local_nvme": _l("本地 NVMe"),
    "local_sata_ssd": _l("本地 SATA SSD"),
    "cloud_disk": _l("云盘"),
    "nfs": _l("NFS"),
    "parallel_fs": _l("并行文件系统"),
    "unknown": _l("未知"),
}

ROLE = {
    "viewer": _l("只读"),
    "analyst": _l("分析员"),
    "admin": _l("管理员"),
}

BUSINESS_ITEM = {
    "B11": _l("B11 互联网数据中心业务"),
    "B12": _l("B12 内容分发网络业务"),
    "B13": _l("B13 国内互联网虚拟专用网业务"),
    "B14": _l("B14 互联网接入服务业务"),
    "B21": _l("B21 在线数据处理与交易处理业务"),
    "B22": _l("B22 国内多方通信服务业务"),
    "B23": _l("B23 存储转发类业务"),
    "B24": _l("B24 呼叫中心业务"),
    "B25": _l("B25 信息服务业务"),
    "B26": _l("B26 编码和规程转换业务"),
}

TRISTATE = {
    "": _l("未知"),
    "true": _l("是"),
    "false": _l("否"),
}

# Context "audit": past-tense verbs in English, unlike the "删除" (delete) button.
AUDIT_ACTION = {
    "create": lazy_pgettext("audit", "新建"),
    "update": lazy_pgettext("audit", "修改"),
    "delete": lazy_pgettext("audit", "删除"),
    "declare": _l("供应商申报"),
}

ENTITY = {
    "provider": _l("供应商"),
    "licence": _l("许可证"),
    "filing": _l("备案"),
    "certification": _l("认证"),
    "datacenter": _l("机房"),
    "offer": _l("套餐"),
    "user": _l("用户"),
    "procurement_case": _l("选型案例"),
    "checklist_tick": _l("核查清单勾选"),
    "trial_server": _l("试用服务器"),
    "export_record": _l("报告导出"),
    "invitation": _l("尽调问卷"),
    "lookup": _l("官方查询"),
    "footer_record": _l("人工记录的网站页脚"),
    "provider_watch": _l("关注"),
    "notify_settings": _l("通知设置"),
    "webhook": _l("回调地址"),
}

# Collections of a provider, as used in URLs and service calls.
COLLECTION = {
    "licences": _l("许可证"),
    "filings": _l("备案"),
    "certifications": _l("认证"),
    "datacenters": _l("机房"),
    "offers": _l("套餐"),
}

FIELD = {
    # a merged disclosure questionnaire (app/disclosure/merge.py, audit trail)
    "declared_on": _l("供应商申报日期"),
    "invitation_id": _l("尽调问卷编号"),
    # official lookup recorded by hand (app/credentials/manual_lookups.py, audit trail)
    "query": _l("查询名称"),
    "found": _l("查到记录"),
    "holder_name": _l("持有人名称"),
    "looked_at": _l("查看时间"),
    # website footer recorded by hand (app/credentials/footer_manual.py, audit trail)
    "url": _l("网址"),
    "numbers": _l("页脚上的号码"),
    "evidence_id": _l("证据编号"),
    "note": _l("备注"),
    "sha256": "SHA-256",
    # provider
    "legal_name": _l("企业名称"),
    "legal_name_en": _l("英文名称"),
    "short_name": _l("简称"),
    "uscc": _l("统一社会信用代码"),
    "registered_province": _l("注册省份"),
    "registered_address": _l("注册地址"),
    "website": _l("网址"),
    "registered_capital_cny": _l("注册资本（元）"),
    "contact_name": _l("联系人"),
    "contact_phone": _l("联系电话"),
    "contact_email": _l("联系邮箱"),
    "notes": _l("备注"),
    "status": _l("状态"),
    "discloses_network_topology": _l("公开网络拓扑"),
    "discloses_storage_config": _l("公开存储配置"),
    "version": _l("版本"),
    # licence
    "number_raw": _l("编号（原文）"),
    "number": _l("编号"),
    "number_kind": _l("编号类型"),
    "categories": _l("业务类别"),
    "company_name": _l("持证企业"),
    "business_items": _l("业务种类"),
    "b11_includes_resource_collab": _l("B11 含互联网资源协作服务"),
    "coverage": _l("覆盖范围"),
    "issuer": _l("发证机关"),
    "issued_on": _l("发证日期"),
    "expires_on": _l("有效期至"),
    # filing
    "kind": _l("类型"),
    "entity_name": _l("主办单位"),
    "entity_nature": _l("单位性质"),
    "domain": _l("域名"),
    # certification
    "name": _l("名称"),
    "level": _l("级别"),
    # datacenter
    "province": _l("省份"),
    "city": _l("城市"),
    # offer
    "offer_kind": _l("租用方式"),
    "datacenter_id": _l("机房"),
    "gpu_model": _l("GPU 型号"),
    "gpus_per_node": _l("每节点 GPU 数"),
    "gpu_memory_gb": _l("显存（GB）"),
    "vcpu": _l("vCPU"),
    "ram_gb": _l("内存（GB）"),
    "intranet_gbps": _l("内网带宽（Gbps，标称）"),
    "rdma_type": _l("RDMA 类型"),
    "rdma_gbps": _l("RDMA 带宽（Gbps）"),
    "public_mbps": _l("公网带宽（Mbps）"),
    "bandwidth_type": _l("带宽类型"),
    "storage_type": _l("存储类型"),
    "storage_capacity_gb": _l("存储容量（GB）"),
    "nominal_iops": _l("标称 IOPS"),
    "price_gpu_hour_cny": _l("单价（元/卡·时）"),
    "price_month_cny": _l("月价（元/月）"),
    # bookkeeping that may show up in the audit trail
    "id": _l("编号 ID"),
    "provider_id": _l("供应商 ID"),
    "username": _l("用户名"),
    "role": _l("角色"),
    "active": _l("启用"),
    "password": _l("密码"),
}

# Which label dict translates the values of a field (for the audit trail and details).
VALUE_LABELS: dict[str, dict[str, Any]] = {
    "status": {**PROVIDER_STATUS, **LICENCE_STATUS},
    "kind": {
        **FILING_KIND,
        **CERTIFICATION_KIND,
        "icp": _l("ICP 备案查询"),  # official lookups (audit trail of lookups recorded by hand)
        "licence": _l("增值电信许可证查询"),
    },
    "offer_kind": OFFER_KIND,
    "rdma_type": RDMA_TYPE,
    "bandwidth_type": BANDWIDTH_TYPE,
    "storage_type": STORAGE_TYPE,
    "number_kind": IDENTIFIER_KIND,
    "role": ROLE,
}

# What a benchmark comparison checked (benchmarks.compare.Comparison.check), for evidence references.
BENCH_CHECK = {
    "bandwidth": _l("带宽"),
    "stability": _l("带宽稳定性"),
    "storage_type": _l("存储类型"),
    "iops": _l("IOPS"),
    "iops_range": _l("IOPS 波动"),
    "write_rate": _l("写入速率"),
    "write_throughput": _l("写入吞吐"),
    "ping_jitter": _l("延迟抖动"),
    "ping_loss": _l("丢包"),
    "gpu_count": _l("GPU 数量"),
    "gpu_model": _l("GPU 型号"),
    "gpu_utilization": _l("GPU 利用率"),
    "gpu_health": _l("GPU 健康"),
    "collective": _l("多卡通信带宽"),
    "dataload": _l("小文件读取"),
    "matrix": _l("节点间带宽矩阵"),
    "rdma": _l("RDMA 带宽"),
}

# The figures a case ranks an offer on (app.advice.ranking.FIGURES and measured extras).
FIGURE = {
    "rdma_gbps": _l("RDMA 带宽"),
    "intranet_gbps": _l("内网带宽"),
    "public_mbps": _l("公网带宽"),
    "read_iops": _l("读 IOPS"),
    "write_mb_s": _l("写入速度"),
    "bandwidth_type": _l("带宽类型"),
    "storage_type": _l("存储类型"),
    "gpu_model": _l("GPU 型号"),
    "gpu_count": _l("GPU 数量"),
    "rtt_ms": _l("往返时延"),
    "intranet_rtt_ms": _l("内网往返时延"),
    "office_rtt_ms": _l("到办公室往返时延"),
}

# A benchmark comparison's verdict (benchmarks.compare.Verdict).
BENCH_VERDICT = {"pass": _l("通过"), "warn": _l("警告"), "fail": _l("不通过"), "info": _l("信息")}

# Where a benchmark run's numbers came from.
RUN_ORIGIN = {"executed": _l("本系统实测"), "uploaded": _l("上传的测试输出")}

# Benchmark runs: suites, steps and their states, network paths, detected storage kinds, where a
# command ran, and units of measured and claimed figures (gpuvet->target: a path the ping probe names).
BENCH_SUITE = {
    "quick": _l("快速测试"),
    "standard": _l("标准测试"),
    "stability": _l("稳定性测试"),
    "gpu": _l("GPU 测试"),
    "custom": _l("自定义测试"),
    "matrix": _l("多节点测试"),
    "upload": _l("上传的输出"),
}

BENCH_STEP = {
    "inventory": _l("硬件清单"),
    "ping": _l("延迟（ping）"),
    "iperf3": _l("单流带宽"),
    "iperf3_parallel": _l("多流带宽"),
    "iperf3_reverse": _l("反向带宽"),
    "fio_randread": _l("4k 随机读"),
    "fio_write": _l("检查点写入"),
    "disk_type": _l("存储类型"),
    "gpu": _l("GPU 采样"),
    "gpu_health": _l("GPU 健康检查"),
    "collective": _l("多卡通信（all-reduce）"),
    "dataload": _l("数据加载"),
    "rdma": _l("RDMA"),
    "collective_cluster": _l("跨节点 all-reduce"),
    "stability": _l("重复带宽测试"),
    "upload": _l("上传的输出"),
}

STEP_STATUS = {
    "pending": _l("等待中"),
    "running": _l("进行中"),
    "ok": _l("成功"),
    "failed": _l("失败"),
    "not_installed": _l("缺少工具"),
    "cancelled": _l("已取消"),
    "skipped": _l("已跳过"),
    "interrupted": _l("已中断"),
}

STEP_STATUS_COLOUR = {
    "pending": "secondary",
    "running": "primary",
    "ok": "success",
    "failed": "danger",
    "not_installed": "warning",
    "cancelled": "dark",
    "skipped": "light",
    "interrupted": "warning",
}

NET_PATH = {
    "public": _l("公网"),
    "intranet": _l("内网"),
    "storage": _l("存储"),
    "gpuvet->target": _l("本机 → 目标服务器"),
    "target->peer": _l("目标服务器 → 对端服务器"),
}

STORAGE_CLASS = {
    **STORAGE_TYPE,
    "local_ssd": _l("本地 SATA/SAS SSD"),
    "local_hdd": _l("本地机械硬盘"),
    "virtual_disk": _l("虚拟磁盘"),
    "network_block": _l("网络块存储"),
    "network_fs": _l("网络文件系统"),
    "memory": _l("内存文件系统"),
}

COMMAND_ROLE = {
    "target": _l("目标服务器"),
    "peer": _l("对端服务器"),
    "local": _l("本机"),
    "upload": _l("上传"),
}

UNIT = {"GPUs": _l("块"), "samples": _l("次"), "cv": _l("变异系数"), "us": _l("微秒"), "ms": _l("毫秒")}

GROUPS: dict[str, dict[str, Any]] = {
    "provider_status": PROVIDER_STATUS,
    "licence_status": LICENCE_STATUS,
    "certificate_status": CERTIFICATE_STATUS,
    "filing_kind": FILING_KIND,
    "identifier_kind": IDENTIFIER_KIND,
    "certification_kind": CERTIFICATION_KIND,
    "offer_kind": OFFER_KIND,
    "rdma_type": RDMA_TYPE,
    "bandwidth_type": BANDWIDTH_TYPE,
    "storage_type": STORAGE_TYPE,
    "role": ROLE,
    "business_item": BUSINESS_ITEM,
    "action": AUDIT_ACTION,
    "entity": ENTITY,
    "collection": COLLECTION,
    "field": FIELD,
    "bench_suite": BENCH_SUITE,
    "bench_step": BENCH_STEP,
    "step_status": STEP_STATUS,
    "net_path": NET_PATH,
    "storage_class": STORAGE_CLASS,
    "command_role": COMMAND_ROLE,
    "unit": UNIT,
    "bench_check": BENCH_CHECK,
    "figure": FIGURE,
    "bench_verdict": BENCH_VERDICT,
    "run_origin": RUN_ORIGIN,
}


def label(value: Any, group: str) -> Any:
    """Label of `value` in a label group; unknown values are shown as they are."""
    if value is None:
        return ""
    key = getattr(value, "value", value)
    return GROUPS[group].get(key, key)


def field_label(name: str) -> Any:
    """Label of a field name (the last part of a path such as licences[0].number_raw)."""
    return FIELD.get(name.rsplit(".", 1)[-1], name)


def value_label(field: str, value: Any) -> Any:
    """Label of a stored value of `field` when it is an enum value, else the value itself."""
    labels = VALUE_LABELS.get(field)
    if labels is not None and isinstance(value, str):
        return labels.get(value, value)
    if isinstance(value, bool):
        return TRISTATE["true" if value else "false"]
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) if value else "—"
    if value is None or value == "":
        return "—"
    if isinstance(value, (int, float)):
        return number(value, grouping=False)
    return value


def number(value: Any, *, grouping: bool = True) -> Any:
    """Numbers without a useless '.0' and, by default, with thousands separators; None stays None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and not value.is_integer():
        text = f"{value:,.3f}" if grouping else f"{value:.3f}"
        return text.rstrip("0").rstrip(".")
    return f"{int(value):,}" if grouping else str(int(value))


# Columns the audit trail records that say nothing to a reader.
_HIDDEN_CHANGES = {"id", "provider_id"}


def ordered_changes(changes: dict[str, Any], entity: str = "") -> list[tuple[str, Any, Any]]:
    """Audit changes as (field, before, after) in the table's column order, bookkeeping left out."""
    table = SQLModel.metadata.tables.get(entity)
    order = {name: index for index, name in enumerate(table.columns.keys())} if table is not None else {}
    rows = [(name, *pair) for name, pair in changes.items() if name not in _HIDDEN_CHANGES and len(pair) == 2]
    return sorted(rows, key=lambda row: (order.get(row[0], len(order)), row[0]))
