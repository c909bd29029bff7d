"""Verification status of each credential item: every licence, filing, certification, the website footer and
each figure an offer claims, derived from the evidence already stored (nothing is stored of its own).

Statuses: `unverified` (no evidence yet), `verified` (an official lookup, the footer scrape or a run gpuvet
executed agrees), `verified_by_hand` (an analyst's manual record or an uploaded output agrees), `contradicted`
(the evidence disagrees: named by the finding or the measurement), `expired` (it agreed, but longer ago than
GPUVET_VERIFICATION_MAX_AGE_DAYS, default 90). Which lookup counts is the one the rules read (the latest
automatic one, else the latest manual one: lookups.lookup_facts); which measurement counts is the
one red flags, ranking and reports read too (app.trials.measurements.counting_runs).

`verifications_of` answers a page of providers in a constant number of SQL statements.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session

from app.core import clock
from app.core.clock import aware
from app.credentials.manual_lookups import manual_info
from app.credentials.verification_evidence import ItemEvidence, read_evidence
from app.models.checks import StoredFinding
from app.models.credit import CreditRecord
from app.models.evidence import MANUAL_METHOD, Evidence, Lookup, LookupKind, LookupState
from app.models.provider import Certification, Offer
from app.vetting.identifiers import identify
from app.vetting.rules._sources import number_key
from app.vetting.subjects import SEVERITY_RANK, record_numbers, records_of

UNVERIFIED, VERIFIED, BY_HAND, CONTRADICTED, EXPIRED = (
    "unverified",
    "verified",
    "verified_by_hand",
    "contradicted",
    "expired",
)


STATUSES: dict[str, tuple[str, str]] = {
    UNVERIFIED: ("未核实", "not verified"),
    VERIFIED: ("已核实", "verified"),
    BY_HAND: ("人工核实", "verified by hand"),
    CONTRADICTED: ("证据不符", "contradicted"),
    EXPIRED: ("核实已过期", "verification expired"),
}


DEFAULT_MAX_AGE_DAYS = 90


BLOCKER = "blocker"  # a finding that contradicts a licence, filing or certificate (warnings stay findings)


# Which lookup verifies which kind of number.
LOOKUP_OF_KIND = {
    "licence": LookupKind.licence,
    "icp_filing": LookupKind.icp,
    "icp_licence": LookupKind.icp,
    "psb_filing": LookupKind.psb,
}


RECORD_NUMBER_FIELDS = ("licenceNo", "mainLicence", "serviceLicence", "recordNo", "number")


KIND_NAMES: dict[str, tuple[str, str]] = {
    "licence": ("许可证", "licence"),
    "icp_filing": ("ICP 备案", "ICP filing"),
    "icp_licence": ("ICP 许可证", "ICP licence"),
    "psb_filing": ("公安备案", "public-security filing"),
    "certification": ("认证", "certification"),
    "footer": ("网站页脚", "website footer"),
    "credit": ("企业信用记录", "enterprise credit record"),
    "offer": ("报价", "offer"),
}


# Offer fields that claim something a run can measure: field -> (figure, zh, en).
OFFER_CLAIMS: dict[str, tuple[str, str, str]] = {
    "gpu_model": ("gpu_model", "GPU 型号", "GPU model"),
    "gpus_per_node": ("gpu_count", "GPU 数量", "GPU count"),
    "intranet_gbps": ("intranet_gbps", "内网带宽", "intranet bandwidth"),
    "rdma_gbps": ("rdma_gbps", "RDMA 带宽", "RDMA bandwidth"),
    "public_mbps": ("public_mbps", "公网带宽", "public bandwidth"),
    "bandwidth_type": ("bandwidth_type", "带宽独享/共享", "dedicated or shared bandwidth"),
    "storage_type": ("storage_type", "存储类型", "storage type"),
    "nominal_iops": ("read_iops", "IOPS", "IOPS"),
}


NOT_CLAIMED = (None, "", "unknown", "none")


CERTIFICATE_NAMES = {  # (zh, en)
    "iso9001": ("ISO 9001", "ISO 9001"),
    "iso27001": ("ISO 27001", "ISO/IEC 27001"),
    "dengbao": ("等保", "MLPS"),
}


# Why an item is not verified, per kind: (zh, en).
MISSING_TEXT: dict[str, tuple[str, str]] = {
    "lookup": ("未经官方查询", "not looked up"),
    "footer": ("未核查", "not checked"),
    "footer_failed": ("抓取失败，未核查", "could not be fetched, not checked"),
    "credit": ("未查询公示系统", "not looked up in the publicity systems"),
    "measure": ("未实测", "not measured"),
    "by_hand": ("待人工核实", "to be verified by hand"),
}


@dataclass(frozen=True)
class ItemVerification:
    """One item's verification: what it is, its status and what it rests on."""

    subject: str  # "licence:3", "filing:5", "certification:2", "footer", "offer:7:intranet_gbps"
    kind: str  # a KIND_NAMES key
    name: str  # the number, certification name or figure as shown
    status: str
    reason_zh: str = ""  # why not verified, or what contradicts it
    reason_en: str = ""
    at: datetime | None = None  # when the evidence was taken
    by: str = ""
    lookup_id: int | None = None
    evidence_id: int | None = None
    run_id: int | None = None
    finding_rule: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_current(self) -> bool:
        """Verified (automatically or by hand) and not expired."""
        return self.status in (VERIFIED, BY_HAND)

    @property
    def needs_verifying(self) -> bool:
        """Nothing current vouches for it (contradicted items are findings of their own)."""
        return self.status in (UNVERIFIED, EXPIRED)

    def title(self, language: str = "zh") -> str:
        """'许可证 京B2-20202418' / 'licence 京B2-20202418'."""
        zh, en = KIND_NAMES.get(self.kind, (self.kind, self.kind))
        name = self.extra.get("name_en" if language == "en" else "name_zh", self.name)
        if self.kind == "offer":
            figure = self.extra.get("figure_en" if language == "en" else "figure_zh", "")
            name = f"#{self.extra.get('offer_id')} {figure}"
        return f"{en if language == 'en' else zh} {name}".strip()

    def status_label(self, language: str = "zh") -> str:
        """The status in `language`."""
        zh, en = STATUSES[self.status]
        return en if language == "en" else zh

    def reason(self, language: str = "zh") -> str:
        """Why, in `language`."""
        return self.reason_en if language == "en" else self.reason_zh

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (API, report snapshots)."""
        return {
            "subject": self.subject,
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "status_zh": STATUSES[self.status][0],
            "status_en": STATUSES[self.status][1],
            "reason_zh": self.reason_zh,
            "reason_en": self.reason_en,
            "at": aware(self.at).isoformat() if self.at else None,
            "by": self.by,
            "lookup_id": self.lookup_id,
            "evidence_id": self.evidence_id,
            "run_id": self.run_id,
            "finding_rule": self.finding_rule,
        }


def max_age_days() -> int:
    """GPUVET_VERIFICATION_MAX_AGE_DAYS of the running app (90 outside one)."""
    from flask import current_app, has_app_context

    if not has_app_context():
        return DEFAULT_MAX_AGE_DAYS
    from app.core.runtime_settings import effective

    settings = effective(current_app.config.get("GPUVET_SETTINGS"))  # as edited on the settings page
    return int(getattr(settings, "verification_max_age_days", DEFAULT_MAX_AGE_DAYS))


def _lookup_links(lookup: Lookup, at: datetime | None, by: str) -> dict[str, Any]:
    """What an item verified by a lookup rests on: when and by whom, the lookup and its stored reply."""
    return {"at": at, "by": by, "lookup_id": lookup.id, "evidence_id": lookup.result_evidence_id}


def _contradicted(
    subject: str, kind: str, name: str, finding: StoredFinding, **links: Any
) -> ItemVerification:
    """An item that a stored finding contradicts, in the finding's words."""
    return ItemVerification(
        subject,
        kind,
        name,
        CONTRADICTED,
        finding.message_zh,
        finding.message_en,
        finding_rule=finding.rule_id,
        **links,
    )


