"""``curvedoc watch``: the same rules on runs that are still being written, so a silent failure is reported at the
step it becomes certain rather than when someone looks at the finished curves.

Each look lists the runs under the watched paths again (a run that appears is picked up), reads again only the runs
whose files changed since the last look (size or modification time) — of a TensorBoard run only the records
appended since, from the end of the last complete one — and diagnoses them with the same rules and
settings as ``curvedoc PATH``. A half-written last record is what a growing file looks like: it is read as far as
it is complete, and the next look reads on. A finding is printed once, when it is certain, as its rule declares
(``live`` and ``settled_share`` in the registry, curvedoc.rules.LIVE):

- a NaN/Inf at once (nothing that comes later can take it back);
- an event (a spike, a gradient explosion) once it has held, at the same step, over ``confirm`` looks in a row
  that each brought new points;
- a finding about the whole curve's shape (flat, at chance, a plateau, overfitting …) once it has also held
  while the run doubled, with at least 20 points logged (and, in a callback that knows the planned length, once a
  quarter of it is done): a flat start that starts to fall after a slow warmup, or a best validation step that
  moves, is never printed; a shape saying the curve stopped (flat, at chance, a plateau) not while the latest half
  of that curve still trends beyond its noise, however slowly; a jump not before its curve has JUMP_CONTEXT
  points to measure its noise against;
- nothing but a NaN while the run is still too short to have a shape; notes (info) only in the final report.

On exit — Ctrl-C, no new data for ``idle`` seconds, or ``--once`` — the report is the one ``curvedoc PATH`` gives
on the logs as they are then: the same runs read afresh, the same findings.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from curvedoc.audit.cache import source_files, stamp
from curvedoc.config import Config
from curvedoc.diagnose import diagnose_run
from curvedoc.errors import CurvedocError
from curvedoc.features import rank_trend_z
from curvedoc.model import Run
from curvedoc.readers import Source, discover, follower, limits, read_source
from curvedoc.rules import AT_ONCE, CONFIRMED, INFO, JUMP, REGISTRY, WHOLE_RUN, Finding, Rule

# Each rule declares when its finding is certain on a growing run (curvedoc.rules.LIVE); these are the numbers.
# A whole-run shape: once it has held while the run grew GROWN times, past PLANNED_SHARE of the planned steps where
# they are known, and not before the run's longest curve has WHOLE_RUN_POINTS points (doubling 3 points says little).
GROWN = 2.0
PLANNED_SHARE = 0.25
WHOLE_RUN_POINTS = 20
# A shape saying the curve stopped moving is not certain while the part of the curve it speaks of
# (Rule.settled_share) still has a rank trend beyond this many standard deviations: the curve is moving, however
# slowly (a loss falling 4% over its first 40 steps is flat to a finished run's rule, and falls on). A low bar: a
# curve that only wanders crosses it at some looks, which costs a look or two of delay, never a wrong alert.
STILL_MOVING_Z = 2.0
# A jump: once the curve it jumps on has this many points (one at step 9 of a noisy minibatch loss, judged against
# 9 points, is often the first of many as large)
JUMP_CONTEXT = 50


@dataclass
class Sighting:
    looks: int = 0  # consecutive looks with new data in which the finding was there, at the same step
    since: int = 0  # the run's last step when this streak of looks began
    printed: bool = False


class Certainty:
    """Which findings of a run that is still growing are certain: a NaN/Inf at once, any other once it has held
    at the same step over ``confirm`` looks in a row (see the module docstring). Shared by the watch and the
    framework callbacks (curvedoc.integrations)."""

    def __init__(self, confirm: int = 2):
        self.confirm = confirm
        self.sightings: dict[str, dict[tuple, Sighting]] = {}  # per run path: a look touches only its run's

    def newly_certain(self, run: Run, findings: list[Finding], planned_end: int | None = None) -> list[Finding]:
        """The findings of this look at ``run`` that have just become certain (each is returned once). A run still
        too short to have a shape (``run.insufficient``) is certain of nothing but a NaN. ``planned_end``: the
        step training is set to end at, where known."""
        last_step = run_end(run)
        counts = run.point_counts()
        far_enough = ((planned_end is None or last_step >= PLANNED_SHARE * planned_end)
                      and max(counts.values(), default=0) >= WHOLE_RUN_POINTS)
        sightings = self.sightings.setdefault(run.path, {})
        seen, certain = set(), []
        for finding in findings:
            if finding.severity == INFO:
                continue  # notes (a class count not recorded) belong in the report, not in a live alert
            key = finding_key(finding)
            seen.add(key)
            sighting = sightings.setdefault(key, Sighting())
            if sighting.looks == 0:
                sighting.since = last_step
            sighting.looks += 1
            rule = REGISTRY.get(finding.code)
            live = rule.live if rule is not None else CONFIRMED
            if sighting.printed or (run.insufficient and live != AT_ONCE):
                continue
            if live == AT_ONCE or self._held(run, finding, rule, sighting, last_step, far_enough, counts):
                sighting.printed = True
                certain.append(finding)
        for key, sighting in sightings.items():
            if key not in seen and not sighting.printed:
                sighting.looks = 0  # retracted by the newer points: it has to hold again from scratch
        return certain

    def _held(self, run: Run, finding: Finding, rule: Rule | None, sighting: Sighting, last_step: int,
              far_enough: bool, counts: dict[str, int]) -> bool:
        if sighting.looks < self.confirm:
            return False
        if rule is None:
            return True
        if rule.live == WHOLE_RUN and not (far_enough and last_step >= GROWN * max(sighting.since, 1)):
            return False
        if rule.settled_share is not None and still_moving(run, finding, rule.settled_share):
            return False
        first_curve = finding.tags[0] if finding.tags else None
        return not (rule.live == JUMP and counts.get(first_curve, 0) <= JUMP_CONTEXT)


def still_moving(run: Run, finding: Finding, share: float) -> bool:
    """Whether the last ``share`` of the first curve ``finding`` names still trends beyond its noise."""
    if not finding.tags or finding.tags[0] not in run.roles:
        return False
    values = run.series(finding.tags[0])["value"].to_numpy()
    values = values[np.isfinite(values)]
    return abs(rank_trend_z(values[round(len(values) * (1 - share)):])) > STILL_MOVING_Z


def run_end(run: Run) -> int:
    steps = run.scalars["step"]
    return int(steps.max()) if len(steps) else 0


@dataclass
class _Followed:
    reader: Callable[[Source], list[Run]]
    stamps: dict = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)


def finding_key(finding: Finding) -> tuple:
    return finding.code, finding.step if finding.step is not None else (finding.step_range or (None,))[0]


class Watch:
    """Follows every run under ``paths``; ``on_finding(run, finding)`` is called once per certain finding."""

    def __init__(self, paths: list[str], config: Config, on_finding: Callable[[Run, Finding], None],
                 confirm: int = 2):
        self.paths = paths
        self.config = config
        self.on_finding = on_finding
        self.certainty = Certainty(confirm)
        self.followed: dict[tuple[str, str], _Followed] = {}

    def look(self) -> bool:
        """One look at every watched path; True when any run's files changed (or a run appeared)."""
        changed = False
        for path in self.paths:
            try:
                found = discover(path)
            except CurvedocError:
                continue  # not there yet (a run about to start): the next look tries again
            for source in found.sources:
                changed |= self._look_at(source)
        return changed

    def _look_at(self, source: Source) -> bool:
        key = (source.family, str(source.path))
        stamps = stamp(source_files(source))
        if key not in self.followed:
            self.followed[key] = _Followed(follower(source))
        followed = self.followed[key]
        if followed.runs and followed.stamps == stamps:
            return False
        try:
            with limits.using(self.config.limits):
                runs = read_source(source, followed.reader)
        except CurvedocError:
            return False  # nothing complete in it yet: still being written
        self.config.apply(runs, strict=False)
        followed.stamps, followed.runs = stamps, runs
        for run in runs:
            self._judge(run)
        return True

    def _judge(self, run: Run) -> None:
        for finding in self.certainty.newly_certain(run, diagnose_run(run, self.config.rules)):
            self.on_finding(run, finding)

    @property
    def runs(self) -> list[Run]:
        return [run for followed in self.followed.values() for run in followed.runs]


def finding_line(run: Run, finding: Finding, fmt: str) -> str:
    """One finding as the watch prints it: a line of text, or one JSON object (JSON Lines)."""
    if fmt == "json":
        return json.dumps({"event": "finding", "run": run.path, "time": time.time(), **finding.to_dict()},
                          ensure_ascii=False)
    return (f"{time.strftime('%H:%M:%S')} {run.name}: {finding.severity.upper()} {finding.code} {finding.symptom} "
            f"{finding.where()} — {finding.title}\n    check: {finding.cheapest_check}")


def follow(watch: Watch, interval: float, idle: float | None, stop_when: Callable[[], bool] = lambda: False,
           clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> str:
    """Looks every ``interval`` seconds until ``stop_when()`` or, with ``idle``, no run changed for that long;
    returns why it stopped."""
    last_change = clock()
    while True:
        if watch.look():
            last_change = clock()
        if stop_when():
            return "finding"
        if idle is not None and clock() - last_change >= idle:
            return "idle"
        sleep(interval)
