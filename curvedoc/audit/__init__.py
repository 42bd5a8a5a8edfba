"""``curvedoc audit``: every run under a folder or a bucket, diagnosed in parallel, compared across runs.

:func:`audit` is the whole pipeline; :mod:`curvedoc.audit.engine` runs the per-source work (locally or on Dask),
:mod:`curvedoc.audit.cache` remembers it, :mod:`curvedoc.audit.remote` mirrors object storage, and
:mod:`curvedoc.audit.crossrun` finds what only a comparison of runs shows.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from curvedoc.audit.cache import Cache, default_cache_dir
from curvedoc.audit.engine import (
    RUN_REPORT_SUFFIXES, SourceResult, Task, progress_bar, report_slug, run_tasks, start_workers_early,
    unique_sources,
)
from curvedoc.audit.summary import AuditResult, RunSummary, Unreadable
from curvedoc.config import Config
from curvedoc.errors import CurvedocError
from curvedoc.readers import LOOKED_FOR, Source, discover

__all__ = ["AuditResult", "RunSummary", "audit", "default_cache_dir"]


def audit(
    roots: Sequence[str | os.PathLike[str]],
    *,
    config: Config | None = None,
    jobs: int | None = None,
    cache: bool | str | os.PathLike[str] = True,
    report_dir: str | os.PathLike[str] | None = None,
    dask: str | None = None,
    storage_options: dict | None = None,
    progress: bool = False,
) -> AuditResult:
    """Find, read and diagnose every run under ``roots`` (folders, files or fsspec URLs such as ``s3://b/p``).

    ``jobs`` worker processes (default: every core) or the Dask scheduler at ``dask`` do the per-run work;
    ``cache`` is True for the user cache folder, a folder, or False; with ``report_dir`` each run's own HTML and
    Markdown report is written to ``report_dir/runs/``. A run that cannot be read is listed in ``unreadable``;
    a root that does not exist or holds no training log raises :class:`CurvedocError`.
    """
    from curvedoc.audit import remote

    config = config or Config()
    jobs = jobs or available_cores()
    cache_root = None if cache is False else (default_cache_dir() if cache is True else Path(cache))
    store = Cache(cache_root, config) if cache_root else None
    report_formats = tuple(RUN_REPORT_SUFFIXES) if report_dir else ()
    scratch = None if cache_root else tempfile.TemporaryDirectory(prefix="curvedoc-mirror-")
    # The audit's own output and cache may sit inside the audited tree: never audit them as runs.
    own_folders = tuple(folder for folder in (report_dir, cache_root) if folder)
    try:
        sources, display, unreadable = [], {}, []
        for root in map(str, roots):
            local_root, mirrored = root, None
            if remote.is_remote(root):
                mirror_base = Path(scratch.name) if scratch else cache_root / "mirror"
                mirror_name = hashlib.sha256(root.rstrip("/").encode()).hexdigest()[:16]
                mirrored = remote.mirror(root, mirror_base / mirror_name, storage_options)
                local_root = str(mirrored.local_root)
                unreadable.extend(_unreadable(problem, root, None) for problem in mirrored.problems)
            found = discover(local_root, exclude=own_folders)
            unreadable.extend(_unreadable(problem, root, mirrored) for problem in found.problems)
            for source in found.sources:
                display[source] = (root, mirrored)
                sources.append(source)
        sources = unique_sources(sources)
        result = AuditResult(roots=[str(root) for root in roots], runs=[], unreadable=unreadable)
        with progress_bar(len(sources), progress) as bar:
            pending = []
            for source in sources:
                cached = store.get(source, report_formats) if store else None
                if cached is None:
                    if not pending and not dask:
                        start_workers_early(jobs)
                    pending.append(Task(source, config, report_formats))
                    continue
                _collect(SourceResult(source, cached["summaries"], cached["problem"], reports=cached["reports"]),
                         result, display, report_dir)
                result.n_cached += len(cached["summaries"])
                bar.update()
            for outcome in run_tasks(pending, jobs, dask):
                if store:
                    store.put(outcome.source, outcome.files, outcome.summaries, outcome.problem, outcome.reports)
                _collect(outcome, result, display, report_dir)
                result.n_analysed += len(outcome.summaries)
                bar.update()
    finally:
        if scratch:
            scratch.cleanup()
    if not result.runs and not result.unreadable:  # every file found was a text file that is no log
        raise CurvedocError(None, f"no training logs found under {', '.join(map(str, roots))}; looked for {LOOKED_FOR}")
    result.runs.sort(key=lambda summary: summary.path)
    result.unreadable.sort(key=lambda item: item.path)
    from curvedoc.audit.crossrun import cross_run_findings

    result.cross_run = cross_run_findings(result.runs, config.rules)
    return result


def available_cores() -> int:
    """Cores this process may run on (a container's or taskset's limit, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _unreadable(problem: str, root: str, mirrored) -> Unreadable:
    path, _, reason = problem.partition(": ")
    if not reason:  # a problem of the whole root, not of one file under it
        path, reason = root, problem
    return Unreadable(_shown(path, mirrored), _shown(reason, mirrored))


def _shown(text: str, mirrored) -> str:
    """Text naming a mirrored file names the remote object instead."""
    return mirrored.display_text(text) if mirrored else text


def _collect(outcome: SourceResult, result: AuditResult, display: dict[Source, tuple], report_dir) -> None:
    root, mirrored = display[outcome.source]
    if outcome.problem:
        result.unreadable.append(_unreadable(outcome.problem, root, mirrored))
    for summary, reports in zip(outcome.summaries, outcome.reports, strict=True):
        summary.path = _shown(summary.path, mirrored)
        summary.warnings = [_shown(warning, mirrored) for warning in summary.warnings]
        if report_dir:
            summary.reports = _write_run_reports(Path(report_dir), report_slug(summary.path, root), reports)
        result.runs.append(summary)


def _write_run_reports(report_dir: Path, slug: str, reports: dict[str, str]) -> dict[str, str]:
    written = {}
    for fmt, text in reports.items():
        relative = f"runs/{slug}{RUN_REPORT_SUFFIXES[fmt]}"
        target = report_dir / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise CurvedocError(target, f"cannot write the report: {exc.strerror or exc}") from None
        written[fmt] = relative
    return written
