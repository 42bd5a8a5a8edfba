"""Renderers: each module turns diagnosed runs into one output format.

A renderer module exposes ``render(runs, problems, options: ReportOptions) -> str``; ``RENDERERS`` maps a
``--format`` name to its module and ``SUFFIXES`` a file extension to a format (for ``-o FILE``). What every
format shares lives here: the verdict of a run, min/max-preserving downsampling, and summaries.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
# not "import html": importing this package's own html module rebinds that name here
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from curvedoc.model import Run

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

RENDERERS = {
    "text": "curvedoc.report.terminal",
    "json": "curvedoc.report.json",
    "markdown": "curvedoc.report.markdown",
    "html": "curvedoc.report.html",
    "github": "curvedoc.report.github",
    "sarif": "curvedoc.report.sarif",
}
SUFFIXES = {".txt": "text", ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html",
            ".htm": "html", ".sarif": "sarif"}

FAILING, WARNINGS, INSUFFICIENT, HEALTHY = "failing", "warnings", "insufficient", "healthy"
VERDICTS = (FAILING, WARNINGS, INSUFFICIENT, HEALTHY)  # worst first
WITHOUT_FINDINGS = (INSUFFICIENT, HEALTHY)  # verdicts of runs with nothing to show but their name and why
VERDICT_PHRASES = {FAILING: "failing", WARNINGS: "with warnings", INSUFFICIENT: "not enough to judge",
                   HEALTHY: "healthy"}


def verdict_tally(counts: Mapping[str, int]) -> str:
    """``3 failing, 1 with warnings, 5 healthy``, as every report states it; runs with not enough to judge are
    counted only when there are some."""
    return ", ".join(f"{counts[name]:,} {VERDICT_PHRASES[name]}" for name in VERDICTS
                     if name != INSUFFICIENT or counts[name])


@dataclass
class ReportOptions:
    quiet: bool = False  # verdicts only
    verbose: bool = False  # also the notes and read warnings of runs without findings
    color: bool = False  # ANSI colour (terminal only: cli.wants_color decides: --color, FORCE_COLOR, NO_COLOR, TTY)
    width: int = 100  # terminal columns available: prose is wrapped to it
    cut_to_width: bool = True  # a terminal cuts what is wider; a file or a pipe keeps the whole line
    plots_dir: Path | None = None  # also write PNG plots here and name them (text, JSON, Markdown)
    output: Path | None = None  # where the report is written, so links can be relative to it


def render(fmt: str, runs, problems=(), options: ReportOptions | None = None) -> str:
    module = importlib.import_module(RENDERERS[fmt])
    return module.render(runs, list(problems), options or ReportOptions())


def plot_files(runs, options: ReportOptions | None) -> dict[int, Path]:
    """With ``--plots DIR``, the PNG written for each run with findings, by ``id(run)`` (see
    :func:`curvedoc.report.plots.write_plot_files`); else nothing, and matplotlib is not imported."""
    if options is None or options.plots_dir is None:
        return {}
    from curvedoc.report.plots import write_plot_files

    return write_plot_files(runs, options)


def verdict(run: Run) -> str:
    """``failing`` when an error-level finding exists, ``warnings`` for warnings only, ``insufficient`` when the
    run holds too little to judge (no loss, score or accuracy curve, a single point: ``run.insufficient`` says
    why), else ``healthy`` (info findings are notes, not symptoms)."""
    severities = {finding.severity for finding in run.findings}
    if "error" in severities:
        return FAILING
    if "warning" in severities:
        return WARNINGS
    if run.insufficient:
        return INSUFFICIENT
    return HEALTHY


def downsample(steps: np.ndarray, values: np.ndarray, max_points: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``max_points`` points that keep every bucket's minimum, maximum and first non-finite value,
    so a spike or a NaN step never disappears from a small chart. Order by step is kept."""
    count = len(values)
    if count <= max_points:
        return steps, values
    buckets = max(1, max_points // 3)
    edges = np.linspace(0, count, buckets + 1).astype(int)
    keep = np.zeros(count, dtype=bool)
    finite = np.isfinite(values)
    for start, stop in zip(edges[:-1], edges[1:]):
        if stop <= start:
            continue
        chunk, ok = values[start:stop], finite[start:stop]
        keep[start] = True
        if ok.any():
            indices = np.flatnonzero(ok)
            keep[start + indices[np.argmin(chunk[ok])]] = True
            keep[start + indices[np.argmax(chunk[ok])]] = True
        if not ok.all():
            keep[start + np.flatnonzero(~ok)[0]] = True
    keep[-1] = True
    return steps[keep], values[keep]


def series_summary(run: Run) -> list[dict[str, Any]]:
    """Per tag: role, number of points, step range and count of NaN/±Inf values, in the run's tag order."""
    # numpy over the tag codes, not a pandas groupby: the groupby's fixed cost (~13 ms a run) dominated a report.
    tags = run.scalars["tag"].astype("category")
    codes = tags.cat.codes.to_numpy()
    count = len(tags.cat.categories)
    steps = run.scalars["step"].to_numpy()
    n_points = np.bincount(codes, minlength=count)
    n_nonfinite = np.bincount(codes, weights=~np.isfinite(run.scalars["value"].to_numpy()), minlength=count)
    first_step = np.full(count, np.iinfo(np.int64).max)
    last_step = np.full(count, np.iinfo(np.int64).min)
    np.minimum.at(first_step, codes, steps)
    np.maximum.at(last_step, codes, steps)
    index = {tag: position for position, tag in enumerate(tags.cat.categories)}
    return [
        {
            "tag": tag,
            "role": run.roles[tag].value,
            "n_points": int(n_points[index[tag]]),
            "first_step": int(first_step[index[tag]]),
            "last_step": int(last_step[index[tag]]),
            "n_nonfinite": int(n_nonfinite[index[tag]]),
        }
        for tag in run.tags
        if tag in index and n_points[index[tag]]
    ]


def printable(text: str) -> str:
    """Text from a log, safe for a terminal: control characters (escape sequences, newlines) shown as ``?``."""
    return _CONTROL.sub("?", text)


def plain(text) -> str:
    """Log text that any output can hold: control characters shown as '?', and lone surrogates (a file name's
    undecodable bytes) replaced, so it can be written as UTF-8."""
    return printable(str(text)).encode("utf-8", "replace").decode("utf-8")


def markup_text(value) -> str:
    """Untrusted text as inert HTML or SVG text: :func:`plain`, with markup and quotes escaped."""
    return escape(plain(value), quote=True)


def json_safe(value: Any) -> Any:
    """Hyperparameters may hold NaN, numpy scalars or arbitrary objects: make them plain JSON."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
