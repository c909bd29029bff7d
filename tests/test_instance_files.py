"""The instance folder and what the app writes into it are private: folder 0700, files 0600 (issue 9)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from app import create_app
from app.core.config import Settings, read_or_create_secret
from app.core.db import get_engine, private_sqlite_file, sqlite_path
from app.core.jobs import QUEUE_FILE, get_huey
from app.trials.servers import KEY_FILE, cipher_from_settings

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def mode(path: Path) -> int:
    """The permission bits of `path`."""
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common 022 umask, under which files are created world-readable unless the app says otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def settings_for(instance: Path, **values: object) -> Settings:
    """Settings whose SQLite database is the default one under the instance folder."""
    url = f"sqlite:///{instance / 'gpuvet.sqlite3'}"
    return Settings(GPUVET_INSTANCE_PATH=instance, DATABASE_URL=url, **values)


def test_instance_folder_and_secret_key_are_created_private(tmp_path: Path) -> None:
    instance = tmp_path / "deep" / "instance"
    create_app(settings_for(instance), defer_setup=True)
    assert mode(instance) == 0o700
    assert mode(instance / "secret_key") == 0o600


def test_an_existing_open_instance_folder_and_secret_key_are_tightened(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    instance.mkdir(mode=0o755)
    (instance / "secret_key").write_text("kept-as-it-is")
    (instance / "secret_key").chmod(0o644)
    flask_app = create_app(settings_for(instance), defer_setup=True)
    assert flask_app.config["SECRET_KEY"] == "kept-as-it-is"
    assert mode(instance) == 0o700 and mode(instance / "secret_key") == 0o600


def test_sqlite_database_and_its_wal_and_shm_files_are_0600(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    flask_app = create_app(settings_for(instance), defer_setup=True)
    engine = get_engine(flask_app)
    with engine.connect() as connection:  # keeps the -wal and -shm files while it is open
        connection.execute(sa.text("CREATE TABLE t (x INTEGER)"))
        connection.execute(sa.text("INSERT INTO t VALUES (1)"))
        connection.commit()
        files = {path.name: mode(path) for path in instance.glob("gpuvet.sqlite3*")}
    engine.dispose()
    assert files == {"gpuvet.sqlite3": 0o600, "gpuvet.sqlite3-wal": 0o600, "gpuvet.sqlite3-shm": 0o600}


def test_existing_open_database_files_are_tightened(tmp_path: Path) -> None:
    database = tmp_path / "old.sqlite3"
    for name in ("old.sqlite3", "old.sqlite3-wal", "old.sqlite3-shm"):
        (tmp_path / name).touch(mode=0o644)
    private_sqlite_file(f"sqlite:///{database}")
    assert {path.name: mode(path) for path in tmp_path.iterdir()} == dict.fromkeys(
        ("old.sqlite3", "old.sqlite3-wal", "old.sqlite3-shm"), 0o600
    )


def test_only_sqlite_files_are_touched() -> None:
    assert sqlite_path("postgresql+psycopg://u:p@localhost/db") is None
    assert sqlite_path("sqlite://") is None and sqlite_path("sqlite:///:memory:") is None
    assert sqlite_path("sqlite:////srv/data/x.sqlite3") == Path("/srv/data/x.sqlite3")


def test_db_command_creates_the_database_file_private(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    flask_app = create_app(settings_for(instance), defer_setup=True)
    result = flask_app.test_cli_runner().invoke(args=["db", "current"])
    assert result.exit_code == 0, result.output
    assert mode(instance / "gpuvet.sqlite3") == 0o600


def test_sqlite_job_queue_is_private(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    flask_app = create_app(settings_for(instance), JOBS_IMMEDIATE=False)
    huey = get_huey(flask_app)
    huey.storage.enqueue(b"probe")  # the queue's own write: its -wal and -shm files appear
    files = {path.name: mode(path) for path in instance.glob(QUEUE_FILE + "*")}
    assert files and set(files.values()) == {0o600}, files
    assert QUEUE_FILE in files


def test_trial_secret_key_file_is_private(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "instance", GPUVET_TRIAL_SECRET_KEY=None)
    cipher = cipher_from_settings(settings)
    assert mode(tmp_path / "instance" / KEY_FILE) == 0o600
    assert cipher_from_settings(settings).decrypt(cipher.encrypt(b"same key")) == b"same key"


def test_concurrent_creators_of_a_secret_all_get_the_same_one(tmp_path: Path) -> None:
    path = tmp_path / "instance" / "secret"
    barrier = threading.Barrier(8)
    values: list[bytes] = []

    def create(number: int) -> None:
        barrier.wait(timeout=30)
        values.append(read_or_create_secret(path, lambda: f"secret-{number}".encode()))

    threads = [threading.Thread(target=create, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(values) == 8 and len(set(values)) == 1 and values[0] == path.read_bytes()
    assert [p.name for p in path.parent.iterdir()] == ["secret"]  # no temporary file left behind
    assert mode(path) == 0o600 and mode(path.parent) == 0o700


def _fake_checkout(root: Path) -> Path:
    """scripts/run.sh in a checkout whose install, flask and gunicorn are stand-ins that log their calls."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "scripts" / "run.sh", root / "scripts" / "run.sh")
    (root / "scripts" / "install.sh").write_text("exit 0\n")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    log = root / "calls.log"
    (bin_dir / "flask").write_text(
        f'#!/bin/sh\necho "flask $*" >> {log}\n'
        f'case "$*" in *--password-stdin*) echo "stdin $(cat)" >> {log};; esac\n'
    )
    (bin_dir / "gunicorn").write_text(f'#!/bin/sh\necho "gunicorn $*" >> {log}\n')
    for name in ("flask", "gunicorn"):
        (bin_dir / name).chmod(0o755)
    return log


def test_run_sh_keeps_the_admin_password_in_gpuvet_instance_path(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    log = _fake_checkout(root)
    instance = tmp_path / "elsewhere" / "instance"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GPUVET_INSTANCE_PATH": str(instance)}
    done = subprocess.run(
        ["bash", str(root / "scripts" / "run.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    password_file = instance / "admin-password"
    password = password_file.read_text().strip()
    assert password and password in done.stdout
    assert mode(password_file) == 0o600 and mode(instance) == 0o700
    assert not (root / "instance").exists()
    calls = log.read_text()
    assert "flask users create admin --role admin --password-stdin" in calls and f"stdin {password}" in calls
