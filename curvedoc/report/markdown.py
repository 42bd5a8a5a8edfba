"""GitHub-flavoured Markdown for a pull-request comment: a summary table, then each run with findings.

Curves are inline Mermaid ``xychart-beta`` charts (GitHub renders them without image hosting). The comment must
stay under GitHub's 65,536-character limit, so when the full report is longer the least important parts are cut
first (charts of runs with warnings only, then evidence and causes of warning/info findings, then charts beyond
the worst runs, then the sections of the less severe runs, then the table rows of healthy runs) and a note at the
top says what was cut. Healthy runs (info notes at most) take one table row and no section.
"""

from __future__ import annotations

import html
import math
import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curvedoc.diagnose import SEVERITY_ORDER, first_response
from curvedoc.errors import CurvedocError
from curvedoc.report import (FAILING, HEALTHY, INSUFFICIENT, VERDICT_PHRASES, VERDICTS, WARNINGS, WITHOUT_FINDINGS,
                             ReportOptions, downsample, printable, verdict, verdict_tally)

COMMENT_LIMIT = 65_536
# Room for the CLI's final newline and for a workflow that prepends a line of its own.
BUDGET = COMMENT_LIMIT - 1_500
CHART_POINTS = 75  # downsample() keeps up to 4 points per max_points/3 buckets: about 100 at most
CHARTS_PER_RUN = 3
CHARTED_RUNS_KEPT = 3  # charts of the worst runs survive until whole sections have to go
SECTIONS_KEPT = 10  # sections of the worst runs survive until the table's healthy rows have gone
LONGEST_TEXT = 400  # one evidence line or hparam value from a log, in characters
LISTED_AT_MOST = 20  # hparams, reader warnings, unreadable sources
# log10 axis when the largest magnitude dwarfs the typical one: an exploded loss would flatten everything else.
LOG_AXIS_RATIO = 1e4

VERDICT_WORDS = {FAILING: "**FAILING**", WARNINGS: "warnings", INSUFFICIENT: VERDICT_PHRASES[INSUFFICIENT],
                 HEALTHY: "healthy"}
VERDICT_RANK = {name: rank for rank, name in enumerate(VERDICTS)}

_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#|~@!])")
_LINE_START_MARKER = re.compile(r"^(\d*)([-+=>.)])")
_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,/:=+\-]+")


def render(runs, problems=(), options: ReportOptions | None = None) -> str:
    options = options or ReportOptions()
    ranked = sorted(runs, key=_rank)
    plots = _write_plots(ranked, options) if options.plots_dir else {}
    report = _Report(ranked, list(problems), plots)
    return report.fitted()


def md(text) -> str:
    """Untrusted text as inert Markdown: no HTML, links, code spans, table cells or list markers from logs."""
    text = " ".join(str(text).splitlines())
    if len(text) > LONGEST_TEXT:
        text = text[:LONGEST_TEXT] + "…"
    text = html.escape(printable(text), quote=False)
    text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)
    return _LINE_START_MARKER.sub(r"\1\\\2", text)


def mermaid_label(text) -> str:
    """A chart title or axis label: only characters Mermaid's grammar reads as plain text."""
    cleaned = " ".join(_MERMAID_UNSAFE.sub(" ", str(text)).split())
    return cleaned[:80] or "curve"


def mermaid_number(value: float) -> str:
    """Mermaid reads plain decimals only (no exponent): six significant digits, positional."""
    return np.format_float_positional(float(value), precision=6, unique=True, fractional=False, trim="-")


def chart_for(run, tag: str, findings) -> str:
    """One tag's curve as a Mermaid line chart, with the findings' steps kept and named in the title; non-finite
    values cannot be drawn, so they are left out and a note says where they are."""
    series = run.series(tag)
    steps = series["step"].to_numpy()
    values = series["value"].to_numpy(dtype=float)
    if len(steps) == 0:
        return ""
    kept_steps, _ = downsample(steps, values, CHART_POINTS)
    marked = _marked_steps(findings)
    keep = np.isin(steps, kept_steps) | np.isin(steps, _nearest_steps(steps, marked))
    finite = np.isfinite(values)
    note = _nonfinite_note(steps, values)
    plotted = keep & finite
    marks = ", ".join(f"{finding.code} at {_where(finding)}" for finding in findings if _where(finding))
    title = mermaid_label(f"{tag} - {marks}" if marks else tag)
    if plotted.sum() < 2:
        return f"_{md(tag)}: too few finite points to draw._ {note}".strip() + "\n"
    ys, axis = _axis_values(values[plotted], tag)
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{title}"',
        '    x-axis "step" [' + ", ".join(f'"{int(step)}"' for step in steps[plotted]) + "]",
        f'    y-axis "{axis}"',
        "    line [" + ", ".join(mermaid_number(y) for y in ys) + "]",
        "```",
    ]
    if note:
        lines.append(note)
    return "\n".join(lines) + "\n"


