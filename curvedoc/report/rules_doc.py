"""The rule reference, generated from the registry: `curvedoc rules` lists, `curvedoc rules CODE` explains."""

from __future__ import annotations

import json

from curvedoc.errors import CurvedocError
from curvedoc.rules import ARCHIVE, Rule, all_rules, symptom_meaning


def rule_to_dict(rule: Rule) -> dict:
    return {
        "code": rule.code, "name": rule.name, "scope": rule.scope, "symptom": rule.symptom, "severity": rule.severity,
        "description": rule.description, "causes": list(rule.causes), "cheapest_check": rule.check,
        "needs_n_classes": rule.needs_n_classes,
        "thresholds": {name: {"default": t.default, "meaning": t.meaning} for name, t in rule.thresholds.items()},
    }


def render(code: str | None = None, fmt: str = "text") -> str:
    rules = all_rules()
    if code:
        rules = [rule for rule in rules if code in (rule.code, rule.symptom, rule.name)]
        if not rules:
            raise CurvedocError(None, f"no rule {code!r}; `curvedoc rules` lists them")
    if fmt == "json":
        return json.dumps([rule_to_dict(rule) for rule in rules], indent=2)
    if not code:
        width = max(len(rule.name) for rule in rules)
        return "\n".join(
            f"{rule.code}  {rule.name.ljust(width)}  {rule.severity:<7}  {rule.symptom}: "
            f"{symptom_meaning(rule.symptom)}{' (across runs, `curvedoc audit`)' if rule.scope == ARCHIVE else ''}"
            for rule in rules
        )
    return "\n\n".join(_explain(rule) for rule in rules)


def _explain(rule: Rule) -> str:
    lines = [f"{rule.code} {rule.name} ({rule.severity}) — symptom `{rule.symptom}`"]
    if rule.scope == ARCHIVE:
        lines.append("Compares runs: checked by `curvedoc audit` over an archive, not on a single run.")
    lines += ["", rule.description, ""]
    lines.append("Likely causes:")
    lines.extend(f"  - {cause}" for cause in rule.causes)
    lines += ["", f"Cheapest check: {rule.check}"]
    if rule.needs_n_classes:
        lines.append("Needs the number of classes (from the run's config, --num-classes or [tool.curvedoc]).")
    if rule.thresholds:
        lines += ["", f"Thresholds (override in [tool.curvedoc.thresholds.{rule.code}]):"]
        lines.extend(f"  {name} = {t.default:g}  — {t.meaning}" for name, t in rule.thresholds.items())
    lines += ["", f"Switch off with: disable = [\"{rule.code}\"] in [tool.curvedoc]"]
    return "\n".join(lines)
