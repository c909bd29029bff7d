"""`flask decision`: export a procurement decision's signed document as PDF (each new export is recorded)."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from app.cli.common import RECORD_ID
from app.cli.report import _LANG, _OUTPUT, _export

decision_group = AppGroup("decision", help="Procurement decisions: export the signed decision document.")


@decision_group.command("export")
@click.argument("decision_id", type=RECORD_ID)
@_OUTPUT
@_LANG
def export_command(decision_id: int, output: Path, lang: str) -> None:
    """Write the signed document of decision DECISION_ID to OUTPUT (the same numbered file again while the
    decision is unchanged)."""
    from app.cases import decision_document

    _export(decision_document.decision_pdf, output, lang, decision_id=decision_id)
