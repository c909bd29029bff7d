"""Database engine and one session per request."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import Flask, current_app, g
from sqlmodel import Session


def make_engine(url: str) -> sa.Engine:
    """Create an engine; SQLite gets foreign keys, WAL and a busy timeout for the worker."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True)


def get_engine() -> sa.Engine:
    """The current app's engine."""
    return current_app.extensions["gpuvet.engine"]


def get_session() -> Session:
    """The request's session, created on first use and tagged with the acting user."""
    if "db_session" not in g:
        session = Session(get_engine(), expire_on_commit=False)
        actor = g.get("actor")
        if actor:
            session.info["actor"] = actor
        g.db_session = session
    return g.db_session


def _close_session(_exc: BaseException | None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()


def init_app(app: Flask, url: str) -> None:
    """Attach the engine to the app and close sessions at the end of each request."""
    app.extensions["gpuvet.engine"] = make_engine(url)
    app.teardown_appcontext(_close_session)
