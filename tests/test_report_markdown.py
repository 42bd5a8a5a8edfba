"""The pull-request Markdown: escaping of everything from logs, Mermaid charts, the comment size limit, plots."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import ReportOptions, render
from curvedoc.report.markdown import (CHART_GRID_POINTS, COMMENT_LIMIT, chart_groups, comment_length, layered, md,
                                      mermaid_label, mermaid_number, resample, step_grid, step_marks, y_range)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HOSTILE_TAGS = [
    "<script>alert(1)</script>",
    "x](javascript:alert(1))",
    "loss ```\n# heading",
    "train/loss\n| injected | row |",
    "\x1b[31mred/loss",
]


def diverging_run(tag="train/loss", path="/runs/exp", n=120, nan_from=80, **builder_args):
    """A falling loss that turns NaN at ``nan_from``: CD101 fires with the tag in its evidence."""
    builder = RunBuilder(path, "test", **builder_args)
    values = 2.3 * np.exp(-np.arange(n) / 40) + 0.1
    values[nan_from:] = np.nan
    builder.add(tag, np.arange(n), values)
    builder.meta.n_classes = 10
    run = builder.build()
    run.set_roles({"train_loss": tag})  # a hostile name is no loss by its name: say so, like --role does
    diagnose_run(run)
    return run


def markdown(runs, problems=(), **options):
    return render("markdown", runs, problems, ReportOptions(**options))


def mermaid_blocks(text):
    return re.findall(r"```mermaid\n(.*?)```", text, flags=re.S)


def outside_mermaid(text):
    return re.sub(r"```mermaid\n.*?```", "", text, flags=re.S)


@pytest.mark.parametrize("tag", HOSTILE_TAGS)
def test_a_hostile_tag_renders_as_text(tag):
    run = diverging_run(tag, path=f"/runs/{tag}", name=tag)
    run.meta.hparams = {tag: tag}
    assert any(tag in item for f in run.findings for item in f.evidence)
    text = markdown([run], problems=[f"{tag}: unreadable"])
    prose = outside_mermaid(text)
    assert "<script" not in text and "](javascript" not in text and "\x1b" not in text
    assert "```" not in prose  # only our own mermaid fences open a code block
    for continued in tag.splitlines()[1:]:  # a newline from a log cannot start a heading or a table row
        assert not re.search("^" + re.escape(continued[:3]), prose, flags=re.M)
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert all(len(re.findall(r"(?<!\\)\|", row)) == 6 for row in table)  # every row keeps its 5 cells
    for block in mermaid_blocks(text):
        title, = re.findall(r'title "([^"\n]*)"$', block, flags=re.M)
        assert not set(title) & set("<>[]()`|\"\n\x1b")


def test_escaping_keeps_the_text_readable():
    assert md("<script>alert(1)</script>") == "&lt;script&gt;alert\\(1\\)&lt;/script&gt;"
    assert md("x](javascript:alert(1))") == "x\\]\\(javascript:alert\\(1\\)\\)"
    assert md("a|b\nc") == "a\\|b c"
    assert md("```") == "\\`\\`\\`"
    assert md("- not a list") == "\\- not a list"
    assert md("1. not a list") == "1\\. not a list"
    assert md("@someone") == "\\@someone"  # no mention pings from a log
    assert mermaid_label('loss "quoted" [x](y)') == "loss quoted x y"


def test_mermaid_numbers_are_plain_decimals():
    for value in (1e30, -3.5e-12, 2.302585092994, 0.0, 123456789.0):
        text = mermaid_number(value)
        assert re.fullmatch(r"-?\d+(\.\d+)?", text), text
        assert float(text) == pytest.approx(value, rel=1e-5, abs=1e-17)


def chart(block):
    """A chart's x range, y range and lines, each line at the grid steps Mermaid spreads it over."""
    x_low, x_high = map(int, re.search(r'x-axis "step" (-?\d+) --> (-?\d+)$', block, flags=re.M).groups())
    y_low, y_high = map(float, re.search(r'y-axis "[^"\n]*" (\S+) --> (\S+)$', block, flags=re.M).groups())
    lines = [np.array([float(value) for value in found.split(", ")])
             for found in re.findall(r"^    line \[(.*)\]$", block, flags=re.M)]
    palette = re.search(r'plotColorPalette: "([^"]*)"', block).group(1).split(", ")
    return (x_low, x_high), (y_low, y_high), lines, palette


