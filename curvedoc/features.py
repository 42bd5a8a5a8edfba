"""Features of curves that rules share: robust smoothing, noise level, start/end levels, chance level.

Every rule reads a run through :class:`RunCurves`, which computes each feature once per run and caches it, so
ten rules asking for the smoothed train loss cost one smoothing. All features are scale-free or expressed in
units of the curve's own noise, so thresholds mean the same on a loss of 1e-3 and one of 1e3, on 5 epoch points
and on a million steps. Cost is linear in the number of points.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable
from functools import cache, cached_property
from statistics import NormalDist

import numpy as np

from curvedoc.model import VOCABULARY, Run
from curvedoc.roles import Role, is_perplexity, names_a_term, names_a_total, tokens

MAD_TO_SIGMA = 1.4826  # scales a median absolute deviation to a Gaussian standard deviation
LOSS_ROLES = (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TEST_LOSS)
ACCURACY_ROLES = (Role.TRAIN_ACC, Role.VAL_ACC, Role.TEST_ACC)
START_POINTS = 3  # a curve's start level is the median of at most this many first points
MEDIAN_SE = 1.25  # standard error of a median of k Gaussian draws, in units of σ/√k
GROUPED_FROM, GROUPED_BELOW = 1e4, 1e9  # fmt groups the digits of numbers in this range instead of an exponent


def median_filter(values: np.ndarray, **options) -> np.ndarray:
    """scipy's running median, imported on first use: scipy takes longer to import than an audit served from its
    cache takes in all."""
    from scipy.ndimage import median_filter as scipy_median_filter

    return scipy_median_filter(values, **options)


def fmt(value: float, digits: int = 4) -> str:
    """A number as evidence shows it: four significant digits (``digits``), whatever its scale; from 10,000 to a
    billion with its digits grouped (a reward of 27,540, a rise of 31,300 noise σ, not 2.754e+04 or 3.13e+04), as a
    reader of a log sees them there."""
    rounded = float(f"{value:.{digits}g}")
    if GROUPED_FROM <= abs(rounded) < GROUPED_BELOW:
        return f"{rounded:,.0f}"
    return f"{value:.{digits}g}"


def fmt_change(share: float) -> str:
    """A relative change as a signed percentage: one decimal, or two significant digits below a tenth of a
    percent, where one decimal would show a curve that moved 0.005% as "-0.0%"."""
    if share == 0 or abs(share) >= 0.001:
        return f"{share:+.1%}"
    return f"{share * 100:+.2g}%"


def first_points(values: np.ndarray) -> np.ndarray:
    """The first few of ``values`` (one on a short curve, three on a long one): where a curve starts. Not a share of
    the curve: a language model falls from 10.8 to 4 nats in its first 2% of steps."""
    return values[:max(1, min(START_POINTS, len(values) // 20))]


def second_difference_sigma(second: np.ndarray) -> float:
    """The noise σ of an unsmoothed curve from its second differences (Var(x[i-1] − 2 x[i] + x[i+1]) = 6 σ²), which
    a steady trend or a gentle bend leaves near 0: robust from 6 of them on; below that their median is too
    unsure, and the larger of it and their root mean square is kept (it errs high, never counting the slope)."""
    scaled = second / math.sqrt(6)
    robust = robust_sigma(scaled)
    return robust if len(scaled) >= 6 else max(robust, float(np.sqrt(np.mean(scaled ** 2))))


def listed(names: list[str], shown: int = 5) -> str:
    """The first ``shown`` names, and how many more there are: tags as a finding or a verdict quotes them."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, in the plural unless one: "1 point", "3 points"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class Curve:
    """One tag's values in step order; NaN/±Inf stay in ``values``, ``finite_*`` drop them."""

    def __init__(self, tag: str, role: Role, steps: np.ndarray, values: np.ndarray):
        self.tag = tag
        self.role = role
        self.steps = steps
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    @cached_property
    def finite_mask(self) -> np.ndarray:
        return np.isfinite(self.values)

    @cached_property
    def all_finite(self) -> bool:
        # not read off the mask: the mask of a curve without NaN/Inf is then never kept (a byte a point, for nothing)
        return bool(np.isfinite(self.values).all())

    @cached_property
    def finite_steps(self) -> np.ndarray:
        # the curve itself when nothing is to drop: a long curve is not held twice
        return self.steps if self.all_finite else self.steps[self.finite_mask]

    @cached_property
    def finite_values(self) -> np.ndarray:
        return self.values if self.all_finite else self.values[self.finite_mask]

    @cached_property
    def first_nonfinite(self) -> int | None:
        """Index of the first NaN/±Inf value, or None."""
        if self.all_finite:
            return None
        return int(np.flatnonzero(~self.finite_mask)[0])

    @cached_property
    def window(self) -> int:
        """Smoothing window: about 1/25 of the curve, odd, at least 1 (a 5-point epoch curve is not smoothed)."""
        width = max(1, len(self.finite_values) // 25)
        return width if width % 2 else width + 1

    @cached_property
    def smooth(self) -> np.ndarray:
        """Running median of the finite values: minibatch noise removed, steps and jumps kept."""
        values = self.finite_values
        if self.window <= 1 or len(values) < 3:
            return values.copy()
        return median_filter(values, size=self.window, mode="nearest")

    @cached_property
    def noise(self) -> float:
        """Robust standard deviation of the point-to-point noise around the smoothed curve. A short curve is not
        smoothed: its noise comes from second differences, which a steady trend or a gentle bend leaves near 0
        (successive differences would count the slope as noise), and whose median keeps one sharp turn, such as
        the bottom of a U, from counting. Below 6 second differences their median is too unsure: the larger of
        it and their root mean square is kept, which counts every second difference, a sharp turn included (so it
        errs high), but never the slope: a validation loss that falls for three epochs and rises for three is not
        noisy because it moved."""
        values = self.finite_values
        if len(values) < 3:
            return 0.0
        if self.window > 1:
            return robust_sigma(values - self.smooth)
        if len(values) < 5:
            return robust_sigma(np.diff(values) / math.sqrt(2))  # two draws per difference
        return second_difference_sigma(np.diff(values, 2))

    @cached_property
    def start_points(self) -> np.ndarray:
        """The first few finite values: where the curve starts (see :func:`first_points`)."""
        return first_points(self.finite_values)

    @cached_property
    def start_level(self) -> float:
        return float(np.median(self.start_points)) if len(self.finite_values) else math.nan

    def level_change(self) -> tuple[float, float]:
        """How much the curve moved from its first few points to its last 10% (medians), and the σ of that change
        that noise alone makes: a median of k points wanders about 1.25 σ/√k."""
        head, tail = self.start_points, self.tail()
        change = float(np.median(tail) - np.median(head))
        return change, MEDIAN_SE * self.noise * math.sqrt(1 / len(head) + 1 / len(tail))

    def tail(self, share: float = 0.1, at_least: int = 1) -> np.ndarray:
        count = max(at_least, int(len(self.finite_values) * share))
        return self.finite_values[-count:]

    @cached_property
    def start(self) -> float:
        """The level the curve starts at: its first value (the step-0 loss that chance is compared with)."""
        return float(self.finite_values[0]) if len(self.finite_values) else math.nan

    @cached_property
    def end(self) -> float:
        """The level the curve ends at: the median of its last tenth (robust to the last minibatch)."""
        return float(np.median(self.tail())) if len(self.finite_values) else math.nan

    @cached_property
    def best_index(self) -> int:
        """Index (into the finite values) of the lowest smoothed value."""
        return int(np.argmin(self.smooth))

    def step_at(self, finite_index: int) -> int:
        return int(self.finite_steps[finite_index])


def as_fraction(curve: Curve) -> np.ndarray | None:
    """An accuracy's finite values as fractions of 1 (a percentage divided by 100); None when the curve is not an
    accuracy at all (below 0 or above 100)."""
    values = curve.finite_values
    if not len(values) or values.min() < 0 or values.max() > 100:
        return None
    return values / 100 if values.max() > 1 + 1e-9 else values


def robust_sigma(residual: np.ndarray) -> float:
    """The standard deviation of Gaussian noise with the residuals' median absolute deviation."""
    return float(MAD_TO_SIGMA * np.median(np.abs(residual - np.median(residual))))


def trailing_median(values: np.ndarray, window: int) -> np.ndarray:
    """At each point, the median of the ``window`` points before it (the first point gets its own value): the level
    a jump is measured from. The point itself is left out, so a one-point jump cannot hide in its own baseline."""
    if len(values) == 0:
        return values.copy()
    if window <= 1:
        return np.r_[values[0], values[:-1]]
    inclusive = median_filter(values, size=window, origin=(window - 1) // 2, mode="nearest")
    before = np.r_[values[0], inclusive[:-1]]
    # the first points have fewer than ``window`` before them: their median is of those, not padded with the first
    head = min(window, len(values))
    before[1:head] = expanding_median(values[:head - 1])
    return before


def expanding_median(values: np.ndarray) -> np.ndarray:
    """The median of the first 1, 2, … n values, in O(n log n): a lower max-heap and an upper min-heap."""
    lower: list[float] = []  # negated
    upper: list[float] = []
    medians = np.empty(len(values))
    for index, value in enumerate(values.tolist()):
        heapq.heappush(lower, -heapq.heappushpop(upper, value))
        if len(lower) > len(upper):
            heapq.heappush(upper, -heapq.heappop(lower))
        medians[index] = upper[0] if len(upper) > len(lower) else (upper[0] - lower[0]) / 2
    return medians


def _read_only(array: np.ndarray) -> np.ndarray:
    """A curve's array, which may be a view of the run's table: no rule may write into it."""
    array.flags.writeable = False
    return array


# An excursion a curve makes this many times elsewhere is part of its noise, however rare a share of a long curve
# that is: 39 excursions beyond a 99.5th percentile of 7,760 per-batch losses are its heavy tail, not 39 spikes
RECURRING_EXCURSIONS = 3


def noise_reach(excursions: np.ndarray, around: slice, share: float = 0.005) -> float:
    """How far the curve's own noise reaches: the (1 − ``share``) quantile of ``excursions`` outside the event at
    ``around`` (on a curve long enough for that share to be more than RECURRING_EXCURSIONS points, the excursion
    it makes that many times), never below 0. Minibatch noise of a tiny batch is heavy-tailed (one misclassified
    example is 100× the median loss), so a jump is judged against the rare excursions the curve makes anyway, not
    only its MAD."""
    rest = np.r_[excursions[:around.start], excursions[around.stop:]]
    if not len(rest):
        return 0.0
    return max(float(np.quantile(rest, 1.0 - min(share, RECURRING_EXCURSIONS / len(rest)))), 0.0)


class RunCurves:
    """A run as rules see it: the main curve of each role, the class count and chance levels, all cached."""

    def __init__(self, run: Run):
        self.run = run
        self._cache: dict[str, Curve | None] = {}
        self._primary: dict[Role | str, str | None] = {}
        self._rows: dict[str, np.ndarray | slice] | None = None

    def curve(self, role: Role | str) -> Curve | None:
        """The main curve of ``role`` (the total loss rather than a component), or None when not logged."""
        if role not in self._primary:
            self._primary[role] = self.run.primary(role)
        return self.curve_of(self._primary[role])

    def curves(self, role: Role | str) -> list[Curve]:
        return [curve for tag in self.run.tags_with(role) if (curve := self.curve_of(tag)) is not None]

    def curve_of(self, tag: str | None) -> Curve | None:
        """The curve of ``tag``; a perplexity of a loss role is read as the loss it is the exponential of,
        ln(ppl), so it is judged like the loss (and against ln(vocabulary size)) on its own scale."""
        if tag is None:
            return None
        if tag not in self._cache:
            rows = self._rows_of_tag().get(tag)
            curve = None
            if rows is not None:
                values = _read_only(self._values[rows])
                role = self.run.roles[tag]
                if role in LOSS_ROLES and is_perplexity(tag):
                    with np.errstate(divide="ignore", invalid="ignore"):  # a perplexity ≤ 0 is no value: NaN
                        values = np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)
                curve = Curve(tag, role, _read_only(self._steps[rows]), values)
            self._cache[tag] = curve
        return self._cache[tag]

    def _rows_of_tag(self) -> dict[str, np.ndarray]:
        """Each tag's row positions, in step order, found in one pass (a mask per tag would scan every point
        once per rule that asks)."""
        if self._rows is None:
            tags = self.run.scalars["tag"].astype("category")
            codes = tags.cat.codes.to_numpy()
            # the builder lays each tag's rows out together, in step order: then each curve is a slice of the
            # table's columns (a view, not a copy); a table laid out otherwise is indexed through a sort
            together = len(codes) < 2 or bool((codes[1:] >= codes[:-1]).all())
            order = slice(None) if together else np.argsort(codes, kind="stable")
            # searched for in the codes' own (narrowest) integer type: another would widen every code to it first
            bounds = np.searchsorted(codes[order], np.arange(len(tags.cat.categories) + 1, dtype=codes.dtype)).tolist()
            self._rows = {
                tag: (slice(bounds[i], bounds[i + 1]) if together else order[bounds[i]:bounds[i + 1]])
                for i, tag in enumerate(tags.cat.categories) if bounds[i + 1] > bounds[i]
            }
            self._steps = self.run.scalars["step"].to_numpy()
            self._values = self.run.scalars["value"].to_numpy()
        return self._rows

    @cached_property
    def reinforcement_learning(self) -> bool:
        """Whether the run trains an agent: its tags name rewards, returns, episodes, a policy, a critic or a
        fitness. Its losses are then objectives of a policy and a value function, signed by design and growing with
        the returns, so they say nothing of progress; its reward does. Ray Tune's bookkeeping of every trial
        (timesteps_since_restore, episodes_total: counters it fills in whatever the trainable) says nothing."""
        return trains_an_agent(self.run.tags)

    @cached_property
    def detection(self) -> bool:
        """Whether the run trains an object detector: its tags name objectness (YOLO's obj and no-obj accuracies
        and losses) or boxes. A detector's loss sums box, objectness and class terms, so it has no cross-entropy
        level over its classes unless it names the class term itself."""
        return trains_a_detector(self.run.tags)

    @cached_property
    def configured_loss_words(self) -> frozenset[str]:
        """What the run's hyperparameters call its loss function (``loss_fn: CSCELoss()``, ``criterion:
        BCEWithLogitsLoss()``, ``loss: <function arcface_loss …>``), as lower-case words with a trailing "loss"
        cut off each (MSELoss → mse): the main loss is that function, whatever its tag calls it."""
        return frozenset(word.removesuffix("loss") for key, value in self.run.meta.hparams.items()
                         if isinstance(value, str) and set(tokens(str(key))) & LOSS_SETTING_WORDS
                         for word in re.findall(r"[a-z0-9]+", value.lower()))

    @cached_property
    def class_count(self):
        """The run's class count (:class:`curvedoc.classcount.ClassCount`): recorded, else read off its curves;
        None when neither says."""
        from curvedoc.classcount import class_count

        return class_count(self)

    @property
    def n_classes(self) -> int | None:
        return self.class_count.n if self.class_count else None

    @property
    def chance_loss(self) -> float | None:
        """Cross-entropy of a uniform guess over n classes, −log(1/n), when n is known."""
        return math.log(self.n_classes) if self.n_classes else None

    @property
    def chance_accuracy(self) -> float | None:
        return 1.0 / self.n_classes if self.n_classes else None


# Loss names that say the loss is not a cross-entropy over the run's n classes, so −log(1/n) is not its chance level.
NOT_CROSS_ENTROPY_WORDS = frozenset({
    "mse", "rmse", "mae", "l1", "l2", "huber", "regression", "recon", "reconstruction", "contrastive", "triplet",
    "dice", "kl", "elbo", "box", "bbox", "giou", "iou", "dfl", "obj", "reg", "penalty", "aux",
})
BINARY_LOSS_WORDS = frozenset({"bce", "bcewithlogits", "binary", "sigmoid", "multilabel"})
# Loss functions a run's settings may name whose start and level are not those of a cross-entropy over the classes:
# margin softmaxes (a scale s and a margin m start them far above ln n), a focal factor (below it), a cost matrix,
# quantiles, combinations of several.
NAMED_NOT_CROSS_ENTROPY = NOT_CROSS_ENTROPY_WORDS | {
    "arcface", "cosface", "sphereface", "amsoftmax", "margin", "focal", "csce", "quantile", "composite", "hinge",
    "smoothl1",
}
# The words of a setting that names the loss function (loss_fn, loss_func, criterion, objective, loss_type …)
LOSS_SETTING_WORDS = frozenset({"loss", "criterion", "objective"})
# The counters Ray Tune adds to every trial's results (and so to its MLflow or CSV log), RL or not
RAY_TUNE_COUNTERS = frozenset({"timesteps_total", "timesteps_since_restore", "episodes_total", "episodes_this_iter"})
DETECTION_WORDS = frozenset({"obj", "noobj", "objectness", "box", "bbox"})
CLASS_TERM_WORDS = frozenset({"cls", "class", "classification"})
REINFORCEMENT_WORDS = frozenset({
    "reward", "rewards", "rew", "return", "returns", "episode", "episodes", "episodic", "policy", "actor", "critic",
    "advantage", "rollout", "timesteps",
    # an ε-greedy agent's exploration schedule, logged beside its loss (a DQN's epsilon, exploration_rate)
    "epsilon", "exploration",
    # an evolved agent's reward, its population's fitness (neuroevolution: NEAT, a genetic algorithm's generations)
    "fitness",
})


def trains_a_detector(tags: Iterable[str]) -> bool:
    """Whether tags of these names belong to an object detector's run: they name objectness or boxes (see
    :attr:`RunCurves.detection`)."""
    return any(DETECTION_WORDS & set(tokens(tag)) for tag in tags)


def trains_an_agent(tags: Iterable[str]) -> bool:
    """Whether tags of these names belong to an agent's run: they name rewards, returns, episodes, a policy, a critic
    or a fitness (see :attr:`RunCurves.reinforcement_learning`)."""
    return any(REINFORCEMENT_WORDS & set(tokens(tag)) for tag in tags if tag not in RAY_TUNE_COUNTERS)


def chance_loss_of(run: RunCurves, curve: Curve) -> float | None:
    """−log(1/n) when that is ``curve``'s chance level: n is known (and not read off this curve alone) and the tag
    does not name another kind of loss (MSE, contrastive, a box loss; a per-label binary cross-entropy, whose
    chance level is log 2, unless n = 2), nor a detector's loss other than its class term."""
    words = set(tokens(curve.tag))
    # the settings may name the main loss (not a term of it) as another kind of loss than a cross-entropy
    named = set() if names_a_term(curve.tag) else run.configured_loss_words
    if (run.chance_loss is None or words & NOT_CROSS_ENTROPY_WORDS or named & NAMED_NOT_CROSS_ENTROPY
            or not run.class_count.yardstick_for(curve.tag) or is_sum_of_terms(run, curve)
            or (run.detection and not words & CLASS_TERM_WORDS)):
        return None
    if len(curve.finite_values) and curve.finite_values.min() < 0:
        return None  # a cross-entropy cannot go below 0 (that is CD102's finding)
    if (words | run.configured_loss_words) & BINARY_LOSS_WORDS and run.n_classes != 2:
        return None
    return run.chance_loss


def is_sum_of_terms(run: RunCurves, curve: Curve) -> bool:
    """Whether the loss is a sum of several logged terms (Detectron2's total_loss over loss_cls, loss_box_reg,
    …; a VAE's loss over recon and KL): its level is no cross-entropy, whatever one of its terms is."""
    if names_a_total(curve.tag):
        return True
    terms = [tag for tag in run.run.tags_with(curve.role) if tag != curve.tag and names_a_term(tag)]
    return not names_a_term(curve.tag) and len(terms) >= 2


def terms_beside(run: RunCurves, curve: Curve) -> list[Curve]:
    """The logged terms of the multi-term loss ``curve`` is one term of (itself among them), or [] when it is no
    term of one (a loss of its own, or a total)."""
    if not names_a_term(curve.tag):
        return []
    terms = [other for other in run.curves(curve.role) if names_a_term(other.tag) and len(other.finite_values)]
    return terms if len(terms) >= 2 else []


def chance_as_yardstick_of_height(run: RunCurves, curve: Curve) -> float | None:
    """−log(1/n) as the level a loss is judged high against ("ends at 40% of chance"): a class count's chance,
    never a vocabulary's. Text keeps most of a language model's uncertainty (a word model ends near half of
    ln(vocabulary) and is fine), so only classes say how low a loss should get."""
    if run.run.meta.n_classes_kind == VOCABULARY and not (run.class_count and run.class_count.inferred):
        return None
    return chance_loss_of(run, curve)


def chance_accuracy_of(run: RunCurves, curve: Curve) -> float | None:
    """1/n, when n is known and was not read off this accuracy curve alone."""
    if run.chance_accuracy is None or not run.class_count.yardstick_for(curve.tag):
        return None
    return run.chance_accuracy


def chance_accuracy_in_units(run: RunCurves, curve: Curve) -> float | None:
    """:func:`chance_accuracy_of` in the accuracy's own unit: a fraction, or a percentage."""
    fractions = as_fraction(curve)
    if fractions is None or (chance := chance_accuracy_of(run, curve)) is None:
        return None
    return chance * (float(curve.finite_values.max() / fractions.max()) if fractions.max() > 0 else 1.0)


def first_point_share(curve: Curve) -> float:
    """How far into the logged run the curve's first finite point lies, as a share of its last step: 0 when it is
    logged at step 0, about 1/E when the first value is the mean of the first of E epochs."""
    steps = curve.finite_steps
    if not len(steps) or steps[-1] <= 0:
        return 0.0
    return float(max(steps[0], 0) / steps[-1])


def trend_z(curve: Curve) -> float:
    """Spearman rank correlation of the finite values with their order, scaled by √(N−1): about N(0, 1) for a
    curve that is noise around a constant, strongly negative for one that keeps falling. Rank-based, so heavy
    minibatch noise and outliers neither hide nor fake a trend."""
    return rank_trend_z(curve.finite_values)


# Up to this many points ρ·√(N−1) cannot reach 3 (seven points that only ever rise give 2.45, though chance orders
# them so once in 7! = 5,040): their trend is read off the exact distribution of their inversions instead.
EXACT_TREND_POINTS = 12


def rank_trend_z(values: np.ndarray) -> float:
    """:func:`trend_z` of finite values in logging order; on a few distinct values, the normal deviate of the exact
    chance that a trendless curve orders them at least this steadily (Kendall's test), which the approximation
    understates there."""
    if len(values) < 3:
        return 0.0
    if len(values) <= EXACT_TREND_POINTS and len(np.unique(values)) == len(values):
        return _exact_trend_z(values)
    ranks = mean_ranks(values)  # tied values share their mean rank: a constant curve has no trend
    order = np.arange(len(values), dtype=float)
    spread = ranks.std() * order.std()
    rho = float(np.mean((ranks - ranks.mean()) * (order - order.mean())) / spread) if spread else 0.0
    return rho * math.sqrt(len(values) - 1)


def _exact_trend_z(values: np.ndarray) -> float:
    """The one-sided normal deviate of the share of orderings of ``values`` (distinct) with at most as many
    inversions as theirs (a rise: fewer than half the pairs out of order), or at least as many (a fall)."""
    pairs = len(values) * (len(values) - 1) // 2
    inversions = int(np.triu(values[:, None] > values[None, :], 1).sum())
    counts = _inversion_counts(len(values))
    rising = 2 * inversions <= pairs
    tail = counts[:inversions + 1].sum() if rising else counts[inversions:].sum()
    z = NormalDist().inv_cdf(1 - min(0.5, tail / counts.sum()))
    return z if rising else -z


@cache
def _inversion_counts(n: int) -> np.ndarray:
    """How many orderings of n distinct values have k inversions, k = 0 … n(n−1)/2 (the Mahonian numbers): the
    n-th value, placed anywhere among the others, adds 0 to n−1 of them."""
    counts = np.ones(1)
    for size in range(2, n + 1):
        counts = np.convolve(counts, np.ones(size))
    return counts


def mean_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..N of ``values``, ties sharing their mean rank (scipy.stats.rankdata's default), in numpy: importing
    scipy.stats for this alone cost every process a third of a second."""
    order = np.argsort(values, kind="mergesort")
    position = np.empty(len(values), dtype=np.intp)
    position[order] = np.arange(len(values))
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts)[position]  # 1-based index of each value's group of equal values
    bounds = np.r_[np.flatnonzero(starts), len(values)]
    return 0.5 * (bounds[group] + bounds[group - 1] + 1)


def first_logged(run: RunCurves, *roles: Role) -> Curve | None:
    """The main curve of the first of ``roles`` that has a finite value (the train loss, else the val loss, ...)."""
    for role in roles:
        curve = run.curve(role)
        if curve is not None and len(curve.finite_values):
            return curve
    return None
