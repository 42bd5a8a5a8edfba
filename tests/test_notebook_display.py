"""What a notebook shows for a diagnosed run or a list of runs (``_repr_html_``): the HTML report's run sections
with their plots, styled only inside their own block, log text escaped, and the report loaded only when shown."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_report_html import NAN_RUNS, Page, hostile_run

import curvedoc
from curvedoc.readers import RunList
from curvedoc.report.html import NOTEBOOK_SCOPE

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


@pytest.fixture(scope="module")
def failing():
    runs = curvedoc.diagnose(NAN_RUNS[0])
    assert len(runs) == 1 and any(f.severity == "error" for f in runs[0].findings)
    return runs


def test_a_failing_run_shows_its_verdict_findings_and_plots(failing):
    run = failing[0]
    shown = run._repr_html_()
    page = Page(shown)
    assert '<span class="badge failing">failing</span>' in shown
    for finding in run.findings:
        assert f">{finding.code}</a> · " in shown
    assert [attrs for attrs in page.of("svg") if attrs.get("class") == "plot"], "plots are inline SVG"
    assert failing._repr_html_().count("<section") == 1, "diagnose returns a RunList, shown the same way"


def test_the_report_styles_stay_inside_their_block(failing):
    shown = failing[0]._repr_html_()
    assert shown.startswith(f'<div class="{NOTEBOOK_SCOPE}"><style>') and shown.endswith("</div>")
    style = re.search(r"<style>(.*?)</style>", shown, flags=re.S)[1]
    selectors = [selector.strip() for rule in re.findall(r"([^{}]+)\{", style) for selector in rule.split(",")]
    assert selectors and all(selector.startswith(f".{NOTEBOOK_SCOPE}") for selector in selectors), \
        "a rule for body or h2 would restyle the whole notebook"
    assert "<html" not in shown and "<body" not in shown


def test_a_run_list_shows_each_run_and_folds_those_without_findings():
    runs = curvedoc.diagnose(CORPUS / "nan_inf")
    healthy = curvedoc.diagnose(CORPUS / "healthy" / "cancer_adam")
    together = RunList([*runs, *healthy], problems=["broken.csv: <b>not a table</b>"])
    shown = together._repr_html_()
    page = Page(shown)
    assert f"{len(together)} runs:" in shown
    for run in together:
        assert f"<h2>{run.name} " in shown or f"<summary>{run.name} " in shown, run.name
    assert shown.count("<section") == len(runs) and "&lt;b&gt;not a table&lt;/b&gt;" in shown
    assert [attrs for attrs in page.of("details") if "open" in attrs] == [], "one of several: folded"
    alone = Page(healthy[0]._repr_html_())
    assert [("open" in attrs) for attrs in alone.of("details")] == [True], "shown alone: open"
    assert alone.of("svg"), "a healthy run still shows its curves"


SVG_ATTRIBUTES = {"xmlns", "role", "viewbox", "font-family", "font-size", "font-weight", "x", "y", "x1", "x2", "y1",
                  "y2", "cx", "cy", "r", "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray",
                  "points", "text-anchor", "transform"}


def test_hostile_tag_names_and_run_names_are_escaped():
    run = hostile_run()
    shown = RunList([run])._repr_html_()
    page = Page(shown)
    assert not page.of("script"), "a tag name became a script element"
    # attributes are curvedoc's own (SVG geometry and colours among them), never log text
    assert all(set(attrs) <= {"class", "id", "width", "height", "alt", "src", "href", "open"} | SVG_ATTRIBUTES
               for _, attrs in page.elements), "log text became an attribute"
    assert not any("alert" in value or "<" in value for _, attrs in page.elements for value in attrs.values())
    assert "&lt;script&gt;alert(1)&lt;/script&gt; loss" in shown
    assert "&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;" in shown
    assert "\x1b" not in shown


def test_importing_curvedoc_does_not_load_the_report():
    probe = ("import sys, curvedoc; curvedoc.Run; curvedoc.RunList; "
             "print(sorted(m for m in sys.modules if m.startswith(('matplotlib', 'curvedoc.report'))))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
