"""Matplotlib figures of a run's key curves with its findings drawn on them.

Figures are built as ``matplotlib.figure.Figure`` objects on an Agg canvas rather than through pyplot, so
plotting never switches the backend of a user's interactive session and needs no display. Long curves are
downsampled with :func:`curvedoc.report.downsample`, which keeps every spike and the first NaN of each bucket.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from curvedoc.errors import CurvedocError
from curvedoc.features import Curve, RunCurves
from curvedoc.model import Run
from curvedoc.report import WITHOUT_FINDINGS, downsample, printable, verdict
from curvedoc.report.chart import (CURVE_COLOURS, FLIP_SHARE, MAX_PLOT_POINTS, NO_CURVES, SEVERITY_COLOURS, Panel,
                                   chart_panels, chart_title, finding_colour, finding_label, log_scale,
                                   nonfinite_label, panel_for, point_at, range_label, reference_line, shaded_range,
                                   step_limits)
from curvedoc.rules import Finding


def figure_for_run(run: Run, findings: list[Finding] | None = None, *, width: float = 9.0,
                   focused: bool = False) -> Figure:
    """The run's key curves (train/val loss; accuracy, learning rate and gradient norm on small panels below when
    logged) with ``findings`` (default: all of the run's) drawn where their evidence is. ``focused`` keeps only
    the loss panel and the panels of the findings' curves."""
    findings = list(run.findings if findings is None else findings)
    curves = RunCurves(run)
    panels = chart_panels(curves, findings, focused)
    heights = [3 if panel.title == "loss" else 1.2 for panel in panels] or [3]
    height = 0.7 + 0.9 * sum(heights)
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    if not panels:
        axes = figure.add_subplot()
        axes.text(0.5, 0.5, NO_CURVES, ha="center", va="center", transform=axes.transAxes)
        axes.set_axis_off()
        figure.suptitle(_title(run), fontsize=10)
        return figure
    # Fixed margins in inches: matplotlib's constrained layout would double the time to draw a figure.
    grid = figure.add_gridspec(len(panels), 1, height_ratios=heights, left=0.75 / width, right=1 - 0.15 / width,
                               top=1 - 0.35 / height, bottom=0.45 / height, hspace=0.12)
    first = None
    for index, panel in enumerate(panels):
        panel.axes = figure.add_subplot(grid[index], sharex=first)
        if first is None:
            first = panel.axes
            first.set_xlim(*step_limits(panels))
        _draw_panel(panel, curves)
    for panel in panels[:-1]:
        panel.axes.tick_params(labelbottom=False)
    panels[-1].axes.set_xlabel("step")
    for order, finding in enumerate(findings):
        _draw_finding(finding, panels, label_height=0.93 - 0.08 * (order % 4))
    figure.suptitle(_title(run), fontsize=10)
    return figure


def _title(run: Run) -> str:
    return _text(chart_title(run))


def _draw_panel(panel: Panel, curves: RunCurves) -> None:
    axes = panel.axes
    for curve in panel.curves:
        steps, values = downsample(curve.steps, curve.values.astype(float), MAX_PLOT_POINTS)
        # NaN breaks the line where it is; ±Inf is not drawable either, so both become gaps.
        drawable = np.where(np.isfinite(values), values, np.nan)
        axes.plot(steps, drawable, label=_text(curve.tag), color=CURVE_COLOURS[curve.role], linewidth=1.1,
                  marker="." if len(steps) <= 60 else None, markersize=4)
    nonfinite = [curve for curve in panel.curves if curve.first_nonfinite is not None]
    for order, curve in enumerate(nonfinite):
        _mark_nonfinite(axes, curve, label_height=0.06 + 0.09 * order)
    if log_scale(panel.curves):
        axes.set_yscale("log")
    reference = reference_line(curves, panel)
    if reference is not None:
        level, label = reference
        axes.axhline(level, color="#555555", linestyle=":", linewidth=1)
        if label:  # at the right end: the left end is where step ranges are labelled and where a loss starts
            axes.annotate(label, (0.995, level), xycoords=("axes fraction", "data"), fontsize=7, color="#555555",
                          va="bottom", ha="right")
    axes.set_ylabel(panel.title, fontsize=8)
    axes.tick_params(labelsize=7)
    axes.grid(True, alpha=0.25)
    axes.legend(fontsize=7, loc="best", framealpha=0.7)


def _mark_nonfinite(axes, curve: Curve, label_height: float) -> None:
    """NaN/Inf cannot be drawn: a red cross on the top edge at the first one, and a label near the bottom naming
    the curve and step (away from the finding labels at the top)."""
    step, label = nonfinite_label(curve)
    axes.plot([step], [1.0], marker="X", color=SEVERITY_COLOURS["error"], markersize=8, clip_on=False,
              transform=axes.get_xaxis_transform())
    axes.annotate(_text(label), (step, label_height),
                  xycoords=("data", "axes fraction"), fontsize=7, color=SEVERITY_COLOURS["error"],
                  **_beside(axes, step))


def _beside(axes, step: float) -> dict:
    """Placement of a label next to a vertical marker: to its right, or to its left in the right part of the
    plot, where the text would run off the edge."""
    low, high = axes.get_xlim()
    if high > low and (step - low) / (high - low) > FLIP_SHARE:
        return {"xytext": (-4, 0), "textcoords": "offset points", "ha": "right"}
    return {"xytext": (4, 0), "textcoords": "offset points", "ha": "left"}


def _draw_finding(finding: Finding, panels: list[Panel], label_height: float) -> None:
    """Its step range shaded, its step as a dashed line with a label at ``label_height`` (a share of the panel
    height, so several findings' labels do not overlap) and the curve's value there circled."""
    colour = finding_colour(finding)
    target = panel_for(finding, panels)
    axes = target.axes
    if (shaded := shaded_range(finding)) is not None:
        start, stop = shaded
        for panel in panels:
            panel.axes.axvspan(start, stop, color=colour, alpha=0.08, linewidth=0)
        axes.annotate(range_label(finding), (start, 0.0), xycoords=("data", "axes fraction"),
                      xytext=(3, 3), textcoords="offset points", fontsize=7, color=colour)
    if finding.step is None:
        return
    step = finding.step
    for panel in panels:
        panel.axes.axvline(step, color=colour, linestyle="--", linewidth=1, alpha=0.8)
    label = finding_label(finding, step)
    point = point_at(finding, target, step)
    if point is not None:
        axes.plot([point[0]], [point[1]], marker="o", markersize=8, markerfacecolor="none", markeredgecolor=colour,
                  markeredgewidth=2)
    axes.annotate(label, (step, label_height), xycoords=("data", "axes fraction"), fontsize=8, color=colour,
                  fontweight="bold", **_beside(axes, step))


def _text(text: str) -> str:
    """Log text as a plot label: literal, never mathtext ("$...$"), never a hidden legend entry (leading "_"),
    control characters (which no font draws) shown as "?"."""
    text = printable(text)
    return ("\u200b" + text if text.startswith("_") else text).replace("$", r"\$")


def write_plot_files(runs, options) -> dict[int, Path]:
    """With ``--plots DIR``: a PNG per run with warnings or errors in DIR, by ``id(run)``, each path relative to
    where the report is written (as given when the report is printed)."""
    folder = options.plots_dir
    base = options.output.parent if options.output is not None else None
    written = {}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for number, run in enumerate(runs, start=1):
            if verdict(run) in WITHOUT_FINDINGS:
                continue
            slug = re.sub(r"[^A-Za-z0-9_-]+", "-", run.name).strip("-")[:40] or "run"
            target = folder / f"{number:03d}-{slug}.png"
            figure_for_run(run).savefig(target, dpi=100)
            written[id(run)] = Path(os.path.relpath(target, base)) if base is not None else target
    except OSError as exc:
        raise CurvedocError(folder, f"cannot write plots: {exc.strerror or exc}") from None
    return written
