"""Escaping audit across every report format, per run and for the audit's index: a run whose tags, name, path,
hparams and evidence are hostile, and an audit whose cross-run findings, report links and unreadable sources are,
must come out as inert text in each one (no terminal escape sequences, no Markdown link or HTML markup, no
spreadsheet formula)."""

import csv
import importlib.util
import io
import json
import re

import numpy as np
import pytest

from curvedoc.audit.summary import AuditResult, CrossRunFinding, Unreadable, summarize
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import RENDERERS, ReportOptions, render
from curvedoc.report.index import INDEX_RENDERERS, IndexOptions, render_index
from curvedoc.report.index.csv import FORMULA_STARTS
from curvedoc.rules import Finding

SCRIPT = "<script>alert(1)</script>"
LINK = "x](javascript:alert(1))"
FENCE = "```\ntrain/loss\n```"
TABLE_BREAK = "val/loss\n| a | b |"
ANSI = "\x1b[31mtrain/acc\x1b[0m"
MERMAID = '%%{init: {"theme": "dark"}}%% lr"]\nx-axis "pwned'
HOSTILE = [SCRIPT, LINK, FENCE, TABLE_BREAK, ANSI, MERMAID]
PROBLEM = f"broken.csv: {SCRIPT} {LINK} \x1b[2J"


def renderer_exists(fmt: str) -> bool:
    return importlib.util.find_spec(RENDERERS[fmt]) is not None


def formats(*names):
    """Renderers still being written are expected to fail rather than error the suite."""
    return [pytest.param(fmt, marks=pytest.mark.xfail(not renderer_exists(fmt), reason=f"no {fmt} renderer yet",
                                                       strict=False)) for fmt in names]


@pytest.fixture(scope="module")
def hostile_run():
    builder = RunBuilder(f"/runs/{SCRIPT}/{LINK}\n\x1b]0;title\x07", "test", name=f"{LINK} {ANSI} {SCRIPT}")
    for index, tag in enumerate(HOSTILE):
        builder.add(tag, np.arange(8), [2.3, 2.2, 2.1, 2.0, np.nan, np.nan, np.inf, float(index)])
    builder.meta.hparams = {SCRIPT: LINK, "lr": float("nan"), "note": f"{FENCE} {ANSI}"}
    run = builder.build()
    diagnose_run(run)
    # A finding per hostile tag, its evidence quoting the tag the way rules do, so every renderer meets each one
    # in a title, a tag list and an evidence line whichever findings the rules happen to raise.
    run.findings += [
        Finding("CD101", "nan_inf", "warning", f"{tag} becomes NaN at step 4", [tag], step=4, step_range=(4, 6),
                evidence=[f"{tag} = nan at step 4"], causes=[f"cause quoting {tag}"], cheapest_check=f"plot {tag}")
        for tag in HOSTILE
    ]
    return run


@pytest.fixture(scope="module")
def hostile_audit(hostile_run):
    """The hostile run in an audit whose every other piece of text is hostile too: its own report's file name,
    a cross-run finding (code, symptom, title, runs, hyperparameters, evidence, causes, check) and an unreadable
    source with its reason."""
    summary = summarize(hostile_run)
    summary.reports = {"html": f'runs/"><{SCRIPT}.html', "markdown": f"runs/{LINK}.md"}
    cross_run = CrossRunFinding(
        f"CD9 {SCRIPT}", LINK, "error", f"@octocat {SCRIPT} {MERMAID}", [summary.path, f"/runs/{LINK}\n{ANSI}"],
        [SCRIPT, LINK, FENCE, TABLE_BREAK, ANSI], evidence=HOSTILE, causes=HOSTILE, cheapest_check=f"{FENCE} {ANSI}")
    odd_severity = CrossRunFinding("CD9", "x", SCRIPT, "title", [summary.path], ["seed"])
    unreadable = [Unreadable(f"/runs/{SCRIPT}\n\x1b]0;title\x07", PROBLEM), Unreadable("=cmd|' /C calc'!A0", ANSI)]
    return AuditResult([f"/runs/{SCRIPT}"], [summary], [cross_run, odd_severity], unreadable)


