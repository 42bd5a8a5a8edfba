"""Renderers: each module turns runs into one output format."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from curvedoc.model import Run

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def series_summary(run: Run) -> list[dict[str, Any]]:
    """Per tag: role, number of points, step range and count of NaN/±Inf values, in the run's tag order."""
    scalars = run.scalars
    if scalars.empty:
        return []
    stats = (
        scalars.assign(nonfinite=~np.isfinite(scalars["value"].to_numpy()))
        .groupby("tag", observed=True, sort=False)
        .agg(n_points=("step", "size"), first_step=("step", "min"), last_step=("step", "max"),
             n_nonfinite=("nonfinite", "sum"))
    )
    return [
        {
            "tag": tag,
            "role": run.roles[tag].value,
            "n_points": int(stats.at[tag, "n_points"]),
            "first_step": int(stats.at[tag, "first_step"]),
            "last_step": int(stats.at[tag, "last_step"]),
            "n_nonfinite": int(stats.at[tag, "n_nonfinite"]),
        }
        for tag in run.tags
        if tag in stats.index
    ]


def printable(text: str) -> str:
    """Text from a log, safe for a terminal: control characters (escape sequences, newlines) shown as ``?``."""
    return _CONTROL.sub("?", text)


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
