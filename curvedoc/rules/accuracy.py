"""What the accuracy curve says on its own and next to the loss: too good, stuck at the class prior, or frozen.

Accuracy is a count of correct predictions over a fixed evaluation set, so it moves in steps of one example
(1/N): a curve that never leaves one value is a model whose predictions do not change. Accuracies logged in
percent (0-100) are read as fractions.
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.features import Curve, RunCurves
from curvedoc.roles import Role
from curvedoc.rules import ERROR, WARNING, Found, Limits, Threshold, rule

HELD_OUT_ACC = (Role.VAL_ACC, Role.TEST_ACC)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _as_fraction(curve: Curve) -> np.ndarray | None:
    """The finite accuracy values as fractions of 1; None when the curve is not an accuracy at all."""
    values = curve.finite_values
    if not len(values) or values.min() < 0 or values.max() > 100:
        return None
    return values / 100 if values.max() > 1 + 1e-9 else values


def _one_example(values: np.ndarray) -> float | None:
    """The smallest step between the distinct values: at most 1/N for an evaluation set of N examples."""
    distinct = np.unique(np.round(values, 9))
    steps = np.diff(distinct)
    return float(steps.min()) if len(steps) else None


def _held_out_accuracy(run: RunCurves) -> tuple[Curve, np.ndarray] | None:
    for role in HELD_OUT_ACC:
        curve = run.curve(role)
        if curve is not None and (values := _as_fraction(curve)) is not None:
            return curve, values
    return None


def _training_steps(run: RunCurves, fallback: Curve) -> tuple[int, int]:
    """First and last step of the run (the train loss spans the run; a validation curve starts an epoch late)."""
    train = run.curve(Role.TRAIN_LOSS) or run.curve(Role.TRAIN_ACC) or fallback
    return int(train.finite_steps[0]), int(train.finite_steps[-1])


@rule(
    "CD601", "accuracy-suspicious", symptom="accuracy_suspicious", severity=WARNING,
    causes=(
        "train/test leakage: the same examples (or near-duplicates) in both splits",
        "the label, or something computed from it, among the input features",
        "the evaluation set is the training set (a split that silently fell back to the training data)",
    ),
    check="hash every example of each split and intersect the sets; look at the per-class breakdown and at the "
          "features most correlated with the label",
    thresholds={
        "near_perfect": Threshold(0.99, "held-out accuracy at or above this is near-perfect"),
        "early_share": Threshold(0.05, "near-perfect within this share of the training steps is implausibly early"),
    },
)
def accuracy_suspicious(run: RunCurves, limits: Limits):
    """Held-out (validation or test) accuracy ends near-perfect, or reaches near-perfect within the first few
    percent of training. Only judged when the evaluation set is large enough for one error to be smaller than
    the margin to 100% (a 45-example set at 1.0 says little)."""
    found = _held_out_accuracy(run)
    if found is None:
        return None
    curve, values = found
    near_perfect = limits["near_perfect"]
    one_example = _one_example(values)
    if one_example is not None and one_example > 1 - near_perfect:
        return None
    end = float(np.median(values[-max(1, len(values) // 10):]))
    reached = np.flatnonzero(values >= near_perfect)
    if not len(reached):
        return None
    first_step, last_step = _training_steps(run, curve)
    reached_step = curve.step_at(int(reached[0]))
    early = reached_step - first_step <= limits["early_share"] * max(1, last_step - first_step)
    if end < near_perfect and not early:
        return None
    share = (reached_step - first_step) / max(1, last_step - first_step)
    evidence = [
        f"{curve.tag} = {_fmt(end)} at the end (median of the last tenth); near-perfect is ≥ {near_perfect:g}",
        f"first ≥ {near_perfect:g} at step {reached_step}: {share:.0%} of the run (steps {first_step}–{last_step})",
    ]
    if one_example is not None:
        evidence.append(f"smallest accuracy step {_fmt(one_example)}: the evaluation set has at least "
                        f"{round(1 / one_example)} examples")
    title = (f"{curve.tag} is near-perfect ({_fmt(end)})" if end >= near_perfect
             else f"{curve.tag} reaches {_fmt(values[reached[0]])} implausibly early")
    if end >= near_perfect and early:
        title += f", reached within the first {share:.0%} of training"
    return Found(title, [curve.tag], evidence, step=reached_step)


FLAT_LIMITS = {
    "min_points": Threshold(5, "fewest accuracy points before the accuracy is called flat"),
    "flat_tolerance": Threshold(0.01, "an accuracy whose values span at most this (absolute) never changed"),
    "loss_drop_share": Threshold(0.1, "the loss fell by at least this share of its level over the flat span"),
    "still_falling_share": Threshold(0.1, "the last quarter of the span holds at least this share of the fall "
                                          "(the loss keeps falling, it did not just settle)"),
}


def _flat_accuracy(run: RunCurves, limits: Limits) -> tuple[Curve, np.ndarray] | None:
    """The accuracy (held-out preferred) whose value never changed, when the train accuracy did not rise either.

    A held-out accuracy must keep one value, or move by one example at most (two adjacent values), and that one
    step must be within the flat tolerance. A model that learns within its first
    epoch also shows one held-out value throughout, so the train accuracy (when logged) must be level too: its
    first and last tenth agree within the tolerance plus their minibatch noise."""
    held_out = _held_out_accuracy(run)
    train = run.curve(Role.TRAIN_ACC)
    train_values = _as_fraction(train) if train is not None else None
    if held_out is not None:
        curve, values = held_out
        spread = float(np.ptp(values))
        one_step = _one_example(values) or 0.0
        if len(values) < limits["min_points"] or spread > min(limits["flat_tolerance"], one_step):
            return None
    elif train_values is not None:
        curve, values = train, train_values
    else:
        return None
    if train_values is not None and len(train_values) >= limits["min_points"]:
        part = max(2, len(train_values) // 10)
        head, tail = train_values[:part], train_values[-part:]
        spread = 3 * math.sqrt((head.var(ddof=1) + tail.var(ddof=1)) / part)
        if abs(float(tail.mean() - head.mean())) > limits["flat_tolerance"] + spread:
            return None
    elif held_out is None:
        return None
    return curve, values


def _loss_for(run: RunCurves, accuracy: Curve) -> Curve | None:
    """The loss of the accuracy's split (validation loss for validation accuracy), else the train loss."""
    matching = {Role.VAL_ACC: Role.VAL_LOSS, Role.TEST_ACC: Role.TEST_LOSS, Role.TRAIN_ACC: Role.TRAIN_LOSS}
    for role in (matching[accuracy.role], Role.TRAIN_LOSS):
        curve = run.curve(role)
        if curve is not None and len(curve.finite_values) >= 4:
            return curve
    return None


