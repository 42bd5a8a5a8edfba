"""`--format github`: workflow-command annotations that the runner parses back into exactly the finding's text,
on the run's log file relative to the checkout, and that a log's own text can never turn into another command."""

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc.cli import main
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import render
from curvedoc.report.github import escape_data, escape_property, message

ROOT = Path(__file__).resolve().parent.parent
FAILING = "fixtures/corpus/nan_inf/fp16_overflow"
HEALTHY = "fixtures/tensorboard/pytorch/healthy"
# How the runner reads a line of a step's output as a command (actions/runner, ActionCommand.TryParseV2).
COMMAND = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<properties>[^:]*))?::(?P<data>.*)$")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, line
    properties = dict(item.split("=", 1) for item in (match["properties"] or "").split(",") if item)
    return match["name"], {key: unescape(value) for key, value in properties.items()}, unescape(match["data"])


def unescape(text: str) -> str:
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


@pytest.fixture
def in_checkout(monkeypatch):
    monkeypatch.chdir(ROOT)


def diagnosed(path):
    runs = curvedoc.diagnose(path)
    assert runs
    return runs


def test_each_finding_is_one_annotation_on_the_runs_log_file(in_checkout):
    runs = diagnosed(FAILING)
    lines = render("github", runs).splitlines()
    findings = [finding for run in runs for finding in run.findings]
    assert len(lines) == len(findings) + 1 and lines[-1] == "curvedoc: 1 run: 1 failing, 0 with warnings, 0 healthy"
    for line, finding in zip(lines[:-1], findings, strict=True):
        level, properties, text = parse(line)
        assert level == {"error": "error", "warning": "warning", "info": "notice"}[finding.severity]
        assert properties["file"] == Path(runs[0].meta.files[0]).as_posix()
        assert (ROOT / properties["file"]).is_file() and not Path(properties["file"]).is_absolute()
        assert properties["title"].startswith(f"{finding.code} ")
        assert text == message(finding)
        assert finding.title in text and finding.cheapest_check in text
    assert parse(lines[0])[1]["title"] == "CD101 nonfinite-loss"


def test_info_findings_are_notices_and_a_healthy_run_prints_no_annotation(in_checkout):
    notes = diagnosed("fixtures/corpus/overfitting/diabetes_mse_epochs")
    assert {finding.severity for finding in notes[0].findings} == {"warning", "info"}
    levels = [parse(line)[0] for line in render("github", notes).splitlines()[:-1]]
    assert sorted(levels) == ["notice", "warning"]
    assert render("github", diagnosed(HEALTHY)) == "curvedoc: 1 run: 0 failing, 0 with warnings, 1 healthy"
    assert render("github", []) == ""


def test_the_step_is_named_once():
    run = hostile_run()
    finding = run.findings[0]
    assert finding.step is not None and f"step {finding.step}" in finding.title
    assert message(finding) == f"{finding.title}. Cheapest check: {finding.cheapest_check}"
    untold = replace(finding, title="loss flat")
    assert message(untold).startswith(f"loss flat (step {finding.step}). ")
    assert message(replace(untold, title=f"loss flat at step {finding.step}0")).startswith(
        f"loss flat at step {finding.step}0 (step {finding.step}). ")


def test_files_outside_the_current_directory_keep_their_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = diagnosed(ROOT / FAILING)
    _, properties, _ = parse(render("github", runs).splitlines()[0])
    assert properties["file"] == Path(runs[0].meta.files[0]).as_posix() and Path(properties["file"]).is_absolute()


def test_escaping_follows_the_runner():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("runs/a:b,c%/log") == "runs/a%3Ab%2Cc%25/log"
    assert escape_data("%0A") == "%250A"  # a literal escape in a log stays literal
    assert escape_data("\x1b[31mred\tx") == "?[31mred?x"


def hostile_run():
    builder = RunBuilder("/runs/a,b:c", "test", name="evil")
    builder.add("loss\n::add-mask::secret\r\n::stop-commands::x %0A", np.arange(6), [2.3, 2.2, 2.1, np.nan, 1, 1])
    builder.add_file("/runs/a,b:c/log,1:2.csv")
    run = builder.build()
    diagnose_run(run)
    assert run.findings
    return run


def test_log_text_cannot_start_a_command_of_its_own():
    run = hostile_run()
    lines = render("github", [run], ["cannot read /x\n::error::forged"]).splitlines()
    assert len(lines) == len(run.findings) + 2
    for line in lines[:-1]:
        assert line.startswith(("::error file=", "::warning file=", "::notice file=", "::warning title="))
        assert "\x1b" not in line and "\r" not in line
    level, properties, text = parse(lines[0])
    assert properties == {"file": "/runs/a,b:c/log,1:2.csv", "title": "CD101 nonfinite-loss"}
    assert text == message(run.findings[0])
    assert "::add-mask::secret\r\n::stop-commands::x %0A" in text
    assert parse(lines[-2]) == ("warning", {"title": "curvedoc could not read"}, "cannot read /x\n::error::forged")


def test_cli_prints_annotations_and_exits_as_fail_on_says(in_checkout, capsys):
    assert main([FAILING, "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"::error file={FAILING}/events.out.tfevents.")
    assert main([FAILING, "--format", "github", "--fail-on", "never"]) == 0
    assert capsys.readouterr().out == out
    assert main([HEALTHY, "--format", "github"]) == 0
    assert "::" not in capsys.readouterr().out
