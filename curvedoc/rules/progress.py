"""Whether the loss makes progress: flat from the start, flat at chance, stuck on a high plateau, or ending high.

Levels are compared as shares of the loss's own start (or of −log(1/n) when the loss is a cross-entropy over n
known classes) and read off the running-median curve, so minibatch noise neither hides nor fakes progress, and
the same share means the same on a 5-point epoch curve and on a million steps.
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.features import (ACCURACY_ROLES, MEDIAN_SE, START_POINTS, Curve, RunCurves, as_fraction,
                               chance_as_yardstick_of_height, chance_loss_of, first_logged, first_point_share, fmt,
                               fmt_change, robust_sigma, trend_z)
from curvedoc.roles import Role, epoch_average_of
from curvedoc.rules import ERROR, WARNING, WHOLE_RUN, Found, Limits, Threshold, rule, shipped_limits
from curvedoc.rules.finetune import loss_masked_out
from curvedoc.rules.generalization import overfitting
from curvedoc.rules.stability import (SHORT_CURVE, SWING_VS_LEVEL, SWING_VS_PROGRESS, perfect_score, shortfall,
                                      spread)
from curvedoc.rules.start import chance_text

# A curve needs this many points before "it only wanders around its start" can be told from a short climb.
WANDER_POINTS = 10
# Three falls in a row of a short log's averages: a curve still coming down at its end (noise does it one time in 8).
FALLING_CHANGES = 3
# Three equal evaluations in a row are no coincidence of a model that still changes (two may be, at a few digits).
MIN_FROZEN_EVALUATIONS = 3
# A loss computed from weights that still change varies by more than this share of its level over half a run
# (four printed decimals of a loss at 0.5 resolve a fifth of it)
PINNED_SHARE = 1e-3
# Step losses that come back to their starting level on at most this share of their later points left it behind.
NEVER_BACK_SHARE = 0.01


def is_flat(curve: Curve, limits: Limits, arbitrary_zero: bool = False) -> bool:
    """The curve makes no progress from its start: it ends within ``max_change`` of its start level (and its tenths
    do not trend away from it in between); or it never
    gets below that level (its running median stays within ``max_change`` under it) and, over 10 points or more,
    only wanders: it ends no higher than its noise explains and shows no trend; or, on a long curve whose swings
    are modest, it ends within its noise and the medians of its tenths never move further than their own noise
    carries them, with no trend or one too small to matter (a drift of 3% over 3,000 noisy episodes is
    significant to a rank test, and still no progress). A curve whose zero is ``arbitrary_zero`` (an agent's reward,
    counted from where its game chose: a makespan penalty of -115 that becomes -110) ends near its start only within
    its noise as well: a share of such a level means nothing."""
    change, noise = curve.level_change()
    start = abs(curve.start_level)
    # below 5 points there is no noise estimate: a difference is all the curve's shape
    allowance = limits["noise_z"] * noise if len(curve.finite_values) >= 5 else 0.0
    if abs(change) <= limits["max_change"] * start and not (arbitrary_zero and abs(change) > allowance):
        return not (_went_and_came_back(curve, limits) or _trends_away(curve, limits))
    never_below = float(curve.smooth[1:].min(initial=math.inf)) >= (1 - limits["max_change"]) * start
    if (curve.role != Role.SCORE and never_below and len(curve.finite_values) >= WANDER_POINTS
            and change <= allowance and abs(trend_z(curve)) <= limits["noise_z"]):
        return True
    # A loss whose swings reach half its level oscillates and has no level to be flat at; a score does not: an
    # agent's episode returns spread as widely as its game's outcomes (a Threes score 18-1,146 around 208) by
    # design, and the medians of its tenths still say whether the policy got better.
    if curve.window <= 1 or (curve.role != Role.SCORE
                             and curve.noise >= SWING_VS_LEVEL * abs(float(np.median(curve.finite_values)))):
        return False
    # The medians of its tenths wander ±noise_z × 1.25 σ/√(points in a tenth) by chance: levels that stay within
    # that never moved (however significant a drift of 3% over 3,000 noisy episodes is to a rank test).
    tenths = np.array_split(curve.finite_values, 10)
    levels = np.array([np.median(part) for part in tenths])
    if np.any(np.abs(curve.start_points - float(np.median(levels))) > limits["noise_z"] * curve.noise):
        return False  # it started beyond its noise from where it then stayed: an early drop, however noisy
    chance_range = 2 * limits["noise_z"] * MEDIAN_SE * curve.noise / math.sqrt(min(len(part) for part in tenths))
    drift = max(abs(float(levels[-1] - levels[0])), abs(curve.start_level - float(levels[0])))
    return (abs(change) <= allowance and float(np.ptp(levels)) <= max(chance_range, limits["max_change"] * start)
            and (abs(trend_z(curve)) <= limits["noise_z"] or drift <= limits["max_change"] * abs(np.mean(levels))))


def _trends_away(curve: Curve, limits: Limits) -> bool:
    """Whether a curve that ends near its start level moved all the same: over 10 points or more it trends beyond
    its noise, and its last tenth's median lies further from its first tenth's than the flat band. A start level is
    a median of the first few points only, which a noisy curve draws anywhere (three episode scores of 199, 375
    and 312 from an agent that goes on to improve 60%); the tenths are many points each."""
    if len(curve.finite_values) < WANDER_POINTS or abs(trend_z(curve)) <= limits["noise_z"]:
        return False
    levels = np.array([np.median(part) for part in np.array_split(curve.finite_values, 10)])
    return abs(float(levels[-1] - levels[0])) > limits["max_change"] * abs(float(np.mean(levels)))


def _went_and_came_back(curve: Curve, limits: Limits) -> bool:
    """Whether a curve that ends where it started moved in between: the median of some tenth of it lies further
    from the start level than the flat band, than that median's own noise, and than the tenths wander among
    themselves (a loss that fell 25%, then jumped back at epoch 33 and stayed, learned something and lost it: no
    flat start; a minibatch loss that wanders by batch difficulty never left)."""
    tenths = np.array_split(curve.finite_values, min(10, len(curve.finite_values)))
    levels = np.array([np.median(part) for part in tenths])
    scatter = robust_sigma(np.concatenate([part - level for part, level in zip(tenths, levels)]))
    # a tenth's median and the start level (a median of its first few points) each carry their points' noise
    medians_noise = MEDIAN_SE * max(curve.noise, scatter) * math.sqrt(
        1 / len(curve.start_points) + 1 / min(len(part) for part in tenths))
    band = max(limits["max_change"] * abs(curve.start_level), limits["noise_z"] * medians_noise,
               limits["noise_z"] * robust_sigma(levels))
    return bool(np.any(np.abs(levels - curve.start_level) > band))


def judged_losses(run: RunCurves, min_points: float) -> list[Curve]:
    """The train and validation loss, those with enough finite points to have a shape. A loss that turns
    NaN/Inf is left out: that is CD101's finding, and the finite stretch before it says nothing of a shape."""
    curves = (run.curve(Role.TRAIN_LOSS), run.curve(Role.VAL_LOSS))
    return [curve for curve in curves
            if curve is not None and curve.first_nonfinite is None and len(curve.finite_values) >= min_points]