def _credit_item(record: CreditRecord | None, uscc: str | None) -> ItemVerification:
    name = uscc or ""
    if record is None:
        zh, en = MISSING_TEXT["credit"]
        return ItemVerification("credit", "credit", name, UNVERIFIED, zh, en)
    common = {"at": aware(record.looked_at), "by": record.recorded_by_name, "evidence_id": record.evidence_id}
    if record.uscc != (uscc or ""):
        return ItemVerification(
            "credit",
            "credit",
            name,
            CONTRADICTED,
            f"信用记录按另一个统一社会信用代码 {record.uscc} 查询",
            f"the credit record was looked up by another credit code, {record.uscc}",
            **common,
        )
    manual = str(record.method) == "manual"
    source = str(getattr(record.source, "value", record.source))
    return ItemVerification(
        "credit",
        "credit",
        name,
        BY_HAND if manual else VERIFIED,
        f"{source} 信用记录 #{record.id}" + ("（人工记录）" if manual else ""),
        f"{source} credit record #{record.id}" + (" (recorded by hand)" if manual else ""),
        **common,
    )


def _record_keys(kind: str, records: Iterable[dict[str, Any]]) -> set[tuple[str, ...]]:
    keys = set()
    for record in records:
        if not isinstance(record, dict):
            continue
        for name in RECORD_NUMBER_FIELDS:
            key = number_key(kind, record.get(name))
            if key is not None:
                keys.add(key)
    return keys


