"""A real app (CSRF on) on its own SQLite file, seeded by the test and served on a free loopback port."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sqlmodel import Session, SQLModel

import app.models  # noqa: F401 - registers every table
from app import create_app
from app.core.config import PROJECT_ROOT, Settings

EN_PO = PROJECT_ROOT / "app" / "translations" / "en" / "LC_MESSAGES" / "messages.po"


def english_catalog(target: Path) -> Path:
    """The English catalog compiled from the .po file now (the .mo is not committed)."""
    folder = target / "en" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with EN_PO.open("rb") as source, (folder / "messages.mo").open("wb") as handle:
        write_mo(handle, read_po(source, locale="en"))
    return target


@contextmanager
def serve_seeded(
    tmp_path: Path, seed: Callable[[Session], dict[str, Any]], *, english: bool = True
) -> Iterator[dict[str, Any]]:
    """Create the schema, run `seed(session)`, serve the app; yields seed's result plus "url"."""
    from werkzeug.serving import make_server

    url = f"sqlite:///{tmp_path / 'seeded.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    extra = (
        {"BABEL_TRANSLATION_DIRECTORIES": str(english_catalog(tmp_path / "translations"))} if english else {}
    )
    flask_app = create_app(Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=url), **extra)
    with Session(flask_app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        seeded = seed(session)
    server = make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {**seeded, "url": f"http://127.0.0.1:{server.server_port}"}
    finally:
        server.shutdown()
        thread.join(timeout=10)
        flask_app.extensions["gpuvet.engine"].dispose()