def _axis_values(values: np.ndarray, tag: str) -> tuple[np.ndarray, str]:
    magnitudes = np.abs(values)
    typical = float(np.median(magnitudes))
    if typical > 0 and magnitudes.max() / typical > LOG_AXIS_RATIO:
        if (values > 0).all():
            return np.log10(values), mermaid_label(f"log10 {tag}")
        if (values >= 0).all():
            return np.log10(1 + values), mermaid_label(f"log10 1+{tag}")
        return np.sign(values) * np.log10(1 + magnitudes), mermaid_label(f"sign x log10 1+abs {tag}")
    return values, mermaid_label(tag)


def _marked_steps(findings) -> list[int]:
    steps = []
    for finding in findings:
        if finding.step is not None:
            steps.append(finding.step)
        if finding.step_range:
            steps.extend(finding.step_range)
    return steps


def _nearest_steps(steps: np.ndarray, wanted: list[int]) -> np.ndarray:
    if not wanted:
        return np.array([], dtype=steps.dtype)
    positions = np.clip(np.searchsorted(steps, wanted), 0, len(steps) - 1)
    return steps[positions]


def _nonfinite_note(steps: np.ndarray, values: np.ndarray) -> str:
    bad = ~np.isfinite(values)
    if not bad.any():
        return ""
    kinds = []
    for name, mask in (("NaN", np.isnan(values)), ("+Inf", values == math.inf), ("−Inf", values == -math.inf)):
        if mask.any():
            kinds.append(f"{name} from step {int(steps[mask][0])}")
    return f"_Not drawn: {int(bad.sum())} non-finite value(s): {'; '.join(kinds)}._"


def _where(finding) -> str:
    if finding.step is not None:
        return f"step {finding.step}"
    if finding.step_range:
        return f"steps {finding.step_range[0]}-{finding.step_range[1]}"
    return ""


def _rank(run) -> tuple[int, int, int]:
    errors = sum(finding.severity == "error" for finding in run.findings)
    return VERDICT_RANK[verdict(run)], -errors, -len(run.findings)


def _write_plots(runs, options: ReportOptions) -> dict[int, str]:
    """A PNG per run with warnings or errors in ``plots_dir``; each linked relative to where the report is written."""
    from curvedoc.report.plots import figure_for_run

    folder = options.plots_dir
    base = options.output.parent if options.output is not None else None
    links = {}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for number, run in enumerate(runs, start=1):
            if verdict(run) in WITHOUT_FINDINGS:
                continue
            slug = re.sub(r"[^A-Za-z0-9_-]+", "-", run.name).strip("-")[:40] or "run"
            target = folder / f"{number:03d}-{slug}.png"
            figure_for_run(run).savefig(target, dpi=100)
            shown = Path(os.path.relpath(target, base)) if base is not None else target
            links[id(run)] = urllib.parse.quote(shown.as_posix())
    except OSError as exc:
        raise CurvedocError(folder, f"cannot write plots: {exc.strerror or exc}") from None
    return links


@dataclass(frozen=True)
class Cuts:
    """What the report leaves out to fit a comment; the default leaves nothing out."""

    warning_run_charts: bool = False
    minor_details: bool = False
    charted_runs: int | None = None  # charts only for this many of the worst runs
    sections: int | None = None  # sections only for this many of the worst runs
    rows: int | None = None  # table rows only for this many of the worst runs

    def with_rows(self, rows: int) -> Cuts:
        return Cuts(self.warning_run_charts, self.minor_details, self.charted_runs, self.sections, rows)

    def note(self, sectioned: int, runs: int) -> str:
        cut = []
        if self.warning_run_charts:
            cut.append("charts of runs with warnings only")
        if self.minor_details:
            cut.append("evidence and causes of warning and info findings")
        if self.charted_runs is not None and self.charted_runs < sectioned:
            cut.append(f"charts beyond the {self.charted_runs} worst runs")
        if self.sections is not None and self.sections < sectioned:
            cut.append(f"the sections of {sectioned - self.sections} less severe runs "
                       "(their findings are still named in the table)")
        if self.rows is not None and self.rows < runs:
            cut.append(f"the table rows of the {runs - self.rows} healthiest runs")
        if not cut:
            return ""
        return (f"> **Shortened to fit GitHub's {COMMENT_LIMIT:,}-character comment limit:** left out "
                f"{'; '.join(cut)}. Run curvedoc locally (or with `--plots DIR`) for the whole report.\n")


