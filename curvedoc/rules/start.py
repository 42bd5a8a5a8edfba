"""Where the loss starts, compared with chance: a cross-entropy over n classes starts near −log(1/n).

A freshly initialised classifier spreads its probability almost evenly over the n classes, so its first loss is
−log(1/n) plus a little: a logit standard deviation σ adds about σ²/2 nats, and a sane init keeps σ ≲ 1, which puts
the first loss within ~10–20% of chance (label smoothing adds nothing at a uniform guess). A first loss several
times chance means the logits are far too large or the class count is wrong; one far below chance before the model
could have learned anything means it is being told the answer.
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.classcount import READ_OFF_CURVES, is_cross_entropy_like
from curvedoc.features import RunCurves, as_fraction, chance_loss_of, first_logged, first_point_share, fmt
from curvedoc.model import VOCABULARY
from curvedoc.roles import HELD_OUT_ACC, LOSS_OF_ACCURACY, Role
from curvedoc.rules import INFO, WARNING, WHOLE_RUN, Found, Limits, Threshold, rule


# A start that a uniform guess over up to this many times n classes explains may be a wrong class count; beyond
# that, the number of classes it implies says nothing useful.
PLAUSIBLE_CLASS_FACTOR = 100
# A lone value is no start: a log of one or two points is an evaluation, not a run seen from its beginning.
MIN_POINTS = 3



def chance_text(run: RunCurves, chance: float) -> str:
    count = run.class_count
    assumed = f" (a class count {READ_OFF_CURVES})" if count and count.inferred else ""
    return f"−log(1/{run.n_classes}) = {fmt(chance)}{assumed}"


@rule(
    "CD201", "start-high", symptom="start_high", severity=WARNING, live=WHOLE_RUN,
    causes=(
        "wrong class count: the output layer has more units than the task has classes",
        "bad init: weights (or the last layer) far too large, so the logits are huge",
        "logits scaled up (a temperature applied the wrong way round, a missing 1/√d)",
        "softmax applied twice, or the loss fed probabilities where it expects logits",
    ),
    check="compute −log(1/n) for your n and compare with the loss of the very first batch; print the logits' "
          "standard deviation at step 0 (should be ≲ 1) and the output layer's shape",
    thresholds={
        "ratio": Threshold(1.5, "first loss at least this many times −log(1/n) (a sane init lands within ~20%)"),
        "excess_nats": Threshold(1.0, "and at least this many nats above −log(1/n) (so a 2-class task, chance "
                                      "0.69, needs more than a doubling)"),
        "early_share": Threshold(0.05, "a first point logged within this share of the run is the step-0 loss; a "
                                       "later one is an average and only counts if the loss falls after it"),
    },
    needs_n_classes=True,
)
def start_high(run: RunCurves, limits: Limits):
    """The first logged loss of a cross-entropy is far above −log(1/n_classes): the model starts out confidently
    wrong. Reports the ratio to chance and the class count a uniform guess would need to start that high. A loss
    that never comes near chance afterwards (and never turns NaN) may not be a mean cross-entropy at all (summed
    over the batch, carrying a regulariser): then it is a note, not a warning."""
    curve = first_logged(run, Role.TRAIN_LOSS, Role.VAL_LOSS)  # whose first value is the step-0 loss
    if curve is None or len(curve.finite_values) < MIN_POINTS or (chance := chance_loss_of(run, curve)) is None:
        return None
    first = curve.start
    if first < limits["ratio"] * chance or first - chance < limits["excess_nats"]:
        return None
    share = first_point_share(curve)
    evidence = [f"{curve.tag} = {fmt(first)} at step {curve.step_at(0)} (first value); {chance_text(run, chance)}",
                f"{first / chance:.1f}× chance, {first - chance:+.3g} nats"]
    if share > limits["early_share"]:
        if curve.end >= first:
            return None  # a loss that rises after an averaged first value is diverging, not starting high
        evidence.append(f"first value logged {share:.0%} into the run, an average over the first steps: "
                        "the step-0 loss was at least about this high")
    if first < math.log(PLAUSIBLE_CLASS_FACTOR * run.n_classes):
        evidence.append(f"a uniform guess starts this high with about {math.exp(first):,.0f} classes "
                        "(does the output layer have that many units?)")
    # A mean cross-entropy that starts high comes down past chance once the model learns anything; one that
    # never gets near it is more likely summed over a batch or carrying a regulariser than started badly. A
    # held-out loss of the same task that does get near chance shows the scale is a mean (no regulariser there).
    same_task = [other for other in (curve, run.curve(Role.VAL_LOSS), run.curve(Role.TEST_LOSS))
                 if other is not None and len(other.finite_values) and chance_loss_of(run, other) == chance]
    lowest, lowest_tag = min((float(other.smooth.min()), other.tag) for other in same_task)
    never_near = curve.first_nonfinite is None and lowest >= limits["ratio"] * chance
    if never_near:
        evidence.append(f"it never comes near chance (lowest running median {fmt(lowest)}): if the loss is "
                        "summed over the batch or carries a regulariser, −log(1/n) is not its yardstick")
    elif lowest_tag != curve.tag and float(curve.smooth.min()) >= limits["ratio"] * chance:
        evidence.append(f"{curve.tag} never comes near chance, but {lowest_tag} does (lowest running median "
                        f"{fmt(lowest)}): the loss is a mean over examples, so the start is too high")
    return Found(f"{curve.tag} starts at {fmt(first)}, {first / chance:.1f}× the chance level {fmt(chance)}",
                 [curve.tag], evidence, step=curve.step_at(0), severity=INFO if never_near else None)


@rule(
    "CD202", "start-low", symptom="start_low", severity=WARNING, live=WHOLE_RUN,
    causes=(
        "label leakage: the label (or a proxy of it: an ID, a file path, a sorted order) is in the inputs",
        "the validation set overlaps the training set",
        "the model was already trained (resumed or pretrained) and the run does not say so",
    ),
    check="zero the input (or shuffle it across examples) and rerun one epoch: the loss must jump to −log(1/n); "
          "if it stays low, the label reaches the model some other way",
    thresholds={
        "ratio": Threshold(0.01, "first validation loss (first train value without validation) below this share "
                                 "of −log(1/n): after one epoch even MNIST, the easiest real benchmark, sits "
                                 "at ~0.015-0.02× chance (val loss 0.03-0.05)"),
        "ratio_with_accuracy": Threshold(0.05, "the bar when the accuracy logged with that first validation is "
                                               "perfect too: right on every example, on average with ≳ 95% "
                                               "confidence, after one epoch (MNIST then is right on ~99%)"),
        "perfect_accuracy": Threshold(0.999, "accuracy at least this counts as perfect: the model already knows "
                                             "every answer"),
        "early_share": Threshold(0.05, "a first train value logged within this share of the run is the step-0 "
                                       "loss (used only when there is no validation)"),
    },
    needs_n_classes=True,
)
def start_low(run: RunCurves, limits: Limits):
    """The loss is far below −log(1/n_classes) at the first look: the first validation loss (after one epoch)
    is a tiny share of chance (a less tiny one when the accuracy logged with it is perfect); without
    validation, a train loss already far below chance at step 0. A healthy model needs more than an epoch to
    know every answer. Not judged on a language model loaded from a named checkpoint: it was pretrained."""
    val, accuracy = first_logged(run, Role.VAL_LOSS), first_logged(run, Role.VAL_ACC)
    curve = val or first_logged(run, Role.TRAIN_LOSS)
    if curve is None or len(curve.finite_values) < MIN_POINTS or (chance := chance_loss_of(run, curve)) is None:
        return None
    if _pretrained_generator(run):
        return None  # its pretraining already put it far below ln(vocabulary): no sign of leakage
    first, step = curve.start, curve.step_at(0)
    if not curve.finite_values.any() or (first == 0 and curve is not val):
        return None  # exactly 0 from the start (a held-out loss: at every evaluation) supervised nothing: CD902
    perfect = curve is val and accuracy is not None and accuracy.start >= limits["perfect_accuracy"]
    if first >= limits["ratio_with_accuracy" if perfect else "ratio"] * chance:
        return None
    if curve is not val and first_point_share(curve) > limits["early_share"]:
        return None  # a late first train value is an average over learning, not the starting point
    evidence = [f"{curve.tag} = {fmt(first)} at step {step} (first value); {chance_text(run, chance)}; "
                f"{first / chance:.3f}× chance"]
    if perfect:
        evidence.append(f"{accuracy.tag} = {fmt(accuracy.start)} at step {accuracy.step_at(0)} (first value)")
    train = first_logged(run, Role.TRAIN_LOSS)
    if curve is val and train is not None:
        evidence.append(f"{train.tag} starts at {fmt(train.start)} (step {train.step_at(0)})")
    return Found(f"{curve.tag} is already {fmt(first)} at step {step}, {first / chance:.3f}× the chance level "
                 f"{fmt(chance)}", [curve.tag], evidence, step=step)


def _pretrained_generator(run: RunCurves) -> bool:
    """A model that predicts tokens and was loaded from a named checkpoint (a base the run fine-tunes, or the
    checkpoint its config came from): its output layer is pretrained, unlike a classifier's new head, so its loss
    starts far below ln(vocabulary). A model trained from scratch on a borrowed config is missed: its start far
    below chance would be leakage, but a named checkpoint makes a fine-tune far likelier."""
    meta = run.run.meta
    return meta.n_classes_kind == VOCABULARY and bool(meta.base_model or meta.checkpoint)


# A loss and an accuracy are one evaluation's when at least this share of the evaluations that logged either logged
# both (an evaluation may log one of them once more, at the start or the end)
TOGETHER_SHARE = 0.9


@rule(
    "CD203", "loss-below-its-accuracy", symptom="start_low", severity=WARNING, live=WHOLE_RUN,
    needs=(Role.VAL_LOSS, Role.TEST_LOSS),
    causes=(
        "the loss is divided once more than it should be (by the dataset size, the number of batches or tokens), "
        "so it is on a scale no per-example loss has",
        "the loss is averaged over padded positions (or masked targets) the accuracy does not count",
        "the logged loss is a different quantity than the accuracy's predictions (another head, a detached copy)",
    ),
    check="compute the loss of one batch by hand (torch.nn.functional.cross_entropy on its logits and labels) and "
          "compare it with the logged value; read the line that divides the summed loss",
    thresholds={
        "min_points": Threshold(3, "fewest evaluations logged with both the held-out loss and its accuracy"),
        "ratio": Threshold(0.01, "the held-out loss below this share of the least loss its own error rate allows "
                                 "(each wrong prediction gave its true class at most half the probability, so it "
                                 "cost at least ln 2): a hundredfold, beyond any class weight or focal factor (a "
                                 "focal loss's least cost of an error is a quarter of ln 2)"),
        "min_accuracy": Threshold(0.5, "the accuracy must be at least this at those evaluations: a classifier "
                                       "that is right on most examples (an exact-match accuracy of a regression, "
                                       "near 0, says nothing of its loss)"),
    },
)
def loss_below_its_accuracy(run: RunCurves, limits: Limits):
    """The held-out cross-entropy is far below the least its own held-out accuracy allows: at error rate e, every
    wrong prediction gave its true class at most half the probability and cost at least ln 2, so the mean loss is
    at least e·ln 2. A loss a hundred times lower is on another scale (divided by the dataset size, averaged over
    padding): its start is far below chance whatever the class count, which the run need not record. Not judged on
    an agent's run, a loss whose name says it is no cross-entropy, values of exactly 0 (printed rounding, or
    nothing supervised), or a loss and an accuracy logged apart (most evaluations log one without the other: two
    models' sessions appended to one log)."""
    if run.reinforcement_learning:
        return None
    for accuracy_role in HELD_OUT_ACC:
        loss, accuracy = run.curve(LOSS_OF_ACCURACY[accuracy_role]), run.curve(accuracy_role)
        if loss is None or accuracy is None or not is_cross_entropy_like(loss):
            continue
        fractions = as_fraction(accuracy)
        if fractions is None:
            continue
        steps, at_loss, at_accuracy = np.intersect1d(loss.finite_steps, accuracy.finite_steps, return_indices=True)
        if len(steps) < TOGETHER_SHARE * max(len(loss.finite_steps), len(accuracy.finite_steps)):
            continue  # logged apart (an autoencoder's loss for 100 epochs, a classifier's accuracy for 20)
        losses, accuracies = loss.finite_values[at_loss], fractions[at_accuracy]
        judged = (losses > 0) & (accuracies < 1) & (accuracies >= limits["min_accuracy"])
        if judged.sum() < limits["min_points"]:
            continue
        least = (1 - accuracies[judged]) * math.log(2)
        shares = losses[judged] / least
        if float(np.median(shares)) >= limits["ratio"]:
            continue
        first = int(np.flatnonzero(judged)[0])
        step = int(steps[first])
        return Found(
            f"{loss.tag} is {fmt(float(losses[first]))} at step {step} while {accuracy.tag} is "
            f"{fmt(float(accuracies[first]))}: far below any loss that accuracy allows",
            [loss.tag, accuracy.tag],
            [f"at step {step}: {accuracy.tag} = {fmt(float(accuracies[first]))}, so at least "
             f"{1 - float(accuracies[first]):.2%} of the examples are wrong, each costing ≥ ln 2: the mean loss is "
             f"≥ {fmt(float(least[0]))}; {loss.tag} = {fmt(float(losses[first]))}",
             f"over the {int(judged.sum())} evaluations logged with both, the loss is a median "
             f"{float(np.median(shares)):.2g}× the least its accuracy allows"],
            step=step,
        )
    return None
