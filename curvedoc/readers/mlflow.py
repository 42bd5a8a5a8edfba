"""MLflow's two local tracking stores: the file store (``mlruns/``) and the SQLite store (``mlflow.db``).

File store (``mlruns/<experiment_id>/<run_id>/``): ``metrics/<key>`` holds one line per logged point,
``<timestamp_ms> <value> <step>`` (MLflow ≤ 0.x wrote two fields and no step; dataset-linked metrics add two more),
the value written by Python's ``str(float)`` so NaN and ±Inf appear as ``nan``/``inf``/``-inf``. Keys containing
``/`` are stored as sub-folders, so ``metrics/train/loss`` is the curve ``train/loss``; ``params/`` nests the same
way. ``meta.yaml`` holds the run name, its start time (ms) and its lifecycle stage.

SQLite store (schema from MLflow's own SQLAlchemy models and migrations): ``runs`` (run_uuid, name,
experiment_id, start_time, lifecycle_stage), ``metrics`` (key, value, timestamp, step, is_nan, run_uuid),
``params`` (key, value, run_uuid), ``tags`` and ``experiments``. MLflow cannot store NaN or ±Inf in SQL:
``SqlAlchemyStore.sanitize_metric_value`` writes NaN as value 0 with ``is_nan = 1`` and clips ±Inf to
±1.7976931348623157e308 (the largest float64). We map both back, so an Inf loss reads as Inf; a finite value of
exactly ±float64-max is not something training logs. Older databases lack ``is_nan`` (before its migration) or
``step``: then values are taken as stored. A curve whose every point sits at one step (the old schema, or
``log_metric`` called without a step, which stores 0) is read in the order it was logged, with a warning.

Keras autolog with ``EarlyStopping(restore_best_weights=True)`` logs ``stopped_epoch`` and ``restored_epoch``, then
every metric once more at step ``stopped_epoch + 1`` with the restored epoch's values (MLflow's
``_log_early_stop_callback_metrics``): that point is no epoch that ran, and read as one the loss would jump back
up at the end. It is dropped where it repeats the restored epoch's value exactly, with a warning.

The database is opened read-only and never changed, not even by SQLite's bookkeeping: a read-only connection to a
WAL-mode database would leave ``-wal``/``-shm`` files next to it, so a WAL database without a live ``-wal`` file
is opened as immutable instead.
"""

from __future__ import annotations

import io
import math
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from curvedoc.errors import CurvedocError, describe_os_error
from curvedoc.features import listed
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import Source
from curvedoc.readers.records import STEP_LIMIT, files_under, whole_steps

FLOAT64_MAX = np.finfo(np.float64).max
METRIC_FIELD_COUNTS = {2, 3, 5}  # the line shapes MLflow's FileStore._get_metric_from_line accepts
WAL_MODE = b"\x02\x02"  # bytes 18-19 of the SQLite header: file format versions 2 = write-ahead log
LOCK_TIMEOUT_SECONDS = 2.0


def read(source: Source) -> list[Run]:
    if source.files:
        return read_database(source.path)
    return [read_run_folder(source.path)]


# ---------------------------------------------------------------------------------------------- file store

def read_run_folder(run_dir: Path) -> Run:
    meta, meta_problem = _run_meta(run_dir / "meta.yaml")
    if meta.get("lifecycle_stage") == "deleted":
        raise CurvedocError(run_dir, "run is deleted in MLflow (lifecycle_stage: deleted); skipped")
    builder = RunBuilder(run_dir, "mlflow", name=str(meta.get("run_name") or ""))
    if meta_problem:
        builder.warn(f"{run_dir / 'meta.yaml'}: {meta_problem}; run name and start time unknown")
    if not builder.name:
        builder.name = _read_text(run_dir / "tags" / "mlflow.runName") or run_dir.name
    builder.meta.start_time = _seconds(meta.get("start_time"))

    metric_files = files_under(run_dir / "metrics", builder)
    problems, stepless, curves = [], [], {}
    for tag, path in metric_files:
        problem = _read_metric_file(builder, tag, path, stepless, curves)
        if problem:
            problems.append(problem)
    _warn_stepless(builder, run_dir / "metrics", stepless)
    _add_curves(builder, run_dir / "metrics", curves)
    if metric_files and not builder.has_points and problems:
        raise CurvedocError(run_dir / "metrics", f"no readable metric file ({problems[0]})")
    if not metric_files:
        builder.warn(f"{run_dir / 'metrics'}: no metrics logged")

    params = {}
    for key, path in files_under(run_dir / "params", builder):
        text = _read_text(path)
        if text is None:
            builder.warn(f"{path}: unreadable parameter file")
        else:
            params[key] = param_value(text)
    _set_hparams(builder, params)
    return builder.build()


