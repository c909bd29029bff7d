"""Decision document performance: the same decision exported unsigned and signed, side by side in one run.

Usage:
    .venv/bin/python perf/decision_perf.py [--runs 15] [--keep FOLDER]

Loads the fictional demo providers into a temporary SQLite database, makes a distributed-training case with
quotes from three providers, proposes the first quote's offer (every open finding accepted) as an analyst
and approves it as an approver. Then exports the decision document (database -> inputs -> HTML -> PDF ->
stored record) without and with its signature, in alternating order, each pair with the same renderer and
data; the first signed export (pyHanko's import, the self-signed key made once) is timed apart. Prints
median and p95 of both, the median of the paired differences and the size added. Target: signing adds at
most 0.2 s (perf/signing_perf.py measures the provider report the same way). `--keep` writes the signed
document in Chinese and English there (to look at). Timings depend on what else runs on the machine: the
load average is printed first.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from signing_perf import demo_app, print_load, print_side_by_side, print_target, side_by_side  # noqa: E402 - perf/
from sqlmodel import Session, col, select  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.accounts import users  # noqa: E402
from app.cases import cases, decisions  # noqa: E402
from app.cases import decision_document as document  # noqa: E402
from app.cases.decision_evidence import licence_blocks, open_findings  # noqa: E402
from app.core import clock  # noqa: E402
from app.credentials import report_exports as exports  # noqa: E402
from app.models.provider import Offer, Provider  # noqa: E402
from app.models.quotes import Quote  # noqa: E402
from app.reports.pdf import renderer_for_settings  # noqa: E402

ANSWERS = PROJECT_ROOT / "examples" / "answers" / "distributed_training.json"
QUOTED = 3


def approved_decision(session: Session) -> int:
    """A case with three quotes and its decision, proposed by an analyst and approved by an approver."""
    import json

    analyst = users.create_user(session, username="perf-analyst", password="perf password 1", role="analyst")
    approver = users.create_user(
        session, username="perf-approver", password="perf password 2", role="approver"
    )
    case = cases.create_case(
        session,
        answers=json.loads(ANSWERS.read_text("utf-8")),
        owner=cases.Actor(analyst.id, analyst.username),
    )
    quoted: list[Offer] = []
    for provider in session.exec(select(Provider).order_by(col(Provider.id))):
        offer = session.exec(
            select(Offer).where(Offer.provider_id == provider.id).order_by(col(Offer.id))
        ).first()
        if offer is not None and not licence_blocks(session, provider.id):
            quoted.append(offer)
        if len(quoted) == QUOTED:
            break
    for position, offer in enumerate(quoted):
        session.add(
            Quote(
                case_id=case.id,
                provider_id=offer.provider_id,
                offer_id=offer.id,
                received_via="email",
                price_gpu_hour_cny=9.5 + 2 * position,
                min_term_months=12,
                valid_until=clock.business_today() + timedelta(days=30),
            )
        )
    session.commit()
    until = (clock.business_today() + timedelta(days=90)).isoformat()
    data = {
        "offer_ids": [quoted[0].id],
        "scope": "多机训练：7B 模型预训练",
        "term_months": 12,
        "justification": "每有效卡时价格最低",
        "conditions": [{"text": "交付后 30 天内复测内网带宽", "due_on": until}],
        "risk_acceptances": [
            {"finding_id": finding.id, "reason": "签约前由供应商补交材料", "until": until}
            for finding in open_findings(session, quoted[0].provider_id)
        ],
    }
    proposed = decisions.propose(
        session, case_id=case.id, data=data, actor=cases.Actor(analyst.id, analyst.username)
    )
    decisions.approve(session, decision_id=proposed.id, actor=cases.Actor(approver.id, approver.username))
    return proposed.id


def main() -> None:
    """Export unsigned and signed in turn and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="write the signed document (zh, en) into this folder")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print_load()

    with tempfile.TemporaryDirectory() as folder:
        flask_app, engine, settings = demo_app(folder)
        renderer = renderer_for_settings(settings)
        author = exports.Author(id=None, name="perf")
        with flask_app.app_context(), Session(engine, expire_on_commit=False) as session:
            decision_id = approved_decision(session)

            def export(signed: bool, language: str = "zh") -> tuple[float, bytes]:
                started = time.perf_counter()
                now = clock.now()
                subject = document.decision_subject(session, decision_id, now)
                subject = subject if signed else dataclasses.replace(subject, signed=False)
                record = exports.export_subject(
                    session, subject, language=language, author=author, renderer=renderer, now=now
                )
                return time.perf_counter() - started, record.pdf_bytes

            export(False)  # warm-up: font subset, stylesheet, templates
            first_signed, _data = export(True)  # one-time: pyHanko's import and the self-signed key
            times, sizes = side_by_side(export, args.runs)
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                for language in ("zh", "en"):
                    (args.keep / f"decision-{language}.pdf").write_bytes(export(True, language)[1])

    print(f"decision {decision_id}, {args.runs} exports each, alternating order")
    added = print_side_by_side(times, sizes)
    print(f"first signed export (pyHanko import + key made once): {first_signed:.3f} s")
    print_target(added)


if __name__ == "__main__":
    main()
