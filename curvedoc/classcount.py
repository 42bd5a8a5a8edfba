"""How many classes a run predicts over: what its files record, or what its curves give away when they do not.

Public logs almost never record the class count, and every check against chance −log(1/n) needs it. The curves
often say it anyway, because a uniform guess has a signature:

- a standard-initialised classifier spreads its probability about evenly over its k outputs, so its loss at
  step 0 is ln k plus a little (a logit spread σ adds about σ²/2 nats);
- a model that learned nothing about the input scores 1/k accuracy on balanced held-out data, at every
  evaluation before it learns something (all of them when it never does);
- a loss that sits at ln k for a whole run (or its first evaluations) is a uniform guess the run never left (or
  left late);
- a held-out recall of exactly 1 with the precision equal to the accuracy is a model that called every example
  positive: the positive-class metrics of a binary task (k = 2), an accuracy measurement of its own.

Each is evidence of k only as far as its precision tells k from its neighbours: a first loss (±0.1 nats) only
the small counts, a flat loss (a median of many points) any count its level pins, an accuracy the small and the
conventional counts. One piece of evidence makes an *uncertain* count (a finding built on it says so and drops
one severity level); a loss and an accuracy that agree make it certain (two losses, or a loss's start and its
level, are one measurement of one unlearned model). And an accuracy and a loss of one split that disagree veto
each other: an accuracy at 1/k is no evidence beside a cross-entropy an unlearned model over k classes does not
score (2.1× ln 4 beside 0.25: a learned level that happens to sit at a quarter), nor a loss at ln k beside an
accuracy of twice 1/k or more. A count read off a curve's start alone is never that curve's yardstick: its start
cannot be "far from chance" by the measure it defined, nor its level "near chance".
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from curvedoc.features import LOSS_ROLES, NOT_CROSS_ENTROPY_WORDS, Curve, RunCurves, as_fraction, fmt
from curvedoc.roles import HELD_OUT_ACC, LOSS_OF_ACCURACY, Role, tokens

# How a chance level computed from an inferred count says so, wherever it is shown
READ_OFF_CURVES = "read off the curves: the run records none"
# The counts an accuracy at 1/k can give away: the small ones, and beyond them the conventional counts of public
# benchmarks (10: MNIST, CIFAR-10, SVHN; 100: CIFAR-100; 1000: ImageNet), whose 1/k lies ±10% apart from its
# neighbours' only roughly; an 11-class task at 0.091 is then read as 10, which is why such a count stays
# uncertain until a loss agrees.
TELLABLE_COUNTS = (2, 3, 4, 5, 10, 100, 1000)
# A first loss has a spread of its own (±0.1 nats: the init's excess, the first batch), and ln k and ln(k+1) lie
# closer than that from k = 6 on: a first loss tells the small counts, and 10, the commonest benchmark count, whose
# band stays clear of 8 classes (measured: 72 of 72 right over every labelled set; reading 100 off a first loss was
# wrong for all 13 held-out language models of a 91-character vocabulary).
TELLABLE_FROM_START = (2, 3, 4, 5, 10)
# A step-0 loss lies within this many nats of ln k: a healthy init adds a few hundredths (σ²/2 for logits of
# spread σ ≲ 0.3), the first minibatch and a class prior the init happens to favour as much either way.
START_BAND = 0.1
# Held-out accuracy is confined to 1/k when every evaluation lies within this share of 1/k of it: a constant
# prediction scores exactly its class's share of a stratified split, and a 1,000-example binary evaluation of a
# guessing model wanders ±0.016 around 0.5; a class share of 42% or 37% is a prior, not 1/2 or 1/3.
ACCURACY_BAND = 0.1
MIN_EVALUATIONS = 3
# Before a model that learns leaves 1/k, it must have sat there this long: three points of a slow learner's
# climb can pass near 1/k by coincidence.
MIN_LEADING_EVALUATIONS = 5
# A loss sits at ln k when every point lies within this share of ln k (a model that learned a little sits lower,
# a broken one swings wider).
LEVEL_SHARE = 0.05
# A flat loss pins any count up to this many classes when its median lies within this share of the gap between
# ln k and ln(k+1) of ln k: a level that close by coincidence happens to one flat curve in 25.
MAX_PINNED, PIN_SHARE = 1000, 0.02
# Up to this many classes, ln(k−1) lies more than DEFICIT_SHARE below ln k (ln 9 is 4.6% below ln 10): a flat level
# that far below ln k at most is a class prior a little off uniform, and still tells k.
FEW_CLASSES, DEFICIT_SHARE = 10, 0.03
# A model that never leaves its initialisation sits a little above ln k instead: a logit spread σ adds about σ²/2
# nats, a few hundredths for a standard init. Up to FEW_CLASSES that excess stays clear of the next count's deficit.
INIT_EXCESS = 0.03
SHOWN_EVIDENCE = 2  # pieces of evidence a finding quotes; the rest are counted
# Two metrics computed from the same predictions agree to their logged digits: four decimals at the least
ROUNDING = 5e-5
# An accuracy that never moved, this many times above (or below) 1/n of a recorded n, is no constant prediction on
# n balanced classes: the record names something else (the model's head), not the data's classes.
ACCURACY_RULES_OUT = 2.0
# An unlearned model's cross-entropy lies within this share of ln k: a class prior a little off uniform below it, an
# init's excess and a little overconfidence above
UNLEARNED_LOSS_SHARE = 0.25
BLOWN_UP = 10.0
# the loss and the accuracy measured on one split, either way round
_PARTNERS = LOSS_OF_ACCURACY | {loss: accuracy for accuracy, loss in LOSS_OF_ACCURACY.items()}


@dataclass(frozen=True)
class ClassCount:
    """A run's class count (its vocabulary size for a language model) and how it is known."""

    n: int
    source: str  # where it came from, as a finding quotes it: "config: num_labels", "the first loss 2.31 ≈ ln 10"
    inferred: bool = False
    certain: bool = True
    evidence: frozenset[tuple[str, str]] = frozenset()  # (tag, kind) of each piece an inferred count rests on

    def yardstick_for(self, tag: str) -> bool:
        """Whether chance −log(1/n) may judge curve ``tag``: not when the count rests on that curve's own start
        alone (a start, and a level measured against it, cannot be "far from chance" or "stuck near chance" by
        the measure the start defined). A loss seen sitting at ln k is its own yardstick: that is what it shows."""
        return not self.inferred or any(other != tag or kind == "level" for other, kind in self.evidence)

    def provenance(self, vocabulary: bool) -> str:
        """The sentence a finding built on a recorded count carries: where the run records it, so that a count taken
        from a settings module or a training script beside the log can be checked."""
        return f"{'vocabulary size' if vocabulary else 'class count'} {self.n:,} from {self.source}"

    def assumption(self) -> str:
        """The sentence a finding built on an inferred count carries."""
        sure = "" if self.certain else "; uncertain, so this finding is one severity level lower"
        return f"assumed {self.n} classes because {self.source} (not recorded in the run{sure})"


