"""Auditing an archive: find every log source, read and diagnose each in a worker, keep only summaries.

The per-source work (:func:`audit_source`) is a pure function of a picklable :class:`Task`, so it runs the same
in this process (``-j 1``), in a pool of local processes, or on a Dask cluster; results come back as they finish
and at most a few sources are in flight per worker, so memory is bounded by a few runs, not by the archive.
Everything that touches the user's disk besides reading (the cache, the per-run reports) happens here in the
main process.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from curvedoc.audit.cache import FileStamps, source_files, stamp
from curvedoc.audit.summary import RunSummary, summarize
from curvedoc.config import Config
from curvedoc.errors import CurvedocError, NotALog
from curvedoc.readers import Source, limits, read_source

# Per-run reports an audit writes under -o DIR, by format → file suffix.
RUN_REPORT_SUFFIXES = {"html": ".html", "markdown": ".md"}
DASK_CONNECT_TIMEOUT = "10s"
# Sources queued per worker: enough to keep every core busy between results, few enough to bound memory.
IN_FLIGHT_PER_WORKER = 4


@dataclass(frozen=True)
class Task:
    source: Source
    config: Config
    report_formats: tuple[str, ...] = ()


@dataclass
class SourceResult:
    source: Source
    summaries: list[RunSummary] = field(default_factory=list)
    problem: str | None = None  # the source could not be read at all
    files: FileStamps = field(default_factory=dict)  # what the result depended on, for the cache
    reports: list[dict[str, str]] = field(default_factory=list)  # per summary: format → report text


def audit_source(task: Task) -> SourceResult:
    """Read, diagnose and summarise one source. Never raises: whatever goes wrong becomes the source's problem,
    so one strange file cannot stop an audit of thousands."""
    from curvedoc.diagnose import diagnose_run
    from curvedoc.features import RunCurves
    from curvedoc.report import ReportOptions, render

    source = task.source
    result = SourceResult(source, files=stamp(source_files(source)))  # stamped before reading: a file growing
    try:                                                               # meanwhile is seen as changed next time
        with limits.using(task.config.limits):
            runs = read_source(source)
        task.config.apply(runs, strict=False)
        for run in runs:
            curves = RunCurves(run)
            diagnose_run(run, task.config.rules, curves)
            result.summaries.append(summarize(run, curves=curves))
            result.reports.append({
                fmt: render(fmt, [run], [], ReportOptions(cut_to_width=False)) for fmt in task.report_formats
            })
            result.files.update(stamp(path for path in run.meta.files if os.path.abspath(path) not in result.files))
    except NotALog as exc:
        if source.explicit:  # found in a folder, a text file that is no log is passed over like any other file
            result.problem = str(exc)
    except CurvedocError as exc:
        result.problem = str(exc)
    except Exception as exc:  # noqa: BLE001 — a reader bug on one file must not cost the audit of the others
        result.problem = f"{source.path}: curvedoc could not read this ({type(exc).__name__}: {exc}); please report it"
        result.summaries, result.reports = [], []
    return result


def run_tasks(tasks: list[Task], jobs: int, dask_address: str | None = None) -> Iterator[SourceResult]:
    """Every task's result, in the order they finish."""
    if not tasks:
        return iter(())
    if dask_address:
        return _on_dask(tasks, dask_address)
    if jobs <= 1 or len(tasks) == 1:
        return map(audit_source, tasks)
    return _on_process_pool(tasks, min(jobs, len(tasks)))


def _process_context():
    # forkserver: workers start from a clean process that imported curvedoc once, not from a fork of this one
    # (whose threads — the progress bar's among them — make fork unsafe); spawn where forkserver does not exist.
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(worker_modules())
        return context
    return multiprocessing.get_context("spawn")


