"""How curvedoc's cost grows with the input: diagnosis of long curves and reading of large free-text logs.

    python benchmarks/bench_scaling.py [--points 1000000]
    python benchmarks/bench_scaling.py --read-diagnose [--largest 10000000]

Each case runs at a tenth of the size and at the full size; linear work takes about 10× as long at 10× the size,
a quadratic pattern 100×. Beside it, the time of what a user would otherwise run on the same data: a pandas
rolling median over the curve (the least anyone does to read a noisy loss), and a regular-expression loop over
the log's lines. The tests check what these inputs give; how long they take is measured here, not asserted there.
Best of three, in this process.

``--read-diagnose``: a TensorBoard event file (bench_tensorboard's layout: four tags, a point per record) read and
diagnosed end to end, at 10⁴ points and ten times more up to ``--largest``, and a run of 500 tags × 2,000 points,
each in a fresh subprocess: seconds, the growth from the size before (10× the points: linear work takes ~10×),
and the peak memory per point over the interpreter's own (the data itself is 24 bytes: step, wall time, value).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent))


def best_of_three(work: Callable[[], object]) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def noisy_run(points: int):
    """A falling minibatch loss with one spike, a validation curve that overfits, a train accuracy."""
    rng = np.random.default_rng(0)
    steps = np.arange(points)
    loss = (0.05 + 2.25 * np.exp(-steps / (points / 6))) * np.exp(0.3 * rng.standard_normal(points))
    loss[int(points * 0.7)] = 100.0
    val_steps = np.linspace(points / 200, points - 1, 200).astype(int)
    builder = RunBuilder("/synthetic", "benchmark")
    builder.add("train/loss", steps, loss)
    builder.add("train/acc", steps, rng.binomial(32, 0.8, points) / 32)
    builder.add("val/loss", val_steps, np.r_[np.linspace(2.0, 0.5, 120), np.linspace(0.52, 0.8, 80)])
    return builder.build(), loss


def text_log(folder: Path, lines: int) -> Path:
    path = folder / f"train_{lines}.log"
    with open(path, "w") as handle:
        handle.writelines(f"Epoch {step // 1000}: iter {step} | loss {2.3 * np.exp(-step / lines):.4f} "
                          f"| lr 1.0e-03 | grad_norm {1 + step % 7 / 10:.2f}\n" for step in range(lines))
    return path


PAIR = re.compile(r"(\w+)\s+([-+]?\d*\.?\d+(?:e[-+]?\d+)?)")


def regex_loop(path: Path) -> None:
    with open(path) as handle:
        for line in handle:
            PAIR.findall(line)


CHILD = """
import resource, sys, time
import curvedoc, curvedoc.readers.tensorboard, curvedoc.diagnose
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
runs = curvedoc.diagnose(sys.argv[1], config=curvedoc.Config())
seconds = time.perf_counter() - started
points = sum(len(run.scalars) for run in runs)
print(seconds, points, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline) * 1024)
"""


def many_tags_events(tags: int, points: int):
    from tensorboard.compat.proto import event_pb2, summary_pb2

    yield event_pb2.Event(wall_time=1.7e9, file_version="brain.Event:2").SerializeToString()
    rng = np.random.default_rng(0)
    for step in range(points):
        values = 1 / (1 + step / 100) + 0.01 * rng.standard_normal(tags)
        yield event_pb2.Event(wall_time=1.7e9 + step, step=step, summary=summary_pb2.Summary(value=[
            summary_pb2.Summary.Value(tag=f"metric_{tag}/loss", simple_value=float(values[tag]))
            for tag in range(tags)])).SerializeToString()


def read_diagnose(largest: int) -> None:
    import subprocess

    from bench_tensorboard import DATA, scalar_events, write_records

    cases = []
    points = 10_000
    while points <= largest:
        cases.append((f"{points:,} points, 4 tags", DATA / f"growth_{points}" / "events.out.tfevents.1.bench",
                      lambda count=points: scalar_events(count)))
        points *= 10
    cases.append(("500 tags × 2,000 points", DATA / "growth_500x2000" / "events.out.tfevents.1.bench",
                  lambda: many_tags_events(500, 2000)))
    print("| case | seconds | × the size before | peak bytes / point |")
    print("| --- | ---: | ---: | ---: |")
    previous = None
    for label, path, events in cases:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_records(path, events())
        seconds, points, grown = subprocess.run([sys.executable, "-c", CHILD, str(path.parent)], capture_output=True,
                                                text=True, check=True).stdout.split()
        seconds, points = float(seconds), int(points)
        growth = f"{seconds / previous:.1f}×" if previous and "tags ×" not in label else "–"
        print(f"| {label} | {seconds:.2f} | {growth} | {int(grown) / points:.0f} |", flush=True)
        previous = seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--read-diagnose", action="store_true", help="read + diagnose event files of growing size")
    parser.add_argument("--largest", type=int, default=10_000_000, help="largest event file (--read-diagnose)")
    arguments = parser.parse_args()
    if arguments.read_diagnose:
        read_diagnose(arguments.largest)
        return
    size = arguments.points
    rows = []
    for points in (size // 10, size):
        run, loss = noisy_run(points)
        ours = best_of_three(lambda: diagnose_run(run))
        theirs = best_of_three(lambda: pd.Series(loss).rolling(101, center=True).median())
        rows.append(("diagnose (all rules)", points, ours, "pandas rolling median", theirs))
    with tempfile.TemporaryDirectory() as folder:
        for lines in (size // 10, size):
            path = text_log(Path(folder), lines)
            ours = best_of_three(lambda: curvedoc.load(path))
            theirs = best_of_three(lambda: regex_loop(path))
            rows.append(("read text log", lines, ours, "regex loop over lines", theirs))
    print("| case | points/lines | curvedoc s | × at a tenth | baseline | baseline s | curvedoc / baseline |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: |")
    for index, (case, count, ours, baseline, theirs) in enumerate(rows):
        growth = f"{ours / rows[index - 1][2]:.1f}×" if index % 2 else "–"
        print(f"| {case} | {count:,} | {ours:.2f} | {growth} | {baseline} | {theirs:.2f} | {ours / theirs:.2f}× |")


if __name__ == "__main__":
    main()
