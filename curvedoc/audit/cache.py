"""The audit's incremental cache: what each log source gave last time, reused while its files are unchanged.

One JSON file per source under ``<cache dir>/v<CACHE_FORMAT>/``, named by a hash of what decides the result
apart from file contents: curvedoc's version, the configuration (roles, class count, disabled rules, thresholds),
the source's family, path and file list. Inside, the entry records the size and modification time (ns) of every
file the readers depended on; any difference, or a file added to a run folder, makes the entry stale. Entries are
written to a temporary file and renamed into place, so a crash or a concurrent audit never leaves half an entry;
an entry that cannot be read or parsed is simply a miss, so deleting any part of the cache is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import curvedoc
from curvedoc.audit.summary import RunSummary
from curvedoc.config import Config
from curvedoc.readers import Source

CACHE_FORMAT = 1
FileStamps = dict[str, tuple[int, int]]  # absolute path → (size, mtime in ns)


def default_cache_dir() -> Path:
    """The user's cache folder, never the audited tree: ``$CURVEDOC_CACHE_DIR``, else the platform's convention."""
    if os.environ.get("CURVEDOC_CACHE_DIR"):
        return Path(os.environ["CURVEDOC_CACHE_DIR"])
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "curvedoc" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "curvedoc"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "curvedoc"


def config_fingerprint(config: Config) -> str:
    """What in the configuration changes a run's diagnosis (its source file does not: only what it says)."""
    return json.dumps({
        "roles": sorted(config.roles.items()),
        "num_classes": config.num_classes,
        **config.rules.as_dict(),
        "limits": config.limits.as_dict(),
    }, sort_keys=True)


def source_files(source: Source) -> list[Path]:
    """What a source's result depends on before reading: its listed files, or everything in a run folder (W&B,
    MLflow) and the folders themselves, whose modification time changes when a file (a new metric) is added."""
    if source.files:
        return [path for _, path in source.files]
    if source.path.is_dir():
        return [Path(folder) / name for folder, _, names in os.walk(source.path) for name in [".", *sorted(names)]]
    return [source.path]


def stamp(paths) -> FileStamps:
    stamps = {}
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue  # gone since it was listed: the entry then lacks it and the next audit sees the difference
        stamps[os.path.abspath(path)] = (info.st_size, info.st_mtime_ns)
    return stamps


class Cache:
    def __init__(self, root: Path, config: Config):
        self.root = Path(root) / f"v{CACHE_FORMAT}"
        self._folder = str(self.root)
        self._config = config_fingerprint(config)

    def _entry_path(self, source: Source) -> Path:
        identity = "\0".join([
            curvedoc.__version__, self._config, source.family, os.path.abspath(source.path), str(source.explicit),
            *(f"{split}\0{os.path.abspath(path)}" for split, path in source.files),
        ])
        digest = hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()
        return Path(os.path.join(self._folder, digest[:2], f"{digest}.json"))  # os.path: pathlib's / is 10x slower

    def get(self, source: Source, report_formats: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """The cached result of ``source`` (``summaries``, ``problem``, ``reports``: per run, format → text of the
        formats asked for) if every file it depended on is unchanged and the reports asked for are kept; else None."""
        path = self._entry_path(source)
        try:
            with open(path, "rb") as handle:
                entry = json.loads(handle.read())
            stamps = {file: tuple(value) for file, value in entry["files"].items()}
            if stamp(stamps) != stamps:
                return None
            entry["reports"] = [
                {fmt: (path.parent / names[fmt]).read_text(encoding="utf-8") for fmt in report_formats}
                for names in entry["reports"]
            ]
            entry["summaries"] = [RunSummary.from_dict(item) for item in entry["summaries"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # absent, half-deleted or from an older layout: a miss, never an error
        return entry

    def put(self, source: Source, files: FileStamps, summaries: list[RunSummary], problem: str | None,
            reports: list[dict[str, str]]) -> None:
        """Remember a source's result. Its runs' reports go in files of their own beside the entry, so an audit
        without ``-o`` never parses a plot it does not need."""
        path = self._entry_path(source)
        report_names = [
            {fmt: f"{path.stem}-{index}.{fmt}" for fmt in texts} for index, texts in enumerate(reports)
        ]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for names, texts in zip(report_names, reports):
                for fmt, name in names.items():
                    _write_atomically(path.parent / name, texts[fmt].encode("utf-8", "surrogateescape"))
            entry = {"files": files, "summaries": [s.to_dict() for s in summaries], "problem": problem,
                     "reports": report_names}
            _write_atomically(path, json.dumps(entry).encode())  # dumps uses the C encoder; dump does not
        except OSError:
            pass  # a read-only or full cache costs speed next time, never the audit itself


def _write_atomically(path: Path, data: bytes) -> None:
    """Written under a temporary name and renamed into place: a reader sees the old file or the new, never half."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
