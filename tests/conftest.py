"""Shared fixtures: the app on SQLite and on PostgreSQL, clients logged in by role, API tokens."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NoReturn

import jinja2
import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel

import app.models
from app import create_app
from app.accounts import passwords, users
from app.core.config import Settings

BACKENDS = ["sqlite", "postgresql"]
PASSWORD = "correct horse battery"

# Every test user costs a password hash and every login a check: scrypt (what production uses, tested in
# tests/accounts/test_password_hashing.py) takes ~0.15 s each, one PBKDF2 round next to nothing.
PRODUCTION_HASH_METHOD = passwords.HASH_METHOD
passwords.HASH_METHOD = "pbkdf2:sha256:1"


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


def _sorted_tables() -> list[sa.Table]:
    """Every model table, children before parents (the order rows can be deleted in)."""
    return list(reversed(SQLModel.metadata.sorted_tables))


def _filled_tables(connection: sa.Connection, tables: list[sa.Table]) -> list[sa.Table]:
    """The tables holding at least one row, found with one query (an EXISTS per table)."""
    probes = [sa.select(sa.literal(table.name)).where(sa.exists().select_from(table)) for table in tables]
    filled = set(connection.execute(sa.union_all(*probes)).scalars())
    return [table for table in tables if table.name in filled]


# Sequences (SERIAL / IDENTITY) owned by the given tables that have handed out a number since they were
# last reset: TRUNCATE ... RESTART IDENTITY would start them again at 1.
_USED_SEQUENCES = sa.text(
    """
    SELECT quote_ident(s.schemaname) || '.' || quote_ident(s.sequencename)
    FROM pg_sequences s
    JOIN pg_depend d ON d.classid = 'pg_class'::regclass
        AND d.objid = (quote_ident(s.schemaname) || '.' || quote_ident(s.sequencename))::regclass
        AND d.deptype IN ('a', 'i')
    JOIN pg_class t ON t.oid = d.refobjid
    WHERE s.last_value IS NOT NULL AND t.relname = ANY(:tables)
    """
)


def _truncate_all(connection: sa.Connection, tables: list[sa.Table]) -> None:
    names = ", ".join(f'"{table.name}"' for table in tables)
    connection.execute(sa.text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))


def _empty_postgres(connection: sa.Connection, tables: list[sa.Table], filled: list[sa.Table]) -> None:
    """DELETE the filled tables and restart the used sequences; TRUNCATE everything should a DELETE fail."""
    used = connection.execute(_USED_SEQUENCES, {"tables": [table.name for table in tables]}).scalars().all()
    try:
        with connection.begin_nested():
            for table in filled:
                connection.execute(table.delete())
    except sa.exc.DBAPIError:
        _truncate_all(connection, tables)
        return
    for sequence in used:
        connection.execute(sa.text("SELECT setval(CAST(:name AS regclass), 1, false)"), {"name": sequence})


def _empty_tables(engine: sa.Engine) -> None:
    """Remove every row and (PostgreSQL) restart the id sequences, as TRUNCATE ... RESTART IDENTITY would.

    Only the tables that hold rows are touched: one query finds them, then a DELETE each (children first).
    A TRUNCATE of all the tables costs PostgreSQL new files for each (1-2 s a test on a busy disk); a DELETE
    of the few rows a test left costs milliseconds.
    """
    tables = _sorted_tables()
    with engine.begin() as connection:
        filled = _filled_tables(connection, tables)
        if engine.dialect.name == "postgresql":
            _empty_postgres(connection, tables, filled)
            return
        for table in filled:
            connection.execute(table.delete())


class SharedTemplateCode(jinja2.BytecodeCache):
    """Compiled templates kept for the whole run, so each test's new app loads them instead of compiling.

    Jinja checks an entry against the template's source (an edited template is compiled afresh); the key
    holds the environment's compile options, so an app whose Jinja is set up otherwise gets its own code.
    """

    def __init__(self) -> None:
        self._code: dict[tuple[Any, ...], bytes] = {}

    @staticmethod
    def _key(bucket: jinja2.bccache.Bucket) -> tuple[Any, ...]:
        env = bucket.environment
        options = tuple(getattr(env, name) for name in _SYNTAX_OPTIONS)
        finalize = getattr(env.finalize, "__qualname__", env.finalize)
        autoescape = env.autoescape if isinstance(env.autoescape, bool) else "by name"
        return (bucket.key, options, tuple(sorted(env.extensions)), finalize, autoescape)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self._code.get(self._key(bucket))
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._code[self._key(bucket)] = bucket.bytecode_to_string()


_SYNTAX_OPTIONS = (
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
    "optimized",
    "is_async",
)
TEMPLATE_CODE = SharedTemplateCode()


@pytest.fixture
def app(database_url: str, tmp_path: Path):
    """The Flask app on a freshly emptied database; CSRF is off except in the CSRF tests."""
    settings = Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=database_url)
    flask_app = create_app(settings, TESTING=True, WTF_CSRF_ENABLED=False)
    flask_app.jinja_env.bytecode_cache = TEMPLATE_CODE
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
