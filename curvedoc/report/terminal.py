"""The terminal report: one line per healthy run; for a run with symptoms its key curves as sparklines with the
findings' steps marked, then each finding with its evidence and cheapest check; the first-response checklist once.

Everything taken from the logs passes through ``printable`` before it is styled, so a tag name cannot move the
cursor or recolour the terminal; ANSI styling is added only when ``options.color`` says the terminal wants it.
Every line is fitted to ``options.width`` cells: headers are cut with '…', prose is wrapped.
"""

from __future__ import annotations

import math
import sys
import textwrap
import unicodedata

import numpy as np

from curvedoc.diagnose import first_response
from curvedoc.features import Curve, RunCurves, fmt
from curvedoc.report import (FAILING, HEALTHY, INSUFFICIENT, VERDICT_PHRASES, VERDICTS, WARNINGS, WITHOUT_FINDINGS,
                             ReportOptions, downsample, plot_files, printable, verdict)
from curvedoc.roles import Role
from curvedoc.rules import Finding

BARS = "▁▂▃▄▅▆▇█"
NAN_MARK, INF_MARK = "×", "!"
STEP_MARK, RANGE_MARK = "^", "~"
KEY_ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS, (Role.VAL_ACC, Role.TRAIN_ACC), Role.GRAD_NORM)
MAX_CURVES = 5
MAX_LABEL = 18
MIN_SPARK = 8
# A curve spanning more than this ratio is drawn on a log scale, so one spike does not flatten the rest to ▁.
LOG_SCALE_RATIO = 100.0
CLIP_QUANTILE, CLIP_MIN_POINTS = 0.95, 20
FLAT_SHARE = 0.1

# SGR codes per style name; only emitted when colour is on.
STYLES = {
    "error": "1;31", "warning": "1;33", "info": "36", "healthy": "32", "bad": "31", "dim": "2", "bold": "1",
}
VERDICT_STYLE = {FAILING: "error", WARNINGS: "warning", INSUFFICIENT: "info", HEALTHY: "healthy"}
VERDICT_MARK = {FAILING: "✗", WARNINGS: "!", INSUFFICIENT: "?", HEALTHY: "✓"}
VERDICT_WIDTH = max(len(name) for name in VERDICTS) + 1  # -q lines keep their paths in one column


def render(runs, problems=(), options: ReportOptions | None = None) -> str:
    options = options or ReportOptions()
    out = Output(options)
    verdicts = [verdict(run) for run in runs]
    plots = plot_files(runs, options)
    for run, run_verdict in zip(runs, verdicts):
        if options.quiet:
            out.line(*_verdict_line(run, run_verdict))
        elif run_verdict in WITHOUT_FINDINGS and not options.verbose:
            out.line(*_header(run, run_verdict))
            if run_verdict == INSUFFICIENT:
                _read_warnings(out, run)  # what was read, and why so little: the answer to "not enough"
            _not_checked(out, run)
        else:
            _run_block(out, run, run_verdict)
        if id(run) in plots:
            out.line(("  plot: ", "dim"), (printable(str(plots[id(run)])), None))
    for problem in problems:
        if options.quiet:
            out.line(("warning: ", "warning"), (f"unreadable: {printable(problem)}", None))
        else:
            out.wrapped(f"unreadable: {printable(problem)}", indent="warning: ", indent_style="warning")
    if options.quiet:
        return out.text()
    if len(runs) > 1:
        counts = {name: verdicts.count(name) for name in VERDICTS if name != INSUFFICIENT or name in verdicts}
        out.blank()
        tally = [(f"{counts[name]} {name}", VERDICT_STYLE[name] if counts[name] else "dim") for name in counts]
        out.line((f"{len(runs)} runs: ", "bold"), *[part for item in tally for part in (item, (", ", None))][:-1])
    checklist = _checklist([run for run, name in zip(runs, verdicts) if name not in WITHOUT_FINDINGS])
    if checklist:
        out.blank()
        out.line(("First response, for any run with findings:", "bold"))
        for number, step in enumerate(checklist, start=1):
            out.wrapped(step, indent=f"  {number}. ")
    return out.text()


