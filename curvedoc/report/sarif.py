"""SARIF 2.1.0, the format code-scanning services read (GitHub's ``upload-sarif``, IDE viewers).

A finding is about a whole log file, not a line of it (a TensorBoard event file has no lines), so a result's
location names the file and has no region; the step goes into the message and the result's properties. The
rules come from the registry, so the help a viewer shows is what ``curvedoc rules CODE`` says.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from collections import Counter
from importlib import metadata
from pathlib import Path

from curvedoc import __version__
from curvedoc.report.github import log_file, message, relative
from curvedoc.report.json import summary, valid_text
from curvedoc.rules import all_rules, symptom_meaning

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
# The run's folder relative to the checkout and the rule code, not the first log file: a rerun writes a new event
# file (time and host in its name) and must keep its alerts. A rule that fires twice in a run (two curves) counts
# its findings after a colon, as GitHub's own primaryLocationLineHash does. Versioned so that a change of what is
# hashed can take a new key instead of re-opening every alert.
FINGERPRINT = "curvedocRunCode/v1"


def render(runs, problems=(), options=None) -> str:
    return json.dumps(document(runs, problems), indent=2, allow_nan=False)


def document(runs, problems=()) -> dict:
    runs = list(runs)
    rules = all_rules()
    index = {rule.code: position for position, rule in enumerate(rules)}
    driver = {"name": "curvedoc", "version": __version__, "semanticVersion": __version__,
              "rules": [rule_descriptor(rule) for rule in rules]}
    if uri := information_uri():
        driver["informationUri"] = uri
    return valid_text({
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": driver},
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [{"level": "error", "message": {"text": str(problem)}}
                                               for problem in problems],
            }],
            "results": [result for run in runs for result in run_results(run, index)],
            "properties": {"summary": summary(runs)},
        }],
    })


def information_uri() -> str | None:
    """The project's address as its package metadata declares it (``[project.urls]``), None when it declares none:
    an address made up here could point anywhere."""
    try:
        found = metadata.metadata("curvedoc")
    except metadata.PackageNotFoundError:
        return None
    urls = [entry.split(",", 1)[1].strip() for entry in found.get_all("Project-URL") or [] if "," in entry]
    return next(iter(urls), None) or found.get("Home-page")


def rule_descriptor(rule) -> dict:
    causes = "\n".join(f"- {cause}" for cause in rule.causes)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": symptom_meaning(rule.symptom)},
        "fullDescription": {"text": rule.description or symptom_meaning(rule.symptom)},
        "help": {
            "text": f"Likely causes:\n{causes}\n\nCheapest check: {rule.check}",
            "markdown": f"**Likely causes**\n\n{causes}\n\n**Cheapest check:** {rule.check}",
        },
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"symptom": rule.symptom, "scope": rule.scope, "tags": ["training-curves", rule.symptom]},
    }


def run_results(run, index) -> list[dict]:
    results = []
    run_key = relative(run.path)
    seen = Counter()
    for finding in run.findings:
        seen[finding.code] += 1
        properties = {"symptom": finding.symptom, "run": run_key, "curveTags": finding.tags,
                      "evidence": finding.evidence}
        if finding.step is not None:
            properties["step"] = finding.step
        if finding.step_range is not None:
            properties["stepRange"] = list(finding.step_range)
        result = {
            "ruleId": finding.code,
            "level": LEVELS[finding.severity],
            "message": {"text": message(finding)},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(log_file(run))}}}],
            "partialFingerprints": {FINGERPRINT: f"{digest(run_key, finding.code)}:{seen[finding.code]}"},
            "properties": properties,
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        results.append(result)
    return results


def digest(run_key: str, code: str) -> str:
    return hashlib.sha256(f"{run_key}\0{code}".encode("utf-8", "surrogatepass")).hexdigest()


def uri(path: str) -> str:
    """A URI reference for a path from ``relative()``: relative to the checkout, else a file: URI. Bytes of a file
    name that was not UTF-8 (surrogates here) are percent-encoded as they are."""
    if "://" in path:
        return path
    if Path(path).is_absolute():
        return Path(path).as_uri()
    return urllib.parse.quote(path, errors="surrogateescape")
