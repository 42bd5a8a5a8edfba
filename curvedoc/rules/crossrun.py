"""Across runs: what no single run shows (``curvedoc audit``). Each rule gets one family of comparable runs
(:class:`curvedoc.audit.crossrun.Family`: same config layout, data and class count, in the order they started).

A run's final value is the median of its last tenth of points and its noise the robust spread of its point-to-
point changes (:class:`curvedoc.audit.summary.MetricEnd`); validation curves hold one point per epoch, so a noise
estimate from a handful of points is itself unsure, and every comparison below allows for that.
"""

from __future__ import annotations

import math
from statistics import NormalDist, median
from typing import TYPE_CHECKING

from curvedoc.diagnose import first_moves
from curvedoc.features import MAD_TO_SIGMA, fmt
from curvedoc.rules import INFO, WARNING, FoundAcross, Limits, Threshold, archive_rule

if TYPE_CHECKING:
    from curvedoc.audit.crossrun import Family
    from curvedoc.audit.summary import RunSummary

# Final metrics compared across seeds: validation first (what a result is reported on), the test split if that is
# what the script evaluates during training.
HELD_OUT_ROLES = ("val_loss", "val_acc", "test_loss", "test_acc")
HELD_OUT_LOSSES = ("val_loss", "test_loss")
# Warnings whose usual causes a hyperparameter sweep is not meant to fix (capacity, dropout): a sweep that shows
# them everywhere is not failing.
NOT_FAILURES = {"overfitting", "val_below_train"}
MOST_LISTED = 8  # evidence lines listing runs or changes; the rest is counted


def _listed(lines: list[str]) -> list[str]:
    if len(lines) <= MOST_LISTED:
        return lines
    return lines[:MOST_LISTED] + [f"… and {len(lines) - MOST_LISTED} more"]


def _errors(run: RunSummary) -> list[str]:
    return sorted({f.symptom for f in run.findings if f.severity == "error"})


def _noise_upper(ends, confidence: float) -> tuple[float, int]:
    """The pooled (root-mean-square) noise of the runs' curves, raised to an upper confidence bound for how few
    points it was estimated from, and those degrees of freedom; inf when they are too few to bound it."""
    pooled = math.sqrt(sum(end.noise ** 2 for _, end in ends) / len(ends))
    dof = sum(max(end.n_points - 2, 0) for _, end in ends)  # point-to-point changes lose a point and the level
    # sd of an estimated sigma ≈ sigma / sqrt(2 dof): the one-sided bound divides by 1 − z / sqrt(2 dof)
    shrink = 1 - NormalDist().inv_cdf(confidence) / math.sqrt(2 * dof) if dof else 0.0
    return (pooled / shrink if shrink > 0 else math.inf), dof


@archive_rule(
    "CD801", "does-not-reproduce", symptom="does_not_reproduce", severity=WARNING,
    causes=(
        "training is unstable at this setting (learning rate near the edge, dead ReLUs, a too-narrow layer): some "
        "seeds train and others do not",
        "the seed also draws the data split or a data subset, and the result hangs on which examples were drawn",
        "non-determinism outside the seed (data-loader workers, cuDNN autotuning, unseeded augmentation)",
        "the code or the data changed between the runs while the logged config stayed the same (no commit or "
        "data version among the hyperparameters)",
    ),
    check="rerun the best and the worst seed with the same seed: if each repeats itself, it is the seed's draw "
          "(init or split); then report the mean and spread over 5+ seeds, never one seed's number",
    thresholds={
        "min_runs": Threshold(2, "fewest runs of one config (differing at most in seeds) that are compared"),
        "p_value": Threshold(0.001, "chance that the finals of runs this far apart arise from their curves' own "
                                    "noise alone (Bonferroni over the pairs of runs); lower means more sure"),
        "confidence": Threshold(0.95, "confidence of the upper bound put on a noise estimated from few points"),
        "min_share": Threshold(0.25, "the spread must also be this share of the level (the median final of a "
                                     "loss; the median error 1 − accuracy of an accuracy): a difference that "
                                     "changes a conclusion"),
        "same_length": Threshold(0.9, "runs whose metric ends before this share of the longest run's last step "
                                      "stopped early and are not compared"),
    },
)
def does_not_reproduce(family: Family, limits: Limits):
    """Runs whose configs are equal apart from their seeds (repeats of one experiment) end apart: either some
    fail with error findings while another is healthy, or their final validation metric spreads more than the
    noise of their own curves explains (at the chosen p-value, with that noise bounded upwards for the few
    points it was measured on) and by a meaningful share of its level."""
    for group in family.seed_groups():
        if len(group) < limits["min_runs"]:
            continue
        evidence = _failing_seeds(family, group) + _seed_spread(group, limits)
        if not evidence:
            continue
        seeds = family.seed_names
        yield FoundAcross(
            f"{len(group)} runs of one config ({'differing only in ' + ', '.join(seeds) if seeds else 'repeats'})"
            f" do not agree",
            [run.path for run in group], seeds,
            [*evidence, *(f"{run.path}: {family.settings(run, seeds) or 'no seed recorded'}" for run in group)],
        )