def _loss_still_falling(loss: Curve, span: tuple[int, int], limits: Limits) -> tuple[bool, list[float]]:
    """Whether ``loss`` falls across ``span`` and keeps falling in its last quarter; returns the quarter medians."""
    inside = (loss.finite_steps >= span[0]) & (loss.finite_steps <= span[1])
    values = loss.finite_values[inside] if inside.sum() >= 4 else loss.finite_values
    quarters = [float(np.median(part)) for part in np.array_split(values, 4)]
    fall, last_fall = quarters[0] - quarters[3], quarters[2] - quarters[3]
    quarter_noise = loss.noise / math.sqrt(max(1, len(values) // 4))
    falling = (fall >= limits["loss_drop_share"] * abs(quarters[0]) and fall > 3 * quarter_noise
               and last_fall >= limits["still_falling_share"] * fall and last_fall > 2 * quarter_noise)
    return falling, quarters


@rule(
    "CD602", "accuracy-majority", symptom="accuracy_majority", severity=ERROR,
    causes=(
        "the model learned only the class prior: it predicts the most common class for every input",
        "the input does not reach the model (zeroed, masked, constant after preprocessing), so only the prior "
        "can be learned",
        "a class imbalance strong enough that predicting the majority is a deep local minimum",
    ),
    check="compute the accuracy of always predicting the most common class on the evaluation set (and an "
          "input-independent baseline); print the model's predictions on one batch: all the same class?",
    thresholds={
        **FLAT_LIMITS,
        "chance_margin": Threshold(0.1, "a flat accuracy within this share of 1/n is chance level "
                                        "(flat_at_chance's case), not a class prior; with n unknown, any 1/k is"),
    },
)
def accuracy_majority(run: RunCurves, limits: Limits):
    """Accuracy (validation preferred) stays at one value for the whole run, and that value is a class share
    other than 1/n (the majority rate of imbalanced data), while the loss settles rather than keeps falling."""
    flat = _flat_accuracy(run, limits)
    if flat is None:
        return None
    curve, values = flat
    level = float(np.median(values))
    if not limits["flat_tolerance"] < level < 1 - limits["flat_tolerance"]:
        return None
    chance = run.chance_accuracy
    if chance is not None and level <= chance * (1 + limits["chance_margin"]):
        return None
    if chance is None and abs(level * max(2, round(1 / level)) - 1) <= limits["chance_margin"]:
        return None  # about 1/k: with the class count unknown, as likely chance for k balanced classes
    loss = _loss_for(run, curve)
    span = (int(curve.finite_steps[0]), int(curve.finite_steps[-1]))
    evidence = [f"{curve.tag} = {_fmt(level)} at all {len(values)} points (range {_fmt(np.ptp(values))}, "
                f"steps {span[0]}–{span[1]})"]
    if loss is not None:
        falling, quarters = _loss_still_falling(loss, span, limits)
        if falling:
            return None  # the loss still moves: predictions_frozen's case
        evidence.append(f"{loss.tag} by quarters of the span: " + " → ".join(_fmt(q) for q in quarters))
    if chance is not None:
        evidence.append(f"chance 1/{run.n_classes} = {_fmt(chance)}: the flat level is a class share, not chance")
    else:
        evidence.append(f"number of classes unknown; {_fmt(level)} is not 1/k for any k, so not balanced chance")
    return Found(f"{curve.tag} never changes from {_fmt(level)}: the model predicts the class prior",
                 [curve.tag] + ([loss.tag] if loss is not None else []), evidence, step_range=span)


@rule(
    "CD603", "predictions-frozen", symptom="predictions_frozen", severity=ERROR,
    causes=(
        "the loss is computed on a different tensor than the predictions (a temperature, a scale or a detached "
        "copy is what trains)",
        "a mask or weight that zeroes everything the predictions depend on",
        "the optimizer holds only parameters that cannot change the argmax (a temperature, a bias of a frozen "
        "layer)",
    ),
    check="print the predicted classes for one fixed batch every epoch: if they never change while the loss "
          "falls, list which parameters the optimizer actually updates",
    thresholds=FLAT_LIMITS,
)
def predictions_frozen(run: RunCurves, limits: Limits):
    """The loss keeps falling over the whole span (still falling in its last quarter) while the accuracy does
    not change at all: what is being optimised does not move the predictions."""
    flat = _flat_accuracy(run, limits)
    if flat is None:
        return None
    curve, values = flat
    loss = _loss_for(run, curve)
    if loss is None:
        return None
    span = (int(curve.finite_steps[0]), int(curve.finite_steps[-1]))
    falling, quarters = _loss_still_falling(loss, span, limits)
    if not falling:
        return None
    level = float(np.median(values))
    return Found(
        f"{loss.tag} falls {1 - quarters[3] / quarters[0]:.0%} while {curve.tag} stays at {_fmt(level)}",
        [loss.tag, curve.tag],
        [f"{curve.tag} = {_fmt(level)} at all {len(values)} points (range {_fmt(np.ptp(values))}, "
         f"steps {span[0]}–{span[1]})",
         f"{loss.tag} by quarters of the span: " + " → ".join(_fmt(q) for q in quarters) + " (still falling)"],
        step_range=span,
    )
