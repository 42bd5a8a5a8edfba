"""The live rules (``curvedoc watch``, the framework callbacks): how many logged steps after a symptom shows they
are certain of it, what they would have said too early, and what a watch over 1,000 runs costs.

    python benchmarks/bench_watch.py [--looks 120] [--runs 1000] [--only delay|scale]

Delay: each labelled run of the fixture sets (real training runs: ``fixtures/corpus``, ``holdout``, ``finetune``,
``finetune_loop``) is replayed as it was written. The run as it stood after each logged step (or at ``--looks``
evenly spaced steps of a longer run) is diagnosed and handed to the same ``Certainty`` the watch and the callbacks
use. Per symptom of the finished runs' findings: how many the live rules printed, and the delay in logged steps
of the run's longest curve from the step the finding names (else the first look whose diagnosis showed it) to
the look that printed it. "Too early" counts printed findings the finished run does not have: each is a live
alert its owner would have acted on for nothing.

The watch at scale: ``--runs`` runs of the audit benchmark's archive (``archive.py``, every format), timed at its
first look (everything read and diagnosed), a look with nothing changed, and a look after one TensorBoard run
had records appended (which reads only those).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from copy import deepcopy
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from curvedoc.config import Config  # noqa: E402
from curvedoc.diagnose import diagnose_run  # noqa: E402
from curvedoc.evaluate import ALARMS, _runs_of, default_sets, read_labels  # noqa: E402
from curvedoc.model import Run  # noqa: E402
from curvedoc.watch import Certainty, Watch  # noqa: E402

FIXTURE_SETS = ("corpus", "holdout", "finetune", "finetune_loop")


def as_of(run: Run, step: int) -> Run:
    """The run as it stood once ``step`` was logged."""
    scalars = run.scalars[run.scalars["step"] <= step].reset_index(drop=True)
    present = set(scalars["tag"].unique())
    return Run(run.path, run.format, scalars, {tag: role for tag, role in run.roles.items() if tag in present},
               meta=deepcopy(run.meta), warnings=list(run.warnings), name=run.name, generations=run.generations)


def replay(run: Run, looks: int) -> tuple[dict, dict, dict, np.ndarray]:
    """Per code: the finished run's finding; the logged-step index each live finding was printed at; the index
    of the first look whose diagnosis showed it; and the run's logged steps, which those indices count."""
    finished = {f.code: f for f in diagnose_run(run) if f.severity in ALARMS}
    steps = np.unique(run.scalars["step"].to_numpy())
    chosen = steps if len(steps) <= looks else steps[np.unique(np.linspace(0, len(steps) - 1, looks).astype(int))]
    certainty, printed, first_seen = Certainty(), {}, {}
    for step in chosen:
        partial = as_of(run, int(step))
        found = diagnose_run(partial)
        index = int(np.searchsorted(steps, step))
        for finding in found:
            if finding.severity in ALARMS:
                first_seen.setdefault(finding.code, index)
        for finding in certainty.newly_certain(partial, found):
            printed.setdefault(finding.code, (index, finding))
    return finished, printed, first_seen, steps


def named_index(finding, steps: np.ndarray) -> int | None:
    """The index among the run's logged steps of the step a finding names, or None."""
    if finding.step is None:
        return None
    return min(int(np.searchsorted(steps, finding.step)), len(steps) - 1)


def delays(looks: int) -> None:
    per_symptom: dict[str, dict] = defaultdict(lambda: {"finished": 0, "printed": 0, "delay": [], "share": []})
    too_early: list[tuple[str, str]] = []
    runs_replayed = 0
    for labelled in default_sets():
        if labelled.name not in FIXTURE_SETS:
            continue
        labels, _ = read_labels(labelled.labels)
        for relative in sorted(labels):
            for run in _runs_of(labelled.data / relative):
                runs_replayed += 1
                finished, printed, first_seen, steps = replay(run, looks)
                for code, finding in finished.items():
                    entry = per_symptom[finding.symptom]
                    entry["finished"] += 1
                    if code not in printed:
                        continue
                    entry["printed"] += 1
                    at, live = printed[code]
                    start = named_index(live, steps)
                    start = first_seen.get(code, at) if start is None else start
                    entry["delay"].append(max(at - start, 0))
                    entry["share"].append((at + 1) / len(steps))
                for code, (_, live) in printed.items():
                    if code not in finished:
                        too_early.append((f"{labelled.name}/{relative}", f"{code} {live.symptom} at step {live.step}"))
    print(f"{runs_replayed} real runs replayed, looks at every logged step up to {looks} per run\n")
    print("| symptom | finished runs show it | printed live | delay, logged steps (median / p90 / max) "
          "| printed at (median share of the run) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for symptom, entry in sorted(per_symptom.items()):
        found = entry["delay"]
        spread = (f"{statistics.median(found):.0f} / {np.percentile(found, 90):.0f} / {max(found)}" if found else "–")
        share = f"{statistics.median(entry['share']):.0%}" if entry["share"] else "–"
        print(f"| {symptom} | {entry['finished']} | {entry['printed']} | {spread} | {share} |")
    print(f"\nprinted live but not a finding of the finished run: {len(too_early)}")
    for where, what in too_early:
        print(f"  {where}: {what}")


def watch_at_scale(n_runs: int) -> None:
    from archive import archive
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    root = archive(n_runs)
    watch = Watch([str(root)], Config(), lambda run, finding: None)
    timings = {}
    started = time.perf_counter()
    watch.look()
    timings["first look (read + diagnose every run)"] = time.perf_counter() - started
    started = time.perf_counter()
    watch.look()
    timings["look, nothing changed"] = time.perf_counter() - started
    event_file = next(root.rglob("*tfevents*"))
    size = os.path.getsize(event_file)
    try:
        with open(event_file, "ab") as handle:
            writer = RecordWriter(handle)
            for step in range(100_000, 100_050):
                value = summary_pb2.Summary.Value(tag="train/loss", simple_value=0.5)
                writer.write(event_pb2.Event(step=step, wall_time=time.time(),
                                             summary=summary_pb2.Summary(value=[value])).SerializeToString())
        started = time.perf_counter()
        watch.look()
        timings["look, 50 records appended to one TensorBoard run"] = time.perf_counter() - started
    finally:
        os.truncate(event_file, size)  # the archive stays as archive.py wrote it
    print(f"\nthe watch over {len(watch.runs)} runs ({n_runs} in the archive):\n")
    print("| look | seconds |\n| --- | ---: |")
    for what, seconds in timings.items():
        print(f"| {what} | {seconds:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--looks", type=int, default=120, help="looks per run at most (default 120)")
    parser.add_argument("--runs", type=int, default=1000, help="runs the watch follows at once (default 1,000)")
    parser.add_argument("--only", choices=("delay", "scale"), help="run one of the two measurements")
    args = parser.parse_args()
    if args.only != "scale":
        delays(args.looks)
    if args.only != "delay":
        watch_at_scale(args.runs)


if __name__ == "__main__":
    main()
