"""`flask advise ANSWERS.json`: advise on a questionnaire answers file against the registry, print JSON."""

from __future__ import annotations

import json

import click
from flask.cli import AppGroup, with_appcontext

from app.cli.common import cli_session, fail, print_json
from app.core import clock
from app.core.limits import depth_message, too_deep


def _unreadable(exc: Exception) -> str:
    """The message for JSON that parses into nothing usable (too deep, or a number of 4,301+ digits)."""
    if isinstance(exc, RecursionError):
        return depth_message()
    return f"JSON 无法解析 (malformed JSON: {exc})"


@click.group(
    "advise",
    cls=AppGroup,
    invoke_without_command=True,
    # A group only so that app.cli registers it; options may follow the file like a plain command's.
    context_settings={"allow_interspersed_args": True},
    help="Rank the registry's offers for a questionnaire answers file (see docs/answers.md).",
)
@click.argument("answers_file", type=click.File("r", encoding="utf-8-sig"))
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=None,
    help="Print only the N best eligible and N excluded offers.",
)
@click.option(
    "--today", type=click.DateTime(formats=["%Y-%m-%d"]), default=None, help="Date to check licences against."
)
@with_appcontext
def advise_group(answers_file: click.utils.LazyFile, top: int | None, today: object) -> None:
    """Print {requirements, offers, checklist, faq, ...} as JSON; bad answers exit 1 naming each field."""
    from app.advice.answers import validate_answers
    from app.cases import cases
    from app.core.errors import InvalidInput, ServiceError, field_path

    try:
        data = json.load(answers_file)
    except json.JSONDecodeError as exc:
        fail(
            InvalidInput(
                f"JSON 格式错误：第 {exc.lineno} 行第 {exc.colno} 列，{exc.msg} "
                f"(malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg})",
                field="",
            )
        )
        return
    except (RecursionError, ValueError) as exc:  # absurd nesting, integers of over 4,300 digits
        fail(InvalidInput(_unreadable(exc), field=""))
        return
    deep = too_deep(data)
    if deep is not None:
        fail(InvalidInput(depth_message(), field=field_path(deep)))
        return
    day = today.date() if today is not None else clock.business_today()  # type: ignore[attr-defined]
    with cli_session() as session:
        try:
            answers = validate_answers(data)
            advice = cases.advise_answers(session, answers=answers, today=day)
        except ServiceError as exc:
            fail(exc)
            return
    print_json(advice.to_dict(limit=top))
