"""curvedoc's spike rule (CD402) beside the spike rules that ship in large-scale trainers, on the same curves.

    python benchmarks/bench_spike_rules.py            # every labelled set this checkout has

The large-run rules, each applied to every loss curve CD402 judges (train, validation, test, terms; the logged
points as the steps, windows capped by the history there is):

- ``6σ over 128``: a value more than 6 standard deviations above the mean of the previous 128 values;
- ``2× the 100-step mean, > 4 steps``: the loss at least twice its 100-step running mean for more than 4
  consecutive steps;
- ``MA25 ≥ 5× MA500``: a 25-step moving average at least 5 times the 500-step one.

For each part of the labelled runs: how many runs labelled ``spike`` each rule flags (recall), how many healthy runs it flags
(false alarms), and the spike runs one of the large-run rules flags that CD402 misses. A run counts as flagged
when any of its judged curves is. This measures rules on labelled runs; it times nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from curvedoc.diagnose import diagnose_run
from curvedoc.errors import CurvedocError
from curvedoc.evaluate import FINAL_PARTS, PART_ORDER, _runs_of, default_sets, read_labels
from curvedoc.features import RunCurves
from curvedoc.rules import REGISTRY, Limits
from curvedoc.rules.stability import finite_prefix, judged_curves

FEWEST_BEFORE = 8  # values a rolling statistic needs before it says anything


def six_sigma_over_128(values: np.ndarray) -> bool:
    for index in range(FEWEST_BEFORE, len(values)):
        before = values[max(0, index - 128):index]
        spread = before.std()
        if spread > 0 and values[index] > before.mean() + 6 * spread:
            return True
    return False


def twice_the_running_mean(values: np.ndarray) -> bool:
    consecutive = 0
    for index in range(FEWEST_BEFORE, len(values)):
        mean = values[max(0, index - 100):index].mean()
        consecutive = consecutive + 1 if mean > 0 and values[index] >= 2 * mean else 0
        if consecutive > 4:
            return True
    return False


def short_over_long_average(values: np.ndarray) -> bool:
    cumulative = np.r_[0.0, np.cumsum(values)]
    for index in range(FEWEST_BEFORE, len(values)):
        short = (cumulative[index + 1] - cumulative[max(0, index - 24)]) / min(25, index + 1)
        long = (cumulative[index + 1] - cumulative[max(0, index - 499)]) / min(500, index + 1)
        if long > 0 and short >= 5 * long:
            return True
    return False


LARGE_RUN_RULES: dict[str, Callable[[np.ndarray], bool]] = {
    "6σ over 128": six_sigma_over_128,
    "2× the 100-step mean, > 4 steps": twice_the_running_mean,
    "MA25 ≥ 5× MA500": short_over_long_average,
}
CURVEDOC = "curvedoc CD402"


def flags_of(path: Path) -> set[str] | None:
    """The rules that flag the run at ``path``; None when it cannot be read."""
    try:
        runs = _runs_of(path)
    except CurvedocError:
        return None
    flagged = set()
    spike_limits = Limits(REGISTRY["CD402"].thresholds, {})
    for run in runs:
        curves = RunCurves(run)
        if any(f.code == "CD402" for f in diagnose_run(run, curves=curves)):
            flagged.add(CURVEDOC)
        for curve in judged_curves(curves, spike_limits["min_points"]):
            values = finite_prefix(curve)
            flagged |= {name for name, found in LARGE_RUN_RULES.items() if name not in flagged and found(values)}
    return flagged


def main() -> int:
    names = [CURVEDOC, *LARGE_RUN_RULES]
    spikes: dict[str, dict[str, set[str]]] = {}
    healthy: dict[str, dict[str, set[str]]] = {}
    for labelled in default_sets():
        labels, parts = read_labels(labelled.labels)
        for key, label in sorted(labels.items()):
            part = label.get("part") or parts.get(key.split("/")[0], labelled.part)
            flagged = flags_of(labelled.data / key)
            if flagged is None:
                continue
            if "spike" in label.get("symptoms", []):
                spikes.setdefault(part, {})[key] = flagged
            elif label.get("healthy"):
                healthy.setdefault(part, {})[key] = flagged
    print("| part | rule | spike runs flagged | healthy runs flagged |")
    print("| --- | --- | ---: | ---: |")
    for part in [part for part in PART_ORDER if part in spikes or part in healthy]:
        for name in names:
            found = sum(name in flagged for flagged in spikes.get(part, {}).values())
            alarms = sum(name in flagged for flagged in healthy.get(part, {}).values())
            print(f"| {part} | {name} | {found} of {len(spikes.get(part, {}))} | {alarms} of "
                  f"{len(healthy.get(part, {}))} |")
    missed = [(part, key, flagged) for part, runs in spikes.items() for key, flagged in runs.items()
              if CURVEDOC not in flagged and flagged]
    print(f"\nspike runs a large-run rule flags and CD402 does not: {len(missed)}")
    for part, key, flagged in missed:
        # the final parts judge a change: their runs are counted, never named (see curvedoc.evaluate)
        print(f"- [{part}] {'(a run of a final part)' if part in FINAL_PARTS else key}: "
              f"{', '.join(sorted(flagged))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
