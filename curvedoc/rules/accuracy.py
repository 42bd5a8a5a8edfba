"""What the accuracy curve says on its own and next to the loss: too good, stuck at the class prior, or frozen.

Accuracy is a count of correct predictions over a fixed evaluation set, so it moves in steps of one example
(1/N): a curve that never leaves one value is a model whose predictions do not change. Accuracies logged in
percent (0-100) are read as fractions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from curvedoc.features import (ACCURACY_ROLES, Curve, RunCurves, as_fraction, chance_loss_of, counted, first_points,
                               fmt, rank_trend_z, robust_sigma)
from curvedoc.model import VOCABULARY
from curvedoc.roles import HELD_OUT_ACC, LOSS_OF_ACCURACY, OVERLAP_WORDS, Role, tokens
from curvedoc.rules import ERROR, WARNING, WHOLE_RUN, Found, Limits, Threshold, rule

# An accuracy averaged in float32 (Keras' metrics) jitters in its 7th significant digit with the order its
# batches were summed in (0.9866069 … 0.9866073 for the same predictions); one example of an evaluation set under
# a million examples moves it by more than this many decimals show, so values are compared at this precision.
COUNT_DECIMALS = 6
# An evaluation set this large or larger: one example answered differently moves its accuracy by 5% at most, and
# an accuracy that moves by no more than that, back and forth, holds its predictions
MIN_SET_FOR_ONE_EXAMPLE = 20
# An evaluation set this large or larger: a model whose weights change (its loss moves) answers some of its examples
# differently from one evaluation to the next, so an accuracy identical to its last digit at every evaluation is
# predictions that never change
LARGE_SET = 100



def _one_example(values: np.ndarray) -> float | None:
    """The smallest step between the distinct values: at most 1/N for an evaluation set of N examples."""
    distinct = np.unique(np.round(values, 9))
    steps = np.diff(distinct)
    return float(steps.min()) if len(steps) else None


def _one_example_apart(values: np.ndarray) -> bool:
    """The values are two counts k/N and (k ± 1)/N of one evaluation set of N ≥ MIN_SET_FOR_ONE_EXAMPLE examples
    (N read off their difference, both values a whole count of it to their printed digits)."""
    distinct = np.unique(values)
    if len(distinct) != 2:
        return False
    size = round(1 / float(distinct[1] - distinct[0]))
    counts = distinct * size
    whole = np.abs(counts - np.round(counts)) <= size * 10.0 ** -COUNT_DECIMALS
    return size >= MIN_SET_FOR_ONE_EXAMPLE and bool(whole.all())


def from_a_large_set(value: float) -> bool:
    """Whether ``value`` is an accuracy over at least LARGE_SET examples: logged with enough digits to tell every
    count k/N of a smaller set N apart, it is none of them (0.6697736 is 503/751; 0.95 could be 19/20, and 0.9 with
    its one decimal says nothing of its set)."""
    decimals = next((digits for digits in range(COUNT_DECIMALS + 1) if abs(round(value, digits) - value) < 1e-12),
                    COUNT_DECIMALS)
    tolerance = 0.5 * 10.0 ** -decimals
    # two counts of sets under LARGE_SET examples lie at least 1/LARGE_SET² apart
    if tolerance >= 0.5 / LARGE_SET ** 2:
        return False
    return all(abs(round(value * size) / size - value) > tolerance for size in range(1, LARGE_SET))


def held_out_accuracy(run: RunCurves) -> tuple[Curve, np.ndarray] | None:
    """The validation accuracy, else the test accuracy, with its values as fractions (at COUNT_DECIMALS)."""
    for role in HELD_OUT_ACC:
        curve = run.curve(role)
        if curve is not None and (values := as_fraction(curve)) is not None:
            return curve, np.round(values, COUNT_DECIMALS)
    return None


def segmentation(run: RunCurves) -> bool:
    """The run scores masks: it logs an overlap metric (Dice, IoU, Jaccard), so its accuracy counts pixels, most
    of them background."""
    return any(OVERLAP_WORDS & set(tokens(tag)) for tag in run.run.tags)


def _training_steps(run: RunCurves, fallback: Curve) -> tuple[int, int]:
    """First and last step of the run (the train loss spans the run; a validation curve starts an epoch late).
    A train loss that is NaN throughout has no steps to give: the next curve that has them does."""
    spans = [curve for curve in (run.curve(Role.TRAIN_LOSS), run.curve(Role.TRAIN_ACC), fallback)
             if curve is not None and len(curve.finite_steps)]
    return int(spans[0].finite_steps[0]), int(spans[0].finite_steps[-1])


@rule(
    "CD601", "accuracy-suspicious", symptom="accuracy_suspicious", severity=WARNING,
    needs=(Role.VAL_ACC, Role.TEST_ACC, Role.VAL_LOSS, Role.TEST_LOSS),
    causes=(
        "train/test leakage: the same examples (or near-duplicates) in both splits",
        "the label, or something computed from it, among the input features",
        "the evaluation set is the training set (a split that silently fell back to the training data)",
    ),
    check="hash every example of each split and intersect the sets; look at the per-class breakdown and at the "
          "features most correlated with the label",
    thresholds={
        "error_share": Threshold(0.001, "held-out accuracy is near-perfect when it misses at most this share of the "
                                        "examples, or at most one example of a smaller set: MNIST, the easiest "
                                        "real benchmark, still misses about 0.5%"),
        "min_examples": Threshold(100, "judged only on an evaluation set of at least this many examples (read off "
                                       "the accuracy's smallest step, 1/N), where one error is under 1%"),
        "early_share": Threshold(0.05, "near-perfect within this share of the training steps is implausibly early"),
        "held_evaluations": Threshold(3, "fewest evaluations at near-perfect that are no lucky pass on a set of that "
                                         "size, however the accuracy ends (a later dip does not undo them)"),
        "reevaluated_ratio": Threshold(2 / 3, "a held-out loss evaluated again with no training in between (one "
                                              "step, or at most 1% of the usual ≥ 10 steps between evaluations, "
                                              "later) at this fraction of the "
                                              "previous value or less: the same model on the same set scores the "
                                              "same, and a redrawn set of the same data moves a mean loss by a few "
                                              "percent, not by a third"),
    },
)
def accuracy_suspicious(run: RunCurves, limits: Limits):
    """Held-out (validation or test) accuracy ends near-perfect (at most one error in a thousand, or one example),
    reaches it within the first few percent of training, or scores it at three evaluations or more. Only judged
    when the evaluation set is large enough for one error to be under 1% (a 45-example set at 1.0 says little).
    With no held-out accuracy logged, a held-out cross-entropy below error_share × ln 2 says the same: each wrong
    prediction costs at least ln 2. A segmentation's accuracy (a run that logs Dice, IoU or Jaccard) counts pixels,
    mostly background: not judged.
    Also: a held-out loss that falls by a third when evaluated again with no training in between (a validation
    after fit on a split drawn anew) is a held-out set that now holds training examples."""
    return _near_perfect(run, limits) or _better_when_reevaluated(run, limits)


def _near_perfect(run: RunCurves, limits: Limits):
    found = held_out_accuracy(run)
    if found is None:
        return _implied_by_loss(run, limits)
    if segmentation(run):
        return None  # a pixel accuracy: the background alone makes it near-perfect
    curve, values = found
    one_example = _one_example(values)
    if one_example is not None and one_example > 1 / limits["min_examples"]:
        return None
    near_perfect = 1 - max(limits["error_share"], one_example or 0.0) - 1e-9
    end = float(np.median(values[-max(1, len(values) // 10):]))
    reached = np.flatnonzero(values >= near_perfect)
    if not len(reached):
        return None
    first_step, last_step = _training_steps(run, curve)
    reached_step = curve.step_at(int(reached[0]))
    early = reached_step - first_step <= limits["early_share"] * max(1, last_step - first_step)
    only_held = end < near_perfect and not early  # near-perfect neither at the end nor early: only often
    if only_held and len(reached) < limits["held_evaluations"]:
        return None
    share = (reached_step - first_step) / max(1, last_step - first_step)
    evidence = [
        f"{curve.tag} = {fmt(end)} at the end (median of the last tenth); near-perfect is ≥ {near_perfect:.4g}",
        f"first ≥ {near_perfect:.4g} at step {reached_step}: "
        + (f"{share:.0%} of the run (steps {first_step}–{last_step})" if reached_step <= last_step
           else f"after the last training step ({last_step})"),
    ]
    if one_example is not None:
        evidence.append(f"smallest accuracy step {fmt(one_example)}: the evaluation set has at least "
                        f"{round(1 / one_example)} examples")
    if only_held:
        evidence.append(f"near-perfect at {len(reached)} of {len(values)} evaluations")
    title = (f"{curve.tag} is near-perfect ({fmt(end)})" if end >= near_perfect
             else f"{curve.tag} is near-perfect at {len(reached)} evaluations" if only_held
             else f"{curve.tag} reaches {fmt(values[reached[0]])} implausibly early")
    if end >= near_perfect and early:
        title += f", reached within the first {share:.0%} of training"
    return Found(title, [curve.tag], evidence, step=reached_step)


def _better_when_reevaluated(run: RunCurves, limits: Limits):
    for role in (Role.VAL_LOSS, Role.TEST_LOSS):
        curve = run.curve(role)
        if curve is None or len(curve.finite_values) < 3:
            continue
        steps, values = curve.finite_steps, curve.finite_values
        gaps = np.diff(steps)
        usual_gap = float(np.median(gaps))
        if usual_gap < 10:  # steps that are epochs, or evaluations every few steps: no gap stands out
            continue
        for index in np.flatnonzero((gaps >= 0) & (gaps <= max(1.0, usual_gap / 100))):
            before, after = values[index], values[index + 1]
            if not (before > 0 and after <= limits["reevaluated_ratio"] * before):
                continue
            evidence = [
                f"{curve.tag} = {fmt(before)} at step {steps[index]}, then {fmt(after)} at step {steps[index + 1]}: "
                f"{fmt(before / after, 3)}× lower only {counted(int(gaps[index]), 'step')} later "
                f"(evaluations are usually {usual_gap:.4g} steps apart)",
                "the same model on the same examples scores the same: the held-out set changed between the two "
                "evaluations (a split drawn again, unseeded), and a loss that much lower says the new one holds "
                "examples the model trained on",
            ]
            evidence.extend(_accuracy_between(run, int(steps[index]), int(steps[index + 1])))
            return Found(f"{curve.tag} drops {fmt(before / after, 3)}× when evaluated again without training",
                         [curve.tag], evidence, step=int(steps[index + 1]))
    return None


def _accuracy_between(run: RunCurves, before_step: int, after_step: int) -> list[str]:
    found = held_out_accuracy(run)
    if found is None:
        return []
    curve, values = found
    at = {int(step): value for step, value in zip(curve.finite_steps, values)}
    if before_step in at and after_step in at:
        return [f"{curve.tag}: {fmt(at[before_step])} → {fmt(at[after_step])} over the same two evaluations"]
    return []


def _implied_by_loss(run: RunCurves, limits: Limits):
    """With no held-out accuracy logged, what the held-out cross-entropy implies of it: a misclassified example
    gives its true class at most half the probability, so it costs at least ln 2 nats, and the error rate is at
    most the mean loss / ln 2. A loss that low is an accuracy that near-perfect, whatever the class count."""
    for role in (Role.VAL_LOSS, Role.TEST_LOSS):
        curve = run.curve(role)
        if curve is None or not curve.finite_values.any() or chance_loss_of(run, curve) is None:
            continue  # exactly 0 at every evaluation is a mean over no supervised token, not a perfect model
        end = curve.end
        if end > limits["error_share"] * math.log(2):
            return None
        return Found(
            f"{curve.tag} ends at {fmt(end)}: held-out accuracy near-perfect (≥ {1 - end / math.log(2):.5g})",
            [curve.tag],
            [f"{curve.tag} = {fmt(end)} at the end (median of the last tenth); no held-out accuracy is logged",
             f"a wrong prediction costs at least ln 2 = 0.693 nats (its true class has probability ≤ 1/2), so at "
             f"most {end / math.log(2):.3%} of the examples are wrong; near-perfect is an error share ≤ "
             f"{limits['error_share']:.1%}"],
            step=curve.step_at(len(curve.finite_values) - 1))
    return None


FLAT_LIMITS = {
    "min_points": Threshold(5, "fewest accuracy points before the accuracy is called flat"),
    "flat_tolerance": Threshold(0.01, "an accuracy whose values span at most this (absolute) never changed"),
    "examples_share": Threshold(0.001, "a held-out accuracy holds its predictions when its values span at most one "
                                       "example of its set, or this share of the set (25 windows of 135,000 "
                                       "answered differently), within the flat tolerance"),
    "loss_drop_share": Threshold(0.1, "the loss fell by at least this share of its level over the flat span, "
                                      "or by less in a steady fall (a rank trend beyond 3σ); beyond its noise "
                                      "either way"),
    "still_falling_share": Threshold(0.05, "the last quarter of the span holds at least this share of the fall, "
                                           "beyond its noise (the loss keeps falling, it did not just settle)"),
    "lr_stopped_share": Threshold(1e-3, "a learning rate at most this share of its peak for most of the flat span "
                                        "means nothing trains: the accuracy is flat for that reason"),
    "entropy_margin": Threshold(0.02, "a loss more than this share below the least cross-entropy any constant "
                                     "prediction with that accuracy can reach comes from input-dependent "
                                     "predictions"),
}


@dataclass
class FlatAccuracy:
    """An accuracy that never changed, and what its loss did meanwhile."""

    curve: Curve
    level: float
    points: int
    spread: float
    span: tuple[int, int]
    loss: Curve | None = None
    quarters: list[float] = field(default_factory=list)
    loss_start: float = math.nan  # where the loss stood when the span began
    loss_falls: bool = False  # fell over the span by a meaningful share and beyond its noise
    still_falling: bool = False  # and was still falling in the last quarter
    constant_prediction_possible: bool = True  # the loss is not below what a constant predictor can reach

    def describe(self) -> str:
        steps = f"steps {self.span[0]}–{self.span[1]}"
        if self.spread == 0:
            return f"{self.curve.tag} = {fmt(self.level)} at all {self.points} points ({steps})"
        return (f"{self.curve.tag} holds at {fmt(self.level)} (median) over {self.points} points, {steps}: range "
                f"{fmt(self.spread)}, no trend and no scatter beyond what sampling a batch explains")

    def loss_quarters(self) -> str:
        return (f"{self.loss.tag} starts the span at {fmt(self.loss_start)}; by quarters of the span: "
                + " → ".join(fmt(q) for q in self.quarters))


def _least_entropy(accuracy: float) -> float:
    """The least entropy (nats) of a label distribution whose commonest class has share ``accuracy``: the lowest
    cross-entropy a model that predicts the same class for every input can reach at that accuracy."""
    full = math.floor(1 / accuracy)
    rest = 1 - full * accuracy
    return -full * accuracy * math.log(accuracy) - (rest * math.log(rest) if rest > 1e-12 else 0.0)


def _most_entropy(accuracy: float, n_classes: int) -> float:
    """The most entropy (nats) of a distribution over ``n_classes`` whose commonest class has share ``accuracy``
    (the rest spread evenly): the highest cross-entropy a model that learned such a prior can settle at."""
    rest = 1 - accuracy
    return -accuracy * math.log(accuracy) - (rest * math.log(rest / (n_classes - 1)) if rest > 1e-12 else 0.0)


def _loss_pins_a_prior(run: RunCurves, flat: FlatAccuracy, limits: Limits) -> bool:
    """A minibatch train accuracy that holds its level shows a model stuck at that accuracy, which a model that
    learned only the class prior is, and so is one on a plateau (63% on 15 action classes): only a loss that
    settled where a prior with that majority share can sit tells them apart: within a tenth (chance_margin) of such
    a prior's entropy with the rest spread over the other classes, or, the class count unknown, of its least."""
    if flat.loss is None or not flat.quarters:
        return False
    n = run.n_classes
    most = _most_entropy(flat.level, n) if n is not None and n >= 2 else _least_entropy(flat.level)
    return flat.quarters[3] <= (1 + limits["chance_margin"]) * most


