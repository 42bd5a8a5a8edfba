"""Unstable training: a loss that swings wildly without settling, one that suddenly jumps, one that climbs away.

Every loss curve of the run is judged — train, validation and test losses and each term of a multi-term loss —
because real runs blow up on the validation curve or on one term while the train total stays smooth; a finding
names its curve, and an event a component shares with its total is reported once, on the total. Each curve is
read only up to its first NaN/Inf: the jump into NaN is CD101's finding, not a spike or a swing.

Minibatch noise scales with the loss, so a jump is measured as a ratio to the level before it and against the
noise of the points just before it, not the noise of the whole run (a loss that fell 100× is far quieter at its
end than at its start). An epoch-level log (10–30 points, each an average) is judged too: its few points are
quiet, so a jump or a zig-zag on it stands out from its own bends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from curvedoc.features import (LOSS_ROLES, MAD_TO_SIGMA, MEDIAN_SE, Curve, RunCurves, counted, fmt, median_filter,
                               noise_reach, rank_trend_z, robust_sigma, terms_beside, trailing_median)
from curvedoc.roles import AVERAGE_WORDS, Role, names_a_term, split_of, tokens
from curvedoc.rules import ERROR, JUMP, WARNING, WHOLE_RUN, Found, Limits, Threshold, rule, shipped_limits
from curvedoc.rules.generalization import overfitting

INTERDECILE_TO_SIGMA = 2.563  # the 10th–90th percentile range of a Gaussian, in σ
# A loss whose swings (σ) reach this share of its level swings wildly: it oscillates, and no other notion of its
# level (flat, a plateau) applies to it.
SWING_VS_LEVEL = 0.5
# Swings that reach this share of the progress a loss made rival what was learned.
SWING_VS_PROGRESS = 0.4
# A baseline of at least this many points before a jump: on an epoch log (no smoothing) one previous point is
# too easily a low outlier of its own.
MIN_BASELINE = 3
# An agent's reward of each episode back at its level within this many points of a drop (the span of the 3-point
# median a drop is found on) dipped for a few episodes; see _collapse_of. A reward averaged over episodes (SB3's
# ep_rew_mean, a mean over the last 100) cannot, so its dip is judged as any score's.
BRIEF_DIP = 3
AVERAGED_WORDS = AVERAGE_WORDS | {"smoothed", "running", "moving"}
# Scores whose perfect value is 1 however far below 0 they go: R², a correlation, Cohen's kappa, Matthews' MCC
COEFFICIENT_WORDS = frozenset({"r2", "rsquared", "pearson", "spearman", "correlation", "corr", "pcc", "srcc", "plcc",
                               "kappa", "mcc"})
# A preference-optimisation run's implicit rewards (DPO, KTO): of the model's choices, not of an agent's episodes
PREFERENCE_WORDS = frozenset({"chosen", "rejected", "margins"})
NO_PROGRESS = 0.95  # a loss that never got below this share of its first value had made no progress yet
SHORT_CURVE = 50  # fewer points than this are not smoothed (an epoch log): their noise comes from their bends
# Jumps on more than this share of a curve's points are a second mode of the loss, not spikes on it.
SEPARATED_SHARE = 0.05
# The noise at a point is read off at least this many points before it: enough for a median absolute deviation.
LOCAL_NOISE_POINTS = 20


def loss_curve(run: RunCurves) -> Curve | None:
    """The main loss: train loss, else validation loss (an eval-only log)."""
    return run.curve(Role.TRAIN_LOSS) or run.curve(Role.VAL_LOSS)


def judged_curves(run: RunCurves, min_points: float, roles: tuple[Role, ...] = LOSS_ROLES) -> list[Curve]:
    """Every non-negative curve of ``roles`` (the losses) with at least ``min_points`` finite points before its
    first NaN/Inf, main curves first. None of an agent's run: a policy's and a value function's losses jump
    whenever the returns do."""
    if run.reinforcement_learning:
        return []
    found = []
    for role in roles:
        primary = run.curve(role)
        curves = run.curves(role)
        curves.sort(key=lambda curve: curve is not primary)
        # a loss that goes below zero (signed by design, or CD102's finding) has no level to measure jumps and
        # swings against as a ratio
        found += [curve for curve in curves if len(values := finite_prefix(curve)) >= min_points and values.min() >= 0]
    return found


def finite_prefix(curve: Curve) -> np.ndarray:
    """The values before the first NaN/Inf: after it the curve describes a broken run, not a training one."""
    return curve.values[:curve.first_nonfinite] if curve.first_nonfinite is not None else curve.values


def local_noise(values: np.ndarray, window: int) -> np.ndarray:
    """Robust σ of the point-to-point noise at each point, read off the points before it: minibatch noise scales
    with the loss, so a loss that fell 100× is far less noisy at its end than at its start, and a jump is judged
    against the noise where it happens. Around a running median on a long curve; on a short one (an epoch log)
    from its second differences over the whole curve, which a steady trend or a gentle bend leaves near 0, less
    the three that involve the point itself: on 7 epochs a jump would otherwise make most of its own noise."""
    if len(values) < 4:
        return np.zeros(len(values))
    if len(values) < SHORT_CURVE:
        second = np.diff(values, 2) / math.sqrt(6)
        sigmas = np.empty(len(values))
        for index in range(len(values)):
            # second difference k spans points k, k+1 and k+2
            apart = np.r_[second[:max(0, index - 2)], second[index + 1:]]
            # on a curve too short to leave two of them, the other points' spread about their median (a trend
            # among them only widens it): the point's own jump must not be its noise there either
            sigmas[index] = robust_sigma(apart) if len(apart) >= 2 else robust_sigma(np.delete(values, index))
        return sigmas
    residual = np.abs(values - median_filter(values, size=window | 1, mode="nearest"))
    local = MAD_TO_SIGMA * trailing_median(residual, max(LOCAL_NOISE_POINTS, 5 * window))
    local[:LOCAL_NOISE_POINTS] = MAD_TO_SIGMA * float(np.median(residual[:2 * LOCAL_NOISE_POINTS]))
    return local


def baseline_window(curve: Curve) -> int:
    return max(curve.window, MIN_BASELINE if len(curve.finite_values) < SHORT_CURVE else 1)


def spread(values: np.ndarray) -> float:
    """How far the values swing around their straight-line trend, as a Gaussian σ from the 10th–90th percentile
    range: a rare hard batch (2% of a tiny-batch run) does not move it, swings on one step in ten or more do."""
    if len(values) < 3:
        return 0.0
    positions = np.arange(len(values))
    return _interdecile_sigma(values - np.polyval(np.polyfit(positions, values, 1), positions))


def spread_around_descent(values: np.ndarray) -> float:
    """How far the values move against the closest course that never rises (isotonic regression), as a Gaussian σ
    from the 10th–90th percentile range of what that course leaves: a decay of any shape leaves nothing, a zig-zag
    its swings."""
    # imported on first use, as features.median_filter does: an audit served from its cache never needs scipy
    from scipy.optimize import isotonic_regression
    return _interdecile_sigma(values - isotonic_regression(values, increasing=False).x)


def _interdecile_sigma(residual: np.ndarray) -> float:
    low, high = np.percentile(residual, [10, 90])
    return float((high - low) / INTERDECILE_TO_SIGMA)


def alternation(values: np.ndarray) -> float:
    """Share of successive changes that reverse the previous one: about 2/3 for noise, near 0 for a curve that
    keeps falling, near 1 for a zig-zag."""
    changes = np.sign(np.diff(values))
    changes = changes[changes != 0]
    return float(np.mean(changes[1:] != changes[:-1])) if len(changes) > 1 else 0.0


def _lr_note(run: RunCurves, first_step: int) -> list[str]:
    lr = run.curve(Role.LR)
    if lr is None or not len(lr.finite_values):
        return []
    late = lr.finite_values[lr.finite_steps >= first_step]
    return [f"{lr.tag} in that part: {fmt(float(np.median(late)))}"] if len(late) else []


def once_per_event(found: list[tuple[Curve, Found]], window_steps: float, any_role: bool = False) -> list[Found]:
    """One finding per event: a component of a loss (or a second curve of one role, or of any role when
    ``any_role``) that shows the same event within ``window_steps`` of a curve already reported is named in that
    finding's evidence instead."""
    kept: list[tuple[Curve, Found]] = []
    for curve, item in found:
        twin = next((k for c, k in kept if (any_role or c.role == curve.role)
                     and abs(_event_step(k) - _event_step(item)) <= window_steps), None)
        if twin is None:
            kept.append((curve, item))
        else:
            twin.evidence.append(f"{curve.tag} shows it too: {item.title}")
            twin.tags.append(curve.tag)
    return [item for _, item in kept]


