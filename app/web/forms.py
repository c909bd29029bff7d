"""Form specs: which inputs a page shows, how a post becomes a service dict, and how values come back.

Validation is not here: the services validate with the pydantic models, and their FieldErrors are
shown under the input with the same name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import Enum
from typing import Any

from flask import render_template
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from pydantic import BaseModel
from pydantic_core import PydanticUndefined
from werkzeug.datastructures import MultiDict

from app.core.db import get_session
from app.core.errors import FieldError
from app.core.provinces import PROVINCES
from app.models.fields import blank_to_none
from app.models.io import CertificationIn, DatacenterIn, FilingIn, LicenceIn, OfferIn, ProviderCreate
from app.registry.status_lock import approved_decision
from app.web import labels

Choices = Callable[[Any], Iterable[tuple[str, Any]]]

# Widgets whose value is a plain string copied from the form.
TEXT_WIDGETS = {"text", "textarea", "number", "decimal", "date", "select", "email", "url", "list"}
TRISTATE = {"": None, "true": True, "false": False}


@dataclass(frozen=True)
class FieldSpec:
    """One input of a form: the model field it feeds and how to draw it."""

    name: str
    widget: str = "text"
    choices: Choices | None = None
    blank: Any = None
    help: Any = None
    width: int = 6

    @property
    def label(self) -> Any:
        """Translated label of the field."""
        return labels.field_label(self.name)


@dataclass(frozen=True)
class FormSpec:
    """The inputs of one form, in order, and the model that validates them."""

    key: str
    schema: type[BaseModel]
    fields: tuple[FieldSpec, ...]
    names: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(spec.name for spec in self.fields))

    def required(self, name: str) -> bool:
        """Whether the model insists on a value (shown as a marker, checked by the service)."""
        info = self.schema.model_fields.get(name)
        return bool(info and info.is_required())

    def defaults(self) -> dict[str, Any]:
        """The model's default values, for a new record's form."""
        values = {}
        for spec in self.fields:
            info = self.schema.model_fields.get(spec.name)
            if info is None or info.is_required():
                continue
            default = info.get_default(call_default_factory=True)
            if default is not PydanticUndefined:
                values[spec.name] = default
        return values


@dataclass(frozen=True)
class BoundField:
    """A field with the value to show, its errors and its options, ready for the template."""

    spec: FieldSpec
    value: Any
    errors: list[str]
    choices: list[tuple[str, Any]]
    required: bool

    @property
    def name(self) -> str:
        """Input name (the model field name)."""
        return self.spec.name

    @property
    def choice_values(self) -> list[str]:
        """The option values, to spot a stored value that is no longer offered."""
        return [value for value, _text in self.choices]

    @property
    def id(self) -> str:
        """HTML id of the input."""
        return f"f-{self.spec.name}"


# ---------------------------------------------------------------- choices
def enum_choices(group: Mapping[str, Any]) -> Choices:
    """The (value, label) choices of a label group, read when the form is drawn (in its language)."""
    return lambda _context: list(group.items())


def _statuses(provider: Any) -> list[tuple[str, Any]]:
    """The provider statuses; only the current one, saying why, while an approved decision in its term set it
    (app.registry.status_lock refuses a hand change too)."""
    choices = list(labels.PROVIDER_STATUS.items())
    decision = approved_decision(get_session(), provider.id) if provider is not None and provider.id else None
    if decision is None:
        return choices
    return [
        (value, _("%(status)s（由采购决定 #%(id)s 批准，不能手动修改）", status=text, id=decision.id))
        for value, text in choices
        if value == str(provider.status)
    ]


def _provinces(_context: Any) -> list[tuple[str, Any]]:
    return [(province.name, province.name) for province in PROVINCES]


def _datacenters(provider: Any) -> list[tuple[str, Any]]:
    return [
        (str(dc.id), f"{dc.name}（{dc.province}{' ' + dc.city if dc.city else ''}）")
        for dc in (provider.datacenters if provider is not None else [])
    ]


def _business_items(_context: Any) -> list[tuple[str, Any]]:
    return list(labels.BUSINESS_ITEM.items())


# ---------------------------------------------------------------- the forms
PROVIDER_FORM = FormSpec(
    "provider",
    ProviderCreate,
    (
        FieldSpec("legal_name", width=8, help=_l("营业执照上的完整名称")),
        FieldSpec("short_name", width=4),
        FieldSpec("legal_name_en", width=8),
        FieldSpec("status", "select", _statuses, width=4),
        FieldSpec("uscc", help=_l("18 位，字母大小写、空格均可")),
        FieldSpec("registered_province", "select", _provinces, blank=_l("（未填写）"), width=3),
        FieldSpec("registered_capital_cny", "number", width=3),
        FieldSpec("registered_address", width=12),
        FieldSpec("website", "url", help=_l("不写协议时按 https:// 处理")),
        FieldSpec("contact_name", width=3),
        FieldSpec("contact_phone", width=3),
        FieldSpec("contact_email", "email"),
        FieldSpec("discloses_network_topology", "tristate", width=3),
        FieldSpec("discloses_storage_config", "tristate", width=3),
        FieldSpec("notes", "textarea", width=12),
    ),
)

RECORD_FORMS: dict[str, FormSpec] = {
    "licences": FormSpec(
        "licences",
        LicenceIn,
        (
            FieldSpec("number_raw", help=_l("照原样填写，如 京B1-20190001 或 ICP证粤B2-20230674号")),
            FieldSpec("company_name"),
            FieldSpec("business_items", "checks", _business_items, width=12),
            FieldSpec("b11_includes_resource_collab", "tristate", width=4),
            FieldSpec("status", "select", enum_choices(labels.LICENCE_STATUS), width=4),
            FieldSpec("issuer", width=4),
            FieldSpec(
                "coverage",
                "list",
                width=12,
                help=_l("跨地区许可证覆盖的省市，用逗号或顿号分隔，如 北京、上海、广东"),
            ),
            FieldSpec("issued_on", "date", width=3),
            FieldSpec("expires_on", "date", width=3),
        ),
    ),
    "filings": FormSpec(
        "filings",
        FilingIn,
        (
            FieldSpec("kind", "select", enum_choices(labels.FILING_KIND), blank=_l("自动识别"), width=4),
            FieldSpec("number_raw", width=8, help=_l("如 京ICP备10046444号-9、京公网安备11010802032137号")),
            FieldSpec("entity_name", width=8),
            FieldSpec("entity_nature", width=4, help=_l("如 企业、个人")),
            FieldSpec("domain"),
        ),
    ),
    "certifications": FormSpec(
        "certifications",
        CertificationIn,
        (
            FieldSpec("kind", "select", enum_choices(labels.CERTIFICATION_KIND), width=4),
            FieldSpec("name", width=8, help=_l("“其他”类认证必填")),
            FieldSpec("level", "number", width=4, help=_l("等保必填，1-5")),
            FieldSpec("number", width=8),
            FieldSpec("issuer", width=8),
            FieldSpec("expires_on", "date", width=4),
        ),
    ),
    "datacenters": FormSpec(
        "datacenters",
        DatacenterIn,
        (
            FieldSpec("name"),
            FieldSpec("province", "select", _provinces, blank=_l("（请选择）"), width=3),
            FieldSpec("city", width=3),
        ),
    ),
    "offers": FormSpec(
        "offers",
        OfferIn,
        (
            FieldSpec("name"),
            FieldSpec("offer_kind", "select", enum_choices(labels.OFFER_KIND), width=3),
            FieldSpec("datacenter_id", "select", _datacenters, blank=_l("（未指定）"), width=3),
            FieldSpec("gpu_model", width=3, help=_l("如 H800、A100 80G、RTX 4090")),
            FieldSpec("gpus_per_node", "number", width=3),
            FieldSpec("gpu_memory_gb", "number", width=3),
            FieldSpec("vcpu", "number", width=3),
            FieldSpec("ram_gb", "number", width=3),
            FieldSpec("intranet_gbps", "decimal", width=3),
            FieldSpec("rdma_type", "select", enum_choices(labels.RDMA_TYPE), width=3),
            FieldSpec("rdma_gbps", "decimal", width=3),
            FieldSpec("public_mbps", "decimal", width=3),
            FieldSpec("bandwidth_type", "select", enum_choices(labels.BANDWIDTH_TYPE), width=3),
            FieldSpec("storage_type", "select", enum_choices(labels.STORAGE_TYPE), width=3),
            FieldSpec("storage_capacity_gb", "number", width=3),
            FieldSpec("nominal_iops", "number", width=3),
            FieldSpec("price_gpu_hour_cny", "decimal", width=3),
            FieldSpec("price_month_cny", "decimal", width=3),
            FieldSpec("notes", "textarea", width=12),
        ),
    ),
}


# ---------------------------------------------------------------- form <-> dict
def parse_form(spec: FormSpec, form: MultiDict) -> dict[str, Any]:
    """Turn a posted form into the dict the services validate (strings stay strings)."""
    data: dict[str, Any] = {}
    for item in spec.fields:
        if item.widget == "checks":
            data[item.name] = form.getlist(item.name)
        elif item.widget == "checkbox":
            data[item.name] = item.name in form
        elif item.widget == "tristate":
            raw = form.get(item.name, "")
            data[item.name] = TRISTATE.get(raw, raw)
        else:
            data[item.name] = form.get(item.name, "")
    return data


def cleaned(data: Mapping[str, Any]) -> dict[str, Any]:
    """What the services get: text NFKC-normalised and trimmed, empty inputs as None (control characters
    left for the models: a single-line field refuses them, naming the field).

    The create model does this itself; the provider PATCH model does not, so an emptied number
    input would otherwise be refused as "not an integer". The typed text is still what is re-shown.
    """
    return {
        key: blank_to_none(value, keep_controls=True) if isinstance(value, str) else value
        for key, value in data.items()
    }


def _display(widget: str, value: Any) -> Any:
    if isinstance(value, Enum):
        value = value.value
    if widget == "checks":
        return [str(item) for item in value] if isinstance(value, list) else []
    if widget == "checkbox":
        return bool(value)
    if widget == "tristate":
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value)
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def display_values(spec: FormSpec, data: Mapping[str, Any]) -> dict[str, Any]:
    """Values as the inputs show them, from a stored record's fields or a re-shown post."""
    return {item.name: _display(item.widget, data.get(item.name)) for item in spec.fields}


