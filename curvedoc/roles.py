"""What a tag measures, inferred from the naming conventions that real training frameworks use.

Rules are written against roles, never against tag names, so a rule works the same on a Keras CSV log and a
PyTorch event file. Several tags may share a role (Lightning's ``train_loss_step`` and ``train_loss_epoch``,
Ultralytics' ``train/box_loss`` and ``train/cls_loss``); :func:`primary_tag` picks the one a person would plot.
"""

from __future__ import annotations

import re
from enum import Enum


class Role(str, Enum):
    TRAIN_LOSS = "train_loss"
    VAL_LOSS = "val_loss"
    TEST_LOSS = "test_loss"
    TRAIN_ACC = "train_acc"
    VAL_ACC = "val_acc"
    TEST_ACC = "test_acc"
    LR = "lr"
    GRAD_NORM = "grad_norm"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


_SPLIT_WORDS = {
    "train": "train", "training": "train", "trn": "train", "batch": "train",
    "val": "val", "valid": "val", "validation": "val", "eval": "val", "evaluation": "val", "dev": "val",
    "test": "test", "testing": "test", "holdout": "test", "tst": "test",
}
# Throughput, timing and bookkeeping tags mention a split ("eval_runtime") but are not curves of the model.
_NOT_A_METRIC = {
    "runtime", "time", "samples", "per", "second", "seconds", "steps", "flos", "memory", "mem", "epoch_time",
    "throughput", "count", "scale", "scaler", "weight", "weights", "coef", "coefficient",
    "hparam", "hparams",  # add_hparams' metric_dict: one summary value per run, not a curve
}
_ACC_WORDS = {"acc", "accuracy", "acc1", "top1", "accu"}
_TOPK = re.compile(r"^(top|acc)_?[2-9]\d*$")
_LR_WORDS = {"lr", "learning_rate", "learningrate", "learning-rate"}
_GRAD_NORM = re.compile(r"(^|[^a-z])(grad(ient)?s?[_\-/ ]?norm|global[_\-]?norm|gnorm|grad_l2)($|[^a-z])")


def tokens(tag: str) -> list[str]:
    """Lower-case words of a tag: separators split, and so does camelCase (``valLoss`` → val, loss)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", tag)
    return [t for t in re.split(r"[^A-Za-z0-9@]+", spaced.lower()) if t]


# Ultralytics files its validation metrics under "metrics/" (metrics/accuracy_top1, metrics/mAP50(B)); a split
# named anywhere in the tag still wins.
_FALLBACK_SPLIT_WORDS = {"metrics": "val"}


def split_of(words: list[str]) -> str | None:
    found = [_SPLIT_WORDS[w] for w in words if w in _SPLIT_WORDS]
    fallback = [_FALLBACK_SPLIT_WORDS[w] for w in words if w in _FALLBACK_SPLIT_WORDS]
    return (found or fallback or [None])[0]


def infer_role(tag: str, split: str | None = None) -> Role:
    """The role of ``tag``; ``split`` is a hint from where the tag was found (a Keras ``validation/`` folder)."""
    lowered = tag.lower()
    words = tokens(tag)
    if not words:
        return Role.OTHER
    if _GRAD_NORM.search(lowered) or ("grad" in words and "norm" in words):
        return Role.GRAD_NORM
    if (
        any(w in _LR_WORDS for w in words)
        or "learning_rate" in lowered
        or "learning-rate" in lowered
        or re.search(r"(^|[/_\-])lr($|[/_\-])", lowered)
    ):
        return Role.LR
    if any(w in _NOT_A_METRIC for w in words):
        return Role.OTHER
    kind = None
    if any(w == "loss" or w.endswith("loss") for w in words):
        kind = "loss"
    elif any(w in _ACC_WORDS or w.endswith("accuracy") for w in words) and not any(_TOPK.match(w) for w in words):
        kind = "acc"
    if kind is None:
        return Role.OTHER
    split = split_of(words) or split or "train"
    return Role(f"{split}_{kind}")


_LOSS_ALONE = {"loss", "acc", "accuracy"}


def primary_tag(tags: list[str], n_points: dict[str, int]) -> str | None:
    """The tag a person would plot for a role: the total loss over its components, then the densest curve."""
    if not tags:
        return None

    def rank(tag: str) -> tuple[int, int, int]:
        words = [w for w in tokens(tag) if w not in _SPLIT_WORDS and w not in {"epoch", "step", "mean", "avg"}]
        total = 1 if words and set(words) <= _LOSS_ALONE else 0
        return (total, n_points.get(tag, 0), -len(tag))

    return max(tags, key=rank)
