"""Rule registry and verdicts."""

from __future__ import annotations

from datetime import date

import pytest

from app.vetting import findings as f


def _finding(severity: f.Severity) -> f.Finding:
    return f.Finding("x", severity, "中文", "English")


def test_verdict_from_severities():
    assert f.verdict([]) == f.Verdict.passed
    assert f.verdict([_finding(f.Severity.info)]) == f.Verdict.passed
    assert f.verdict([_finding(f.Severity.info), _finding(f.Severity.warning)]) == f.Verdict.needs_review
    assert f.verdict([_finding(f.Severity.warning), _finding(f.Severity.blocker)]) == f.Verdict.failed


def test_duplicate_rule_id_raises(monkeypatch):
    monkeypatch.setattr(f, "RULES", {})
    f.rule("demo", title_zh="示例", title_en="demo")(lambda context: [])
    with pytest.raises(ValueError, match="registered twice"):
        f.rule("demo", title_zh="示例", title_en="demo")(lambda context: [])


def test_run_rules_orders_by_severity(monkeypatch):
    monkeypatch.setattr(f, "RULES", {})
    monkeypatch.setattr(f, "load_rules", lambda: f.RULES)
    f.rule("a", title_zh="甲", title_en="a")(lambda context: [_finding(f.Severity.info)])
    f.rule("b", title_zh="乙", title_en="b")(lambda context: [_finding(f.Severity.blocker)])
    context = f.RuleContext(provider=None, today=date(2026, 1, 1), knowledge={})
    assert [x.severity for x in f.run_rules(context)] == [f.Severity.blocker, f.Severity.info]
    assert [x.severity for x in f.run_rules(context, ["a"])] == [f.Severity.info]


def test_rule_titles_load_in_a_fresh_process():
    """A web process that never ran a check still shows rule titles, not ids."""
    import subprocess
    import sys

    code = "from app.web.credentials import rule_title; print(rule_title('licence.coverage', 'zh'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() not in ("", "licence.coverage")
