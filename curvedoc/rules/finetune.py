"""Fine-tunes that train cleanly and learn nothing: a pretrained model that starts where an untrained one would,
a loss with no token to supervise, an evaluation score that cannot tell one output from another.

A pretrained language model already knows the text's statistics: even its knowledge of which tokens are common
puts its loss well below ln(vocabulary), the loss of a uniform guess, which is where a randomly initialised model
starts. So a fine-tune of a model whose config names a pretrained base, starting near ln(vocabulary), is not
using the base's weights, or is fed tokens the base never saw in that role (a different tokenizer).
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.features import (
    ACCURACY_ROLES,
    Curve,
    RunCurves,
    chance_loss_of,
    first_logged,
    fmt,
    rank_trend_z,
    terms_beside,
)
from curvedoc.model import VOCABULARY
from curvedoc.roles import Role, split_of, tokens
from curvedoc.rules import ERROR, WARNING, WHOLE_RUN, Found, Limits, Threshold, rule
from curvedoc.rules.accuracy import held_out_accuracy
from curvedoc.rules.stability import perfect_score

# A lone value is no start: a log of one or two points is an evaluation, not a run seen from its beginning.
MIN_POINTS = 3


@rule(
    "CD901", "finetune-start-high", symptom="finetune_start_high", severity=WARNING, live=WHOLE_RUN,
    causes=(
        "the base weights were not loaded: the model was built from the base's config (random init), or "
        "from_pretrained pointed at the wrong path and fell back to a fresh model",
        "the tokenizer (or its vocabulary mapping) differs from the one the base was pretrained with",
        "a chat or prompt template unlike anything the base saw, applied to the training data only",
    ),
    check="decode one training example back to text with the tokenizer in use and read it; evaluate the base "
          "model on one training batch before any step (TrainingArguments(eval_on_start=True)) and compare",
    thresholds={
        "base_ratio": Threshold(1.5, "first train loss at least this many times the base model's own loss on the "
                                     "task (an evaluation at step 0, before any update)"),
        "chance_share": Threshold(0.9, "for a model whose config names a pretrained base: a first loss at or above "
                                       "this share of ln(vocabulary), where an untrained model starts; a model that "
                                       "knows no more than which tokens are common is already well below it (the "
                                       "unigram entropy of text is about 0.55 ln V over bytes, 0.7 ln V over GPT-2's "
                                       "BPE), and a first value logged as the mean of the first steps sits a little "
                                       "below the step-0 loss"),
    },
)
def finetune_start_high(run: RunCurves, limits: Limits):
    """A fine-tune's first train loss is far above what its base model scores: at least 1.5× an evaluation
    logged at step 0 (the base, before any update), or, for a language model whose config names a pretrained
    base (``base_model_name_or_path``, ``model_name_or_path``, a model card's ``base_model``; a model config's own
    ``_name_or_path`` is not enough: from-scratch runs borrow configs), at or near ln(vocabulary size),
    the loss of a model that has learned nothing."""
    train = run.curve(Role.TRAIN_LOSS)
    if train is None or len(train.finite_values) < MIN_POINTS:
        return None
    first = float(train.finite_values[0])
    for base_loss, tags, where in _base_losses(run, train):
        if base_loss > 0 and first >= limits["base_ratio"] * base_loss:
            return Found(
                f"{train.tag} starts at {fmt(first)}, {first / base_loss:.2g}× the base model's {fmt(base_loss)}",
                [train.tag, *tags],
                [f"{train.tag} = {fmt(first)} at step {train.step_at(0)} (first value)",
                 f"the base model's loss: {fmt(base_loss)} ({where})",
                 "the base scores this task far better than the fine-tune starts: the training data is not "
                 "tokenized or templated as the base expects, or the base's weights are not the ones loaded"],
                step=train.step_at(0))
    base_model = run.run.meta.base_model
    chance = chance_loss_of(run, train)
    if base_model is None or chance is None or run.run.meta.n_classes_kind != VOCABULARY:
        return None
    if first < limits["chance_share"] * chance:
        return None
    return Found(
        f"{train.tag} starts at {fmt(first)}, {first / chance:.0%} of ln({run.n_classes:,}), "
        f"{'above' if first >= chance else 'at'} where an untrained model starts: not a fine-tune of {base_model}",
        [train.tag],
        [f"{train.tag} = {fmt(first)} at step {train.step_at(0)} (first value)",
         f"ln(vocabulary size {run.n_classes:,}) = {fmt(chance)}: the loss of a uniform guess over the vocabulary "
         f"(vocabulary size: {run.class_count.source})",
         f"the run's files name a pretrained base: {base_model}",
         "a pretrained model knows at least which tokens are common, which puts its first loss well below "
         "ln(vocabulary)"],
        step=train.step_at(0), severity=ERROR if first >= chance else None)


def _base_losses(run: RunCurves, train: Curve) -> list[tuple[float, list[str], str]]:
    """What the base model scores on the task: a held-out loss logged at step 0, before the first train step
    (the Trainer's ``eval_on_start``), and the loss of a baseline run (``--baseline``)."""
    found = []
    curve = first_logged(run, Role.VAL_LOSS, Role.TEST_LOSS)
    if (curve is not None and curve.first_nonfinite != 0 and curve.step_at(0) == 0
            and train.step_at(0) > 0):
        found.append((float(curve.finite_values[0]), [curve.tag], f"{curve.tag} at step 0, before any update"))
    meta = run.run.meta
    if meta.base_loss is not None:
        found.append((meta.base_loss, [], meta.base_loss_source or "the baseline run"))
    return found


@rule(
    "CD902", "loss-masked-out", symptom="loss_masked_out", severity=ERROR,
    causes=(
        "the label mask covers every token (all labels −100): nothing is supervised",
        "a completion-only collator given a response template that never occurs in the tokenized text",
        "targets emptied by truncation: the prompt fills the whole max length",
    ),
    check="count the supervised tokens (labels != −100) in one batch from the collator; decode the labels that "
          "are left",
    thresholds={"min_points": Threshold(3, "the first logged train losses that must all be exactly 0"),
                "climb_z": Threshold(3.0, "an accuracy or score beside it that climbs by this rank-trend z or more "
                                          "shows a model that learns: the zero is not the loss being trained")},
)
def loss_masked_out(run: RunCurves, limits: Limits):
    """The train loss is exactly 0 from its first logged value on, and the gradient norm, where logged, is 0 (or
    NaN) too: no token contributes to the loss. A real cross-entropy is never exactly 0 on a batch, least of all
    before the first update. One term of a multi-term loss at 0 beside terms that are not is a term switched off
    (YOLO's unused sem_loss), and says nothing. (A loss that is NaN from its first value is CD101's: 0/0 over no
    supervised token looks the same as an overflow there, and its finding names both.) Not in an agent's run: a
    DQN logs its loss as 0 until learning starts (``learning_starts``: no update yet, no supervision to miss). Not
    beside an accuracy perfect from its first value (a task with one class: the 0 is right) or an accuracy or main
    score that climbs beyond its noise (the model learns: the 0 is a column the logger never fills); CD301 reports
    such a loss as one that never moved."""
    train = run.curve(Role.TRAIN_LOSS)
    points = int(limits["min_points"])
    if train is None or len(train) < points or run.reinforcement_learning:
        return None
    unsupervised = train.values == 0
    if not unsupervised[:points].all():
        return None
    if any(term is not train and (term.finite_values != 0).any() for term in terms_beside(run, train)):
        return None  # one term at 0 beside others that are not is switched off (YOLO's unused sem_loss)
    if _answers_right_or_improving(run, limits):
        # a loss of 0 beside answers that are right from the start is right (one class to learn), and beside
        # answers that get better is not the loss being trained (a column the logger never fills): a logged
        # loss that never moved from its start, CD301's
        return None
    lasted = int(np.argmin(unsupervised)) if not unsupervised.all() else len(train)
    evidence = [f"{train.tag}: the first {lasted} of {len(train)} logged values are exactly 0, from step "
                f"{int(train.steps[0])}"]
    norm = run.curve(Role.GRAD_NORM)
    if norm is not None and len(norm):
        early = norm.values[norm.steps <= train.steps[lasted - 1]]
        if len(early) and not ((early == 0) | np.isnan(early)).all():
            return None  # gradients flowed: something was supervised, the logged loss is what is wrong
        evidence.append(f"{norm.tag} = {_zero_or_nan(early)} over the same steps: no gradient reached the weights")
    else:
        evidence.append("no gradient norm is logged to confirm it")
    return Found(f"{train.tag} is exactly 0 from the first step: no token is supervised",
                 [train.tag] + ([norm.tag] if norm is not None else []), evidence,
                 step=int(train.steps[0]), step_range=(int(train.steps[0]), int(train.steps[lasted - 1])))


def _answers_right_or_improving(run: RunCurves, limits: Limits) -> bool:
    """An accuracy of the run is perfect from its first value, or an accuracy or the main score climbs beyond its
    noise. (A score's scale is its own: a judge's 1 may be the worst mark, so only an accuracy is perfect at 1.)"""
    for role in (*ACCURACY_ROLES, Role.SCORE):
        curve = run.curve(role)
        if curve is None or len(curve.finite_values) < MIN_POINTS:
            continue
        perfect = perfect_score(curve) if role in ACCURACY_ROLES else None
        if ((perfect is not None and curve.finite_values[0] >= perfect)
                or rank_trend_z(curve.finite_values) >= limits["climb_z"]):
            return True
    return False


def _zero_or_nan(values: np.ndarray) -> str:
    zeros = bool((values == 0).any())
    nans = bool(np.isnan(values).any())
    return "0 or NaN" if zeros and nans else "NaN" if nans else "0"


@rule(
    "CD903", "eval-scores-clustered", symptom="eval_scores_clustered", severity=WARNING, live=WHOLE_RUN,
    needs=(Role.VAL_ACC, Role.TEST_ACC, Role.SCORE),
    causes=(
        "generation broken: empty, truncated or constant outputs all score alike",
        "a judge that ignores the criteria (or the output) and gives every answer the same mark",
        "a rubric that does not discriminate: every output lands in one bucket",
        "an evaluation split with no labelled example, or labels the model cannot predict: every evaluation scores 0",
    ),
    check="read 20 outputs next to their scores and targets by hand, and count the labelled examples of the "
          "evaluation split; score a deliberately wrong answer and a reference answer: a working metric tells them "
          "apart",
    thresholds={
        "min_points": Threshold(4, "evaluations the score must take its one value at"),
        "same_share": Threshold(1e-4, "values within this share of the first are one value (the same to four "
                                      "significant digits)"),
        "moving_share": Threshold(0.05, "the train loss moves when its level changes by this share of its start "
                                        "(and beyond its noise)"),
        "moving_noise": Threshold(3.0, "... and by this many standard errors of that change"),
    },
)
def eval_scores_clustered(run: RunCurves, limits: Limits):
    """The run's main evaluation score (exact match, a judge's mark, BLEU, a detector's mAP, a segmenter's IoU …; not a
    per-class breakdown) takes one and the same value at every one of at least four evaluations while the train
    loss keeps moving: whatever the model produces, the score cannot tell it apart (a validation set too small to
    move it, a generation or a metric that is broken). A classifier whose held-out accuracy is frozen beside it is
    reported by predictions-frozen instead."""
    score = run.curve(Role.SCORE)
    train = run.curve(Role.TRAIN_LOSS)
    if score is None or train is None or split_of(tokens(score.tag)) == "train" or run.reinforcement_learning:
        return None
    values = score.finite_values
    # one value to the digits a report shows: a Dice over a whole test set that moves by a pixel (0.0838102 and
    # 0.0838105) says the predictions did not change
    if len(values) < limits["min_points"] or not np.allclose(values, values[0], rtol=limits["same_share"], atol=0):
        return None
    # a held-out accuracy frozen beside it is predictions-frozen's finding (CD603): the same outputs, said once
    accuracy = held_out_accuracy(run)
    if accuracy is not None and len(accuracy[1]) >= limits["min_points"] and np.all(accuracy[1] == accuracy[1][0]):
        return None
    # A classifier's or a detector's held-out score that keeps one value is predictions-frozen's case, unless that
    # value is 0: then no evaluation scored anything (a split with no labelled example, predictions never kept)
    change, noise = train.level_change()
    needed = max(limits["moving_share"] * abs(train.start_level), limits["moving_noise"] * noise)
    if not (math.isfinite(change) and abs(change) > 0 and abs(change) >= needed):
        return None
    first_step, last_step = score.step_at(0), score.step_at(len(values) - 1)
    return Found(
        f"{score.tag} is {fmt(values[0])} at every one of {len(values)} evaluations while {train.tag} moves",
        [score.tag, train.tag],
        [f"{score.tag} = {fmt(values[0])} at all {len(values)} evaluations, steps {first_step}–{last_step}",
         f"{train.tag}: {fmt(train.start_level)} → {fmt(train.end)} over the run: the model's outputs changed, "
         "their score did not"],
        step=first_step, step_range=(first_step, last_step))
