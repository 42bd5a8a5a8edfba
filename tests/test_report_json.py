"""The JSON report's contract: strict JSON that the shipped JSON Schema accepts for every fixture, enums that
cannot drift from the code, and log text (tags, names, hparams) carried through as data, exactly."""

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run, diagnose_runs
from curvedoc.model import RunBuilder
from curvedoc.report import VERDICTS, render, verdict
from curvedoc.report.json import SCHEMA_VERSION, schema
from curvedoc.roles import Role
from curvedoc.rules import SEVERITIES, SYMPTOMS
from json_checks import assert_valid, strict_loads

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# fixtures/public holds labels only: its logs stay outside the repository
FAMILIES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in {"generate", "public"})
HOSTILE_TAGS = [
    "<script>alert(1)</script>",
    "x](javascript:alert(1))",
    "```\ntrain/loss\n```",
    "train/loss\n| a | b |",
    "\x1b[31mtrain/loss\x1b[0m",
    "verlust/überprüfung 损失 🔥",
    'quote"back\\slash\ttab',
]


@pytest.fixture(scope="module")
def validator():
    document_schema = schema()
    jsonschema.Draft202012Validator.check_schema(document_schema)
    return jsonschema.Draft202012Validator(document_schema)


@pytest.fixture(scope="module")
def fixture_runs():
    """Every fixture run read and diagnosed once: diagnosing the whole tree per family would double the time."""
    runs = curvedoc.load(FIXTURES)
    diagnose_runs(runs)
    return runs


def test_the_whole_fixture_tree_validates(validator, fixture_runs):
    document = strict_loads(render("json", fixture_runs, fixture_runs.problems))
    assert_valid(validator, document)
    assert document["schema_version"] == SCHEMA_VERSION and document["curvedoc_version"] == curvedoc.__version__
    assert document["summary"]["runs"] == len(fixture_runs) == len(document["runs"])
    assert document["problems"], "the tree holds broken files: their problems must be listed"


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_validates(validator, fixture_runs, family):
    folder = FIXTURES / family
    runs = [run for run in fixture_runs if Path(run.path).is_relative_to(folder)]
    problems = [problem for problem in fixture_runs.problems if str(folder) in problem]
    assert runs, f"no runs read under {family}"
    document = strict_loads(render("json", runs, problems))
    assert_valid(validator, document)
    assert [run["path"] for run in document["runs"]] == [run.path for run in runs]


def test_summary_counts_verdicts_and_runs_per_symptom(fixture_runs):
    corpus = [run for run in fixture_runs if Path(run.path).is_relative_to(FIXTURES / "corpus")]
    summary = json.loads(render("json", corpus))["summary"]
    assert summary["failing"] + summary["warnings"] + summary["healthy"] == summary["runs"] == len(corpus)
    assert summary["failing"] == sum(verdict(run) == "failing" for run in corpus)
    for symptom, count in summary["by_symptom"].items():
        assert count == sum(any(f.symptom == symptom for f in run.findings) for run in corpus)
    assert summary["by_symptom"]["nan_inf"] > 0


def test_schema_enums_are_the_codes_sets():
    defs = schema()["$defs"]
    assert set(defs["symptom"]["enum"]) == set(SYMPTOMS)
    assert set(defs["role"]["enum"]) == {role.value for role in Role}
    assert set(defs["severity"]["enum"]) == set(SEVERITIES)
    assert tuple(defs["verdict"]["enum"]) == VERDICTS


def test_the_schema_ships_inside_the_package():
    pyproject = (FIXTURES.parent / "pyproject.toml").read_text()
    assert '"report/*.json"' in pyproject.split("[tool.setuptools.package-data]")[1].split("\n[")[0]
    assert (Path(curvedoc.__file__).parent / "report" / "report.schema.json").is_file()


def test_the_schema_rejects_a_broken_document(validator, fixture_runs):
    document = json.loads(render("json", fixture_runs[:3]))
    document["runs"][0]["verdict"] = "fine"
    del document["summary"]["by_symptom"]
    assert len(list(validator.iter_errors(document))) == 2


def hostile_run():
    builder = RunBuilder("/runs/<b>evil</b>\n\x1b[2J", "test", name="run\x1b]0;pwned\x07 <img src=x>")
    for index, tag in enumerate(HOSTILE_TAGS):
        # Every curve turns NaN, so findings (whose evidence embeds the tag name) exist for each.
        builder.add(tag, np.arange(6), [2.3, 2.2, 2.1, np.nan, np.nan, np.inf + index])
    builder.meta.hparams = {"lr": float("nan"), "decay": float("-inf"), "<script>": "x](javascript:alert(1))",
                            "nested": {"values": [np.float32(1.5), np.int64(3), float("inf")]}, "obj": object}
    builder.meta.start_time = float("nan")
    run = builder.build()
    diagnose_run(run)
    return run


def test_untrusted_text_round_trips_exactly_and_stays_strict(validator):
    run = hostile_run()
    text = render("json", [run], ["problem with \x1b[31m<script>"])
    document = strict_loads(text)
    assert_valid(validator, document)
    (out,) = document["runs"]
    assert [series["tag"] for series in out["series"]] == run.tags == HOSTILE_TAGS
    assert out["name"] == run.name and out["path"] == run.path
    assert document["problems"] == ["problem with \x1b[31m<script>"]
    finding_tags = {tag for finding in out["findings"] for tag in finding["tags"]}
    assert finding_tags and finding_tags <= set(HOSTILE_TAGS)
    assert [f["evidence"] for f in out["findings"]] == [f.evidence for f in run.findings]
    assert out["meta"]["hparams"]["<script>"] == "x](javascript:alert(1))"
    assert out["meta"]["hparams"]["lr"] == "nan" and out["meta"]["hparams"]["decay"] == "-inf"
    assert out["meta"]["hparams"]["nested"]["values"] == [1.5, 3, "inf"]
    assert out["meta"]["start_time"] is None
    # json.dumps escapes control characters and quotes itself; the raw bytes never reach the output.
    assert "\x1b" not in text and "\x07" not in text and text.isascii()


def test_undecodable_file_names_become_valid_unicode(validator):
    builder = RunBuilder("/runs/caf\udce9", "test")
    builder.add("loss", np.arange(3), [1.0, 0.5, 0.25])
    builder.add_file("/runs/caf\udce9/log.csv")
    document = strict_loads(render("json", [builder.build()]))
    assert_valid(validator, document)
    assert document["runs"][0]["path"] == "/runs/caf\ufffd"
    assert document["runs"][0]["meta"]["files"] == ["/runs/caf\ufffd/log.csv"]


def test_an_empty_report_is_valid(validator):
    document = strict_loads(render("json", [], ["nothing readable in /x"]))
    assert_valid(validator, document)
    assert document["summary"] == {"runs": 0, "failing": 0, "warnings": 0, "insufficient": 0, "healthy": 0,
                                   "by_symptom": {}}