def _failing_seeds(family: Family, group: list[RunSummary]) -> list[str]:
    failing = [run for run in group if _errors(run)]
    healthy = [run for run in group if run.verdict == "healthy"]
    if not failing or not healthy:
        return []
    return [f"{len(failing)} of {len(group)} fail with errors ("
            + "; ".join(f"{family.settings(run, family.seed_names) or run.path}: {', '.join(_errors(run))}"
                        for run in failing)
            + f") while {len(healthy)} {'is' if len(healthy) == 1 else 'are'} healthy"]


def _seed_spread(group: list[RunSummary], limits: Limits) -> list[str]:
    from curvedoc.audit.crossrun import comparable_metric
    from curvedoc.audit.summary import LOWER_IS_BETTER

    role, ends = comparable_metric(group, HELD_OUT_ROLES)
    # A run stopped early (crashed, killed, resumed elsewhere) shows where it was, not where the config leads.
    longest = max((end.last_step for _, end in ends), default=0)
    ends = [(run, end) for run, end in ends if end.last_step >= limits["same_length"] * longest]
    if len(ends) < limits["min_runs"]:
        return []
    finals = [end.final for _, end in ends]
    spread = max(finals) - min(finals)
    level = abs(median(finals)) if role in LOWER_IS_BETTER else median(1 - value for value in finals)
    noise, dof = _noise_upper(ends, limits["confidence"])
    pairs = len(ends) * (len(ends) - 1)
    allowed = math.sqrt(2) * NormalDist().inv_cdf(1 - limits["p_value"] / pairs) * noise
    if not (spread > allowed and spread >= limits["min_share"] * level):
        return []
    tag = ends[0][1].tag
    low, high = min(ends, key=lambda item: item[1].final), max(ends, key=lambda item: item[1].final)
    return [f"{tag} ends between {fmt(low[1].final)} ({low[0].path}) and {fmt(high[1].final)} ({high[0].path}): "
            f"spread {fmt(spread)}, {spread / level:.0%} of the level {fmt(level)}"
            + (" (median error)" if role not in LOWER_IS_BETTER else ""),
            f"the runs' own noise ({fmt(noise)} at most, pooled over {dof} degrees of freedom) lets "
            f"{len(ends)} runs spread by {fmt(allowed)} (p = {limits['p_value']:g})",
            "finals: " + ", ".join(f"{fmt(end.final)}" for _, end in ends)]


