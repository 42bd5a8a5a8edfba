"""Numbers a loss cannot take: NaN/±Inf, and negative values of a loss that is bounded below by zero."""

from __future__ import annotations

import numpy as np

from curvedoc.features import ACCURACY_ROLES, LOSS_ROLES, Curve, RunCurves, fmt
from curvedoc.roles import (
    Role,
    infer_role,
    is_error_metric,
    is_perplexity,
    same_curve_named,
    tokens,
)
from curvedoc.rules import AT_ONCE, ERROR, WARNING, Found, Limits, Threshold, rule

METRIC_ROLES = (*ACCURACY_ROLES, Role.SCORE)
# Losses that are negative by design (policy gradients, entropy bonuses, WGAN critics, continuous NLL/ELBO, the
# unbiased and random-feature estimators of an MMD, whose value goes below 0 near a match).
SIGNED_LOSS_WORDS = {"policy", "actor", "critic", "entropy", "wasserstein", "wgan", "elbo", "reward", "value",
                     "advantage", "gen", "generator", "disc", "discriminator", "d", "g", "nll", "logprob", "kl",
                     "mmd"}



@rule(
    "CD101", "nonfinite-loss", symptom="nan_inf", severity=ERROR, live=AT_ONCE,
    causes=(
        "learning rate too high (the loss overflows, then its gradient is NaN)",
        "log(0) or division by zero (log of softmax, a normaliser that can be 0)",
        "fp16 overflow without loss scaling",
        "NaN or Inf already in the inputs or labels",
    ),
    check="print the loss every step up to the first NaN; assert torch.isfinite on the batch that produced it; "
          "drop the learning rate 10× and rerun to that step",
)
def nonfinite_values(run: RunCurves, limits: Limits):
    """A loss (error) or an accuracy, score or error metric (warning: MAE, RMSE, WER …) that takes a NaN or ±Inf
    value, on any curve of those roles (train, validation, test, each term, a GAN's adversarial terms); names the
    first curve to do so and the step, the last finite value before it, and for every such curve whether it ever
    came back. A metric that never had a
    value at all is undefined (no example of its kind), not broken, unless the same metric of another split has
    values (a training Dice NaN throughout beside a finite validation Dice: its computation fails on that split);
    and so is one NaN until its first value (a mean episode reward before the first episode ended). A gradient
    norm that turns NaN/Inf for good while the loss stays finite is the same failure with the loss filtered by the
    logger (the Hugging Face Trainer's ``logging_nan_inf_filter``, on by default, logs the running average
    instead); one that comes back is a mixed-precision step the loss scaler skipped. The run's headline metric
    (the score or accuracy a person plots, mAP rather than one class's AP) NaN at every evaluation, while the
    evaluation computed others at those steps, is broken too: its computation fails (a mean over classes taken
    with one class that has no example, NaN, left in)."""
    hidden = _hidden_by_the_logger(run)
    if hidden is not None:
        yield hidden
        return
    for roles, severity in (((*LOSS_ROLES, Role.ADVERSARIAL), ERROR), (METRIC_ROLES, WARNING)):
        # A metric is judged from its first value on (see _first_broken); a loss that is NaN from its first value
        # is broken.
        judged = [curve for role in roles for curve in run.curves(role) if not _exp_of_a_finite_loss(run, curve)]
        if severity == WARNING:
            judged += [curve for curve in run.curves(Role.OTHER) if is_error_metric(curve.tag)]
        broken = {}
        defined_elsewhere = {}  # a metric NaN at every point: the same metric of another split that has values
        for curve in judged:
            index = _first_broken(curve, severity == ERROR)
            if (index is None and severity == WARNING and not len(curve.finite_values)
                    and (other := _defined_elsewhere(curve, judged) or _computed_beside(run, curve, judged))):
                # NaN at every point while the same metric of another split, or the rest of the evaluation, has
                # values: the examples are there, its computation fails on them (a Dice that divides by the mask
                # area of empty training masks; a mean AP over classes one of which has no example)
                defined_elsewhere[curve.tag] = other
                index = 0
            if index is not None:
                broken[curve.tag] = (curve, index)
        if not broken:
            continue
        first, index = min(broken.values(), key=lambda item: item[0].steps[item[1]])
        step = int(first.steps[index])
        bad_value = first.values[index]
        evidence = [f"{first.tag} = {bad_value} at step {step} (first non-finite value)"]
        if index > 0 and np.isfinite(first.values[:index]).any():
            last_finite = np.flatnonzero(np.isfinite(first.values[:index]))[-1]
            evidence.append(f"last finite value before it: {fmt(first.values[last_finite])} "
                            f"at step {int(first.steps[last_finite])}")
        if index == 0 and first.role == Role.TRAIN_LOSS:
            evidence.append("non-finite at its very first value, before any update could overflow: the inputs or "
                            "labels of the first batches (NaN in the data; a mean over no supervised token, every "
                            "label −100, is 0/0)")
        for curve, broken_at in broken.values():
            share = int((~curve.finite_mask[broken_at:]).sum())
            came_back = "finite again later" if curve.finite_mask[broken_at:].any() else "never finite again"
            evidence.append(f"{curve.tag}: {share} of {len(curve)} points non-finite; {came_back}")
            if (other := defined_elsewhere.get(curve.tag)) is not None:
                evidence.append(f"{curve.tag} never has a value while {other.tag} does: the metric is computed on "
                                "these examples and fails on them (a division by zero, a log of 0, a mean over "
                                "classes with a NaN in it)")
        yield Found(
            f"{first.tag} becomes {'NaN' if np.isnan(bad_value) else 'Inf'} at step {step}",
            list(broken), evidence, step=step, severity=severity,
        )
        return