@dataclass(frozen=True)
class Evidence:
    n: int
    tag: str
    kind: str  # "start", "accuracy" or "level"
    text: str
    unmoved_accuracy: float | None = None  # an accuracy's level when it sat there at every evaluation


def class_count(run: RunCurves) -> ClassCount | None:
    """The count the run records, else the one its curves show, else None. A recorded count the curves contradict
    gives way to theirs when the contradiction is certain (a loss at ln k and an accuracy at 1/k), or when a
    held-out accuracy that never moved sits at least twice or at most half 1/n of the recorded n: a constant
    prediction on n balanced classes scores 1/n. The config named the model's outputs (a 200-way head), the curves
    show the classes the data has (CIFAR-10's 10); a count taken so on one kind of evidence stays uncertain."""
    meta = run.run.meta
    if not meta.n_classes and meta.language_model:
        return None  # a language model's chance is ln(vocabulary): a loss that happens to sit at ln k says nothing
    evidence = evidence_of(run)
    inferred = _count_from(evidence)
    if not meta.n_classes:
        return _with_benchmark(inferred, meta.benchmark_classes)
    recorded = ClassCount(meta.n_classes, meta.n_classes_source or "the run's config")
    if inferred is None or inferred.n == meta.n_classes:
        return recorded
    ruled_out = any(item.unmoved_accuracy is not None and item.n == inferred.n
                    and max(item.unmoved_accuracy * meta.n_classes, 1 / (item.unmoved_accuracy * meta.n_classes))
                    >= ACCURACY_RULES_OUT for item in evidence)
    if not (inferred.certain or ruled_out) or _losses_side_with(run, recorded.n, inferred.n):
        return recorded
    return replace(inferred, source=f"{inferred.source}, although {recorded.source} records {recorded.n}")


