"""Rows of named values (JSON Lines, W&B history, trainer logs) turned into per-tag curves.

Row-shaped formats log a dict per step with only some keys present; a missing key means "not logged at this
step", while a logged NaN/Infinity stays a value. What counts as a step, and as a restart, is decided here for
every row- and table-shaped format alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from curvedoc.model import RunBuilder

NONFINITE_WORDS = {
    "nan": math.nan, "+nan": math.nan, "-nan": math.nan,
    "inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf,
    "-inf": -math.inf, "-infinity": -math.inf,
}
# Step-like columns, finest first: a log with both ``step`` and ``epoch`` is indexed by step.
# The reinforcement-learning loggers count environment steps, the x they plot against: Stable-Baselines3's
# time/total_timesteps, OpenAI Baselines' misc/total_timesteps, total/steps and TimestepsSoFar.
STEP_COLUMNS = ("step", "global_step", "trainer/global_step", "_step", "iteration", "iter", "time/total_timesteps",
                "misc/total_timesteps", "total_timesteps", "total timesteps", "total/steps", "timestepssofar", "epoch")
WALL_TIME_COLUMNS = {"_timestamp", "wall_time", "walltime", "wall time", "timestamp"}
# Bookkeeping that is neither a curve nor a clock: W&B's seconds since start, and the epoch counter that
# step-indexed logs (Lightning) repeat on every row (as a curve it would only add duplicate-step noise).
SKIPPED_COLUMNS = {"_runtime", "epoch"}
# The trainer's own step, logged in every row beside a tracker's counter of its log calls (W&B's _step): the
# Hugging Face Trainer's train/global_step, Lightning's trainer/global_step. The trainer's is the run's x axis.
TRAINER_STEP_KEYS = ("train/global_step", "trainer/global_step")


def trainer_step_key(rows: list[Mapping[str, Any]], counter_key: str) -> str:
    """``counter_key`` (a tracker's count of log calls), unless the trainer logged its own step in nearly every
    row (all but one in ten: a row logged before the trainer started may lack it)."""
    for key in TRAINER_STEP_KEYS:
        if rows and sum(key in row for row in rows) >= 0.9 * len(rows):
            return key
    return counter_key


# A step beyond int64 is a corrupt or mistyped cell, not a step: numpy would wrap it to a nonsense number.
STEP_LIMIT = 2**63


def whole_steps(steps: np.ndarray) -> tuple[np.ndarray, bool]:
    """Which of ``steps`` (floats, NaN where a row has none) are usable, and whether all usable ones are whole.

    One rule for every table-like reader: a usable step is finite and fits int64; a column with fractional
    steps (an epoch counter logged as 0.5, 1.0 …) is not a step column at all.
    """
    usable = np.isfinite(steps) & (np.abs(steps) < STEP_LIMIT)
    return usable, bool(np.all(steps[usable] == np.round(steps[usable])))


def as_value(raw: Any) -> float | None:
    """A logged scalar as float, or None when the cell holds no number (text, lists, media dicts)."""
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, (int, float, np.integer, np.floating)):
        return _clipped(raw)
    if isinstance(raw, str):
        text = raw.strip()
        word = NONFINITE_WORDS.get(text.lower())
        if word is not None:
            return word
        try:
            return float(text)
        except ValueError:
            return None
    return None


def add_rows(
    builder: RunBuilder,
    rows: Iterable[Mapping[str, Any]],
    step_key: str | None,
    wall_time_key: str | None = None,
    skip_keys: Iterable[str] = (),
    prefix: str = "",
) -> int:
    """Adds every numeric key of ``rows`` as a curve; the step comes from ``step_key`` (else the row index).

    Nested dicts become ``a/b`` tags. Returns the number of rows used. Histories run to millions of values, so
    the common case (a plain number under a flat key) takes the shortest path; each key only remembers which
    rows it appeared in, and steps and wall times are gathered per key with numpy at the end.
    """
    skip = set(skip_keys) | {key for key in (step_key, wall_time_key) if key}
    row_steps: list[int] = []
    row_walls: list[float] = []
    columns: dict[str, tuple[list[int], list[float]]] = {}
    for index, row in enumerate(rows):
        step = row.get(step_key) if step_key else index
        if type(step) is not int:
            step = as_value(step)
            if step is None or not math.isfinite(step):
                continue
        if not -STEP_LIMIT < step < STEP_LIMIT:
            continue
        wall = row.get(wall_time_key) if wall_time_key else None
        if wall is not None and type(wall) is not float:
            wall = as_value(wall)
        position = len(row_steps)
        row_steps.append(int(step))
        row_walls.append(math.nan if wall is None else wall)
        for key, value in row.items():
            kind = type(value)
            if kind is float or kind is int:
                if prefix:
                    key = prefix + key
                if key in skip:
                    continue
                column = columns.get(key)
                if column is None:
                    column = columns[key] = ([], [])
                column[0].append(position)
                column[1].append(value)
            else:
                for name, nested in _flat_items({key: value}, prefix):
                    value = None if name in skip else as_value(nested)
                    if value is not None:
                        column = columns.setdefault(name, ([], []))
                        column[0].append(position)
                        column[1].append(value)
    steps = np.asarray(row_steps, dtype=np.int64)
    walls = np.asarray(row_walls, dtype=np.float64)
    for name, (positions, values) in columns.items():
        where = np.asarray(positions, dtype=np.int64)
        builder.add(name, steps[where], _floats(values), walls[where])
    return len(row_steps)


def _floats(values: list) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except OverflowError:  # a JSON integer beyond float range: as a float it is infinite
        return np.array([_clipped(value) for value in values], dtype=np.float64)


def _clipped(value: float | int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _flat_items(row: Mapping[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if "_type" not in value:  # W&B media (images, tables, histograms) are not scalars
                yield from _flat_items(value, name + "/")
        else:
            yield name, value


def find_step_column(columns: list[str]) -> str | None:
    by_lower = {}
    for column in columns:
        by_lower.setdefault(column.lower(), column)
    for name in STEP_COLUMNS:
        if name in by_lower:
            return by_lower[name]
    return None


def restart_drops(steps: np.ndarray, present: np.ndarray, restart_on_repeat: bool) -> np.ndarray:
    """TensorBoard's rule for a resumed run: a restart at step s drops what was logged at steps ≥ s before it.

    Two rows at one step are normal in sparse logs (a train row and a val row), so there only a step that
    goes back is a restart (and drops what was logged at that very step before it too: a session appended to a
    text log that starts again at step 100); in one-row-per-epoch logs (Keras) a repeated epoch is one too.
    """
    where = np.flatnonzero(present)
    logged = steps[where].astype(np.float64)
    restarts = logged if restart_on_repeat else np.where(np.diff(logged, prepend=np.inf) < 0, logged, np.inf)
    restart_after = np.append(np.minimum.accumulate(restarts[::-1])[::-1][1:], np.inf)
    drops = np.zeros(len(steps), dtype=bool)
    drops[where] = logged >= restart_after
    return drops


def warn_restarts(builder: RunBuilder, path: Path, n_dropped: int, unit: str) -> None:
    if n_dropped:
        builder.warn(
            f"{path}: the step went back (a restarted run); {n_dropped} {unit} logged before the restart at steps "
            "it logged again were dropped, the latest values kept"
        )
