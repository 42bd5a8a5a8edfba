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
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from curvedoc.diagnose import SEVERITY_ORDER, first_response
from curvedoc.features import ACCURACY_ROLES, LOSS_ROLES, RunCurves, chance_accuracy_in_units, chance_loss_of
from curvedoc.report import (FAILING, HEALTHY, INSUFFICIENT, VERDICT_PHRASES, VERDICTS, WARNINGS, WITHOUT_FINDINGS,
                             ReportOptions, plot_files, printable, verdict, verdict_tally)
from curvedoc.roles import Role, is_perplexity

COMMENT_LIMIT = 65_536
# Room for the CLI's final newline and for a workflow that prepends a line of its own.
BUDGET = COMMENT_LIMIT - 1_500
CHART_GRID_POINTS = 80  # a point per ~9 px of a 700 px chart; each curve costs about 500 characters
# The y-axis spans at least this share of the curves' level, so noise within a few % of a level stays flat.
LEAST_RELATIVE_SPAN = 0.5
Y_PADDING = 0.05  # of the span, above and below: curves stay off the edges, where non-finite values are drawn
CHART_HEIGHT = 400  # Mermaid's default 500 px is taller than a comment needs
# Colours that read on GitHub's light and dark themes (xychart's default palette draws a line almost white);
# each is named in the legend line under its chart, as xychart has no legend of its own.
CURVE_COLOURS = (("#2563eb", "blue"), ("#ea580c", "orange"))
CHANCE_COLOUR = ("#6b7280", "grey")
MARK_COLOUR = ("#dc2626", "red")
SPLIT_PARTNERS = {Role.TRAIN_LOSS: Role.VAL_LOSS, Role.VAL_LOSS: Role.TRAIN_LOSS,
                  Role.TRAIN_ACC: Role.VAL_ACC, Role.VAL_ACC: Role.TRAIN_ACC}
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
    plots = {key: urllib.parse.quote(path.as_posix()) for key, path in plot_files(ranked, options).items()}
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


def mermaid_number(value: float, digits: int = 6) -> str:
    """Mermaid reads plain decimals only (no exponent): ``digits`` significant digits, positional."""
    return np.format_float_positional(float(value), precision=digits, unique=True, fractional=False, trim="-")


def chart_groups(run) -> list[list[str]]:
    """The tags to chart, a chart each, in the order the findings name them; a training and a validation curve of
    one kind (loss, accuracy) share a chart, training first, so the gap between them shows. A named curve's other
    split joins it unnamed when its values fit the same axis."""
    named = []
    for finding in run.findings:
        named += [tag for tag in finding.tags if tag in run.roles and tag not in named]
    charts: list[list[str]] = []
    for tag in named:
        partner_role = SPLIT_PARTNERS.get(run.roles[tag])
        pair = next((chart for chart in charts if len(chart) == 1 and partner_role is not None
                     and run.roles[chart[0]] is partner_role), None)
        if pair is None:
            charts.append([tag])
        else:
            pair.append(tag)
    charted = set(named)
    for chart in charts:
        partner_role = SPLIT_PARTNERS.get(run.roles[chart[0]])
        partner = run.primary(partner_role) if partner_role is not None and len(chart) == 1 else None
        if partner is not None and partner not in charted and _fits_beside(run, chart[0], partner):
            chart.append(partner)
            charted.add(partner)
        chart.sort(key=lambda tag: run.roles[tag] not in (Role.TRAIN_LOSS, Role.TRAIN_ACC))
    return charts


def _fits_beside(run, tag: str, partner: str) -> bool:
    """Whether ``partner``'s curve can share ``tag``'s y-axis without squeezing it: its values stay within
    ``tag``'s range widened by that range on each side (a validation loss summed where training's is averaged
    would flatten it)."""
    own, other = (_finite(run.series(name)["value"].to_numpy(dtype=float)) for name in (tag, partner))
    if not len(own) or not len(other):
        return True
    low, high = own.min(), own.max()
    reach = max(high - low, LEAST_RELATIVE_SPAN * max(abs(low), abs(high)))
    return low - reach <= other.min() and other.max() <= high + reach


