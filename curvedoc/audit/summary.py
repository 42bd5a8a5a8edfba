"""What an audit keeps of each run once it is diagnosed: a few kilobytes, never the curves.

An archive of thousands of runs cannot be held in memory as :class:`~curvedoc.model.Run` objects, so each run is
read, diagnosed and reduced to a :class:`RunSummary` (its verdict, findings, hyperparameters, start and end times
and where its main metrics ended) in the worker that read it. Summaries are what the cache stores, what Dask
ships back, what the cross-run checks compare and what the index reports list.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from curvedoc.model import Run
from curvedoc.roles import Role
from curvedoc.rules import Finding

# The roles whose ends a run's summary records, in the order the one a person compares runs by is picked: a held-out
# curve, else the main score (an agent's reward: its losses are a policy's and a value function's objectives, which
# say nothing of how well it does), else the train curves. Lower is better for losses, higher for the rest.
COMPARED_ROLES = (Role.VAL_LOSS, Role.VAL_ACC, Role.TEST_LOSS, Role.TEST_ACC, Role.SCORE, Role.TRAIN_LOSS,
                  Role.TRAIN_ACC)
LOWER_IS_BETTER = {Role.VAL_LOSS.value, Role.TEST_LOSS.value, Role.TRAIN_LOSS.value}


@dataclass
class MetricEnd:
    """Where one role's main curve ended, and how noisy it was there (in the curve's own units)."""

    tag: str
    final: float  # median of the last tenth of the finite points (at least 3): robust to the last minibatch
    best: float  # lowest value of a loss, highest of an accuracy
    best_step: int
    last_step: int
    noise: float  # robust standard deviation of the point-to-point noise of the curve
    n_points: int


@dataclass
class RunSummary:
    path: str  # as the user would type it (the URL for a remote archive)
    name: str
    format: str
    verdict: str  # failing / warnings / insufficient / healthy (see curvedoc.report.verdict)
    insufficient: str | None = None  # why the run holds too little to judge (see Run.insufficient)
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hparams: dict[str, Any] = field(default_factory=dict)  # JSON-safe
    start_time: float | None = None  # unix seconds: the format's own record, else the first logged wall time
    end_time: float | None = None  # the last logged wall time
    n_points: int = 0
    roles: dict[str, str] = field(default_factory=dict)  # tag → role
    n_classes: int | None = None
    metrics: dict[str, MetricEnd] = field(default_factory=dict)  # role → end of its main curve
    reports: dict[str, str] = field(default_factory=dict)  # format → this run's own report, relative to the index

    def to_dict(self) -> dict[str, Any]:
        # Field by field, not dataclasses.asdict: its deep copy of the hyperparameters cost the audit's main
        # process a second per 2,000 runs. Summaries are plain data already (hparams made JSON-safe).
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["findings"] = [finding.to_dict() for finding in self.findings]
        data["metrics"] = {role: vars(end).copy() for role, end in self.metrics.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        data = dict(data)
        data["findings"] = [
            Finding(**{**item, "step_range": tuple(item["step_range"]) if item.get("step_range") else None})
            for item in data.get("findings", [])
        ]
        data["metrics"] = {role: MetricEnd(**end) for role, end in data.get("metrics", {}).items()}
        return cls(**data)

    @property
    def symptoms(self) -> set[str]:
        """The failure symptoms shown (error and warning findings; info findings are notes)."""
        return {f.symptom for f in self.findings if f.severity in {"error", "warning"}}


@dataclass
class CrossRunFinding:
    """What only a comparison of runs shows (a seed that does not reproduce, a sweep that fails the same way)."""

    code: str
    symptom: str
    severity: str
    title: str
    runs: list[str]  # paths of the runs involved, in the order that tells the story
    hparams: list[str]  # the hyperparameters involved
    evidence: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)
    cheapest_check: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Unreadable:
    path: str
    reason: str


@dataclass
class AuditResult:
    roots: list[str]
    runs: list[RunSummary]  # sorted by path: the same archive gives the same result, whatever the worker order
    cross_run: list[CrossRunFinding] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    n_cached: int = 0  # runs whose summary came from the cache
    n_analysed: int = 0  # runs read and diagnosed in this audit

    def symptom_counts(self) -> dict[str, int]:
        """Runs showing each failure symptom (a run counts once per symptom; info notes are not symptoms), most
        frequent first."""
        counts: dict[str, int] = {}
        for run in self.runs:
            for symptom in run.symptoms:
                counts[symptom] = counts.get(symptom, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def metric_ends(run: Run, curves=None) -> dict[str, MetricEnd]:
    """Where each compared role's main curve ended; roles without finite points are left out."""
    from curvedoc.features import RunCurves

    curves = curves or RunCurves(run)  # the diagnosis's own, when given: its curves are smoothed already
    ends = {}
    for role in COMPARED_ROLES:
        curve = curves.curve(role)
        if curve is None or not len(curve.finite_values):
            continue
        values = curve.finite_values
        best_index = int(np.argmin(values) if role.value in LOWER_IS_BETTER else np.argmax(values))
        ends[role.value] = MetricEnd(
            tag=curve.tag,
            final=float(np.median(curve.tail(0.1, at_least=min(3, len(values))))),
            best=float(values[best_index]),
            best_step=curve.step_at(best_index),
            last_step=int(curve.finite_steps[-1]),
            noise=float(curve.noise),
            n_points=int(len(values)),
        )
    return ends


def summarize(run: Run, curves=None) -> RunSummary:
    """The summary of a diagnosed run (``run.findings`` filled)."""
    from curvedoc.report import json_safe, verdict

    walls = run.scalars["wall_time"].to_numpy()
    finite_walls = walls[np.isfinite(walls)]
    first_wall = float(finite_walls.min()) if len(finite_walls) else None
    start = run.meta.start_time if run.meta.start_time is not None else first_wall
    return RunSummary(
        path=run.path,
        name=run.name,
        format=run.format,
        verdict=verdict(run),
        insufficient=run.insufficient,
        findings=list(run.findings),
        warnings=list(run.warnings),
        hparams=json_safe(run.meta.hparams),
        start_time=None if start is None or not math.isfinite(start) else float(start),
        end_time=float(finite_walls.max()) if len(finite_walls) else None,
        n_points=int(len(run.scalars)),
        roles={tag: role.value for tag, role in run.roles.items()},
        n_classes=run.meta.n_classes,
        metrics=metric_ends(run, curves),
    )