@archive_rule(
    "CD802", "iron-law", symptom="iron_law", severity=WARNING,
    causes=(
        "a bug in the data pipeline, the model or the loss that no hyperparameter can fix (labels misaligned, "
        "inputs zeroed or unnormalised, wrong loss for the outputs, frozen parameters)",
        "the sweep explores the wrong hyperparameters while the failure comes from the code",
    ),
    check="stop sweeping; run the first-response checks on one config: overfit one batch of 2–10 examples (the "
          "loss must reach ~0, else it is a bug), print the exact tensor entering the model and its labels for one "
          "batch, compare the step-0 loss with −log(1/n_classes)",
    thresholds={
        "min_configs": Threshold(3, "fewest distinct hyperparameter settings (seeds aside) failing the same way"),
    },
)
def iron_law(family: Family, limits: Limits):
    """Three or more different hyperparameter settings of one family all show the same failure symptom (an
    error or warning finding; overfitting and val-below-train aside, which sweeps are not expected to cure).
    With start times, the failing runs must follow one another (a person changing a setting and failing again);
    without them, every run of the family must fail that way. "Three failed hyperparameter changes means it is a
    bug, not a hyperparameter.\""""
    blocks: dict[tuple[str, ...], set[str]] = {}
    symptoms = {run.path: run.symptoms - NOT_FAILURES for run in family.runs}
    for symptom in sorted(set().union(*symptoms.values())):
        for streak in _streaks(family, symptoms, symptom):
            if len({family.config(run) for run in streak}) >= limits["min_configs"]:
                blocks.setdefault(tuple(run.path for run in streak), set()).add(symptom)
    by_path = {run.path: run for run in family.runs}
    for paths, shared in blocks.items():
        if any(set(paths) < set(other) for other in blocks):
            continue  # the same failure over a longer stretch of runs is reported there
        runs = [by_path[path] for path in paths]
        varied = family.varied(runs)
        n_configs = len({family.config(run) for run in runs})
        yield FoundAcross(
            f"{n_configs} hyperparameter settings all fail the same way ({', '.join(sorted(shared))}): a bug, not a "
            f"hyperparameter",
            list(paths), varied,
            [f"{len(runs)} runs, {n_configs} settings of {', '.join(varied) or 'the seeds'}: every one shows "
             f"{', '.join(sorted(shared))}",
             *_listed([f"{run.path}: {family.settings(run, varied)} → {', '.join(sorted(symptoms[run.path]))}"
                       for run in runs]),
             *(f"first response: {move}" for move in first_moves(family.n_classes))],
        )


def _streaks(family: Family, symptoms: dict[str, set[str]], symptom: str) -> list[list[RunSummary]]:
    """Runs showing ``symptom`` one after another; the whole family, or nothing, when start times are missing."""
    if not family.timed:
        return [family.runs] if all(symptom in symptoms[run.path] for run in family.runs) else []
    streaks, current = [], []
    for run in family.runs:
        if symptom in symptoms[run.path]:
            current.append(run)
        else:
            streaks, current = streaks + [current], []
    return [streak for streak in streaks + [current] if streak]


@archive_rule(
    "CD803", "two-changes-at-once", symptom="two_changes_at_once", severity=INFO,
    causes=(
        "several settings edited between two runs by hand: whatever the result, it cannot say which change did it",
    ),
    check="rerun the later run with only one of the changes: the difference to both neighbours splits the effect",
    thresholds={
        "min_changed": Threshold(2, "hyperparameters (seeds aside) changed between consecutive runs"),
        "min_gap_seconds": Threshold(60, "seconds between the end of a run and the start of the next: a person "
                                         "reads a result and edits a config in no less; a sweep agent launches "
                                         "the next config within seconds, and runs started together overlap"),
    },
)
def two_changes_at_once(family: Family, limits: Limits):
    """Consecutive runs of a family (by start time) where the later one started after the earlier one ended,
    with time to look at its result in between, and changed two or more hyperparameters: a manual iteration the
    result cannot teach anything from. Runs that overlap or follow within seconds were launched by a sweep, and
    a pause filled by other runs of the archive was a queue working, not a person looking: neither is an
    iteration. One finding per family lists every such step."""
    timed = [run for run in family.runs if run.start_time is not None and run.end_time is not None
             and run.end_time >= run.start_time]
    iterations = [(before, after, after.start_time - before.end_time) for before, after in zip(timed, timed[1:])
                  if after.start_time - before.end_time >= limits["min_gap_seconds"]
                  and not family.started_between(before.end_time, after.start_time)]
    steps = [(before, after, gap, family.changed(before, after)) for before, after, gap in iterations]
    steps = [step for step in steps if len(step[3]) >= limits["min_changed"]]
    if not steps:
        return None
    names = list(dict.fromkeys(name for *_, changed in steps for name in changed))
    runs = list(dict.fromkeys(run.path for before, after, *_ in steps for run in (before, after)))
    manual = len(iterations)
    return FoundAcross(
        f"{len(steps)} of {manual} manual iterations changed several hyperparameters at once ({', '.join(names)})",
        runs, names,
        _listed([f"{before.path} → {after.path} (started {_duration(gap)} after it ended): "
                 + ", ".join(f"{name} {family.value(before, name)} → {family.value(after, name)}" for name in changed)
                 for before, after, gap, changed in steps]),
    )


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


