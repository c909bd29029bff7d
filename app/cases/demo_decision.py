"""The demo's procurement path to its end: three quotes for the demo case and one approved decision.

Made once (found by the demo case's decision) by two fictional accounts that cannot log in (random passwords
nobody knows; inactive once the decision is made): the analyst who enters the quotes and proposes, and the
approver who approves (four eyes). The leading eligible offers
of three different providers are quoted; the best one is chosen, and each of its open findings is accepted
for 60 days with a condition to re-measure the intranet after delivery. On a fresh demo load this is
decision #1.
"""

from __future__ import annotations

import io
import secrets
from datetime import date, timedelta
from typing import Any

from sqlmodel import Session, col, select

from app.accounts import users
from app.cases import cases, decision_evidence, decisions, quotes
from app.cases.quote_requests import leading_offer_ids
from app.models import Offer, User
from app.models.decisions import Decision

DEMO_ANALYST = "demo-analyst"
DEMO_APPROVER = "demo-approver"
QUOTED_PROVIDERS = 3
PRICES = (2.2, 2.6, 3.1)  # CNY per GPU-hour, fictional
ACCEPTED_DAYS = 60
TERM_MONTHS = 6


def demo_scan(label: str) -> bytes:
    """A small PNG standing in for a signed quote (fictional, says so)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 160), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((4, 4, 475, 155), outline="black")
    draw.text((20, 30), "gpuvet demo - fictional quote", fill="black")
    draw.text((20, 70), label, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _account(session: Session, name: str, role: str) -> User:
    """A demo account with a random password nobody knows (made inactive once the demo decision is made)."""
    user = session.exec(select(User).where(User.username == name)).first()
    return user or users.create_user(session, username=name, password=secrets.token_urlsafe(24), role=role)


def _deactivate(session: Session, *accounts: User) -> None:
    """The demo accounts did their part: nobody can log in as them."""
    for user in accounts:
        user.active = False
        session.add(user)
    session.commit()


def _choosable(session: Session, offer_ids: list[int]) -> tuple[int, list[Any]]:
    """The best quoted offer whose provider has no licence-flag blocker, with its provider's open findings."""
    rows = session.exec(select(Offer.id, Offer.provider_id).where(col(Offer.id).in_(offer_ids))).all()
    providers = dict(rows)
    findings = decision_evidence.open_findings_of(session, providers.values())
    for offer_id in offer_ids:
        open_ = findings[providers[offer_id]]
        if not any(decision_evidence.is_licence_block(finding) for finding in open_):
            return offer_id, open_
    raise LookupError("no quoted demo offer is free of licence-flag blockers")


def _quote_values(offer_id: int, price: float, today: date) -> dict[str, Any]:
    return {
        "offer_id": str(offer_id),
        "received_via": "email",
        "price_gpu_hour_cny": str(price),
        "min_term_months": str(TERM_MONTHS),
        "delivery_on": (today + timedelta(days=14)).isoformat(),
        "includes_public_bandwidth": "yes",
        "includes_storage": "yes",
        "includes_support": "yes",
        "sla_availability_pct": "99.9",
        "sla_compensation": "演示数据：每中断 1 小时，按 1 天费用赔付",
        "bandwidth_type": "dedicated",
        "trial_server_lent": "yes",
        "valid_until": (today + timedelta(days=45)).isoformat(),
        "notes": "演示数据，虚构报价",
    }


def load_demo_decision(session: Session, *, case_id: int, today: date) -> tuple[int, bool]:
    """Quotes and an approved decision for the demo case, made once; (decision id, whether it was new)."""
    found = session.exec(select(Decision.id).where(Decision.case_id == case_id).order_by(col(Decision.id)))
    existing = found.first()
    if existing is not None:
        return existing, False
    analyst = _account(session, DEMO_ANALYST, "analyst")
    approver = _account(session, DEMO_APPROVER, "approver")
    offer_ids = leading_offer_ids(cases.advise_case(session, case_id=case_id), QUOTED_PROVIDERS)
    for offer_id, price in zip(offer_ids, PRICES, strict=False):
        quotes.create_quote(
            session,
            case_id=case_id,
            values=_quote_values(offer_id, price, today),
            scan=demo_scan(f"offer {offer_id}: CNY {price} per GPU-hour"),
            user=analyst,
            filename="演示报价单.png",
        )
    chosen, findings = _choosable(session, offer_ids)
    until = (today + timedelta(days=ACCEPTED_DAYS)).isoformat()
    proposal = {
        "offer_ids": [chosen],
        "scope": "演示数据：视觉模型单机微调的训练数据与检查点",
        "term_months": TERM_MONTHS,
        "justification": "演示数据：三家比价，所选套餐在本案例的推荐中排名第一，报价也最低。",
        "conditions": [
            {
                "text": "交付后 30 天内复测内网带宽与磁盘写入速度",
                "due_on": (today + timedelta(days=30)).isoformat(),
            }
        ],
        "risk_acceptances": [
            {"finding_id": finding.id, "reason": "演示数据：试用期内由供应商补交证明材料", "until": until}
            for finding in findings
        ],
    }
    decision = decisions.propose(
        session, case_id=case_id, data=proposal, actor=cases.Actor(analyst.id, analyst.username)
    )
    approved = decisions.approve(
        session,
        decision_id=decision.id,
        actor=cases.Actor(approver.id, approver.username),
        comment="演示数据：同意，按条件复测。",
    )
    _deactivate(session, analyst, approver)
    return int(approved.id or 0), True
