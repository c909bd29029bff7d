"""The whole OpenAPI document under schemathesis (issue 23 item 13): every operation, with generated valid
and invalid input, as an admin; any 5xx, undocumented status or response off its schema fails.

Bounded to about two minutes on two cores: a few examples per operation, on SQLite only."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.accounts.users import issue_token
from app.api.openapi import build_document

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

EXAMPLES_PER_OPERATION = 20
# What each answer must keep to. Left out: positive_data_acceptance (business rules rightly refuse some
# schema-valid input with 422, e.g. a NUL in a text) and the checks that send a request again outside the app
# (ignored_auth, use_after_free, ...: auth is tested in test_auth.py).
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def _without_auth(document: dict[str, Any]) -> dict[str, Any]:
    """The document less its bearer scheme: the test sends a real admin token itself, so schemathesis must
    not count a made-up Authorization header as the invalid part of a case (auth: test_auth.py)."""
    document = copy.deepcopy(document)
    document.pop("security", None)
    document["components"].pop("securitySchemes", None)
    for operations in document["paths"].values():
        for operation in operations.values():
            operation.pop("security", None)
    return document


schema = schemathesis.openapi.from_dict(_without_auth(build_document("/api/v1")))


@pytest.fixture
def admin(session, make_user) -> dict[str, str]:
    """Bearer header of an admin (every operation is allowed, so the inputs decide the answers)."""
    return {"Authorization": f"Bearer {issue_token(session, username=make_user('fuzz-admin', 'admin'))}"}


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_keeps_to_its_document(case, app, admin):
    case.call_and_validate(app=app, headers=admin, checks=CHECKS)