@archive_rule(
    "CD804", "too-good-to-be-true", symptom="too_good_to_be_true", severity=WARNING,
    causes=(
        "validation or test examples also in the training set (overlapping splits, duplicates, augmented copies)",
        "the label, or something computed from it, among the input features (target statistics, an ID that "
        "encodes the class, a leaky join)",
        "evaluation on the training data, or on a different, easier split than the other runs",
    ),
    check="retrain the winning config on the same code with labels shuffled: if its validation loss still falls "
          "well below chance, the model sees the answer; then diff its data and features against the runner-up",
    thresholds={
        "min_others": Threshold(3, "fewest other runs of the family, not failing with errors, to compare with"),
        "margin": Threshold(3.0, "the runner-up's final validation loss must be at least this many times the "
                                 "best run's: neighbouring settings of a sweep end close together"),
        "robust_z": Threshold(5.0, "the best run must lie this many spreads below the others' median, on the log "
                                   "of the losses (spread: their robust standard deviation, their curves' relative "
                                   "noise, or a factor of 1.1, whichever is largest)"),
    },
)
def too_good_to_be_true(family: Family, limits: Limits):
    """The best run of a family ends with a validation loss several times below the runner-up's and far outside
    the spread of the others (which must not fail with errors). Losses only: a loss's zero is perfection on any
    task, while an accuracy of 1.0 on a small validation set may be one example away from the others. Runs
    whose loss ends below 0 are left out: that loss has no floor to compare against."""
    from curvedoc.audit.crossrun import comparable_metric

    # A negative final is a loss that is not a log-likelihood or squared error (NLL on logits): nothing to compare.
    role, ends = comparable_metric([run for run in family.runs if not any(
        end.final < 0 for role, end in run.metrics.items() if role in HELD_OUT_LOSSES)], HELD_OUT_LOSSES)
    if not ends:
        return None
    best_run, best = min(ends, key=lambda item: (item[1].final, item[0].path))
    others = [(run, end) for run, end in ends if run is not best_run and not _errors(run)]
    if len(others) < limits["min_others"]:
        return None
    finals = [end.final for _, end in others]
    runner_up, level = min(finals), median(finals)
    # Losses of a sweep differ by factors (a 10x smaller learning rate ends several times higher), and the margin
    # is a factor too: the spread is measured in the same units, on the log of the losses, where one slow run
    # does not widen it by its whole linear distance.
    logs = [math.log(value) if value > 0 else -math.inf for value in finals]
    log_level = median(logs)
    deviation = MAD_TO_SIGMA * median(abs(value - log_level) for value in logs)
    noise = median(end.noise / end.final for _, end in others if end.final > 0)  # relative: a log's noise
    spread = max(deviation, noise, math.log1p(0.1))
    margin = runner_up / best.final if best.final > 0 else math.inf
    z = (log_level - math.log(best.final)) / spread if best.final > 0 else math.inf
    if margin < limits["margin"] or z < limits["robust_z"]:
        return None
    closest = min(others, key=lambda item: (len(family.changed(item[0], best_run)), item[1].final))[0]
    differs = family.changed(closest, best_run)
    if not differs:
        # Another seed of the very same config ended far worse: a leak would be in both. That is a run that
        # does not reproduce (CD801's finding), not one that sees the answer.
        return None
    which = f"The run with {family.settings(best_run, differs)}"
    return FoundAcross(
        f"{which} ends with {best.tag} {fmt(best.final)}, {margin:.1f}× below the best of {len(others)} "
        f"other runs: check for leakage",
        [best_run.path, *(run.path for run, _ in sorted(others, key=lambda item: item[1].final))], differs,
        [f"{best.tag}: {fmt(best.final)} here; the others end at {fmt(runner_up)} (best) to {fmt(max(finals))}, "
         f"median {fmt(level)}",
         f"{z:.1f} spreads below the others' median on a log scale (spread: a factor of {fmt(math.exp(spread), 3)})",
         f"closest config {closest.path} differs in "
         + ", ".join(f"{name} {family.value(closest, name)} → {family.value(best_run, name)}" for name in differs)],
    )
