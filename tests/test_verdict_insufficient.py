"""A run that holds too little to judge (one point, no loss at all) gets a verdict of its own in every report,
never "healthy": a log with nothing in it is not evidence of a healthy run."""

import json

import jsonschema
import pytest

from curvedoc.audit import audit
from curvedoc.cli import main
from curvedoc.diagnose import MIN_SHAPE_POINTS, diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import HEALTHY, INSUFFICIENT, render, verdict
from curvedoc.report.index import render_index
from curvedoc.report.json import schema


def run_of(**curves):
    builder = RunBuilder("runs/thin", "test")
    for tag, values in curves.items():
        builder.add(tag, range(len(values)), values)
    run = builder.build()
    diagnose_run(run)
    return run


@pytest.mark.parametrize("curves, reason", [
    ({"train/loss": [2.3]}, "only 1 point of train/loss"),
    ({"train/loss": [2.3, 2.1], "val/loss": [2.2]}, "only 2 points of train/loss"),
    ({"rollout/ep_len_mean": [10.0, 12.0, 15.0, 20.0]},
     "no loss, score or accuracy curve (logged: rollout/ep_len_mean)"),
    ({}, "no scalar curve at all"),
])
def test_too_little_to_judge_says_why(curves, reason):
    run = run_of(**curves)
    assert verdict(run) == INSUFFICIENT
    assert run.insufficient.startswith(reason)


def test_a_loss_with_a_shape_is_judged():
    run = run_of(**{"train/loss": [2.3, 1.9, 1.5, 1.2, 1.0, 0.9][:MIN_SHAPE_POINTS]})
    assert run.insufficient is None and verdict(run) == HEALTHY


def test_an_accuracy_logged_without_its_loss_is_judged():
    """A public poisoning experiment logs only its clean accuracy and attack success rate an epoch: an accuracy
    that moves (0.74 -> 0.93) is a curve to judge, and nothing wrong in it is healthy."""
    run = run_of(val_acc=[0.736, 0.866, 0.892, 0.914, 0.925, 0.931])
    assert run.insufficient is None and verdict(run) == HEALTHY


def test_a_finding_outranks_too_little():
    run = run_of(**{"train/loss": [2.3, float("nan")]})
    assert verdict(run) == "failing" and run.insufficient


def test_every_format_shows_the_verdict_and_why():
    runs = [run_of(**{"train/loss": [2.3]}), run_of(**{"train/loss": [2.3, 1.9, 1.5, 1.2]})]
    text = render("text", runs)
    assert "? not enough to judge: only 1 point of train/loss" in text
    assert "1 insufficient, 1 healthy" in text
    markdown = render("markdown", runs)
    assert "1 not enough to judge, 1 healthy" in markdown
    assert "| not enough to judge | only 1 point of train/loss" in markdown
    html = render("html", runs)
    assert '<span class="badge insufficient">not enough to judge</span>' in html
    assert "Not enough to judge: only 1 point of train/loss" in html
    document = json.loads(render("json", runs))
    jsonschema.validate(document, schema())
    assert [run["verdict"] for run in document["runs"]] == [INSUFFICIENT, HEALTHY]
    assert document["runs"][0]["insufficient"].startswith("only 1 point")
    assert document["runs"][1]["insufficient"] is None
    assert document["summary"]["insufficient"] == 1


def test_the_cli_and_the_audit_list_it(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "one_point.csv").write_text("step,loss\n0,2.30\n")
    (folder / "fine.csv").write_text("step,loss\n" + "".join(f"{i},{2.3 * 0.9 ** i:.4f}\n" for i in range(30)))
    assert main([str(folder), "-q"]) == 0
    quiet = capsys.readouterr().out.splitlines()
    assert any(line.startswith("INSUFFICIENT") and "one_point.csv" in line and "only 1 point" in line
               for line in quiet)
    result = audit([folder], jobs=1, cache=tmp_path / "cache")
    index = json.loads(render_index("json", result))
    verdicts = {run["name"]: (run["verdict"], run["insufficient"]) for run in index["runs"]}
    assert verdicts["one_point.csv"][0] == INSUFFICIENT and verdicts["one_point.csv"][1].startswith("only 1 point")
    assert index["totals"]["insufficient"] == 1
    assert "not enough to judge: only 1 point" in render_index("text", result)
