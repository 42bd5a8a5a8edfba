"""DVCLive's output folder (``dvclive/`` by default; the Hugging Face, Lightning and Keras callbacks take another).

``Live.log_metric(name, value)`` appends a row to ``<dir>/plots/metrics/<name>.tsv``: a tab-separated table whose
header is ``step`` and the metric's last name part (``timestamp`` first, in milliseconds, when asked for), a name
with ``/`` being sub-folders (``train/loss`` → ``plots/metrics/train/loss.tsv``). ``metrics.json`` holds the latest
value of each (the summary) and ``params.yaml`` what ``log_params`` logged. A run resumed with ``resume=True``
appends to the same tables from the step ``metrics.json`` recorded; a new run without it empties the folder first.
One folder is one run: its tables are its curves, read together, never as runs of their own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from curvedoc.errors import CurvedocError
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import DVCLIVE_METRICS, Source
from curvedoc.readers.csvlog import load_hparams, load_table, note_table, numeric_cells
from curvedoc.readers.records import files_under

TABLE_SUFFIXES = (".tsv", ".csv")  # DVCLive writes .tsv; it reads either back


def read(source: Source) -> list[Run]:
    folder = source.path
    builder = RunBuilder(folder, "dvclive", name=folder.name)
    problems = []
    tables = _tables_under(folder.joinpath(*DVCLIVE_METRICS), builder)
    for tag, path in tables:
        problem = _add_table(builder, tag, path)
        if problem:
            problems.append(problem)
    if (folder / "params.yaml").is_file():
        builder.meta.hparams = load_hparams(folder / "params.yaml", builder)
        builder.add_file(folder / "params.yaml")
    if not builder.has_points:
        reason = problems[0] if problems else "no metric table under plots/metrics"
        raise CurvedocError(folder, f"DVCLive folder without a readable metric ({reason})")
    return [builder.build()]


def _tables_under(folder: Path, builder: RunBuilder) -> list[tuple[str, Path]]:
    """``(metric name, path)`` of every table below ``folder``, the name its path under it (``train/loss``)."""
    return [(key.removesuffix(path.suffix), path) for key, path in files_under(folder, builder)
            if path.suffix in TABLE_SUFFIXES]


def _add_table(builder: RunBuilder, tag: str, path: Path) -> str | None:
    """Adds one metric's table as the curve ``tag``; returns a problem when it held no point."""
    try:
        table = load_table(path)
    except CurvedocError as error:
        builder.warn(str(error))
        return str(error)
    note_table(builder, table)
    by_name = {column.lower(): column for column in table.columns}
    value_columns = [column for column in table.columns if column.lower() not in ("step", "timestamp")]
    if "step" not in by_name or len(value_columns) != 1:
        problem = f"{path}: not a DVCLive metric table (columns: {', '.join(table.columns)})"
        builder.warn(problem)
        return problem
    steps, has_step, _ = numeric_cells(table.frame[by_name["step"]], table.decimal)
    values, has_value, _ = numeric_cells(table.frame[value_columns[0]], table.decimal)
    kept = has_step & has_value
    if not kept.any():
        return f"{path}: no point in it"
    walls = None
    if "timestamp" in by_name:
        stamps, _, _ = numeric_cells(table.frame[by_name["timestamp"]], table.decimal)
        walls = stamps[kept] / 1000.0
    builder.add(tag, steps[kept].astype(np.int64), values[kept], walls)
    return None