def _losses_side_with(run: RunCurves, recorded: int, inferred: int) -> bool:
    """Whether the run's cross-entropy sits nearer ln(recorded) than ln(inferred): an accuracy that never moved
    from 0.099 beside a loss of 3.11 is a model predicting the commonest of 25 classes (ln 25 = 3.22), not a
    uniform guess over 10 (ln 10 = 2.30, which no such model's loss exceeds by a third)."""
    losses = [curve for curve in main_losses(run) if is_cross_entropy_like(curve)]
    if not losses:
        return False
    level = float(np.median(losses[0].finite_values))
    return abs(level - math.log(recorded)) < abs(level - math.log(inferred))


def _with_benchmark(inferred: ClassCount | None, benchmark: tuple[str, int] | None) -> ClassCount | None:
    """The count the curves show, weighed with the one of a public benchmark the config names. The name is one
    piece of evidence (the run may not classify that benchmark's labels: a VAE on MNIST), independent of the
    curves: a curve agreeing makes the count certain; a name outweighs a curve's lone uncertain reading (a first
    minibatch of four examples), not curves that are certain between themselves."""
    if benchmark is None:
        return inferred
    where, n = benchmark
    named = ClassCount(n, f"{where} names a benchmark of {n} classes", inferred=True, certain=False,
                       evidence=frozenset({(where, "benchmark")}))
    if inferred is None:
        return named
    if inferred.n == n:
        return replace(inferred, source=f"{named.source} and {inferred.source}", certain=True,
                       evidence=inferred.evidence | named.evidence)
    return inferred if inferred.certain else named


def infer_class_count(run: RunCurves) -> ClassCount | None:
    """The class count the curves give away (see the module docstring), or None when they say nothing or
    disagree."""
    return _count_from(evidence_of(run))


def _count_from(evidence: list[Evidence]) -> ClassCount | None:
    by_count: dict[int, list[Evidence]] = defaultdict(list)
    for item in evidence:
        by_count[item.n].append(item)
    if len(by_count) != 1:
        return None  # nothing, or curves that contradict each other: no count is safer than a guess
    (n, items), = by_count.items()
    told = " and ".join(item.text for item in items[:SHOWN_EVIDENCE])
    if len(items) > SHOWN_EVIDENCE:
        told += f" (and {len(items) - SHOWN_EVIDENCE} more curve{'s' if len(items) > SHOWN_EVIDENCE + 1 else ''})"
    kinds = {item.kind for item in items}
    # Losses measured on two splits, or a loss's start and its level, move together (one unlearned model, one
    # scale that may happen to sit near ln k); an accuracy at 1/k is a measurement of its own.
    certain = "accuracy" in kinds and len(kinds) >= 2
    return ClassCount(n, told, inferred=True, certain=certain,
                      evidence=frozenset((item.tag, item.kind) for item in items))


def evidence_of(run: RunCurves) -> list[Evidence]:
    """Every piece of evidence the curves hold of a class count (they may disagree)."""
    return [*_loss_starts(run), *_accuracy_levels(run), *_one_class_predicted(run), *_loss_levels(run)]


def tellable_count(level: float, band: float) -> int | None:
    """The k a first loss tells, whose ln k lies within ``band`` nats of ``level``, if any."""
    return next((k for k in TELLABLE_FROM_START if abs(level - math.log(k)) <= band), None)


def is_cross_entropy_like(curve: Curve) -> bool:
    """Could this curve be a cross-entropy over classes: its name says no other kind of loss, and it is never
    negative."""
    return not (set(tokens(curve.tag)) & NOT_CROSS_ENTROPY_WORDS) and bool(len(curve.finite_values)) and \
        float(curve.finite_values.min()) >= 0


def main_losses(run: RunCurves) -> list[Curve]:
    """The main curve of each loss role: a term of a multi-term loss (a box loss, a physics residual) is no
    cross-entropy over the classes."""
    return [curve for role in LOSS_ROLES if (curve := run.curve(role)) is not None]


def _loss_starts(run: RunCurves) -> list[Evidence]:
    found = []
    for curve in main_losses(run):
        if len(curve.finite_values) < 3 or not is_cross_entropy_like(curve) or not _untrained_first(run, curve):
            continue
        first = float(curve.finite_values[0])
        k = tellable_count(first, START_BAND)
        if k is not None:
            found.append(Evidence(k, curve.tag, "start", f"the first {curve.tag} {fmt(first)} ≈ ln {k}"))
    return found