def judged_progress(run: RunCurves, min_points: float) -> list[Curve]:
    """The curves whose progress is judged: the losses, or the main score (a reward, a success rate) of an
    agent's run (its losses say nothing of progress) or of a run that logs no loss (a loss NaN throughout is still
    one). Whether a curve moves does not depend on which way is better."""
    logs_a_loss = any(run.curve(role) is not None for role in (Role.TRAIN_LOSS, Role.VAL_LOSS))
    if run.reinforcement_learning or not logs_a_loss:
        scores = [curve for curve in run.curves(Role.SCORE) if len(curve.finite_values) >= min_points]
        main = run.curve(Role.SCORE)
        if main in scores and np.ptp(main.finite_values) == 0:
            # a reward identical at every point beside rewards that move is the environment's pay per step
            # (CartPole's 1 for every step survived), not the agent's return: the run moved if they did
            main = next((curve for curve in scores if np.ptp(curve.finite_values) > 0), main)
        return [main] if main in scores else []
    # a run that logs a loss is judged on it; one that is NaN throughout is CD101's, and a score stuck beside it
    # (an F1 of 0 from a model that outputs NaN) is that NaN's doing, not a flat start of its own
    return judged_losses(run, min_points)


# Fewer points than this on every curve of a run (three or four evaluations) are too short a log to show by their
# moves alone that nothing was learned
FEW_POINTS = 5


def is_flat_from_start(run: RunCurves, limits: Limits) -> list[Curve]:
    """The curves that show the run never moving (train and validation loss both flat; the main score of a run
    without a loss), or [] when it moved."""
    # a held-out loss at exactly 0 at every evaluation measures nothing (an empty or broken validation split): the
    # train loss beside it says whether the run moved
    curves = [curve for curve in judged_progress(run, limits["min_points"])
              if curve.role not in (Role.VAL_LOSS, Role.TEST_LOSS) or curve.finite_values.any()]
    if not curves:
        return []
    if any(curve.role != Role.SCORE and curve.start_level <= 0
           and not (_zero_throughout(curve) and loss_masked_out(run, shipped_limits("CD902")) is None)
           for curve in curves):
        # a loss at 0 has nowhere to go, and a signed one no level to stay at; one exactly 0 at every step that
        # CD902 does not read as nothing supervised never moved (one class to learn, a column never filled)
        return []
    # nor has a score perfect from the start that still varies: a success rate of 1 that the agent misses now and
    # then is a task it already solves (one identical everywhere is a pay per step, CartPole's 1, which says nothing)
    if any(curve.role == Role.SCORE and (perfect := perfect_score(curve)) is not None
           and curve.start_level >= perfect and np.ptp(curve.finite_values) > 0 for curve in curves):
        return []
    if any(curve.role == Role.SCORE and _centred(curve) for curve in curves):
        return []  # a reward normalised per batch is centred on 0 by construction: it has no level to keep
    if not run.reinforcement_learning and any(curve.role == Role.SCORE and _changes(curve) for curve in curves):
        # An evaluation score is first logged after training has begun, so it never shows the untrained model;
        # one that differs from evaluation to evaluation comes from weights that change, which the causes of a
        # flat start (a zero learning rate, frozen parameters, a missing step) all rule out: the model learned
        # before its first evaluation and gained little after (an F1 of 0.41 after the first of 49 epochs).
        return []
    flat = [_flat_version(run, curve, limits) for curve in curves]
    if all(curve is not None for curve in flat):
        learns = _accuracy_climbs(run, limits) and not any(_pinned(curve) for curve in flat)
        if max(len(curve.finite_values) for curve in flat) < FEW_POINTS and not any(
                not _changes(curve) or _unchanged_after_first(curve) or at_chance(run, curve, shipped_limits("CD302"))
                for curve in flat):
            # Three or four evaluations that move by a percent or two say little more than that the run was short:
            # a fine-tune's loss moves slowly at first. They show a run that never moved when a curve keeps its
            # value (to a thousandth of it, or exactly after its first point) or sits at chance, where no learning
            # would leave it
            return []
        return [] if learns else flat
    # A validation loss identical to the last digit at every evaluation is the same weights scoring the same set:
    # nothing was learned, whatever minibatch noise makes the train loss wander (unless it clearly falls, which
    # would be a broken evaluation rather than a frozen model).
    frozen = [curve for curve in curves if curve.role == Role.VAL_LOSS and np.ptp(curve.finite_values) == 0]
    train = run.curve(Role.TRAIN_LOSS)
    if frozen and (train is None or train not in curves or trend_z(train) > -limits["noise_z"]):
        return frozen
    return []