class Output:
    """Lines fitted to the width: a line is a list of (text, style) segments; text is already printable."""

    def __init__(self, options: ReportOptions):
        self.width = max(options.width, 20)
        self.cut_to_width = options.cut_to_width
        self.color = options.color
        self.lines: list[str] = []

    def line(self, *segments: tuple[str, str | None]) -> None:
        room = self.width if self.cut_to_width else sys.maxsize
        parts = []
        for text, style in segments:
            if room <= 0:
                break
            if cells(text) > room:
                text = cut(text, room)
            room -= cells(text)
            parts.append(self.style(text, style))
        self.lines.append("".join(parts).rstrip())

    def wrapped(self, text: str, indent: str, style: str | None = None, indent_style: str | None = None) -> None:
        """Prose wrapped under its indent; a word longer than a line is broken rather than overflowing."""
        body = textwrap.wrap(text, width=max(self.width - cells(indent), 10), break_on_hyphens=False) or [""]
        for number, piece in enumerate(body):
            self.line((indent if number == 0 else " " * cells(indent), indent_style), (piece, style))

    def blank(self) -> None:
        self.lines.append("")

    def style(self, text: str, style: str | None) -> str:
        if not self.color or not style or not text:
            return text
        return f"\x1b[{STYLES[style]}m{text}\x1b[0m"

    def text(self) -> str:
        return "\n".join(self.lines)


