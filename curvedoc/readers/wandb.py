"""Weights & Biases run folders and the binary ``run-<id>.wandb`` log every W&B run writes locally.

A run folder (``wandb/run-<date>_<time>-<id>/`` or ``offline-run-…``) holds ``run-<id>.wandb`` and, once synced,
``files/config.yaml``, ``files/wandb-summary.json`` and ``files/wandb-metadata.json``; runs from before wandb
0.10 (2020) kept ``wandb-history.jsonl`` and those files directly in the run folder instead.

The ``.wandb`` log uses LevelDB's log framing: a 7-byte file header (``:W&B``, magic 0xBEE1 as little-endian
uint16, version byte), then 32 KiB blocks of chunks, each ``crc32 (4) | length (2) | type (1) | data``. The
checksum is zlib's plain CRC-32 (not LevelDB's masked CRC-32C) of the type byte followed by the data — what
wandb's datastore computes and what wandb-core 0.31 writes (verified against its files). A record larger than
what is left of a block is split into FIRST, MIDDLE… and LAST chunks; a block tail too short for a chunk header
is zero padding. Each record is a ``wandb_internal.Record`` protobuf, decoded in :mod:`wandb_proto`.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from curvedoc.errors import CurvedocError, NotALog, describe_os_error
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import LFS_POINTER, Source, textlog
from curvedoc.readers.companions import wandb_values
from curvedoc.readers.jsonl import add_history_file
from curvedoc.readers.records import SKIPPED_COLUMNS, add_rows, trainer_step_key
from curvedoc.readers.wandb_proto import (
    RECORD_CONFIG, RECORD_HISTORY, RECORD_RUN, DecodeError, RunInfo, apply_config, fields, history_row, run_info,
)

FORMAT = "wandb"
FILE_HEADER = struct.Struct("<4sHB")
IDENT, MAGIC = b":W&B", 0xBEE1
CHUNK_HEADER = struct.Struct("<IHB")
HEADER_SIZE = CHUNK_HEADER.size  # file header and chunk header are both 7 bytes
BLOCK = 32768
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
TYPE_CRC = {kind: zlib.crc32(bytes([kind])) for kind in (FULL, FIRST, MIDDLE, LAST)}
# W&B's own bookkeeping in config and history, not the user's hyperparameters or metrics
BOOKKEEPING_KEYS = {"_wandb", "wandb_version"}


def read(source: Source) -> list[Run]:
    if source.files:
        log = source.files[0][1]
        builder = RunBuilder(log, FORMAT)
        info = RunInfo()
        _add_log(builder, log, info)
        _set_meta_from_log(builder, info)
        return [builder.build()]
    return [_read_folder(source.path)]


def _read_folder(folder: Path) -> Run:
    builder = RunBuilder(folder, FORMAT)
    logs = sorted(folder.glob("*.wandb"))
    history = _first_existing(folder, "wandb-history.jsonl")
    info = RunInfo()
    failures = []
    for log in logs:
        try:
            _add_log(builder, log, info)
        except CurvedocError as error:
            failures.append(error)
    logs_read = len(logs) - len(failures)
    for error in failures:
        builder.warn(str(error))
    # The binary log holds every history row W&B wrote; a wandb-history.jsonl beside it (versions around 0.10
    # kept both) repeats the same rows, so it is read only when no log could be, never both.
    if history and not logs_read:
        add_history_file(builder, history)
    _set_meta_from_log(builder, info)
    config = _first_existing(folder, "config.yaml")
    if config:
        _read_config_yaml(builder, config)
    metadata = _first_existing(folder, "wandb-metadata.json")
    if metadata:
        _read_metadata(builder, metadata)
    if not builder.has_points:
        _read_captured_output(builder, folder, found_logs=bool(logs or history))
    if failures and not logs_read and not history and not builder.has_points:
        # nothing else held the run's metrics: the broken log is the problem to report (an empty .wandb beside an
        # output.log that printed its curves is only a warning)
        raise failures[0]
    return builder.build()


def _read_captured_output(builder: RunBuilder, folder: Path, found_logs: bool) -> None:
    """A run that logged no metrics to W&B may still have printed them: W&B keeps its stdout in ``output.log``."""
    output = _first_existing(folder, "output.log")
    if output is not None:
        try:
            textlog.add_text_log(builder, output)
        except NotALog:
            pass  # it printed no metrics either
        except CurvedocError as error:
            builder.warn(str(error))
        else:
            builder.warn(f"{folder}: no metrics in the W&B history; the curves are read from the printed output "
                         f"{output.relative_to(folder)}")
            return
    if not found_logs:
        builder.warn(f"{folder}: W&B run folder without a run-*.wandb log or wandb-history.jsonl; no metrics")


def _first_existing(folder: Path, name: str) -> Path | None:
    """``files/<name>`` (wandb ≥ 0.10) or ``<name>`` in the run folder itself (older runs)."""
    for candidate in (folder / "files" / name, folder / name):
        if candidate.is_file():
            return candidate
    return None


def _set_meta_from_log(builder: RunBuilder, info: RunInfo) -> None:
    builder.meta.hparams = {key: value for key, value in info.config.items() if key not in BOOKKEEPING_KEYS}
    builder.meta.start_time = info.start_time
    if info.display_name:
        builder.name = info.display_name


def _add_log(builder: RunBuilder, path: Path, info: RunInfo) -> None:
    """Adds a ``.wandb`` log's history to ``builder`` and its run record and config to ``info``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CurvedocError(path, describe_os_error(exc)) from None
    if not data:
        raise CurvedocError(path, "empty file")
    if data.startswith(LFS_POINTER):
        raise CurvedocError(path, "is a Git LFS pointer, not the log itself (run `git lfs pull` to fetch it)")
    if len(data) < HEADER_SIZE and IDENT.startswith(data[:4]):
        raise CurvedocError(path, "W&B log cut off inside its 7-byte header; no records")
    if len(data) < HEADER_SIZE or FILE_HEADER.unpack_from(data)[:2] != (IDENT, MAGIC):
        raise CurvedocError(path, "not a W&B .wandb log (its header is not ':W&B' with magic 0xBEE1)")
    builder.add_file(path)
    rows = []
    undecodable = 0
    for record in _records(data, path, builder):
        try:
            for number, value in fields(record):
                if number == RECORD_HISTORY:
                    rows.append(history_row(value))
                elif number == RECORD_RUN:
                    run_info(value, info)
                elif number == RECORD_CONFIG:
                    apply_config(value, info.config)
        except (DecodeError, ValueError, TypeError, AttributeError, OverflowError, IndexError):
            undecodable += 1  # a record whose checksum matched but whose protobuf does not parse
    if undecodable:
        builder.warn(f"{path}: {undecodable} record(s) with a valid checksum could not be decoded; skipped")
    # the same columns a W&B history JSONL or CSV export leaves out, so every W&B source yields the same tags
    add_rows(builder, rows, trainer_step_key(rows, "_step"), "_timestamp", skip_keys=SKIPPED_COLUMNS | {"_step"})
    if not rows:
        builder.warn(f"{path}: no history rows (the run logged no metrics before it stopped)")


