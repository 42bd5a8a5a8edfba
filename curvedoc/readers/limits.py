"""What one input file may cost: a log with a million columns, a single line of hundreds of megabytes or JSON
nested a million deep is not a training log, and reading it must end in a one-line refusal naming the file and
the limit, not in minutes of parsing and gigabytes of memory.

The limits are settable in ``[tool.curvedoc.limits]`` (see :data:`DEFAULTS` for their meanings); the command
line, the API and the audit's workers read with the configuration's limits (:func:`using`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from curvedoc.errors import CurvedocError

# name → (default, meaning); every limit is a whole number of at least 1
DEFAULTS = {
    "max_columns": (10_000, "columns of a CSV/TSV log (a log of 10,000 metrics is already an exceptional one)"),
    "max_line_bytes": (16 << 20, "bytes in one line of a CSV or JSON Lines log, or in a whole JSON document line"),
    "max_json_depth": (64, "nesting depth of the objects and arrays of a JSON log (W&B rows nest a few levels)"),
    "max_records": (200_000_000, "rows of a CSV/JSON Lines log or records of one event file"),
}


@dataclass(frozen=True)
class ReadLimits:
    max_columns: int = DEFAULTS["max_columns"][0]
    max_line_bytes: int = DEFAULTS["max_line_bytes"][0]
    max_json_depth: int = DEFAULTS["max_json_depth"][0]
    max_records: int = DEFAULTS["max_records"][0]

    @classmethod
    def from_table(cls, table: Mapping, where: str | None) -> ReadLimits:
        """``[tool.curvedoc.limits]``: each key one of DEFAULTS, each value a whole number of at least 1."""
        from curvedoc.diagnose import closest

        if not isinstance(table, Mapping):
            raise CurvedocError(where, "limits must be a table, e.g. [tool.curvedoc.limits] max_columns = 20000")
        for key, value in table.items():
            if key not in DEFAULTS:
                raise CurvedocError(where, f"limits: unknown limit {key!r}{closest(key, DEFAULTS)} "
                                           f"(limits: {', '.join(DEFAULTS)})")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CurvedocError(where, f"limits.{key} must be a whole number of at least 1 ({DEFAULTS[key][1]})")
        return replace(cls(), **dict(table))

    def as_dict(self) -> dict[str, int]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


_current = ReadLimits()


def current() -> ReadLimits:
    return _current


@contextlib.contextmanager
def using(limits: ReadLimits) -> Iterator[None]:
    """Reads within ``limits`` for the duration (the CLI's, the API's or an audit worker's configuration)."""
    global _current
    previous, _current = _current, limits
    try:
        yield
    finally:
        _current = previous


def refuse(path: Path | str, what: str, limit: str) -> CurvedocError:
    value = getattr(_current, limit)
    return CurvedocError(path, f"{what}, over the limit of {value:,} (limits.{limit}: raise it in "
                               f"[tool.curvedoc.limits] if this really is a log)")


def check_lines(data: bytes, path: Path | str) -> None:
    """Refuses a text log with a line longer than max_line_bytes or more lines than max_records."""
    limits = _current
    if len(data) <= limits.max_line_bytes and len(data) // 2 < limits.max_records:
        return  # too short to break either limit: most logs, at no cost
    lines = data.count(b"\n")
    if lines > limits.max_records:
        raise refuse(path, f"{lines:,} lines", "max_records")
    # jump from the last line end within each window of max_line_bytes to the next: a few C searches a file, where
    # an array of every line end cost ~24 bytes a line three times over
    start, window = 0, limits.max_line_bytes + 1
    while len(data) - start > limits.max_line_bytes:
        end = data.rfind(b"\n", start, start + window)
        if end < 0:
            ends = np.flatnonzero(np.frombuffer(data, np.uint8) == ord("\n"))  # only to name the longest line
            longest = int(np.diff(np.concatenate(([-1], ends, [len(data)]))).max()) - 1
            raise refuse(path, f"a line of {longest:,} bytes", "max_line_bytes")
        start = end + 1


NOT_BRACKETS = bytes(code for code in range(256) if code not in b"{}[]")
NOT_BRACKETS_NOR_NEWLINES = bytes(code for code in range(256) if code not in b"{}[]\n")


def check_json_depth(data: bytes | str, path: Path | str, per_line: bool = False) -> None:
    """Refuses JSON nested deeper than max_json_depth (counting brackets, inside strings too: an upper bound).
    ``per_line``: JSON Lines, each line a document of its own, so a bracket a string leaves open on one line (a
    logged note "cfg {") does not deepen every line after it."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    # bytes.translate keeps only the brackets at C speed: a numpy mask over every byte cost 1.6 s for 66 MB
    marks = np.frombuffer(raw.translate(None, NOT_BRACKETS_NOR_NEWLINES if per_line else NOT_BRACKETS), np.uint8)
    if len(marks) < 2 * _current.max_json_depth:
        return
    opening = (marks == ord("{")) | (marks == ord("["))
    newline = marks == ord("\n")
    depth = np.cumsum(np.where(opening, 1, np.where(newline, 0, -1)), dtype=np.int64)
    if per_line:
        # each line's depth counts from where the count stood at the line end before it
        last_end = np.maximum.accumulate(np.where(newline, np.arange(len(marks)), -1))
        depth -= np.r_[0, depth][last_end + 1]
    deepest = int(depth.max())
    if deepest > _current.max_json_depth:
        raise refuse(path, f"JSON nested {deepest:,} levels deep", "max_json_depth")
