"""What a chart of a run shows, whatever draws it (matplotlib for PNGs, curvedoc.report.svg for the HTML report):
its panels and their curves, the chance level, the scale, where each finding is drawn and with which label."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from curvedoc.features import (
    ACCURACY_ROLES,
    Curve,
    RunCurves,
    chance_accuracy_in_units,
    chance_loss_of,
)
from curvedoc.roles import Role
from curvedoc.rules import Finding

MAX_PLOT_POINTS = 2000
NO_CURVES = "no loss, accuracy, learning-rate or gradient curve logged"
# A label next to a vertical marker goes to its left in this right-hand share of the plot, not off the edge
FLIP_SHARE = 0.75
LOG_SCALE_DECADES = 2  # a loss spanning more than this many decades is drawn on a log axis

SEVERITY_COLOURS = {"error": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
CURVE_COLOURS = {Role.TRAIN_LOSS: "#1f77b4", Role.VAL_LOSS: "#ff7f0e", Role.TEST_LOSS: "#2ca02c",
                 Role.TRAIN_ACC: "#1f77b4", Role.VAL_ACC: "#ff7f0e", Role.TEST_ACC: "#2ca02c",
                 Role.LR: "#6a3d9a", Role.GRAD_NORM: "#8c564b", Role.SCORE: "#17becf", Role.ADVERSARIAL: "#bcbd22",
                 Role.OTHER: "#7f7f7f"}

# Panels from top to bottom: the loss panel is tall, the others are small companions sharing its step axis.
PANELS = (
    ("loss", (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TEST_LOSS)),
    ("accuracy", ACCURACY_ROLES),
    ("score", (Role.SCORE,)),
    ("learning rate", (Role.LR,)),
    ("grad norm", (Role.GRAD_NORM,)),
    ("adversarial", (Role.ADVERSARIAL,)),
    ("other", (Role.OTHER,)),
)
PANEL_OF_ROLE = {role: title for title, roles in PANELS for role in roles}


@dataclass
class Panel:
    title: str
    curves: list[Curve]
    axes: object = None


def panels_of(curves: RunCurves, findings: list[Finding]) -> list[Panel]:
    """The main curve of each role, plus the curves a finding names that are not among them, grouped into panels."""
    chosen: dict[str, Curve] = {}
    for role in PANEL_OF_ROLE:
        if role is not Role.OTHER and (curve := curves.curve(role)) is not None:
            chosen[curve.tag] = curve
    for finding in findings:
        for tag in finding.tags:
            if tag not in chosen and tag in curves.run.roles and (curve := curves.curve_of(tag)) is not None:
                chosen[tag] = curve
    by_panel: dict[str, list[Curve]] = {}
    for curve in chosen.values():
        by_panel.setdefault(PANEL_OF_ROLE[curve.role], []).append(curve)
    return [Panel(title, by_panel[title]) for title, _ in PANELS if title in by_panel]


def chart_panels(curves: RunCurves, findings: list[Finding], focused: bool = False) -> list[Panel]:
    """The panels of a chart of ``findings``; ``focused``: only the loss panel and those of the findings' curves."""
    panels = panels_of(curves, findings)
    if focused:
        named = {tag for finding in findings for tag in finding.tags}
        panels = [panel for panel in panels
                  if panel.title == "loss" or any(curve.tag in named for curve in panel.curves)]
    return panels


def log_scale(panel_curves: list[Curve]) -> bool:
    values = np.concatenate([curve.finite_values for curve in panel_curves]) if panel_curves else np.array([])
    if not len(values) or values.min() <= 0:
        return False
    return math.log10(values.max() / values.min()) > LOG_SCALE_DECADES


def chart_title(run) -> str:
    return f"{run.name}  [{run.format}]"


def step_limits(panels: list[Panel]) -> tuple[float, float]:
    """Every logged step, a little padded: autoscaling ignores NaN points, and a run that dies at step 25 of 40
    shows the rest."""
    steps = np.concatenate([curve.steps for panel in panels for curve in panel.curves])
    low, high = float(steps.min()), float(steps.max())
    pad = max((high - low) * 0.02, 0.5)
    return low - pad, high + pad


def reference_line(curves: RunCurves, panel: Panel) -> tuple[float, str] | None:
    """The chance level a panel is drawn against, and its label: −log(1/n) on the loss panel, 1/n (unlabelled, in
    the unit the accuracy is logged in) on the accuracy panel."""
    if panel.title == "loss":
        level = chance_level(curves, panel.curves)
        return None if level is None else (level, f"chance −log(1/{curves.n_classes}) = {level:.3g}")
    if panel.title == "accuracy":
        return next(((level, "") for curve in panel.curves
                     if (level := chance_accuracy_in_units(curves, curve)) is not None), None)
    return None


def nonfinite_label(curve: Curve) -> tuple[int, str]:
    """The step of the curve's first NaN/Inf, and the label naming it."""
    step = int(curve.steps[curve.first_nonfinite])
    value = curve.values[curve.first_nonfinite]
    kind = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "−Inf")
    return step, f"{curve.tag}: {kind} from step {step}"


def chance_level(curves: RunCurves, panel_curves: list[Curve]) -> float | None:
    for curve in panel_curves:
        if curve.role is Role.TRAIN_LOSS or curve.role is Role.VAL_LOSS:
            chance = chance_loss_of(curves, curve)
            if chance is not None:
                return chance
    return None


def panel_for(finding: Finding, panels: list[Panel]) -> Panel:
    """The panel showing the finding's first tag (the loss panel when none of its tags is drawn)."""
    for tag in finding.tags:
        for panel in panels:
            if any(curve.tag == tag for curve in panel.curves):
                return panel
    return panels[0]


def point_at(finding: Finding, panel: Panel, step: int) -> tuple[int, float] | None:
    """The finding's curve value at its step (nearest finite logged step), to circle it; a NaN has none."""
    if finding.symptom == "nan_inf":
        return None
    tags = set(finding.tags)
    if finding.symptom == "overfitting":
        tags = {curve.tag for curve in panel.curves if curve.role is Role.VAL_LOSS} or tags
    for curve in panel.curves:
        if curve.tag in tags and len(curve.finite_steps):
            index = int(np.argmin(np.abs(curve.finite_steps - step)))
            return int(curve.finite_steps[index]), float(curve.finite_values[index])
    return None


def finding_colour(finding: Finding) -> str:
    return SEVERITY_COLOURS.get(finding.severity, "#555555")


def shaded_range(finding: Finding) -> tuple[int, int] | None:
    """The steps drawn shaded, labelled :func:`range_label`: an overfitting finding's range is not, its
    best-validation line says where it begins."""
    return None if finding.symptom == "overfitting" else finding.step_range


def range_label(finding: Finding) -> str:
    return f"{finding.code} {finding.symptom}"


def finding_label(finding: Finding, step: int) -> str:
    return {"nan_inf": f"first NaN/Inf: step {step}", "spike": f"spike at step {step}",
            "exploding_grad": f"gradient spike at step {step}",
            "overfitting": f"best validation, step {step}: stop here"}.get(finding.symptom,
                                                                        f"{finding.code} at step {step}")
