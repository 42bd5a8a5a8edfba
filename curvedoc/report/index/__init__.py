"""The audit's index: one report over every run of an archive, in five formats.

A renderer module exposes ``render(index: Index) -> str``; ``INDEX_RENDERERS`` maps a ``--format`` name to its
module and ``INDEX_SUFFIXES`` a file extension to a format. What every format shares lives here, computed once per
render in :class:`Index`: the runs worst first (failing, then warnings, then healthy; within a verdict more errors,
then more warnings, then by path), the totals, the runs per symptom, the cross-run findings most severe first, each
run's key final metric, its path as shown under the audited root, and links to each run's own report.

An index of thousands of runs is read by people, so it names each run by its path under the root it was found in
(the roots are stated once) and only the machine formats (JSON, CSV) carry the full path.
"""

from __future__ import annotations

import importlib
import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from curvedoc.audit.summary import COMPARED_ROLES, AuditResult, CrossRunFinding, MetricEnd, RunSummary
from curvedoc.diagnose import SEVERITY_ORDER
from curvedoc.features import fmt as number
from curvedoc.report import (FAILING, HEALTHY, INSUFFICIENT, VERDICT_PHRASES, VERDICTS, WARNINGS, plain, verdict,
                             verdict_tally)
from curvedoc.report.markdown import VERDICT_RANK
from curvedoc.report.terminal import cells, cut

INDEX_RENDERERS = {
    "text": "curvedoc.report.index.terminal",
    "markdown": "curvedoc.report.index.markdown",
    "html": "curvedoc.report.index.html",
    "json": "curvedoc.report.index.json",
    "csv": "curvedoc.report.index.csv",
}
INDEX_SUFFIXES = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
                  ".json": "json", ".csv": "csv"}

# The metric a row shows: how the run ended on held-out data when it has any, else on its training data.
KEY_METRIC_ROLES = tuple(role.value for role in COMPARED_ROLES)


@dataclass
class IndexOptions:
    quiet: bool = False  # totals and failing runs only
    color: bool = False  # ANSI colour (terminal only: cli.wants_color decides: --color, FORCE_COLOR, NO_COLOR, TTY)
    width: int = 100  # terminal columns available
    cut_to_width: bool = True  # a terminal cuts what is wider; a file or a pipe keeps paths whole
    output: Path | None = None  # where the index is written, so links to the runs' reports can be relative to it
    report_dir: Path | None = None  # the folder RunSummary.reports are relative to; None: the index's own folder
    rows: int | None = None  # terminal: list at most this many runs with findings, then count the rest


@dataclass
class Row:
    """One run as every index format lists it."""

    summary: RunSummary
    verdict: str
    shown_path: str  # under its audited root
    n_errors: int
    n_warnings: int

    @property
    def label(self) -> str:
        """The path under its root; a store holding many runs names each by a path plus an id, so the run's own
        name follows when the path does not hold it."""
        name = self.summary.name
        return self.shown_path if name in self.shown_path else f"{self.shown_path} ({name})"

    @property
    def failures(self):
        """The error and warning findings, most severe first (info findings are notes, not symptoms)."""
        return [f for f in self.summary.findings if f.severity in ("error", "warning")]

    def findings_text(self) -> str:
        """``CODE symptom`` of each failure, as one line (a rule firing on several curves is named once); for a
        run too thin to judge, why."""
        if self.verdict == INSUFFICIENT:
            return f"{VERDICT_PHRASES[INSUFFICIENT]}: {self.summary.insufficient}"
        return ", ".join(dict.fromkeys(f"{f.code} {f.symptom}" for f in self.failures))

    @property
    def key_metric(self) -> tuple[str, MetricEnd] | None:
        return next(((role, self.summary.metrics[role]) for role in KEY_METRIC_ROLES
                     if role in self.summary.metrics), None)

    def key_metric_text(self) -> str:
        key = self.key_metric
        return f"{key[0]} {number(key[1].final)}" if key else ""


@dataclass
class Totals:
    runs: int
    failing: int
    warnings: int
    insufficient: int
    healthy: int
    unreadable: int
    cached: int
    analysed: int

    def line(self) -> str:
        """The one-line total every format states the same way."""
        counts = {FAILING: self.failing, WARNINGS: self.warnings, INSUFFICIENT: self.insufficient,
                  HEALTHY: self.healthy}
        return (f"{self.runs:,} run{'s' if self.runs != 1 else ''}: {verdict_tally(counts)}, "
                f"{self.unreadable:,} unreadable; {self.cached:,} from cache")


@dataclass
class SymptomCount:
    symptom: str
    runs: int
    severity: str  # the most severe finding of this symptom in any run