def _manual_by(lookup: Lookup) -> tuple[datetime | None, str]:
    """When the analyst looked and who recorded it (app.credentials.manual_lookups.manual_info)."""
    manual = manual_info(lookup) or {}
    return manual.get("looked_at"), str(manual.get("by") or lookup.created_by_name)


def _contradictions(
    findings: list[StoredFinding], records: list[tuple[str, int | None, str | None]]
) -> dict[str, StoredFinding]:
    """The most severe evidence finding about each record key ('licence:3', 'filing:5', 'certification:2'),
    by subject, cited registry record or the number a subject names (app.vetting.subjects)."""
    numbers = record_numbers(records)
    about: dict[str, StoredFinding] = {}
    for finding in sorted(findings, key=lambda f: SEVERITY_RANK.get(str(f.severity), 9)):
        as_dict = {"subject": finding.subject, "evidence": finding.evidence, "severity": finding.severity}
        for key in records_of(as_dict, numbers):
            about.setdefault(key, finding)
    return about


def _aged(item: ItemVerification, now: datetime, max_age: timedelta) -> ItemVerification:
    if item.is_current and item.at is not None and aware(item.at) < now - max_age:
        days = max_age.days
        return ItemVerification(
            **{
                **item.__dict__,
                "status": EXPIRED,
                "reason_zh": f"核实已超过 {days} 天，需重新核实",
                "reason_en": f"verified more than {days} days ago: verify again",
            }
        )
    return item


def _number_item(
    subject: str, kind: str, number: str, lookup: Lookup | None, contradicted: StoredFinding | None
) -> ItemVerification:
    """A licence or filing number against the lookup of its kind and the evidence finding about it."""
    if contradicted is not None:
        return _contradicted(subject, kind, number, contradicted, lookup_id=lookup.id if lookup else None)
    if lookup is None:
        zh, en = MISSING_TEXT["by_hand" if kind == "psb_filing" else "lookup"]
        return ItemVerification(subject, kind, number, UNVERIFIED, zh, en)
    key = number_key(kind, number)
    listed = key is not None and key in _record_keys(kind, lookup.records or [])
    manual = lookup.state == LookupState.manual
    at, by = _manual_by(lookup) if manual else (aware(lookup.completed_at), lookup.created_by_name)
    if not listed:
        return ItemVerification(
            subject,
            kind,
            number,
            CONTRADICTED,
            f"官方查询 #{lookup.id} 的结果中没有这个号码",
            f"lookup #{lookup.id} does not list this number",
            **_lookup_links(lookup, at, by),
        )
    how_zh, how_en = (
        ("人工记录的官方查询", "an official lookup recorded by hand")
        if manual
        else ("官方查询", "an official lookup")
    )
    return ItemVerification(
        subject,
        kind,
        number,
        BY_HAND if manual else VERIFIED,
        f"{how_zh} #{lookup.id} 列出了这个号码",
        f"{how_en} (#{lookup.id}) lists this number",
        **_lookup_links(lookup, at, by),
    )


def _kind_of(number_raw: str, stated: Any = None) -> str:
    kind = getattr(stated, "value", stated)
    return str(kind) if kind else identify(number_raw).kind