def cells(text: str) -> int:
    """Terminal columns ``text`` takes: wide East Asian characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def cut(text: str, room: int) -> str:
    """``text`` shortened to ``room`` columns, ending in '…' when something was cut."""
    if cells(text) <= room:
        return text
    kept, used = [], 0
    for char in text:
        used += cells(char)
        if used > room - 1:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _verdict_line(run, run_verdict: str) -> tuple[tuple[str, str | None], ...]:
    codes = ", ".join(f"{f.code} {f.symptom}" for f in run.findings if f.severity != "info")
    if run_verdict == INSUFFICIENT:
        codes = f"{VERDICT_PHRASES[INSUFFICIENT]}: {printable(run.insufficient)}"
    return ((f"{run_verdict.upper():<{VERDICT_WIDTH}}", VERDICT_STYLE[run_verdict]), (_name(run), None),
            (f"  {codes}" if codes else "", "dim"))


def _header(run, run_verdict: str) -> tuple[tuple[str, str | None], ...]:
    steps = _step_span(run)
    facts = [run.format] + ([f"{run.meta.n_classes} classes"] if run.meta.n_classes else [])
    facts.append(f"{len(run.scalars):,} point{'' if len(run.scalars) == 1 else 's'}")
    if steps:
        facts.append(f"steps {steps[0]}..{steps[1]}")
    counts = [f"{count} {severity}{'s' if count > 1 else ''}"
              for severity in ("error", "warning", "info")
              if (count := sum(f.severity == severity for f in run.findings))]
    label = VERDICT_PHRASES[run_verdict] if run_verdict in WITHOUT_FINDINGS else run_verdict.upper()
    if run.warnings:
        counts.append(f"{len(run.warnings)} read warning{'s' if len(run.warnings) > 1 else ''}")
    detail = f" ({', '.join(counts)})" if counts else ""
    if run_verdict == INSUFFICIENT:
        detail = f": {printable(run.insufficient)}{detail}"
    style = VERDICT_STYLE[run_verdict]
    # Verdict first: when the line must be cut to the width, the facts go, not the verdict.
    return ((f"{VERDICT_MARK[run_verdict]} {label}", style), (detail, None),
            ("  ", None), (_name(run), "bold" if run_verdict not in WITHOUT_FINDINGS else None),
            (f"  {' · '.join(facts)}", "dim"))


def _name(run) -> str:
    # A store holding many runs names each by its path plus an id; the run's own name says which it is.
    named = "" if run.name in run.path else f" ({run.name})"
    return printable(f"{run.path}{named}")


def _step_span(run) -> tuple[int, int] | None:
    if run.scalars.empty:
        return None
    steps = run.scalars["step"]
    return int(steps.min()), int(steps.max())


def _read_warnings(out: Output, run) -> None:
    for warning in run.warnings:
        out.wrapped(printable(warning), indent="  read warning: ", style="warning")


def _run_block(out: Output, run, run_verdict: str) -> None:
    out.line(*_header(run, run_verdict))
    tags = _tags_line(run)
    if tags:
        out.line(("  tags: ", "dim"), (tags, None))
    _read_warnings(out, run)
    _not_checked(out, run)
    _curves(out, run)
    for finding in run.findings:
        _finding(out, finding)
    out.blank()


def _not_checked(out: Output, run) -> None:
    """What the verdict could not cover: a "healthy" that never saw a validation curve must say so."""
    if run.not_checked:
        out.wrapped(printable("; ".join(run.not_checked)), indent="  not checked: ", style="dim", indent_style="dim")


def _tags_line(run) -> str:
    """The inventory in one line: each tag with the role curvedoc gave it; tags without a role only counted."""
    named = [printable(tag) if tag == run.roles[tag].value else f"{printable(tag)}={run.roles[tag].value}"
             for tag in run.tags if run.roles[tag] != Role.OTHER]
    others = sum(run.roles[tag] == Role.OTHER for tag in run.tags)
    return "  ".join(named + ([f"+{others} other"] if others else []))


def _curves(out: Output, run) -> None:
    """The key curves as sparklines on one shared step axis, so the markers under them line up across curves: the
    axis they span, not the run's, which a curve not drawn may stretch far beyond them (Keras logs its epoch curves
    at steps 0..19 beside evaluations counted in iterations to 3,040)."""
    curves = [curve for curve in _key_curves(run) if len(curve.steps)]
    if not curves:
        return
    span = (min(int(curve.steps[0]) for curve in curves), max(int(curve.steps[-1]) for curve in curves))
    markers = {curve.tag: [] for curve in curves}
    for finding in run.findings:
        if finding.step is None and finding.step_range is None:
            continue
        own = [tag for tag in finding.tags if tag in markers]
        # A finding about a curve not drawn is still marked, on the first curve, so its step is seen in context.
        markers[own[0] if own else curves[0].tag].append(finding)
    labels = [cut(printable(curve.tag), MAX_LABEL) for curve in curves]
    label_width = max(cells(label) for label in labels)
    tails = [_tail(curve) for curve in curves]
    tail_width = max(cells(tail) for tail in tails)
    longest = max(len(np.unique(curve.steps)) for curve in curves)
    room = out.width - 2 - label_width - 2 - 2 - tail_width
    if room < MIN_SPARK:  # too narrow for the numbers: keep the picture
        tails, tail_width = ["" for _ in curves], 0
        room = out.width - 2 - label_width - 2
    if room < MIN_SPARK:
        return
    width = min(room, longest)
    for curve, label, tail in zip(curves, labels, tails):
        line = sparkline(curve.steps, curve.values, span, width)
        segments = [(f"  {label.ljust(label_width)}  ", "dim")]
        segments += [(piece, "bad" if piece[0] in (NAN_MARK, INF_MARK) else None) for piece in _runs(line)]
        segments.append((f"  {tail}" if tail else "", "dim"))
        out.line(*_non_empty(segments))
        if markers[curve.tag]:
            out.line(*_marker_line(markers[curve.tag], span, width, 2 + label_width + 2, out.width))


def _runs(line: str) -> list[str]:
    """The sparkline split where marks change, so only NaN/Inf cells get their own colour."""
    pieces: list[str] = []
    for char in line:
        special = char in (NAN_MARK, INF_MARK)
        if pieces and (pieces[-1][-1] in (NAN_MARK, INF_MARK)) == special:
            pieces[-1] += char
        else:
            pieces.append(char)
    return pieces


def _non_empty(segments):
    return [segment for segment in segments if segment[0]]


def _key_curves(run) -> list[Curve]:
    view = RunCurves(run)
    chosen: list[Curve] = []
    for roles in KEY_ROLES:
        for role in roles if isinstance(roles, tuple) else (roles,):
            curve = view.curve(role)
            if curve is not None:
                chosen.append(curve)
                break
    for finding in run.findings:
        for tag in finding.tags:
            curve = view.curve_of(tag) if tag in run.roles else None
            if curve is not None and all(curve.tag != other.tag for other in chosen):
                chosen.append(curve)
    return chosen[:MAX_CURVES]


def _tail(curve: Curve) -> str:
    finite = curve.finite_values
    first = fmt(finite[0]) if len(finite) else "nan"
    last = curve.values[-1]
    scale = " (log)" if _log_scale(finite) else ""
    return f"{first} → {fmt(last)}{scale}"


def _log_scale(finite: np.ndarray) -> bool:
    return bool(len(finite) and finite.min() > 0 and finite.max() / finite.min() > LOG_SCALE_RATIO)


def cell_of(step: int, span: tuple[int, int], width: int) -> int:
    low, high = span
    if high <= low:
        return 0
    return min(max(int((step - low) / (high - low) * width), 0), width - 1)


def sparkline(steps: np.ndarray, values: np.ndarray, span: tuple[int, int], width: int) -> str:
    """``values`` drawn in ``width`` cells over the step range ``span``: each cell shows its most extreme point
    (farthest from the curve's median), NaN as '×' and ±Inf as '!' whenever the cell holds one, ' ' where nothing
    was logged (a validation curve evaluated every few hundred steps leaves gaps)."""
    all_steps = np.asarray(steps)
    steps, values = downsample(all_steps, np.asarray(values, dtype=float), max_points=3 * width)
    finite = values[np.isfinite(values)]
    log = _log_scale(finite)
    shown = np.log10(np.where(np.isfinite(values) & (values > 0), values, 1.0)) if log else values
    if len(finite):
        visible = shown[np.isfinite(values)]
        # On a linear scale the top 5% is clipped to █: a high first point stays the tallest bar without squashing
        # the rest (an overfitting rise of 15% would otherwise vanish under a start 6× higher). A log scale has
        # already tamed the range, and clipping there would hide a spike among the first steps' bars.
        clip = not log and len(visible) >= CLIP_MIN_POINTS
        low, centre = float(visible.min()), float(np.median(visible))
        high = float(np.quantile(visible, CLIP_QUANTILE)) if clip else low
        if high <= low:  # a flat curve with a rare jump: clipping would hide the very jump
            high = float(visible.max())
        # A curve that moves by less than a tenth of its level is drawn flat: stretched to full height, the noise
        # of a loss stuck at chance would look like wild swings.
        least = FLAT_SHARE * abs(centre)
        if high - low < least:
            low, high = centre - least / 2, centre + least / 2
    chars = [" "] * width
    picked: dict[int, float] = {}
    logged = np.zeros(width, dtype=bool)
    logged[[cell_of(int(step), span, width) for step in np.unique(all_steps)]] = True
    for step, value, level in zip(steps, values, shown):
        cell = cell_of(int(step), span, width)
        if math.isnan(value):
            chars[cell] = NAN_MARK
        elif math.isinf(value):
            if chars[cell] != NAN_MARK:
                chars[cell] = INF_MARK
        elif chars[cell] not in (NAN_MARK, INF_MARK):
            if cell not in picked or abs(level - centre) > abs(picked[cell] - centre):
                picked[cell] = float(level)
    for cell, level in picked.items():
        if chars[cell] in (NAN_MARK, INF_MARK):
            continue
        share = min(max((level - low) / (high - low), 0.0), 1.0) if high > low else 0.5
        chars[cell] = BARS[min(int(share * len(BARS)), len(BARS) - 1)]
    # Downsampling keeps a bucket's extremes and its first NaN, so a cell inside a long NaN stretch can be left
    # without a point: it repeats its left neighbour rather than looking like a gap in logging.
    for cell in range(1, width):
        if logged[cell] and chars[cell] == " ":
            chars[cell] = chars[cell - 1]
    return "".join(chars)


def _marker_line(markers: list[Finding], span, width: int, indent: int, line_width: int):
    """'^' under the cell of each finding's step, '~' along its step range, then which finding each is."""
    row = [" "] * width
    for marker in markers:
        if marker.step_range is not None:
            first, last = (cell_of(step, span, width) for step in marker.step_range)
            for cell in range(first, last + 1):
                if row[cell] == " ":
                    row[cell] = RANGE_MARK
    for marker in markers:
        if marker.step is not None:
            row[cell_of(marker.step, span, width)] = STEP_MARK
    names = ", ".join(f"{marker.code} {marker.where()}" for marker in markers)
    marks = "".join(row).rstrip()
    if indent + len(marks) + 2 + cells(names) > line_width:  # the codes alone still say which mark is which
        names = ", ".join(marker.code for marker in markers)
    style = "error" if any(marker.severity == "error" for marker in markers) else "warning"
    return [(" " * indent, None), (marks, style), (f"  {names}", style)]


def _finding(out: Output, finding) -> None:
    where = finding.where()
    out.line(("  ", None), (f"{finding.severity.upper():<7}", finding.severity),
             (f" {finding.code} {finding.symptom}", "bold"), (f"  {where}" if where else "", "dim"))
    out.wrapped(printable(finding.title), indent="      ")
    for item in finding.evidence:
        out.wrapped(printable(item), indent="      · ", style="dim")
    out.wrapped(printable(finding.cheapest_check), indent="      check: ")


def _checklist(runs) -> list[str]:
    """The playbook's first moves once; a step that differs per run (chance level of its n) once per variant."""
    steps: list[str] = []
    for run in runs:
        steps.extend(step for step in first_response(run) if step not in steps)
    return steps