def _event_step(item: Found) -> int:
    return item.step if item.step is not None else (item.step_range or (0, 0))[0]


def event_window(run: RunCurves) -> float:
    """Steps within which two curves' events are one event: a twentieth of the run."""
    main = loss_curve(run)
    if main is None or len(main.finite_steps) < 2:
        return 0.0
    return float(main.finite_steps[-1] - main.finite_steps[0]) / 20


@rule(
    "CD401", "loss-oscillation", symptom="oscillation", severity=WARNING, live=WHOLE_RUN,
    causes=(
        "learning rate too high: each step overshoots the minimum",
        "batch too small for the learning rate (gradient noise larger than the signal)",
        "missing or broken input normalisation (badly scaled features make the loss surface steep)",
    ),
    check="drop the learning rate 10× and rerun the same steps: the swings must shrink; then try a 4× larger batch",
    thresholds={
        "min_late_points": Threshold(20, "fewest finite points the late part of a per-step curve needs before its "
                                         "swings are judged"),
        "min_short_points": Threshold(6, "fewest points of a short (epoch-level) curve before its swings are "
                                         "judged: over its last half, or all of it when the half is shorter"),
        "late_share": Threshold(1 / 3, "share of the run, at its end, that must still be swinging"),
        "swing_vs_level": Threshold(SWING_VS_LEVEL, "swing σ of the late part (10th–90th percentile range around "
                                                    "its straight trend, or on a short curve around its closest "
                                                    "never-rising course when that leaves less) as a share of its "
                                                    "median level, from which the loss counts as swinging"),
        "swing_vs_progress": Threshold(SWING_VS_PROGRESS, "swing σ of the late part as a share of the drop from the "
                                                          "first values to the late median level, from which the "
                                                          "swings rival what was learned"),
        "swing_vs_scale": Threshold(0.2, "swing σ of the late part as a share of the loss's natural scale (its "
                                         "first values, or chance −log(1/n) when larger), from which the swings "
                                         "are wild rather than small wobbles of a low loss"),
        "zigzag": Threshold(0.75, "a short curve swings when at least this share of its successive changes "
                                  "reverse the previous one (noise reverses about 2/3 of them, a trend few)"),
        "held_out_zigzag": Threshold(0.5, "a short held-out curve swings when at least this share of its "
                                          "successive changes reverse the previous one: it averages the same "
                                          "examples at every evaluation, so reversals at the rate noise has "
                                          "(about 2/3) are the weights swinging; fewer than half are a trend or "
                                          "a lone excursion"),
        "held_out_swing_vs_level": Threshold(0.15, "for a held-out curve (one that zig-zags, when short): its swing "
                                                   "σ as a share of its median level, from which it swings. It "
                                                   "averages the same examples at every evaluation, so only the "
                                                   "weights move it (a train curve's epochs see other batches and "
                                                   "augmentations), and its swing then needs no share of the loss's "
                                                   "scale either"),
        "diverged_factor": Threshold(3.0, "a late level this many times the start level is divergence, not "
                                          "oscillation, and is left to the spike and NaN rules"),
    },
)
def oscillation(run: RunCurves, limits: Limits):
    """A loss curve (train, validation, test or one term) still swings wildly at the end of the run: around its trend
    there, its swings (a σ from the 10th–90th percentile range, so one rare hard batch does not count) are at least half
    its median level, at least 40% of the progress made since the start, and at least a fifth of the loss's scale (its
    first value or chance, whichever is larger), around a level above 0 (a loss at exactly 0 most of the time, a term
    switched off or a sample already fitted, jumps off it instead). A per-step curve is judged over its last third; a
    short epoch-level curve (an evaluation every epoch: averages, so its swings are real) over its last half, where it
    must also zig-zag (a held-out one reverse its direction at least as often as it keeps it), and its swings are
    what its closest never-rising course leaves when that is less than a straight trend does (ten evaluations coming
    down 0.35 -> 0.19 -> 0.14 -> 0.15 -> 0.10 bend, they do not swing); a held-out curve, an average over the same
    examples at every evaluation that only the weights move, swings from a smaller share of its level (15%), whatever
    the loss's scale and however many evaluations. A noisy tiny-batch run that converges swings a lot relative to its
    low final level, but little relative to its progress, and does not fire. A GAN's per-step train terms (its
    generator's reconstruction losses) are not judged: the adversarial game pulls every generator step as well, and
    those points are snapshots of a batch (one image, at CycleGAN's and pix2pix's default) whose spread is the
    data's; averaged over epochs they are. A held-out curve that CD501 finds rising for good after its best is
    overfitting: its swings ride on that rise (a small validation set's scatter grows with its loss), and the rise,
    not the scatter, is what to act on."""
    found = [(curve, item) for curve in judged_curves(run, limits["min_short_points"])
             if not gan_snapshots(run, curve) and (item := _swinging(run, curve, limits)) is not None]
    if any(curve.role != Role.TRAIN_LOSS for curve, _ in found):
        # CD501 is asked only about a held-out curve that swings: most runs have none, and need no second reading
        overfit = overfitting(run, shipped_limits("CD501"))
        rising = set(overfit.tags) if overfit is not None else set()
        found = [(curve, item) for curve, item in found if curve.role == Role.TRAIN_LOSS or curve.tag not in rising]
    # a run swings as a whole: its train and held-out curves swinging are one finding
    return once_per_event(found, math.inf, any_role=True)


