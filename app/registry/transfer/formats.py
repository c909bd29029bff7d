"""The transfer formats: their names, version and media types, and the text of an uploaded file."""

from __future__ import annotations

from flask_babel import gettext as _

from app.core.errors import InvalidInput

FORMAT_NAME = "gpuvet-providers"


FORMAT_VERSION = 1


FORMATS = ("json", "csv")


MEDIA_TYPES = {"json": "application/json", "csv": "text/csv"}


class FileError(Exception):
    """The file as a whole cannot be read (encoding, syntax, shape)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def format_for_filename(filename: str | None) -> str | None:
    """The import format a file name's extension suggests (json or csv), else None."""
    suffix = (filename or "").rsplit(".", 1)[-1].lower() if "." in (filename or "") else ""
    return suffix if suffix in FORMATS else None


def check_format(format: str) -> str:
    if format not in FORMATS:
        raise InvalidInput(_("不支持的格式“%(format)s”，可选 json 或 csv", format=format), field="format")
    return format


def decode(data: bytes | str) -> str:
    """Text of an uploaded file: UTF-8 (with or without BOM), else GB18030/GBK."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030")
    except UnicodeDecodeError:
        raise FileError("encoding", _("无法识别文件编码，请保存为 UTF-8 或 GBK")) from None
