"""docs/rules.md is the rule registry's own Markdown reference, so it never drifts from the code."""

from pathlib import Path

from curvedoc.report import rules_doc

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def test_docs_rules_md_is_what_the_registry_generates():
    assert REFERENCE.read_text(encoding="utf-8") == rules_doc.render(fmt="markdown") + "\n", (
        "docs/rules.md is stale: run `curvedoc rules --format markdown > docs/rules.md`")


def test_each_rule_has_its_anchor_and_says_what_it_needs():
    text = REFERENCE.read_text(encoding="utf-8")
    assert f'<a id="{rules_doc.anchor("CD402")}"></a>' in text
    assert "Judges only runs that log one of: val_loss, test_loss" in text