def chart_for(run, tags: list[str], findings) -> str:
    """The curves of ``tags`` as one Mermaid line chart over the run's steps: the findings' steps as red spikes
    and in the title, the chance level as a grey line, non-finite values on an edge, and a legend line under it."""
    curves = []
    for tag in tags:
        series = run.series(tag)
        if len(series):
            curves.append((tag, series["step"].to_numpy(), series["value"].to_numpy(dtype=float)))
    if not curves:
        return ""
    names = ", ".join(tag for tag, _, _ in curves)
    notes = [note for tag, steps, values in curves if (note := _nonfinite_note(tag, steps, values))]
    finite = np.concatenate([_finite(values) for _, _, values in curves])
    grid = step_grid(min(int(steps[0]) for _, steps, _ in curves), max(int(steps[-1]) for _, steps, _ in curves))
    if len(finite) < 2 or len(grid) < 2:
        return " ".join([f"_{md(names)}: too few finite points to draw._", *notes]) + "\n"
    scale, axis = _axis_scale(finite, names)
    resampled, spans, colours, legend = [], [], [], []
    # chart_groups puts two curves on a chart at most, one for each colour
    for (tag, steps, values), (colour, colour_name) in zip(curves, CURVE_COLOURS, strict=False):
        scaled = values.copy()
        scaled[np.isfinite(values)] = scale(values[np.isfinite(values)])
        pinned = [finding.step for finding in findings if finding.step is not None and tag in finding.tags]
        resampled.append(pin_steps(resample(steps, scaled, grid), grid, steps, scaled, pinned))
        spans.append(tuple(_grid_index(grid, [steps[0], steps[-1]])))
        colours.append(colour)
        legend.append(f"{colour_name}: {md(tag)}")
    for index, (_, steps, _) in enumerate(curves):
        if unlogged_stretches(spans[index], _whole_span(spans)):  # where it follows the other curve
            legend[index] += f" (logged at steps {int(steps[0])}–{int(steps[-1])})"
    chance = _chance_level(run, [tag for tag, _, _ in curves])
    low, high = y_range(np.concatenate([_finite(line) for line in resampled]),
                        [scale(np.float64(chance[0]))] if chance else [])
    lines = []
    if chance:  # before the curves, so they are drawn over it
        lines.append((np.full(2, scale(np.float64(chance[0]))), CHANCE_COLOUR[0]))
        legend.append(f"{CHANCE_COLOUR[1]}: chance level {chance[1]} = {chance[0]:.4g}")
    lines += layered([_on_edges(line, low, high) for line in resampled], spans, colours)
    marked = [finding for finding in findings if finding.step is not None]
    if marked:
        # First, under the curves: a spike in the data at the finding's step stays visible over it.
        lines.insert(0, (step_marks(grid, [finding.step for finding in marked], low, high), MARK_COLOUR[0]))
        spikes = ", ".join(f"{finding.code} at step {finding.step}" for finding in marked)
        legend.append(f"{MARK_COLOUR[1]} spike{'s' if len(marked) > 1 else ''}: {spikes}")
    marks = ", ".join(f"{finding.code} at {finding.where(dash='-')}" for finding in findings if finding.where(dash='-'))
    palette = ", ".join(colour for _, colour in lines)
    block = [
        "```mermaid",
        "---",  # front-matter config: Mermaid's current form of a per-diagram setting, no %% directive needed
        "config:",
        "  xyChart:",
        f"    height: {CHART_HEIGHT}",
        "  themeVariables:",
        "    xyChart:",
        f'      plotColorPalette: "{palette}"',
        "---",
        "xychart-beta",
        f'    title "{mermaid_label(f"{names} - {marks}" if marks else names)}"',
        f'    x-axis "step" {int(grid[0])} --> {int(grid[-1])}',
        f'    y-axis "{axis}" {mermaid_number(low)} --> {mermaid_number(high)}',
        *("    line [" + ", ".join(mermaid_number(value, 4) for value in line) + "]" for line, _ in lines),
        "```",
        "_" + " · ".join(legend + notes) + "._",
    ]
    return "\n".join(block) + "\n"


