"""Speed of ``curvedoc audit`` over an archive of runs: one worker against two, and a second, cached audit.

    python benchmarks/bench_audit.py [--runs 2000]     # --runs 200 for a quick check
    python benchmarks/bench_audit.py --pages           # also -o DIR: an HTML and a Markdown page per run

Generates (once, into benchmarks/data/audit_archive/, git-ignored; see archive.py) an archive of mixed formats,
~5,000 points over 5 tags per run, then runs the real command line in a fresh subprocess each time:

1. ``-j 1`` with an empty cache folder;
2. ``-j 2`` with an empty cache folder;
3. ``-j 2`` again with the cache that 2 left: nothing changed, so every run should come from the cache.

Printed per audit: wall seconds, runs/s, CPU seconds of the process tree and so how many cores it got (the
machine may be shared: just before each audit two busy loops measure how many cores are free), the peak memory
of the command's own process (its ``ru_maxrss``) and of the whole process tree (command + workers, the sum of
their RSS sampled every 0.2 s) with the largest single process seen; and whether the three audits gave the same
index (apart from what came from the cache). Then the ratio of 1 to 2 (aim ≥ 1.8 on 2 cores) and of 3 to 2
(aim ≤ 5 %), and what the cached audit is made of: interpreter start and imports, discovery alone, and a
profile of the cached audit by stage (discovery, cache look-ups, cross-run checks, index rendering).

With ``--pages``, the same audit with ``-o DIR`` at ``-j 1`` and ``-j 2`` (empty caches): its time against the
plain ``-j 2`` audit's (aim ≤ 2×) and its own ``-j 1`` / ``-j 2`` (aim ≥ 1.8).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from archive import archive

# The command line in a child that records its own peak RSS on the way out (sys.exit included).
CHILD = """
import atexit, json, resource, sys
report = sys.argv[1]
atexit.register(lambda: open(report, "w").write(json.dumps(
    {"self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss})))
from curvedoc.cli import main
sys.exit(main(sys.argv[2:]))
"""
SAMPLE_SECONDS = 0.2
# functions of the cached audit whose cumulative time tells where it goes, by the stage they are
STAGES = {
    "discovery": ("curvedoc/readers/__init__.py", "discover"),
    "cache look-ups": ("curvedoc/audit/cache.py", "get"),
    "cross-run checks": ("curvedoc/audit/crossrun.py", "cross_run_findings"),
    "index rendering": ("curvedoc/report/index", "render_index"),
    "whole audit()": ("curvedoc/audit/__init__.py", "audit"),
}


class TreeUsage:
    """Peak RSS and CPU time of a process and its descendants, sampled in a thread while it runs.

    CPU time is summed per process from its last sample (up to 0.2 s of a process's end can be missed): with
    wall time it tells how much of the machine the audit got, which on a shared machine is not all of it.
    """

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.peak_total = self.peak_single = 0
        self.cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                processes = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                return
            sizes = []
            for process in processes:
                try:
                    with process.oneshot():
                        sizes.append(process.memory_info().rss)
                        times = process.cpu_times()
                except psutil.Error:
                    continue  # ended between listing and sampling
                self.cpu[process.pid] = times.user + times.system
            if sizes:
                self.peak_total = max(self.peak_total, sum(sizes))
                self.peak_single = max(self.peak_single, max(sizes))
            self._stop.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_audit(root: Path, jobs: int, cache_dir: Path, scratch: Path, pages: bool = False) -> dict:
    report, output = scratch / f"rusage-{time.monotonic_ns()}.json", scratch / "index.json"
    pages_dir = scratch / f"pages-{time.monotonic_ns()}"
    command = [sys.executable, "-c", CHILD, str(report), "audit", str(root), "-j", str(jobs),
               "--cache-dir", str(cache_dir), "--format", "json", "--fail-on", "never"]
    command += ["-o", str(pages_dir)] if pages else []
    with open(output, "w") as stdout:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, text=True)
        usage = TreeUsage(process.pid)
        _, errors = process.communicate()
        seconds = time.perf_counter() - started
        usage.stop()
    if process.returncode != 0:
        sys.exit(f"curvedoc audit -j {jobs} failed ({process.returncode}):\n{errors[-3000:]}")
    index = json.loads((pages_dir / "index.json" if pages else output).read_text())
    return {"seconds": seconds, "self_mb": json.loads(report.read_text())["self_kb"] / 1024,
            "tree_mb": usage.peak_total / 2**20, "worker_mb": usage.peak_single / 2**20,
            "cpu": sum(usage.cpu.values()), "index": index}


def counts(index: dict) -> str:
    """What the audit found, from its JSON index, to see that every audit saw the same archive."""
    totals = index["totals"]
    found = ", ".join(f"{key} {totals[key]}" for key in ("runs", "failing", "warnings", "unreadable", "cached"))
    return f"{found}, cross-run {len(index['cross_run'])}"


def differences(first: dict, second: dict) -> list[str]:
    """Top-level keys of two JSON indexes that differ, apart from how many runs came from the cache."""
    def comparable(index: dict) -> dict:
        totals = {key: value for key, value in index["totals"].items() if key not in {"cached", "analysed"}}
        return {**index, "totals": totals}

    one, two = comparable(first), comparable(second)
    return [key for key in sorted(one.keys() | two.keys()) if one.get(key) != two.get(key)]


def _spin(seconds: float) -> float:
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        pass
    return time.process_time() - cpu


def cores_free(seconds: float = 3.0) -> float:
    """Cores two busy processes get right now: on a shared machine, the most a 2-worker audit can get."""
    with multiprocessing.Pool(2) as pool:
        return sum(pool.map(_spin, [seconds, seconds])) / seconds


def seconds_of(code: str) -> float:
    """Wall time of a fresh interpreter running ``code``."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def cached_breakdown(root: Path, cache_dir: Path, scratch: Path) -> list[tuple[str, float]]:
    """Cumulative seconds per stage of a cached audit, profiled in a child (cProfile's overhead included)."""
    profile = scratch / "cached.prof"
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "curvedoc.cli", "audit", str(root),
                    "-j", "2", "--cache-dir", str(cache_dir), "--format", "json", "--fail-on", "never"],
                   stdout=subprocess.DEVNULL, check=True)
    stats = pstats.Stats(str(profile)).stats
    found = []
    for stage, (file_part, function) in STAGES.items():
        total = sum(entry[3] for (filename, _, name), entry in stats.items()
                    if name == function and file_part in filename.replace(os.sep, "/"))
        found.append((stage, total))
    total = max(entry[3] for entry in stats.values())
    return [("whole process (profiled)", total), *found]


def measured_code() -> str:
    """The commit measured, and whether curvedoc's files had uncommitted changes (numbers then are provisional)."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    changed = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "curvedoc"], capture_output=True,
                             text=True)
    return f"{commit.stdout.strip() or 'unknown'}{' + uncommitted changes' if changed.stdout.strip() else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs in the archive (default 2,000)")
    parser.add_argument("--pages", action="store_true", help="also audit with -o DIR (a page per run)")
    args = parser.parse_args()
    root = archive(args.runs)
    manifest = json.loads((root.parent / f"{root.name}.json").read_text())
    files = sum(1 for path in root.rglob("*") if path.is_file())
    print(f"archive: {root} ({args.runs} runs, {files} files, generated in {manifest['seconds']:.0f} s)")
    print(f"curvedoc: {measured_code()}")
    print(f"machine: {os.cpu_count()} cores; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="curvedoc-bench-") as scratch_name:
        scratch = Path(scratch_name)
        results = {}
        audits = [("-j 1, empty cache", 1, "cache1", False), ("-j 2, empty cache", 2, "cache2", False),
                  ("-j 2, cached", 2, "cache2", False)]
        audits += [("-j 1, pages", 1, "cache3", True), ("-j 2, pages", 2, "cache4", True)] if args.pages else []
        for label, jobs, cache, pages in audits:
            free = cores_free()
            results[label] = result = run_audit(root, jobs, scratch / cache, scratch, pages)
            print(f"{label:18} {result['seconds']:8.2f} s {args.runs / result['seconds']:8.1f} runs/s   "
                  f"CPU {result['cpu']:7.1f} s ({result['cpu'] / result['seconds']:.2f} cores, {free:.2f} free)   "
                  f"main {result['self_mb']:5.0f} MB, tree peak {result['tree_mb']:5.0f} MB "
                  f"(largest process {result['worker_mb']:.0f} MB)   [{counts(result['index'])}]", flush=True)
        one, two, cached = (results[label]["seconds"] for label in list(results)[:3])
        first_label, *later = list(results)[:3]  # pages add report links to the index: compared apart
        differing = {label: differences(results[first_label]["index"], results[label]["index"]) for label in later}
        for label, keys in differing.items():
            if keys:
                print(f"index of {label} differs from {first_label}'s in {', '.join(keys)}; both kept in {root.parent}")
                for kept in (first_label, label):
                    slug = kept.replace(" ", "").replace(",", "_")
                    (root.parent / f"{root.name}-index{slug}.json").write_text(json.dumps(results[kept]["index"]))
        if not any(differing.values()):
            print("the three audits gave the same index")
        print(f"speed-up -j 1 / -j 2: {one / two:.2f} (aim >= 1.8)")
        print(f"cached / first (-j 2): {100 * cached / two:.1f} % (aim <= 5 %)")
        if args.pages:
            paged_one, paged_two = results["-j 1, pages"]["seconds"], results["-j 2, pages"]["seconds"]
            print(f"with pages / without (-j 2): {paged_two / two:.2f}x (aim <= 2)")
            print(f"with pages, speed-up -j 1 / -j 2: {paged_one / paged_two:.2f} (aim >= 1.8)")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("what the cached audit is made of:")
        print(f"  {'interpreter + import curvedoc.cli':34} {seconds_of('import curvedoc.cli'):6.2f} s")
        print(f"  {'interpreter + import the audit':34} "
              f"{seconds_of('import curvedoc.audit, curvedoc.audit_cli, curvedoc.report.index'):6.2f} s")
        discovery = seconds_of(f"from curvedoc.readers import discover; discover({str(root)!r})")
        print(f"  {'interpreter + discovery alone':34} {discovery:6.2f} s")
        for stage, seconds in cached_breakdown(root, scratch / "cache2", scratch):
            print(f"  {stage:34} {seconds:6.2f} s (cumulative, under cProfile)")


if __name__ == "__main__":
    main()
