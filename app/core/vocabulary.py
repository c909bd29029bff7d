"""One bilingual table of every enumerated value's label (Chinese, English) and of the order of ordered kinds.

Pages, PDFs, the disclosure form, CSV headers and the API's label fields read it. A kind lists its values
in order: worst first for severities and verdicts, increasing power for roles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from functools import cache
from typing import Any

from app.core import errors
from app.core.i18n import LANGUAGES, current_language

# kind -> value -> (Chinese, English); a kind's values are in its order.
LABELS: dict[str, dict[str, tuple[str, str]]] = {
    # ordered kinds: worst first
    "severity": {
        "blocker": ("阻断", "Blocker"),
        "warning": ("警告", "Warning"),
        "info": ("提示", "Note"),
    },
    "verdict": {  # a check run's verdict (app.models.enums.Verdict); not_verified: no check yet
        "fail": ("不通过", "Fail"),
        "needs_review": ("需复核", "Needs review"),
        "pass": ("通过", "Pass"),
        "not_verified": ("未核验", "Not verified"),
    },
    "verdict_level": {  # a provider's verdict as labels phrase it (app.credentials.verdicts); unchecked: none
        "fail": ("不通过", "fails"),
        "needs_review": ("需复核", "needs review"),
        "pass": ("通过", "passes"),
        "unchecked": ("未核验", "not verified"),  # never checked: the reports' word for "no evidence"
    },
    "job_state": {  # a queued job's state, and a benchmark run's (app.models.jobs.JobState, trials.RunState)
        "queued": ("排队中", "Queued"),
        "running": ("运行中", "Running"),
        "succeeded": ("已完成", "Done"),
        "failed": ("失败", "Failed"),
        "cancelled": ("已取消", "Cancelled"),
        "interrupted": ("已中断", "Interrupted"),
    },
    "lookup_state": {  # an official lookup's state (app.models.evidence.LookupState)
        "pending": ("正在获取验证码", "Fetching captcha"),
        "awaiting_answer": ("等待输入验证码", "Waiting for the captcha answer"),
        "checking": ("正在查询", "Looking up"),
        "completed": ("已完成", "Done"),
        "failed": ("失败", "Failed"),
        "manual": ("人工记录", "Recorded by hand"),
    },
    "bench_verdict": {  # a benchmark comparison's verdict (benchmarks.checks.Verdict)
        "fail": ("不通过", "Fail"),
        "warn": ("警告", "Warning"),
        "pass": ("通过", "Pass"),
        "info": ("信息", "Info"),
    },
    # unordered kinds: shown in this order in choices
    "not_sure": {  # a questionnaire's "unknown" answer: the provider is not sure
        "unknown": ("不确定", "Not sure"),
    },
    "datacenter_tier": {
        "tier1": ("Tier I", "Tier I"),
        "tier2": ("Tier II", "Tier II"),
        "tier3": ("Tier III", "Tier III"),
        "tier4": ("Tier IV", "Tier IV"),
        "gb_a": ("GB 50174 A 级", "GB 50174 class A"),
        "gb_b": ("GB 50174 B 级", "GB 50174 class B"),
        "gb_c": ("GB 50174 C 级", "GB 50174 class C"),
    },
    "power_redundancy": {
        "n": ("N", "N"),
        "n+1": ("N+1", "N+1"),
        "2n": ("2N", "2N"),
        "2n+1": ("2N+1", "2N+1"),
    },
    "storage_location": {
        "local_nvme": ("本地 NVMe", "Local NVMe"),
        "network": ("网络存储", "Network storage"),
        "both": ("两者都有", "Both"),
    },
    "raid": {
        "none": ("无 RAID", "No RAID"),
        "raid0": ("RAID 0", "RAID 0"),
        "raid1": ("RAID 1", "RAID 1"),
        "raid5": ("RAID 5", "RAID 5"),
        "raid6": ("RAID 6", "RAID 6"),
        "raid10": ("RAID 10", "RAID 10"),
        "other": ("其他", "Other"),
    },
    "provider_status": {
        "candidate": ("候选", "Candidate"),
        "approved": ("已批准", "Approved"),
        "rejected": ("已拒绝", "Rejected"),
        "suspended": ("已暂停", "Suspended"),
    },
    "licence_status": {
        "正常": ("正常", "Valid"),
        "撤销": ("撤销", "Revoked"),
        "无效": ("无效", "Invalid"),
        "吊销": ("吊销", "Withdrawn"),
        "注销": ("注销", "Cancelled"),
        "过期": ("过期", "Expired"),
    },
    "certificate_status": {
        "有效": ("有效", "Active"),
        "暂停": ("暂停", "suspended"),
        "撤销": ("撤销", "Revoked"),
        "注销": ("注销", "Cancelled"),
        "过期": ("过期", "Expired"),
    },
    "registration_status": {  # a company's 登记状态 as gsxt shows it (app.credentials.credit); alive first
        "存续": ("存续", "Existing"),
        "在业": ("在业", "In business"),
        "在营": ("在营", "Operating"),
        "开业": ("开业", "Open"),
        "吊销": ("吊销", "Business licence revoked"),
        "注销": ("注销", "Deregistered"),
        "迁出": ("迁出", "Moved to another registry"),
        "撤销": ("撤销", "Registration cancelled"),
        "停业": ("停业", "Closed for business"),
        "清算": ("清算", "In liquidation"),
    },
    "filing_kind": {
        "icp_filing": ("ICP 备案", "ICP filing"),
        "icp_licence": ("ICP 证", "ICP licence"),
        "psb_filing": ("公网安备", "Public-security filing"),
    },
    "identifier_kind": {
        "licence": ("经营许可证", "Operating licence"),
        "icp_filing": ("ICP 备案", "ICP filing"),
        "icp_licence": ("ICP 证", "ICP licence"),
        "psb_filing": ("公网安备", "Public-security filing"),
        "uscc": ("统一社会信用代码", "Unified social credit code"),
        "unknown": ("无法识别", "Not recognised"),
    },
    "certification_kind": {
        "iso9001": ("ISO 9001 质量管理", "ISO 9001 quality management"),
        "iso27001": ("ISO 27001 信息安全", "ISO 27001 information security"),
        "dengbao": ("等保（网络安全等级保护）", "MLPS (Multi-Level Protection Scheme)"),
        "other": ("其他", "Other"),
    },
    "offer_kind": {
        "bare_metal": ("裸金属 / 独享服务器", "Bare metal / dedicated server"),
        "cloud_instance": ("弹性云 GPU 实例", "Elastic cloud GPU instance"),
        "colocation": ("机柜托管", "Colocation"),
    },
    "rdma_type": {
        "none": ("无", "None"),
        "roce": ("RoCE", "RoCE"),
        "infiniband": ("InfiniBand", "InfiniBand"),
    },
    "bandwidth_type": {
        "dedicated": ("独享", "Dedicated"),
        "shared": ("共享", "Shared"),
        "unknown": ("未知", "Unknown"),
    },
    "storage_type": {
        "local_nvme": ("本地 NVMe", "Local NVMe"),
        "local_sata_ssd": ("本地 SATA SSD", "Local SATA SSD"),
        "cloud_disk": ("云盘", "Cloud disk"),
        "nfs": ("NFS", "NFS"),
        "parallel_fs": ("并行文件系统", "Parallel file system"),
        "unknown": ("未知", "Unknown"),
    },
    "role": {  # increasing power (app.models.enums.ROLE_RANK)
        "viewer": ("只读", "Viewer"),
        "analyst": ("分析员", "Analyst"),
        "approver": ("审批人", "Approver"),
        "admin": ("管理员", "Admin"),
    },
    "business_item": {
        "B11": ("B11 互联网数据中心业务", "B11 Internet data centre (IDC)"),
        "B12": ("B12 内容分发网络业务", "B12 Content delivery network (CDN)"),
        "B13": ("B13 国内互联网虚拟专用网业务", "B13 Domestic Internet VPN"),
        "B14": ("B14 互联网接入服务业务", "B14 Internet access (ISP)"),
        "B21": ("B21 在线数据处理与交易处理业务", "B21 Online data and transaction processing"),
        "B22": ("B22 国内多方通信服务业务", "B22 Domestic multi-party communication"),
        "B23": ("B23 存储转发类业务", "B23 Store-and-forward services"),
        "B24": ("B24 呼叫中心业务", "B24 Call centre"),
        "B25": ("B25 信息服务业务", "B25 Information services (ICP)"),
        "B26": ("B26 编码和规程转换业务", "B26 Code and protocol conversion"),
    },
    "action": {
        "create": ("新建", "Created"),
        "update": ("修改", "Changed"),
        "delete": ("删除", "Deleted"),
        "declare": ("供应商申报", "Declared by the provider"),
    },
    "entity": {
        "provider": ("供应商", "Provider"),
        "licence": ("许可证", "Licence"),
        "filing": ("备案", "Filing"),
        "certification": ("认证", "Certification"),
        "datacenter": ("机房", "Datacenter"),
        "offer": ("套餐", "Offer"),
        "user": ("用户", "User"),
        "procurement_case": ("选型案例", "Procurement case"),
        "checklist_tick": ("核查清单勾选", "Checklist tick"),
        "trial_server": ("试用服务器", "Trial server"),
        "export_record": ("报告导出", "Report export"),
        "invitation": ("尽调问卷", "Due-diligence questionnaire"),
        "lookup": ("官方查询", "Official lookups"),
        "footer_record": ("人工记录的网站页脚", "Website footer recorded by hand"),
        "provider_watch": ("关注", "Watch"),
        "notify_settings": ("通知设置", "Notification settings"),
        "webhook": ("回调地址", "Webhooks"),
        "quote": ("报价", "Quote"),
        "decision": ("采购决定", "Procurement decision"),
        "decision_condition": ("采购决定的条件", "Decision condition"),
        "risk_acceptance": ("风险接受", "Risk acceptance"),
        "runtime_setting": ("系统设置", "System setting"),
    },
    "collection": {
        "licences": ("许可证", "Licence"),
        "filings": ("备案", "Filing"),
        "certifications": ("认证", "Certification"),
        "datacenters": ("机房", "Datacenter"),
        "offers": ("套餐", "Offer"),
    },
    "lookup_kind": {  # an official lookup recorded by hand (audit trail)
        "icp": ("ICP 备案查询", "ICP filing lookup"),
        "licence": ("增值电信许可证查询", "Telecom licence lookup"),
    },
    "quote_channel": {  # how a quote reached the buyer (app.models.quotes.QuoteChannel)
        "email": ("邮件", "E-mail"),
        "phone": ("电话", "Phone"),
        "other": ("其他", "Other"),
        "link": ("询价链接", "Quote link"),
    },
    "field": {  # field names (audit trail, details, evidence, CSV headers)
        "declared_on": ("供应商申报日期", "Declared by the provider on"),
        "invitation_id": ("尽调问卷编号", "Questionnaire number"),
        "query": ("查询名称", "Name to look up"),
        "found": ("查到记录", "Record found"),
        "holder_name": ("持有人名称", "Holder name"),
        "looked_at": ("查看时间", "When you looked"),
        "url": ("网址", "Website"),
        "numbers": ("页脚上的号码", "Numbers in the footer"),
        "evidence_id": ("证据编号", "Evidence number"),
        "note": ("备注", "Notes"),
        "sha256": ("SHA-256", "SHA-256"),
        "legal_name": ("企业名称", "Legal name"),
        "legal_name_en": ("英文名称", "English name"),
        "short_name": ("简称", "Short name"),
        "uscc": ("统一社会信用代码", "Unified social credit code"),
        "registered_province": ("注册省份", "Registered province"),
        "registered_address": ("注册地址", "Registered address"),
        "website": ("网址", "Website"),
        "registered_capital_cny": ("注册资本（元）", "Registered capital (CNY)"),
        "contact_name": ("联系人", "Contact"),
        "contact_phone": ("联系电话", "Contact phone"),
        "contact_email": ("联系邮箱", "Contact e-mail"),
        "notes": ("备注", "Notes"),
        "status": ("状态", "Status"),
        "discloses_network_topology": ("公开网络拓扑", "Discloses network topology"),
        "discloses_storage_config": ("公开存储配置", "Discloses storage configuration"),
        "version": ("版本", "Version"),
        "number_raw": ("编号（原文）", "Number (as written)"),
        "number": ("编号", "Number"),
        "number_kind": ("编号类型", "Number kind"),
        "categories": ("业务类别", "Categories"),
        "company_name": ("持证企业", "Licence holder"),
        "business_items": ("业务种类", "Business items"),
        "b11_includes_resource_collab": (
            "B11 含互联网资源协作服务",
            "B11 includes Internet resource collaboration",
        ),
        "coverage": ("覆盖范围", "Coverage"),
        "issuer": ("发证机关", "Issuer"),
        "issued_on": ("发证日期", "Issued on"),
        "expires_on": ("有效期至", "Expires on"),
        "kind": ("类型", "Kind"),
        "entity_name": ("主办单位", "Entity name"),
        "entity_nature": ("单位性质", "Entity nature"),
        "domain": ("域名", "Domain"),
        "name": ("名称", "Name"),
        "level": ("级别", "Level"),
        "province": ("省份", "Province"),
        "city": ("城市", "City"),
        "offer_kind": ("租用方式", "Rental model"),
        "datacenter_id": ("机房", "Datacenter"),
        "gpu_model": ("GPU 型号", "GPU model"),
        "gpus_per_node": ("每节点 GPU 数", "GPUs per node"),
        "gpu_memory_gb": ("显存（GB）", "GPU memory (GB)"),
        "vcpu": ("vCPU", "vCPU"),
        "ram_gb": ("内存（GB）", "RAM (GB)"),
        "intranet_gbps": ("内网带宽（Gbps，标称）", "Intranet bandwidth (Gbps, nominal)"),
        "rdma_type": ("RDMA 类型", "RDMA type"),
        "rdma_gbps": ("RDMA 带宽（Gbps）", "RDMA bandwidth (Gbps)"),
        "public_mbps": ("公网带宽（Mbps）", "Public bandwidth (Mbps)"),
        "bandwidth_type": ("带宽类型", "Bandwidth type"),
        "storage_type": ("存储类型", "Storage type"),
        "storage_capacity_gb": ("存储容量（GB）", "Storage capacity (GB)"),
        "nominal_iops": ("标称 IOPS", "Nominal IOPS"),
        "price_gpu_hour_cny": ("单价（元/卡·时）", "Price (CNY per GPU-hour)"),
        "price_month_cny": ("月价（元/月）", "Price (CNY per month)"),
        "id": ("编号 ID", "ID"),
        "provider_id": ("供应商 ID", "Provider ID"),
        "username": ("用户名", "Username"),
        "role": ("角色", "Role"),
        "active": ("启用", "Active"),
        "password": ("密码", "Password"),
        "case_id": ("选型案例", "Procurement case"),
        "offer_id": ("套餐", "Offer"),
        "received_via": ("收到方式", "Received by"),
        "min_term_months": ("最短租期（月）", "Minimum term (months)"),
        "delivery_on": ("交付日期", "Delivery date"),
        "includes_public_bandwidth": ("含公网带宽", "Includes public bandwidth"),
        "includes_storage": ("含存储", "Includes storage"),
        "includes_support": ("含技术支持", "Includes support"),
        "sla_availability_pct": ("SLA 可用性（%）", "SLA availability (%)"),
        "sla_compensation": ("SLA 赔偿", "SLA compensation"),
        "trial_server_lent": ("提供试用服务器", "Trial server lent"),
        "valid_until": ("报价有效期至", "Quote valid until"),
        "entered_by_name": ("录入人", "Entered by"),
        "entered_at": ("录入时间", "Entered at"),
        # a procurement decision, its conditions and risk acceptances (audit trail)
        "state": ("状态", "State"),
        "offer_ids": ("所选套餐", "Chosen offers"),
        "provider_ids": ("所选供应商", "Chosen providers"),
        "quote_ids": ("依据的报价", "Quotes relied on"),
        "scope": ("范围", "Scope"),
        "term_months": ("期限（月）", "Term (months)"),
        "justification": ("选择理由", "Justification"),
        "single_source_reason": ("单一来源理由", "Single-source justification"),
        "evidence_sha256": ("提议时的证据 SHA-256", "Evidence SHA-256 when proposed"),
        "proposed_by_name": ("提议人", "Proposed by"),
        "proposed_at": ("提议时间", "Proposed at"),
        "decided_by_name": ("审批人", "Decided by"),
        "decided_at": ("审批时间", "Decided at"),
        "decision_comment": ("审批意见", "Approver's comment"),
        "valid_from": ("生效日", "In force from"),
        "snapshot_sha256": ("证据快照 SHA-256", "Evidence snapshot SHA-256"),
        "text": ("内容", "Text"),
        "due_on": ("到期日", "Due on"),
        "met_at": ("完成时间", "Met at"),
        "met_by_name": ("完成人", "Met by"),
        "finding_id": ("发现编号", "Finding id"),
        "rule_id": ("规则", "Rule"),
        "subject": ("对象", "Subject"),
        "severity": ("严重程度", "Severity"),
        "message_zh": ("说明（中文）", "Message (Chinese)"),
        "message_en": ("说明（英文）", "Message (English)"),
        "reason": ("接受理由", "Reason for accepting"),
        "accepted_by_name": ("接受人", "Accepted by"),
        "until": ("接受至", "Accepted until"),
    },
    "bench_suite": {
        "quick": ("快速测试", "Quick test"),
        "standard": ("标准测试", "Standard test"),
        "stability": ("稳定性测试", "Stability test"),
        "gpu": ("GPU 测试", "GPU test"),
        "custom": ("自定义测试", "Custom test"),
        "matrix": ("多节点测试", "Multi-node run"),
        "upload": ("上传的输出", "uploaded output"),
    },
    "bench_step": {
        "inventory": ("硬件清单", "Hardware inventory"),
        "ping": ("延迟（ping）", "Latency (ping)"),
        "iperf3": ("单流带宽", "Single-stream bandwidth"),
        "iperf3_parallel": ("多流带宽", "Parallel-stream bandwidth"),
        "iperf3_reverse": ("反向带宽", "Reverse bandwidth"),
        "fio_randread": ("4k 随机读", "4k random read"),
        "fio_write": ("检查点写入", "Checkpoint writes"),
        "disk_type": ("存储类型", "Storage type"),
        "gpu": ("GPU 采样", "GPU sampling"),
        "gpu_health": ("GPU 健康检查", "GPU health check"),
        "collective": ("多卡通信（all-reduce）", "Multi-GPU communication (all-reduce)"),
        "dataload": ("数据加载", "Data loading"),
        "rdma": ("RDMA", "RDMA"),
        "collective_cluster": ("跨节点 all-reduce", "All-reduce across nodes"),
        "stability": ("重复带宽测试", "Repeated bandwidth tests"),
        "upload": ("上传的输出", "uploaded output"),
    },
    "step_status": {
        "pending": ("等待中", "Waiting"),
        "running": ("进行中", "Running"),
        "ok": ("成功", "Succeeded"),
        "failed": ("失败", "Failed"),
        "not_installed": ("缺少工具", "Tool missing"),
        "cancelled": ("已取消", "Cancelled"),
        "skipped": ("已跳过", "Skipped"),
        "interrupted": ("已中断", "Interrupted"),
    },
    "net_path": {
        "public": ("公网", "Public"),
        "intranet": ("内网", "Intranet"),
        "storage": ("存储", "Storage"),
        "gpuvet->target": ("本机 → 目标服务器", "this server → target"),
        "target->peer": ("目标服务器 → 对端服务器", "target → peer"),
    },
    "storage_class": {
        "local_nvme": ("本地 NVMe", "Local NVMe"),
        "local_sata_ssd": ("本地 SATA SSD", "Local SATA SSD"),
        "cloud_disk": ("云盘", "Cloud disk"),
        "nfs": ("NFS", "NFS"),
        "parallel_fs": ("并行文件系统", "Parallel file system"),
        "unknown": ("未知", "Unknown"),
        "local_ssd": ("本地 SATA/SAS SSD", "Local SATA/SAS SSD"),
        "local_hdd": ("本地机械硬盘", "Local hard disk"),
        "virtual_disk": ("虚拟磁盘", "Virtual disk"),
        "network_block": ("网络块存储", "Network block storage"),
        "network_fs": ("网络文件系统", "Network filesystem"),
        "memory": ("内存文件系统", "Memory filesystem"),
    },
    "command_role": {
        "target": ("目标服务器", "Target server"),
        "peer": ("对端服务器", "Peer server"),
        "local": ("本机", "This server (gpuvet)"),
        "upload": ("上传", "uploaded"),
    },
    "unit": {
        "GPUs": ("块", "GPUs"),
        "samples": ("次", "times"),
        "cv": ("变异系数", "coefficient of variation"),
        "us": ("微秒", "µs"),
        "ms": ("毫秒", "ms"),
    },
    "bench_check": {
        "bandwidth": ("带宽", "Bandwidth"),
        "stability": ("带宽稳定性", "Bandwidth stability"),
        "storage_type": ("存储类型", "Storage type"),
        "iops": ("IOPS", "IOPS"),
        "iops_range": ("IOPS 波动", "IOPS range"),
        "write_rate": ("写入速率", "Write rate"),
        "write_throughput": ("写入吞吐", "Write throughput"),
        "ping_jitter": ("延迟抖动", "Latency jitter"),
        "ping_loss": ("丢包", "Packet loss"),
        "gpu_count": ("GPU 数量", "GPU count"),
        "gpu_model": ("GPU 型号", "GPU model"),
        "gpu_utilization": ("GPU 利用率", "GPU utilisation"),
        "gpu_health": ("GPU 健康", "GPU health"),
        "collective": ("多卡通信带宽", "Collective (all-reduce) bandwidth"),
        "dataload": ("小文件读取", "Small-file reads"),
        "matrix": ("节点间带宽矩阵", "Node-to-node bandwidth matrix"),
        "rdma": ("RDMA 带宽", "RDMA bandwidth"),
    },
    "figure": {
        "rdma_gbps": ("RDMA 带宽", "RDMA bandwidth"),
        "intranet_gbps": ("内网带宽", "Intranet bandwidth"),
        "public_mbps": ("公网带宽", "Public bandwidth"),
        "read_iops": ("读 IOPS", "Read IOPS"),
        "write_mb_s": ("写入速度", "Write speed"),
        "bandwidth_type": ("带宽类型", "Bandwidth type"),
        "storage_type": ("存储类型", "Storage type"),
        "gpu_model": ("GPU 型号", "GPU model"),
        "gpu_count": ("GPU 数量", "GPU count"),
        "rtt_ms": ("往返时延", "Round-trip time"),
        "intranet_rtt_ms": ("内网往返时延", "Intranet round-trip time"),
        "office_rtt_ms": ("到办公室往返时延", "Round-trip time to the office"),
    },
    "run_origin": {
        "executed": ("本系统实测", "Measured by gpuvet"),
        "uploaded": ("上传的测试输出", "Uploaded tool output"),
    },
    "residency": {  # where a case's data must stay (app.advice.answers.Residency)
        "none": ("不限", "No limit"),
        "mainland": ("须在中国大陆境内", "Within mainland China"),
        "province": ("须在指定省份内", "Within one province"),
    },
    "setting_origin": {  # where a setting's value comes from (app.core.runtime_settings)
        "edited": ("在本页修改", "Edited here"),
        "environment": ("环境变量", "Environment variable"),
        "instance_file": ("实例目录中的文件", "File in the instance folder"),
        "default": ("默认值", "Default"),
    },
    "decision_state": {  # a procurement decision's state (app.models.decisions.DecisionState)
        "proposed": ("待审批", "Awaiting approval"),
        "returned": ("已退回", "Returned"),
        "approved": ("已批准", "Approved"),
        "rejected": ("已否决", "Rejected"),
        # approved, but past its term or with a lapsed risk acceptance: read, never stored
        "needs_reapproval": ("须重新审批", "Needs re-approval"),
    },
}


@cache
def enum_kinds() -> dict[type[Enum], str]:
    """Which kind labels the values of an enum (imported on first use: `vet identify` loads no models)."""
    from app.models import enums

    return {
        enums.Severity: "severity",
        enums.Verdict: "verdict",
        enums.ProviderStatus: "provider_status",
        enums.LicenceStatus: "licence_status",
        enums.FilingKind: "filing_kind",
        enums.CertificationKind: "certification_kind",
        enums.OfferKind: "offer_kind",
        enums.RdmaType: "rdma_type",
        enums.BandwidthType: "bandwidth_type",
        enums.StorageType: "storage_type",
        enums.Role: "role",
    }


# Which kind labels the stored values of a field (audit trail, details, evidence).
FIELD_KINDS: dict[str, tuple[str, ...]] = {
    "status": ("provider_status", "licence_status"),
    "kind": ("filing_kind", "certification_kind", "lookup_kind"),
    "offer_kind": ("offer_kind",),
    "rdma_type": ("rdma_type",),
    "bandwidth_type": ("bandwidth_type",),
    "storage_type": ("storage_type",),
    "number_kind": ("identifier_kind",),
    "role": ("role",),
    "received_via": ("quote_channel",),
    "state": ("decision_state",),
    "severity": ("severity",),
}


def _kind_of(value: Any, kind: str | None) -> str:
    if kind is not None:
        return kind
    if isinstance(value, Enum) and type(value) in enum_kinds():
        return enum_kinds()[type(value)]
    raise ValueError(f"say which kind labels {value!r}")


def _language(lang: str | None) -> int:
    return LANGUAGES.index(lang or current_language())


def pair(value: Any, *, kind: str | None = None) -> tuple[str, str] | None:
    """The (Chinese, English) label of `value`, None when the kind does not list it."""
    key = getattr(value, "value", value)
    return LABELS[_kind_of(value, kind)].get(str(key))


def label(value: Any, lang: str | None = None, *, kind: str | None = None) -> str:
    """The label of `value` (an enum member, or a plain value with its `kind`) in `lang` (default: the
    current language); a value the kind does not list is shown as it is, None as ''."""
    if value is None:
        return ""
    found = pair(value, kind=kind)
    return found[_language(lang)] if found else str(getattr(value, "value", value))


def order(kind: str) -> tuple[str, ...]:
    """The values of a kind in their order (worst first for severities and verdicts)."""
    return tuple(LABELS[kind])


def rank(kind: str) -> dict[str, int]:
    """Each value of a kind with its place in the order (0 first)."""
    return {value: index for index, value in enumerate(LABELS[kind])}


def sort_key(kind: str) -> Callable[[Any], int]:
    """A sort key placing values in the kind's order; unknown values and None go last."""
    ranks = rank(kind)
    return lambda value: ranks.get(str(getattr(value, "value", value)), len(ranks))


