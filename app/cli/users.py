"""`flask users`: create accounts and API tokens."""

from __future__ import annotations

import sys

import click
from flask.cli import AppGroup

from app.cli.common import cli_session, fail
from app.models.enums import Role
from app.services import users
from app.services.errors import ServiceError

users_group = AppGroup("users", help="Accounts and API tokens.")


@users_group.command("create")
@click.argument("name")
@click.option("--role", type=click.Choice([r.value for r in Role]), required=True)
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
def create(name: str, role: str, password_stdin: bool) -> None:
    """Create user NAME with a role; the password comes from a prompt or stdin."""
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    with cli_session() as session:
        try:
            users.create_user(session, username=name, password=password, role=role)
        except ServiceError as exc:
            fail(exc)
    click.echo(f"created {role} {name}")


@users_group.command("token")
@click.argument("name")
def token(name: str) -> None:
    """Print a new API token for user NAME."""
    with cli_session() as session:
        try:
            click.echo(users.issue_token(session, username=name))
        except ServiceError as exc:
            fail(exc)