def layered(lines: list[np.ndarray], spans: list[tuple[int, int]], colours: list[str]) -> list[tuple]:
    """The curves in drawing order with their colours. An xychart line has a value at every grid point, and a level
    made up where a curve was not logged (a validation loss before its first evaluation) would be read as logged:
    there it follows the other curve instead, drawn under it, so it seems to branch off where its logging starts."""
    if len(lines) == 2:
        whole = _whole_span(spans)
        followed = [line.copy() for line in lines]
        for own, other in ((0, 1), (1, 0)):
            for stretch in unlogged_stretches(spans[own], whole):
                followed[own][stretch] = lines[other][stretch]
        lines = followed
    order = sorted(range(len(lines)), key=lambda index: spans[index][1] - spans[index][0])
    return [(lines[index], colours[index]) for index in order]


def unlogged_stretches(span: tuple[int, int], whole: tuple[int, int]) -> list[slice]:
    """The grid points before and after a curve's logged ``span`` within the chart's ``whole`` span, where more
    than one: a single point at an end only rounds a step to the grid, and keeps the curve's own nearest value
    (following the other curve there would draw a jump to it)."""
    (first, last), (start, end) = span, whole
    sides = ((slice(start, first), first - start), (slice(last + 1, end + 1), end - last))
    return [stretch for stretch, missing in sides if missing > 1]


def _whole_span(spans: list[tuple[int, int]]) -> tuple[int, int]:
    return min(first for first, _ in spans), max(last for _, last in spans)


def step_grid(first: int, last: int) -> np.ndarray:
    """Evenly spaced whole steps from ``first`` to at least ``last``, at most CHART_GRID_POINTS of them: a
    numeric x-axis spreads a line's points evenly over its range, so points must sit on such a grid to be drawn
    at their steps (whole spacings keep old Mermaid versions, which add the spacing up, from losing the last)."""
    spacing = max(1, math.ceil((last - first) / (CHART_GRID_POINTS - 1)))
    return first + spacing * np.arange(math.ceil((last - first) / spacing) + 1)


def _grid_index(grid: np.ndarray, steps) -> np.ndarray:
    """The grid point each step is drawn at: the nearest one."""
    spacing = grid[1] - grid[0]
    return np.clip(np.floor((np.asarray(steps) - grid[0]) / spacing + 0.5).astype(int), 0, len(grid) - 1)