def _certification_item(
    cert: Certification, lookup: Lookup | None, contradicted: StoredFinding | None
) -> ItemVerification:
    subject = f"certification:{cert.id}"
    name = _certificate_names(cert)["name_zh"]
    if contradicted is not None:
        return _contradicted(subject, "certification", name, contradicted)
    wanted = _certificate_key(cert.number)
    record = None
    if lookup is not None:
        record = next(
            (
                r
                for r in lookup.records or []
                if isinstance(r, dict)
                and (
                    _certificate_key(r.get("number")) == wanted if wanted else r.get("kind") == str(cert.kind)
                )
            ),
            None,
        )
    if record is None:
        zh, en = MISSING_TEXT["by_hand"]
        return ItemVerification(subject, "certification", name, UNVERIFIED, zh, en)
    at, by = _manual_by(lookup)
    status = str(record.get("status") or "")
    if status and status != "有效":
        return ItemVerification(
            subject,
            "certification",
            name,
            CONTRADICTED,
            f"认证查询 #{lookup.id} 显示该证书状态为“{status}”",
            f"certificate lookup #{lookup.id} shows this certificate as “{status}”",
            **_lookup_links(lookup, at, by),
        )
    return ItemVerification(
        subject,
        "certification",
        name,
        BY_HAND,
        f"人工记录的认证查询 #{lookup.id} 列出了该证书",
        f"a certification lookup recorded by hand (#{lookup.id}) lists this certificate",
        **_lookup_links(lookup, at, by),
    )


def _certificate_names(cert: Certification) -> dict[str, str]:
    """The certificate as each language names it: its own name or its kind's, then its number."""
    kind = str(getattr(cert.kind, "value", cert.kind))
    zh, en = (cert.name, cert.name) if cert.name else CERTIFICATE_NAMES.get(kind, (kind, kind))
    return {
        "name_zh": " ".join(part for part in (zh, cert.number) if part),
        "name_en": " ".join(part for part in (en, cert.number) if part),
    }


def _certificate_key(number: Any) -> str:
    return "".join(str(number or "").split()).upper()


def _footer_item(
    home: Evidence | None, website: str | None, findings: list[StoredFinding]
) -> ItemVerification:
    name = website or ""
    if home is None:
        zh, en = MISSING_TEXT["footer"]
        return ItemVerification("footer", "footer", name, UNVERIFIED, zh, en)
    manual = home.method == MANUAL_METHOD
    if home.error and not manual:
        zh, en = MISSING_TEXT["footer_failed"]
        return ItemVerification(
            "footer", "footer", home.url, UNVERIFIED, zh, en, evidence_id=home.id, at=home.fetched_at
        )
    contradicted = next(
        (f for f in findings if f.rule_id.startswith("footer.") and f.rule_id != "footer.fetch_failed"), None
    )
    if contradicted is not None:
        return _contradicted(
            "footer", "footer", home.url, contradicted, evidence_id=home.id, at=home.fetched_at
        )
    extracted = home.extracted or {}
    looked = (extracted.get("manual") or {}).get("looked_at")
    at = aware(datetime.fromisoformat(looked)) if manual and looked else aware(home.fetched_at)
    zh, en = (
        ("人工记录的页脚与登记一致", "the footer recorded by hand agrees with the registry")
        if manual
        else ("抓取的页脚与登记一致", "the scraped footer agrees with the registry")
    )
    return ItemVerification(
        "footer",
        "footer",
        home.url,
        BY_HAND if manual else VERIFIED,
        zh,
        en,
        at=at,
        by=home.triggered_by_name,
        evidence_id=home.id,
    )


