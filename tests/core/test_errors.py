"""pydantic errors in our own words, one language at a time: the catalog's English, never pydantic's."""

from __future__ import annotations

import re
from enum import StrEnum
from ipaddress import IPv6Address
from typing import Annotated

import pytest
from flask_babel import force_locale
from flask_babel import gettext as _
from pydantic import AfterValidator, BaseModel, Field, ValidationError

from app.core.errors import from_validation_error

CJK = re.compile(r"[\u4e00-\u9fff]")
PYDANTIC_PHRASES = ("should", "String should", "Value error", "Field required", "valid integer")


class Colour(StrEnum):
    red = "red"
    blue = "blue"


def _unique(value: list[str]) -> list[str]:
    if len(set(value)) != len(value):
        raise ValueError(_("有重复项"))  # a message of our own, as the questionnaire raises it
    return value


class Form(BaseModel):
    name: str = Field(min_length=1)
    title: str = Field(default="x", min_length=3, max_length=5)
    count: int = Field(default=1, ge=1, le=8)
    ratio: float = Field(default=1.0, gt=0)
    colour: Colour = Colour.red
    address: IPv6Address | None = None
    tags: Annotated[list[str], AfterValidator(_unique)] = Field(default_factory=list, max_length=2)


def _messages(data: dict, locale: str) -> dict[str, str]:
    with force_locale(locale):
        try:
            Form.model_validate(data)
        except ValidationError as exc:
            return {error.field: error.message for error in from_validation_error(exc).errors}
    raise AssertionError("the data was valid")


CASES = [
    ({}, "name", "必填项", "required"),
    ({"name": ""}, "name", "至少 1 个字符", "at least 1 character"),
    ({"name": "a", "title": "ab"}, "title", "至少 3 个字符", "at least 3 characters"),
    ({"name": "a", "title": "abcdef"}, "title", "最多 5 个字符", "at most 5 characters"),
    ({"name": "a", "count": 0}, "count", "不能小于 1", "must be at least 1"),
    ({"name": "a", "count": 9}, "count", "不能大于 8", "must be at most 8"),
    ({"name": "a", "count": "many"}, "count", "须为整数", "must be a whole number"),
    ({"name": "a", "ratio": 0}, "ratio", "须大于 0", "must be greater than 0"),
    (
        {"name": "a", "colour": "green"},
        "colour",
        "取值无效，可选：red、blue",
        "invalid value; accepted: red, blue",
    ),
    ({"name": "a", "address": "::zz"}, "address", "取值无效", "invalid value"),
    ({"name": "a", "tags": ["a", "b", "c"]}, "tags", "最多 2 项", "at most 2 items"),
    ({"name": "a", "tags": ["a", "a"]}, "tags", "有重复项", "contains duplicates"),
]


@pytest.mark.parametrize(("data", "field", "zh", "en"), CASES)
def test_each_error_type_in_both_languages(app, data, field, zh, en):
    with app.test_request_context("/"):
        zh_message = _messages(data, "zh")[field]
        en_message = _messages(data, "en")[field]
    assert (zh_message, en_message) == (zh, en)
    assert not CJK.search(en_message), en_message
    for message in (zh_message, en_message):
        assert not any(phrase in message for phrase in PYDANTIC_PHRASES), message


def test_no_pydantic_english_for_any_error_of_a_real_form(app):
    from app.models.io import ProviderCreate

    bad = {
        "legal_name": "",
        "contact_email": "not-an-email",
        "registered_capital_cny": "many",
        "status": "nonsense",
        "website": "javascript:alert(1)",
        "registered_province": "火星",
        "unknown_field": 1,
    }
    for locale in ("zh", "en"):
        with app.test_request_context("/"), force_locale(locale):
            with pytest.raises(ValidationError) as caught:
                ProviderCreate.model_validate(bad)
            errors = from_validation_error(caught.value).errors
        assert {error.field for error in errors} >= {"legal_name", "contact_email", "status", "unknown_field"}
        for error in errors:
            assert not any(phrase in error.message for phrase in PYDANTIC_PHRASES), error
            if locale == "en":
                # Only quoted names (the echoed input, example provinces) may be Chinese.
                assert not CJK.search(re.sub(r"“[^”]*”", "", error.message)), error
            else:
                assert CJK.search(error.message), error


def test_a_choice_error_lists_the_labels_in_the_readers_language(app):
    """A form's choice error names what may be chosen as the reader reads it, never the raw values; the API
    body still lists the values as they are sent (item 10 of issue 27)."""
    from app.models.io import ProviderCreate

    shown = {}
    for locale in ("zh", "en"):
        with app.test_request_context("/"), force_locale(locale):
            with pytest.raises(ValidationError) as caught:
                ProviderCreate.model_validate({"legal_name": "示例算力有限公司", "status": "maybe"})
            (error,) = from_validation_error(caught.value).errors
        shown[locale] = error
    assert shown["zh"].message == "取值无效，可选：候选、已批准、已拒绝、已暂停"
    assert shown["en"].message == "invalid value; accepted: Candidate, Approved, Rejected, Suspended"
    assert shown["en"].as_dict() == {
        "field": "status",
        "message": "invalid value; accepted: Candidate, Approved, Rejected, Suspended",
        "accepted": ["candidate", "approved", "rejected", "suspended"],
    }


def test_not_one_of_reads_the_kind_the_values_belong_to(app):
    from app.core.errors import not_one_of

    with app.test_request_context("/"), force_locale("en"):
        licence = not_one_of("status", ("正常", "撤销", "吊销", "注销"))  # the licence statuses' kind
        sort = not_one_of("sort", ("name", "-name"))  # no kind lists them: shown as typed
    assert licence.message == "invalid value; accepted: Valid, Revoked, Withdrawn, Cancelled"
    assert licence.accepted == ("正常", "撤销", "吊销", "注销")
    assert sort.message == "invalid value; accepted: name, -name"
    with app.app_context():  # the CLI: no request, so the values as they are typed in a file or option
        typed = not_one_of("status", ("candidate", "approved"))
    assert typed.message == "取值无效，可选：candidate、approved"
