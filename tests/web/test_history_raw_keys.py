"""Audit history in words, never keys (issue 27 item 11): the answers filled with a default, an export's
verdict."""

from __future__ import annotations

from types import SimpleNamespace

from flask_babel import force_locale

from app.web import history


def _shown(app, entity: str, changes: dict, language: str = "zh") -> list[tuple[str, str, str]]:
    with app.test_request_context("/"), force_locale(language):
        entry = SimpleNamespace(entity=entity, changes=changes, action="update", entity_id=1)
        return [
            (str(c.label), history._shown(c.before), history._shown(c.after)) for c in history.describe(entry)
        ]


def test_answers_filled_with_a_default_are_named_by_their_questions(app):
    changes = {"answers": [{"derived": []}, {"derived": ["checkpoint.acceptable_stall_seconds"]}]}
    assert _shown(app, "procurement_case", changes) == [
        ("按默认值填写的回答", "—", "检查点 · 可接受的停顿（秒）")
    ]
    ((label, _before, after),) = _shown(app, "procurement_case", changes, "en")
    assert "checkpoint." not in after and "acceptable_stall_seconds" not in after
    assert label == "Answers filled in with a default"


def test_an_exports_verdict_is_a_word(app):
    assert _shown(app, "export_record", {"verdict": [None, "fail"]}) == [("结论", "—", "不通过")]
    assert _shown(app, "export_record", {"verdict": ["pass", "unchecked"]}, "en")[0][1:] == (
        "Pass",
        "Not verified",
    )
