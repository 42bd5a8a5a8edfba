"""The terminal report: healthy runs in one line, failing runs with their curves as sparklines and the finding's
step marked under them, never wider than the terminal, colour only when asked, and no escape sequence from a log."""

import re
from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import ReportOptions, render
from curvedoc.report.terminal import NAN_MARK, STEP_MARK, cells, cut, sparkline

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HEALTHY = FIXTURES / "tensorboard" / "pytorch" / "healthy"
NAN_RUN = FIXTURES / "tensorboard" / "pytorch" / "lr_too_high"
OVERFITTING = FIXTURES / "corpus" / "overfitting"
OUR_SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def runs():
    return {"healthy": curvedoc.diagnose(HEALTHY), "nan": curvedoc.diagnose(NAN_RUN),
            "overfitting": curvedoc.diagnose(OVERFITTING)}


def text(runs, problems=(), **options) -> str:
    return render("text", runs, problems, ReportOptions(**options))


def test_a_healthy_run_takes_one_line(runs):
    # not cut to a terminal's width, so the test holds wherever the checkout lives
    report = text(runs["healthy"], cut_to_width=False)
    assert "\n" not in report
    assert report.startswith("✓ healthy") and "tensorboard" in report and "1,044 points" in report


def test_a_failing_run_shows_its_curve_with_the_step_of_the_nan_marked(runs):
    lines = text(runs["nan"], width=100).splitlines()
    assert lines[0].startswith("✗ FAILING (1 error, 1 warning)")
    loss = next(index for index, line in enumerate(lines) if line.lstrip().startswith("train/loss "))
    spark, markers = lines[loss], lines[loss + 1]
    assert "CD101 step 68" in markers and "CD201 step 0" in markers
    # The NaN starts at step 68: the caret for CD101 sits under the first × of the sparkline.
    first_nan = spark.index(NAN_MARK)
    assert markers[first_nan] == STEP_MARK and STEP_MARK not in markers[first_nan + 1:markers.index("CD101")]
    assert spark[:first_nan].rstrip().endswith(tuple("▁▂▃▄▅▆▇█"))


def test_the_curves_drawn_fill_the_axis_they_span_whatever_the_run_logs_beside_them():
    """Keras's TensorBoard callback logs epoch curves at steps 0..19 and evaluations counted in iterations up to
    3,040: drawn on the run's whole axis, the epoch curves filled its first cell and nothing else."""
    builder = RunBuilder("/synthetic/keras", "tensorboard")
    epochs = np.arange(20)
    builder.add("train/epoch_loss", epochs, 0.3 * np.exp(-epochs / 3) + 0.001)
    builder.add("validation/epoch_loss", epochs, np.r_[0.74, 0.2, 0.08, 0.078, np.linspace(0.08, 0.115, 16)])
    builder.add("validation/evaluation_loss_vs_iterations", epochs * 160, np.linspace(0.7, 0.1, 20))
    run = builder.build()
    diagnose_run(run)
    lines = text([run], width=100).splitlines()
    train = next(line for line in lines if line.lstrip().startswith("train/epoch_loss "))
    assert len(re.findall("[▁▂▃▄▅▆▇█]", train)) >= 15


def test_a_finding_over_a_step_range_is_underlined_from_its_step_on(runs):
    (run,) = [run for run in runs["overfitting"] if run.path.endswith("digits_long_3k")]
    lines = text([run], width=100).splitlines()
    val = next(index for index, line in enumerate(lines) if line.lstrip().startswith("val/loss "))
    markers = lines[val + 1]
    assert "CD501 step 859" in markers
    assert re.search(r"\^~{10,}  CD501", markers), "the best step, then the rise after it"


def test_each_finding_has_severity_code_step_evidence_and_check(runs):
    report = text(runs["nan"])
    assert "ERROR   CD101 nan_inf  step 68" in report and "becomes NaN at step 68" in report
    assert "· train/loss = nan at step 68 (first non-finite value)" in report
    assert "check: print the loss every step" in report
    assert "tags: train/loss=train_loss" in report


def test_the_checklist_comes_once_with_the_chance_level(runs):
    report = text(runs["nan"] + runs["overfitting"] + runs["healthy"])
    assert report.count("First response") == 1 and report.count("Overfit one batch") == 1
    assert "−log(1/10) = 2.303" in report
    assert text(runs["healthy"]).count("First response") == 0