def _swinging(run: RunCurves, curve: Curve, limits: Limits) -> Found | None:
    values = finite_prefix(curve)
    if _jumped_for_good(curve):
        return None  # the late part is a jump and its slow return, which CD402 reports: not swings
    short = len(values) * limits["late_share"] < limits["min_late_points"]
    late_from = int(len(values) * (0.5 if short else 1 - limits["late_share"]))
    if short and len(values) - late_from < limits["min_short_points"]:
        late_from = 0
    late = values[late_from:]
    if len(late) < (limits["min_short_points"] if short else limits["min_late_points"]):
        return None
    held_out = curve.role in (Role.VAL_LOSS, Role.TEST_LOSS)
    if short and alternation(late) < limits["held_out_zigzag" if held_out else "zigzag"]:
        return None
    start = float(np.median(values[:3]))
    # the typical level, as a curve's end is read everywhere: the swings themselves pull a mean up (minibatch
    # losses of an LR too high run from 1e-4 to 4.4 around a median of 1.2)
    level = float(np.median(late))
    # A few evaluations that still come down do so in a curve, not a line (0.35 -> 0.19 -> 0.14 -> ... -> 0.09): the
    # bend a straight trend leaves in its residuals is no swing, so a short curve swings only as far as it moves
    # against its closest never-rising course as well
    swing = min(spread(late), spread_around_descent(late)) if short else spread(late)
    progress = start - level
    if not math.isfinite(swing) or swing <= 0 or level > limits["diverged_factor"] * abs(start):
        return None  # values near the float limit, or a loss that diverged: not a swing
    if level <= 0:
        return None  # a loss at exactly 0 most of the time (a term switched off, a sample it already fits) jumps off it
    scale = max(abs(start), run.chance_loss or 0.0)
    # an evaluation averages its whole split however many of them the run logs (120 epochs or 6)
    if held_out:
        wild = swing >= limits["held_out_swing_vs_level"] * abs(level)
    else:
        wild = swing >= limits["swing_vs_level"] * abs(level) and swing >= limits["swing_vs_scale"] * scale
    if not wild or swing < limits["swing_vs_progress"] * max(progress, 0.0):
        return None
    first_step, last_step = int(curve.steps[late_from]), int(curve.steps[len(values) - 1])
    progress_note = (f"the swings are {swing / progress:.2g}× that progress" if progress > 0
                     else "the loss made no progress since the start")
    low, high = np.percentile(late, [10, 90])
    part = "of its points" if late_from == 0 else f"{1 - late_from / len(values):.0%} of the run"
    evidence = [f"steps {first_step}–{last_step}: swing σ = {fmt(swing)} around the trend, median level "
                f"{fmt(level)} ({swing / abs(level) if level else math.inf:.0%} of the level); 10th–90th percentile "
                f"{fmt(low)} … {fmt(high)}",
                f"first values {fmt(start)} → late median {fmt(level)}: {progress_note}"]
    if short:
        evidence.append(f"{alternation(late):.0%} of its successive changes reverse the previous one: "
                        + " → ".join(fmt(value) for value in late[:8]) + (" …" if len(late) > 8 else ""))
    return Found(f"{curve.tag} keeps swinging through the last {part}", [curve.tag],
                 evidence + _lr_note(run, first_step), step_range=(first_step, last_step))


def gan_snapshots(run: RunCurves, curve: Curve) -> bool:
    """Whether ``curve`` is a GAN's per-step generator term: each point a snapshot of one batch (one image, at
    CycleGAN's and pix2pix's default), whose spread is the data's and whose one high print is one hard image."""
    return (bool(run.curves(Role.ADVERSARIAL)) and curve.role == Role.TRAIN_LOSS
            and len(finite_prefix(curve)) >= SHORT_CURVE)


def share_of_terms(run: RunCurves, curve: Curve) -> float:
    """For one term of a multi-term loss, the level of the loss it is part of (the sum of the terms' medians), so
    that its jumps are weighed against what they add to it; 0 for any other curve."""
    return float(sum(np.median(term.finite_values) for term in terms_beside(run, curve)))


def _jumped_for_good(curve: Curve) -> bool:
    """Whether CD402, at its default thresholds, finds on ``curve`` a jump that never came back."""
    limits = shipped_limits("CD402")
    values = finite_prefix(curve)
    window = baseline_window(curve)
    jump = _highest_jump(values, window, local_noise(values, window), limits, limits["lasting_size"])
    return jump is not None and jump.recovered is None


@dataclass
class OtherJump:
    """A further jump event of the same curve: where it starts, its highest point and how far above the level
    before it, and the first index after that point back at that level (None: not by the end)."""

    index: int
    peak: int
    size: float
    recovered: int | None


@dataclass
class Jump:
    """The highest jump of a curve above the running median of the points before it."""

    index: int
    rise: float
    baseline: float
    sigma: float  # the noise before it
    reach: float  # how far the curve's own noise reaches elsewhere (its rare excursions)
    reach_apart: bool  # that reach leaves out the curve's other jumps, which stand far beyond it
    recovered: int | None  # first index back at the pre-jump level
    others: list[OtherJump]  # every other jump event that passes the same tests, in step order