class _Report:
    def __init__(self, runs, problems, plots):
        self.runs = runs
        self.problems = problems
        self.plots = plots
        # A run without findings (info notes at most) takes its table row only.
        self.diagnosed = [run for run in runs if verdict(run) not in WITHOUT_FINDINGS]
        # Runs compare by value (their DataFrames), so they are known by identity.
        self.numbers = {id(run): number for number, run in enumerate(self.diagnosed, start=1)}
        self._charts: dict[int, str] = {}
        self._sections: dict[tuple[int, bool, bool], str] = {}

    def fitted(self) -> str:
        """The whole report when it fits, else the least cutting shortening that does."""
        for cuts in (Cuts(), Cuts(warning_run_charts=True), Cuts(warning_run_charts=True, minor_details=True)):
            text = self.document(cuts)
            if comment_length(text) <= BUDGET:
                return text
        count = unhealthy = len(self.diagnosed)
        fewer_charts = self._most(lambda kept: Cuts(True, True, charted_runs=kept), CHARTED_RUNS_KEPT, count - 1)
        if fewer_charts is not None:
            return fewer_charts
        # The sections of the worst runs, then the rows of healthy runs, then the rest of the sections.
        def sections_cut(kept: int, rows: int | None = None) -> Cuts:
            return Cuts(True, True, min(CHARTED_RUNS_KEPT, kept), sections=kept, rows=rows)

        floor = min(SECTIONS_KEPT, count)
        shortened = (self._most(sections_cut, floor, count - 1)
                     or self._most(sections_cut(floor).with_rows, unhealthy, len(self.runs) - 1)
                     or self._most(lambda kept: sections_cut(kept, unhealthy), 0, floor - 1)
                     or self._most(sections_cut(0).with_rows, 0, unhealthy - 1))
        return shortened or self.document(sections_cut(0, rows=0))

    def _most(self, cuts_keeping, low: int, high: int) -> str | None:
        return longest_fitting(lambda kept: self.document(cuts_keeping(kept)), low, high)

    def document(self, cuts: Cuts) -> str:
        parts = [self.title(), cuts.note(len(self.diagnosed), len(self.runs)), self.table(cuts), self.unreadable(),
                 self.checklist()]
        shown = self.diagnosed if cuts.sections is None else self.diagnosed[:cuts.sections]
        for number, run in enumerate(shown, start=1):
            charts = (cuts.charted_runs is None or number <= cuts.charted_runs) and not (
                cuts.warning_run_charts and verdict(run) != FAILING)
            key = (id(run), charts, not cuts.minor_details)
            if key not in self._sections:
                self._sections[key] = self.section(run, charts, detailed=not cuts.minor_details)
            parts.append(self._sections[key])
        return "\n".join(part for part in parts if part).rstrip() + "\n"

    def title(self) -> str:
        counts = {name: sum(verdict(run) == name for run in self.runs) for name in VERDICTS}
        return f"## curvedoc: {verdict_tally(counts)} ({len(self.runs)} run{'s' if len(self.runs) != 1 else ''})\n"

    def table(self, cuts: Cuts) -> str:
        if not self.runs:
            return "No runs were read.\n"
        shown = self.diagnosed if cuts.sections is None else self.diagnosed[:cuts.sections]
        sectioned = {id(run) for run in shown}
        rows = ["| # | run | format | verdict | findings |", "|---|---|---|---|---|"]
        listed = self.runs if cuts.rows is None else self.runs[:cuts.rows]
        for number, run in enumerate(listed, start=1):
            name = md(run.path) if run.name in run.path else f"{md(run.path)} ({md(run.name)})"
            if id(run) in sectioned:
                name = f"[{name}](#{self.anchor(run)})"
            findings = md(run.insufficient) if verdict(run) == INSUFFICIENT else _finding_counts(run.findings)
            rows.append(f"| {number} | {name} | {md(run.format)} | {VERDICT_WORDS[verdict(run)]} | {findings} |")
        return "\n".join(rows) + "\n"

    def unreadable(self) -> str:
        if not self.problems:
            return ""
        lines = [f"- {md(problem)}" for problem in self.problems[:LISTED_AT_MOST]]
        if len(self.problems) > LISTED_AT_MOST:
            lines.append(f"- … {len(self.problems) - LISTED_AT_MOST} more")
        return "**Could not be read:**\n\n" + "\n".join(lines) + "\n"

    def checklist(self) -> str:
        if not self.diagnosed:
            return ""
        items = "\n".join(f"- [ ] {md(item)}" for item in first_response(self.diagnosed[0]))
        return f"**First response** (for any run with findings):\n\n{items}\n"

    def section(self, run, charts: bool, detailed: bool) -> str:
        number = self.numbers[id(run)]
        classes = f"{run.meta.n_classes} classes" if run.meta.n_classes else "classes unknown"
        n_steps = int(run.scalars["step"].nunique()) if not run.scalars.empty else 0
        lines = [
            f'<a id="{self.anchor(run)}"></a>',
            f"### {number}. {md(run.path)} — {VERDICT_WORDS[verdict(run)]}",
            "",
            f"{md(run.format)} · {n_steps} steps · {classes}" + ("" if run.name in run.path else f" · run {md(run.name)}"),
            "",
        ]
        for finding in run.findings:
            lines.append(_finding_block(finding, detailed or finding.severity == "error"))
        if charts:
            drawn = self.charts(run)
            if drawn:
                lines += ["<details><summary>Curves</summary>", "", drawn, "</details>", ""]
        if id(run) in self.plots:
            lines += [f"![Curves of run {number} with its findings]({self.plots[id(run)]})", ""]
        lines += _more(run)
        return "\n".join(lines) + "\n"

    def anchor(self, run) -> str:
        return f"curvedoc-run-{self.numbers[id(run)]}"

    def charts(self, run) -> str:
        if id(run) not in self._charts:
            tags = []
            for finding in run.findings:
                tags += [tag for tag in finding.tags if tag in run.roles and tag not in tags]
            self._charts[id(run)] = "\n".join(
                chart_for(run, tag, [f for f in run.findings if tag in f.tags]) for tag in tags[:CHARTS_PER_RUN])
        return self._charts[id(run)]


