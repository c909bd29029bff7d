"""/api/v1 tool outputs captured by hand: POST an offer's ping / iperf3 / fio / lsblk / findmnt / nvidia-smi
output (JSON, or multipart/form-data with the output as the file `file`); it becomes an uploaded run."""

from __future__ import annotations

from typing import Any

from flask import Response, g, request, url_for
from flask_babel import gettext as _
from pydantic import BaseModel, Field

from app.api import bp
from app.api.body import json_object
from app.api.routing import MAX_ID, api_route, created
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.core.request_files import uploaded_file
from app.models.enums import Role
from app.trials import bench_uploads

OFFER_UPLOADS = f"/offers/<int(max={MAX_ID}):offer_id>/uploads"
FIELDS = ("tool", "path", "note", "output")


class UploadRequest(BaseModel):
    """A tool output captured by hand (multipart/form-data: the same fields, the output as file `file`)."""

    tool: str = Field(description=f"one of: {', '.join(bench_uploads.upload_tools())}")
    path: str | None = Field(
        default=None, description="intranet or public (iperf3: required; ping: default public); storage"
    )
    note: str | None = Field(default=None, max_length=bench_uploads.MAX_NOTE)
    output: str = Field(description="The tool's output verbatim (UTF-8; a multipart file may be GBK).")


class UploadForm(BaseModel):
    """The same upload as multipart/form-data: the output as the file `file` (UTF-8 or GBK), or as text."""

    tool: str = Field(description=f"one of: {', '.join(bench_uploads.upload_tools())}")
    path: str = Field(default="", description="as in the JSON body")
    note: str = Field(default="", max_length=bench_uploads.MAX_NOTE)
    file: bytes = Field(default=b"", description="the tool's output as a file (UTF-8 or GBK)")
    output: str = Field(default="", description="the output as text, when no file is sent")


class UploadPublic(BaseModel):
    """The run an upload became: provenance, how many samples were parsed, claims versus measurements."""

    run_id: int
    offer_id: int | None
    provider_id: int
    origin: str
    tool: str | None
    path: str | None
    note: str | None
    uploaded_by: str | None
    sha256: str | None
    samples: int
    comparisons: list[dict[str, Any]]


def _form_input() -> dict[str, Any]:
    """tool, path, note and output (the file `file`, else the text field `output`) of a multipart body."""
    data: dict[str, Any] = {name: request.form.get(name) for name in ("tool", "path", "note")}
    output, filename = uploaded_file("file", bench_uploads.MAX_UPLOAD_BYTES)
    if output is not None:
        data["output"], data["filename"] = output, filename
    else:
        data["output"] = request.form.get("output")
    return data


def _json_input() -> dict[str, Any]:
    body = json_object()
    unknown = sorted(set(body) - set(FIELDS))
    wrong = [name for name in FIELDS if body.get(name) is not None and not isinstance(body[name], str)]
    problems = [FieldError(name, _("不认识的字段")) for name in unknown]
    problems += [FieldError(name, _("须为文本")) for name in wrong]
    if problems:
        raise InvalidInput(problems)
    return {name: body.get(name) for name in FIELDS}


@api_route(
    bp,
    OFFER_UPLOADS,
    "POST",
    summary="上传手工采集的测试输出 (upload a tool output captured by hand)",
    role=Role.analyst,
    request_model=UploadRequest,
    form_model=UploadForm,
    response_model=UploadPublic,
    status=201,
    errors=(404,),
    tags=("benchmarks",),
)
def upload_bench_output(offer_id: int) -> Response:
    """JSON or multipart (file `file`); parsed and compared as executed runs are; bad output: nothing kept."""
    data = _form_input() if request.mimetype == "multipart/form-data" else _json_input()
    session = get_session()
    run = bench_uploads.upload_output(
        session,
        offer_id=offer_id,
        tool=str(data.get("tool") or ""),
        output=data.get("output"),
        path=data.get("path"),
        note=data.get("note"),
        filename=data.get("filename"),
        user=g.api_user,
    )
    return created(bench_uploads.upload_summary(session, run), url_for("api.get_bench_run", run_id=run.id))