@pytest.fixture(scope="module")
def reports(hostile_run, hostile_audit):
    """``reports(kind, fmt, **options)``: the per-run report (kind "run") or the audit's index ("index")."""
    cache = {}

    def rendered(kind, fmt, **options):
        key = (kind, fmt, tuple(sorted(options.items())))
        if key not in cache:
            if kind == "run":
                cache[key] = render(fmt, [hostile_run], [PROBLEM], ReportOptions(width=120, **options))
            else:
                cache[key] = render_index(fmt, hostile_audit, IndexOptions(width=120, **options))
        return cache[key]

    return rendered


KINDS = ["run", "index"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("quiet", [False, True])
def test_terminal_gets_no_escape_sequence_and_no_tag_split_across_lines(reports, kind, quiet):
    text = reports(kind, "text", quiet=quiet)
    assert "\x1b" not in text and "\x07" not in text
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    for tag in (FENCE, TABLE_BREAK):
        assert tag not in text, "a tag's raw newline reached the terminal"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", formats("markdown"))
def test_markdown_renders_hostile_text_as_text(reports, kind, fmt):
    text = reports(kind, fmt)
    assert "<script>" not in text.lower() and "<img" not in text.lower()
    assert "](javascript:" not in text.lower()
    assert "\x1b" not in text
    assert not re.search(r"(?<!\\)@", text), "a log could mention (ping) someone"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", formats("markdown"))
def test_markdown_fences_and_tables_stay_intact(reports, kind, fmt):
    """A tag with a ``` fence must not open a code block, one with a newline and `|` must not add a table
    row or a column, and one with quotes or %% directives must not escape a Mermaid chart's strings."""
    lines = reports(kind, fmt).splitlines()
    inside_fence = False
    for line in lines:
        if line.lstrip().startswith("```"):
            assert inside_fence or line.strip() != "```", "a bare ``` opened a code block"
            inside_fence = not inside_fence
        elif inside_fence:
            assert "%%" not in line and line.count('"') % 2 == 0, f"log text broke out of a chart string: {line!r}"
    assert not inside_fence, "a code block was left open"
    columns_of_table, previous_was_row = None, False
    for line in lines:
        is_row = line.startswith("|")
        if is_row:
            columns = len(re.findall(r"(?<!\\)\|", line))
            if not previous_was_row:
                columns_of_table = columns
            assert columns == columns_of_table, f"table row with a different column count: {line!r}"
        previous_was_row = is_row


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", formats("html"))
def test_html_renders_hostile_text_as_text(reports, kind, fmt):
    page = reports(kind, fmt)
    assert "<script>alert" not in page.lower()
    assert "<img src=x" not in page.lower()
    assert not re.search(r"""href\s*=\s*["']?\s*javascript:""", page, flags=re.IGNORECASE)
    assert "\x1b" not in page and "\x07" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, "the hostile tag should be shown, escaped"


def test_the_index_json_carries_log_text_as_exact_data(reports, hostile_run):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    document = json.loads(reports("index", "json"), parse_constant=refuse)
    assert document["runs"][0]["name"] == hostile_run.name and document["runs"][0]["path"] == hostile_run.path
    assert document["cross_run"][0]["hparams"] == [SCRIPT, LINK, FENCE, TABLE_BREAK, ANSI]
    assert document["unreadable"][0]["reason"] == PROBLEM
    assert "javascript:" not in document["runs"][0]["reports"]["markdown"], "report links are percent-encoded"


def test_the_index_csv_holds_no_formula_and_no_control_character(reports):
    text = reports("index", "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 2, "a newline from a log must not add a row"
    for cell in rows[1]:
        assert not cell.startswith(FORMULA_STARTS), cell
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", cell), cell
    assert "javascript:" not in rows[1][-1]


def test_every_format_is_audited():
    # json: tests/test_report_json.py; github: tests/test_report_github.py; sarif: tests/test_report_sarif.py
    audited = {"text", "markdown", "html", "json", "github", "sarif"}
    assert set(RENDERERS) == audited


def test_every_index_format_is_audited():
    """Each index format is checked above: text, markdown and html for inert text, json for exact data, csv for
    formulas; a format added to the registry must be added here with its checks."""
    assert set(INDEX_RENDERERS) == {"text", "markdown", "html", "json", "csv"}