def choices(kind: str, lang: str | None = None) -> list[tuple[str, str]]:
    """(value, label) of every value of a kind, in its order, for a select field."""
    index = _language(lang)
    return [(value, names[index]) for value, names in LABELS[kind].items()]


def field_label(name: str, lang: str | None = None) -> str:
    """The label of a field name (the last part of a path such as licences[0].number_raw)."""
    found = pair(name.rsplit(".", 1)[-1], kind="field")
    return found[_language(lang)] if found else name


def value_label(field: str, value: str, lang: str | None = None) -> str:
    """The label of a stored value of `field` when the field holds an enumerated value, else the value."""
    for kind in FIELD_KINDS.get(field, ()):
        found = pair(value, kind=kind)
        if found:
            return found[_language(lang)]
    return value


def kind_listing(values: Iterable[Any]) -> str | None:
    """The kind that lists every one of `values` (the one with the fewest values when several do: the
    licence statuses rather than a longer list sharing them), None when no kind lists them all."""
    wanted = {str(getattr(value, "value", value)) for value in values}
    kinds = [kind for kind, labels in LABELS.items() if wanted and wanted <= labels.keys()]
    return min(kinds, key=lambda kind: len(LABELS[kind]), default=None)


def choice_labels(values: list[str], kind: str | None = None) -> list[str] | None:
    """The labels of a choice's values in the current language (from `kind`, else from the kind that lists
    them all), None when no kind does: how app.core.errors words "取值无效，可选：…"."""
    kind = kind or kind_listing(values)
    return [label(value, kind=kind) for value in values] if kind else None


errors.use_labels(choice_labels)