def _run_meta(path: Path) -> tuple[dict, str | None]:
    try:
        with open(path, "rb") as handle:
            meta = yaml.safe_load(handle)
    except OSError as exc:
        return {}, describe_os_error(exc)
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}, "not valid YAML"
    return (meta, None) if isinstance(meta, dict) else ({}, "not a YAML mapping")


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="replace").strip()
    except OSError:
        return None


def _read_metric_file(builder: RunBuilder, tag: str, path: Path, stepless: list[str], curves: dict) -> str | None:
    """Puts one metric file's points in ``curves``; returns a problem when the file held none. A metric logged
    without a step is noted in ``stepless``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        builder.warn(f"{path}: {describe_os_error(exc)}")
        return describe_os_error(exc)
    builder.add_file(path)
    complete_end = data.rfind(b"\n") + 1
    if complete_end < len(data) and data[complete_end:].strip():
        # MLflow appends whole lines ending in a newline: a tail without one is a write cut short.
        builder.warn(f"{path}: last line cut off mid-write (crashed run?); it was dropped")
    timestamps, values, steps = _parse_metric_lines(data[:complete_end], builder, path)
    if len(values) == 0:
        problem = "empty metric file" if not data.strip() else "no line of the form `timestamp value step`"
        builder.warn(f"{path}: {problem}")
        return f"{path}: {problem}"
    curves[tag] = (_in_logged_order(steps, tag, stepless), values, timestamps / 1000.0)
    return None


def _add_curves(builder: RunBuilder, where: Path, curves: dict[str, tuple[np.ndarray, ...]]) -> None:
    """Adds the run's curves, less the restored epoch's copy Keras autolog logs after early stopping (see the
    module doc)."""
    extra = _restored_copy_step(curves)
    copied = []
    for tag, (steps, values, walls) in curves.items():
        if extra is not None and _is_restored_copy(steps, values, *extra):
            keep = steps != extra[0]
            steps, values, walls = steps[keep], values[keep], walls[keep]
            copied.append(tag)
        builder.add(tag, steps, values, walls)
    if copied:
        builder.warn(f"{where}: {listed(copied)} logged again at step "
                     f"{extra[0]}, after the last epoch, with the values of the restored epoch {extra[1]} (Keras "
                     "autolog after early stopping): not an epoch that ran, dropped")


def _restored_copy_step(curves: dict[str, tuple[np.ndarray, ...]]) -> tuple[int, int] | None:
    """(stopped_epoch + 1, restored_epoch) when the run logged both once, as Keras autolog does."""
    stopped, restored = curves.get("stopped_epoch"), curves.get("restored_epoch")
    if stopped is None or restored is None or len(stopped[1]) != 1 or len(restored[1]) != 1:
        return None
    if not (np.isfinite(stopped[1][0]) and np.isfinite(restored[1][0])):
        return None
    return int(stopped[1][0]) + 1, int(restored[1][0])


def _is_restored_copy(steps: np.ndarray, values: np.ndarray, extra: int, restored: int) -> bool:
    """The curve's last point sits at ``extra`` and repeats, to the bit, its value at the restored epoch."""
    at_extra, at_restored = np.flatnonzero(steps == extra), np.flatnonzero(steps == restored)
    return (len(at_extra) == 1 and len(at_restored) == 1 and steps.max() == extra
            and values[at_extra[0]] == values[at_restored[0]])


def _in_logged_order(steps: np.ndarray, tag: str, stepless: list[str]) -> np.ndarray:
    """``steps``, or, when every point of a curve sits at one step, the order the points were logged in (0, 1, 2
    …): ``mlflow.log_metric`` without a step stores each point at step 0, and read by step a run's epochs would be
    one point logged again and again, of which the last is kept."""
    if len(steps) < 2 or not np.all(steps == steps[0]):
        return steps
    stepless.append(tag)
    return np.arange(len(steps), dtype=np.int64)


def _warn_stepless(builder: RunBuilder, where: Path, stepless: list[str]) -> None:
    if stepless:
        builder.warn(f"{where}: {', '.join(stepless[:5])}{' …' if len(stepless) > 5 else ''} logged without a "
                     "step (every point at one step): the order they were logged in is read as their step")


