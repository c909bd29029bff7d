"""The provider's questionnaire form: raw field text in, validated answers out, drafts kept as typed.

Form fields are named "section.field" ("identity.uscc") and "section.ROW.field" ("licences.0.number_raw").
Every save keeps the text exactly as typed (Invitation.draft), so nothing saved is lost; identifiers that
parse are written back normalised. Submitting validates the whole questionnaire with
app/disclosure/schema.Disclosure and, when it passes, stores its dump as Invitation.answers.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _
from pydantic import ValidationError
from sqlmodel import Session

from app.core import clock
from app.core.errors import InvalidInput, from_validation_error
from app.disclosure import invitations
from app.disclosure import uploads as disclosure_uploads
from app.disclosure.schema import (
    NETWORK_STORAGE_TYPES,
    REPEATED,
    ROW_LIMIT,
    SECTIONS,
    Disclosure,
    SectionSpec,
    parse_identifier,
    parse_uscc_text,
)
from app.models.disclosure import DisclosureUpload, Invitation, InvitationStatus

BLANK_ROWS = 1  # empty rows shown after the filled ones
MIN_ROWS = 2
MAX_TEXT = 5000
FILE_SUFFIX = "__file"
_IDENTIFIERS = {
    "identity.uscc": lambda text: parse_uscc_text(text),
    "licences.number_raw": lambda text: parse_identifier(text, ("licence",)),
    "filings.number_raw": lambda text: parse_identifier(text, ("icp_filing", "icp_licence", "psb_filing")),
}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


@dataclass
class FormState:
    """What the page shows: field text, rows per repeated section, errors per field, the uploads."""

    values: dict[str, str]
    rows: dict[str, int]
    errors: dict[str, list[str]] = field(default_factory=dict)
    uploads: dict[int, DisclosureUpload] = field(default_factory=dict)

    def add(self, name: str, message: str) -> None:
        """Record an error against a field ("" for the form as a whole)."""
        self.errors.setdefault(name, []).append(message)

    @property
    def error_count(self) -> int:
        """Number of error messages."""
        return sum(len(messages) for messages in self.errors.values())


# ---------------------------------------------------------------- raw text <-> nested answers
def _names(section: SectionSpec, row: int | None) -> list[tuple[str, str]]:
    prefix = section.name if row is None else f"{section.name}.{row}"
    return [(spec.name, f"{prefix}.{spec.name}") for spec in section.fields]


def _row_count(values: Mapping[str, str], section: str) -> int:
    rows = [
        int(key.split(".")[1])
        for key in values
        if key.startswith(section + ".") and key.split(".")[1].isdigit()
    ]
    return max(rows, default=-1) + 1


def rows_for(values: Mapping[str, str], asked: Mapping[str, Any] | None = None) -> dict[str, int]:
    """Rows to show per repeated section: filled ones plus blanks, at least MIN_ROWS, at most ROW_LIMIT."""
    rows = {}
    for section in REPEATED:
        wanted = MIN_ROWS
        with contextlib.suppress(ValueError):
            wanted = max(wanted, int(str((asked or {}).get(section, 0))))
        filled = max(
            (row + 1 for row in range(_row_count(values, section)) if _row_filled(values, section, row)),
            default=0,
        )
        rows[section] = min(ROW_LIMIT, max(wanted, filled + BLANK_ROWS))
    return rows


def _row_filled(values: Mapping[str, str], section: str, row: int) -> bool:
    spec = next(item for item in SECTIONS if item.name == section)
    return any(values.get(name, "").strip() for _field, name in _names(spec, row))


def read_values(form: Mapping[str, Any]) -> dict[str, str]:
    """The questionnaire's fields from a submitted form, as trimmed text (control characters dropped)."""
    known: set[str] = set()
    for section in SECTIONS:
        if section.repeated:
            for row in range(ROW_LIMIT):
                known.update(name for _field, name in _names(section, row))
        else:
            known.update(name for _field, name in _names(section, None))
    values = {}
    for key in known:
        value = form.get(key)
        if value is not None:
            values[key] = _CONTROL.sub("", str(value)).strip()[:MAX_TEXT]
    return values