def _flat_accuracy(run: RunCurves, limits: Limits) -> FlatAccuracy | None:
    """The accuracy (held-out preferred) whose value never changed, when the train accuracy did not rise either.

    A held-out accuracy must keep one value, or move by one example at most: two adjacent values within the flat
    tolerance, or two counts one apart of one evaluation set of at least MIN_SET_FOR_ONE_EXAMPLE examples (36/60
    and 35/60: one example answered differently, the rest the same); over a large set, by at most examples_share
    of it (0.70713-0.70731 of some 135,000 windows). A model that learns within its first epoch
    also shows one held-out value throughout, so the train accuracy (when logged) must be level over the same span
    too: its trend there changes it by no more than the tolerance plus its noise; unless the held-out value is the
    same to its last digit at every evaluation of a set of LARGE_SET examples or more, which a model whose weights
    change does not score. Without a held-out accuracy, the train accuracy alone must hold its level so."""
    held_out = held_out_accuracy(run)
    train = run.curve(Role.TRAIN_ACC)
    train_values = as_fraction(train) if train is not None else None
    if held_out is not None:
        curve, values = held_out
        held = max(_one_example(values) or 0.0, limits["examples_share"])
        if len(values) < limits["min_points"] or (np.ptp(values) > min(limits["flat_tolerance"], held)
                                                  and not _one_example_apart(values)):
            return None
    elif (train_values is not None and len(train_values) >= limits["min_points"]
          and _level_holds(train_values, limits["flat_tolerance"]) and _averages_hold(train, train_values, limits)):
        curve, values = train, train_values
    else:
        return None
    span = (int(curve.finite_steps[0]), int(curve.finite_steps[-1]))
    # one value to its last digit at every evaluation of a large set is predictions that never changed, whatever the
    # train accuracy did: a model that learned within its first epoch and kept training still answers some examples
    # differently each time
    # so is a held-out accuracy of exactly 0 at every evaluation: not one example ever answered right, which no
    # model that learned within its first epoch scores
    never_right = held_out is not None and not values.any()
    unchanged = never_right or (held_out is not None and float(np.ptp(values)) == 0
                                and from_a_large_set(float(values[0])))
    if train_values is not None:
        # over the held-out curve's span only: the first steps, where the prior itself is learned, come before it
        train_values = train_values[(train.finite_steps >= span[0]) & (train.finite_steps <= span[1])]
    if (train_values is not None and not unchanged and len(train_values) >= limits["min_points"]
            and not _level_holds(train_values, limits["flat_tolerance"])):
        return None
    lr = run.curve(Role.LR)
    if lr is not None and len(lr.finite_values):
        during = lr.finite_values[(lr.finite_steps >= span[0]) & (lr.finite_steps <= span[1])]
        peak = float(np.max(np.abs(lr.finite_values)))
        if len(during) and peak > 0 and np.median(np.abs(during)) <= limits["lr_stopped_share"] * peak:
            return None  # nothing trains during the span: plateau_high's "LR decayed to zero", not these rules'
    level = float(np.median(values))
    flat = FlatAccuracy(curve, level, len(values), float(np.ptp(values)), span)
    flat.loss = _loss_for(run, curve)
    if flat.loss is not None:
        _judge_loss(flat, limits)
        train_loss = run.curve(Role.TRAIN_LOSS)
        if never_right and not flat.loss_falls and train_loss is not None and train_loss is not flat.loss:
            # its own split's loss may climb as the wrong answers grow surer; the training loss shows the fit
            flat.loss = train_loss
            _judge_loss(flat, limits)
    return flat