def _parse_metric_lines(data: bytes, builder: RunBuilder, path: Path):
    """Bulk-parses ``timestamp value step`` lines with pandas' C parser; any odd line sends the file to the
    exact line-by-line parser, which skips what MLflow itself would reject."""
    if not data.strip():
        return np.array([]), np.array([]), np.array([], dtype=np.int64)
    n_fields = len(data[: data.find(b"\n")].split(b" "))
    if n_fields in METRIC_FIELD_COUNTS:
        try:
            # every line must have the first line's field count: a short, long or empty-field line raises
            table = pd.read_csv(
                io.BytesIO(data), sep=" ", header=None, names=range(n_fields), usecols=range(min(n_fields, 3)),
                dtype=np.float64, engine="c", keep_default_na=False, na_values=["nan"],
            )
        except (ValueError, pd.errors.ParserError):
            table = None
        if table is not None:
            timestamps, values = table[0].to_numpy(), table[1].to_numpy()
            steps = table[2].to_numpy() if n_fields > 2 else np.zeros(len(table))
            usable, whole = whole_steps(steps)
            if np.isfinite(timestamps).all() and usable.all() and whole:
                return timestamps, values, steps.astype(np.int64)
    return _parse_lines_exactly(data, builder, path)


def _parse_lines_exactly(data: bytes, builder: RunBuilder, path: Path):
    timestamps, values, steps = [], [], []
    bad_lines = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        fields = line.strip().split(b" ")  # as MLflow splits: two spaces mean an empty field, not one gap
        try:
            if len(fields) not in METRIC_FIELD_COUNTS:
                raise ValueError
            point = int(fields[0]), float(fields[1]), int(fields[2]) if len(fields) > 2 else 0
            if not -STEP_LIMIT < point[2] < STEP_LIMIT:
                raise ValueError
        except ValueError:
            bad_lines.append(number)
            continue
        timestamps.append(point[0])
        values.append(point[1])
        steps.append(point[2])
    if bad_lines:
        builder.warn(
            f"{path}: {len(bad_lines)} line(s) that are not `timestamp value step` skipped "
            f"(first at line {bad_lines[0]})"
        )
    return np.array(timestamps, dtype=np.float64), np.array(values, dtype=np.float64), np.array(steps, dtype=np.int64)


def _seconds(milliseconds) -> float | None:
    is_number = isinstance(milliseconds, (int, float)) and not isinstance(milliseconds, bool)
    return milliseconds / 1000.0 if is_number else None


def param_value(text):
    """MLflow stores every param as a string: give numbers back as numbers so configs can be searched."""
    if not isinstance(text, str):
        return text  # SQLite's loose typing can hand back a number or NULL
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def _set_hparams(builder: RunBuilder, params: dict) -> None:
    builder.meta.hparams = params
    builder.hparams_source = "MLflow param"


# ---------------------------------------------------------------------------------------------- SQLite store

def read_database(db: Path) -> list[Run]:
    connection, wal_note = _connect_read_only(db)
    try:
        return _read_tables(db, connection, wal_note)
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        raise CurvedocError(db, _describe_sqlite_error(exc)) from None
    finally:
        connection.close()


def _connect_read_only(db: Path) -> tuple[sqlite3.Connection, str | None]:
    try:
        with open(db, "rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise CurvedocError(db, describe_os_error(exc)) from None
    wal_file = Path(f"{db}-wal")
    options, note = "mode=ro", None
    if header[18:20] == WAL_MODE:
        if not wal_file.exists():
            options = "immutable=1"  # nothing pending in a WAL that does not exist; and no -shm gets created
        elif not Path(f"{db}-shm").exists():
            options = "immutable=1"
            note = (f"{wal_file}: changes not yet moved into the database were not read "
                    "(reading them would need a -shm file written next to it)")
    try:
        connection = sqlite3.connect(
            f"{db.resolve().as_uri()}?{options}", uri=True, timeout=LOCK_TIMEOUT_SECONDS,
        )
        connection.execute("PRAGMA query_only = ON")
        # names and tags are user text: a damaged or foreign byte must not stop the whole database
        connection.text_factory = _text
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        raise CurvedocError(db, _describe_sqlite_error(exc)) from None
    return connection, note


def _describe_sqlite_error(exc: sqlite3.Error | UnicodeDecodeError) -> str:
    if isinstance(exc, UnicodeDecodeError):  # Python could not even decode SQLite's message about a broken schema
        return "corrupt SQLite database (undecodable bytes in its schema)"
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith("SQLITE_BUSY") or "locked" in str(exc):
        return "SQLite database is locked by another process (an MLflow server writing?); try again when it is idle"
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return f"corrupt SQLite database ({exc})"
    return f"unreadable SQLite database ({exc})"


def _read_tables(db: Path, connection: sqlite3.Connection, wal_note: str | None) -> list[Run]:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"metrics", "runs"} <= tables:
        raise CurvedocError(db, "SQLite database without MLflow's metrics/runs tables")
    runs = _run_rows(connection)
    if not runs:
        deleted = connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        raise CurvedocError(db, f"no runs in it (all {deleted} deleted in MLflow)" if deleted else "no runs in it")
    params = _rows_by_run(connection, "params") if "params" in tables else {}
    run_name_tags = (
        dict(connection.execute("SELECT run_uuid, value FROM tags WHERE key = 'mlflow.runName'"))
        if "tags" in tables else {}
    )
    builders = {}
    for run_uuid, name, start_time in runs:
        name = name or run_name_tags.get(run_uuid) or run_uuid
        builder = RunBuilder(f"{db}#{run_uuid}", "mlflow-sqlite", name=str(name))
        builder.add_file(db)
        if wal_note:
            builder.warn(wal_note)
        builder.meta.start_time = _seconds(start_time)
        _set_hparams(builder, {key: param_value(value) for key, value in params.get(run_uuid, [])})
        builders[run_uuid] = builder
    _add_metrics(db, connection, builders)
    return [builder.build() for builder in builders.values()]


