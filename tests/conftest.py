"""Shared fixtures: the app on SQLite and on PostgreSQL, clients logged in by role, API tokens."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NoReturn

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel

import app.models
from app import create_app
from app.config import Settings
from app.services import users

BACKENDS = ["sqlite", "postgresql"]
PASSWORD = "correct horse battery"


def postgres_url() -> str | None:
    """URL of the test PostgreSQL server, set by the test command."""
    return os.environ.get("GPUVET_TEST_POSTGRES_URL")


# Set by scripts/test.sh (GPUVET_REQUIRE_TOOLS, GPUVET_REQUIRE_POSTGRES) and by CI systems (CI): every
# tool the tests need (PostgreSQL, Redis, poppler, `ip netns`, sshd as root, Chromium) must be there.
REQUIRE_TOOLS_VARIABLES = ("CI", "GPUVET_REQUIRE_TOOLS", "GPUVET_REQUIRE_POSTGRES")


def require_tools() -> bool:
    """In CI (or when asked), a test whose tool is missing fails instead of skipping."""
    return any(os.environ.get(name) for name in REQUIRE_TOOLS_VARIABLES)


def require_postgres() -> bool:
    """In CI (or when asked), a missing PostgreSQL fails instead of skipping."""
    return require_tools()


def missing_tool(message: str) -> NoReturn:
    """A tool this test needs is missing: fail where tools are required (CI, scripts/test.sh), else skip."""
    if require_tools():
        pytest.fail(f"{message} (required: {' / '.join(REQUIRE_TOOLS_VARIABLES)} is set)", pytrace=False)
    pytest.skip(message)


def _backend_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'test.sqlite3'}"
    url = postgres_url()
    if not url:
        missing_tool("GPUVET_TEST_POSTGRES_URL is not set (the README's test command starts PostgreSQL)")
    return url


@contextmanager
def private_postgres_database(server_url: str) -> Iterator[str]:
    """A throw-away PostgreSQL database on the test server, so parallel test runs never collide."""
    name = f"gpuvet_t_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
        yield server_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database per backend with the models' tables (create_all is for tests only)."""
    url = _backend_url(request.param, tmp_path_factory)
    with ExitStack() as stack:
        if request.param == "postgresql":
            url = stack.enter_context(private_postgres_database(url))
        engine = sa.create_engine(url)
        SQLModel.metadata.create_all(engine)
        engine.dispose()
        yield url


def _empty_tables(engine: sa.Engine) -> None:
    tables = list(reversed(SQLModel.metadata.sorted_tables))
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            names = ", ".join(f'"{table.name}"' for table in tables)
            connection.execute(sa.text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        else:
            for table in tables:
                connection.execute(table.delete())


@pytest.fixture
def app(database_url: str, tmp_path: Path):
    """The Flask app on a freshly emptied database; CSRF is off except in the CSRF tests."""
    settings = Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=database_url)
    flask_app = create_app(settings, TESTING=True, WTF_CSRF_ENABLED=False)
    engine = flask_app.extensions["gpuvet.engine"]
    _empty_tables(engine)
    yield flask_app
    engine.dispose()


@pytest.fixture
def session(app) -> Iterator[Session]:
    """A session outside any request, for arranging and checking data."""
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as db_session:
        yield db_session


@pytest.fixture
def make_user(session: Session):
    """Create a user with a role; returns its name."""

    def _make(name: str, role: str) -> str:
        users.create_user(session, username=name, password=PASSWORD, role=role)
        return name

    return _make


@pytest.fixture
def login(app, make_user):
    """Return a test client logged in as a new user of the given role."""

    def _login(role: str, name: str | None = None):
        name = make_user(name or role, role)
        client = app.test_client()
        response = client.post("/login", data={"username": name, "password": PASSWORD})
        assert response.status_code in (302, 303), response.get_data(as_text=True)[:500]
        return client

    return _login


@pytest.fixture
def token_for(session: Session, make_user):
    """Return a bearer header dict for a new user of the given role."""

    def _token(role: str, name: str | None = None) -> dict[str, str]:
        name = make_user(name or f"api-{role}", role)
        return {"Authorization": f"Bearer {users.issue_token(session, username=name)}"}

    return _token


CSRF_INPUT = re.compile(r'name="csrf_token" type="hidden" value="([^"]+)"|name="csrf_token" value="([^"]+)"')


def csrf_token_from(html: str) -> str:
    """Pull the CSRF token out of a rendered form."""
    match = CSRF_INPUT.search(html)
    assert match, "form has no csrf_token field"
    return match.group(1) or match.group(2)


# Fixtures that start real sshd, network namespaces, servers or Chromium: a test using one is slow whatever
# its module says, so scripts/test.sh runs it in the serial pass (timings on a shaped link need a quiet CPU).
SERIAL_FIXTURES = frozenset(
    ("trial_server", "shaped_link", "shaped_server", "requires_root", "mesh", "cluster", "live_server")
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests that use a real-network or browser fixture (or live under tests/browser) as slow."""
    for item in items:
        browser = "tests/browser/" in item.nodeid or "browser" in item.fixturenames
        if browser and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        if SERIAL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
