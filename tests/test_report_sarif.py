"""`--format sarif`: documents the official SARIF 2.1.0 schema accepts, rules that are the registry's, results on
the run's log file relative to the checkout, and fingerprints that survive a rerun and a checkout elsewhere."""

import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import curvedoc
from curvedoc.cli import main
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import render
from curvedoc.report.github import message
from curvedoc.report.sarif import FINGERPRINT, information_uri
from curvedoc.rules import all_rules
from json_checks import assert_valid, strict_loads

ROOT = Path(__file__).resolve().parent.parent
# The OASIS schema, errata01 (draft-04), from github.com/oasis-tcs/sarif-spec at commit
# e0583813964ec43cea53b6b531b402866095ed1f, file sarif-2.1/schema/sarif-schema-2.1.0.json, byte for byte.
SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
CORPUS = "fixtures/corpus"
FAILING = "fixtures/corpus/nan_inf/fp16_overflow"
TWICE = "fixtures/corpus/train_negative/nll_on_logits_iris/history.csv"  # CD102 on two curves


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


@pytest.fixture
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_the_corpus_validates_with_one_result_per_finding(validator, in_checkout):
    runs = curvedoc.diagnose(CORPUS)
    document = strict_loads(render("sarif", runs))
    assert_valid(validator, document)
    assert document["version"] == "2.1.0"
    (sarif_run,) = document["runs"]
    results = sarif_run["results"]
    findings = [(run, finding) for run in runs for finding in run.findings]
    assert len(results) == len(findings)
    rules = sarif_run["tool"]["driver"]["rules"]
    for result, (run, finding) in zip(results, findings, strict=True):
        assert result["ruleId"] == finding.code
        if "ruleIndex" in result:
            assert rules[result["ruleIndex"]]["id"] == finding.code
        else:
            assert finding.code not in {rule.code for rule in all_rules()}
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[finding.severity]
        assert result["message"]["text"] == message(finding)
        (location,) = result["locations"]
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == Path(run.meta.files[0]).as_posix() and (ROOT / uri).is_file()
        assert result["properties"].get("step") == finding.step
        assert result["properties"]["symptom"] == finding.symptom
    fingerprints = [result["partialFingerprints"][FINGERPRINT] for result in results]
    assert len(set(fingerprints)) == len(fingerprints)
    assert sarif_run["properties"]["summary"]["runs"] == len(runs)


def test_rules_are_the_registry(in_checkout):
    driver = json.loads(render("sarif", []))["runs"][0]["tool"]["driver"]
    assert driver["name"] == "curvedoc" and driver["version"] == curvedoc.__version__
    assert driver.get("informationUri") == information_uri()
    registry = all_rules()
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in registry]
    for descriptor, rule in zip(driver["rules"], registry, strict=True):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] and descriptor["fullDescription"]["text"]
        assert rule.check in descriptor["help"]["text"] and all(c in descriptor["help"]["text"] for c in rule.causes)
        assert descriptor["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning",
                                                               "info": "note"}[rule.severity]


def test_fingerprints_are_per_run_and_code_and_survive_a_checkout_elsewhere(tmp_path, monkeypatch):
    def fingerprints(checkout):
        shutil.copytree(ROOT / Path(TWICE).parent, checkout / Path(TWICE).parent)
        monkeypatch.chdir(checkout)
        document = json.loads(render("sarif", curvedoc.diagnose(TWICE)))
        return [(r["ruleId"], r["partialFingerprints"][FINGERPRINT]) for r in document["runs"][0]["results"]]

    here, there = fingerprints(tmp_path / "a"), fingerprints(tmp_path / "b" / "deeper")
    assert here == there
    twice = [value for code, value in here if code == "CD102"]
    assert len(twice) == 2 and twice[0].split(":")[0] == twice[1].split(":")[0]
    assert [value.split(":")[1] for value in twice] == ["1", "2"]


def test_read_problems_are_tool_notifications(validator, in_checkout, capsys):
    assert main([FAILING, "fixtures/does-not-exist", "--format", "sarif"]) == 2
    document = strict_loads(capsys.readouterr().out)
    assert_valid(validator, document)
    (invocation,) = document["runs"][0]["invocations"]
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error" and "does-not-exist" in notification["message"]["text"]
    assert document["runs"][0]["results"]


def test_the_sarif_suffix_picks_the_format(in_checkout, tmp_path):
    assert main([FAILING, "-o", str(tmp_path / "curvedoc.sarif")]) == 1
    assert json.loads((tmp_path / "curvedoc.sarif").read_text())["version"] == "2.1.0"


def test_hostile_names_stay_valid_sarif(validator):
    builder = RunBuilder("/runs/caf\udce9 <b>,x", "test", name="run\x1b]0;pwned\x07")
    builder.add("loss\n\x1b[31m", np.arange(6), [2.3, 2.2, 2.1, np.nan, 1, 1])
    builder.add_file("/runs/caf\udce9 <b>,x/log 1.csv")
    run = builder.build()
    diagnose_run(run)
    text = render("sarif", [run], ["problem with \x1b[31m<script>"])
    document = strict_loads(text)
    assert_valid(validator, document)
    result = document["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "file:///runs/caf%E9%20%3Cb%3E%2Cx/log%201.csv"
    assert result["properties"]["curveTags"] == ["loss\n\x1b[31m"]
    assert "\x1b" not in text and text.isascii()