def _run_rows(connection: sqlite3.Connection) -> list[tuple]:
    columns = _columns(connection, "runs")
    wanted = [column if column in columns else "NULL" for column in ("name", "start_time")]
    # A deleted run is one the user threw away in the UI (it waits there for `mlflow gc`): not wanted in a
    # diagnosis, and MLflow's own listings hide it too. There is no run left to carry a warning, so it is skipped.
    alive = "WHERE lifecycle_stage IS NOT 'deleted'" if "lifecycle_stage" in columns else ""
    order = "ORDER BY start_time, run_uuid" if "start_time" in columns else "ORDER BY run_uuid"
    return connection.execute(f"SELECT run_uuid, {', '.join(wanted)} FROM runs {alive} {order}").fetchall()


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _rows_by_run(connection: sqlite3.Connection, table: str) -> dict[str, list[tuple[str, str]]]:
    grouped: dict[str, list[tuple[str, str]]] = {}
    for run_uuid, key, value in connection.execute(f"SELECT run_uuid, key, value FROM {table} ORDER BY key"):
        grouped.setdefault(run_uuid, []).append((key, value))
    return grouped


def _add_metrics(db: Path, connection: sqlite3.Connection, builders: dict[str, RunBuilder]) -> None:
    columns = _columns(connection, "metrics")
    step = "step" if "step" in columns else "0"
    is_nan = "is_nan" if "is_nan" in columns else "0"
    # One query per curve walks MLflow's (run_uuid, key, step) index, already in step order: over twice as fast
    # as sorting the whole table. rowid is insertion order, so among points logged at one step the last logged
    # comes last, and the builder keeps it.
    order = "step, rowid" if "step" in columns else "rowid"
    query = (
        f"SELECT {step}, timestamp, value, {is_nan} FROM metrics "
        f"WHERE run_uuid = CAST(? AS TEXT) AND key = CAST(? AS TEXT) ORDER BY {order}"
    )
    # keys travel as their raw bytes: a key that is not valid UTF-8 reads back as text with U+FFFD in it,
    # which would no longer match the row it came from
    curves = connection.execute(
        "SELECT DISTINCT CAST(run_uuid AS BLOB), CAST(key AS BLOB) FROM metrics ORDER BY run_uuid, key"
    ).fetchall()
    stepless_of: dict[str, list[str]] = {}
    curves_of: dict[str, dict[str, tuple[np.ndarray, ...]]] = {}
    for raw_run_uuid, raw_key in curves:
        builder = builders.get(_text(raw_run_uuid))
        if builder is None:  # a deleted run, or rows whose run is gone
            continue
        key = _text(raw_key)
        rows = connection.execute(query, (raw_run_uuid, raw_key)).fetchall()
        try:
            points = np.array(rows, dtype=np.float64).reshape(-1, 4)
        except (TypeError, ValueError):
            builder.warn(f"{db}: metric {key!r} holds values that are not numbers; skipped")
            continue
        values = points[:, 2]
        values[points[:, 3] != 0] = math.nan
        values[values == FLOAT64_MAX] = math.inf
        values[values == -FLOAT64_MAX] = -math.inf
        stepless = stepless_of.setdefault(_text(raw_run_uuid), [])
        curves_of.setdefault(_text(raw_run_uuid), {})[key] = (
            _in_logged_order(points[:, 0], key, stepless), values, points[:, 1] / 1000.0)
    for run_uuid, stepless in stepless_of.items():
        _warn_stepless(builders[run_uuid], db, stepless)
        _add_curves(builders[run_uuid], db, curves_of[run_uuid])


def _text(raw: bytes | None) -> str:
    return "" if raw is None else raw.decode("utf-8", errors="replace")
