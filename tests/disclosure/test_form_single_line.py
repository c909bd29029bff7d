"""The questionnaire refuses line breaks in single-line answers, next to the field; notes keep them."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from tests.disclosure import samples
from tests.disclosure.test_form import COMPLETE, error

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


@SQLITE_ONLY
@pytest.mark.parametrize(
    "field",
    ["identity.legal_name", "identity.registered_address", "datacenters.0.city", "offers.0.gpu_model"],
)
def test_a_line_break_in_a_single_line_answer_is_refused_at_the_field(app, field):
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        with app.app_context():
            invitation, token = samples.invite(session)
        typed = {**COMPLETE, field: "示例\r\n第二行", "topology.notes": "第一行\r\n第二行"}
        typed["action"] = "submit"
        html = app.test_client().post(f"/d/{token}", data=typed).get_data(as_text=True)
        assert "须为单行文本" in error(html, field), html[:2000]
        assert "未能提交：有 1 处需要修改" in html  # the multi-line notes are fine
        session.refresh(invitation)
        assert invitation.status == "draft"
