"""Escaping audit across every report format: a run whose tags, name, path, hparams and evidence are hostile
must come out as inert text in each one (no terminal escape sequences, no Markdown link or HTML markup)."""

import importlib.util
import re

import numpy as np
import pytest

from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import RENDERERS, ReportOptions, render
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
def reports(hostile_run):
    cache = {}

    def rendered(fmt, **options):
        key = (fmt, tuple(sorted(options.items())))
        if key not in cache:
            cache[key] = render(fmt, [hostile_run], [PROBLEM], ReportOptions(width=120, **options))
        return cache[key]

    return rendered


@pytest.mark.parametrize("quiet", [False, True])
def test_terminal_gets_no_escape_sequence_and_no_tag_split_across_lines(reports, quiet):
    text = reports("text", quiet=quiet)
    assert "\x1b" not in text and "\x07" not in text
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    for tag in (FENCE, TABLE_BREAK):
        assert tag not in text, "a tag's raw newline reached the terminal"


@pytest.mark.parametrize("fmt", formats("markdown"))
def test_markdown_renders_hostile_text_as_text(reports, fmt):
    text = reports(fmt)
    assert "<script>" not in text.lower() and "<img" not in text.lower()
    assert "](javascript:" not in text.lower()
    assert "\x1b" not in text


@pytest.mark.parametrize("fmt", formats("markdown"))
def test_markdown_fences_and_tables_stay_intact(reports, fmt):
    """A tag with a ``` fence must not open a code block, one with a newline and `|` must not add a table
    row or a column, and one with quotes or %% directives must not escape a Mermaid chart's strings."""
    lines = reports(fmt).splitlines()
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


@pytest.mark.parametrize("fmt", formats("html"))
def test_html_renders_hostile_text_as_text(reports, fmt):
    page = reports(fmt)
    assert "<script>alert" not in page.lower()
    assert "<img src=x" not in page.lower()
    assert not re.search(r"""href\s*=\s*["']?\s*javascript:""", page, flags=re.IGNORECASE)
    assert "\x1b" not in page and "\x07" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, "the hostile tag should be shown, escaped"


def test_every_format_is_audited():
    audited = {"text", "markdown", "html", "json"}  # json: tests/test_report_json.py
    assert set(RENDERERS) == audited