def grid_of(x_range, line):
    return np.linspace(*x_range, len(line))


def test_chart_keeps_the_spike_step_and_draws_the_nan_steps_on_the_top_edge():
    n, spike, nan_from = 5000, 3217, 4500
    values = 2.3 * np.exp(-np.arange(n) / 800) + 0.1
    values[spike] = 40.0
    values[nan_from:] = np.nan
    builder = RunBuilder("/runs/long", "test")
    builder.add("train/loss", np.arange(n), values)
    run = builder.build()
    diagnose_run(run)
    text = markdown([run])
    block = mermaid_blocks(text)[0]
    x_range, (_, top), lines, palette = chart(block)
    marks, curve = lines[0], lines[-1]
    grid = grid_of(x_range, curve)
    assert x_range == (0, int(grid[-1])) and grid[-1] >= n - 1 and len(curve) <= CHART_GRID_POINTS
    assert np.array_equal(grid, np.round(grid))  # whole, evenly spaced steps
    at_spike = np.argmin(np.abs(grid - spike))
    assert curve[at_spike] == 40  # the spike survives resampling, at its own step
    finite = grid < nan_from - grid[1]
    finite[at_spike] = False
    assert (curve[grid >= nan_from] == top).all() and (curve[finite] < 3).all()
    assert f"NaN from step {nan_from}" in text and "drawn on the top edge" in text  # the legend says so
    assert "CD101 at step 4500" in block  # the finding's step is in the chart title ...
    assert marks[np.argmin(np.abs(grid - nan_from))] == top and palette[0] == "#dc2626"  # ... and a red spike


def test_exploded_values_get_a_log_axis():
    values = np.r_[np.linspace(2.3, 0.5, 60), np.logspace(1, 30, 20)]
    builder = RunBuilder("/runs/boom", "test")
    builder.add("train/loss", np.arange(len(values)), values)
    run = builder.build()
    diagnose_run(run)
    blocks = mermaid_blocks(markdown([run]))
    assert blocks and 'y-axis "log10 train/loss"' in blocks[0]


def test_a_healthy_run_is_one_table_row():
    run = curvedoc.diagnose(FIXTURES / "tensorboard/pytorch/healthy")[0]
    text = markdown([run])
    assert text.startswith("## curvedoc: 0 failing, 0 with warnings, 1 healthy (1 run)")
    assert text.endswith("/tensorboard/pytorch/healthy | tensorboard | healthy | none |\n")
    assert "###" not in text and "mermaid" not in text and "- [ ]" not in text


def test_a_failing_run_has_its_findings_checklist_and_chart():
    run = curvedoc.diagnose(FIXTURES / "tensorboard/pytorch/lr_too_high")[0]
    text = markdown([run])
    assert "| **FAILING** |" in text
    assert "**ERROR CD101** · nan\\_inf · step 68" in text
    assert "<details><summary>Likely causes</summary>" in text and "Cheapest check:" in text
    assert text.count("- [ ] ") == 3
    assert "NaN from step 68" in text and mermaid_blocks(text)


def test_long_lists_of_a_failing_run_say_how_many_were_left_out():
    run = curvedoc.diagnose(FIXTURES / "tensorboard/pytorch/lr_too_high")[0]
    run.warnings = [f"warning {i}" for i in range(23)]
    run.meta.hparams = {f"param_{i}": i for i in range(25)}
    text = markdown([run])
    assert "Reader warnings (23)" in text and "warning 19" in text and "warning 20" not in text
    assert "- … 3 more" in text and "- … 5 more" in text


@pytest.fixture(scope="module")
def corpus():
    return curvedoc.diagnose(FIXTURES / "corpus")