def _highest_jump(values: np.ndarray, window: int, sigma: np.ndarray, limits: Limits, min_size: float,
                  from_the_start: bool = False) -> Jump | None:
    """The highest of the rises of ``values`` that are jumps by their size (over the running median, its noise and
    the progress made: see ``spike``), when it also stands beyond the curve's rare excursions elsewhere;
    ``from_the_start``: a curve logged from its first step, whose blow-up before any progress counts too."""
    baseline = trailing_median(values, window)
    rise = values - baseline
    rise[0] = 0.0  # the first point has nothing before it to jump from
    smooth = median_filter(values, size=window | 1, mode="nearest") if window > 1 else values

    def back_at_level(index: int) -> int | None:
        back = np.flatnonzero(smooth[index + 1:] <= baseline[index] + limits["recovered_sigmas"] * sigma[index])
        return int(back[0]) + index + 1 if len(back) else None

    progress_before = values[0] - baseline
    # A jump undoes a good share of the progress made, or, before the loss ever got below its start and from a
    # level still about it, leaves the start itself far behind (a warmup that blows the loss up from 4.6 to 20
    # right away; an oscillating loss has dipped below its start by then, a diverging one left it long before).
    # Before a few points have set that start, one first point is all it is, and a first batch's loss is as noisy
    # as any: 0.61 then 1.15 and 1.12 is where the loss starts, and only leaving it diverged_factor times behind
    # is a blow-up
    lowest_before = np.minimum.accumulate(np.r_[values[0], values[:-1]])
    undoes = ((progress_before > 0) & (rise >= limits["min_undone"] * progress_before)) | (
        from_the_start & (values >= min_size * values[0]) & (lowest_before >= NO_PROGRESS * values[0])
        & (baseline <= limits["lasting_size"] * values[0])
        & ((np.arange(len(values)) >= MIN_BASELINE) | (values >= limits["diverged_factor"] * values[0])))
    sized = ((rise > 0) & (rise >= (min_size - 1) * np.abs(baseline)) & (rise >= limits["min_sigmas"] * sigma)
             & undoes)
    if not sized.any():
        return None
    # the highest rise that is a jump by its size: a higher one over a higher running median may be a smaller share
    # of it (a reward's long climb leaves a low running median behind its collapse)
    peak = int(np.flatnonzero(sized)[np.argmax(rise[sized])])
    recovered = back_at_level(peak)
    event = slice(max(0, peak - window), max(peak + window + 1, recovered or len(values)))
    reach = noise_reach(rise, event)
    reach_apart = (_reach_below_jumps(rise, sized, event, limits["beyond_noise"])
                   if rise[peak] < limits["beyond_noise"] * reach else None)
    reach = reach if reach_apart is None else reach_apart
    is_jump = sized & (rise >= limits["beyond_noise"] * reach)
    if not is_jump[peak]:
        return None
    indices = np.flatnonzero(is_jump)
    # jumps less than a window apart are one event: its highest point, and the level after that point
    apart = np.diff(indices) > window
    starts, ends = indices[np.r_[True, apart]], indices[np.r_[apart, True]]
    others = []
    for start, end in zip(starts, ends, strict=True):
        if start < event.stop and end >= event.start:
            continue  # the highest jump's own event
        highest = int(start) + int(np.argmax(values[start:end + 1]))
        size = float(values[highest] / baseline[start]) if baseline[start] > 0 else math.inf
        others.append(OtherJump(int(start), highest, size, back_at_level(highest)))
    return Jump(peak, float(rise[peak]), float(baseline[peak]), float(sigma[peak]), reach, reach_apart is not None,
                recovered, others)


def _reach_below_jumps(rise: np.ndarray, sized: np.ndarray, event: slice, factor: float) -> float | None:
    """How far the curve's noise reaches once its other jumps are set aside, when those jumps are few (at most
    SEPARATED_SHARE of the points) and every one of them stands ``factor`` times beyond it: a clean loss that
    leaps 40-90x on eight single batches has eight spikes, whereas a tiny batch's heavy-tailed noise fills the
    whole range up to its largest excursions and leaves no such gap (None then)."""
    outside = np.ones(len(rise), dtype=bool)
    outside[event] = False
    others = sized & outside
    if not others.any() or sized.sum() > SEPARATED_SHARE * len(rise):
        return None
    bulk_reach = noise_reach(rise[outside & ~sized], slice(0, 0))
    return bulk_reach if rise[others].min() >= factor * bulk_reach else None


# An agent's reward that collapses: the policy, not one batch of data, went wrong
POLICY_COLLAPSE_CAUSES = (
    ("a policy update too large for the data it was computed from (learning rate or PPO clip range too high): the "
     "policy jumps to a worse one, and the episodes it then collects keep it there"),
    "the policy's entropy collapsed (too little exploration) onto an action that stopped paying",
    "the environment or the reward changed under the agent (a curriculum stage, a new level, a rescaled reward)",
    ("an off-policy agent's replay buffer filled with its own recent bad episodes, or a target network updated too "
     "often"),
)
POLICY_COLLAPSE_CHECK = ("plot approx_kl, the clip fraction and the entropy around that step; evaluate the checkpoints "
                         "before and after it on the same seeds, and rerun from the earlier one with half the learning "
                         "rate (or clip range)")