def _offer_items(offer: Offer, found: ItemEvidence) -> list[ItemVerification]:
    measured = found.measured.get(offer.id or 0, {})
    items = []
    for attribute, (figure, zh_name, en_name) in OFFER_CLAIMS.items():
        claimed = getattr(offer, attribute)
        claimed = getattr(claimed, "value", claimed)
        if claimed in NOT_CLAIMED:
            continue
        subject = f"offer:{offer.id}:{figure}"
        name = f"#{offer.id} {zh_name}"
        measurement = measured.get(figure)
        extra = {"figure_zh": zh_name, "figure_en": en_name, "offer_id": offer.id, "claimed": claimed}
        if measurement is None:
            zh, en = MISSING_TEXT["measure"]
            items.append(ItemVerification(subject, "offer", name, UNVERIFIED, zh, en, extra=extra))
            continue
        verdict = measurement.verdict
        uploaded = measurement.origin == "uploaded"
        value = measurement.value
        if verdict in ("fail", "warn"):
            status = CONTRADICTED
            zh, en = (
                f"实测 {value} {measurement.unit}，报价 {claimed}",
                f"measured {value} {measurement.unit}, the offer claims {claimed}",
            )
        else:
            status = BY_HAND if uploaded else VERIFIED
            zh, en = (
                (
                    f"手工上传的输出实测 {value} {measurement.unit}",
                    f"an uploaded output measured {value} {measurement.unit}",
                )
                if uploaded
                else (
                    f"试用服务器实测 {value} {measurement.unit}",
                    f"measured {value} {measurement.unit} on a trial server",
                )
            )
        items.append(
            ItemVerification(
                subject,
                "offer",
                name,
                status,
                zh.strip(),
                en.strip(),
                at=measurement.at,
                run_id=measurement.run_id,
                extra=extra,
            )
        )
    return items


def _provider_items(
    provider_id: int, found: ItemEvidence, now: datetime, max_age: timedelta
) -> list[ItemVerification]:
    findings = found.findings.get(provider_id, [])
    licences = found.licences.get(provider_id, [])
    filings = found.filings.get(provider_id, [])
    about = _contradictions(
        [finding for finding in findings if finding.severity == BLOCKER],
        [("licence", r.id, r.number or r.number_raw) for r in licences]
        + [("filing", r.id, r.number or r.number_raw) for r in filings],
    )
    items: list[ItemVerification] = []
    for licence in licences:
        kind, subject = _kind_of(licence.number_raw), f"licence:{licence.id}"
        lookup = found.lookups.get((provider_id, str(LOOKUP_OF_KIND.get(kind, LookupKind.licence).value)))
        number = licence.number or licence.number_raw
        items.append(_number_item(subject, kind, number, lookup, about.get(subject)))
    for filing in filings:
        kind, subject = _kind_of(filing.number_raw, filing.kind), f"filing:{filing.id}"
        lookup_kind = LOOKUP_OF_KIND.get(kind)
        lookup = found.lookups.get((provider_id, lookup_kind.value)) if lookup_kind else None
        items.append(
            _number_item(subject, kind, filing.number or filing.number_raw, lookup, about.get(subject))
        )
    items.append(_footer_item(found.footers.get(provider_id), found.websites.get(provider_id), findings))
    items.append(_credit_item(found.credit.get(provider_id), found.usccs.get(provider_id)))
    cert_lookup = found.lookups.get((provider_id, LookupKind.certification.value))
    for cert in found.certifications.get(provider_id, []):
        item = _certification_item(cert, cert_lookup, about.get(f"certification:{cert.id}"))
        items.append(replace(item, extra={**item.extra, **_certificate_names(cert)}))
    for offer in found.offers.get(provider_id, []):
        items.extend(_offer_items(offer, found))
    return [_aged(item, now, max_age) for item in items]


def verifications_of(
    session: Session,
    provider_ids: Iterable[int],
    *,
    now: datetime | None = None,
    check_run_ids: Collection[int] | None = None,
) -> dict[int, list[ItemVerification]]:
    """Every item's verification for each provider id (a constant number of SQL statements); a caller that
    has read the providers' latest check runs passes their ids, so they are read once."""
    ids = sorted(set(provider_ids))
    if not ids:
        return {}
    now = now or clock.now()
    found = read_evidence(session, ids, now.date(), check_run_ids)
    max_age = timedelta(days=max_age_days())
    return {provider_id: _provider_items(provider_id, found, now, max_age) for provider_id in ids}


def verification_of(session: Session, provider_id: int) -> list[ItemVerification]:
    """Every item's verification for one provider."""
    return verifications_of(session, [provider_id]).get(provider_id, [])


def by_subject(items: Iterable[ItemVerification]) -> dict[str, ItemVerification]:
    """Items keyed by subject ("licence:3"), for pages that show each record's status beside it."""
    return {item.subject: item for item in items}