def test_the_whole_corpus_fits_one_comment_and_says_what_was_cut(corpus):
    labelled = len([key for key in json.loads((FIXTURES / "corpus" / "labels.json").read_text())
                    if not key.startswith("_")])
    assert len(corpus) == labelled
    text = markdown(corpus, corpus.problems)
    assert comment_length(text) < COMMENT_LIMIT
    assert "Shortened to fit GitHub's 65,536-character comment limit" in text
    assert sum(line.startswith("| ") for line in text.splitlines()) == 1 + labelled  # every run keeps its row
    assert text.count("- [ ] ") == 3  # the checklist once
    failing = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert "FAILING" in failing  # the worst runs come first
    for block in mermaid_blocks(text):
        _, (low, high), lines, palette = chart(block)
        assert len(lines) == len(palette)  # a colour for each line
        points = {len(line) for line in lines} - {2}  # the chance level is a line of two points
        assert len(points) == 1 and points.pop() <= CHART_GRID_POINTS  # every other line on one step grid
        assert all(low <= line.min() and line.max() <= high for line in lines)


def test_a_small_report_is_not_cut(corpus):
    few = [run for run in corpus if run.findings][:3]
    text = markdown(few)
    assert "Shortened" not in text and comment_length(text) < COMMENT_LIMIT


def test_thousands_of_runs_keep_the_worst_rows_within_the_limit():
    failing = diverging_run(path="/runs/broken")
    healthy = []
    for number in range(600):
        builder = RunBuilder(f"/runs/{'deep/' * 40}healthy-{number}", "test")
        builder.add("train/loss", [0, 1], [1.0, 0.5])
        healthy.append(builder.build())
    text = markdown(healthy + [failing], problems=[f"/runs/bad-{n}: not a log" for n in range(100)])
    assert comment_length(text) < COMMENT_LIMIT
    assert "healthiest runs" in text and "\n| 1 | [/runs/broken](#curvedoc-run-1)" in text
    assert "ERROR CD101" in text and "… 80 more" in text


def test_plots_are_written_and_linked_relative_to_the_report(tmp_path):
    run = curvedoc.diagnose(FIXTURES / "tensorboard/pytorch/lr_too_high")[0]
    output = tmp_path / "report" / "curvedoc.md"
    output.parent.mkdir()
    text = markdown([run], plots_dir=tmp_path / "plots", output=output)
    link = re.search(r"!\[[^\]]*\]\(([^)]+)\)", text).group(1)
    assert link.startswith("../plots/") and link.endswith(".png")
    assert (output.parent / link).resolve().read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = markdown([run], plots_dir=tmp_path / "to-stdout")
    assert re.search(r"\]\(" + re.escape((tmp_path / "to-stdout").as_posix()) + r"/001-", printed)


def test_y_range_includes_chance_and_keeps_a_flat_curve_at_chance_flat():
    chance = np.log(10)
    flat = chance * (1 + 0.02 * np.sin(np.arange(200)))  # noise within 2% of chance
    low, high = y_range(flat, [chance])
    assert low < flat.min() and high > flat.max() and low < chance < high
    assert (flat.max() - flat.min()) / (high - low) < 0.1  # drawn flat, not as a climb across the chart
    low, high = y_range([0.02, 0.03], [np.log(2)])  # a loss far below chance (a leak): chance still on the chart
    assert low < 0.02 and high > np.log(2)


def test_y_range_does_not_hide_a_17_percent_rise():
    rise = np.linspace(1.0, 1.17, 50)
    low, high = y_range(rise)
    assert low < 1.0 and high > 1.17 and 0.17 / (high - low) > 0.25


def test_uneven_steps_are_drawn_at_their_values_on_an_even_grid():
    steps = np.array([0, 1, 2, 3, 500, 1000])
    values = np.array([2.3, 2.2, 2.1, 2.0, 1.0, 0.5])
    grid = step_grid(0, 1000)
    assert len(grid) <= CHART_GRID_POINTS and grid[0] == 0 and grid[-1] >= 1000
    assert len(set(np.diff(grid))) == 1 and grid.dtype.kind == "i"  # whole, even spacing: one x-axis range
    drawn = resample(steps, values, grid)
    assert drawn[np.argmin(np.abs(grid - 500))] == 1.0 and drawn[-1] == 0.5
    assert drawn[np.argmin(np.abs(grid - 250))] == pytest.approx(1.5, abs=0.05)  # between points: interpolated