def _typed(spec_widget: str, text: str) -> Any:
    if spec_widget == "checkbox":
        return text in ("on", "1", "true", "yes")
    if spec_widget == "yesno":
        return {"yes": True, "no": False}.get(text)
    return text or None


def nested(values: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Answers shaped like Disclosure from field text; blank rows left out; the form row of each kept row."""
    data: dict[str, Any] = {}
    row_map: dict[str, list[int]] = {}
    for section in SECTIONS:
        if not section.repeated:
            data[section.name] = {
                name: _typed(section.field(name).widget, values.get(key, ""))
                for name, key in _names(section, None)
            }
            continue
        items, kept = [], []
        for row in range(_row_count(values, section.name)):
            if not _row_filled(values, section.name, row):
                continue
            item = {
                name: _typed(section.field(name).widget, values.get(key, ""))
                for name, key in _names(section, row)
            }
            items.append({name: value for name, value in item.items() if value is not None})
            kept.append(row)
        data[section.name] = items
        row_map[section.name] = kept
    return data, row_map


def values_from_answers(answers: Mapping[str, Any]) -> dict[str, str]:
    """Field text from stored answers (to show a submitted questionnaire again)."""
    values: dict[str, str] = {}

    def text(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, list):
            return "、".join(str(item) for item in value)
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    for section in SECTIONS:
        content = answers.get(section.name)
        if section.repeated:
            for row, item in enumerate(content or []):
                for name, key in _names(section, row):
                    values[key] = text(item.get(name))
        elif isinstance(content, dict):
            for name, key in _names(section, None):
                spec = section.field(name)
                value = content.get(name)
                values[key] = ("on" if value else "") if spec.widget == "checkbox" else text(value)
    return values


# ---------------------------------------------------------------- checking
def _form_key(path: str, row_map: Mapping[str, list[int]]) -> str:
    match = re.match(r"^(\w+)\[(\d+)\]\.(\w+)", path)
    if match and match.group(1) in row_map and int(match.group(2)) < len(row_map[match.group(1)]):
        return f"{match.group(1)}.{row_map[match.group(1)][int(match.group(2))]}.{match.group(3)}"
    if match:
        return f"{match.group(1)}.{match.group(2)}.{match.group(3)}"
    return path


def normalise_identifiers(state: FormState) -> None:
    """Write identifiers that parse back normalised (full-width folded, province names abbreviated)."""
    for key, value in list(state.values.items()):
        parts = key.split(".")
        generic = f"{parts[0]}.{parts[-1]}"
        parser = _IDENTIFIERS.get(generic)
        if parser is None or not value:
            continue
        try:
            state.values[key] = parser(value)
        except ValueError:
            continue


def _check_uploads(state: FormState, data: dict[str, Any], row_map: Mapping[str, list[int]]) -> None:
    for section, name in (("licences", "scan_upload_id"), ("certifications", "scan_upload_id")):
        for index, item in enumerate(data.get(section, [])):
            value = item.get(name)
            if value is not None and (not str(value).isdigit() or int(value) not in state.uploads):
                state.add(f"{section}.{row_map[section][index]}.{name}", _("上传文件无效，请重新上传"))
                item.pop(name)
    diagram = data["topology"].get("diagram_upload_id")
    if diagram is not None and (not str(diagram).isdigit() or int(diagram) not in state.uploads):
        state.add("topology.diagram_upload_id", _("上传文件无效，请重新上传"))
        data["topology"]["diagram_upload_id"] = None


def _check_datacenter_names(state: FormState, data: dict[str, Any], row_map: Mapping[str, list[int]]) -> None:
    names = {item.get("name") for item in data.get("datacenters", [])}
    for index, offer in enumerate(data.get("offers", [])):
        wanted = offer.get("datacenter_name")
        if wanted and wanted not in names:
            key = f"offers.{row_map['offers'][index]}.datacenter_name"
            state.add(key, _("本供应商没有名为“%(name)s”的机房：请填写上面“机房”一节中的名称", name=wanted))
            offer.pop("datacenter_name")  # reported here, next to the field, not again by the model


def _check_network_storage(state: FormState, data: dict[str, Any]) -> None:
    """A local disk is not a network storage type (an older draft may still say so)."""
    storage = data.get("storage") or {}
    if storage.get("network_type") not in (None, "", *NETWORK_STORAGE_TYPES):
        state.add("storage.network_type", _("本地盘不是网络存储：本地 NVMe 请在“数据盘位置”中选择"))
        storage.pop("network_type")


def validate(state: FormState) -> Disclosure | None:
    """Check every field as the registry does; errors go next to their fields. The model when all pass."""
    normalise_identifiers(state)
    data, row_map = nested(state.values)
    _check_uploads(state, data, row_map)
    _check_datacenter_names(state, data, row_map)
    _check_network_storage(state, data)
    try:
        model = Disclosure.model_validate(data)
    except ValidationError as exc:
        for error in from_validation_error(exc).errors:
            state.add(_form_key(error.field, row_map), error.message)
        return None
    return None if state.errors else model


# ---------------------------------------------------------------- saving
def load(session: Session, invitation: Invitation) -> FormState:
    """The form as last saved (or as submitted), with the invitation's uploads."""
    values = dict((invitation.draft or {}).get("values") or {})
    if not values and invitation.answers:
        values = values_from_answers(invitation.answers)
    if not values:
        values = {"identity.legal_name": invitation.legal_name}
    asked = (invitation.draft or {}).get("rows") or {}
    return FormState(
        values, rows_for(values, asked), uploads=disclosure_uploads.uploads(session, invitation.id)
    )


def store_files(
    session: Session,
    invitation: Invitation,
    state: FormState,
    files: Mapping[str, tuple[bytes, str]],
    max_bytes: int,
    *,
    quota: disclosure_uploads.Quota | None = None,
    address: str = "",
) -> None:
    """Check and keep each uploaded file; its field then names the new upload (a refusal goes there)."""
    for key, (data, filename) in files.items():
        try:
            checked = disclosure_uploads.kept_copy(session, invitation.id, data)
            if checked is None:
                checked = disclosure_uploads.check(data, field=key, max_bytes=max_bytes)
            upload = disclosure_uploads.store(
                session, invitation, field=key, filename=filename, checked=checked, quota=quota
            )
        except InvalidInput as exc:
            state.add(key, exc.errors[0].message)
            invitations.log(
                session,
                invitation,
                "upload_refused",
                address=address,
                field=key,
                reason=exc.errors[0].message,
            )
            continue
        state.values[key] = str(upload.id)
        invitations.log(
            session, invitation, "uploaded", address=address, field=key, upload_id=upload.id, size=upload.size
        )
    state.uploads = disclosure_uploads.uploads(session, invitation.id)  # replaced files are gone


# The box the provider ticks to say the submission is final (it cannot be undone); asked without JavaScript.
CONFIRM_FIELD = "confirm_submit"


def save(
    session: Session,
    invitation: Invitation,
    state: FormState,
    *,
    submit: bool,
    address: str = "",
    confirmed: bool = True,
) -> bool:
    """Keep the text as typed; on a confirmed submit with no errors also store the answers. True when
    submitted."""
    if submit and not confirmed:
        state.add(CONFIRM_FIELD, _("提交后不能再修改，也不能撤回：请勾选确认后再提交"))
    model = validate(state)
    state.rows = rows_for(state.values, state.rows)
    invitation.draft = {"values": dict(state.values), "rows": dict(state.rows)}
    invitation.saved_at = clock.now()
    if submit and model is not None:
        invitation.answers = model.dump()
        invitation.status = InvitationStatus.submitted.value
        invitation.submitted_at = clock.now()
        invitations.log(session, invitation, "submitted", address=address, states=model.answer_states())
        session.commit()
        return True
    if invitation.status in (InvitationStatus.sent.value, InvitationStatus.opened.value):
        invitation.status = InvitationStatus.draft.value
    kind = "submit_refused" if submit else "draft_saved"
    invitations.log(session, invitation, kind, address=address, errors=state.error_count)
    session.commit()
    return False


def viewed(session: Session, invitation: Invitation, *, address: str = "") -> None:
    """Record a view; the first one moves a sent invitation to opened."""
    if invitation.opened_at is None:
        invitation.opened_at = clock.now()
    if invitation.status == InvitationStatus.sent.value:
        invitation.status = InvitationStatus.opened.value
    invitations.log(session, invitation, "viewed", address=address)
    session.commit()
