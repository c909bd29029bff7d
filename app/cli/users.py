"""`flask users`: create accounts, reset passwords; issue, list and revoke API tokens."""

from __future__ import annotations

import sys
from datetime import datetime

import click
from flask.cli import AppGroup

from app.cli.common import RECORD_ID, LazyChoice, cli_session, fail
from app.core.errors import ServiceError

# Models and services are imported inside the commands: every `flask` command imports this module.
MAX_TOKEN_DAYS = 3650


def _roles() -> list[str]:
    from app.models.enums import Role

    return [r.value for r in Role]


users_group = AppGroup("users", help="Accounts and API tokens.")


def _read_password(from_stdin: bool) -> str:
    """The new password from one line of standard input, or from a prompt asked twice."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True)


@users_group.command("create")
@click.argument("name")
@click.option("--role", type=LazyChoice(_roles), required=True)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def create(name: str, role: str, password_stdin: bool) -> None:
    """Create user NAME with a role; the password comes from a prompt or stdin."""
    from app.accounts import users

    password = _read_password(password_stdin)
    with cli_session() as session:
        try:
            users.create_user(session, username=name, password=password, role=role)
        except ServiceError as exc:
            fail(exc)
    click.echo(f"created {role} {name}")


@users_group.command("set-password")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the new password from standard input.")
def set_password(name: str, password_stdin: bool) -> None:
    """Give user NAME a new password; their sessions end and their API tokens are revoked."""
    from app.accounts import users

    password = _read_password(password_stdin)
    with cli_session() as session:
        try:
            user = users.get_user(session, username=name)
            users.set_password(session, user_id=user.id, password=password)
        except ServiceError as exc:
            fail(exc)
    click.echo(f"password set for {name}; sessions ended, API tokens revoked")


@users_group.command("token")
@click.argument("name")
@click.option("--expires-days", type=click.IntRange(1, MAX_TOKEN_DAYS), help="Expire after N days.")
def token(name: str, expires_days: int | None) -> None:
    """Print a new API token for user NAME."""
    from app.accounts import users

    with cli_session() as session:
        try:
            click.echo(users.issue_token(session, username=name, expires_days=expires_days))
        except ServiceError as exc:
            fail(exc)


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else "-"


@users_group.command("tokens")
@click.argument("name")
def tokens(name: str) -> None:
    """List user NAME's API tokens: id, created, last used, expires, state."""
    from app.accounts import users

    with cli_session() as session:
        try:
            user = users.get_user(session, username=name)
        except ServiceError as exc:
            fail(exc)
        click.echo("id\tcreated\tlast_used\texpires\tstate")
        for api_token, _owner in users.list_tokens(session, user_id=user.id):
            when = (_when(api_token.created_at), _when(api_token.last_used_at), _when(api_token.expires_at))
            click.echo("\t".join((str(api_token.id), *when, users.token_state(api_token))))


@users_group.command("revoke-token")
@click.argument("token_id", type=RECORD_ID)
def revoke_token(token_id: int) -> None:
    """Revoke the API token with id TOKEN_ID (see `users tokens NAME`)."""
    from app.accounts import users

    with cli_session() as session:
        try:
            users.revoke_token(session, token_id=token_id)
        except ServiceError as exc:
            fail(exc)
    click.echo(f"revoked token {token_id}")
