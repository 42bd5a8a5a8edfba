"""Matplotlib figures of a run's key curves with its findings drawn on them.

Figures are built as ``matplotlib.figure.Figure`` objects on an Agg canvas rather than through pyplot, so
plotting never switches the backend of a user's interactive session and needs no display. Long curves are
downsampled with :func:`curvedoc.report.downsample`, which keeps every spike and the first NaN of each bucket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from curvedoc.features import Curve, RunCurves, chance_loss_of
from curvedoc.model import Run
from curvedoc.report import downsample, printable
from curvedoc.roles import Role
from curvedoc.rules import Finding

MAX_PLOT_POINTS = 2000
LOG_SCALE_DECADES = 2  # a loss spanning more than this many decades is drawn on a log axis

SEVERITY_COLOURS = {"error": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
CURVE_COLOURS = {Role.TRAIN_LOSS: "#1f77b4", Role.VAL_LOSS: "#ff7f0e", Role.TEST_LOSS: "#2ca02c",
                 Role.TRAIN_ACC: "#1f77b4", Role.VAL_ACC: "#ff7f0e", Role.TEST_ACC: "#2ca02c",
                 Role.LR: "#6a3d9a", Role.GRAD_NORM: "#8c564b", Role.SCORE: "#17becf", Role.OTHER: "#7f7f7f"}

# Panels from top to bottom: the loss panel is tall, the others are small companions sharing its step axis.
_PANELS = (
    ("loss", (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TEST_LOSS)),
    ("accuracy", (Role.TRAIN_ACC, Role.VAL_ACC, Role.TEST_ACC)),
    ("score", (Role.SCORE,)),
    ("learning rate", (Role.LR,)),
    ("grad norm", (Role.GRAD_NORM,)),
    ("other", (Role.OTHER,)),
)
_PANEL_OF_ROLE = {role: title for title, roles in _PANELS for role in roles}


@dataclass
class _Panel:
    title: str
    curves: list[Curve]
    axes: object = None


def figure_for_run(run: Run, findings: list[Finding] | None = None, *, width: float = 9.0,
                   focused: bool = False) -> Figure:
    """The run's key curves (train/val loss; accuracy, learning rate and gradient norm on small panels below when
    logged) with ``findings`` (default: all of the run's) drawn where their evidence is. ``focused`` keeps only
    the loss panel and the panels of the findings' curves."""
    findings = list(run.findings if findings is None else findings)
    curves = RunCurves(run)
    panels = _panels(curves, findings)
    if focused:
        named = {tag for finding in findings for tag in finding.tags}
        panels = [panel for panel in panels
                  if panel.title == "loss" or any(curve.tag in named for curve in panel.curves)]
    heights = [3 if panel.title == "loss" else 1.2 for panel in panels] or [3]
    height = 0.7 + 0.9 * sum(heights)
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    if not panels:
        axes = figure.add_subplot()
        axes.text(0.5, 0.5, "no loss, accuracy, learning-rate or gradient curve logged", ha="center",
                  va="center", transform=axes.transAxes)
        axes.set_axis_off()
        figure.suptitle(_title(run), fontsize=10)
        return figure
    # Fixed margins in inches: matplotlib's constrained layout would double the time to draw a figure.
    grid = figure.add_gridspec(len(panels), 1, height_ratios=heights, left=0.75 / width, right=1 - 0.15 / width,
                               top=1 - 0.35 / height, bottom=0.45 / height, hspace=0.12)
    # Autoscaling ignores NaN points: span every logged step, so a run that dies at step 25 of 40 shows the rest.
    all_steps = np.concatenate([curve.steps for panel in panels for curve in panel.curves])
    low, high = float(all_steps.min()), float(all_steps.max())
    pad = max((high - low) * 0.02, 0.5)
    first = None
    for index, panel in enumerate(panels):
        panel.axes = figure.add_subplot(grid[index], sharex=first)
        if first is None:
            first = panel.axes
            first.set_xlim(low - pad, high + pad)
        _draw_panel(panel, curves)
    for panel in panels[:-1]:
        panel.axes.tick_params(labelbottom=False)
    panels[-1].axes.set_xlabel("step")
    for order, finding in enumerate(findings):
        _draw_finding(finding, panels, label_height=0.93 - 0.08 * (order % 4))
    figure.suptitle(_title(run), fontsize=10)
    return figure


def figure_for_finding(run: Run, finding: Finding, *, width: float = 9.0) -> Figure:
    """The loss and the finding's own curves with only ``finding`` drawn: a plot per finding, as the HTML report
    shows them."""
    return figure_for_run(run, [finding], width=width, focused=True)


def _title(run: Run) -> str:
    return _text(f"{run.name}  [{run.format}]")


def _panels(curves: RunCurves, findings: list[Finding]) -> list[_Panel]:
    """The main curve of each role, plus the curves a finding names that are not among them, grouped into panels."""
    chosen: dict[str, Curve] = {}
    for role in _PANEL_OF_ROLE:
        if role is not Role.OTHER and (curve := curves.curve(role)) is not None:
            chosen[curve.tag] = curve
    for finding in findings:
        for tag in finding.tags:
            if tag not in chosen and tag in curves.run.roles and (curve := curves.curve_of(tag)) is not None:
                chosen[tag] = curve
    by_panel: dict[str, list[Curve]] = {}
    for curve in chosen.values():
        by_panel.setdefault(_PANEL_OF_ROLE[curve.role], []).append(curve)
    return [_Panel(title, by_panel[title]) for title, _ in _PANELS if title in by_panel]


def _draw_panel(panel: _Panel, curves: RunCurves) -> None:
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
    if _log_scale(panel.curves):
        axes.set_yscale("log")
    if panel.title == "loss":
        chance = _chance(curves, panel.curves)
        if chance is not None:
            axes.axhline(chance, color="#555555", linestyle=":", linewidth=1)
            # At the right end: the left end is where step ranges are labelled and where a loss starts.
            axes.annotate(f"chance −log(1/{curves.n_classes}) = {chance:.3g}", (0.995, chance),
                          xycoords=("axes fraction", "data"), fontsize=7, color="#555555", va="bottom", ha="right")
    elif panel.title == "accuracy" and curves.chance_accuracy is not None:
        axes.axhline(curves.chance_accuracy, color="#555555", linestyle=":", linewidth=1)
    axes.set_ylabel(panel.title, fontsize=8)
    axes.tick_params(labelsize=7)
    axes.grid(True, alpha=0.25)
    axes.legend(fontsize=7, loc="best", framealpha=0.7)


def _mark_nonfinite(axes, curve: Curve, label_height: float) -> None:
    """NaN/Inf cannot be drawn: a red cross on the top edge at the first one, and a label near the bottom naming
    the curve and step (away from the finding labels at the top)."""
    index = curve.first_nonfinite
    step = int(curve.steps[index])
    value = curve.values[index]
    axes.plot([step], [1.0], marker="X", color=SEVERITY_COLOURS["error"], markersize=8, clip_on=False,
              transform=axes.get_xaxis_transform())
    label = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "−Inf")
    axes.annotate(_text(f"{curve.tag}: {label} from step {step}"), (step, label_height),
                  xycoords=("data", "axes fraction"), fontsize=7, color=SEVERITY_COLOURS["error"],
                  **_beside(axes, step))