def _untrained_first(run: RunCurves, curve: Curve) -> bool:
    """Whether the curve's first value is the untrained model's loss: logged at step 0 or 1, and on a log that
    counts optimizer steps, not epochs: a train loss logged as rarely as validation is a mean over an epoch,
    which learning has already lowered, and a validation loss is the untrained model's only when evaluated
    before the first train log of a train loss logged far more often (an evaluation at step 0)."""
    if curve.finite_steps[0] > 1:
        return False
    train = run.curve(Role.TRAIN_LOSS)
    held_out = next(filter(None, map(run.curve, (Role.VAL_LOSS, Role.VAL_ACC, Role.TEST_LOSS, Role.TEST_ACC))), None)
    if curve.role == Role.TRAIN_LOSS:
        return held_out is None or len(curve) >= 3 * len(held_out)
    return (train is not None and len(train) >= 3 * len(curve) and len(train.finite_steps)
            and curve.finite_steps[0] <= train.finite_steps[0])


def _accuracy_levels(run: RunCurves) -> list[Evidence]:
    found = []
    for role in HELD_OUT_ACC:
        for curve in run.curves(role):
            values = as_fraction(curve)
            if values is None or len(values) < MIN_EVALUATIONS:
                continue
            k = min(TELLABLE_COUNTS, key=lambda count: abs(1 / count - values[0]))
            leading = _sitting(values, 1 / k, ACCURACY_BAND / k)
            if leading and not _loss_contradicts(run, curve, k, leading):
                level = float(np.median(values[:leading]))
                found.append(Evidence(k, curve.tag, "accuracy",
                                      f"{curve.tag} sits at {fmt(level)} ≈ 1/{k} at "
                                      f"{_span(leading, len(values))} evaluations",
                                      level if leading == len(values) else None))
    return found


def _loss_contradicts(run: RunCurves, accuracy: Curve, k: int, leading: int) -> bool:
    """Whether the cross-entropy of the accuracy's split, over the evaluations where the accuracy sat at 1/k, is one
    no unlearned model over k classes scores: further from ln k than UNLEARNED_LOSS_SHARE of it (a model at 2.1×
    ln 4 beside an accuracy of 0.25 learned something, and its 0.25 is a coincidence of another count), yet not
    blown up (beyond BLOWN_UP × ln k, the true class at a probability below k⁻¹⁰: a broken model, whose accuracy is
    what its one constant answer scores, 1/k on balanced data)."""
    during = _partner_during(run, accuracy, leading)
    if during is None:
        return False
    level, chance = float(np.median(during[1])), math.log(k)
    return (is_cross_entropy_like(during[0]) and abs(level - chance) > UNLEARNED_LOSS_SHARE * chance
            and level < BLOWN_UP * chance)


def _accuracy_contradicts(run: RunCurves, loss: Curve, k: int, leading: int) -> bool:
    """Whether the accuracy of the loss's split, over the points where the loss sat at ln k, is one no unlearned
    model over k classes scores: ACCURACY_RULES_OUT times 1/k or more (an accuracy of 0.34 beside a loss at ln 6 is
    no model guessing among 6). Not less: a random init's answers can miss more often than chance (0.044 on ten
    balanced digits, with the learning rate at 0)."""
    during = _partner_during(run, loss, leading)
    if during is None or (values := as_fraction(during[0])) is None:
        return False
    return float(np.median(values[np.isin(during[0].finite_steps, during[2])])) * k >= ACCURACY_RULES_OUT


def _partner_during(run: RunCurves, curve: Curve, leading: int) -> tuple[Curve, np.ndarray, np.ndarray] | None:
    """The loss of an accuracy's split (the accuracy of a loss's), and its values and steps over the span of the
    curve's first ``leading`` points, when it logged any there."""
    partner = run.curve(_PARTNERS[curve.role]) if curve.role in _PARTNERS else None
    if partner is None:
        return None
    steps = curve.finite_steps[:leading]
    inside = (partner.finite_steps >= steps[0]) & (partner.finite_steps <= steps[-1])
    return (partner, partner.finite_values[inside], partner.finite_steps[inside]) if inside.any() else None