def _zero_throughout(curve: Curve) -> bool:
    """The curve is a train loss exactly 0 at every logged step."""
    return curve.role == Role.TRAIN_LOSS and not curve.finite_values.any()


def _unchanged_after_first(curve: Curve) -> bool:
    """Every value after the first is the same: weights that stopped changing after the first log."""
    later = curve.finite_values[1:]
    return len(later) >= 2 and float(np.ptp(later)) == 0


def _accuracy_climbs(run: RunCurves, limits: Limits) -> bool:
    """An accuracy of the run (train or held-out) gets steadily closer to perfect, beyond its noise: the model
    learns, whatever its loss shows (a triplet loss held near its margin by mining ever harder examples while
    retrieval accuracy climbs 0.75 -> 0.90). A model that never moved cannot classify better."""
    for role in ACCURACY_ROLES:
        curve = run.curve(role)
        if curve is None or len(curve.finite_values) < limits["min_points"] or as_fraction(curve) is None:
            continue
        missed = shortfall(curve)
        if missed.level_change()[0] < 0 and trend_z(missed) <= -limits["noise_z"] and not is_flat(missed, limits):
            return True
    return False


def _changes(curve: Curve) -> bool:
    """The curve differs between points by more than a thousandth of its level: computed from a model that changes."""
    values = curve.finite_values
    return float(np.ptp(values)) > PINNED_SHARE * abs(float(np.median(values)))