def _finding_block(finding, detailed: bool) -> str:
    where = f" · {_where(finding)}" if _where(finding) else ""
    lines = [f"**{finding.severity.upper()} {finding.code}** · {md(finding.symptom)}{where} — {md(finding.title)}",
             ""]
    if detailed and finding.evidence:
        lines += [f"- {md(item)}" for item in finding.evidence] + [""]
    if finding.cheapest_check:
        lines += [f"Cheapest check: {md(finding.cheapest_check)}", ""]
    if detailed and finding.causes:
        lines += ["<details><summary>Likely causes</summary>", ""]
        lines += [f"- {md(cause)}" for cause in finding.causes] + ["", "</details>", ""]
    return "\n".join(lines)


def _more(run) -> list[str]:
    """Reader warnings and hyperparameters, folded: context for the findings, rarely the point."""
    lines = []
    if run.warnings:
        lines += [f"<details><summary>Reader warnings ({len(run.warnings)})</summary>", ""]
        lines += [f"- {md(warning)}" for warning in run.warnings[:LISTED_AT_MOST]] + ["", "</details>", ""]
    if run.meta.hparams:
        items = list(run.meta.hparams.items())
        lines += [f"<details><summary>Hyperparameters ({len(items)})</summary>", ""]
        lines += [f"- {md(key)} = {md(value)}" for key, value in items[:LISTED_AT_MOST]]
        if len(items) > LISTED_AT_MOST:
            lines.append(f"- … {len(items) - LISTED_AT_MOST} more")
        lines += ["", "</details>", ""]
    return lines


def _finding_counts(findings) -> str:
    if not findings:
        return "none"
    by_severity = sorted({finding.severity for finding in findings}, key=SEVERITY_ORDER.get)
    counts = ", ".join(f"{sum(f.severity == severity for f in findings)} {severity}" for severity in by_severity)
    codes = " ".join(dict.fromkeys(finding.code for finding in findings))
    return f"{counts}: {codes}"


def longest_fitting(document_keeping, low: int, high: int) -> str | None:
    """The document keeping the most (between ``low`` and ``high``) that fits a comment; the length grows with
    what is kept, so a binary search finds it."""
    best = None
    while low <= high:
        middle = (low + high) // 2
        text = document_keeping(middle)
        if comment_length(text) <= BUDGET:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best


def comment_length(text: str) -> int:
    """Length as GitHub counts it (UTF-16 code units, so a character outside the BMP from a log counts twice)."""
    return len(text.encode("utf-16-le")) // 2