def _records(data: bytes, path: Path, builder: RunBuilder) -> Iterator[bytes]:
    """The complete records of a ``.wandb`` log; damage becomes one warning each and reading goes on."""
    size = len(data)
    position = HEADER_SIZE
    parts: list[bytes] | None = None  # chunks of a record that spans blocks
    resyncing = False  # after damage, continuation chunks of the record it broke are dropped quietly
    while position < size:
        block_left = BLOCK - position % BLOCK
        if block_left < HEADER_SIZE:
            position += block_left
            continue
        if position + HEADER_SIZE > size:
            if data[position:].strip(b"\0"):
                builder.warn(f"{path}: ends inside a chunk header at offset {position} (cut off mid-write); "
                             "kept every complete record before it")
            return
        checksum, length, kind = CHUNK_HEADER.unpack_from(data, position)
        end = position + HEADER_SIZE + length
        if checksum == 0 and length == 0 and kind == 0 and not data[position:position + block_left].strip(b"\0"):
            position += block_left  # zero padding: where a killed writer's preallocated space was never filled
            continue
        if end > position + block_left or kind not in TYPE_CRC:
            problem = "a malformed chunk header"
        elif end > size:
            builder.warn(f"{path}: ends inside a record at offset {position} (cut off mid-write); "
                         "kept every complete record before it")
            return
        elif zlib.crc32(data[position + HEADER_SIZE:end], TYPE_CRC[kind]) != checksum:
            problem = "a checksum mismatch"
        else:
            problem = ""
        if problem:
            next_block = position + block_left
            builder.warn(f"{path}: {problem} at offset {position}; skipped to the next block at offset {next_block}")
            position, parts, resyncing = next_block, None, True
            continue
        payload = data[position + HEADER_SIZE:end]
        position = end
        if kind == FULL or kind == FIRST:
            if parts is not None:
                builder.warn(f"{path}: a record split across blocks lacks its last part before offset {position}")
            resyncing = False
            if kind == FULL:
                parts = None
                yield payload
            else:
                parts = [payload]
        elif parts is None:
            if not resyncing:
                builder.warn(f"{path}: a continuation chunk without its first part at offset {position}; skipped")
        elif kind == MIDDLE:
            parts.append(payload)
        else:
            parts.append(payload)
            yield b"".join(parts)
            parts = None
    # A file that ends exactly at a block boundary inside a record is how wandb-core leaves a killed run: it
    # writes whole blocks, so the record's remainder was still in memory. Only a cut elsewhere is damage.
    if parts is not None and size % BLOCK:
        builder.warn(f"{path}: ends inside a record (cut off mid-write); kept every complete record before it")


def _read_config_yaml(builder: RunBuilder, path: Path) -> None:
    """``config.yaml`` maps each key to ``{value: ..., desc: ...}``; it replaces the config the log carried."""
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        problem = describe_os_error(exc) if isinstance(exc, OSError) else "not readable YAML"
        builder.warn(f"{path}: {problem}; hyperparameters taken from the run log instead")
        return
    if not isinstance(config, dict):
        builder.warn(f"{path}: not a W&B config (expected a mapping of keys to {{value: ...}})")
        return
    builder.add_file(path)
    builder.meta.hparams = {key: value for key, value in wandb_values(config).items() if key not in BOOKKEEPING_KEYS}


def _read_metadata(builder: RunBuilder, path: Path) -> None:
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        builder.warn(f"{path}: not readable JSON; start time taken from the run log instead")
        return
    started = metadata.get("startedAt") if isinstance(metadata, dict) else None
    start_time = _unix_time(started)
    if start_time is not None:
        builder.add_file(path)
        builder.meta.start_time = start_time


def _unix_time(text: Any) -> float | None:
    """``startedAt`` is ISO 8601 in UTC, with a ``Z`` since wandb 0.10 and without one before."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
