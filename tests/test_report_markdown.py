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
from curvedoc.report.markdown import COMMENT_LIMIT, comment_length, md, mermaid_label, mermaid_number

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


def test_chart_keeps_the_spike_step_and_names_the_nan_step():
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
    categories = re.findall(r'"(\d+)"', re.search(r"x-axis .*", block).group())
    points = re.search(r"line \[(.*)\]", block).group(1).split(", ")
    assert len(categories) == len(points) <= 105
    assert str(spike) in categories and points[categories.index(str(spike))] == "40"
    assert all(int(step) < nan_from for step in categories)  # NaN cannot be drawn ...
    assert f"NaN from step {nan_from}" in text  # ... so the note says where it starts
    assert "CD101 at step 4500" in block  # the finding's step is in the chart title


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
        x_count = len(re.findall(r'"\d+"', re.search(r"x-axis .*", block).group()))
        assert x_count == len(re.search(r"line \[(.*)\]", block).group(1).split(", ")) <= 105


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
