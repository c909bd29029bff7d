"""Database engine (built on first use) and one session per request.

SQLAlchemy and SQLModel are imported inside the functions, so that CLI commands which never touch the
database (`flask vet identify`) start without them.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask, current_app, g

from app.core.config import PRIVATE_FILE_MODE, tighten

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlmodel import Session

ENGINE_KEY = "gpuvet.engine"
_ENGINE_LOCK = threading.Lock()


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL, or None (another database, in memory, or a `file:` URI)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None
    return Path(database)


def private_sqlite_file(url: str) -> None:
    """Create a SQLite database file 0600 before SQLite does, and make an existing one (and its -wal and
    -shm files) 0600; SQLite gives the -wal and -shm files it creates the database file's mode."""
    path = sqlite_path(url)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    for companion in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        tighten(companion, PRIVATE_FILE_MODE)


def make_engine(url: str) -> sa.Engine:
    """Create an engine; SQLite gets a private file, foreign keys, WAL and a busy timeout for the worker."""
    import sqlalchemy as sa

    if url.startswith("sqlite"):
        private_sqlite_file(url)
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True)


def get_engine(app: Flask | None = None) -> sa.Engine:
    """The engine of `app` (default: the current app), created on first use."""
    if app is None:
        app = current_app._get_current_object()  # type: ignore[attr-defined]
    engine = app.extensions.get(ENGINE_KEY)
    if engine is None:
        with _ENGINE_LOCK:
            engine = app.extensions.get(ENGINE_KEY)
            if engine is None:
                engine = app.extensions[ENGINE_KEY] = make_engine(app.config["GPUVET_DATABASE_URL"])
    return engine


def get_session() -> Session:
    """The request's session, created on first use and tagged with the acting user."""
    from sqlmodel import Session

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
    """Remember the database URL (the engine is built by get_engine) and close sessions after each request."""
    app.config["GPUVET_DATABASE_URL"] = url
    app.teardown_appcontext(_close_session)


def insert_new_rows(
    session: Session, table: sa.Table, rows: list[dict[str, Any]], *, unique: list[str]
) -> list[int]:
    """INSERT the rows, skipping those whose `unique` columns already exist (SQLite and PostgreSQL alike).

    Returns the ids of the rows inserted: a unique constraint, not a SELECT first, decides, so two workers
    racing for the same row insert it once.
    """
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(table).on_conflict_do_nothing(index_elements=unique).returning(table.c.id)
    return [row[0] for row in session.execute(statement, rows).all()]