def resample(steps: np.ndarray, values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``values`` logged at ``steps`` (in order) as one value per grid point. A grid point with logged points
    nearest to it takes the first non-finite one among them, else the one furthest from their median, so neither
    a spike nor a NaN is averaged away; between logged points the curve is interpolated, except that after a
    non-finite logged value it stays non-finite until a finite one is logged."""
    finite = np.isfinite(values)
    resampled = np.interp(grid, steps[finite], values[finite]) if finite.any() else np.full(len(grid), np.nan)
    previous = np.searchsorted(steps, grid, side="right") - 1
    after_nonfinite = (previous >= 0) & ~finite[np.maximum(previous, 0)]
    resampled[after_nonfinite] = values[previous[after_nonfinite]]
    points = _grid_index(grid, steps)
    starts = np.flatnonzero(np.r_[True, points[1:] != points[:-1]])
    for start, stop in zip(starts, np.r_[starts[1:], len(steps)], strict=True):
        chunk = values[start:stop]
        nonfinite = chunk[~np.isfinite(chunk)]
        if len(nonfinite):
            resampled[points[start]] = nonfinite[0]
            continue
        middle = np.median(chunk)
        resampled[points[start]] = chunk.max() if chunk.max() - middle >= middle - chunk.min() else chunk.min()
    return resampled


def pin_steps(resampled: np.ndarray, grid: np.ndarray, steps: np.ndarray, values: np.ndarray, wanted) -> np.ndarray:
    """The logged value nearest each wanted step (a finding's) drawn at its grid point, whatever the point's other
    logged values: the best validation loss an overfitting finding names is a low point that the largest
    excursion would otherwise stand in for."""
    for step in wanted:
        nearest = int(np.argmin(np.abs(steps - step)))
        resampled[_grid_index(grid, steps[nearest])] = values[nearest]
    return resampled


def y_range(values, references=()) -> tuple[float, float]:
    """The y-axis from every drawn value and reference level (chance) with a little room, spanning at least
    LEAST_RELATIVE_SPAN of their level: a curve flat within a few % of chance looks flat, while a 17% rise still
    fills about a third of the height (Mermaid's own range runs from the lowest value to the highest, so noise on
    a flat curve would fill the chart). The padding keeps curves off the bottom edge, where the step marks run."""
    known = np.concatenate([np.asarray(values, dtype=float), np.asarray(references, dtype=float)])
    low, high = float(known.min()), float(known.max())
    least = LEAST_RELATIVE_SPAN * max(abs(low), abs(high)) or 1.0
    if high - low < least:
        middle = (low + high) / 2
        low, high = (middle - least / 2, middle + least / 2) if middle >= least / 2 or low < 0 else (0.0, least)
    padding = Y_PADDING * (high - low)
    low, high = low - padding, high + padding
    # Rounded outwards to two significant digits of the span, for short axis numbers that still hold every value.
    unit = 10.0 ** (math.floor(math.log10(high - low)) - 1)
    return math.floor(low / unit) * unit, math.ceil(high / unit) * unit


def step_marks(grid: np.ndarray, steps, low: float, high: float) -> np.ndarray:
    """A line along the bottom edge, below every curve, that rises to the top edge at each of ``steps``: xychart
    draws no vertical rule, so a spike one grid spacing wide marks where a finding is."""
    marks = np.full(len(grid), low)
    marks[_grid_index(grid, steps)] = high
    return marks


def _on_edges(line: np.ndarray, low: float, high: float) -> np.ndarray:
    """Non-finite values drawn where a line can show them: NaN and +Inf on the top edge, −Inf on the bottom."""
    return np.where(np.isnan(line) | (line == math.inf), high, np.where(line == -math.inf, low, line))


def _chance_level(run, tags: list[str]) -> tuple[float, str] | None:
    """The chance level of the first of ``tags`` that has one, and how it is worked out: ln n for a cross-entropy
    loss over n classes, 1/n for an accuracy (in its own unit, a fraction or a percentage)."""
    curves = RunCurves(run)
    for tag in tags:
        curve = curves.curve_of(tag)
        if curve is None or is_perplexity(tag):  # a perplexity is drawn as logged, not as the loss it exponentiates
            continue
        if curve.role in LOSS_ROLES and (chance := chance_loss_of(curves, curve)) is not None:
            return chance, f"ln {curves.n_classes}"
        if curve.role in ACCURACY_ROLES and (chance := chance_accuracy_in_units(curves, curve)) is not None:
            return chance, f"1/{curves.n_classes}"
    return None


def _axis_scale(values: np.ndarray, name: str):
    """How finite values are drawn, and the y-axis title that says so: on a log10 axis when the largest magnitude
    dwarfs the typical one (an exploded loss would flatten everything else), else as they are."""
    magnitudes = np.abs(values)
    typical = float(np.median(magnitudes))
    if typical > 0 and magnitudes.max() / typical > LOG_AXIS_RATIO:
        if (values > 0).all():
            return np.log10, mermaid_label(f"log10 {name}")
        if (values >= 0).all():
            return lambda logged: np.log10(1 + logged), mermaid_label(f"log10 1+{name}")
        return (lambda logged: np.sign(logged) * np.log10(1 + np.abs(logged)),
                mermaid_label(f"sign x log10 1+abs {name}"))
    return (lambda logged: logged), mermaid_label(name)


def _finite(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values)]


def _nonfinite_note(tag: str, steps: np.ndarray, values: np.ndarray) -> str:
    bad = ~np.isfinite(values)
    if not bad.any():
        return ""
    kinds = []
    for name, mask in (("NaN", np.isnan(values)), ("+Inf", values == math.inf), ("−Inf", values == -math.inf)):
        if mask.any():
            kinds.append(f"{name} from step {int(steps[mask][0])}")
    edges = " and ".join(edge for edge, drawn in (("top", (np.isnan(values) | (values == math.inf)).any()),
                                                 ("bottom", (values == -math.inf).any())) if drawn)
    return (f"{md(tag)}: {int(bad.sum())} of {len(values)} values non-finite ({'; '.join(kinds)}), drawn on the "
            f"{edges} edge")


def _rank(run) -> tuple[int, int, int]:
    errors = sum(finding.severity == "error" for finding in run.findings)
    return VERDICT_RANK[verdict(run)], -errors, -len(run.findings)


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
                 self.unsectioned_notes(), self.checklist()]
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
        lines = capped(self.problems, lambda problem: f"- {md(problem)}")
        return "**Could not be read:**\n\n" + "\n".join(lines) + "\n"

    def unsectioned_notes(self) -> str:
        """What a reviewer must know of the runs without a section: a "healthy" that could not check everything,
        a log cut off mid-record."""
        lines = []
        for number, run in enumerate(self.runs, start=1):
            if id(run) in self.numbers:
                continue
            lines += [f"- run {number}: not checked: {md(item)}" for item in run.not_checked]
            lines += [f"- run {number}: read warning: {md(warning)}" for warning in run.warnings]
        if not lines:
            return ""
        return "**Runs without findings:**\n\n" + "\n".join(capped(lines)) + "\n"

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
            f"{md(run.format)} · {n_steps} steps · {classes}"
            + ("" if run.name in run.path else f" · run {md(run.name)}"),
            "",
        ]
        for finding in run.findings:
            lines.append(_finding_block(finding, detailed or finding.severity == "error"))
        lines += [f"Not checked: {md(item)}" for item in run.not_checked] + ([""] if run.not_checked else [])
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
            self._charts[id(run)] = "\n".join(
                chart_for(run, tags, [f for f in run.findings if set(tags) & set(f.tags)])
                for tags in chart_groups(run)[:CHARTS_PER_RUN])
        return self._charts[id(run)]


def _finding_block(finding, detailed: bool) -> str:
    where = f" · {finding.where(dash='-')}" if finding.where(dash='-') else ""
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
        lines += capped(run.warnings, lambda warning: f"- {md(warning)}") + ["", "</details>", ""]
    if run.meta.hparams:
        items = list(run.meta.hparams.items())
        lines += [f"<details><summary>Hyperparameters ({len(items)})</summary>", ""]
        lines += capped(items, lambda item: f"- {md(item[0])} = {md(item[1])}") + ["", "</details>", ""]
    return lines


def capped(items: list, line: Callable[[Any], str] = str) -> list[str]:
    """At most LISTED_AT_MOST list items, made by ``line`` (only those shown are), and one saying how many were
    left out: a PR comment stays readable."""
    left_out = len(items) - LISTED_AT_MOST
    return [line(item) for item in items[:LISTED_AT_MOST]] + ([f"- … {left_out:,} more"] if left_out > 0 else [])


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
