"""How validation loss relates to training loss: overfitting, memorising, and a validation loss that is too good.

Validation curves are short (one point per epoch, often 5-30 points), so every decision here is made in units
of the validation curve's own noise AND as a share of its level: a rise must be larger than the noise and large
enough to matter, and it must still be there at the last points, not be one bump.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from curvedoc.features import (MEDIAN_SE, Curve, RunCurves, chance_loss_of, fmt, rank_trend_z,
                               second_difference_sigma, terms_beside)
from curvedoc.roles import Role, same_curve_named
from curvedoc.rules import WARNING, WHOLE_RUN, Found, Limits, Threshold, rule
from curvedoc.rules.accuracy import held_out_accuracy

NOISE_POINTS = 5  # fewer evaluations than this have no estimate of their own noise
NEAR_PERFECT_ACCURACY = 0.999  # one held-out example in a thousand wrong, as CD601 reads near-perfect
# Two curves whose last steps lie within this factor of each other count their steps in the same units; batches and
# epochs differ by the batches in an epoch, tens to thousands
SAME_SPAN = 2.0



def _held_out(run: RunCurves) -> Curve | None:
    """The validation loss, or the test loss when a script evaluates on its test split during training. One that
    is exactly 0 at every evaluation measured nothing (a placeholder printed where the computation was commented
    out, a loss over no supervised example): no model scores a real held-out set perfectly every time."""
    for role in (Role.VAL_LOSS, Role.TEST_LOSS):
        curve = run.curve(role)
        if curve is not None and len(curve.finite_values) and curve.finite_values.any():
            return curve
    return None


def _compared(run: RunCurves) -> tuple[Curve | None, Curve | None]:
    """The held-out loss and the train loss it is set against (see :func:`_train_beside`)."""
    val = _held_out(run)
    return val, _train_beside(run, val)


def _train_beside(run: RunCurves, val: Curve | None) -> Curve | None:
    """The train loss to set the held-out loss against: the main one, unless it counts its steps in other units
    than the held-out curve does (batches, running on to step 839, where validation counts epochs and stops at 29)
    while another train loss counts them as validation does (the epoch's mean, logged at each epoch): compared at
    the same step numbers, the first would set epoch 15's validation beside batch 15's loss."""
    train = run.curve(Role.TRAIN_LOSS)
    if train is None or val is None or not len(val.finite_steps) or not len(train.finite_steps):
        return train
    end = float(val.finite_steps[-1])

    def alike(curve: Curve) -> bool:
        return end > 0 and end / SAME_SPAN <= float(curve.finite_steps[-1]) <= end * SAME_SPAN

    if alike(train):
        return train
    matching = [curve for curve in run.curves(Role.TRAIN_LOSS)
                if curve is not train and len(curve.finite_steps) >= 2 and alike(curve)]
    return max(matching, key=lambda curve: len(curve.finite_values)) if matching else train


def _train_at(train: Curve, steps: np.ndarray) -> np.ndarray:
    """The smoothed train loss at ``steps`` (NaN outside the logged range).

    A train value logged about as rarely as validation is an average over the interval since the previous log
    (Keras, Lightning epoch metrics, Hugging Face logging_steps): it describes the model half an interval earlier
    than the validation at the interval's end, so it is moved back by half its spacing before comparing."""
    train_steps = train.finite_steps.astype(float)
    if len(train_steps) > 1:
        spacing = float(np.median(np.diff(train_steps)))
        if spacing > 0 and len(train_steps) <= 2 * max(1, len(steps)):
            train_steps = train_steps - spacing / 2
    inside = (steps >= train_steps[0]) & (steps <= train_steps[-1])
    return np.where(inside, np.interp(steps, train_steps, train.smooth), np.nan)


def _untrained(run: RunCurves, train: Curve, val: Curve) -> float:
    """The loss of the untrained model: the highest of the first train value, the first validation value and
    chance −log(1/n) when that is the loss's chance level (a log that starts after some steps already shows a
    trained model)."""
    chance = chance_loss_of(run, train)
    return max(train.start, val.start, -math.inf if chance is None else chance)


def _val_gain(run: RunCurves, train: Curve, val: Curve) -> float:
    """How much of the train loss's improvement the validation loss followed: 1 when val reached the train's end
    level, 0 when val never got below the loss the untrained model started at."""
    untrained = _untrained(run, train, val)
    train_drop = untrained - train.end
    if not train_drop > 0:
        return math.nan
    return float((untrained - np.min(val.smooth)) / train_drop)


def _memorizing(run: RunCurves, train: Curve, val: Curve, limits: Limits) -> bool:
    if chance_loss_of(run, train) is None and _starts_late(train) and _starts_late(val):
        return False  # no curve shows the untrained model, so none shows that validation never got below it
    if _held_out_accuracy_near_perfect(run):
        return False  # right on (nearly) every held-out example: what it fitted transferred, whatever the loss did
    return (len(train.finite_values) >= 3 and train.end <= limits["near_zero_share"] * abs(_untrained(run, train, val))
            and _val_gain(run, train, val) < limits["followed_share"])


def _held_out_accuracy_near_perfect(run: RunCurves) -> bool:
    """The held-out accuracy ends (median of its last tenth) missing at most one example in a thousand."""
    found = held_out_accuracy(run)
    if found is None or not len(fractions := found[1]):
        return False
    return float(np.median(fractions[-max(1, len(fractions) // 10):])) >= NEAR_PERFECT_ACCURACY


def _starts_late(curve: Curve) -> bool:
    """The curve's first point lies more than one logging interval after step 0 (a log that lost its first
    epochs, a resumed session): its first value is no untrained model's, nor an average over the first interval."""
    steps = curve.finite_steps
    if len(steps) < 2:
        return False
    interval = float(np.median(np.diff(steps)))
    return interval > 0 and steps[0] > 1.5 * interval


MEMORIZING_LIMITS = {
    "near_zero_share": Threshold(0.2, "train loss has fallen towards 0 when its end level is at most this share "
                                      "of the untrained loss"),
    # A tenth is what the rules call a meaningful change of a level (rise_share): a validation loss that gained
    # that much learned something that carries over, and a lasting rise after it is overfitting, not memorising.
    "followed_share": Threshold(0.1, "validation did not follow train when its best level recovered less "
                                     "than this share of the train loss's fall"),
}


def _noise_beside_the_turn(values: np.ndarray, best: int, noise: float) -> float:
    """The noise of an unsmoothed validation curve without the second differences that span its best point: the
    turn there (a fall, then the rise being judged) is the shape under test, not its noise. On a few evaluations
    it would make most of the noise (5.95 → 7.77, then 7.6, 7.3, 7.4, 7.2: σ 0.42 with it, 0.16 without). Read as
    the curve's own noise is (a robust σ from 6 second differences on, their root mean square too below that),
    and never above it."""
    beside = _beside_the_turn(values, best)
    return noise if len(beside) < 2 else min(noise, second_difference_sigma(beside))


def _beside_the_turn(values: np.ndarray, best: int) -> np.ndarray:
    """The second differences of ``values`` that do not span its point ``best``."""
    second = np.diff(values, 2)
    return np.r_[second[:max(0, best - 2)], second[best + 1:]]


@rule(
    "CD501", "overfitting", symptom="overfitting", severity=WARNING, live=WHOLE_RUN,
    needs=(Role.VAL_LOSS, Role.TEST_LOSS),
    causes=(
        "classic overfitting: the model keeps fitting the training set after it stopped generalising",
        "too little data for the model's capacity, or too little regularisation (dropout, weight decay, augmentation)",
        "training ran far past the best epoch",
    ),
    check="keep the checkpoint of the best validation step (early stopping there); then add data, augmentation "
          "or weight decay and see whether the validation minimum moves later and lower",
    thresholds={
        "min_points": Threshold(3, "fewest finite validation points before the shape is judged (below 5, or when "
                                   "every second difference spans the best point, there is no noise estimate: the "
                                   "last point must then rise twice the share asked for)"),
        "min_after": Threshold(2, "validation points after the best one that must show the rise (not one bump; "
                                  "one on a log of 3–4 evaluations)"),
        "rise_noise": Threshold(3.0, "rise of the validation loss above its best, in units of its own noise (on top "
                                      "of the depth the minimum of that many noisy points reaches by chance); or, "
                                      "on an unsmoothed curve, the rank trend from its best on, in standard "
                                      "deviations, or the least rise of every later point, in noise units"),
        "rise_share": Threshold(0.1, "rise of the validation loss above its best, as a share of the best level"),
        "steady_share": Threshold(0.02, "the same share for a rise that is beyond the noise and steady (the points "
                                        "from the best on climb by a rank trend beyond rise_noise, or all stay "
                                        "above the best by more than rise_noise): certain, so it is reported from "
                                        "a smaller size (a 2-5% climb over 260 epochs is the checkpoint to keep)"),
        "fall_noise": Threshold(3.0, "the train loss must have fallen from its start to its end (medians of its "
                                     "first points and of its last tenth) by more than this many standard errors "
                                     "of that change: one that swings by more than it ever fell has made no fit "
                                     "the validation rise could be the price of"),
        **MEMORIZING_LIMITS,
    },
)
def overfitting(run: RunCurves, limits: Limits):
    """Train loss still falls while the validation loss, after its best point, has risen by more than its own
    noise and by a meaningful share of its best level (a tenth; a fiftieth when the points from the best on also
    climb steadily, a rank trend beyond chance), and stays up to the last points. On an unsmoothed curve the noise
    is read beside the turn at the best, which is the rise under test. A held-out loss logged only as terms (a
    detector's box, objectness and class losses) overfits when one term does, against its own train term. Reports
    the best validation step (where to stop) and the rise. A run whose validation never improved (CD502's) overfits
    too when its validation loss then climbs a meaningful share of its best, however steady the climb."""
    val, train = _compared(run)
    if val is None or train is None or len(val.finite_values) < limits["min_points"] or not len(train.finite_values):
        return None
    # Memorising says validation gained nothing; a validation loss that then climbs well above that best (random
    # labels: 2.3 -> 5.4) is what engineers call overfitting as well. A climb of a few percent there is a flat
    # curve's drift, not a checkpoint worth keeping, so it is not reported from the smaller steady share.
    steady_share = limits["rise_share"] if _memorizing(run, train, val, limits) else limits["steady_share"]
    if (found := _overfit(run, val, train, limits, steady_share)) is not None:
        return found
    # A detector logs its held-out loss only as terms (YOLO's val/box_loss, val/obj_loss, val/cls_loss): each is
    # judged against its own train term, as the term that overfits (the objectness of a small dataset) is seldom
    # the one shown first. A term is a part of the loss, and its steady climb of a few percent a smaller move of
    # it: a term's rise must be a meaningful share of its own level however steady
    for term in (term for term in terms_beside(run, val) if term is not val):
        partner = next((curve for curve in run.curves(Role.TRAIN_LOSS) if same_curve_named(curve.tag, term.tag)),
                       None)
        if (partner is not None and len(partner.finite_values)
                and (found := _overfit(run, term, partner, limits, limits["rise_share"])) is not None):
            return found
    return None


def _overfit(run: RunCurves, val: Curve, train: Curve, limits: Limits, steady_share: float) -> Found | None:
    """CD501 on one held-out curve and the train curve it is the held-out side of; ``steady_share``: the smallest
    rise, as a share of the best level, that a steady climb is reported from."""
    values, smooth = val.finite_values, val.smooth
    best = val.best_index
    after = len(values) - 1 - best
    few = len(values) < NOISE_POINTS
    if after < (1 if few else limits["min_after"]):
        return None
    # the noise of an unsmoothed curve is read beside the turn at its best (see _noise_beside_the_turn): a few
    # evaluations with the turn among them have none to read, like a log of fewer than NOISE_POINTS
    short = few or (val.window == 1 and len(_beside_the_turn(values, best)) < 2)
    best_level = float(smooth[best])
    tail = values[max(best + 1, len(values) - max(int(limits["min_after"]), math.ceil(0.15 * len(values)))):]
    end_level = float(np.median(tail))
    rise = end_level - best_level
    if short:
        # Three or four evaluations have no noise estimate: the rise must be meaningful at the end and the last
        # evaluation (an average over the whole held-out set) twice that.
        needed = limits["rise_share"] * abs(best_level)
        if not (needed > 0 and rise >= needed and values[-1] - best_level >= 2 * needed):
            return None
        noise = 0.0
    else:
        # The lowest of n noisy points sits below the curve's true level by chance alone, by the expected minimum
        # of n Gaussian draws (Blom's Φ⁻¹((n − 3/8) / (n + 1/4)) noise units: 1.35 for 7 points, 2.04 for 29), so a
        # rise measured from the minimum has to clear that depth on top of the rise asked for. A long curve's best
        # is read off its running median, whose noise is a median's of `window` points and whose lowest is that of
        # about n / window independent draws; the rise is then judged against the noise of the two medians.
        noise = val.noise
        if val.window > 1:
            draws = len(values) / val.window
            best_noise = MEDIAN_SE * noise / math.sqrt(val.window)
            tail_noise = MEDIAN_SE * noise / math.sqrt(len(tail))
            chance_depth = NormalDist().inv_cdf((draws - 0.375) / (draws + 0.25)) if draws > 1 else 0.0
            # a certain rise (beyond the noise and climbing steadily from the best) is reported from a smaller size
            steady = rank_trend_z(values[best:]) >= limits["rise_noise"]
            needed = max(chance_depth * best_noise + limits["rise_noise"] * math.hypot(best_noise, tail_noise),
                         (steady_share if steady else limits["rise_share"]) * abs(best_level))
        else:
            noise = _noise_beside_the_turn(values, best, noise)
            chance_depth = NormalDist().inv_cdf((len(values) - 0.375) / (len(values) + 0.25))
            needed = max((limits["rise_noise"] + chance_depth) * noise, limits["rise_share"] * abs(best_level))
            if (rank_trend_z(values[best:]) >= limits["rise_noise"]
                    or np.all(values[best + 1:] - values[best] >= limits["rise_noise"] * noise)):
                # The points from the best on climb beyond what their order does by chance (a rank trend, which the
                # choice of the lowest point does not bias), or every one of them stays above the best by more
                # than the noise (a lasting rise: each later point of a flat curve falls below that line with a
                # fair chance, all of them together almost never): the rise, however its size compares with the
                # depth one noisy minimum reaches, is then only asked to be meaningful; one that clears that depth
                # too is certain, and is reported from the smaller steady share.
                certain = max((limits["rise_noise"] + chance_depth) * noise, steady_share * abs(best_level))
                needed = min(limits["rise_share"] * abs(best_level), certain)
        if not (needed > 0 and rise >= needed and values[-1] - best_level >= needed / 2):
            return None
    best_step, last_step = val.step_at(best), val.step_at(len(values) - 1)
    train_at_best = float(_train_at(train, np.array([best_step], dtype=float))[0])
    if math.isnan(train_at_best):
        train_at_best = float(train.smooth[min(np.searchsorted(train.finite_steps, best_step), len(train.smooth) - 1)])
    # and the train loss learned, beyond its own noise: one that swings by more than it ever fell (an LR so high it
    # oscillates) has no fit that the validation rise could be the price of
    fall, noise_of_fall = train.level_change()
    if not (train.end < train_at_best and -fall > limits["fall_noise"] * noise_of_fall):
        return None
    noise_units = (f"{rise / noise:.1f}× its noise ({fmt(noise)})" if noise > 0 else
                   "too few evaluations to measure their noise" if short else "no measurable noise")
    return Found(
        f"Overfitting: {val.tag} is lowest at step {best_step}, then rises {rise / abs(best_level):.0%} while "
        f"{train.tag} keeps falling",
        [val.tag, train.tag],
        [f"{val.tag} best = {fmt(best_level)} at step {best_step} (stop here)",
         f"{val.tag} at the end = {fmt(end_level)} (median of the last {len(tail)} points; last "
         f"{fmt(values[-1])} at step {last_step}): +{fmt(rise)}, {rise / abs(best_level):.0%} of the best, "
         f"{noise_units}",
         f"{train.tag} = {fmt(train_at_best)} at step {best_step}, {fmt(train.end)} at the end (still falling)",
         f"{after} of {len(values)} validation points come after the best"],
        step=best_step, step_range=(best_step, last_step),
    )


@rule(
    "CD502", "memorizing", symptom="memorizing", severity=WARNING, live=WHOLE_RUN,
    needs=(Role.VAL_LOSS, Role.TEST_LOSS),
    causes=(
        "the model memorises the training examples without learning anything that transfers",
        "training labels that do not match the inputs (shuffled, misaligned, or a different label mapping than "
        "validation)",
        "train and validation preprocessed differently, so validation inputs look nothing like training inputs",
    ),
    check="score the validation set with the training pipeline's preprocessing and label mapping; train on 10% "
          "of the data with labels shuffled: if that curve looks the same, the labels carry no signal",
    thresholds={"min_points": Threshold(3, "fewest finite validation points before they are judged"),
                **MEMORIZING_LIMITS},
)
def memorizing(run: RunCurves, limits: Limits):
    """Train loss falls to about zero while the validation loss never gets meaningfully below where the untrained
    model started: the generalisation gap is the whole of what training gained. Not when the held-out accuracy
    ends near-perfect (at most one example in a thousand wrong): what the model fitted transferred."""
    val, train = _compared(run)
    if val is None or train is None or len(val.finite_values) < limits["min_points"]:
        return None
    if not _memorizing(run, train, val, limits):
        return None
    gain = _val_gain(run, train, val)
    untrained = _untrained(run, train, val)
    best = val.best_index
    first_step, last_step = val.step_at(0), val.step_at(len(val.finite_values) - 1)
    start = {train.start: f"{fmt(untrained)} at the start", val.start: f"{fmt(untrained)} (first {val.tag})",
             chance_loss_of(run, train): f"untrained level −log(1/{run.n_classes}) = {fmt(untrained)}"}[untrained]
    return Found(
        f"Memorizing: {train.tag} falls to {fmt(train.end)} while {val.tag} barely improves (best "
        f"{fmt(val.smooth[best])})",
        [train.tag, val.tag],
        [f"{train.tag}: {start} → {fmt(train.end)} at the end ({train.end / abs(untrained):.1%} of it)",
         f"{val.tag}: best {fmt(val.smooth[best])} at step {val.step_at(best)}, {fmt(val.end)} at the end",
         f"validation followed {max(gain, 0.0):.0%} of the train loss's fall",
         f"gap at the end: {val.tag} − {train.tag} = {fmt(val.end - train.end)}"],
        step=first_step, step_range=(first_step, last_step),
    )


@rule(
    "CD503", "val-below-train", symptom="val_below_train", severity=WARNING, live=WHOLE_RUN,
    needs=(Role.VAL_LOSS, Role.TEST_LOSS),
    causes=(
        "dropout, augmentation or noise active when the train loss is computed, off for validation",
        "a regulariser (weight decay, auxiliary loss) added to the logged train loss but not to the validation loss",
        "an easier validation split (duplicates of training examples, a different distribution)",
        "losses reduced differently (sum vs mean, per-token vs per-sequence)",
    ),
    check="compute the train loss on a fixed train batch in eval mode with the same loss function as validation: "
          "like for like, it should not be above the validation loss",
    thresholds={
        "min_points": Threshold(3, "fewest validation points that must overlap the train curve"),
        "gap_noise": Threshold(3.0, "the median gap must exceed this many standard errors of a median of the "
                                    "compared points (their combined noise / sqrt(points))"),
        "gap_share": Threshold(0.1, "the median gap must be at least this share of the train loss"),
        "persist_share": Threshold(0.75, "share of the compared validation points where val is below train "
                                         "(most of the run)"),
        "train_fall_share": Threshold(0.1, "the train loss must fall by this share of its start (and beyond "
                                           "its noise): losses of a model that does not train differ only by the "
                                           "split's sample"),
    },
)
def val_below_train(run: RunCurves, limits: Limits):
    """The validation loss sits below the smoothed train loss at the same steps for most of the run, and the
    typical (median) gap is beyond the noise and a meaningful share of the train loss. Train values logged as
    interval averages are moved back half an interval first, so the ordinary lag of an epoch average is not
    reported; a model whose train loss does not fall is left alone (its two losses differ only by sampling), so is a
    train loss that goes below zero (signed by design, or CD102's finding: no level for the gap to be a share of),
    and so is one term of a multi-term loss (a detector's box loss: how terms trade off under training-time
    augmentation says nothing of the whole)."""
    val, train = _compared(run)
    if val is None or train is None or len(train.finite_values) < 2:
        return None
    if terms_beside(run, train) or terms_beside(run, val):
        return None
    if train.finite_values.min() < 0:
        return None  # a signed train loss (a negative SI-SNR, a Gaussian NLL) has no level for a gap to be a share of
    change, noise_of_change = train.level_change()
    if -change < max(limits["train_fall_share"] * abs(train.start_level), limits["gap_noise"] * noise_of_change):
        return None
    steps = val.finite_steps.astype(float)
    train_at = _train_at(train, steps)
    compared = ~np.isnan(train_at)
    if compared.sum() < limits["min_points"]:
        return None
    train_at, val_at, steps = train_at[compared], val.finite_values[compared], steps[compared]
    noise = math.hypot(val.noise, train.noise / math.sqrt(train.window))
    gap = train_at - val_at
    below = gap > 0
    with np.errstate(divide="ignore", invalid="ignore"):  # a train loss of exactly 0: ±inf, or NaN when val is 0 too
        relative = gap / np.abs(train_at)
    typical = int(np.argsort(relative)[len(gap) // 2])
    standard_error = 1.25 * noise / math.sqrt(len(gap))  # of a median of len(gap) noisy gaps
    if (below.mean() < limits["persist_share"] or relative[typical] < limits["gap_share"]
            or np.median(gap) <= limits["gap_noise"] * standard_error):
        return None
    return Found(
        f"{val.tag} is below {train.tag} on {below.sum()} of {len(below)} validation steps, typically by "
        f"{relative[typical]:.0%}",
        [val.tag, train.tag],
        [f"at step {int(steps[typical])}: {val.tag} = {fmt(val_at[typical])}, smoothed {train.tag} = "
         f"{fmt(train_at[typical])} ({relative[typical]:.0%} lower; the median case)",
         f"median gap {fmt(float(np.median(gap)))} = "
         + (f"{float(np.median(gap)) / standard_error:.1f} standard errors (combined noise {fmt(noise)} over "
            f"{len(gap)} points)" if standard_error else f"beyond any noise: neither curve has any ({len(gap)} points)"),
         f"at the end: {val.tag} = {fmt(val_at[-1])}, {train.tag} = {fmt(train_at[-1])}"],
        step_range=(int(steps[0]), int(steps[-1])),
    )
