"""Remote archives (``s3://``, ``gs://``, any fsspec URL) as a local mirror the readers can open.

The readers need local files: event files are mapped into memory, MLflow stores opened by SQLite, heads peeked.
So before an audit, the files discovery could use are synced from the URL into a local folder (under curvedoc's
cache by default), and the audit reads that folder. The remote tree is listed once; checkpoints, images and
datasets are never fetched; a file is fetched again only when its size, modification time or ETag changed; each
local copy carries the remote modification time, so the audit cache (keyed on size and mtime) stays valid from one
audit to the next. Nothing in the remote is ever written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from curvedoc.errors import CurvedocError
from curvedoc.readers import (EVENT_FILE, JOB_OUTPUT_SUFFIX, JUDGED_WHOLE_BYTES, SKIPPED_FOLDERS, TEXT_LOG_SUFFIXES,
                              classify_file)
from curvedoc.readers.companions import COMPANION_NAMES

LOCAL_PROTOCOLS = {"file", "local"}
# A scheme of two letters or more: "C:\\runs" is a Windows drive, not a protocol. "::" chains (simplecache::s3://).
URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)(?:://|::)")

# Files discovery or a reader may open, by name alone. Captured output (.log, .txt, .out, a job's .o123) is among
# them: whether it holds a training log shows only in reading it, often far past its first bytes (settings printed
# before training).
FETCHED_SUFFIXES = {
    ".wandb", ".jsonl", ".ndjson", ".csv", ".tsv", ".yaml", ".yml", ".db", ".sqlite", ".sqlite3", *TEXT_LOG_SUFFIXES,
}
SQLITE_SUFFIXES = {".db", ".sqlite", ".sqlite3"}
SQLITE_COMPANIONS = ("-wal", "-shm")  # a WAL-mode store's pending changes live beside it
# Files that are logs or not depending on what their first bytes hold (trainer_state.json vs a tokenizer).
PEEKED_SUFFIXES = {".json"}
# Discovery decides on a file's first 4 KiB, or on all of a small .json file (JUDGED_WHOLE_BYTES) whose first
# 4 KiB say nothing; bigger files of a peeked kind are fetched whole only if those say it is a log. Small files are
# simply fetched, so a remote audit judges them as a local one does.
HEAD_BYTES = 4096
FETCHED_WHOLE_BELOW = JUDGED_WHOLE_BYTES
# Read by name beside a log, never discovered on their own: always fetched (a model config.json with 21k class
# labels is bigger than a peek).
COMPANION_FILES = {"wandb-metadata.json", *COMPANION_NAMES}
MLFLOW_RUN_PARTS = {"metrics", "params", "tags"}  # one file per key, no extension, beside the run's meta.yaml

SYNC_FOLDER = ".curvedoc-sync"  # hidden, so discovery never walks into it
# The remote packages the `remote` extra of pyproject.toml installs; other protocols name their own package.
REMOTE_EXTRA_PACKAGES = {"fsspec", "s3fs", "gcsfs"}


def is_remote(path: str | os.PathLike[str]) -> bool:
    """True for an fsspec URL whose protocol is not the local disk."""
    match = URL_SCHEME.match(os.fspath(path)) if isinstance(path, str) else None
    return bool(match) and match.group(1).lower() not in LOCAL_PROTOCOLS


@dataclass
class Mirror:
    url: str  # as the user gave it, without a trailing slash
    local_root: Path  # the local copy of what url names: a folder, or a file when url names one object
    problems: list[str] = field(default_factory=list)  # remote objects that could not be mirrored, one line each

    def display(self, local_path: str | os.PathLike[str]) -> str:
        """The URL the user knows for a path under the mirror; other paths unchanged."""
        # the engine may have resolved symlinks in the cache folder's path (/tmp → /private/tmp on macOS)
        for normalise in (os.path.abspath, os.path.realpath):
            local, root = normalise(local_path), normalise(self.local_root)
            if local == root:
                return self.url
            if local.startswith(root + os.sep):
                return f"{self.url}/{Path(local[len(root) + 1:]).as_posix()}"
        return os.fspath(local_path)

    def display_text(self, text: str) -> str:
        """A reader's warning or problem line with mirror paths written as the user's URLs."""
        root = os.path.abspath(self.local_root)
        return text.replace(root + os.sep, self.url + "/").replace(root, self.url)


def parse_storage_options(pairs: Iterable[str]) -> dict[str, str]:
    """``--storage-option KEY=VALUE`` arguments as a dict; values stay text until :func:`mirror` types them."""
    options = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise CurvedocError(None, f"--storage-option {pair!r}: expected KEY=VALUE, e.g. endpoint_url=http://...")
        options[key.strip()] = value
    return options


def storage_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """Typed keyword arguments for the filesystem: true/false, integers and decimals from text; a dotted key
    (``client_kwargs.region_name``) fills a nested dict, as s3fs and gcsfs take some of their settings."""
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        *parents, leaf = key.split(".")
        target = kwargs
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = _typed(value)
    return kwargs


def _typed(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if value.lower() in {"true", "false"}:
        return value.lower() == "true"
    for parse in (int, float):
        try:
            parsed = parse(value)
        except ValueError:
            continue
        # "007" or "1e3" as a secret or a name must survive: only a number's own spelling becomes a number
        return parsed if str(parsed) == value else value
    return value


def mirror(url: str, into: Path, storage_options: dict[str, str] | None = None) -> Mirror:
    """Syncs what discovery could use under ``url`` into the folder ``into`` (which curvedoc owns)."""
    url = url.rstrip("/")
    fs, root = _filesystem(url, storage_options or {})
    listing = _remote_call(url, lambda: fs.find(root, detail=True, withdirs=False))
    files = {name: info for name, info in listing.items() if info.get("type", "file") == "file"}
    if not files:
        raise CurvedocError(url, "nothing there: no object at this URL or under it (check the bucket and prefix)")
    into = Path(into).absolute()
    result = Mirror(url, into)
    root = root.rstrip("/")
    if list(files) == [root]:
        # the user named one object: fetch it whatever its name, discovery will say if it is not a log
        result.local_root = into / PurePosixPath(root).name
        wanted = {result.local_root.name: files[root]}
    else:
        wanted = _usable_files(root, files, result)
    _Sync(fs, url, into).run(wanted)
    return result


def _filesystem(url: str, options: dict[str, Any]):
    protocol = URL_SCHEME.match(url).group(1).lower() if URL_SCHEME.match(url) else "file"
    try:
        import fsspec.core
    except ImportError:
        raise CurvedocError(url, f"reading {protocol}:// needs the remote extra: pip install 'curvedoc[remote]'") from None
    try:
        # a fresh instance: a cached one would answer from the listing it made at the previous audit
        return fsspec.core.url_to_fs(url, skip_instance_cache=True, **storage_kwargs(options))
    except ImportError:
        raise CurvedocError(url, _install_hint(protocol)) from None
    except ValueError as exc:
        if "protocol" in str(exc).lower():
            raise CurvedocError(url, f"unknown storage protocol {protocol}://; fsspec knows "
                                     "s3://, gs://, az://, http(s):// and more") from None
        raise CurvedocError(url, f"cannot open: {_first_line(exc)}") from None
    except TypeError as exc:  # a storage option the filesystem does not take
        raise CurvedocError(url, f"storage option not accepted: {_first_line(exc)}") from None


def _install_hint(protocol: str) -> str:
    from fsspec.registry import known_implementations

    package = known_implementations.get(protocol, {}).get("class", protocol).split(".")[0]
    if package in REMOTE_EXTRA_PACKAGES:
        return f"reading {protocol}:// needs {package}, part of the remote extra: pip install 'curvedoc[remote]'"
    return f"reading {protocol}:// needs {package}: pip install {package}"


def _usable_files(root: str, files: dict[str, dict], result: Mirror) -> dict[str, dict]:
    """The objects under ``root`` discovery could use, by their path relative to it."""
    relative = {}
    for name, info in files.items():
        path = name[len(root):].lstrip("/") if name.startswith(root + "/") else None
        parts = PurePosixPath(path).parts if path else ()
        if not parts or any(part in {"", ".", ".."} for part in parts) or "//" in path:
            # a key like "a/../../x" or "a//b" has no faithful local copy, and must never land outside the mirror
            result.problems.append(f"{result.url}/{path or name}: object name cannot be a local path; not read")
            continue
        relative[path] = info
    mlflow_runs = {str(PurePosixPath(path).parent) for path in relative if PurePosixPath(path).name == "meta.yaml"}
    return {path: info for path, info in relative.items() if _usable(PurePosixPath(path), mlflow_runs)}


def _usable(path: PurePosixPath, mlflow_runs: set[str]) -> bool:
    folders = path.parts[:-1]
    if any(part in SKIPPED_FOLDERS or part.startswith(".") for part in folders) or "-checkpoint." in path.name:
        return False  # discovery never walks there
    for depth, part in enumerate(folders):
        if part in MLFLOW_RUN_PARTS and str(PurePosixPath(*folders[:depth]) if depth else ".") in mlflow_runs:
            return True
    name = path.name.lower()
    suffix = path.suffix.lower()
    return bool(
        EVENT_FILE.search(path.name)
        or suffix in FETCHED_SUFFIXES | PEEKED_SUFFIXES
        or JOB_OUTPUT_SUFFIX.match(suffix)
        or any(name.endswith(sqlite + companion) for sqlite in SQLITE_SUFFIXES for companion in SQLITE_COMPANIONS)
    )


def _remote_stamp(info: dict) -> list:
    """What changes when an object is rewritten: size, modification time and, when the store gives one, a tag."""
    tag = next((str(info[key]) for key in ("ETag", "etag", "md5Hash", "crc32c", "generation") if info.get(key)), None)
    return [info.get("size"), _remote_mtime(info), tag]


def _remote_mtime(info: dict) -> float | None:
    """The modification time in an fsspec listing entry, in unix seconds; each store names and spells it its own way."""
    for key in ("LastModified", "last_modified", "mtime", "updated", "modified", "created"):
        value = info.get(key)
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value).timestamp()
            except ValueError:
                continue
    return None


class _Sync:
    """One sync of ``url`` into ``into``; what was fetched is recorded in ``into/.curvedoc-sync/state.json``."""

    def __init__(self, fs, url: str, into: Path):
        self.fs = fs
        self.url = url
        self.into = into
        self.work = into / SYNC_FOLDER
        self.state_file = self.work / "state.json"
        self.state = self._load_state()

    def run(self, wanted: dict[str, dict]) -> None:
        # an interrupted sync leaves its partial downloads here, never under their real names
        shutil.rmtree(self.work / "partial", ignore_errors=True)
        (self.work / "partial").mkdir(parents=True, exist_ok=True)
        stamps = {path: _remote_stamp(info) for path, info in wanted.items()}
        stale = [path for path, stamp in stamps.items() if not self._is_current(path, stamp)]
        to_peek = [path for path in stale
                   if PurePosixPath(path).suffix.lower() in PEEKED_SUFFIXES
                   and PurePosixPath(path).name not in COMPANION_FILES
                   and (wanted[path].get("size") or 0) > FETCHED_WHOLE_BELOW]
        not_logs = self._not_logs(to_peek, wanted)
        self._fetch([path for path in stale if path not in not_logs], wanted, stamps)
        for path in not_logs:
            self.state[path] = {"remote": stamps[path], "skipped": True}
        self.state = {path: entry for path, entry in self.state.items() if path in stamps}
        self._remove_vanished(keep={path for path, entry in self.state.items() if not entry.get("skipped")})
        self._save_state()
        shutil.rmtree(self.work / "partial", ignore_errors=True)

    def _is_current(self, path: str, stamp: list) -> bool:
        entry = self.state.get(path)
        if not entry or entry.get("remote") != stamp:
            return False
        if entry.get("skipped"):
            return True
        try:
            local = (self.into / path).stat()
        except OSError:
            return False
        return [local.st_size, local.st_mtime_ns] == entry.get("local")

    def _not_logs(self, paths: list[str], wanted: dict[str, dict]) -> set[str]:
        """The big .json files whose first bytes show discovery would pass them over."""
        if not paths:
            return set()
        remote = [wanted[path]["name"] for path in paths]
        heads = _remote_call(self.url, lambda: self.fs.cat_ranges(remote, [0] * len(remote), [HEAD_BYTES] * len(remote)))
        peek_folder = self.work / "peek"
        peek_folder.mkdir(exist_ok=True)
        skipped = set()
        for path, head in zip(paths, heads):
            if isinstance(head, Exception):
                raise CurvedocError(f"{self.url}/{path}", _describe(head))
            # classified under its own name, so discovery's rules decide and are not copied here
            probe = peek_folder / PurePosixPath(path).name
            probe.write_bytes(head)
            if classify_file(probe) is None:
                skipped.add(path)
            probe.unlink()
        return skipped

    def _fetch(self, paths: list[str], wanted: dict[str, dict], stamps: dict[str, list]) -> None:
        if not paths:
            return
        partials = [str(self.work / "partial" / str(number)) for number in range(len(paths))]
        remote = [wanted[path]["name"] for path in paths]
        # one call for the whole list: async stores (s3fs, gcsfs) then fetch the files concurrently
        _remote_call(self.url, lambda: self.fs.get(remote, partials))
        for path, partial in zip(paths, partials):
            target = self.into / path
            mtime = stamps[path][1]
            if mtime is not None:
                os.utime(partial, (mtime, mtime))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(partial, target)
            local = target.stat()
            self.state[path] = {"remote": stamps[path], "local": [local.st_size, local.st_mtime_ns]}

    def _remove_vanished(self, keep: set[str]) -> None:
        into, work = str(self.into), str(self.work)
        for folder, _, names in os.walk(into, topdown=False):
            if folder == work or folder.startswith(work + os.sep):
                continue
            relative = folder[len(into) + 1:].replace(os.sep, "/")
            for name in names:
                if (f"{relative}/{name}" if relative else name) not in keep:
                    os.unlink(os.path.join(folder, name))
            if folder != into and not os.listdir(folder):
                os.rmdir(folder)

    def _load_state(self) -> dict[str, dict]:
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # no state or a damaged one: every file is fetched again, nothing worse
        return state.get("files", {}) if isinstance(state, dict) and state.get("url") == self.url else {}

    def _save_state(self) -> None:
        partial = self.work / "state.json.partial"
        partial.write_text(json.dumps({"url": self.url, "files": self.state}), encoding="utf-8")
        os.replace(partial, self.state_file)


def _remote_call(url: str, call):
    """Runs one request to the store, turning its failure into a one-line error naming the URL."""
    try:
        return call()
    except CurvedocError:
        raise
    except Exception as exc:  # the stores raise their own exception types (botocore, aiohttp, google-auth, azure)
        raise CurvedocError(url, _describe(exc)) from None


CREDENTIAL_ERRORS = {"NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError", "RefreshError",
                     "ClientAuthenticationError", "CredentialUnavailableError"}
CONNECTION_ERRORS = {"EndpointConnectionError", "ConnectTimeoutError", "ClientConnectorError", "ServerTimeoutError",
                     "ServiceRequestError", "ProxyConnectionError"}


def _describe(exc: BaseException) -> str:
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = _first_line(exc)
    if names & CREDENTIAL_ERRORS:
        return f"no usable credentials ({message}); set them as for the store's own tools, or pass --storage-option"
    if isinstance(exc, PermissionError):
        return f"access denied ({message}); check the credentials and that they may list and read this prefix"
    if isinstance(exc, FileNotFoundError):
        return f"not found ({message})"
    if isinstance(exc, ConnectionError) or names & CONNECTION_ERRORS:
        return f"cannot connect to the storage endpoint ({message})"
    return f"{type(exc).__name__}: {message}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