def _beside(axes, step: float) -> dict:
    """Placement of a label next to a vertical marker: to its right, or to its left in the right part of the
    plot, where the text would run off the edge."""
    low, high = axes.get_xlim()
    if high > low and (step - low) / (high - low) > 0.75:
        return {"xytext": (-4, 0), "textcoords": "offset points", "ha": "right"}
    return {"xytext": (4, 0), "textcoords": "offset points", "ha": "left"}


def _log_scale(panel_curves: list[Curve]) -> bool:
    values = np.concatenate([curve.finite_values for curve in panel_curves]) if panel_curves else np.array([])
    if not len(values) or values.min() <= 0:
        return False
    return math.log10(values.max() / values.min()) > LOG_SCALE_DECADES


def _chance(curves: RunCurves, panel_curves: list[Curve]) -> float | None:
    for curve in panel_curves:
        if curve.role is Role.TRAIN_LOSS or curve.role is Role.VAL_LOSS:
            chance = chance_loss_of(curves, curve)
            if chance is not None:
                return chance
    return None


def _draw_finding(finding: Finding, panels: list[_Panel], label_height: float) -> None:
    """Its step range shaded, its step as a dashed line with a label at ``label_height`` (a share of the panel
    height, so several findings' labels do not overlap) and the curve's value there circled."""
    colour = SEVERITY_COLOURS.get(finding.severity, "#555555")
    target = _panel_for(finding, panels)
    axes = target.axes
    if finding.step_range is not None and finding.symptom != "overfitting":
        start, stop = finding.step_range
        for panel in panels:
            panel.axes.axvspan(start, stop, color=colour, alpha=0.08, linewidth=0)
        axes.annotate(f"{finding.code} {finding.symptom}", (start, 0.0), xycoords=("data", "axes fraction"),
                      xytext=(3, 3), textcoords="offset points", fontsize=7, color=colour)
    if finding.step is None:
        return
    step = finding.step
    for panel in panels:
        panel.axes.axvline(step, color=colour, linestyle="--", linewidth=1, alpha=0.8)
    label = {"nan_inf": f"first NaN/Inf: step {step}", "spike": f"spike at step {step}",
             "exploding_grad": f"gradient spike at step {step}",
             "overfitting": f"best validation, step {step}: stop here"}.get(finding.symptom,
                                                                         f"{finding.code} at step {step}")
    point = None if finding.symptom == "nan_inf" else _point_at(finding, target, step)  # a NaN has no point
    if point is not None:
        axes.plot([point[0]], [point[1]], marker="o", markersize=8, markerfacecolor="none", markeredgecolor=colour,
                  markeredgewidth=2)
    axes.annotate(label, (step, label_height), xycoords=("data", "axes fraction"), fontsize=8, color=colour,
                  fontweight="bold", **_beside(axes, step))


def _panel_for(finding: Finding, panels: list[_Panel]) -> _Panel:
    """The panel showing the finding's first tag (the loss panel when none of its tags is drawn)."""
    for tag in finding.tags:
        for panel in panels:
            if any(curve.tag == tag for curve in panel.curves):
                return panel
    return panels[0]


def _point_at(finding: Finding, panel: _Panel, step: int) -> tuple[int, float] | None:
    """The finding's curve value at its step (nearest finite logged step), to circle it."""
    tags = set(finding.tags)
    if finding.symptom == "overfitting":
        tags = {curve.tag for curve in panel.curves if curve.role is Role.VAL_LOSS} or tags
    for curve in panel.curves:
        if curve.tag in tags and len(curve.finite_steps):
            index = int(np.argmin(np.abs(curve.finite_steps - step)))
            return int(curve.finite_steps[index]), float(curve.finite_values[index])
    return None


def _text(text: str) -> str:
    """Log text as a plot label: literal, never mathtext ("$...$"), never a hidden legend entry (leading "_"),
    control characters (which no font draws) shown as "?"."""
    text = printable(text)
    return ("\u200b" + text if text.startswith("_") else text).replace("$", r"\$")
