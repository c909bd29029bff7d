"""Red flags from the enterprise credit record (企业信用, DOMAIN.md 3b), read from the "credit" fact.

The fact (app.credentials.credit.credit_facts) holds the latest record of each public system looked up by
the provider's USCC. A registration status other than alive is a blocker; the abnormal operations list,
the serious illegal and dishonest list and each court enforcement record are warnings saying why, since
when and how much; a company founded within the last year or with a tiny registered capital raises a
question. The texts live here, in both languages.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from app.core import vocabulary
from app.vetting.findings import Finding, RuleContext, Severity, rule

ALIVE = ("存续", "在业", "在营", "开业")
RECENT_DAYS = 365
TINY_CAPITAL_WAN = Decimal(100)  # 100 万元 (¥1,000,000), registered capital in CNY
SOURCE_NAMES = {
    "gsxt": ("国家企业信用信息公示系统", "the National Enterprise Credit Information Publicity System"),
    "creditchina": ("信用中国", "Credit China"),
    "zxgk": ("中国执行信息公开网", "the court enforcement information site (zxgk)"),
}
SITES = {
    "gsxt": "https://www.gsxt.gov.cn/",
    "creditchina": "https://www.creditchina.gov.cn/",
    "zxgk": "http://zxgk.court.gov.cn/",
}
VERIFY = (
    "在{site_zh}按统一社会信用代码 {uscc} 查询该公司，核对登记状态、经营异常名录、"
    "严重违法失信名单和被执行记录，截图后在“企业信用”中记录。",
    "Look the company up by its USCC {uscc} on {site_en}, check its registration status, the abnormal "
    "operations list, the serious illegal and dishonest list and its enforcement records, and record them "
    "with a screenshot under 'Enterprise credit'.",
)
TEXTS = {
    "credit.status_not_alive": (
        Severity.blocker,
        "{source_zh}显示登记状态为“{status}”（{looked}查询）：公司已非存续/在业状态，不能签约或继续履约。",
        "{source_en} shows the registration status '{status_en}' (looked up {looked}): the company is no "
        "longer alive and may not trade or keep a contract.",
    ),
    "credit.abnormal_list": (
        Severity.warning,
        "{source_zh}显示该公司自 {since} 起列入经营异常名录，原因：{reason}。",
        "{source_en} shows the company on the abnormal operations list since {since}; reason: {reason}.",
    ),
    "credit.dishonest_list": (
        Severity.warning,
        "{source_zh}显示该公司自 {since} 起列入严重违法失信名单，原因：{reason}。",
        "{source_en} shows the company on the serious illegal and dishonest list since {since}; reason: "
        "{reason}.",
    ),
    "credit.enforcement": (
        Severity.warning,
        "{source_zh}有被执行记录：执行标的 {amount} 元，立案日期 {filed}，{court}。"
        "被执行中的供应商可能中断服务或带着预付款消失。",
        "{source_en} shows an enforcement record: CNY {amount}, filed {filed}, {court}. A provider being "
        "enforced against may cut service or vanish with prepaid fees.",
    ),
    "credit.recently_founded": (
        Severity.info,
        "公司成立于 {founded}，不足一年：请询问其运营团队、机房与既往客户。",
        "The company was founded on {founded}, less than a year ago: ask about its team, datacenters and "
        "past customers.",
    ),
    "credit.small_capital": (
        Severity.info,
        "注册资本仅 {capital} 万元：请对照合同金额，询问其履约与赔付能力。",
        "The registered capital is only {capital} 万元 (CNY {yuan}): compare it with the contract value and "
        "ask how the provider would perform and compensate.",
    ),
}


def _records(context: RuleContext) -> list[dict[str, Any]]:
    return (context.facts.get("credit") or {}).get("records", [])


def _finding(
    context: RuleContext, rule_id: str, record: dict[str, Any], subject: str, **values: Any
) -> Finding:
    """A credit Finding with its texts filled, the record's screenshot as evidence and how to verify."""
    severity, zh, en = TEXTS[rule_id]
    site_zh, site_en = SOURCE_NAMES.get(record["source"], (record["source"], record["source"]))
    looked = str(record.get("looked_at") or "")[:10]
    fill = {"source_zh": site_zh, "source_en": site_en, "looked": looked, **values}
    uscc = context.provider.uscc or record.get("uscc") or ""
    evidence = {
        "kind": "evidence",
        "evidence_id": record.get("evidence_id"),
        "url": SITES.get(record["source"], ""),
        "fetched_at": record.get("looked_at"),
    }
    return Finding(
        rule_id=rule_id,
        severity=severity,
        message_zh=zh.format(**fill),
        message_en=en.format(**fill),
        how_to_verify_zh=VERIFY[0].format(site_zh=site_zh, uscc=uscc),
        how_to_verify_en=VERIFY[1].format(site_en=site_en, uscc=uscc),
        subject=f"credit_record:{record['id']}:{subject}",
        evidence=(evidence,),
    )