@rule(
    "CD402", "loss-spike", symptom="spike", severity=WARNING, live=JUMP,
    causes=(
        "a corrupt or mislabelled example (or an unnormalised file) in that batch",
        "learning-rate warmup ending too high, or a schedule jump at that step",
        "an exploding gradient without clipping",
    ),
    check="log the batch (indices, input min/max, labels) at the spike step and recompute its loss; then do what "
          "large runs do: restart from the checkpoint ~100 steps before it, skip the batches that preceded it, and "
          "lower the LR or add gradient clipping (clip_grad_norm_ 1.0)",
    thresholds={
        "min_points": Threshold(5, "fewest finite loss points before jumps are judged"),
        "single_point_size": Threshold(10.0, "a jump of one logged point of a per-step curve must reach this many "
                                             "times the running median before it: one hard minibatch makes smaller "
                                             "ones"),
        "single_average_size": Threshold(2.0, "the same for one point of a short (epoch-level) curve, whose points "
                                              "are averages over many batches"),
        "lasting_size": Threshold(1.5, "a jump that lasts two or more logged points must reach this many times "
                                       "the running median before it"),
        "min_sigmas": Threshold(6.0, "a spike rises at least this many noise σ above the running median, σ being "
                                     "the noise of the points before it (noise scales with the loss)"),
        "beyond_noise": Threshold(4.0, "a spike rises at least this many times higher than the curve's own rare "
                                       "excursions elsewhere (their 99.5th percentile): heavy-tailed tiny-batch "
                                       "noise is not a spike"),
        "min_undone": Threshold(0.25, "a spike undoes at least this share of the progress made from the first "
                                      "value to the level before the spike"),
        "recovered_sigmas": Threshold(2.0, "the loss counts as recovered once its running median is back within "
                                           "this many noise σ of the pre-spike level"),
        "diverged_factor": Threshold(3.0, "a loss that fell and ends this many times above its first value has "
                                          "jumped away for good (divergence without NaN)"),
        "drift_undone": Threshold(0.1, "a train loss that climbs steadily from its lowest level to end "
                                       "diverged_factor times above it has come apart when the climb undoes at "
                                       "least this share of the progress from its start to that lowest level"),
        "break_share": Threshold(0.5, "a held-out loss diverges when at least this share of its climb (on a log "
                                      "scale) happened within a tenth of its evaluations"),
        "given_back": Threshold(0.5, "an agent's reward (a running median over the curve's window) that falls "
                                     "from the best level it reached by this share of its gain since the start and "
                                     "of that level's magnitude collapsed"),
        "below_start": Threshold(0.5, "an agent's reward ending this share of its start's magnitude below its start "
                                      "(medians of the first 3 points and of the last tenth) collapsed"),
    },
)
def spike(run: RunCurves, limits: Limits):
    """A loss curve (train, validation, test, one term, or a GAN's adversarial term, which otherwise hovers)
    falls, then suddenly jumps far above the running median of the points before it: by many noise σ, well
    beyond the rare excursions the curve's own minibatch noise makes elsewhere, undoing a good part of the
    progress made: one logged point must jump 10× the level before it
    (2× on a short epoch-level curve, whose points are averages; not on a few single-batch losses, such as
    Lightning's ``*_step`` metrics; not at all on a GAN's per-step generator terms, snapshots of one image at
    CycleGAN's default), a jump lasting two or more points 1.5×, and
    either must stand out from the noise just before it; a loss whose level before the jump is exactly 0 (a sample
    fitted outright) has no level to jump from. A loss that fell, then climbed to end several times
    above its first value without turning NaN is a spike that never recovered, from the step it last stood at its
    start — on a train loss however it climbs, on a validation or test loss only when it broke away in a few
    evaluations (a steady climb there is overfitting's shape); so is the run's train loss that settled, then
    climbed steadily (a rank trend) to end several times above its lowest level, undoing a tenth of its progress
    or more; reported beside CD701's gradient explosion when a
    norm grew with it (the explosion is the cause, the climb what it did to the run). Reports the step, the size
    (×), whether and when the loss came back to its pre-spike level, and further spikes. A higher-is-better score
    (a reward, mAP; not a training-split minibatch score beside a train loss) is read the other way up: a sudden
    collapse after it had improved, measured on its shortfall (1 − score for a score out of 1 or 100, the reward
    itself negated otherwise); an agent's reward also when it ends far below where the untrained policy began, or
    when its running median gives back most of the level it had reached (episodes too noisy for one to stand
    out); an agent's collapse comes with the causes and the check of a policy that collapsed, not of a batch."""
    # a GAN's adversarial terms hover by design, which is what makes a sudden lasting jump of one stand out: one
    # player started winning outright (the discriminator rejecting everything, a generator collapsing)
    found = [(curve, item) for curve in judged_curves(run, limits["min_points"], (*LOSS_ROLES, Role.ADVERSARIAL))
             if (item := _spike_of(run, curve, limits)) is not None]
    # the score a person would plot (mAP, a reward, the overall F1): per-class breakdowns over a handful of
    # examples move by whole examples, and a class's recall going 1 -> 2/3 is no collapse of the run
    score = run.curve(Role.SCORE)
    if score is not None and (item := _score_collapse(run, score, limits)) is not None:
        found.append((score, item))
    return once_per_event(found, event_window(run))


def _score_collapse(run: RunCurves, score: Curve, limits: Limits) -> Found | None:
    """A sudden collapse of the run's main score, or an agent's reward ending far below where it began; an agent's
    with the causes and the check of a policy that collapsed, not of a batch that spiked a loss."""
    if len(score.finite_values) < limits["min_points"] or _minibatch_score(run, score):
        return None
    if not run.reinforcement_learning:
        return _collapse_of(score, limits)
    episodic = AVERAGED_WORDS.isdisjoint(tokens(score.tag))
    found = (_collapse_of(score, limits, episodic=episodic) or _ends_below_its_start(score, limits)
             or _gain_given_back(score, limits))
    return None if found is None else replace(found, causes=POLICY_COLLAPSE_CAUSES, check=POLICY_COLLAPSE_CHECK)


