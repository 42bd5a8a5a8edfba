"""Framework callbacks that run curvedoc's rules while a model trains (one module per framework).

Importing curvedoc or this package imports no framework: each module imports its own only when it is used.
The shared part is :class:`LiveRun`: the values a framework logs, kept per tag, turned into a run and diagnosed
with the same rules as ``curvedoc PATH``, within a share of training's wall time (OVERHEAD).
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from curvedoc.config import Config
from curvedoc.diagnose import diagnose_run
from curvedoc.model import Run, RunBuilder
from curvedoc.rules import SEVERITIES, Finding
from curvedoc.watch import Certainty

# The share of training's wall time the rules may take: the run is diagnosed again only while the time spent on
# diagnosis stays within it (and at once on a NaN). Slow steps get every log event judged; a millisecond step of a
# toy model, every few hundred; a million-point run, whose diagnosis takes a second or two, every few minutes.
OVERHEAD = 0.01


class LiveRun:
    """A run being trained: ``log(step, values)`` with what the framework logs; returns the findings that have
    just become certain."""

    def __init__(self, name: str, config: Config | None = None, model_config: Mapping[str, Any] | None = None,
                 planned_end: int | None = None, overhead: float | None = OVERHEAD,
                 clock: Callable[[], float] = time.perf_counter):
        """``overhead``: the share of wall time diagnosis may take (None: diagnose at every log event)."""
        self.name = name
        self.planned_end = planned_end
        self.overhead = overhead
        self.clock = clock
        self._started: float | None = None
        self._spent = 0.0
        self.config = config or Config()
        self.model_config = dict(model_config or {})
        self.points: dict[str, tuple[list[int], list[float]]] = {}
        self.certainty = Certainty()
        self.run: Run | None = None

    def log(self, step: int, values: Mapping[str, Any]) -> list[Finding]:
        now = self.clock()
        if self._started is None:
            self._started = now
        nonfinite = False
        for tag, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            steps, numbers = self.points.setdefault(tag, ([], []))
            steps.append(int(step))
            numbers.append(float(value))
            nonfinite |= not math.isfinite(value)
        if not nonfinite and self.overhead is not None and self._spent > self.overhead * (now - self._started):
            return []
        first = self.run is None
        self.run = self.build()
        found = self.certainty.newly_certain(self.run, diagnose_run(self.run, self.config.rules), self.planned_end)
        if not first:  # the first one also pays for imports (pandas, the rule modules): a one-time cost
            self._spent += self.clock() - now
        return found

    def build(self) -> Run:
        builder = RunBuilder(self.name, "live")
        for tag, (steps, numbers) in self.points.items():
            builder.add(tag, np.array(steps), np.array(numbers))
        builder.add_config("model config", self.model_config)
        run = builder.build()
        self.config.apply([run], strict=False)
        return run


def warm_up() -> None:
    """Imports what a diagnosis needs (pandas, every rule module) before training starts, not in its first step."""
    live = LiveRun("warm-up", overhead=None)
    for step in range(5):
        live.log(step, {"loss": 1.0 / (step + 1)})


class Reporting:
    """What the framework callbacks share: their settings, the live run (each framework makes it when training
    starts) and the certain findings, each announced as it comes."""

    def _setup(self, stop_on: str | None, config: Config | None) -> None:
        self.stop_on = stop_on
        self.config = config
        self.live: LiveRun | None = None
        self.findings: list[Finding] = []
        warm_up()  # pandas and the rule modules are imported now, not inside the first training step's log event

    def _report(self, step: int, values: Mapping[str, Any],
                writers: Callable[[], Iterable[Any]] = lambda: ()) -> bool:
        """Gives the live run what was logged at ``step`` and announces each finding that became certain (through
        the TensorBoard ``writers`` too); True when one is as severe as ``stop_on``: training should stop."""
        stop = False
        for finding in self.live.log(step, values) if self.live is not None else ():
            self.findings.append(finding)
            announce(finding, writers())
            stop |= at_least(self.stop_on, finding)
        return stop


def at_least(severity: str | None, finding: Finding) -> bool:
    """Whether ``finding`` is as severe as ``severity`` (None: never)."""
    return severity is not None and SEVERITIES.index(finding.severity) <= SEVERITIES.index(severity)


def announce(finding: Finding, text_writers: Iterable[Any] = ()) -> None:
    """A certain finding, told where the user looks: the ``curvedoc`` logger (a warning), a W&B alert when the
    run logs to W&B (the tracker's own notification, by e-mail or Slack as the user set it up), and a text summary
    ``curvedoc/<code>`` at the finding's step through each TensorBoard writer given (``add_text``), so it shows in
    the TensorBoard the run is watched in."""
    logging.getLogger("curvedoc").warning(describe(finding))
    for writer in text_writers:
        try:
            writer.add_text(f"curvedoc/{finding.code}", describe(finding), global_step=finding.step)
        except Exception as exc:  # noqa: BLE001 — a summary that cannot be written must not stop training
            logging.getLogger("curvedoc").debug("TensorBoard text not written: %s", exc)
    wandb = sys.modules.get("wandb")
    run = getattr(wandb, "run", None)
    if run is None:
        return
    level = wandb.AlertLevel.ERROR if finding.severity == "error" else wandb.AlertLevel.WARN
    try:
        run.alert(title=f"curvedoc {finding.code} {finding.symptom}", text=describe(finding), level=level)
    # an alert that cannot be sent (offline, no network) must not stop training
    except Exception as exc:  # noqa: BLE001
        logging.getLogger("curvedoc").debug("W&B alert not sent: %s", exc)


def describe(finding: Finding) -> str:
    where = f" at {finding.where()}" if finding.where() else ""
    return (f"curvedoc {finding.code} {finding.symptom}{where}: {finding.title}. "
            f"Cheapest check: {finding.cheapest_check}")