@rule("credit.status_not_alive", title_zh="企业登记状态异常", title_en="Company no longer alive")
def status_not_alive(context: RuleContext) -> Iterator[Finding]:
    """Registration status other than 存续 / 在业 / 在营 / 开业 (吊销, 注销, 迁出 ...)."""
    for record in _records(context):
        status = record.get("registration_status")
        if status and status not in ALIVE:
            english = vocabulary.label(status, "en", kind="registration_status")
            yield _finding(
                context, "credit.status_not_alive", record, "status", status=status, status_en=english
            )


def _listing(context: RuleContext, rule_id: str, name: str) -> Iterator[Finding]:
    for record in _records(context):
        if record.get(f"{name}_listed"):
            since, reason = record.get(f"{name}_since") or "?", record.get(f"{name}_reason") or "?"
            yield _finding(context, rule_id, record, name, since=since, reason=reason)


@rule("credit.abnormal_list", title_zh="列入经营异常名录", title_en="On the abnormal operations list")
def abnormal_list(context: RuleContext) -> Iterator[Finding]:
    """On 经营异常名录: why and since when."""
    yield from _listing(context, "credit.abnormal_list", "abnormal")


@rule("credit.dishonest_list", title_zh="列入严重违法失信名单", title_en="On the serious dishonest list")
def dishonest_list(context: RuleContext) -> Iterator[Finding]:
    """On 严重违法失信名单: why and since when."""
    yield from _listing(context, "credit.dishonest_list", "dishonest")


@rule("credit.enforcement", title_zh="存在被执行记录", title_en="Court enforcement record")
def enforcement(context: RuleContext) -> Iterator[Finding]:
    """One warning per enforcement record, with its amount and date."""
    for record in _records(context):
        for index, entry in enumerate(record.get("enforcements") or []):
            values = {
                "amount": f"{Decimal(entry['amount_cny']):,.2f}",
                "filed": entry["filed_on"],
                "court": entry["court"],
            }
            yield _finding(context, "credit.enforcement", record, f"enforcement:{index}", **values)


def _founded(record: dict[str, Any]) -> date | None:
    return date.fromisoformat(record["founded_on"]) if record.get("founded_on") else None


@rule("credit.recently_founded", title_zh="成立不足一年", title_en="Founded less than a year ago")
def recently_founded(context: RuleContext) -> Iterator[Finding]:
    """A founding date within the last year deserves a question (once, from the latest record showing it)."""
    for record in _records(context):
        founded = _founded(record)
        if founded is not None:
            if founded > context.today - timedelta(days=RECENT_DAYS):
                yield _finding(context, "credit.recently_founded", record, "founded", founded=founded)
            return


@rule("credit.small_capital", title_zh="注册资本很小", title_en="Tiny registered capital")
def small_capital(context: RuleContext) -> Iterator[Finding]:
    """A registered capital in CNY below TINY_CAPITAL_WAN deserves a question (once)."""
    for record in _records(context):
        capital = record.get("registered_capital_wan")
        if capital is None or record.get("capital_currency") != "CNY":
            continue
        if Decimal(capital) < TINY_CAPITAL_WAN:
            yuan = f"{Decimal(capital) * 10_000:,.0f}"
            yield _finding(context, "credit.small_capital", record, "capital", capital=capital, yuan=yuan)
        return
