"""benchmarks/ and scrapers/ import no Flask: their texts are message ids with values, the app translates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.messages import Message, message

ROOT = Path(__file__).resolve().parents[2]
IMPORT_ALL = """
import importlib, json, pkgutil, sys
package = sys.argv[1]
names = [package]
for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
    importlib.import_module(info.name)
    names.append(info.name)
loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("flask", "flask_babel"))
print(json.dumps({"modules": names, "loaded": loaded}))
"""


def imported_in_a_fresh_interpreter(package: str) -> dict[str, list[str]]:
    """Every module of `package` imported in a new Python; the modules and the Flask modules then loaded."""
    ran = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, package],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(ran.stdout)


def test_every_module_of_benchmarks_imports_without_flask():
    found = imported_in_a_fresh_interpreter("benchmarks")
    assert {"benchmarks.probes.iperf3", "benchmarks.suites", "benchmarks.messages"} <= set(found["modules"])
    assert found["loaded"] == []


def test_every_module_of_scrapers_imports_without_flask():
    found = imported_in_a_fresh_interpreter("scrapers")
    assert {"scrapers.addresses", "scrapers.footer", "scrapers.http"} <= set(found["modules"])
    assert found["loaded"] == []


def test_a_message_is_its_chinese_text_and_renders_nested_values_through_the_translator():
    reason = message("输出被截断")
    text = message("无法解析：%(reason)s（%(count)s 行）", reason=reason, count=3)
    assert str(text) == "无法解析：输出被截断（3 行）"
    assert str(message("100% 完成")) == "100% 完成"  # no values: no % formatting, as gettext
    english = {
        "输出被截断": "output cut short",
        "无法解析：%(reason)s（%(count)s 行）": "unreadable: %(reason)s (%(count)s lines)",
    }
    assert text.render(lambda msgid, **values: english[msgid] % values if values else english[msgid]) == (
        "unreadable: output cut short (3 lines)"
    )
    assert text == Message("无法解析：%(reason)s（%(count)s 行）", {"reason": reason, "count": 3})


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_app_shows_a_parser_message_in_the_readers_language(app, language):
    from flask_babel import force_locale

    from app.core.i18n import localized
    from benchmarks.probes import parse
    from benchmarks.sample import ParseError

    with app.test_request_context(), force_locale(language), pytest.raises(ParseError) as caught:
        parse("ping", "PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.\n")
    with app.test_request_context(), force_locale(language):
        shown = localized(caught.value.reason)
    if language == "zh":
        assert shown.startswith("没有 'packets transmitted' 统计行") and "（可读取：Linux iputils" in shown
    else:
        assert "packets transmitted" in shown and not any("\u4e00" <= char <= "\u9fff" for char in shown)