def _gain_given_back(score: Curve, limits: Limits) -> Found | None:
    """An agent's reward that loses most of the level it had reached: per-episode rewards are too noisy for a
    jump of single points to stand out, so the reward is read as a running median over the curve's window, and it
    collapsed where that median, having risen beyond its noise above the start, falls below the best level reached
    by ``given_back`` of both the gain since the start and the best level's own magnitude, below what the worst
    tenth of the episodes around that best scored (the good phase's own bad episodes), and by min_sigmas of the
    median's noise, for at least half a window (see ``_lasting``) or to the end. A preference model's implicit
    rewards (DPO's rewards/chosen, rewards/rejected) are no agent's: the rejected one is meant to fall."""
    if PREFERENCE_WORDS & set(tokens(score.tag)):
        return None
    values = finite_prefix(score)
    window = max(score.window, MIN_BASELINE + 2)
    if len(values) < 2 * window:
        return None
    level = median_filter(values, size=window | 1, mode="nearest")
    # only where the whole window lies on the curve: at its ends the padding repeats the end point, and one last
    # episode that fell would be the level
    half = (window | 1) // 2
    whole = np.zeros(len(values), dtype=bool)
    whole[half:len(values) - half] = True
    level = np.where(whole, level, -np.inf)
    start = float(np.median(values[:window]))
    best = np.maximum.accumulate(level)
    best_at = np.maximum.accumulate(np.where(whole & (level >= best), np.arange(len(values)), 0))
    records, which = np.unique(best_at, return_inverse=True)
    worst_tenth = np.array([np.percentile(values[max(0, at - window // 2):at + window // 2 + 1], 10)
                            for at in records])[which]
    sigma = robust_sigma(np.diff(values)) / math.sqrt(2) * MEDIAN_SE / math.sqrt(window)
    drop = np.zeros(len(values))
    drop[whole] = best[whole] - level[whole]
    share = limits["given_back"]
    # a level it reached, not the median's own noise (nor a constant curve's, whose σ is 0)
    learned = (best > start) & (best - start >= limits["min_sigmas"] * sigma)
    collapsed = (learned & (np.arange(len(values)) >= window) & (drop >= share * (best - start))
                 & (drop >= share * np.abs(best)) & (level < worst_tenth) & (drop >= limits["min_sigmas"] * sigma))
    collapsed &= _lasting(collapsed, half, ends_at=len(values) - half - 1)
    if not collapsed.any():
        return None
    low = int(np.flatnonzero(collapsed)[np.argmax(drop[collapsed])])
    peak = int(best_at[low])
    back = np.flatnonzero(level[low:] >= best[low] - share * drop[low])
    recovered = int(back[0]) + low if len(back) else None
    step, low_step = int(score.steps[peak]), int(score.steps[low])
    return Found(
        f"{score.tag} collapses after step {step}: {fmt(best[low])} → {fmt(level[low])}",
        [score.tag],
        [(f"running median of {window} points: {fmt(start)} at the start, {fmt(best[low])} at its best (step "
          f"{step}), {fmt(level[low])} at step {low_step}"),
         (f"it gives back {drop[low] / max(best[low] - start, abs(best[low])):.0%} of that best level, below the "
          f"worst tenth of the episodes around it ({fmt(worst_tenth[low])}); noise σ of the median {fmt(sigma)}"),
         f"back halfway to its best by step {int(score.steps[recovered])}" if recovered is not None
         else f"it ends at {fmt(level[whole][-1])}, never recovering"],
        step=step, step_range=(step, low_step), severity=WARNING if recovered is not None else ERROR,
    )


def _lasting(flags: np.ndarray, least: int, ends_at: int) -> np.ndarray:
    """``flags`` kept only in the stretches of at least ``least`` consecutive points, or that reach the point
    ``ends_at`` (lasting to the end of what can be read). A running median over a window stays low that long only
    when the bad episodes fill a whole window: one that dips for fewer points is a short run of bad episodes
    among good ones (a lander that sometimes hovers until the time limit), which tips the median of a two-sided
    spread down and up again."""
    edges = np.flatnonzero(np.diff(np.r_[0, flags.astype(np.int8), 0]))
    kept = np.zeros(len(flags), dtype=bool)
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if stop - start >= least or stop - 1 >= ends_at:
            kept[start:stop] = True
    return kept


def _ends_below_its_start(score: Curve, limits: Limits) -> Found | None:
    """An agent's reward that ends far below where it began: the first episodes are the untrained policy's, so a
    policy that ends much worse than random collapsed, however slowly a running mean over 100 episodes lets the
    collapse show. Far: by ``below_start`` of the start's magnitude, and beyond what the noise of the two medians
    explains."""
    values = finite_prefix(score)
    if len(values) < MIN_BASELINE + 10:
        return None
    head, tail = values[:MIN_BASELINE], values[-max(MIN_BASELINE, len(values) // 10):]
    start, end = float(np.median(head)), float(np.median(tail))
    changes = np.diff(values)
    # a reward paid now and then (0 at most steps, a GRPO attacker's 0.125 at 16 of 100) leaves most changes at 0,
    # whose median spread is none: its noise is then the spread of its changes
    sigma = (robust_sigma(changes) or float(np.std(changes))) / math.sqrt(2)
    noise = limits["min_sigmas"] * MEDIAN_SE * sigma * math.sqrt(1 / len(head) + 1 / len(tail))
    if start - end <= max(limits["below_start"] * abs(start), noise):
        return None  # (a reward at 0 throughout, never earned, has no fall: both sides are 0)
    at_start = np.flatnonzero(score.smooth[:len(values)] >= start)  # where the collapse began: its last point there
    step, end_step = int(score.steps[at_start[-1] if len(at_start) else 0]), int(score.steps[len(values) - 1])
    lower = f"{(start - end) / abs(start):.0%} of the start's magnitude lower" if start else f"{fmt(start - end)} lower"
    return Found(
        f"{score.tag} falls from {fmt(start)} at the start to {fmt(end)} and never recovers",
        [score.tag],
        [f"{score.tag}: {fmt(start)} over its first {len(head)} points (the untrained policy), {fmt(end)} over its "
         f"last {len(tail)} (to step {end_step}): {lower}",
         f"noise allows {fmt(noise)} between those medians (σ = {fmt(sigma)} from point to point)",
         "the agent ends far worse than a random policy began: a collapse, not slow learning"],
        step=step, step_range=(step, end_step), severity=ERROR,
    )


def _minibatch_score(run: RunCurves, score: Curve) -> bool:
    """A score of the training split beside a train loss (a per-batch F1 of four examples): it moves by whole
    examples, and what it would show the loss shows better. An agent's reward is its training signal: judged."""
    return (not run.reinforcement_learning and run.curve(Role.TRAIN_LOSS) is not None
            and split_of(tokens(score.tag)) == "train")


def shortfall(score: Curve) -> Curve:
    """A higher-is-better curve as a lower-is-better one: what a score out of 1 (or 100) misses of perfect, or the
    negated value of an unbounded one (a reward)."""
    values = score.values
    out_of = perfect_score(score)
    measured = (out_of - values) / out_of if out_of is not None else -values
    return Curve(score.tag, score.role, score.steps, measured)


def perfect_score(score: Curve) -> float | None:
    """What a score is out of: 1, or 100 (a percentage); None for an unbounded one (a reward). A coefficient (R², a
    correlation, a kappa) is out of 1 however far below 0 it goes: R² -0.02 -> -0.11 is a model at the mean a
    little worse, not a reward falling fivefold."""
    finite = score.finite_values
    if finite.max() <= 1 and (finite.min() >= 0 or COEFFICIENT_WORDS & set(tokens(score.tag))):
        return 1.0
    if finite.min() >= 0 and finite.max() <= 100:
        return 100.0
    return None


def _collapse_of(score: Curve, limits: Limits, episodic: bool = False) -> Found | None:
    """A sudden drop of a score that had improved: a spike of its shortfall that stands out from its noise. An
    agent's reward of each episode (``episodic``: not a mean over the last hundred) back at its level within
    BRIEF_DIP points is a few episodes that exploration or the environment's chance sent astray (an ε-greedy agent
    acts at random one step in twenty), not a collapse."""
    missing = shortfall(score)
    values = finite_prefix(missing)
    window = baseline_window(missing)
    noise = local_noise(values, window)
    lasting = median_filter(values, size=3, mode="nearest")
    jump = _highest_jump(lasting, window, noise, limits, limits["lasting_size"])
    if jump is None or (episodic and jump.recovered is not None and jump.recovered - jump.index <= BRIEF_DIP):
        return None
    scores = finite_prefix(score)
    step = int(score.steps[jump.index])
    before = float(np.median(scores[max(0, jump.index - window):jump.index]))
    dropped_to = float(np.median(scores[max(0, jump.index - 1):jump.index + 2]))  # the level the jump was found on
    recovered = (f"back to its level by step {int(score.steps[jump.recovered])}" if jump.recovered is not None
                 else f"it ends at {fmt(float(np.median(scores[-max(1, len(scores) // 10):])))}")
    return Found(
        f"{score.tag} collapses at step {step}: {fmt(before)} → {fmt(dropped_to)}",
        [score.tag],
        [f"{score.tag} = {fmt(dropped_to)} at step {step} (median of 3 points); median of the "
         f"{min(window, jump.index)} points before = {fmt(before)}",
         f"the drop stands {fmt(jump.rise / jump.sigma if jump.sigma else math.inf, 3)} noise σ out from the points "
         f"before it, beyond the score's rare dips elsewhere", recovered],
        step=step, severity=WARNING if jump.recovered is not None else ERROR,
    )


def _spike_of(run: RunCurves, curve: Curve, limits: Limits) -> Found | None:
    main = curve is run.curve(Role.TRAIN_LOSS)
    diverged = _divergence(curve, limits, main=main)
    values = finite_prefix(curve)
    # a term must move the loss it is part of, by climbing or by jumping (a YOLO cls_loss of 0.004 beside 0.1 does
    # not; DETR's auxiliary class loss creeping 0.0004 -> 0.06 beside a total of 11 does not); the run's main train
    # loss climbing is divergence whatever its name
    least_move = (limits["lasting_size"] - 1) * share_of_terms(run, curve)
    if diverged is not None and (main or _start_and_end(values)[1] - float(curve.smooth.min()) >= least_move):
        return diverged
    window = baseline_window(curve)
    noise = local_noise(values, window)
    # A median of three neighbours erases one-point outliers, so whatever jumps in it lasted two points or more.
    lasting = median_filter(values, size=3, mode="nearest")
    single = limits["single_average_size" if len(values) < SHORT_CURVE and not one_batch_each(curve)
                    else "single_point_size"]
    # a train loss is logged from its first step, so a blow-up before any progress is a jump from its start; a
    # held-out loss is first logged after training began, and one that only climbs from there is diverging. One
    # term of a multi-term loss may grow from its start by design (a detector's box regression, counted on the
    # foreground proposals that appear in the first iterations; a KL term under annealing): a term jumps only
    # after it had come down
    from_the_start = curve.role == Role.TRAIN_LOSS and not terms_beside(run, curve)
    # one print of a GAN's per-step generator term far above the rest is one hard image: only a jump that lasts counts
    jump = ((None if gan_snapshots(run, curve) else _highest_jump(values, window, noise, limits, single,
                                                                  from_the_start))
            or _highest_jump(lasting, window, noise, limits, limits["lasting_size"], from_the_start))
    if jump is None or jump.rise < least_move or jump.baseline <= 0:
        return None
    if jump.recovered is None and curve.first_nonfinite is not None:
        return None  # the run is climbing into NaN: CD101 reports it
    event_end = jump.recovered if jump.recovered is not None else len(values)
    # A jump found on the running median of three starts where two of three neighbours stand high, which may be
    # the points either side of it (high, normal, high): its peak is looked for from the point before
    first = max(0, jump.index - 1)
    peak = first + int(np.argmax(values[first:max(event_end, jump.index + 1)]))
    step = int(curve.steps[peak])
    size = values[peak] / jump.baseline  # a jump from a level of 0 or below was passed over above
    sigma = jump.sigma
    noise_text = (f"rise = {fmt(jump.rise / sigma, 3)} noise σ (σ = {fmt(sigma)}, the noise just before it)" if sigma
                  else "the curve was smooth before it (no measurable noise)")
    evidence = [
        f"{curve.tag} = {fmt(values[peak])} at step {step}; running median of the "
        f"{counted(min(window, jump.index), 'point')} before the jump = {fmt(jump.baseline)} ({fmt(size)}×)",
        f"{noise_text}; the curve's rare excursions elsewhere (99.5th percentile"
        f"{', its other spikes set aside' if jump.reach_apart else ''}) reach {fmt(jump.reach)} above its running "
        f"median",
    ]
    # too few points after the jump to show a level: a jump that began a level's worth of points before the end
    # and climbed to it never came back
    ends_at_it = jump.recovered is None and peak == len(values) - 1 and len(values) - jump.index <= window
    if jump.recovered is not None:
        back_step = int(curve.steps[jump.recovered])
        evidence.append(f"recovered: running median back to ≤ "
                        f"{fmt(jump.baseline + limits['recovered_sigmas'] * sigma)} by step "
                        f"{back_step} ({counted(back_step - step, 'step')} after the peak)")
    elif ends_at_it:
        evidence.append("the log ends at the spike: whether it recovered is unknown")
    else:
        ending = float(np.median(values[-max(1, len(values) // 10):]))
        evidence.append(f"did not recover: the loss ends at {fmt(ending)} (pre-spike level {fmt(jump.baseline)})")
    if jump.others:
        listed = "; ".join(f"step {int(curve.steps[other.peak])}: {fmt(other.size)}×, "
                           + (f"back by step {int(curve.steps[other.recovered])}" if other.recovered is not None
                              else "not back by the end")
                           for other in jump.others[:5])
        evidence.append(f"{counted(len(jump.others), 'more spike')}: {listed}"
                        f"{' …' if len(jump.others) > 5 else ''}")
    evidence.append(_spike_rate(curve, values, jump))
    never = jump.recovered is None and not ends_at_it
    return Found(
        f"{curve.tag} jumps {fmt(size)}× at step {step}" + (" and never recovers" if never else ""),
        [curve.tag], evidence, step=step, severity=ERROR if never else WARNING,
    )


def one_batch_each(curve: Curve) -> bool:
    """The curve's points are single batches however few they are: Lightning's ``*_step`` metrics (logged every
    ``log_every_n_steps`` beside their ``*_epoch`` averages), or a curve its name calls a batch's. One hard batch
    makes a point several times its neighbours, which an average over an epoch never is."""
    words = tokens(curve.tag)
    return words[-1:] == ["step"] or "batch" in words


def _spike_rate(curve: Curve, values: np.ndarray, jump: Jump) -> str:
    """How often the curve spikes, per 10,000 steps (how large-run practice compares runs), and how the spikes
    ended: back at the level before them, or not by the end of the log."""
    count = 1 + len(jump.others)
    span = max(1, int(curve.steps[len(values) - 1]) - int(curve.steps[0]))
    recovered = (jump.recovered is not None) + sum(other.recovered is not None for other in jump.others)
    return (f"{counted(count, 'spike')} over {span:,} steps: {fmt(10_000 * count / span, 3)} per 10,000 "
            f"steps; {recovered} back at the level before {'them' if count > 1 else 'it'}, {count - recovered} not")


def _divergence(curve: Curve, limits: Limits, main: bool = False) -> Found | None:
    """A loss that fell, then climbed far above its start and stayed there (the NaN-free form of divergence).
    A held-out loss climbs steadily when the model overfits; only a break (most of the climb within a few
    evaluations) is divergence there."""
    if curve.first_nonfinite is not None:
        return None  # it ends in NaN: CD101 reports it
    values = finite_prefix(curve)
    start, end, tail = _start_and_end(values)
    if start <= 0:
        return None
    if end < limits["diverged_factor"] * start:
        return _drifted_away(curve, values, start, end, tail, limits) if main else None
    # the last tenth is judged by its median (``end``): a stray value there (an overflow logged as 0) moves no onset
    smooth = curve.smooth[:len(values) - tail] if len(values) > tail else curve.smooth[:len(values)]
    if smooth.min() >= NO_PROGRESS * start:
        # it never got below its start: a train loss diverging from its first steps (a learning rate far too
        # high); a held-out loss is first logged after training began, and a term may start at ~0 and take its
        # share, so neither is judged so
        if curve.role != Role.TRAIN_LOSS or names_a_term(curve.tag):
            return None
        above = np.flatnonzero(smooth >= limits["lasting_size"] * start)
        if not len(above):
            return None
        onset = int(above[0])
        how = (f"{curve.tag} never gets below its start {fmt(start)}; its running median passes "
               f"{fmt(limits['lasting_size'] * start)} at step {curve.step_at(onset)}")
        return _climbed_away(curve, values, onset, end / start, f"from its start at step {curve.step_at(onset)}",
                             how, end)
    onset = int(np.flatnonzero(smooth <= start)[-1]) + 1
    if onset >= len(values) or onset < MIN_BASELINE:
        return None  # it never fell for a few points first: a term that starts at ~0 and takes its share
    lowest = int(np.argmin(smooth[:onset]))
    if curve.role != Role.TRAIN_LOSS and not _broke_away(values[lowest:], limits["break_share"]):
        return None
    how = (f"{curve.tag} fell from {fmt(start)} to {fmt(float(smooth[lowest]))} (running median, step "
           f"{int(curve.steps[lowest])}), then rose above its start at step {int(curve.steps[onset])}")
    return _climbed_away(curve, values, onset, end / start, f"from step {int(curve.steps[onset])}", how, end)


def _drifted_away(curve: Curve, values: np.ndarray, start: float, end: float, tail: int,
                  limits: Limits) -> Found | None:
    """The run's train loss (not one of its terms, which may grow by design) fell, settled, then climbed steadily
    to end several times above its lowest level, though still below its start: a run coming apart slowly (a
    growing gradient, an LR too high for the sharper minimum it reached), not a spike."""
    lowest = _lowest_before_drift(curve, values, start, end, tail, limits)
    if lowest is None:
        return None
    low, step, end_step = float(curve.smooth[lowest]), int(curve.steps[lowest]), int(curve.steps[len(values) - 1])
    return Found(
        f"{curve.tag} climbs steadily from step {step} and never recovers", [curve.tag],
        [f"{curve.tag} fell from {fmt(start)} to {fmt(low)} (running median, step {step}), then climbed to "
         f"{fmt(end)} (median of the last tenth) = {fmt(end / low)}× its lowest, by step {end_step}",
         f"the climb from the lowest point is a rank trend of {fmt(rank_trend_z(values[lowest:]), 3)} standard "
         f"deviations, and undoes {(end - low) / (start - low):.0%} of the progress made"],
        step=step, step_range=(step, end_step), severity=ERROR,
    )


def _lowest_before_drift(curve: Curve, values: np.ndarray, start: float, end: float, tail: int,
                         limits: Limits) -> int | None:
    """Where a loss that drifted away (see ``_drifted_away``) stood lowest, or None: the climb from there is a rank
    trend beyond ``min_sigmas``, ends ``diverged_factor`` times above that level and undoes at least
    ``drift_undone`` of the progress made; a loss already at ~0 that wanders up from its floor undoes none of it."""
    if len(values) < LOCAL_NOISE_POINTS:
        return None
    smooth = curve.smooth[:len(values)]
    lowest = int(np.argmin(smooth[:len(values) - tail]))
    low = float(smooth[lowest])
    if (low <= 0 or end < limits["diverged_factor"] * low or lowest < MIN_BASELINE
            or end - low < limits["drift_undone"] * (start - low)
            or rank_trend_z(values[lowest:]) < limits["min_sigmas"]):
        return None
    return lowest


def came_apart_from(curve: Curve) -> int | None:
    """The step a train loss stood lowest before it drifted away for good (CD402 at its default thresholds), or
    None."""
    values = finite_prefix(curve)
    if curve.first_nonfinite is not None or not len(values):
        return None
    start, end, tail = _start_and_end(values)
    lowest = _lowest_before_drift(curve, values, start, end, tail, shipped_limits("CD402")) if start > 0 else None
    return None if lowest is None else int(curve.steps[lowest])


def _start_and_end(values: np.ndarray) -> tuple[float, float, int]:
    """A loss's start (median of its first few points), its end (median of its last tenth) and how many points
    that end is: one last point shows no staying, so a short curve's end is read off its last two (a final
    evaluation that jumps is a spike at the end, whose recovery the log does not show)."""
    tail = max(2, len(values) // 10)
    return float(np.median(values[:min(3, max(1, len(values) // 10))])), float(np.median(values[-tail:])), tail


def _climbed_away(curve: Curve, values: np.ndarray, onset: int, factor: float, since: str, how: str,
                  end: float) -> Found | None:
    if end <= values[:onset].max(initial=-math.inf):
        return None  # it ends no higher than it already went before the climb: a noisy low loss, not divergence
    step, end_step = int(curve.steps[onset]), int(curve.steps[len(values) - 1])
    return Found(
        f"{curve.tag} climbs away {since} and never recovers", [curve.tag],
        [how, f"it ends at {fmt(end)} (median of the last tenth) = {fmt(factor)}× its start, at step {end_step}"],
        step=step, step_range=(step, end_step), severity=ERROR,
    )


def _broke_away(climb: np.ndarray, share: float) -> bool:
    """Most of a climb (``share`` of its log-rise from its lowest point to its highest) happened within a tenth
    of its points (at least one step): a break, not a steady drift."""
    if len(climb) < 2 or climb.min() <= 0:
        return False
    logs = np.log(climb)
    total = float(logs.max() - logs[0])
    span = max(1, len(climb) // 10)
    fastest = float(np.max(logs[span:] - logs[:-span])) if len(climb) > span else total
    return total > 0 and fastest >= share * total