def record_values(spec: FormSpec, record: Any) -> dict[str, Any]:
    """Values of a stored record for its edit form."""
    return display_values(spec, {item.name: getattr(record, item.name, None) for item in spec.fields})


_FIRST_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")


def split_errors(spec: FormSpec, errors: Iterable[FieldError]) -> tuple[dict[str, list[str]], list[str]]:
    """Errors of named inputs (by input name) and the rest, shown at the top of the form."""
    by_field: dict[str, list[str]] = {}
    general: list[str] = []
    for error in errors:
        match = _FIRST_NAME.match(error.field or "")
        name = match.group(0) if match else ""
        if name in spec.names:
            by_field.setdefault(name, []).append(error.message)
        elif name and name != "version":
            general.append(f"{labels.field_label(name)}: {error.message}")
        else:
            general.append(error.message)
    return by_field, general


def bind(
    spec: FormSpec, values: Mapping[str, Any], errors: Mapping[str, list[str]], context: Any = None
) -> list[BoundField]:
    """Fields ready to draw: value, errors and options for each input."""
    return [
        BoundField(
            spec=item,
            value=values.get(item.name, ""),
            errors=list(errors.get(item.name, [])),
            choices=list(item.choices(context)) if item.choices else [],
            required=spec.required(item.name),
        )
        for item in spec.fields
    ]


def render_form(
    spec: FormSpec,
    *,
    provider: Any,
    values: dict[str, Any],
    errors: list[FieldError],
    title: Any,
    action: str,
    cancel: str,
    version: Any,
) -> str:
    """Render the shared form page: inputs bound to values, errors under their inputs or on top."""
    by_field, general = split_errors(spec, errors)
    return render_template(
        "providers/form.html",
        provider=provider,
        title=title,
        fields=bind(spec, values, by_field, provider),
        general_errors=general,
        conflict=any(error.field == "version" for error in errors),
        action=action,
        cancel=cancel,
        version=version,
    )