@dataclass
class Index:
    """Everything an index format shows, computed once."""

    result: AuditResult
    options: IndexOptions
    rows: list[Row] = field(init=False)
    totals: Totals = field(init=False)
    symptoms: list[SymptomCount] = field(init=False)
    cross_run: list[CrossRunFinding] = field(init=False)

    def __post_init__(self):
        result = self.result
        rows = [
            Row(run, verdict(run), shown_path(run.path, result.roots),
                sum(f.severity == "error" for f in run.findings), sum(f.severity == "warning" for f in run.findings))
            for run in result.runs
        ]
        rows.sort(key=lambda row: (VERDICT_RANK[row.verdict], -row.n_errors, -row.n_warnings, row.summary.path))
        self.rows = rows
        count = {name: sum(row.verdict == name for row in rows) for name in VERDICTS}
        self.totals = Totals(len(rows), count[FAILING], count[WARNINGS], count[INSUFFICIENT], count[HEALTHY],
                             len(result.unreadable), result.n_cached, result.n_analysed)
        severity: dict[str, str] = {}
        for run in result.runs:
            for finding in run.findings:
                known = severity.get(finding.symptom)
                if known is None or SEVERITY_ORDER[finding.severity] < SEVERITY_ORDER[known]:
                    severity[finding.symptom] = finding.severity
        self.symptoms = [SymptomCount(symptom, runs, severity[symptom])
                         for symptom, runs in result.symptom_counts().items()]
        self.cross_run = sorted(result.cross_run, key=lambda finding: (
            SEVERITY_ORDER.get(finding.severity, len(SEVERITY_ORDER)), finding.code, finding.runs))
        self._by_path = {row.summary.path: row for row in rows}

    def of_verdict(self, name: str) -> list[Row]:
        return [row for row in self.rows if row.verdict == name]

    def evidence(self, finding: CrossRunFinding) -> list[str]:
        """A cross-run finding's evidence with each run's path as the rows show it (under its audited root)."""
        shown = sorted(((path, self.shown(path)) for path in finding.runs), key=lambda pair: -len(pair[0]))
        lines = []
        for line in finding.evidence:
            for path, short in shown:
                line = line.replace(path, short)
            lines.append(line)
        return lines

    def shown(self, path: str) -> str:
        """A path (of an unreadable source) as the rows show theirs: under its audited root."""
        return shown_path(path, self.result.roots)

    def row_of(self, path: str) -> Row | None:
        """The row of a run a cross-run finding names (None for a run the audit did not list)."""
        return self._by_path.get(path)

    def link(self, summary: RunSummary, fmt: str) -> str | None:
        """The URL of the run's own report in ``fmt`` relative to where the index is written (None if there is
        none). Percent-encoded, so a report name can never become a scheme (``javascript:``) or break out of a
        Markdown link or an HTML attribute."""
        reference = summary.reports.get(fmt)
        if not reference:
            return None
        target = reference
        if self.options.report_dir is not None:
            target = os.path.join(self.options.report_dir, reference)
            if self.options.output is not None:
                target = os.path.relpath(target, Path(self.options.output).parent)
        return urllib.parse.quote(plain(Path(target).as_posix()), safe="/")


def render_index(fmt: str, result: AuditResult, options: IndexOptions | None = None) -> str:
    module = importlib.import_module(INDEX_RENDERERS[fmt])
    return module.render(Index(result, options or IndexOptions()))


def shown_path(path: str, roots: list[str]) -> str:
    """The path under the audited root that holds it, so a table of thousands of runs is not a wall of one prefix.
    With several roots the root's last folder stays in front, to say which one; a run given as the root itself
    keeps its own name."""
    best = None
    for root in roots:
        stem = str(root).rstrip("/\\")
        if stem and (path == stem or path.startswith(stem + "/") or path.startswith(stem + os.sep)):
            if best is None or len(stem) > len(best):
                best = stem
    if best is None:
        return path
    rest = path[len(best):].lstrip("/\\")
    root_name = PurePosixPath(best.replace("\\", "/")).name
    if not rest:
        return root_name or path
    return f"{root_name}/{rest}" if len(roots) > 1 else rest


def cut_apart(labels: list[str], room: int) -> list[str]:
    """Each run's label longer than ``room`` terminal cells shortened by dropping its middle: the start says where
    in the archive, the end which run (its own folder and file, or its name). Labels that would then read the same
    keep more of their start or of their end, whichever shows the first character that tells them apart sooner: a
    sweep's runs often share both ends (``sweep/lr_0.1/…/metrics.csv``), and two rows alike would name one run
    twice."""
    ends = [_ends(label, room) if cells(label) > room else (len(label), 0) for label in labels]
    while True:
        alike: dict[str, list[int]] = {}
        for at, (label, end) in enumerate(zip(labels, ends, strict=True)):
            alike.setdefault(_joined(label, *end), []).append(at)
        clashes = [group for group in alike.values() if len({labels[at] for at in group}) > 1]
        if not clashes:
            return [_joined(label, *end) for label, end in zip(labels, ends, strict=True)]
        for group in clashes:
            members = [labels[at] for at in group]
            prefix = len(os.path.commonprefix(members))
            suffix = len(os.path.commonprefix([member[::-1] for member in members]))
            before = [ends[at] for at in group]
            for at, (head, tail) in zip(group, before, strict=True):
                grow_head = prefix - head <= suffix - tail
                ends[at] = (max(head, prefix + 1), tail) if grow_head else (head, max(tail, suffix + 1))
            if [ends[at] for at in group] == before:  # a label holding '…' reads like another one cut
                for at in group:
                    ends[at] = (len(labels[at]), 0)


def _ends(text: str, room: int) -> tuple[int, int]:
    """How many characters of its start and of its end a label cut to ``room`` cells keeps: two fifths of the
    room for the start, the rest after the '…' for the end, which names the run."""
    head_room = (room - 1) * 2 // 5
    head = len(cut(text, head_room + 1)) - 1 if head_room else 0
    tail, used = 0, cells(text[:head]) + 1
    for char in reversed(text):
        used += cells(char)
        if used > room:
            break
        tail += 1
    return head, tail


def _joined(text: str, head: int, tail: int) -> str:
    return text if head + tail >= len(text) else text[:head] + "…" + text[len(text) - tail:]


def listed(items: list[str], at_most: int) -> str:
    """Items joined with ', ', the rest counted: a cross-run finding over a 300-run sweep names a few."""
    more = f" … (+{len(items) - at_most} more)" if len(items) > at_most else ""
    return ", ".join(items[:at_most]) + more
