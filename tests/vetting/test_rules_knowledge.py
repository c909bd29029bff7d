"""The knowledge file and the rule registry agree: every rule has valid severity and both texts."""

from __future__ import annotations

from app.vetting.findings import Severity, load_rules
from app.vetting.rules._common import knowledge_version, load_knowledge
from tests.vetting.test_rules import REGISTRY_MODULES


def test_every_registry_rule_has_an_entry_and_every_entry_a_rule():
    knowledge = load_knowledge()
    rules = load_rules()
    assert set(knowledge["rules"]) <= set(rules)
    ours = {rule_id for rule_id, entry in rules.items() if entry.check.__module__ in REGISTRY_MODULES}
    assert len(ours) >= 20 and ours <= set(knowledge["rules"])


def test_entries_have_a_valid_severity_and_texts_in_both_languages():
    knowledge = load_knowledge()
    for rule_id, spec in knowledge["rules"].items():
        assert spec["severity"] in {s.value for s in Severity}, rule_id
        assert spec["message_zh"] and spec["message_en"], rule_id
        key = spec.get("verify")
        if key:
            assert knowledge["verify"][f"{key}_zh"] and knowledge["verify"][f"{key}_en"], rule_id
        else:
            assert spec["verify_zh"] and spec["verify_en"], rule_id
    for severity in knowledge["licence_status"]["severity"].values():
        assert severity in {s.value for s in Severity}
    for severity in knowledge["malformed_severity"].values():
        assert severity in {s.value for s in Severity}


def test_every_rule_names_its_red_flag_or_is_a_note():
    numbered = {entry.red_flag for entry in load_rules().values() if entry.red_flag}
    assert numbered >= {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13}


def test_version_names_the_edition_and_the_content():
    version = knowledge_version()
    assert version.startswith(f"v{load_knowledge()['version']}-") and len(version.split("-")[1]) == 8