def _averages_hold(curve: Curve, values: np.ndarray, limits: Limits) -> bool:
    """A short log's accuracy (a few dozen points at most, each an average over an epoch's examples) of a model
    whose predictions do not change keeps its value to within the tolerance or two examples: it scores the same
    examples the same way every epoch. One that spans more (86.4% → 93.8% over 10 epochs) changed its predictions.
    A long per-step log is judged by its trend and its batches' scatter (:func:`_level_holds`)."""
    if curve.window > 1:
        return True
    return float(np.ptp(values)) <= max(limits["flat_tolerance"], 2 * (_one_example(values) or 0.0))


def _level_holds(values: np.ndarray, tolerance: float) -> bool:
    """A minibatch accuracy that never leaves its level: the change its straight-line trend makes over the span
    is within the tolerance plus three of its standard errors (0.855 → 0.940 over 5 points is a model that
    learns, however noisy each point is), no rank trend beyond 3σ moves it by more than the tolerance between its
    first and last quarters, and its points scatter around that trend no more than a constant
    prediction's would: twice the binomial σ of the smallest batch its values allow (swings of 0.50 ↔ 0.99 on an
    accuracy over dozens of examples have no trend either, and are no fixed prediction)."""
    positions = np.arange(len(values), dtype=float)
    slope, intercept = np.polyfit(positions, values, 1)
    residual = values - (slope * positions + intercept)
    spread = float(np.sum((positions - positions.mean()) ** 2))
    dof = len(values) - 2
    if dof < 1 or spread == 0:
        return False
    change_error = math.sqrt(float(np.sum(residual ** 2)) / dof / spread) * positions[-1]
    if abs(slope * positions[-1]) > tolerance + 3 * change_error:
        return False
    # a level, a scatter and an order are read as well off READ_BATCH_VALUES evenly spaced points as off a million
    every = max(1, len(values) // READ_BATCH_VALUES)
    # a climb that saturates (0.68, 0.93, 0.94 … 0.99: Detectron2's mask accuracy) bends away from a straight line,
    # and its first point inflates that line's error: its order says it moved, by more than the tolerance from its
    # first quarter to its last
    read = values[::every]
    quarter = max(1, len(read) // 4)
    if (abs(float(np.median(read[-quarter:])) - float(np.median(read[:quarter]))) > tolerance
            and abs(rank_trend_z(read)) >= 3):
        return False
    level = float(np.clip(np.median(read), 0.0, 1.0))
    batch = _smallest_batch(read)
    return robust_sigma(residual[::every]) <= max(2 * math.sqrt(level * (1 - level) / batch), tolerance)


# Batches up to this size are read off an accuracy's values (k/b); one whose values no smaller batch explains is
# taken as an average over at least this many examples
LARGEST_READ_BATCH = 64
READ_BATCH_VALUES = 10_000


def _smallest_batch(values: np.ndarray) -> int:
    """The smallest batch size b ≤ LARGEST_READ_BATCH of which at least half the accuracy's values are a multiple
    of 1/b (as printed: to their last digit), else LARGEST_READ_BATCH. It errs small, which lets a constant
    prediction scatter more: a last partial batch (23/24 beside 30/32) or even counts (k/32 = j/16) read smaller."""
    # distinct values weighted by how often each occurs: a thousand per-step accuracies hold a few dozen
    distinct, counts = np.unique(values, return_counts=True)
    for batch in range(1, LARGEST_READ_BATCH + 1):
        scaled = distinct * batch
        if counts[np.abs(scaled - np.round(scaled)) <= batch * 5e-5 + 1e-9].sum() >= 0.5 * len(values):
            return batch
    return LARGEST_READ_BATCH


def _loss_for(run: RunCurves, accuracy: Curve) -> Curve | None:
    """The loss of the accuracy's split (validation loss for validation accuracy), else the train loss. A loss that
    goes below zero is no cross-entropy (CD102's finding): how far it falls, or how low a constant prediction
    could score, says nothing of the predictions."""
    for role in (LOSS_OF_ACCURACY[accuracy.role], Role.TRAIN_LOSS):
        curve = run.curve(role)
        if curve is not None and len(curve.finite_values) >= 4 and curve.finite_values.min() >= 0:
            return curve
    return None


def _judge_loss(flat: FlatAccuracy, limits: Limits) -> None:
    """What the loss did over the flat span: fell, kept falling to the end, and whether a constant predictor
    could have produced it. A short curve whose last half only ever falls keeps falling whatever its noise
    estimate says (on 6 epoch points the noise estimate is mostly the curve's own bend)."""
    loss = flat.loss
    inside = (loss.finite_steps >= flat.span[0]) & (loss.finite_steps <= flat.span[1])
    values = loss.finite_values[inside] if inside.sum() >= 4 else loss.finite_values
    flat.quarters = [float(np.median(part)) for part in np.array_split(values, 4)]
    # from where the span starts: on an epoch log the fall is often over within its first quarter (0.518 → 0.443
    # in 7 of 31 evaluations), whose median is then already most of the way down
    flat.loss_start = max(float(np.median(first_points(values))), flat.quarters[0])
    fall, last_fall = flat.quarters[0] - flat.quarters[3], flat.quarters[2] - flat.quarters[3]
    quarter_noise = loss.noise / math.sqrt(max(1, len(values) // 4))
    whole_fall = flat.loss_start - flat.quarters[3]
    # a fall of any size that is beyond the noise and steady (a rank trend) changed the outputs as surely as a
    # large one: a frozen model scores the same examples the same way every time
    flat.loss_falls = whole_fall > 3 * quarter_noise and (whole_fall >= limits["loss_drop_share"] * abs(flat.loss_start)
                                                          or rank_trend_z(values) <= -3)
    last_half = values[len(values) // 2:]
    monotone = len(last_half) >= 3 and bool(np.all(np.diff(last_half) < 0))
    flat.still_falling = (flat.loss_falls and last_fall >= limits["still_falling_share"] * fall
                          and (last_fall > 2 * quarter_noise or monotone))
    if 0 < flat.level < 1:
        flat.constant_prediction_possible = (
            flat.quarters[3] >= (1 - limits["entropy_margin"]) * _least_entropy(flat.level))


@rule(
    "CD602", "accuracy-majority", symptom="accuracy_majority", severity=ERROR, live=WHOLE_RUN,
    needs=ACCURACY_ROLES,
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
        "chance_loss_share": Threshold(0.03, "a loss within this share below −log(1/n), or above it, is at chance "
                                             "(the prior of a mildly imbalanced task) or untrained: flat_at_chance "
                                             "and flat_from_start report it"),
    },
)
def accuracy_majority(run: RunCurves, limits: Limits):
    """Accuracy (validation preferred) stays at one value for the whole run, and that value is a class share
    other than 1/n (the majority rate of imbalanced data): the loss has settled (not still falling), is no lower
    than a constant prediction allows at that accuracy, and (n known) is clearly below chance: at chance the
    prior is too close to uniform to matter, above it nothing was learned at all. A minibatch train accuracy alone
    (no held-out one) shows only a model stuck at that accuracy: its loss must then sit where a prior with that
    majority share scores. Not a language model's token accuracy (TRL's mean_token_accuracy): the share of its
    commonest token is no class prior."""
    meta = run.run.meta
    if meta.language_model or meta.n_classes_kind == VOCABULARY:
        return None  # a language model's token accuracy: no class prior a constant prediction could sit at
    flat = _flat_accuracy(run, limits)
    if flat is None or not limits["flat_tolerance"] < flat.level < 1 - limits["flat_tolerance"]:
        return None
    chance = run.chance_accuracy
    if flat.curve.role == Role.TRAIN_ACC and flat.curve.window > 1 and not _loss_pins_a_prior(run, flat, limits):
        return None
    if chance is not None and flat.level <= chance * (1 + limits["chance_margin"]):
        return None
    if chance is None and abs(flat.level * max(2, round(1 / flat.level)) - 1) <= limits["chance_margin"]:
        return None  # about 1/k: with the class count unknown, as likely chance for k balanced classes
    evidence = [flat.describe()]
    if flat.loss is not None:
        if flat.still_falling or not flat.constant_prediction_possible:
            return None  # predictions_frozen's case
        chance_loss = chance_loss_of(run, flat.loss)
        if chance_loss is not None and flat.quarters[3] >= (1 - limits["chance_loss_share"]) * chance_loss:
            return None  # at or above a uniform guess: flat_at_chance's (or flat_from_start's) case
        evidence.append(flat.loss_quarters()
                        + f" (a constant prediction at this accuracy scores ≥ {fmt(_least_entropy(flat.level))})")
    if chance is not None:
        evidence.append(f"chance 1/{run.n_classes} = {fmt(chance)}: the flat level is a class share, not chance")
    else:
        evidence.append(f"number of classes unknown; {fmt(flat.level)} is not 1/k for any k, so not balanced "
                        "chance")
    return Found(f"{flat.curve.tag} never changes from {fmt(flat.level)}: the model predicts the class prior",
                 [flat.curve.tag] + ([flat.loss.tag] if flat.loss is not None else []), evidence,
                 step_range=flat.span)


@rule(
    "CD603", "predictions-frozen", symptom="predictions_frozen", severity=ERROR, live=WHOLE_RUN,
    needs=ACCURACY_ROLES,
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
    """The loss falls over the span while the accuracy does not change at all, and either keeps falling to the
    end or sits lower than any constant prediction could (so the model does use its input): what is being
    optimised does not move the predictions. A held-out accuracy of 0 at every evaluation counts too, whatever the
    train accuracy does and however the loss settled (not one example is ever answered right while the train loss
    falls, its own split's loss often climbing as the wrong answers grow surer); one of 1 does not, having nowhere
    to go."""
    flat = _flat_accuracy(run, limits)
    if flat is None or flat.loss is None or not flat.loss_falls:
        return None
    if flat.level >= 1 - limits["flat_tolerance"]:
        return None  # an accuracy at 1 has nowhere to go: the loss can only sharpen the same answers
    if not (flat.still_falling or not flat.constant_prediction_possible or flat.level == 0):
        return None
    loss = flat.loss
    evidence = [flat.describe(), flat.loss_quarters() + (" (still falling)" if flat.still_falling else "")]
    if not flat.constant_prediction_possible:
        evidence.append(f"{loss.tag} ends below {fmt(_least_entropy(flat.level))}, the least a constant "
                        f"prediction at accuracy {fmt(flat.level)} can score: the predictions depend on the input")
    return Found(
        f"{loss.tag} falls {1 - flat.quarters[3] / flat.loss_start:.0%} while {flat.curve.tag} stays at "
        f"{fmt(flat.level)}",
        [loss.tag, flat.curve.tag], evidence, step_range=flat.span,
    )