def test_the_x_axis_is_a_numeric_range_not_a_label_per_point(corpus):
    # A category list labels every point (a hundred overlapping labels); a numeric range lets Mermaid label
    # about ten round steps, placed by value.
    text = markdown([run for run in corpus if run.findings][:5])
    blocks = mermaid_blocks(text)
    assert blocks
    for block in blocks:
        assert re.search(r'^    x-axis "step" -?\d+ --> -?\d+$', block, flags=re.M), block


def test_resampling_keeps_a_one_point_spike_and_the_first_nan():
    steps = np.arange(10_000)
    values = np.full(10_000, 1.0)
    values[6_543] = 9.0
    values[8_000] = np.nan
    grid = step_grid(0, 9_999)
    drawn = resample(steps, values, grid)
    assert np.nanmax(drawn) == 9.0 and np.isnan(drawn[np.argmin(np.abs(grid - 8_000))])
    assert np.isfinite(drawn[grid > 8_100]).all()  # finite again after the one NaN


def test_step_marks_rise_at_the_finding_step_only():
    grid = step_grid(0, 790)
    marks = step_marks(grid, [53], -0.1, 1.9)
    assert marks[np.argmin(np.abs(grid - 53))] == 1.9
    assert np.count_nonzero(marks == 1.9) == 1 and np.count_nonzero(marks == -0.1) == len(grid) - 1


def overfitting_run(val_from=0):
    builder = RunBuilder("/runs/overfit", "test")
    steps = np.arange(400)
    builder.add("train/loss", steps, 2.3 * np.exp(-steps / 60) + 0.01)
    val_steps = steps[val_from::20]
    builder.add("val/loss", val_steps, 1.0 + ((val_steps - 100) / 150) ** 2)
    builder.meta.n_classes = 10
    run = builder.build()
    diagnose_run(run)
    return run


def test_train_and_validation_loss_share_one_chart_with_a_legend():
    run = overfitting_run()
    assert any(finding.symptom == "overfitting" for finding in run.findings)
    assert chart_groups(run)[0] == ["train/loss", "val/loss"]
    text = markdown([run])
    block = mermaid_blocks(text)[0]
    _, (low, high), lines, palette = chart(block)
    assert palette[:2] == ["#dc2626", "#6b7280"] and set(palette[2:]) == {"#2563eb", "#ea580c"}  # curves on top
    assert lines[1].tolist() == [pytest.approx(np.log(10), abs=1e-3)] * 2 and low < np.log(10) < high
    assert "_blue: train/loss · orange: val/loss" in text and "· grey: chance level ln 10 = 2.303 ·" in text
    assert 'title "train/loss, val/loss - CD501 at step' in block


def test_a_curve_logged_later_follows_the_other_under_it_until_its_first_point():
    grid = step_grid(0, 390)
    train, val = np.linspace(2.3, 0.1, len(grid)), np.full(len(grid), 1.5)
    first_val = 10
    (under, under_colour), (over, over_colour) = layered([train, val], [(0, len(grid) - 1), (first_val, len(grid) - 1)],
                                                         ["blue", "orange"])
    assert (under_colour, over_colour) == ("orange", "blue")  # the shorter-logged curve is drawn first, underneath
    assert np.array_equal(under[:first_val], train[:first_val]) and (under[first_val:] == 1.5).all()
    assert np.array_equal(over, train)
    # A last point one grid spacing short only rounds a step to the grid: no jump to the other curve there.
    lines = dict((colour, line) for line, colour in layered([train, val], [(0, len(grid) - 1), (0, len(grid) - 2)],
                                                            ["blue", "orange"]))
    assert np.array_equal(lines["orange"], val)
    text = markdown([overfitting_run(val_from=40)])
    assert "orange: val/loss (logged at steps 40–380)" in text