def _exp_of_a_finite_loss(run: RunCurves, curve: Curve) -> bool:
    """A perplexity that is +Inf only where a loss of its split is finite: exp of a large loss overflowed, or the
    trainer caps it so (``math.exp(loss) if loss < 10 else inf``); the loss it is computed from is fine."""
    broken = ~curve.finite_mask
    if not broken.any() or not is_perplexity(curve.tag) or not np.isposinf(curve.values[broken]).all():
        return False
    return any(np.isin(curve.steps[broken], loss.finite_steps).all()
               for loss in run.curves(curve.role) if loss is not curve and not is_perplexity(loss.tag))


def _first_broken(curve: Curve, loss: bool) -> int | None:
    """Where ``curve`` first takes a NaN/±Inf that counts: a loss's first, from its very first value; a metric's
    first after its leading NaNs, for a metric is undefined (NaN, never Inf: an Inf is an overflow) until its first
    example: a mean episode reward before any episode ended, which Stable-Baselines3 and most DQN scripts log as
    NaN; an AP on a set with no small objects, NaN at every evaluation."""
    if curve.first_nonfinite is None or loss:
        return curve.first_nonfinite
    if not len(curve.finite_values):
        return None  # never a value at all: never computed (no example of its kind), not broken
    defined = int(np.flatnonzero(~np.isnan(curve.values))[0])
    after = np.flatnonzero(~curve.finite_mask[defined:])
    return defined + int(after[0]) if len(after) else None


def _computed_beside(run: RunCurves, curve: Curve, judged: list[Curve]) -> Curve | None:
    """For the run's headline metric of its role (see ``Run.primary``), another metric judged with it that has a
    finite value at one of its steps, one of its own role first (another class's AP beside the mean): the
    evaluation that should have computed it ran. A headline picked from a family of one metric per class
    (eval_Car_AP, eval_Van_AP: names that differ in one word) may be the class without examples: not judged so."""
    if run.curve(curve.role) is not curve or any(_siblings(curve.tag, other.tag) for other in run.curves(curve.role)):
        return None
    computed = [other for other in judged if other is not curve and np.isin(other.finite_steps, curve.steps).any()]
    return min(computed, key=lambda other: other.role != curve.role, default=None)


def _siblings(tag: str, other: str) -> bool:
    """Whether two tags name the same metric of two items: as many words, all but one the same, and that one names
    no measurement in either (eval_Car_AP beside eval_Van_AP; not val_f1 beside val_auc, two metrics)."""
    words, others = tokens(tag), tokens(other)
    if len(words) != len(others):
        return False
    differing = [(word, another) for word, another in zip(words, others, strict=True) if word != another]
    return len(differing) == 1 and all(infer_role(word) is Role.OTHER for word in differing[0])


def _defined_elsewhere(curve: Curve, judged: list[Curve]) -> Curve | None:
    """The same metric of another split (``val_dice`` beside ``dice``) with a finite value, if one is judged."""
    return next((other for other in judged
                 if other is not curve and len(other.finite_values) and same_curve_named(other.tag, curve.tag)), None)


