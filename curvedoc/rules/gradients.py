"""Gradient norms out of their healthy range: exploding by orders of magnitude, or vanished while the loss is high.

Both rules read every logged gradient norm (role grad_norm): the total (global) norm and each layer's or
parameter's (``grad_norm/<param>``, Lightning's ``grad_2.0_norm/<param>``), on a log scale: gradient norms span
many orders of magnitude, so "100× its typical level" is the scale-free question. One layer can explode while
the total is dominated by others, and a vanishing gradient shows in the first layers first; a layer's event that
the total shows as well is reported once, on the total.
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.features import (START_POINTS, Curve, RunCurves, fmt, listed, median_filter, noise_reach,
                               trailing_median)
from curvedoc.roles import Role, is_total_norm, norm_order
from curvedoc.rules import ERROR, INFO, JUMP, WARNING, Found, Limits, Threshold, rule, shipped_limits
from curvedoc.rules.stability import NO_PROGRESS, came_apart_from, event_window, loss_curve, once_per_event



MIN_BESIDE = 3  # loss points before and after a gradient spike that tell whether it left a trace


def _loss_at(loss: Curve | None, step: int) -> list[str]:
    """What the loss did at a gradient event: its value there against the points before, and whether it turned
    NaN from that step on."""
    if loss is None or not len(loss.finite_values):
        return []
    notes = []
    index = int(np.searchsorted(loss.finite_steps, step))
    nan_step = None if loss.first_nonfinite is None else int(loss.steps[loss.first_nonfinite])
    if index < len(loss.finite_values) and (nan_step is None or loss.finite_steps[index] < nan_step):
        before = loss.finite_values[max(0, index - loss.window):index]
        level = f"; median of the {len(before)} points before = {fmt(float(np.median(before)))}" if len(before) else ""
        notes.append(f"{loss.tag} at step {loss.step_at(index)} = {fmt(loss.finite_values[index])}{level}")
    if nan_step is not None and nan_step >= step:
        notes.append(f"{loss.tag} becomes {loss.values[loss.first_nonfinite]} at step {nan_step} "
                     f"({nan_step - step} steps later)")
    return notes


def _nonfinite_norms(grad: Curve) -> list[str]:
    """Non-finite norms on isolated steps are what a mixed-precision GradScaler logs when it skips a step; norms
    that stay non-finite to the end are a run that diverged."""
    if grad.first_nonfinite is None:
        return []
    finite_after = np.flatnonzero(grad.finite_mask[grad.first_nonfinite:])
    if not len(finite_after):
        return [f"{grad.tag} is non-finite from step {int(grad.steps[grad.first_nonfinite])} to the end"]
    bad = int((~grad.finite_mask).sum())
    return [f"{bad} non-finite gradient norm(s) on steps between finite ones left out (a mixed-precision "
            f"GradScaler logs Inf on the steps it skips)"]


@rule(
    "CD701", "gradient-explosion", symptom="exploding_grad", severity=ERROR, live=JUMP,
    needs=(Role.GRAD_NORM,),
    causes=(
        "no gradient clipping, so one bad batch or a steep region throws the weights far",
        "learning rate too high: each update makes the next gradient larger",
        "unnormalised inputs or a deep network without normalisation layers",
    ),
    check="clip the gradient norm (torch.nn.utils.clip_grad_norm_(params, 1.0)) and log the norm per layer to "
          "see which layer explodes first; drop the learning rate 10×",
    thresholds={
        "min_points": Threshold(5, "fewest finite gradient norms before they are judged"),
        "spike_factor": Threshold(100.0, "a gradient norm this many times the running median of the norms before "
                                         "it is a spike; one that starts this many times above its level over the "
                                         "run's second half started exploded"),
        "beyond_noise": Threshold(10.0, "a spike must also be this many times higher than the norm's own rare "
                                        "excursions elsewhere (99.5th percentile of its ratio to the running "
                                        "median): tiny batches make large norms on hard examples"),
        "above_run_median": Threshold(10.0, "a spike must also reach this many times the median norm of the whole "
                                            "run: a jump from a vanished norm back to an ordinary one is no "
                                            "explosion"),
        "from_vanished": Threshold(1e-4, "a jump from a running median below this share of the starting loss is "
                                         "a vanished gradient coming back to life (CD702), not an explosion"),
        "absorbed_factor": Threshold(1.5, "a spike the loss does not show (its value there within the loss's own "
                                          "rare excursions) and whose following points stay below this many times "
                                          "the level before it left no trace on training: a norm logged before "
                                          "clipping (the Hugging Face Trainer's), or one misfit batch of a fitted "
                                          "model. CD402's size of a lasting jump"),
        "growth_factor": Threshold(10.0, "the running median of the norm growing this many times above its level "
                                         "at the start, while the loss ends above its start or turns NaN, is an "
                                         "explosion spread over many steps"),
    },
)
def exploding_gradient(run: RunCurves, limits: Limits):
    """A gradient norm (the total, or one layer's) jumps by orders of magnitude above the running median of the
    steps before it (and far beyond the swings its own minibatch noise makes), or its running level grows by
    orders of magnitude over its start while the loss diverges with it (over its level when the loss stood lowest,
    for a loss that settled and then drifted away for good), or it starts spike_factor times above the level it
    settles at while the loss makes no progress until it comes down (the first updates exploded; a warm-up's large
    first norms lower the loss). Reports the step, the factor, and what
    the loss did there. A spike the loss shows nothing of (its value there no larger a jump than its own rare ones,
    its points after it at their level before) left no trace on training and is not reported. Inf/NaN norms on
    isolated steps (a mixed-precision GradScaler skipping a step) are left out and counted; a norm that turns
    non-finite for good is CD101's NaN story unless its finite part already exploded."""
    loss = loss_curve(run)
    # where a loss that settled, then drifted away for good (CD402), stood lowest: once for every norm curve
    drift_from = (came_apart_from(loss) if loss is not None and loss.first_nonfinite is None
                  and loss.end <= loss.start else None)
    found = [(grad, item) for grad in norm_curves(run)
             if (item := _explosion(grad, loss, drift_from, limits)) is not None]
    return once_per_event(found, event_window(run))


def norm_curves(run: RunCurves) -> list[Curve]:
    """Every gradient norm, total ones first (the main one before the rest), then the layers in logging order."""
    primary = run.curve(Role.GRAD_NORM)
    curves = run.curves(Role.GRAD_NORM)
    return sorted(curves, key=lambda grad: (grad is not primary, not is_total_norm(grad.tag)))


def _explosion(grad: Curve, loss: Curve | None, drift_from: int | None, limits: Limits) -> Found | None:
    positive = grad.finite_values > 0
    if positive.sum() < limits["min_points"]:
        return None
    norms, steps = grad.finite_values[positive], grad.finite_steps[positive]
    log_norms = np.log10(norms)
    window = grad.window
    above = log_norms - trailing_median(log_norms, window)
    above[0] = 0.0
    peak = int(np.argmax(above))
    reach = noise_reach(above, slice(max(0, peak - window), peak + window + 1))
    typical = float(np.median(norms))
    before = norms[peak] / 10 ** above[peak]
    awake = loss is None or before > limits["from_vanished"] * abs(loss.start)
    if (above[peak] >= math.log10(limits["spike_factor"]) and above[peak] >= reach + math.log10(limits["beyond_noise"])
            and norms[peak] >= limits["above_run_median"] * typical and awake
            and not _left_no_trace(loss, int(steps[peak]), limits["absorbed_factor"])):
        step = int(steps[peak])
        factor = 10 ** above[peak]
        return Found(
            f"{grad.tag} spikes {fmt(factor, 3)}× at step {step}",
            [grad.tag] + ([loss.tag] if loss else []),
            [f"{grad.tag} = {fmt(norms[peak])} at step {step}; running median of the {window} norms before = "
             f"{fmt(before)} ({fmt(factor, 3)}×)",
             f"elsewhere the norm's rare excursions (99.5th percentile) reach {fmt(10 ** reach, 3)}× its running "
             f"median; median norm of the run: {fmt(typical)}",
             *_loss_at(loss, step), *_nonfinite_norms(grad)],
            step=step,
        )
    return _growth(grad, norms, steps, loss, drift_from, limits) or _exploded_at_start(grad, norms, steps, loss, limits)


def _exploded_at_start(grad: Curve, norms: np.ndarray, steps: np.ndarray, loss: Curve | None,
                       limits: Limits) -> Found | None:
    """The norm starts orders of magnitude (spike_factor) above the level it settles at over the run's second half,
    and the loss made no progress until it came down within a tenth of that (sqrt(spike_factor) times the settled
    level): the first updates exploded, and training only began once they stopped. A warm-up whose large first
    gradients already lower the loss is no explosion."""
    if loss is None or len(loss.finite_values) < 2:
        return None
    start, settled = float(np.median(norms[:START_POINTS])), float(np.median(norms[len(norms) // 2:]))
    if settled <= 0 or start < limits["spike_factor"] * settled:
        return None
    calm = int(np.argmax(norms <= math.sqrt(limits["spike_factor"]) * settled))
    calm_step = int(steps[calm])
    loss_then = float(np.interp(calm_step, loss.finite_steps, loss.smooth))
    if loss_then < NO_PROGRESS * loss.start:
        return None
    return Found(
        f"{grad.tag} starts {fmt(start / settled, 3)}× above the level it settles at",
        [grad.tag, loss.tag],
        [f"{grad.tag}: median {fmt(start)} over the first points, {fmt(settled)} over the second half of the run",
         f"it came within {fmt(math.sqrt(limits['spike_factor']), 3)}× of that level only at step {calm_step}",
         (f"{loss.tag}: {fmt(loss.start)} at the start, {fmt(loss_then)} at step {calm_step}: no progress while the "
          "norm was that high"), *_nonfinite_norms(grad)],
        step=int(steps[0]), step_range=(int(steps[0]), calm_step),
    )


def _left_no_trace(loss: Curve | None, step: int, lasting: float) -> bool:
    """Whether the loss shows nothing of a gradient spike at ``step``: its value there is no larger a jump than
    the loss makes elsewhere anyway (a fitted model's rare misfit batches), and the points after it stay below
    ``lasting`` times the level of the points before it, with no NaN. Without enough loss on both sides, the
    spike stands."""
    if loss is None or (loss.first_nonfinite is not None and int(loss.steps[loss.first_nonfinite]) >= step):
        return False
    steps, values = loss.finite_steps, loss.finite_values
    at = int(np.searchsorted(steps, step))
    if at >= len(values) or steps[at] != step or values.min() <= 0:
        return False  # the loss was not logged at that step, or has no ratio scale to judge a jump on
    span = max(MIN_BESIDE, loss.window)
    before, after = values[max(0, at - span):at], values[at + 1:at + 1 + span]
    if len(before) < MIN_BESIDE or len(after) < MIN_BESIDE:
        return False
    log_values = np.log10(values)
    jumps = log_values - trailing_median(log_values, span)
    jumps[0] = 0.0
    within_its_noise = jumps[at] <= noise_reach(jumps, slice(at, at + 1))
    return within_its_noise and float(np.median(after)) < lasting * float(np.median(before))


def _growth(grad: Curve, norms: np.ndarray, steps: np.ndarray, loss: Curve | None, drift_from: int | None,
            limits: Limits) -> Found | None:
    """The norm's running level climbs by orders of magnitude while the loss diverges: an explosion spread over
    many steps rather than one. For a loss that settled, then drifted away for good from step ``drift_from``
    (CD402), the growth counts from where the norm stood then."""
    if loss is None:
        return None
    # the first few norms, not a share of the log: a norm can grow 30x within its first 5% of steps
    since, start, where = 0, float(np.median(norms[:START_POINTS])), "over the first points"
    if loss.first_nonfinite is None and loss.end <= loss.start:
        if drift_from is None:
            return None
        since = int(np.searchsorted(steps, drift_from))
        start = float(np.median(norms[max(0, since - START_POINTS):since + START_POINTS]))
        where = f"around step {drift_from}, where {loss.tag} stood lowest"
    if start <= 0:
        return None
    level = trailing_median(norms, grad.window)[since:]
    highest = int(np.argmax(level))
    growth = float(level[highest]) / start
    if growth < limits["growth_factor"]:
        return None
    halfway = math.sqrt(limits["growth_factor"])
    onset = int(np.argmax(level >= halfway * start))
    step, peak_step = int(steps[since + onset]), int(steps[since + highest])
    nan_note = (f"; non-finite from step {int(loss.steps[loss.first_nonfinite])}"
                if loss.first_nonfinite is not None else "")
    return Found(
        f"{grad.tag} grows {fmt(growth, 3)}× while the loss diverges",
        [grad.tag, loss.tag],
        [f"{grad.tag}: median {fmt(start)} {where} → running median {fmt(float(level[highest]))} "
         f"at step {peak_step} ({fmt(growth, 3)}×)",
         f"it passed {fmt(halfway, 3)}× that level at step {step}",
         f"{loss.tag}: {fmt(loss.start)} at the start → {fmt(loss.end)} at the end{nan_note}",
         *_nonfinite_norms(grad)],
        step=step, step_range=(step, peak_step),
    )


@rule(
    "CD702", "gradient-vanished", symptom="vanishing_grad", severity=WARNING,
    needs=(Role.GRAD_NORM,),
    causes=(
        "saturating activations (sigmoid/tanh) in a deep stack: each layer multiplies the gradient by < 1",
        "bad initialisation (weights too small), or dead ReLUs",
        "too deep without residual connections or normalisation",
    ),
    check="print the gradient norm of every layer for one batch: if the first layers are orders of magnitude "
          "below the last, switch to ReLU/GELU, add normalisation or residuals, or use Kaiming/Xavier init",
    thresholds={
        "min_points": Threshold(5, "fewest finite gradient norms before they are judged"),
        "tiny_vs_loss": Threshold(1e-4, "a gradient norm below this share of the loss value is near zero (a "
                                        "learning network's norm is of the order of its loss)"),
        "collapse_factor": Threshold(1e-3, "a gradient norm that fell below this share of its own level at the "
                                           "start has vanished; so has a layer's below this share of the largest "
                                           "layer's"),
        "max_progress": Threshold(0.5, "the loss still counts as high while it has lost less than this share of "
                                       "its start value (or sits above this share of the chance level)"),
        "min_share": Threshold(0.25, "share of the logged norms that must be near zero while the loss is high"),
    },
)
def vanishing_gradient(run: RunCurves, limits: Limits):
    """A gradient norm sits near zero — below 1e-4 of the loss value, or 1000× below its own level at the start,
    or (one layer's) 1000× below the largest layer's norm of the same order (an L1 norm sums what an L2 norm
    squares) — for a good share of the run while the loss is still high
    (less than halfway from its start to zero, or near chance). A converged run also has small gradients, but a
    low loss, and does not fire. Every norm is judged, the total and each layer's: a vanishing gradient shows in
    the first layers first, and the finding lists the layers that vanished in the order they were logged."""
    loss = loss_curve(run)
    grads = [grad for grad in norm_curves(run) if len(grad.finite_values) >= limits["min_points"]]
    if loss is None or not grads or len(loss.finite_values) < 2:
        return None
    main = grads[0]
    if not main.finite_values.any():
        # Not a gradient that shrank but one that never arrives: flat_from_start is the symptom; this is its clue.
        return Found(f"{main.tag} is exactly 0 at every logged step", [main.tag],
                     [f"{len(main.finite_values)} logged norms, all 0; "
                      f"{loss.tag} {fmt(loss.start)} → {fmt(loss.end)}",
                      "no gradient reaches these parameters: detached graph, zero_grad() between backward() and "
                      "step(), or frozen parameters"],
                     step_range=(int(main.finite_steps[0]), int(main.finite_steps[-1])), severity=INFO)
    layers = [grad for grad in grads if not is_total_norm(grad.tag)]
    largest: dict[str, float] = {}  # per norm order: an L1 norm sums what an L2 norm of the same layer squares
    for grad in layers:
        order = norm_order(grad.tag)
        largest[order] = max(largest.get(order, 0.0), float(np.median(grad.finite_values)))
    vanished = [found for grad in grads
                if (found := _vanished(run, grad, loss, limits,
                                       largest[norm_order(grad.tag)] if grad in layers else 0.0)) is not None]
    if not vanished:
        return None
    total = next((found for found in vanished if is_total_norm(found.tags[0])), None)
    lost_layers = [found.tags[0] for found in vanished if found is not total]
    if total is not None:
        if lost_layers:
            total.evidence.append(f"layers near zero too: {listed(lost_layers)}")
        return total
    first = vanished[0]
    return Found(f"{len(lost_layers)} of {len(layers)} layer gradient norms near zero while the loss is still high "
                 f"(first: {lost_layers[0]})", [*lost_layers, loss.tag],
                 [f"layers near zero, in logging order: {listed(lost_layers)}", *first.evidence],
                 step=first.step, step_range=first.step_range)


def _vanished(run: RunCurves, grad: Curve, loss: Curve, limits: Limits, largest_layer: float) -> Found | None:
    """Where ``grad`` sat near zero while the loss was high, when that was a good share of its points."""
    # Exact zeros among non-zero norms are steps without an update (gradient accumulation), not a vanished gradient.
    values, steps = grad.finite_values, grad.finite_steps
    logged = values != 0
    if not logged.all():  # the curve itself otherwise: a norm of millions of points is not copied for nothing
        values, steps = values[logged], steps[logged]
    del logged
    if len(values) < limits["min_points"]:
        return None
    norms = median_filter(values, size=grad.window, mode="nearest") if grad.window > 1 else values
    # a norm logged at the loss's own steps (the common case) reads the loss there as it is: interpolating would
    # copy both step columns as floats, 24 bytes a point of a norm of millions
    same_steps = len(steps) == len(loss.finite_steps) and bool(np.array_equal(steps, loss.finite_steps))
    loss_level = loss.smooth if same_steps else np.interp(steps, loss.finite_steps, loss.smooth)
    start_norm = float(np.median(values[:START_POINTS]))
    still_high = loss_level >= (1 - limits["max_progress"]) * loss.start
    if run.chance_loss is not None:
        still_high |= loss_level >= limits["max_progress"] * run.chance_loss
    # Scaled by the loss at the start, not its current value: a diverging loss of 1e13 does not make 1e3 "tiny";
    # and against the norm's start unless that start was an explosion (CD701's), whose end is no collapse
    near_zero = norms <= limits["tiny_vs_loss"] * abs(loss.start)
    if _exploded_at_start(grad, values, steps, loss, shipped_limits("CD701")) is None:
        near_zero |= norms <= limits["collapse_factor"] * start_norm
    if largest_layer > 0:
        near_zero |= norms <= limits["collapse_factor"] * largest_layer
    vanished = near_zero & still_high
    share = vanished.mean()
    if share < limits["min_share"]:
        return None
    first, last = int(steps[np.argmax(vanished)]), int(steps[len(vanished) - 1 - np.argmax(vanished[::-1])])
    typical = float(np.median(norms[vanished]))
    typical_loss = float(np.median(loss_level[vanished]))
    evidence = [
        f"{grad.tag} running median ≈ {fmt(typical)} on {share:.0%} of its points (steps {first}–{last}); "
        f"{fmt(typical / abs(loss.start)) if loss.start else 'n/a'} × the starting loss",
        f"{loss.tag} there ≈ {fmt(typical_loss)}; it started at {fmt(loss.start)}"
        + (f"; chance −log(1/{run.n_classes}) = {run.chance_loss:.3f}" if run.chance_loss is not None else ""),
        f"{grad.tag} at the start: median {fmt(start_norm)}"
        + (f"; the largest layer's median norm: {fmt(largest_layer)}" if largest_layer > 0 else ""),
    ]
    return Found(f"{grad.tag} near zero while the loss is still high", [grad.tag, loss.tag], evidence,
                 step=first, step_range=(first, last))