def _pinned(curve: Curve) -> bool:
    """The loss no longer varies beyond a thousandth of its level over its second half (0.4999 at every epoch,
    0.743668 ± 0.000001): nothing computes it from changing weights any more, whatever an accuracy beside it does
    (a collapsed embedding that costs exactly the margin, a loss detached from the model)."""
    later = curve.finite_values[len(curve.finite_values) // 2:]
    return float(np.ptp(later)) <= PINNED_SHARE * abs(float(np.median(later)))


def _flat_version(run: RunCurves, curve: Curve, limits: Limits) -> Curve | None:
    """The curve when it is flat, else its epoch averages when it is a loss logged each step as well and they are
    (Lightning's ``train_loss_step`` beside ``train_loss_epoch``: with a few batches an epoch, the step values are a
    handful of per-batch losses over again, of which a first point and a last tenth say nothing of a level, while
    their averages say whether the model moved); None when neither is."""
    reward = run.reinforcement_learning and curve.role == Role.SCORE  # its zero is the game's choice
    if is_flat(_as_shortfall(run, curve), limits, arbitrary_zero=reward):
        return curve
    averaged = epoch_average_of(curve.tag)
    if averaged is None or run.run.roles.get(averaged) != curve.role:
        return None
    twin = run.curve_of(averaged)
    if len(twin.finite_values) < limits["min_points"] or not is_flat(twin, limits):
        return None
    return None if _fell_in_first_epoch(curve, twin, limits) else twin


def _fell_in_first_epoch(per_step: Curve, averages: Curve, limits: Limits) -> bool:
    """The step losses start above the flat band of their epoch averages and never come back up to where they
    started (1.35 -> 0.96 -> 0.91 in 15 steps, then 0.889 for 50,000): the model learned, within the first epoch,
    whose average is already the averages' first point. Unshuffled batches of unequal difficulty make the step
    losses start high too, but come back to it every epoch."""
    start = per_step.start_level
    later = per_step.finite_values[len(per_step.start_points):]
    return (start > (1 + limits["max_change"]) * averages.start_level and len(later) > 0
            and float(np.mean(later >= start)) <= NEVER_BACK_SHARE)


def _as_shortfall(run: RunCurves, curve: Curve) -> Curve:
    """A metric out of 1 (or 100) as what it misses of perfect, which is where it can still move: a train SRCC
    going 0.89 -> 0.93 moved a third of the way to 1, however small a share of its level that is. Losses, and an
    agent's rewards (whose scale is the game's), stay as they are."""
    if (curve.role != Role.SCORE or run.reinforcement_learning or not len(curve.finite_values)
            or perfect_score(curve) is None):
        return curve
    return shortfall(curve)


FLAT_THRESHOLDS = {
    "max_change": Threshold(0.05, "the loss ends within this share of its start level (medians of the first 5% "
                                  "and the last 10%)"),
    "noise_z": Threshold(3.0, "or within this many standard errors of those medians (minibatch noise), with "
                              "no rank trend beyond this many standard deviations either"),
    "min_points": Threshold(3, "fewest finite points a loss needs before it is judged"),
    "late_start_share": Threshold(0.5, "a curve whose first point lies later than this share of its run "
                                       "continues an earlier run (resumed): a session that gains nothing is "
                                       "reported as a warning, not an error (the run may have converged before)"),
    "converged_share": Threshold(0.5, "a loss starting below this share of −log(1/n) was already trained (a "
                                      "fine-tune, a restart): flat, it gained nothing, which is a warning, not "
                                      "the error of a model that never learned"),
}


@rule(
    "CD301", "flat-from-start", symptom="flat_from_start", severity=ERROR, live=WHOLE_RUN, settled_share=1.0,
    causes=(
        "learning rate too low (or 0, or a scheduler that starts at 0)",
        "parameters frozen (requires_grad=False) or missing from the optimizer (wrong param group, a copy)",
        "optimizer.step() missing, or zero_grad() called between backward() and step()",
        "the graph detached before the loss (.detach(), .item(), numpy round trip)",
        "a resumed session: the run had converged before it (compute wasted), or the resume lost its LR/optimizer",
    ),
    check="print the gradient norm of each parameter after backward() and the change of one weight after "
          "step(); assert p.requires_grad and that the optimizer holds the model's own parameters",
    thresholds=FLAT_THRESHOLDS,
)
def flat_from_start(run: RunCurves, limits: Limits):
    """The loss does not move from its first value: train and validation loss (each when logged) end within a
    small share of their start level, or within their own noise (with no loss logged, the main score: a reward
    that never moves beyond its noise, whatever share of its level a gain is, or an evaluation score the same at
    every evaluation; not one perfect from its start, a success rate of 1 having nowhere to go). A log of three or
    four points is flat only when a curve keeps its value (to a thousandth of it, or exactly after its first point)
    or sits at chance: a short fine-tune's loss that moves a percent or two has not shown that nothing was learned.
    A model trained before — a resumed session, a loss that starts far below chance — that gains nothing is a
    warning. A train loss exactly 0 at every step is flat too, unless CD902 reads it as nothing supervised: beside
    answers that are right from the start or get better it is a task with one class, or a column never filled."""
    curves = is_flat_from_start(run, limits)
    if not curves:
        return None
    main = curves[0]
    evidence = []
    if first_point_share(main) > limits["late_start_share"]:
        evidence.append(f"the log starts at step {main.step_at(0)}, {first_point_share(main):.0%} of the way to its "
                        "last step: a resumed session that gained nothing (the run may have converged before it, "
                        "or the resume lost the optimizer's state)")
    elif (chance := chance_loss_of(run, main)) is not None and main.start_level < limits["converged_share"] * chance:
        evidence.append(f"it starts at {fmt(main.start_level)}, far below {chance_text(run, chance)}: a model "
                        "trained before (a fine-tune, a restart) that gained nothing here")
    already_trained = bool(evidence)
    if _zero_throughout(main):  # is_flat_from_start kept it only as CD902 did not read it as nothing supervised
        evidence.append(f"{main.tag} is exactly 0 at every logged step while the answers are right from the start "
                        "or getting better: a task with one class to learn, or a loss column the logger never "
                        "fills (what the model trains on is not what is logged)")
    for curve in curves:
        change, noise = curve.level_change()
        # a reward that is 0 from the first episode to the last (one never earned) has no share to change by
        moved = fmt_change(change / abs(curve.start_level)) if curve.start_level else f"{fmt(change)} from 0"
        evidence.append(f"{curve.tag}: {fmt(curve.start_level)} at the start, {fmt(curve.end)} at the end "
                        f"({moved}; noise allows ±{fmt(limits['noise_z'] * noise)}) over {len(curve.finite_values)} "
                        "points")
    if (chance := chance_loss_of(run, main)) is not None:
        evidence.append(chance_text(run, chance))
    if (lr := run.curve(Role.LR)) is not None and len(lr.finite_values):
        # the first thing to rule out: a learning rate too small to move anything (1e-7 where 1e-4 was meant)
        evidence.append(f"{lr.tag} over the run: {fmt(float(lr.finite_values.min()))} to "
                        f"{fmt(float(lr.finite_values.max()))}")
    return Found(f"{main.tag} does not move: {fmt(main.start_level)} → {fmt(main.end)}",
                 [curve.tag for curve in curves], evidence,
                 step_range=(main.step_at(0), main.step_at(len(main.finite_values) - 1)),
                 severity=WARNING if already_trained else None)


def near_chance_loss(curve: Curve, chance: float, tolerance: float, noise_z: float) -> bool:
    """The smoothed loss stays within ``tolerance`` of chance (its lowest point and its end level), allowing for
    the noise left in a running median of a noisy train loss."""
    # the noise allowance only covers what a running median leaves of minibatch noise (an unsmoothed curve's
    # "noise" is its swings), and never more than the band itself
    leftover = noise_z * MEDIAN_SE * curve.noise / math.sqrt(curve.window) if curve.window > 1 else 0.0
    slack = tolerance * chance + min(leftover, tolerance * chance)
    return float(curve.smooth.min()) >= chance - slack and abs(curve.end - chance) <= slack


def near_chance_accuracy(curve: Curve, chance: float, tolerance: float) -> bool:
    """Accuracy never gets more than ``tolerance`` of the way from chance to perfect."""
    return float(curve.smooth.max()) <= chance + tolerance * (1 - chance)


AT_CHANCE_THRESHOLDS = {
    "tolerance": Threshold(0.03, "loss within this share of −log(1/n), which a uniform guess scores exactly (the "
                                 "class prior of a mildly imbalanced task lies a few % below, a random init a few % "
                                 "above); with no loss logged, accuracy never more than this share of the way "
                                 "from 1/n to 1"),
    "noise_z": FLAT_THRESHOLDS["noise_z"],
    "max_change": FLAT_THRESHOLDS["max_change"],
    "prior_share": Threshold(0.1, "a loss flat from its start counts as at chance down to this share below "
                                  "−log(1/n): the entropy of an imbalanced class prior"),
}


def at_chance(run: RunCurves, curve: Curve, limits: Limits) -> bool:
    chance = chance_loss_of(run, curve)
    return chance is not None and near_chance_loss(curve, chance, limits["tolerance"], limits["noise_z"])


def flat_at_prior(run: RunCurves, curve: Curve, limits: Limits) -> bool:
    """A loss that never moved from its start, at a level a little under −log(1/n): the entropy of an imbalanced
    class prior (GTSRB's 43 sign classes: 3.48 nats, 92.5% of ln 43), the least a model that ignores its input
    scores. Below chance by more than the mild imbalance the chance band allows, but only on a curve that shows
    no learning at all; a loss that fell to that level may have learned something."""
    chance = chance_loss_of(run, curve)
    if chance is None or not is_flat(curve, limits):
        return False
    return ((1 - limits["prior_share"]) * chance <= float(curve.smooth.min())
            and curve.end <= chance * (1 + limits["tolerance"]))


@rule(
    "CD302", "flat-at-chance", symptom="flat_at_chance", severity=ERROR, live=WHOLE_RUN, settled_share=1.0,
    causes=(
        "labels shuffled or misaligned with the inputs (a sort, a join, a dataloader that reorders one of them)",
        "the input does not reach the model (zeroed, masked, a constant tensor, the wrong key of the batch)",
        "nothing learns at all (flat-from-start fires too when the loss never moves)",
    ),
    check="train an input-independent baseline (inputs set to 0): if it reaches the same loss, the inputs carry "
          "no signal; then print 5 inputs with their labels from the batch the model sees",
    thresholds=AT_CHANCE_THRESHOLDS,
    needs_n_classes=True,
)
def flat_at_chance(run: RunCurves, limits: Limits):
    """The loss stays at −log(1/n_classes) for the whole run: the validation loss when logged (it shows whether
    the input carries signal; a train loss may still fall by memorising), else the train loss. A loss that never
    moves from its start counts down to a tenth below chance: the entropy of an imbalanced class prior. With no loss
    logged, the accuracy staying near 1/n decides. A run that never moves at all gets this finding and
    flat-from-start: the loss is both flat and at chance."""
    loss = _cross_entropy(run, Role.VAL_LOSS) or _cross_entropy(run, Role.TRAIN_LOSS) or first_logged(
        run, Role.VAL_LOSS, Role.TRAIN_LOSS)
    if loss is not None and chance_loss_of(run, loss) is None:
        return None  # not a cross-entropy over the n classes: −log(1/n) is not its chance level
    accuracy = first_logged(run, Role.VAL_ACC, Role.TRAIN_ACC)
    evidence, tags = [], []
    if loss is not None:
        prior = not at_chance(run, loss, limits)
        if prior and not flat_at_prior(run, loss, limits):
            return None
        tags.append(loss.tag)
        chance = chance_loss_of(run, loss)
        evidence.append(f"{loss.tag}: lowest smoothed {fmt(float(loss.smooth.min()))}, end level "
                        f"{fmt(loss.end)}; {chance_text(run, chance)}")
        if prior:
            evidence.append(f"{loss.tag} never moved from its start and sits {1 - loss.end / chance:.1%} below "
                            "chance: the entropy of an imbalanced class prior, what a model that ignores its input "
                            "scores")
    if accuracy is not None:
        if loss is None and not near_chance_accuracy(accuracy, run.chance_accuracy, limits["tolerance"]):
            return None
        tags.append(accuracy.tag)
        evidence.append(f"{accuracy.tag}: highest smoothed {fmt(float(accuracy.smooth.max()))}, end "
                        f"{fmt(accuracy.end)}; 1/{run.n_classes} = {fmt(run.chance_accuracy)}")
    if not tags:
        return None
    main = run.curve_of(tags[0])
    return Found(f"{tags[0]} stays at chance level for the whole run", tags, evidence,
                 step_range=(main.step_at(0), main.step_at(len(main.finite_values) - 1)))


def _centred(curve: Curve) -> bool:
    """A score whose values fall on both sides of 0 around a median within their noise of it: centred by
    construction (a reward whitened per batch, an advantage), not a level the policy reached. Not a sparse reward
    that sits on one value most of the time (a Breakout agent's 0 per episode, with a few small penalties): a
    whitened reward is continuous, and hardly ever repeats a value."""
    values = curve.finite_values
    median = float(np.median(values))
    return (float(values.min()) < 0 < float(values.max()) and abs(median) <= curve.noise
            and float(np.mean(values == median)) < 0.5)


def _cross_entropy(run: RunCurves, role: Role) -> Curve | None:
    """The curve of ``role`` whose chance level is −log(1/n): the main one when it is, else another logged beside
    it (a joint model's classification loss beside its regression loss, neither a total of the other)."""
    main = run.curve(role)
    candidates = sorted(run.curves(role), key=lambda curve: curve is not main)
    return next((curve for curve in candidates if len(curve.finite_values) and chance_loss_of(run, curve) is not None),
                None)


def plateau_start(curve: Curve, band: float) -> int:
    """Index where the smoothed loss first comes within ``band`` of its total drop from its final level."""
    begin = curve.start_level
    return int(np.argmax(curve.smooth <= curve.end + band * (begin - curve.end)))


# An accuracy that left less than this share of a uniform guess's error (1 − 1/n) shows a model that learned its
# task: 97.5% on two classes leaves 5%, 90% on ten 11%
LEARNED_ERROR_SHARE = 0.1


def learned_its_task(run: RunCurves) -> bool:
    """Whether the run's accuracy (held-out when logged, else train) ends with an error below LEARNED_ERROR_SHARE of
    a uniform guess's error 1 − 1/n. Such a model learned its task, however high its loss ends: a cross-entropy kept
    up by hard or mislabelled examples, label smoothing, a class weighting or a regulariser added to the loss (a
    binary malware detector at 97.5% accuracy whose loss stays at 0.36, half of ln 2). A loss is high only as a
    stand-in for how much of a uniform guess the model kept, which its accuracy measures directly."""
    n = run.n_classes
    if n is None or n < 2:
        return False
    for role in (Role.VAL_ACC, Role.TEST_ACC, Role.TRAIN_ACC):
        curve = run.curve(role)
        if curve is None or len(curve.finite_values) < START_POINTS or (fractions := as_fraction(curve)) is None:
            continue
        end = float(np.median(fractions[-max(START_POINTS, len(fractions) // 10):]))
        return (1 - end) / (1 - 1 / n) < LEARNED_ERROR_SHARE
    return False


def high_level(run: RunCurves, curve: Curve, reference_curve: Curve, share: float) -> tuple[float, str] | None:
    """The reference ``curve``'s end level is judged high against (−log(1/n), else the start of
    ``reference_curve``) and a sentence saying so, when it ends at or above ``share`` of it; None otherwise."""
    chance = chance_as_yardstick_of_height(run, curve)
    reference = chance if chance is not None else reference_curve.start_level
    if reference <= 0 or curve.end < share * reference:
        return None
    name = chance_text(run, chance) if chance is not None else f"the train loss's start level {fmt(reference)}"
    return reference, f"{curve.tag} ends at {fmt(curve.end)}, {curve.end / reference:.2f}× {name}"


PLATEAU_THRESHOLDS = {
    "high_share": Threshold(0.4, "a loss ending above this share of −log(1/n) (of the train loss's start level "
                                 "when n is unknown) is high: the model kept much of a uniform guess's "
                                 "uncertainty"),
    "band": Threshold(0.05, "flat: over the last third of the run the loss falls by less than this share of its "
                            "total drop; the plateau begins where it first comes within this share of its end"),
    "fast_share": Threshold(0.5, "a fast drop reaches the plateau within this share of the run"),
    "min_drop": Threshold(0.1, "the drop before the plateau is at least this share of the start level"),
    "lr_near_zero": Threshold(0.01, "an LR below this share of its peak has decayed to about 0"),
    "lr_cut": Threshold(0.1, "an LR at or below this share of its peak where the plateau begins was cut by a step "
                             "schedule before the loss had settled"),
    "frozen_share": Threshold(0.25, "a held-out loss identical to the digit over at least this share of its "
                                    "evaluations at the end (and 3 or more) shows the weights stopped changing: a "
                                    "quarter of the run spent without training (a cosine schedule reaching 0 "
                                    "freezes only its last few evaluations)"),
    "high_share_lr_decayed": Threshold(0.2, "the lower bar for a high end when the LR had decayed to about 0 by "
                                            "the middle of the run, or was cut 10× where the plateau begins, or the "
                                            "held-out loss shows the weights froze: training, not the task, "
                                            "stopped the loss"),
    "min_points": Threshold(5, "fewest finite points a curve needs before its shape is judged"),
    "rise_share": Threshold(0.05, "a loss ending more than this share above its lowest level (giving back over "
                                  "half its drop) is rising again: diverging or overfitting, not stuck"),
}


def _still_coming_down(curve: Curve) -> bool:
    """A short log (a few averages over many batches each, not smoothed) whose every one of its last three changes
    is a fall: the loss is still on its way down at the last point logged."""
    values = curve.finite_values
    return FALLING_CHANGES < len(values) < SHORT_CURVE and bool(np.all(np.diff(values[-FALLING_CHANGES - 1:]) < 0))


def still_falling(curve: Curve, limits: Limits, begin: float) -> bool:
    """Over the last third of the run the loss still falls by more than ``band`` of its total drop from
    ``begin``, and by more than noise explains (medians of the first and last quarter of that third)."""
    last_third = curve.finite_values[int(len(curve.finite_values) * 2 / 3):]
    quarter = max(1, len(last_third) // 4)
    fall = float(np.median(last_third[:quarter]) - np.median(last_third[-quarter:]))
    noise = limits["noise_z"] * MEDIAN_SE * curve.noise * math.sqrt(2 / quarter)
    return fall > max(limits["band"] * (begin - curve.end), noise)


def rising(curve: Curve, limits: Limits) -> bool:
    """The loss ends well above its lowest level (by more than ``rise_share`` of it, and giving back more than
    half its drop): diverging or overfitting, not stuck high. Levels are medians of tenths of the curve, so
    minibatch noise cannot fake a low point."""
    levels = np.array([np.median(part) for part in np.array_split(curve.finite_values, min(10, len(curve)))])
    lowest = float(levels.min())
    rise = float(levels[-1]) - lowest
    return rise > limits["rise_share"] * abs(lowest) and rise > 0.5 * max(float(levels[0]) - lowest, 0.0)


def swinging(curve: Curve, begin: float) -> bool:
    """Whether the last third swings by as much as the loss ever fell: an oscillating curve has no plateau."""
    values = curve.finite_values
    drop = begin - curve.end
    return drop > 0 and spread(values[int(len(values) * 2 / 3):]) >= SWING_VS_PROGRESS * drop


def predictions_never_change(run: RunCurves) -> bool:
    """The held-out accuracy takes one value at every evaluation (at least 3): the model's predictions, and so
    what it learned about the input, never changed."""
    accuracy = first_logged(run, Role.VAL_ACC, Role.TEST_ACC)
    return accuracy is not None and len(accuracy.finite_values) >= 3 and float(np.ptp(accuracy.finite_values)) == 0


def lr_decayed_early(run: RunCurves, curve: Curve, plateau_index: int,
                     limits: Limits) -> tuple[float, float, str, str] | None:
    """The logged LR, its peak, its tag and when, when the schedule explains a plateau: decayed to about 0 by the
    middle of ``curve``'s run, or already cut 10× (a step schedule cut too early) where the plateau begins, and
    kept there: a schedule that raises it again (cosine with warm restarts) did not hold the loss up."""
    lr = run.curve(Role.LR)
    if lr is None or not len(lr.finite_values) or lr.finite_values.max() <= 0:
        return None
    peak = float(lr.finite_values.max())

    def kept_low(since: int) -> bool:
        later = lr.finite_values[lr.finite_steps >= since]
        return not len(later) or float(later.max()) <= limits["lr_cut"] * peak

    middle = int(curve.finite_steps[0] + (curve.finite_steps[-1] - curve.finite_steps[0]) / 2)
    at_middle = float(lr.finite_values[min(int(np.searchsorted(lr.finite_steps, middle)), len(lr.finite_values) - 1)])
    if at_middle <= limits["lr_near_zero"] * peak and kept_low(middle):
        return at_middle, peak, lr.tag, "by the middle of the run"
    # the plateau's start is read off a running median, which lags a cut by up to a tenth of the run
    begins, span = curve.step_at(plateau_index), (curve.finite_steps[-1] - curve.finite_steps[0]) / 10
    around = lr.finite_values[(lr.finite_steps >= begins) & (lr.finite_steps <= begins + span)]
    if not len(around) or float(around.min()) > limits["lr_cut"] * peak or not kept_low(begins + span):
        return None
    cut_step = int(lr.finite_steps[np.argmax(lr.finite_values <= limits["lr_cut"] * peak)])
    if held_out_stalled_before(run, cut_step):
        return None
    return float(around.min()), peak, lr.tag, f"as the plateau begins (from step {begins})"


def held_out_stalled_before(run: RunCurves, step: int) -> bool:
    """The held-out loss's last evaluation before ``step`` was no new best: the loss had stopped improving before
    the LR was cut there, so the cut answered a plateau (ReduceLROnPlateau cuts exactly then) and did not cause it."""
    held_out = first_logged(run, Role.VAL_LOSS, Role.TEST_LOSS)
    if held_out is None:
        return False
    before = held_out.finite_values[held_out.finite_steps < step]
    return len(before) >= 3 and float(before[-1]) >= float(before[:-1].min())


def plateau(run: RunCurves, limits: Limits) -> tuple[Curve, int, list[str]] | None:
    """Where the train loss's fast drop ends on a plateau well above what the task allows, with the evidence.
    The validation loss (when logged) must be high and flat as well: high validation under a low train loss
    is a generalisation gap, not a plateau."""
    curves = judged_losses(run, limits["min_points"])
    if not curves:
        return None
    train = curves[0]
    begin = train.start_level
    if (begin <= 0 or begin - train.end < limits["min_drop"] * begin
            or any(at_chance(run, curve, limits) or rising(curve, limits) for curve in curves)):
        return None  # no drop is flat-from-start's finding, ending at chance flat-at-chance's, rising overfitting's
    index = plateau_start(train, limits["band"])
    stopped = training_stopped(run, train, index, limits)
    share = limits["high_share_lr_decayed" if stopped else "high_share"]
    highs = [high_level(run, curve, train, share) for curve in curves]
    if (None in highs or any(still_falling(curve, limits, begin) or swinging(curve, begin) for curve in curves)
            or index > limits["fast_share"] * (len(train.finite_values) - 1)):
        return None
    if chance_as_yardstick_of_height(run, train) is None and not stopped:
        return None  # without a chance level, a high end is only suspicious when the run shows training stopped
    if not stopped and learned_its_task(run):
        return None  # a schedule that stopped training is a finding whatever was learned before it
    step = train.step_at(index)
    evidence = [f"{train.tag} falls from {fmt(begin)} to {fmt(float(train.smooth[index]))} by step {step} "
                f"({index / max(1, len(train.finite_values) - 1):.0%} of the run), then stays: end level "
                f"{fmt(train.end)}", *(text for _, text in highs)]
    if stopped:
        evidence.append(stopped)
    return train, index, evidence


def training_stopped(run: RunCurves, curve: Curve, plateau_index: int, limits: Limits) -> str | None:
    """What shows that training itself stopped while the loss was still high, when the run shows it: the logged
    LR decayed to about 0 (or cut 10× where the plateau begins), or, with no LR logged that says so, a held-out
    loss that no longer changes at all: the same weights scoring the same examples."""
    decayed = lr_decayed_early(run, curve, plateau_index, limits)
    if decayed:
        value, peak, tag, when = decayed
        return (f"{tag} = {fmt(value, 3)} {when}, {value / peak:.2g}× its peak {fmt(peak, 3)}: the schedule had cut "
                "the LR while the loss was still high")
    for role in (Role.VAL_LOSS, Role.TEST_LOSS):
        held_out = run.curve(role)
        if held_out is None:
            continue
        values = held_out.finite_values
        same = int(np.argmax(np.r_[values[::-1] != values[-1], True]))  # how many last values equal the last one
        if same >= MIN_FROZEN_EVALUATIONS and same >= limits["frozen_share"] * len(values):
            first = held_out.step_at(len(values) - same)
            return (f"{held_out.tag} = {fmt(float(values[-1]))} at each of its last {same} of {len(values)} "
                    f"evaluations (from step {first}): the weights stopped changing while the run went on (an LR "
                    "decayed to about 0, or parameters no longer updated)")
    return None


@rule(
    "CD303", "plateau-high", symptom="plateau_high", severity=WARNING, live=WHOLE_RUN, settled_share=0.5,
    causes=(
        "the model learned only the class prior (frequencies), not the inputs",
        "capacity bottleneck (a layer far too narrow, a too small model)",
        "learning rate decayed to about 0 too early (a schedule stepped too often or too hard)",
        "softmax applied twice, which caps how low the loss can go",
    ),
    check="print the current LR; train an input-independent baseline (inputs set to 0) and compare its loss "
          "with the plateau; overfit one small batch to see whether the model can go lower at all",
    thresholds={
        **PLATEAU_THRESHOLDS, "tolerance": AT_CHANCE_THRESHOLDS["tolerance"], "noise_z": FLAT_THRESHOLDS["noise_z"],
        # a cross-entropy over outputs already squashed into [0, 1] has a floor, ln(1 + (k − 1)/e)
        "floor_match": Threshold(0.001, "the train loss's lowest value lies within this share of the floor "
                                        "ln(1 + (k − 1)/e) of a cross-entropy over k outputs already in [0, 1]"),
        "floor_band": Threshold(0.01, "at least half the train loss's second half lies within this share of that "
                                      "floor"),
        "floor_points": Threshold(10, "fewest train-loss points before it is said to sit on that floor"),
        "max_squashed": Threshold(10, "largest output count k whose floor is looked for: the floors of more lie "
                                      "ever closer together"),
    },
)
def plateau_high(run: RunCurves, limits: Limits):
    """The train loss drops fast, then stays flat for the rest of the run (train and validation gain almost
    nothing over the last third) at a level well above what the task allows (a large share of
    −log(1/n_classes)), and not at chance itself. Says so when the learning rate had decayed to about 0 by the
    middle of the run (then a lower level counts as high); with n unknown, fires only on that LR evidence. Unless
    training stopped so, an accuracy that left less than a tenth of a uniform guess's error rules it out. Or the
    train loss settles on the floor of a cross-entropy taken over outputs already squashed into [0, 1], ln(1 +
    (k − 1)/e) for k outputs (0.3133 for two), and never goes below it: softmax applied twice."""
    capped = squashed_floor(run, limits)
    if capped is not None:
        return capped
    found = plateau(run, limits)
    if found is None:
        return None
    curve, index, evidence = found
    return Found(f"{curve.tag} plateaus at {fmt(curve.end)} from step {curve.step_at(index)}", [curve.tag],
                 evidence, step_range=(curve.step_at(index), curve.step_at(len(curve.finite_values) - 1)),
                 assumes_class_count=chance_as_yardstick_of_height(run, curve) is not None)


def squashed_floor(run: RunCurves, limits: Limits) -> Found | None:
    """The train loss sits on ln(1 + (k − 1)/e): a cross-entropy's least value over k outputs that a softmax or a
    sigmoid had already put in [0, 1] (right class 1, the others 0, then softmaxed again), for a k of at most
    ``max_squashed`` outputs. Its lowest value lies within ``floor_match`` of that floor, and most of its second half
    within ``floor_band``: a level the task does not impose, found to four digits by no healthy run."""
    train = run.curve(Role.TRAIN_LOSS)
    if train is None or len(train.finite_values) < limits["floor_points"]:
        return None
    values = train.finite_values
    lowest = float(values.min())
    if train.start_level <= lowest * 1.1:
        return None  # it never came down onto a floor
    late = values[len(values) // 2:]
    band = limits["floor_band"]
    for k in range(2, int(limits["max_squashed"]) + 1):
        floor = math.log1p((k - 1) / math.e)
        on_floor = float(np.mean(np.abs(late - floor) <= band * floor))
        if abs(lowest - floor) <= limits["floor_match"] * floor and on_floor >= 0.5:
            break
    else:
        return None
    step = train.step_at(int(np.argmax(np.abs(values - floor) <= band * floor)))
    return Found(
        f"{train.tag} settles on {fmt(floor)} = ln(1 + {k - 1}/e) and cannot go lower: softmax applied twice",
        [train.tag],
        [f"{train.tag}: lowest {lowest:.5g}, end {fmt(train.end)}; {on_floor:.0%} of its second half lies within "
         f"{band:.0%} of {floor:.5g}, first from step {step}",
         f"ln(1 + {k - 1}/e) = {floor:.5g} is the least a cross-entropy scores over {k} outputs already in [0, 1] (a "
         "softmax or a sigmoid before a loss that applies its own softmax): the right class at 1, the others at 0, "
         "softmaxed again",
         "a model that can fit its training data goes on below it; this one is held up by the loss"],
        step_range=(step, train.step_at(len(values) - 1)))


@rule(
    "CD304", "underfitting", symptom="underfitting", severity=WARNING, live=WHOLE_RUN, settled_share=0.5,
    causes=(
        "model too small or too strongly regularised (weight decay, dropout) for the task",
        "too few steps, or a learning rate that is too low to get far",
        "a bug that caps what the model can learn (wrong targets, a broken layer)",
    ),
    check="overfit one batch of 2–10 examples: if the loss cannot reach ~0, it is a bug; if it can, grow the "
          "model or cut the regularisation",
    thresholds={**PLATEAU_THRESHOLDS, **FLAT_THRESHOLDS, **AT_CHANCE_THRESHOLDS},
    needs_n_classes=True,
)
def underfitting(run: RunCurves, limits: Limits):
    """Train and validation loss both end high (a large share of −log(1/n_classes)) although the loss did move:
    not flat from the start, not at chance, not a train loss rising again (diverging), not a model whose
    held-out accuracy never changes (the class prior: accuracy-majority), not the fast drop onto a plateau
    that plateau-high reports, and not a run whose accuracy left less than a tenth of a uniform guess's error (the
    model learned its task; hard or noisy examples, label smoothing or a regulariser keep its loss up). A
    validation loss that rises again while both stay high is overfitting and underfitting at once, and both are
    reported, unless the train loss still falls over the last third of the run: then the run stopped (early
    stopping, most often) because validation turned up, before the train loss showed the level it stays at, and a
    bigger model is the wrong advice. Without validation, the train loss alone
    decides, once it has stopped falling: a short log still coming down at its last three points has not shown the
    level it stays at."""
    curves = judged_losses(run, limits["min_points"])
    if not curves or curves[0].role != Role.TRAIN_LOSS:
        return None
    train = curves[0]
    if any(chance_as_yardstick_of_height(run, curve) is None for curve in curves):
        return None  # without a chance level, "high" has no yardstick (MSE, hard tasks)
    if (is_flat_from_start(run, limits) or any(at_chance(run, c, limits) or flat_at_prior(run, c, limits)
                                               for c in curves)
            or rising(curves[0], limits) or predictions_never_change(run) or plateau(run, limits)):
        return None
    if len(curves) == 1 and _still_coming_down(train):
        return None  # with no held-out curve to show the level, a train loss still falling has not shown its own
    if still_falling(train, limits, train.start_level) and overfitting(run, shipped_limits("CD501")) is not None:
        return None  # stopped (early stopping, mostly) once validation turned up: high because it stopped, not stuck
    highs = [high_level(run, curve, train, limits["high_share"]) for curve in curves]
    if None in highs or learned_its_task(run):
        return None
    evidence = [text for _, text in highs]
    if len(curves) == 1:
        evidence.append("no validation loss logged: judged on the train loss alone")
    evidence.append(f"{train.tag} start level {fmt(train.start_level)}")
    return Found(f"Loss stays high: {train.tag} ends at {fmt(train.end)}", [curve.tag for curve in curves],
                 evidence, step=train.step_at(len(train.finite_values) - 1))