@pytest.mark.parametrize("width", [40, 60, 80, 133])
def test_no_line_is_wider_than_the_terminal(runs, width):
    everything = runs["nan"] + runs["overfitting"] + runs["healthy"]
    for color in (False, True):
        report = text(everything, ["some/very/long/path/" * 8 + "broken.csv: not a CSV file"], width=width,
                      color=color)
        widest = max(cells(OUR_SGR.sub("", line)) for line in report.splitlines())
        assert widest <= width


def test_evidence_is_wrapped_not_cut(runs):
    report = text(runs["nan"], width=60)
    check = "drop the learning rate 10× and rerun to that step"
    assert " ".join(report.split()).count(check) == 1


def test_colour_only_when_asked(runs):
    everything = runs["nan"] + runs["healthy"]
    assert "\x1b" not in text(everything, color=False)
    coloured = text(everything, color=True)
    assert "\x1b[1;31m✗ FAILING" in coloured and "\x1b[32m✓ healthy" in coloured
    assert "\x1b[1;31mERROR" in coloured and "\x1b[1;33mWARNING" in coloured
    assert OUR_SGR.sub("", coloured) == text(everything, color=False)


def test_quiet_prints_one_verdict_line_per_run(runs):
    everything = runs["nan"] + runs["healthy"]
    lines = text(everything, ["x.csv: empty file"], quiet=True, cut_to_width=False).splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("FAILING") and "CD101 nan_inf" in lines[0]
    assert lines[1].startswith("HEALTHY") and lines[2] == "warning: unreadable: x.csv: empty file"


def test_unreadable_sources_are_listed_as_warnings(runs):
    report = text(runs["healthy"], ["logs/a.csv: header only", "logs/b\x1b[2J.csv: empty file"])
    assert "warning: unreadable: logs/a.csv: header only" in report
    assert "logs/b?[2J.csv" in report and "\x1b" not in report
    long_problem = "logs/" + "deep/" * 30 + "c.csv: not a CSV file"
    wrapped = text([], [long_problem], width=60)
    assert "…" not in wrapped and "".join(wrapped.split()).endswith("c.csv:notaCSVfile")


def hostile_run():
    tags = ["\x1b[31mtrain/loss\x1b[0m", "val/loss\n| a | b |", "<script>alert(1)</script>/acc"]
    builder = RunBuilder("/runs/\x1b]0;title\x07x", "csv", name="evil\nname")
    steps = np.arange(40)
    for tag in tags:
        values = np.linspace(2.3, 0.5, 40)
        values[30:] = np.nan
        builder.add(tag, steps, values)
    run = builder.build()
    diagnose_run(run)
    return run


@pytest.mark.parametrize("color", [False, True])
def test_text_from_logs_cannot_reach_the_terminal_as_control_codes(color):
    run = hostile_run()
    assert run.findings, "the NaN must give the run a finding, so its tags are shown"
    report = text([run], color=color, width=200)
    plain = OUR_SGR.sub("", report)
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", plain)
    assert "?[31mtrain/loss?[0m" in plain and "val/loss?| a | b |" in plain
    assert "/runs/?]0;title?x (evil?name)" in plain
    for line in plain.splitlines():
        assert not line.startswith("| a |"), "a tag's newline started a line of its own"


def test_sparkline_marks_nan_and_inf_and_leaves_gaps_where_nothing_was_logged():
    line = sparkline(np.array([0, 1, 2, 9]), np.array([1.0, np.nan, np.inf, 0.0]), (0, 9), 10)
    assert line == "█×!      ▁"


def test_sparkline_keeps_a_one_step_spike_in_a_long_curve():
    steps = np.arange(100_000)
    values = np.ones(100_000)
    values[61_234] = 50.0
    line = sparkline(steps, values, (0, 99_999), 40)
    assert line.count("█") == 1 and line.index("█") == 24
    values[70_000] = np.nan
    assert NAN_MARK in sparkline(steps, values, (0, 99_999), 40)


def test_cut_ends_in_an_ellipsis_and_counts_wide_characters():
    assert cut("abcdef", 4) == "abc…" and cut("abc", 4) == "abc"
    assert cells("日本") == 4 and cells(cut("日本語テキスト", 7)) <= 7


def test_a_file_or_pipe_keeps_whole_lines_and_a_terminal_cuts_them(runs):
    assert max(len(line) for line in text(runs["healthy"], width=40).splitlines()) <= 40
    assert "1,044 points" in text(runs["healthy"], width=40, cut_to_width=False)
