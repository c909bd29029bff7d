"""Merging a reviewed disclosure: registry writes (audited, versioned), new provider, red flag 13, report."""

from __future__ import annotations

from sqlmodel import col, select

from app.core.clock import to_local
from app.credentials import checks
from app.credentials.report_exports import Author, provider_report_html
from app.disclosure import merge as disclosure_merge
from app.models import AuditEntry, Provider
from app.models.checks import CheckRun
from tests.disclosure.test_review import (
    NAME,
    answers,
    decide_all,
    registry_provider,
    submitted,
)


def refusals(session, provider_id: int) -> dict[str, str]:
    """Red flag 13's findings of the provider's latest check run: subject -> Chinese message."""
    run = checks.latest_check(session, provider_id=provider_id)
    assert run is not None
    return {
        stored.subject: stored.message_zh
        for stored in checks.run_findings(session, check_run_id=run.id)
        if stored.rule_id.startswith("disclosure.")
    }


def test_merge_into_an_existing_provider_is_audited_and_versioned(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    version = provider.version
    invitation = submitted(session, provider_id=provider.id)
    decide_all(analyst, invitation.id, **{"certifications.0": "reject", "identity.contact_email": "reject"})
    response = analyst.post(f"/invitations/{invitation.id}/merge", data={"version": version})
    assert response.status_code == 302 and response.location.endswith(f"/providers/{provider.id}")
    session.expire_all()
    merged = session.get(Provider, provider.id)
    assert merged.version == version + 1
    assert merged.website == "https://decl.example" and merged.contact_email is None  # rejected
    assert merged.discloses_network_topology is True and merged.discloses_storage_config is True
    assert [licence.coverage for licence in merged.licences] == [["北京", "上海"]]
    assert sorted(dc.name for dc in merged.datacenters) == ["亦庄机房", "旧机房"]  # the old one is kept
    assert [(offer.gpu_model, offer.datacenter.name) for offer in merged.offers] == [("H800", "亦庄机房")]
    assert merged.certifications == []  # rejected
    entries = session.exec(select(AuditEntry).where(AuditEntry.provider_id == provider.id)).all()
    actions = {(entry.entity, entry.action) for entry in entries if entry.actor_name == "analyst"}
    assert {
        ("provider", "update"),
        ("licence", "update"),
        ("datacenter", "create"),
        ("offer", "create"),
    } <= actions
    declared = next(entry for entry in entries if entry.action == "declare")
    assert declared.entity == "invitation" and declared.entity_id == invitation.id
    assert declared.changes["declared_on"][1] == to_local(invitation.submitted_at).date().isoformat()
    assert declared.changes["identity.website"] == [None, "https://decl.example"]
    session.refresh(invitation)
    record = invitation.review["merge"]
    assert record["provider_id"] == provider.id and record["created"] is False
    assert "certifications.0" not in {item["key"] for item in record["items"]}
    assert refusals(session, provider.id) == {}  # a complete disclosure clears red flag 13
    page = analyst.get(f"/providers/{provider.id}").get_data(as_text=True)
    assert 'id="declared-values"' in page and "https://decl.example" in page
    assert "审核结果" in page and "&#39;number_raw&#39;" not in page  # the history never dumps the answers
    assert analyst.post(f"/invitations/{invitation.id}/merge").status_code == 409  # only once


def test_merge_creates_the_provider_invited_by_name(app, session, login):
    analyst = login("analyst")
    invitation = submitted(session)
    decide_all(analyst, invitation.id)
    response = analyst.post(f"/invitations/{invitation.id}/merge")
    assert response.status_code == 302
    provider = session.exec(select(Provider).where(Provider.legal_name == NAME)).one()
    assert response.location.endswith(f"/providers/{provider.id}")
    assert provider.uscc == "91110000802100433B" and len(provider.licences) == 1
    assert provider.certifications[0].level == 3
    created = session.exec(
        select(AuditEntry.entity).where(AuditEntry.provider_id == provider.id, AuditEntry.action == "create")
    ).all()
    assert {"provider", "licence", "filing", "certification", "datacenter", "offer"} <= set(created)
    session.refresh(invitation)
    assert invitation.provider_id == provider.id and invitation.review["merge"]["created"] is True
    run = session.exec(select(CheckRun).where(CheckRun.provider_id == provider.id)).one()
    assert refusals(session, provider.id) == {} and run.id is not None


def test_declined_and_unanswered_questions_raise_red_flag_13_naming_them(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    data = answers(
        topology={"declined": True},
        storage={"location": "network", "network_type": "nfs", "backup": "异地备份"},
        trial={"will_lend": False},
    )
    invitation = submitted(session, provider_id=provider.id, data=data)
    decide_all(analyst, invitation.id)
    analyst.post(f"/invitations/{invitation.id}/merge", data={"version": provider.version})
    found = refusals(session, provider.id)
    assert set(found) == {
        "provider:discloses_network_topology",
        "provider:discloses_storage_config",
        "disclosure:trial",
    }
    assert "网络拓扑" in found["provider:discloses_network_topology"]
    assert "拒绝披露" in found["provider:discloses_network_topology"]
    assert "“RAID”" in found["provider:discloses_storage_config"]
    assert "试用" in found["disclosure:trial"]
    session.expire_all()
    assert session.get(Provider, provider.id).discloses_network_topology is False


def test_answers_the_analyst_rejects_count_as_not_disclosed(app, session, login):
    analyst = login("analyst")
    invitation = submitted(session)
    decide_all(analyst, invitation.id, topology="reject")
    analyst.post(f"/invitations/{invitation.id}/merge")
    provider = session.exec(select(Provider).where(Provider.legal_name == NAME)).one()
    found = refusals(session, provider.id)
    assert list(found) == ["provider:discloses_network_topology"]
    assert "意见 topology" in found["provider:discloses_network_topology"]
    assert provider.discloses_network_topology is None  # a rejected answer sets nothing


def test_without_a_submission_the_rule_reads_the_registry_as_before(app, session):
    provider = registry_provider(session)
    assert disclosure_merge.disclosure_fact(session, provider) is None
    checks.run_check(session, provider_id=provider.id)
    assert set(refusals(session, provider.id)) == {
        "provider:discloses_network_topology",
        "provider:discloses_storage_config",
    }


def test_a_stale_registry_version_refuses_the_merge(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    invitation = submitted(session, provider_id=provider.id)
    decide_all(analyst, invitation.id)
    response = analyst.post(
        f"/invitations/{invitation.id}/merge", data={"version": provider.version - 1 or 99}
    )
    assert response.status_code == 409 and "version" in response.get_data(as_text=True)
    session.refresh(invitation)
    assert "merge" not in invitation.review
    assert session.exec(select(AuditEntry).where(AuditEntry.action == "declare")).all() == []


def test_an_invalid_accepted_value_is_refused_with_its_field(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    # The declared credit code already belongs to another provider: the registry refuses it on merge.
    from app.registry.providers import create_provider

    create_provider(session, data={"legal_name": "另一家算力有限公司", "uscc": "91350100M000100Y43"})
    data = answers(identity={**answers()["identity"], "uscc": "91350100M000100Y43"})
    invitation = submitted(session, provider_id=provider.id, data=data)
    decide_all(analyst, invitation.id)
    response = analyst.post(f"/invitations/{invitation.id}/merge", data={"version": provider.version})
    assert response.status_code == 409 and "另一家算力有限公司" in response.get_data(as_text=True)
    session.expire_all()
    assert session.get(Provider, provider.id).uscc == "91110000802100433B"


def test_report_shows_the_declaration_and_what_was_verified_since(app, session, login):
    analyst = login("analyst")
    invitation = submitted(session)
    decide_all(analyst, invitation.id)
    analyst.post(f"/invitations/{invitation.id}/merge")
    provider = session.exec(select(Provider).where(Provider.legal_name == NAME)).one()
    session.expire_all()  # the merge was made by the web request's session
    checks.run_check(session, provider_id=provider.id)
    summary = disclosure_merge.declaration_summary(session, provider_id=provider.id)
    assert summary["invitation_id"] == invitation.id
    assert summary["verified_since"]["check_runs"] == 2
    with app.test_request_context():
        html = provider_report_html(session, provider_id=provider.id, language="zh", author=Author(None, "t"))
    assert 'id="disclosure"' in html and summary["declared_on"] in html
    assert "亦庄机房" in html and "已完整披露" in html and "资质核查 2 次" in html
    with app.test_request_context():
        english = provider_report_html(
            session, provider_id=provider.id, language="en", author=Author(None, "t")
        )
    assert "Declared by the provider" in english and "fully disclosed" in english
    runs = session.exec(select(CheckRun).order_by(col(CheckRun.id))).all()
    assert len(runs) == 2


def test_a_completed_review_reruns_the_check_without_a_merge(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    data = answers(topology={"declined": True})
    invitation = submitted(session, provider_id=provider.id, data=data)
    decide_all(analyst, invitation.id)
    session.expire_all()
    assert session.get(type(invitation), invitation.id).review.get("merge") is None  # not merged
    found = refusals(session, provider.id)  # a check ran on review; red flag 13 names the refusal
    assert (
        set(found) == {"provider:discloses_network_topology"}
        and "拒绝披露" in found["provider:discloses_network_topology"]
    )
    decide_all(analyst, invitation.id, topology="reject", storage="reject")  # changed after completion
    assert set(refusals(session, provider.id)) == {
        "provider:discloses_network_topology",
        "provider:discloses_storage_config",
    }
    assert len(session.exec(select(CheckRun).where(CheckRun.provider_id == provider.id)).all()) == 2


def _declared_files(session, invitation) -> dict[str, object]:
    """A diagram (PNG) and a licence scan (PDF) the answers name, and a diagram replaced before submitting."""
    from app.disclosure import uploads as disclosure_uploads
    from tests.disclosure import samples

    def keep(field: str, filename: str, body: bytes):
        checked = disclosure_uploads.check(body, field=field, max_bytes=10**6)
        return disclosure_uploads.store(session, invitation, field=field, filename=filename, checked=checked)

    replaced = keep("topology.diagram_upload_id", "旧拓扑图.png", samples.png(colour="red"))
    diagram = keep("topology.diagram_upload_id", "拓扑图.png", samples.png())
    scan = keep("licences.0.scan_upload_id", "许可证.pdf", samples.pdf())
    data = dict(invitation.answers)
    data["topology"] = {**data["topology"], "diagram_upload_id": diagram.id}
    data["licences"] = [{**data["licences"][0], "scan_upload_id": scan.id}]
    invitation.answers = data
    session.add(invitation)
    session.commit()
    return {"diagram": diagram, "scan": scan, "replaced": replaced}


def test_uploads_of_a_provider_invited_by_name_follow_the_merge(app, session, login):
    from app.models.evidence import Evidence

    analyst = login("analyst")
    invitation = submitted(session)
    files = _declared_files(session, invitation)
    decide_all(analyst, invitation.id)
    analyst.post(f"/invitations/{invitation.id}/merge")
    provider = session.exec(select(Provider).where(Provider.legal_name == NAME)).one()
    diagram, scan, replaced = files["diagram"], files["scan"], files["replaced"]
    assert session.get(Evidence, diagram.evidence_id).provider_id is None  # evidence stays as stored

    page = analyst.get(f"/providers/{provider.id}").get_data(as_text=True)
    card = page[page.index('id="declared-files"') :]
    assert f'href="/evidence/{diagram.evidence_id}/download"' in card and "拓扑图.png" in card
    assert f'src="/evidence/{diagram.evidence_id}/image"' in card  # a thumbnail for the picture
    assert f'href="/evidence/{scan.evidence_id}/download"' in card and "许可证.pdf" in card
    assert f'src="/evidence/{scan.evidence_id}/image"' not in card and "京B2-20202418" in card
    assert f"/evidence/{replaced.evidence_id}/" not in page and "旧拓扑图.png" not in page
    assert analyst.get(f"/evidence/{diagram.evidence_id}/download").status_code == 200
    viewer = login("viewer")
    viewer.get("/lang/en")
    english = viewer.get(f"/providers/{provider.id}").get_data(as_text=True)
    assert "Topology diagram" in english and "Licence scan" in english

    session.expire_all()
    with app.test_request_context():
        html = provider_report_html(session, provider_id=provider.id, language="zh", author=Author(None, "t"))
        report_en = provider_report_html(
            session, provider_id=provider.id, language="en", author=Author(None, "t")
        )
    sha = session.get(Evidence, scan.evidence_id).sha256
    for report in (html, report_en):
        files_table = report[report.index('id="declared-files"') :]
        assert f'href="/evidence/{scan.evidence_id}/download"' in files_table and sha in files_table
        assert f'href="/evidence/{diagram.evidence_id}/image"' in files_table and "旧拓扑图" not in report
    assert "供应商上传的文件" in html and "网络拓扑图" in html
    assert "Files uploaded by the provider" in report_en and "Topology diagram" in report_en


def test_a_blank_optional_detail_never_raises_red_flag_13(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    data = answers(
        topology={"oversubscription_ratio": "1:1", "uplink_gbps": 400, "shared_with": "无，专用链路"},
        storage={"location": "local_nvme", "raid": "raid10"},  # no backup scheme, no diagram: details
    )
    invitation = submitted(session, provider_id=provider.id, data=data)
    decide_all(analyst, invitation.id)
    analyst.post(f"/invitations/{invitation.id}/merge", data={"version": provider.version})
    found = refusals(session, provider.id)
    assert "provider:discloses_storage_config" not in found
    assert "provider:discloses_network_topology" not in found
    session.expire_all()
    assert session.get(Provider, provider.id).discloses_storage_config is True