def worker_modules() -> list[str]:
    """What every worker imports: once in the forkserver, whose forks then start warm, instead of once per worker."""
    import pkgutil

    from curvedoc import rules
    from curvedoc.readers import READER_MODULES

    return [
        "curvedoc.audit.engine", "pandas", "scipy.ndimage", *READER_MODULES.values(),
        *(f"{rules.__name__}.{module.name}" for module in pkgutil.iter_modules(rules.__path__)),
    ]


def start_workers_early(jobs: int) -> None:
    """Let the forkserver import curvedoc while the audit is still checking its cache: its imports take as long as
    a hundred runs' work, and the first worker can only start after them."""
    if jobs > 1 and "forkserver" in multiprocessing.get_all_start_methods():
        from multiprocessing import forkserver

        _process_context()
        forkserver.ensure_running()


def _on_process_pool(tasks: list[Task], jobs: int, work=audit_source) -> Iterator[SourceResult]:
    queue = list(reversed(tasks))
    while queue:
        running: dict = {}
        try:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=_process_context()) as pool:
                while queue or running:
                    while queue and len(running) < jobs * IN_FLIGHT_PER_WORKER:
                        task = queue.pop()
                        running[pool.submit(work, task)] = task
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        result = future.result()
                        del running[future]
                        yield result
        except BrokenProcessPool:
            # A worker died (killed, out of memory) and every source in flight lost its result, not only the
            # culprit's: each is run again alone, so only the source that kills its worker is reported.
            for task in running.values():
                yield _alone(task, work)


def _alone(task: Task, work) -> SourceResult:
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=_process_context()) as pool:
            return pool.submit(work, task).result()
    except BrokenProcessPool:
        return SourceResult(task.source, problem=f"{task.source.path}: the worker process reading it died "
                                                 "(killed, or out of memory?)")


def _on_dask(tasks: list[Task], address: str) -> Iterator[SourceResult]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise CurvedocError(None, "--dask needs the dask extra: pip install 'curvedoc[dask]'") from None
    try:
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise CurvedocError(address, f"cannot reach the Dask scheduler ({exc})") from None
    try:
        queue = list(reversed(tasks))
        workers = max(1, sum(client.nthreads().values()))

        def submit():
            task = queue.pop()
            future = client.submit(audit_source, task, pure=False)
            pending[future.key] = task
            return future

        pending: dict[str, Task] = {}
        completed = as_completed([submit() for _ in range(min(len(queue), workers * IN_FLIGHT_PER_WORKER))])
        for future in completed:
            task = pending.pop(future.key)
            try:
                yield future.result()
            except Exception as exc:  # noqa: BLE001 — a lost worker or a task error on the cluster, not a crash here
                yield SourceResult(task.source, problem=f"{task.source.path}: failed on the Dask cluster ({exc})")
            if queue:
                completed.add(submit())
    finally:
        client.close()


def report_slug(display_path: str, root: str) -> str:
    """A file name for a run's own report: its path under the audited root, readable, unique by a short hash."""
    relative = display_path[len(root):].strip("/\\") if display_path.startswith(root) else display_path
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", relative).strip("._")[-80:] or "run"
    return f"{readable}-{hashlib.sha1(display_path.encode()).hexdigest()[:8]}"


def progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    # No monitor thread: it would be running while worker processes start.
    tqdm.monitor_interval = 0
    return tqdm(total=total, unit="log", desc="auditing", disable=not enabled, dynamic_ncols=True, leave=False)


def unique_sources(sources: Iterable[Source]) -> list[Source]:
    """Sources that read the same files (two roots that overlap, a symlinked folder) are read once."""
    seen, unique = set(), []
    for source in sources:
        identity = (source.family, _file_identity(source.path),
                    tuple(sorted(_file_identity(path) for _, path in source.files)))
        if identity not in seen:
            seen.add(identity)
            unique.append(source)
    return unique


def _file_identity(path: Path) -> tuple[int, int] | str:
    """The file behind a path whatever names lead to it (one stat, where realpath would lstat every component)."""
    try:
        info = os.stat(path)
    except OSError:
        return os.path.abspath(path)
    return info.st_dev, info.st_ino

