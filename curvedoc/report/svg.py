"""A run's chart as inline SVG, for the HTML report, the audit's run pages and notebooks.

The same chart as the matplotlib figures (curvedoc.report.chart says what it shows: the panels, the chance level,
where each finding is drawn), drawn as a few polylines and labels instead of a rasterised figure: about a
millisecond a chart rather than a tenth of a second, which is what an audit writing a page for each of thousands
of runs needs, and crisp at any zoom. Every label is log text and is escaped; nothing else comes from the log.
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.features import Curve, RunCurves
from curvedoc.model import Run
from curvedoc.report import downsample, markup_text
from curvedoc.report.chart import (CURVE_COLOURS, FLIP_SHARE, NO_CURVES, SEVERITY_COLOURS, Panel, chart_panels,
                                   chart_title, finding_colour, finding_label, log_scale, nonfinite_label, panel_for,
                                   point_at, range_label, reference_line, shaded_range, step_limits)
from curvedoc.rules import Finding

WIDTH = 860
LEFT, RIGHT, TOP, BOTTOM = 64, 14, 26, 30  # margins in px
PANEL_HEIGHT = {"loss": 210}
SMALL_PANEL_HEIGHT = 78
GAP = 10
SVG_POINTS = 600  # per curve: more than the chart's width in px would not show
TICKS = 5


def svg_for_run(run: Run, findings: list[Finding] | None = None, *, focused: bool = False,
                description: str = "") -> str:
    findings = list(run.findings if findings is None else findings)
    curves = RunCurves(run)
    panels = chart_panels(curves, findings, focused)
    title = markup_text(chart_title(run))
    if not panels:
        return _svg(60, [f'<text x="{WIDTH / 2}" y="36" text-anchor="middle">{NO_CURVES}</text>'],
                    description or title)
    x = _Scale(*step_limits(panels), LEFT, WIDTH - RIGHT)
    parts = [f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-size="12">{title}</text>']
    top = TOP
    frames = []
    for index, panel in enumerate(panels):
        height = PANEL_HEIGHT.get(panel.title, SMALL_PANEL_HEIGHT)
        frame = _Frame(panel, x, top, top + height, log_scale(panel.curves))
        reference = reference_line(curves, panel)
        frame.fit(reference[0] if reference else None)
        parts += frame.axes(last=index == len(panels) - 1)
        parts += frame.reference(reference)
        parts += frame.curves()
        frames.append(frame)
        top += height + GAP
    for order, finding in enumerate(findings):
        parts += _finding_marks(finding, frames, order)
    return _svg(top - GAP + BOTTOM, parts, description or title)


class _Scale:
    def __init__(self, low: float, high: float, start: float, stop: float, log: bool = False):
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        self.start, self.stop = start, stop

    def __call__(self, values):
        values = np.log10(values) if self.log else np.asarray(values, float)
        span = (self.high - self.low) or 1.0
        return self.start + (values - self.low) / span * (self.stop - self.start)

    def ticks(self) -> list[float]:
        if self.log:
            return [10.0 ** power for power in range(math.ceil(self.low), math.floor(self.high) + 1)][:8] or [
                10 ** self.low]
        step = _nice((self.high - self.low) / TICKS)
        first = math.ceil(self.low / step) * step
        return [first + step * index for index in range(int((self.high - first) / step) + 1)]


def _nice(raw: float) -> float:
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(factor * power for factor in (1, 2, 2.5, 5, 10) if factor * power >= raw)


class _Frame:
    """One panel: its box, its y scale, and what is drawn in it."""

    def __init__(self, panel: Panel, x: _Scale, top: float, bottom: float, log: bool):
        self.panel, self.x, self.top, self.bottom, self.log = panel, x, top, bottom, log
        self.y: _Scale | None = None

    def fit(self, reference: float | None) -> None:
        values = np.concatenate([curve.finite_values for curve in self.panel.curves])
        if reference is not None and math.isfinite(reference):
            values = np.append(values, reference)
        if not len(values):
            values = np.array([0.0, 1.0])
        low, high = float(values.min()), float(values.max())
        if self.log:
            low, high = low / 1.15, high * 1.15
        else:
            margin = (high - low) * 0.06 or abs(high) * 0.05 or 0.5
            low, high = low - margin, high + margin
            # a curve that moves by less than a tenth of its level is drawn as the flat line it is, not as a climb
            middle, least = (low + high) / 2, 0.1 * abs(low + high) / 2
            if high - low < least:
                low, high = middle - least / 2, middle + least / 2
        self.y = _Scale(low, high, self.bottom, self.top, self.log)

    def axes(self, last: bool) -> list[str]:
        parts = [f'<rect x="{LEFT}" y="{self.top}" width="{WIDTH - LEFT - RIGHT}" height="{self.bottom - self.top}" '
                 f'fill="none" stroke="#bbb"/>',
                 f'<text x="12" y="{(self.top + self.bottom) / 2:.1f}" font-size="10" text-anchor="middle" '
                 f'transform="rotate(-90 12 {(self.top + self.bottom) / 2:.1f})">'
                 f'{markup_text(self.panel.title)}</text>']
        for value in self.y.ticks():
            y = float(self.y(value))
            if self.top - 0.5 <= y <= self.bottom + 0.5:
                parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                             f'<text x="{LEFT - 4}" y="{y + 3:.1f}" font-size="9" text-anchor="end">'
                             f"{_number(value)}</text>")
        if last:
            for value in self.x.ticks():
                x = float(self.x(value))
                if LEFT <= x <= WIDTH - RIGHT:
                    parts.append(f'<text x="{x:.1f}" y="{self.bottom + 13}" font-size="9" text-anchor="middle">'
                                 f"{_number(value)}</text>")
            parts.append(f'<text x="{WIDTH - RIGHT}" y="{self.bottom + 26}" font-size="9" text-anchor="end">step'
                         "</text>")
        return parts

    def reference(self, reference: tuple[float, str] | None) -> list[str]:
        """The chance level: dotted, named at its right end."""
        if reference is None:
            return []
        level, label = reference
        if not math.isfinite(level) or (self.log and level <= 0):
            return []
        y = float(self.y(level))
        return [f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#555" '
                f'stroke-dasharray="2 3"/>'
                + (f'<text x="{WIDTH - RIGHT - 3}" y="{y - 3:.1f}" font-size="9" fill="#555" text-anchor="end">'
                   f"{markup_text(label)}</text>" if label else "")]

    def curves(self) -> list[str]:
        parts = []
        for order, curve in enumerate(self.panel.curves):
            colour = CURVE_COLOURS[curve.role]
            parts += self._line(curve, colour)
            parts.append(f'<text x="{WIDTH - RIGHT - 4}" y="{self.top + 12 + 11 * order}" font-size="9" '
                         f'text-anchor="end" fill="{colour}">{markup_text(curve.tag)}</text>')
            if curve.first_nonfinite is not None:
                parts += self._nonfinite(curve, order)
        return parts

    def _line(self, curve: Curve, colour: str) -> list[str]:
        steps, values = downsample(curve.steps, curve.values.astype(float), SVG_POINTS)
        drawable = np.isfinite(values) & ((values > 0) if self.log else True)
        xs, ys = self.x(steps), np.full(len(values), np.nan)
        ys[drawable] = self.y(values[drawable])
        # a NaN breaks the line where it is: each finite stretch is its own polyline
        breaks = np.flatnonzero(np.diff(drawable.astype(np.int8)) != 0) + 1
        parts = []
        for segment in np.split(np.arange(len(values)), breaks):
            if len(segment) and drawable[segment[0]]:
                points = " ".join(f"{xs[i]:.1f},{ys[i]:.1f}" for i in segment)
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.3" points="{points}"/>')
        if len(steps) <= 60:
            parts += [f'<circle cx="{xs[i]:.1f}" cy="{ys[i]:.1f}" r="2" fill="{colour}"/>'
                      for i in np.flatnonzero(drawable)]
        return parts

    def _nonfinite(self, curve: Curve, order: int) -> list[str]:
        step, label = nonfinite_label(curve)
        x = float(self.x(step))
        colour = SEVERITY_COLOURS["error"]
        return [f'<text x="{x:.1f}" y="{self.top + 4}" font-size="12" fill="{colour}" text-anchor="middle">✕</text>',
                _beside(x, self.bottom - 6 - 11 * order, label, colour, 9)]


def _finding_marks(finding: Finding, frames: list[_Frame], order: int) -> list[str]:
    """As the matplotlib figure draws it: its step range shaded, its step dashed with a label, its point circled."""
    colour = finding_colour(finding)
    target = next(frame for frame in frames if frame.panel is panel_for(finding, [f.panel for f in frames]))
    parts = []
    if (shaded := shaded_range(finding)) is not None:
        start, stop = (float(frames[0].x(value)) for value in shaded)
        parts.append(f'<rect x="{start:.1f}" y="{frames[0].top}" width="{max(stop - start, 1):.1f}" '
                     f'height="{frames[-1].bottom - frames[0].top}" fill="{colour}" fill-opacity="0.08"/>')
        parts.append(f'<text x="{start + 3:.1f}" y="{target.bottom - 4}" font-size="9" fill="{colour}">'
                     f"{markup_text(range_label(finding))}</text>")
    if finding.step is None:
        return parts
    x = float(frames[0].x(finding.step))
    parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frames[0].top}" y2="{frames[-1].bottom}" stroke="{colour}" '
                 f'stroke-dasharray="5 3"/>')
    point = point_at(finding, target.panel, finding.step)
    if point is not None and (not target.log or point[1] > 0):
        parts.append(f'<circle cx="{float(target.x(point[0])):.1f}" cy="{float(target.y(point[1])):.1f}" r="6" '
                     f'fill="none" stroke="{colour}" stroke-width="2"/>')
    parts.append(_beside(x, target.top + 14 + 12 * (order % 4), finding_label(finding, finding.step), colour, 10,
                         bold=True))
    return parts


def _beside(x: float, y: float, label: str, colour: str, size: int, bold: bool = False) -> str:
    """A label next to a vertical marker: to its right, or to its left in the right quarter, where it would run
    off the edge."""
    left = (x - LEFT) / (WIDTH - LEFT - RIGHT) > FLIP_SHARE
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x + (-4 if left else 4):.1f}" y="{y:.1f}" font-size="{size}" fill="{colour}"{weight} '
            f'text-anchor="{"end" if left else "start"}">{markup_text(label)}</text>')


def _svg(height: float, parts: list[str], description: str) -> str:
    return (f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" height="{height:.0f}" '
            f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="sans-serif"><title>{markup_text(description)}</title>'
            + "".join(parts) + "</svg>")


def _number(value: float) -> str:
    return f"{value:.3g}".replace("-", "−")
