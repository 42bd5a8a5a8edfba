"""Rows of named values (JSON Lines, W&B history, trainer logs) turned into per-tag curves.

Row-shaped formats log a dict per step with only some keys present; a missing key means "not logged at this
step", while a logged NaN/Infinity stays a value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from curvedoc.model import RunBuilder

NONFINITE_WORDS = {
    "nan": math.nan, "+nan": math.nan, "-nan": math.nan,
    "inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf,
    "-inf": -math.inf, "-infinity": -math.inf,
}


def as_value(raw: Any) -> float | None:
    """A logged scalar as float, or None when the cell holds no number (text, lists, media dicts)."""
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, (int, float, np.integer, np.floating)):
        return float(raw)
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

    Nested dicts become ``a/b`` tags. Returns the number of rows used.
    """
    skip = set(skip_keys) | {key for key in (step_key, wall_time_key) if key}
    columns: dict[str, tuple[list[int], list[float], list[float]]] = {}
    used = 0
    for index, row in enumerate(rows):
        step = as_value(row.get(step_key)) if step_key else float(index)
        if step is None or not math.isfinite(step):
            continue
        wall = as_value(row.get(wall_time_key)) if wall_time_key else None
        used += 1
        for key, raw in _flat_items(row, prefix):
            if key in skip:
                continue
            value = as_value(raw)
            if value is None:
                continue
            steps, values, walls = columns.setdefault(key, ([], [], []))
            steps.append(int(step))
            values.append(value)
            walls.append(math.nan if wall is None else wall)
    for key, (steps, values, walls) in columns.items():
        builder.add(key, steps, values, walls)
    return used


def _flat_items(row: Mapping[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if "_type" not in value:  # W&B media (images, tables, histograms) are not scalars
                yield from _flat_items(value, name + "/")
        else:
            yield name, value
