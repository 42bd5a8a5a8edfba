"""Unstable training: a loss that swings wildly without settling, and a loss that suddenly jumps.

Both rules read the main train loss (the validation loss when no train loss is logged), and only its finite
part before the first NaN/Inf: the jump into NaN is CD101's finding, not a spike or a swing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from curvedoc.features import Curve, RunCurves, fmt, median_filter, noise_reach, trailing_median
from curvedoc.roles import Role
from curvedoc.rules import ERROR, WARNING, Found, Limits, Threshold, rule

INTERDECILE_TO_SIGMA = 2.563  # the 10th–90th percentile range of a Gaussian, in σ



def loss_curve(run: RunCurves) -> Curve | None:
    """The loss the stability rules judge: train loss, else validation loss (an eval-only log)."""
    return run.curve(Role.TRAIN_LOSS) or run.curve(Role.VAL_LOSS)


def finite_prefix(curve: Curve) -> np.ndarray:
    """The values before the first NaN/Inf: after it the curve describes a broken run, not a training one."""
    return curve.values[:curve.first_nonfinite] if curve.first_nonfinite is not None else curve.values


def spread(values: np.ndarray) -> float:
    """How far the values swing around their straight-line trend, as a Gaussian σ from the 10th–90th percentile
    range: a rare hard batch (2% of a tiny-batch run) does not move it, swings on one step in ten or more do."""
    if len(values) < 3:
        return 0.0
    positions = np.arange(len(values))
    residual = values - np.polyval(np.polyfit(positions, values, 1), positions)
    low, high = np.percentile(residual, [10, 90])
    return float((high - low) / INTERDECILE_TO_SIGMA)


def _lr_note(run: RunCurves, first_step: int) -> list[str]:
    lr = run.curve(Role.LR)
    if lr is None or not len(lr.finite_values):
        return []
    late = lr.finite_values[lr.finite_steps >= first_step]
    return [f"{lr.tag} in that part: {fmt(float(np.median(late)))}"] if len(late) else []


@rule(
    "CD401", "loss-oscillation", symptom="oscillation", severity=WARNING,
    causes=(
        "learning rate too high: each step overshoots the minimum",
        "batch too small for the learning rate (gradient noise larger than the signal)",
        "missing or broken input normalisation (badly scaled features make the loss surface steep)",
    ),
    check="drop the learning rate 10× and rerun the same steps: the swings must shrink; then try a 4× larger batch",
    thresholds={
        "min_late_points": Threshold(20, "fewest finite loss points the late part needs before its swings are "
                                         "judged"),
        "late_share": Threshold(1 / 3, "share of the run, at its end, that must still be swinging"),
        "swing_vs_level": Threshold(0.5, "swing σ of the late part (10th–90th percentile range around its trend) "
                                         "as a share of its mean level, from which the loss counts as swinging"),
        "swing_vs_progress": Threshold(0.4, "swing σ of the late part as a share of the drop from the first "
                                            "values to the late mean level, from which the swings rival what "
                                            "was learned"),
        "swing_vs_scale": Threshold(0.2, "swing σ of the late part as a share of the loss's natural scale (its "
                                         "first values, or chance −log(1/n) when larger), from which the swings "
                                         "are wild rather than small wobbles of a low loss"),
        "diverged_factor": Threshold(3.0, "a late level this many times the start level is divergence, not "
                                          "oscillation, and is left to the spike and NaN rules"),
    },
)
def oscillation(run: RunCurves, limits: Limits):
    """The loss still swings wildly in the last third of the run: around its trend there, its swings (a σ from
    the 10th–90th percentile range, so one rare hard batch does not count) are at least half its mean level and
    at least 40% of the progress made since the start, and at least a fifth of the loss's scale (its first value or
    chance, whichever is larger). A noisy tiny-batch run that converges swings a lot
    relative to its low final level, but little relative to its progress, and does not fire."""
    curve = loss_curve(run)
    if curve is None:
        return None
    values = finite_prefix(curve)
    late_from = int(len(values) * (1 - limits["late_share"]))
    late = values[late_from:]
    if len(late) < limits["min_late_points"]:
        return None
    start = float(np.median(values[:3]))
    level = float(np.mean(late))
    swing = spread(late)
    progress = start - level
    if not math.isfinite(swing) or level > limits["diverged_factor"] * abs(start):
        return None  # values near the float limit, or a loss that diverged: not a swing
    scale = max(abs(start), run.chance_loss or 0.0)
    if (swing < limits["swing_vs_level"] * abs(level) or swing < limits["swing_vs_progress"] * max(progress, 0.0)
            or swing < limits["swing_vs_scale"] * scale):
        return None
    first_step, last_step = int(curve.steps[late_from]), int(curve.steps[len(values) - 1])
    progress_note = (f"the swings are {swing / progress:.2g}× that progress" if progress > 0
                     else "the loss made no progress since the start")
    low, high = np.percentile(late, [10, 90])
    return Found(
        f"{curve.tag} keeps swinging through the last {limits['late_share']:.0%} of the run",
        [curve.tag],
        [f"steps {first_step}–{last_step}: swing σ = {fmt(swing)} around the trend, mean level {fmt(level)} "
         f"({swing / abs(level) if level else math.inf:.0%} of the level); 10th–90th percentile "
         f"{fmt(low)} … {fmt(high)}",
         f"first values {fmt(start)} → late mean {fmt(level)}: {progress_note}",
         *_lr_note(run, first_step)],
        step_range=(first_step, last_step),
    )


@dataclass
class Jump:
    """The highest jump of a curve above the running median of the points before it."""

    index: int
    rise: float
    baseline: float
    reach: float  # how far the curve's own noise reaches elsewhere (its rare excursions)
    recovered: int | None  # first index back at the pre-jump level
    others: np.ndarray  # first index of every other jump event that passes the same tests


def _highest_jump(values: np.ndarray, curve: Curve, limits: Limits, min_size: float) -> Jump | None:
    window, sigma = curve.window, curve.noise
    baseline = trailing_median(values, window)
    rise = values - baseline
    rise[0] = 0.0  # the first point has nothing before it to jump from
    peak = int(np.argmax(rise))
    back = np.flatnonzero(curve.smooth[peak + 1:len(values)] <= baseline[peak] + limits["recovered_sigmas"] * sigma)
    recovered = int(back[0]) + peak + 1 if len(back) else None
    event = slice(max(0, peak - window), max(peak + window + 1, recovered or len(values)))
    reach = noise_reach(rise, event)
    progress_before = values[0] - baseline
    is_jump = ((rise > 0) & (rise >= (min_size - 1) * np.abs(baseline)) & (rise >= limits["min_sigmas"] * sigma)
               & (rise >= limits["beyond_noise"] * reach) & (progress_before > 0)
               & (rise >= limits["min_undone"] * progress_before))
    if not is_jump[peak]:
        return None
    indices = np.flatnonzero(is_jump)
    starts = indices[np.r_[True, np.diff(indices) > window]]
    return Jump(peak, float(rise[peak]), float(baseline[peak]), reach, recovered,
                starts[(starts < event.start) | (starts >= event.stop)])


@rule(
    "CD402", "loss-spike", symptom="spike", severity=WARNING,
    causes=(
        "a corrupt or mislabelled example (or an unnormalised file) in that batch",
        "learning-rate warmup ending too high, or a schedule jump at that step",
        "an exploding gradient without clipping",
    ),
    check="log the batch (indices, input min/max, labels) at the spike step and recompute its loss; add gradient "
          "clipping (clip_grad_norm_ 1.0) and rerun to that step",
    thresholds={
        "min_points": Threshold(5, "fewest finite loss points before jumps are judged"),
        "single_point_size": Threshold(10.0, "a jump of one logged point must reach this many times the running "
                                             "median before it: one hard batch makes smaller ones"),
        "lasting_size": Threshold(1.5, "a jump that lasts two or more logged points must reach this many times "
                                       "the running median before it"),
        "min_sigmas": Threshold(6.0, "a spike rises at least this many noise σ above the running median"),
        "beyond_noise": Threshold(4.0, "a spike rises at least this many times higher than the curve's own rare "
                                       "excursions elsewhere (their 99.5th percentile): heavy-tailed tiny-batch "
                                       "noise is not a spike"),
        "min_undone": Threshold(0.25, "a spike undoes at least this share of the progress made from the first "
                                      "value to the level before the spike"),
        "recovered_sigmas": Threshold(2.0, "the loss counts as recovered once its running median is back within "
                                           "this many noise σ of the pre-spike level"),
        "diverged_factor": Threshold(3.0, "a loss that fell and ends this many times above its first value has "
                                          "jumped away for good (divergence without NaN)"),
    },
)
def spike(run: RunCurves, limits: Limits):
    """The loss falls, then suddenly jumps far above the running median of the points before it: by many noise σ,
    well beyond the rare excursions the curve's own minibatch noise makes elsewhere, undoing a good part of the
    progress made. One logged point must jump 10× (smaller single points are hard batches); a jump lasting two
    or more points needs 1.5×. A loss that fell, then climbed to end several times above its first value without
    turning NaN is a spike that never recovered, from the step it last stood at its start (when no gradient norm
    is logged; otherwise CD701 reports that climb together with the norm's growth). Reports
    the step, the size (×), whether and when the loss came back to its pre-spike level, and further spikes."""
    curve = loss_curve(run)
    if curve is None:
        return None
    values = finite_prefix(curve)
    if len(values) < limits["min_points"]:
        return None
    if run.curve(Role.GRAD_NORM) is None:
        # One divergence, one finding: with a gradient norm logged, CD701 reports the climb together with it.
        diverged = _divergence(curve, values, limits)
        if diverged is not None:
            return diverged
    # A median of three neighbours erases one-point outliers, so whatever jumps in it lasted two points or more.
    lasting = median_filter(values, size=3, mode="nearest")
    jump = (_highest_jump(values, curve, limits, limits["single_point_size"])
            or _highest_jump(lasting, curve, limits, limits["lasting_size"]))
    if jump is None:
        return None
    if jump.recovered is None and curve.first_nonfinite is not None:
        return None  # the run is climbing into NaN: CD101 reports it
    event_end = jump.recovered if jump.recovered is not None else len(values)
    peak = jump.index + int(np.argmax(values[jump.index:max(event_end, jump.index + 1)]))
    step = int(curve.steps[peak])
    size = values[peak] / jump.baseline if jump.baseline > 0 else math.inf
    sigma = curve.noise
    evidence = [
        f"{curve.tag} = {fmt(values[peak])} at step {step}; running median of the {curve.window} points before "
        f"the jump = {fmt(jump.baseline)} ({fmt(size)}×)",
        f"rise = {jump.rise / sigma if sigma else math.inf:.3g} noise σ (σ = {fmt(sigma)}); the curve's rare "
        f"excursions elsewhere (99.5th percentile) reach {fmt(jump.reach)} above its running median",
    ]
    if jump.recovered is not None:
        back_step = int(curve.steps[jump.recovered])
        evidence.append(f"recovered: running median back to ≤ "
                        f"{fmt(jump.baseline + limits['recovered_sigmas'] * sigma)} by step {back_step} "
                        f"({back_step - step} steps after the peak)")
    elif peak == len(values) - 1:
        evidence.append("the log ends at the spike: whether it recovered is unknown")
    else:
        evidence.append(f"did not recover: the loss ends at {fmt(float(np.median(curve.tail())))} "
                        f"(pre-spike level {fmt(jump.baseline)})")
    if len(jump.others):
        listed = ", ".join(str(int(curve.steps[i])) for i in jump.others[:5])
        evidence.append(f"{len(jump.others)} more spike(s) at step(s) {listed}{' …' if len(jump.others) > 5 else ''}")
    never = jump.recovered is None and peak < len(values) - 1
    return Found(
        f"{curve.tag} jumps {fmt(size)}× at step {step}" + (" and never recovers" if never else ""),
        [curve.tag], evidence, step=step, severity=ERROR if never else WARNING,
    )


def _divergence(curve: Curve, values: np.ndarray, limits: Limits) -> Found | None:
    """A loss that fell, then climbed far above its start and stayed there (the NaN-free form of divergence)."""
    if curve.first_nonfinite is not None:
        return None  # it ends in NaN: CD101 reports it
    start = float(values[0])
    smooth = curve.smooth[:len(values)]
    end = float(np.median(values[-max(1, len(values) // 10):]))
    if start <= 0 or end < limits["diverged_factor"] * start or smooth.min() >= start:
        return None
    onset = int(np.flatnonzero(smooth <= start)[-1]) + 1
    if onset >= len(values):
        return None
    lowest = int(np.argmin(smooth[:onset]))
    step, end_step = int(curve.steps[onset]), int(curve.steps[len(values) - 1])
    return Found(
        f"{curve.tag} climbs away from step {step} and never recovers",
        [curve.tag],
        [f"{curve.tag} fell from {fmt(start)} to {fmt(float(smooth[lowest]))} (running median, step "
         f"{int(curve.steps[lowest])}), then rose above its first value at step {step}",
         f"it ends at {fmt(end)} (median of the last tenth) = {fmt(end / start)}× its first value, "
         f"at step {end_step}"],
        step=step, step_range=(step, end_step), severity=ERROR,
    )