def _one_class_predicted(run: RunCurves) -> list[Evidence]:
    """A held-out recall of exactly 1 with a precision equal to the accuracy logged beside them: the model
    called every example positive, so the precision is the positive share and so is the accuracy, which only
    the positive-class metrics of a binary task make (micro-averaged ones equal the accuracy, macro-averaged
    ones give a constant prediction a recall of 1/k). An accuracy measurement of its own of k = 2."""
    found = []
    for role in HELD_OUT_ACC:
        for accuracy in run.curves(role):
            partners = [run.curve_of(_renamed(accuracy.tag, metric)) for metric in ("precision", "recall")]
            if None in partners:
                continue
            precision, recall = partners
            steps = np.intersect1d(np.intersect1d(accuracy.finite_steps, precision.finite_steps),
                                   recall.finite_steps)
            at = [_value_at(curve, steps) for curve in (accuracy, precision, recall)]
            if any(values is None for values in at):
                continue
            accuracy_at, precision_at, recall_at = at
            every_positive = ((recall_at >= 1 - ROUNDING) & (np.abs(precision_at - accuracy_at) <= ROUNDING)
                              & (accuracy_at > ROUNDING) & (accuracy_at < 1 - ROUNDING))
            if every_positive.any():
                first = int(np.argmax(every_positive))
                found.append(Evidence(2, accuracy.tag, "accuracy",
                                      f"{recall.tag} = 1 with {precision.tag} = {accuracy.tag} = "
                                      f"{fmt(float(accuracy_at[first]))} at step {int(steps[first])}: every "
                                      f"example called positive, in a binary task"))
    return found


def _renamed(tag: str, metric: str) -> str:
    """The tag of ``metric`` logged beside the accuracy ``tag`` (eval_accuracy → eval_precision, val_acc →
    val_precision)."""
    return re.sub(r"acc(uracy)?(?![a-z])", metric, tag, count=1, flags=re.IGNORECASE)


def _value_at(curve: Curve, steps: np.ndarray) -> np.ndarray | None:
    """The curve's values at ``steps`` as fractions of 1, or None (not a share, or nothing shared)."""
    values = as_fraction(curve)
    if values is None or not len(steps):
        return None
    return values[np.searchsorted(curve.finite_steps, steps)]


def _loss_levels(run: RunCurves) -> list[Evidence]:
    """A loss that sits at ln k: at every point, or at the first few before the model learns something."""
    found = []
    for curve in main_losses(run):
        values = curve.finite_values
        if len(values) < MIN_EVALUATIONS or not is_cross_entropy_like(curve):
            continue
        k = _pinned_count(values, whole_run=True) or _pinned_count(values[:MIN_LEADING_EVALUATIONS], whole_run=False)
        leading = _sitting(values, math.log(k), LEVEL_SHARE * math.log(k)) if k is not None else 0
        if leading and not _accuracy_contradicts(run, curve, k, leading):
            found.append(Evidence(k, curve.tag, "level",
                                  f"{curve.tag} sits at {fmt(float(np.median(values[:leading])))} ≈ ln {k} at "
                                  f"{_span(leading, len(values))} points"))
    return found


def _pinned_count(values: np.ndarray, whole_run: bool) -> int | None:
    """The k whose ln k a flat stretch of loss sits at. A model that learned nothing sits at the entropy of the
    class prior, ln k for balanced classes and a few % below for mildly imbalanced ones; up to ``FEW_CLASSES``
    the logs of neighbouring counts lie further apart than that deficit, so a level up to ``DEFICIT_SHARE`` below
    ln k (or an init's ``INIT_EXCESS`` above it) tells k — for a loss that sits there the ``whole_run`` (a
    fine-tune's first points near 2.06 sit that close to ln 8 by coincidence). Otherwise only a level within
    ``PIN_SHARE`` of the gap to the next count does: a median of flat points is precise enough to tell 20 classes
    (2.9957) from 19 and 21, where a single first loss is not."""
    if len(values) < MIN_EVALUATIONS:
        return None
    level = float(np.median(values))
    if not 0 < level < math.log(MAX_PINNED + 0.5) or np.abs(values - level).max() > LEVEL_SHARE * level:
        return None
    if whole_run:
        above, below = max(2, math.ceil(math.exp(level) - 1e-9)), max(2, math.floor(math.exp(level)))
        if above <= FEW_CLASSES and math.log(above) - level <= DEFICIT_SHARE * math.log(above):
            return above
        if below <= FEW_CLASSES and 0 <= level - math.log(below) <= INIT_EXCESS:
            return below
    k = round(math.exp(level))
    return k if k >= 2 and abs(level - math.log(k)) <= PIN_SHARE * math.log((k + 1) / k) else None


def _sitting(values: np.ndarray, level: float, band: float) -> int:
    """How many leading values lie within ``band`` of ``level``, when that counts as sitting there: all of them
    (at least ``MIN_EVALUATIONS``), or the first ``MIN_LEADING_EVALUATIONS`` or more before the curve leaves;
    else 0."""
    leading = int(np.argmax(np.r_[np.abs(values - level) > band, True]))
    return leading if leading >= (MIN_EVALUATIONS if leading == len(values) else MIN_LEADING_EVALUATIONS) else 0


def _span(leading: int, total: int) -> str:
    return f"every one of {total}" if leading == total else f"the first {leading} of {total}"
