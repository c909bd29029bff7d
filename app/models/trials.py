"""Trial servers lent by providers, benchmark runs on them, and each run's per-probe results.

Credentials are stored encrypted (Fernet; see app.trials.servers) and never leave the service layer
in clear. A run keeps every step's raw output verbatim, its samples and parse errors, so a run that was
interrupted keeps what it had measured.
"""

from datetime import datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock
from app.models.jobs import FINAL_STATES, JobState
from app.models.versioning import AutoVersioned


class AuthMethod(StrEnum):
    """How gpuvet logs in to a trial server."""

    key = "key"
    password = "password"


RunState = JobState  # a benchmark run goes through the job queue's states


class RunOrigin(StrEnum):
    """Where a run's measurements come from: gpuvet executed it, or an analyst uploaded the output."""

    executed = "executed"
    uploaded = "uploaded"


FINAL_RUN_STATES = FINAL_STATES


class TrialServer(AutoVersioned, SQLModel, table=True):
    __tablename__ = "trial_server"
    __audited__ = True
    __audit_skip__ = ("secret_encrypted", "passphrase_encrypted")  # not even encrypted secrets

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    offer_id: Optional[int] = Field(default=None, foreign_key="offer.id", index=True, ondelete="SET NULL")
    name: str = Field(max_length=80)
    host: str = Field(max_length=255)
    port: int = Field(default=22)
    username: str = Field(default="root", max_length=64)
    auth_method: AuthMethod = Field(default=AuthMethod.key, sa_type=sa.String(16))
    secret_encrypted: str = Field(sa_type=sa.Text)  # Fernet token: private key text or password
    passphrase_encrypted: Optional[str] = Field(default=None, sa_type=sa.Text)
    host_key_type: Optional[str] = Field(default=None, max_length=40)
    host_key_fingerprint: Optional[str] = Field(default=None, max_length=80)  # pinned, "SHA256:..."
    host_key_pinned_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    peer_id: Optional[int] = Field(default=None, foreign_key="trial_server.id", ondelete="SET NULL")
    peer_address: Optional[str] = Field(default=None, max_length=255)  # intranet address of the peer
    notes: Optional[str] = Field(default=None, max_length=2000, sa_type=sa.Text)
    # Bumped on every change; an edit names the version it started from (existing rows start at 1).
    version: int = Field(default=1, sa_column_kwargs={"server_default": sa.text("1")})
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))


class BenchRun(SQLModel, table=True):
    __tablename__ = "bench_run"

    id: Optional[int] = Field(default=None, primary_key=True)
    # An executed run belongs to its trial server (deleted with it); an uploaded output has none.
    trial_server_id: Optional[int] = Field(
        default=None, foreign_key="trial_server.id", index=True, ondelete="CASCADE"
    )
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    offer_id: Optional[int] = Field(default=None, foreign_key="offer.id", index=True, ondelete="SET NULL")
    # "executed" (gpuvet ran it over SSH) or "uploaded" (an analyst pasted the tool's output; trusted less).
    origin: str = Field(
        default=RunOrigin.executed.value, max_length=16, sa_column_kwargs={"server_default": "executed"}
    )
    uploaded_by_name: Optional[str] = Field(default=None, max_length=60)
    raw_sha256: Optional[str] = Field(default=None, max_length=64)  # of the uploaded bytes
    job_id: Optional[int] = Field(default=None, foreign_key="job.id", ondelete="SET NULL")
    suite: str = Field(max_length=40)
    params: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    state: RunState = Field(default=RunState.queued, index=True, sa_type=sa.String(16))
    host: str = Field(default="", max_length=255)
    error: Optional[str] = Field(default=None, sa_type=sa.Text)
    error_kind: Optional[str] = Field(default=None, max_length=40)
    claims: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    comparisons: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_by_id: Optional[int] = None
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    started_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    finished_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))

    @property
    def finished(self) -> bool:
        """True once the run reached a final state."""
        return self.state in FINAL_RUN_STATES


class BenchStep(SQLModel, table=True):
    __tablename__ = "bench_step"

    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="bench_run.id", index=True, ondelete="CASCADE")
    position: int = 0
    step: str = Field(max_length=60)
    probe: str = Field(max_length=40)
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="pending", max_length=16)
    error: Optional[str] = Field(default=None, sa_type=sa.Text)
    duration: float = 0.0
    started_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    outputs: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    samples: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    parse_errors: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