def _hidden_by_the_logger(run: RunCurves) -> Found | None:
    norm, loss = run.curve(Role.GRAD_NORM), run.curve(Role.TRAIN_LOSS)
    if norm is None or loss is None or norm.first_nonfinite is None or loss.first_nonfinite is not None:
        return None
    index = norm.first_nonfinite
    if norm.finite_mask[index:].any() or len(norm) - index < 2:
        return None  # finite again: a skipped fp16 step, not a broken run
    step = int(norm.steps[index])
    evidence = [f"{norm.tag} = {norm.values[index]} at step {step} and at every one of the {len(norm) - index - 1} "
                "logged steps after it",
                f"{loss.tag} stays finite over the same steps: the logger replaced the NaN/Inf loss (the Hugging "
                "Face Trainer's logging_nan_inf_filter, on by default, logs the running average instead)"]
    after = loss.values[loss.steps > step]
    if len(after) >= 2 and np.all(after == after[-1]):
        evidence.append(f"{loss.tag} is exactly {fmt(after[-1])} at every logged step after it: the filtered "
                        "value, not a loss")
    before = np.flatnonzero(norm.finite_mask[:index])
    if len(before):
        evidence.append(f"last finite {norm.tag}: {fmt(norm.values[before[-1]])} at step {int(norm.steps[before[-1]])}")
    return Found(f"{norm.tag} becomes {'NaN' if np.isnan(norm.values[index]) else 'Inf'} at step {step} and stays so; "
                 f"the logged {loss.tag} hides it", [norm.tag, loss.tag], evidence, step=step, severity=ERROR)


@rule(
    "CD102", "negative-loss", symptom="train_negative", severity=ERROR,
    causes=(
        "NLLLoss applied to raw logits instead of log_softmax outputs",
        "a sign error, or a reduction that subtracts (e.g. a regulariser with the wrong sign)",
        "a loss that is not bounded below by zero reported as if it were",
    ),
    check="read the loss function line by line: NLLLoss needs log-probabilities; compute the loss of one batch by "
          "hand and compare",
    thresholds={
        "tolerance": Threshold(1e-6, "negative values smaller than this share of the loss's starting size are "
                                     "rounding, not a sign error"),
        "signed_start_share": Threshold(0.1, "a loss already below zero at its start by at least this share of its "
                                             "lowest value is negative by design (a negated SI-SNR, a negated "
                                             "distance): the broken losses start near 0, where an untrained "
                                             "model's outputs are, and run away by orders of magnitude"),
        "run_away_share": Threshold(1.0, "a loss that starts above zero is broken only when it goes further below "
                                         "zero than this share of its start: one that falls through zero and "
                                         "settles closer to it than it began (+41 -> -3.2) measures from a "
                                         "different zero (a negated SI-SNR, a likelihood less a constant)"),
    },
)
def negative_loss(run: RunCurves, limits: Limits):
    """A loss that should be ≥ 0 (cross-entropy, MSE, …) takes values below zero. Losses whose names say they
    are signed by design (policy, entropy, critic, ELBO, NLL of a density, …) are left alone, and so are the
    losses of an agent's run (rewards, episodes, a policy): a policy-gradient objective is signed whatever its
    name. So is a loss already well below zero at its start (a tenth or more of its lowest value), and one that
    falls from above zero through it to a level no further below zero than it started above (a negated SI-SNR
    from +41 to -3.2; a validation loss judged from where its train loss began, before its first evaluation):
    negative by design, while the broken losses (NLLLoss on raw logits) start near 0 and run away by orders of
    magnitude."""
    if run.reinforcement_learning:
        return
    train = run.curve(Role.TRAIN_LOSS)
    for role in LOSS_ROLES:
        for curve in run.curves(role):
            if SIGNED_LOSS_WORDS & set(tokens(curve.tag)) or not len(curve.finite_values):
                continue
            values = curve.finite_values
            tolerance = limits["tolerance"] * max(abs(curve.start), 1.0)
            negative = values < -tolerance
            if not negative.any():
                continue
            first = int(np.argmax(negative))
            lowest = int(np.argmin(values))
            if curve.start_level <= limits["signed_start_share"] * values[lowest]:
                continue  # below zero from the start, at the order of magnitude it ends at: signed by design
            # where it began: its first value, or the level of its first points when a low first point undersells it;
            # a held-out loss is first computed after training began, so where its train loss began
            began = max(curve.start, curve.start_level)
            if role != Role.TRAIN_LOSS and train is not None and len(train.finite_values):
                began = max(began, train.start, train.start_level)
            if -values[lowest] <= limits["run_away_share"] * began:
                continue  # through zero at the pace of its fall and settled near it: signed by design
            yield Found(
                f"{curve.tag} goes below zero from step {curve.step_at(first)}",
                [curve.tag],
                [f"{curve.tag} = {fmt(values[first])} at step {curve.step_at(first)} (first value below 0)",
                 f"lowest: {fmt(values[lowest])} at step {curve.step_at(lowest)}",
                 f"{int(negative.sum())} of {len(values)} finite points below 0"],
                step=curve.step_at(first),
            )

