"""CSV/TSV training logs: Lightning ``metrics.csv``, Keras ``CSVLogger``, Ultralytics ``results.csv``, W&B exports,
TensorBoard chart downloads, long ``tag,step,value`` tables and any table with a step-like column.

The format is told by the header, not the file name. Every table is parsed once by pandas' C engine with only
an empty cell taken as missing, so "not logged at this row" stays distinguishable from a logged ``nan``:
columns of plain numbers arrive as floats, the rest as text converted column by column, vectorised.

A table may hold several runs one after another, told apart by a column naming them (``model``, ``seed``) at
whose every change the step starts over: each becomes a run of its own, not one run restarted again and again.
And a run may be written as a table per split (``train_performance.csv``, ``val_performance.csv``), each naming its
columns as the others do (``loss``): discovery gives such sibling files as one source, read as one run whose curves
are named with their file's split (``val_loss``). With the epoch as the only x, a table that holds several rows
an epoch (a row a batch: Lightning's 2019 ``metrics.csv``) is read in row order, not piled onto its epochs. A step
that goes back is a restart (TensorBoard's rule; a repeated epoch too in Keras' one row an epoch), while a table of
numbers only that writes several rows at most steps, never going back (``epoch,global_step,loss``, a row each
micro-batch of gradient accumulation), gives each step the mean of its rows.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from curvedoc.errors import CurvedocError, NotALog
from curvedoc.features import listed
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import (
    SPLIT_COLUMNS,
    SPLIT_FILE_WORDS,
    WANDB_EXPORT_COLUMN,
    WHITESPACE,
    Source,
    file_run_name,
    is_wandb_export,
    limits,
    sniff_delimiter,
)
from curvedoc.readers.companions import TolerantLoader
from curvedoc.readers.huggingface import (
    SUMMARY_KEYS,
    evaluated_again_after_training,
    evaluated_again_warning,
)
from curvedoc.readers.records import (
    MIN_RUN_RECORDS,
    SETTINGS_KEY,
    SKIPPED_COLUMNS,
    STEP_COLUMNS,
    WALL_TIME_COLUMNS,
    WITHIN_EPOCH_COLUMNS,
    as_value,
    columns_by_lower,
    counted_on_note,
    counts_within_epoch,
    epochs_counted_on,
    find_filled_step_column,
    find_step_column,
    primary_train_loss,
    restart_drops,
    run_of_each_record,
    splits_of_kinds,
    steps_across_epochs,
    warn_restarts,
    whole_at_line_end,
    whole_steps,
)
from curvedoc.readers.text import encoding_of, read_bytes
from curvedoc.roles import Role, epoch_average_of, infer_role, split_of, tokens

# TensorBoard's "download CSV" of one chart series.
TENSORBOARD_DOWNLOAD = {"wall time", "step", "value"}
LONG_FORMAT_TAG_COLUMNS = ("tag", "metric", "key", "type")
# Formats whose table is one run whatever its columns hold: one series (named by the file), or one point a row
WHOLE_TABLE_FORMATS = {"tensorboard-csv", "long-csv"}
NAN_WORDS = {"nan", "+nan", "-nan"}
# What writers put in a cell that has no value: Keras CSVLogger writes NA for a metric not computed that epoch.
MISSING_WORDS = {"na", "n/a", "none", "null"}
# A number printed inside what held it: a PyTorch or TensorFlow tensor (tf.Tensor(1017.9, shape=(), dtype=float32)),
# a NumPy scalar, a one-element array or list
CELL_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
WRAPPED_NUMBER = (r"^\s*(?:tensor|tf\.Tensor|np\.float\d\d|numpy\.float\d\d|np\.int\d\d|float\d\d|array)\(\s*\[?\s*"
                  rf"({CELL_NUMBER}|nan|inf|-inf)")
# A number printed with its percent sign (f"{acc:.1f}%"): the number, in percent, as a text log's "98.2%" is read
PERCENT_NUMBER = rf"^\s*({CELL_NUMBER})\s*%\s*$"
# A W&B runs-table export has one row per run: an identity column, bookkeeping columns, then config and summary.
WANDB_RUN_IDENTITY = ("Name", "ID")
WANDB_RUN_BOOKKEEPING = ("State", "Created", "Runtime", "User", "Notes", "Tags", "Sweep")
LIGHTNING_PLACEHOLDER = ("hp_metric", -1.0)
# A column that names the split of its rows when its cells are split names (train, validation, test): besides the
# columns that say so by name, one that names the rows' type or set (a script's "epoch,type,loss" rows)
ROW_SPLIT_COLUMNS = SPLIT_COLUMNS | {"type", "set", "partition"}
# Columns whose text says what a row is of within one run, never which run: its split (a block of train rows, then
# a block of val rows, each counting the epochs from 1), the class of per-class metrics.
ROW_KIND_COLUMNS = ROW_SPLIT_COLUMNS | {"class", "class_name", "label", "category"}
# Numbers that name a run rather than measure it: a file of several seeds or folds numbers them.
RUN_NUMBER_COLUMNS = {"seed", "fold", "run", "trial", "run_id", "trial_id"}
# Columns that name the run a row is of, whose rows may take turns (a comparison loop that trains every model one
# epoch at a time and writes a row for each: epoch 1 of each model, then epoch 2 of each …)
RUN_NAME_COLUMNS = RUN_NUMBER_COLUMNS | {"model", "model_name", "run_name", "name", "experiment", "arch",
                                         "architecture", "optimizer", "method", "variant", "config"}
# An epoch that holds this many rows logs batches, not epoch summaries (two: a train row and a validation row)
MIN_ROWS_PER_EPOCH = 3
# A line among a table's rows that holds named numbers instead of cells: the summary a script writes at the end of
# each epoch into its batch table ("Epoch 1 Summary,train_loss=0.72,val_loss=1.87,val_acc=0.53")
NAMED_NUMBER = re.compile(r"(?<![\w.])([A-Za-z_][\w./\-]*)\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])")
# A held-out value repeated on at least this many rows in a row (at its median), with at least this many different
# values, was carried forward between evaluations (see _carried_forward)
CARRIED_ROWS = 3


@dataclass
class Table:
    """A log's columns (plain-number columns as floats, the rest as text) and what went wrong parsing it."""

    path: Path
    frame: pd.DataFrame
    warnings: list[str]
    decimal: str = "."

    @property
    def columns(self) -> list[str]:
        return list(self.frame.columns)

    @property
    def step_column(self) -> str | None:
        """The step column among the columns holding a value (see ``records.find_filled_step_column``)."""
        return find_filled_step_column(self.columns, lambda column: self.frame[column].notna().any())


def read(source: Source) -> list[Run]:
    if len(source.files) > 1:
        return read_wandb_exports(source) if source.family == "wandb-export" else read_split_files(source)
    path = source.files[0][1] if source.files else source.path
    table = _without_evaluations_after_training(load_table(path))
    runs_table_columns = wandb_runs_table_columns(table.columns)
    if runs_table_columns:
        raise CurvedocError(path, f"a W&B runs table (one row per run: {', '.join(runs_table_columns)} columns, no "
                                  "step column), not a training curve; export a panel's CSV or the run history instead")
    if is_wandb_export(table.columns):
        return read_wandb_exports(source, [table])
    if (names := _row_names(table)) is not None:
        raise NotALog(path, f"a table of one row per named item ({', '.join(names[:3])} …) with no step column: "
                            "a summary (class counts, per-class scores), not a curve over training")
    fmt = formatted(table)
    builders = []
    parts = ([(None, table)] if fmt in WHOLE_TABLE_FORMATS
             else runs_in(table, table.step_column, every_start_over_a_run=fmt == "keras-csv"))
    for run_name, part in parts:
        builders.append(table_builder(part, fmt, run_name))
        add_table(builders[-1], part, fmt)
    runs = [builder.build() for builder in builders if builder.has_points]
    if not runs:
        # a table of text only (a data set's train.csv of sentences and labels) is no log: passed over in a folder
        # as notes are, refused when named
        raise NotALog(path, f"no numeric column (columns: {', '.join(table.columns)})")
    return runs


def _without_evaluations_after_training(table: Table) -> Table:
    """A Hugging Face Trainer's log_history saved as a table (``pd.DataFrame(trainer.state.log_history).to_csv``)
    without the evaluations after training that repeat a step evaluated during it (see
    :func:`~curvedoc.readers.huggingface.evaluated_again_after_training`)."""
    step_column = table.step_column
    if step_column is None or not SUMMARY_KEYS <= set(table.columns):
        return table
    present = table.frame.notna().to_numpy()
    keys = [{column for column, there in zip(table.columns, row, strict=True) if there} for row in present]
    again = evaluated_again_after_training(table.frame[step_column].tolist(), keys)
    if (warning := evaluated_again_warning(table.path, again)) is None:
        return table
    return Table(table.path, table.frame[~np.array(again)], [*table.warnings, warning], table.decimal)


def _row_names(table: Table) -> list[str] | None:
    """The names in a table's first column when it is pandas' index of row names (written by ``DataFrame.to_csv``
    under an empty header) holding text in every row and the table has no step column: its rows are items (a data
    set's classes and their counts), not points in time."""
    if not table.columns or not table.columns[0].startswith("Unnamed: ") or table.step_column:
        return None
    cells = table.frame[table.columns[0]]
    if cells.dtype.kind in "fiub" or cells.isna().any():
        return None
    names = [str(cell).strip() for cell in cells]
    # a digit anywhere may be a time (a date index, "epoch_3"): only names without one are surely no points
    if any(not name or any(character.isdigit() for character in name) for name in names):
        return None
    return names


def read_split_files(source: Source) -> list[Run]:
    """One run written as a table per split, which discovery found by their names (``train_performance.csv``,
    ``val_performance.csv``: see :data:`curvedoc.readers.SPLIT_FILE_WORDS`): each table's curves named with the
    split word of its file (``val_loss``, ``test_Accuracy``), since the tables repeat one another's column names,
    and each on its own step column or row number. A table that cannot be read is a warning on the run, which
    keeps the first file's name and path (the train file's) whichever split is left."""
    tables, problems = [], []
    for split, path in source.files:
        try:
            tables.append((split, load_table(path)))
        except CurvedocError as error:
            problems.append(str(error))
    if not tables:
        raise CurvedocError(source.path, f"none of the run's split files could be read ({problems[0]})")
    formats = [formatted(table) for _, table in tables]
    builder = RunBuilder(str(source.path), formats[0], name=file_run_name(source.path))
    for message in problems:
        builder.warn(message)
    for (split, table), fmt in zip(tables, formats, strict=True):
        note_table(builder, table)
        add_table(builder, table, fmt, prefix=f"{split}_")
    add_hparams(builder, source.path.parent)
    if not builder.has_points:
        raise CurvedocError(source.path, "no numeric column in any of the run's split files")
    return [builder.build()]


def formatted(table: Table) -> str:
    """The table's format (:func:`table_format`), its columns renamed where the format names them by a letter."""
    fmt = table_format(table)
    if fmt == "csv":
        _name_split_columns_by_file(table)
    if fmt == "sb3-monitor":
        table.frame.columns = [SB3_MONITOR_COLUMNS.get(column, column) for column in table.frame.columns]
        # a row is an episode, in order: its count is the step, which the file need not write
        if "episode" not in table.frame.columns:
            table.frame.insert(0, "episode", np.arange(len(table.frame)))
    return fmt


def _name_split_columns_by_file(table: Table) -> None:
    """Columns named by their split alone (``pd.DataFrame({"train": train_losses, "valid": val_losses})
    .to_csv("losses.csv")``) hold the metric the file is named after: each is renamed ``<split>_<file name>``
    (``train_losses``, ``valid_losses``) and read as that split's curve of it. A file whose name says nothing of
    what it measures leaves them as they are."""
    # imported here, as _names_of_headerless does: the text reader imports this module's neighbours
    from curvedoc.readers.textlog import names_a_metric

    metric = "_".join(word for word in tokens(table.path.stem) if word not in SPLIT_FILE_WORDS)
    if not metric or not names_a_metric(metric):
        return
    renamed = {column: f"{column}_{metric}" for column in table.columns
               if len(words := tokens(column)) == 1 and words[0] in SPLIT_FILE_WORDS}
    if renamed and not set(renamed.values()) & set(table.columns):
        table.frame.columns = [renamed.get(column, column) for column in table.frame.columns]


def add_table(builder: RunBuilder, table: Table, fmt: str, prefix: str = "") -> None:
    """Adds the curves of a table of format ``fmt``, each tag led by ``prefix`` (a split file's split)."""
    step_column = table.step_column
    by_lower = {column.lower(): column for column in table.columns}
    if fmt == "tensorboard-csv":
        add_columns(builder, table, step_column,
                    columns={by_lower["value"]: prefix + tensorboard_download_tag(table.path)})
    elif fmt == "long-csv":
        tag_column = next(by_lower[name] for name in LONG_FORMAT_TAG_COLUMNS if name in by_lower)
        add_long_format(builder, table, tag_column, step_column, by_lower["value"], prefix)
    elif (splits := _rows_by_split(table)) is not None:
        # one block of columns for every split, the split named on each row: each split's rows are its curves
        for split, part in splits:
            add_columns(builder, part, step_column, restart_on_repeat=_one_row_an_epoch(fmt, step_column),
                        prefix=prefix if split == "train" else f"{prefix}{split}_")
    else:
        add_columns(builder, table, step_column, restart_on_repeat=_one_row_an_epoch(fmt, step_column), prefix=prefix,
                    skip=evaluation_batch_columns(table.columns) if fmt == "lightning-csv" else frozenset())


def _one_row_an_epoch(fmt: str, step_column: str | None) -> bool:
    """Whether a repeated step is a restart: in Keras' CSVLogger, one row an epoch, a repeated epoch is a resumed
    fit's; rows of one step under another step column (``epoch,global_step,loss``) are that step's batches."""
    return fmt == "keras-csv" and step_column is not None and step_column.lower() == "epoch"


def _rows_by_split(table: Table) -> list[tuple[str, Table]] | None:
    """A table whose split column (``phase``: ``train`` and ``val`` rows under the same ``loss`` column) names the
    split of every row: each split's rows, the split column left out; None for any other table, and for one whose
    columns name their splits themselves (``val_loss``) on every row."""
    # the first such column whose cells are split names: a "stage" column of stage1, stage2 beside the "phase" one
    column = kinds = splits = None
    for candidate in (column for column in table.columns if column.lower() in ROW_SPLIT_COLUMNS):
        if table.frame[candidate].dtype.kind in "fiub":
            continue
        kinds = table.frame[candidate].astype(str).str.strip()
        if (splits := splits_of_kinds(kinds.unique())) is not None:
            column = candidate
            break
    if column is None:
        return None
    # a column may name its split when it is filled on that split's rows alone (a val_macro_f1 beside the shared
    # loss, empty on the train rows); one filled on the rows of another split is no table of this kind
    for other in (other for other in table.columns if other != column):
        named = split_of(tokens(other))
        if named is not None and {splits[kind] for kind in kinds[table.frame[other].notna()].unique()} - {named}:
            return None
    rest = table.frame.drop(columns=[column])
    return [(split, Table(table.path, rest[kinds.isin([kind for kind, of in splits.items() if of == split])],
                          table.warnings, table.decimal))
            for split in dict.fromkeys(splits.values())]


def evaluation_batch_columns(columns: list[str]) -> set[str]:
    """A Lightning validation or test metric logged each batch as well as each epoch (``test_acc_step`` beside
    ``test_acc_epoch``): its rows count the evaluation loop's batches in the step column (0, 1 … 528 of one test
    pass), not training steps, so on the run's axis they would be a curve at the wrong place; the ``_epoch`` twin is
    the evaluation's value."""
    present = set(columns)
    return {column for column in columns
            if epoch_average_of(column) in present and split_of(tokens(column[:-len("_step")])) in ("val", "test")}


def table_builder(table: Table, fmt: str, run_name: str | None = None) -> RunBuilder:
    """A builder that knows the table's file, its parsing problems and its hparams.yaml, for the run the table is or,
    given ``run_name``, for that one of the runs it holds: named after the file and "#" and it, which keeps each
    run's path distinct in reports (as a W&B export's runs are)."""
    path, name = str(table.path), file_run_name(table.path)
    if run_name is not None:
        path, name = f"{path}#{run_name}", f"{name}#{run_name}"
    builder = RunBuilder(path, fmt, name=name)
    note_table(builder, table)
    add_hparams(builder, table.path.parent)
    return builder


def note_table(builder: RunBuilder, table: Table) -> None:
    """The table's file among the run's, and its parsing problems among the run's warnings."""
    builder.add_file(table.path)
    for message in table.warnings:
        builder.warn(message)


def add_hparams(builder: RunBuilder, folder: Path) -> None:
    """The hparams.yaml Lightning's CSVLogger writes beside its metrics.csv, when ``folder`` holds one."""
    hparams_file = folder / "hparams.yaml"
    if hparams_file.is_file():
        builder.meta.hparams = load_hparams(hparams_file, builder)
        builder.add_file(hparams_file)


def runs_in(table: Table, step_column: str | None, every_start_over_a_run: bool = False
            ) -> list[tuple[str | None, Table]]:
    """The runs a table holds one after another, each named by its run-naming columns' values (see
    :func:`run_starts`) and with those columns dropped; the whole table, unnamed, when it holds one run.
    ``every_start_over_a_run``: see :func:`sessions_in`."""
    if step_column is None:  # with the row number for the step, nothing can start over
        return [(None, table)]
    steps, has_step, _ = numeric_cells(table.frame[step_column], table.decimal)
    starts = {column: found for column in table.columns
              if column != step_column and (found := run_starts(column, table.frame[column], steps)) is not None}
    if not starts:
        for column in table.columns:
            if column != step_column and (turns := runs_taking_turns(column, table.frame[column], steps)) is not None:
                frame = table.frame.drop(columns=[column])
                return [(run_label(column, name), Table(table.path, frame.iloc[rows], table.warnings, table.decimal))
                        for name, rows in turns.items()]
        return sessions_in(table, step_column, steps, has_step, every_start_over_a_run)
    bounds = np.concatenate(([0], np.unique(np.concatenate(list(starts.values()))), [len(table.frame)]))
    names = [" ".join(run_label(column, table.frame[column].iat[start]) for column in starts)
             for start in bounds[:-1].tolist()]
    frame = table.frame.drop(columns=list(starts))
    seen: Counter[str] = Counter()
    runs = []
    for name, start, stop in zip(names, bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        seen[name] += 1  # a name given again later is a run of its own (the same model trained once more)
        runs.append((name if seen[name] == 1 else f"{name} ({seen[name]})",
                     Table(table.path, frame.iloc[start:stop], table.warnings, table.decimal)))
    return runs


def sessions_in(table: Table, step_column: str, steps: np.ndarray, has_step: np.ndarray,
                every_start_over_a_run: bool = False
                ) -> list[tuple[str | None, Table]]:
    """The runs a table holds one after another with nothing naming them: a logger that appends writes each time
    the script is run again under the same header, the epoch starting over after a run that went to its end (see
    ``records.runs_one_after_another``, as for a text log's sessions), numbered from 1. A run cut short and started
    over stays one run, restarted. ``every_start_over_a_run``: Keras' ``CSVLogger(append=True)``, where each
    ``fit`` call writes its epochs from ``initial_epoch`` on: the epoch going back to the log's first is a new
    ``fit`` from scratch, which early stopping ends wherever its patience runs out, so no run need reach the
    furthest epoch to have ended (a resumed ``fit`` goes back to a later epoch, and stays a restart). Only where
    every run logs the same columns: a block of train rows then a block of val rows, each counting its epochs
    from the start, is one run. Stretches whose train loss takes up where the one before left it are one run's,
    counted on (see :func:`_counted_on`), but in a Keras log, where a fit that goes on passes ``initial_epoch``.
    A last session that stopped as it began is not read, with a warning."""
    if any(_tells_rows_apart(column, table.frame[column]) for column in table.columns):
        return [(None, table)]
    ended = None
    if every_start_over_a_run and has_step.any():
        owned = steps[has_step]
        ended = np.r_[owned[1:] <= owned[0], False]  # the record before the epoch goes back to the first
    run_of = run_of_each_record(steps, has_step, ended=ended)
    if not run_of.any():
        return [(None, table)]
    count = int(run_of.max()) + 1
    if not _every_counter_starts_over(table, np.flatnonzero(np.diff(run_of) > 0) + 1):
        return [(None, table)]
    logged = table.frame.notna().to_numpy()
    if len({tuple(logged[run_of == run].any(axis=0)) for run in range(count)}) > 1:
        return [(None, table)]
    if not every_start_over_a_run and (counted := _counted_on(table, step_column, steps, run_of)) is not None:
        return [(None, counted)]
    runs = [(str(run + 1) if count > 1 else None,
             Table(table.path, table.frame.iloc[np.flatnonzero(run_of == run)], table.warnings, table.decimal))
            for run in range(count)]
    if run_of[-1] < 0:
        runs[-1][1].warnings = [*table.warnings, f"{table.path}: the last session started over and ended within "
                                f"{MIN_RUN_RECORDS - 1} row(s): a run stopped as it began, not read"]
    return runs


def _counted_on(table: Table, step_column: str, steps: np.ndarray, run_of: np.ndarray) -> Table | None:
    """The table with its step counted on across its stretches when they are one run's (see
    ``records.takes_up_where_it_left``): fastai's ``CSVLogger(append=True)`` writes each ``fit_one_cycle`` call's
    epochs from 0 again under a header of its own while the same learner trains on, its train loss taking up where
    the call before left it. None when the stretches are runs of their own."""
    loss = primary_train_loss({column: int(table.frame[column].notna().sum()) for column in table.columns})
    if loss is None:
        return None
    values, _, _ = numeric_cells(table.frame[loss], table.decimal)
    counted = epochs_counted_on(steps, values, run_of)
    if counted is None:
        return None
    frame = table.frame.assign(**{step_column: counted})
    note = f"{table.path}: {counted_on_note(int(run_of.max()), loss, 'one fit after another of the same model')}"
    return Table(table.path, frame, [*table.warnings, note], table.decimal)


def _tells_rows_apart(column: str, cells: pd.Series) -> bool:
    """Whether a column says what a row is of within one run: one named so (``phase``, ``class``), or text naming
    splits (``training``, ``validation``) under any name."""
    if column.lower() in ROW_KIND_COLUMNS:
        return True
    if cells.dtype.kind in "fiub":
        return False
    kinds = cells.dropna().unique()
    return len(kinds) > 0 and all(split_of(tokens(str(kind))) for kind in kinds)


def _every_counter_starts_over(table: Table, starts: np.ndarray) -> bool:
    """Whether every counter the table logs goes back at each of the rows ``starts``, as a new run's do: an
    ``iteration`` column that starts again with each epoch goes back beside an ``epoch`` column that goes on."""
    counters = {name.lower() for name in (*STEP_COLUMNS, *WITHIN_EPOCH_COLUMNS)}
    for column in table.columns:
        if column.lower() in counters:
            values, present, _ = numeric_cells(table.frame[column], table.decimal)
            # against the last row that logs the counter: fastai's CSVLogger writes its header again above every
            # fit's rows, a row with no number in it
            before = np.maximum.accumulate(np.where(present, np.arange(len(values)), -1))[starts - 1]
            if np.any(before < 0) or not np.all(values[starts] < values[before]):
                return False
    return True


def run_starts(column: str, cells: pd.Series, steps: np.ndarray) -> np.ndarray | None:
    """The rows at which ``column`` names a new run, or None when it names none.

    A run-naming column holds a value in every row and keeps it over blocks of rows, and at each change the step
    starts over: it goes back to where the block before started, or before. A column that changes within a run (a
    train/val phase, a label, a metric written as text) fails that, and so does one that changes where a run was
    resumed from a checkpoint, mid-way. Text columns are judged by that shape alone; numbers only under a name that
    numbers runs (``seed``, ``fold``), since a metric holding still between restarts would look the same.
    """
    lowered = column.lower()
    numbered = lowered in RUN_NUMBER_COLUMNS
    if lowered in ROW_KIND_COLUMNS or (cells.dtype.kind in "fiub" and not numbered) or cells.isna().any():
        return None
    values = cells.to_numpy()
    starts = np.flatnonzero(values[1:] != values[:-1]) + 1
    if not len(starts):
        return None
    bounds = np.concatenate(([0], starts, [len(values)]))
    # fewer rows between changes of the column is the column varying within a run, not runs one after another
    if np.diff(bounds).min() < MIN_RUN_RECORDS or not np.all(
            (steps[starts] < steps[starts - 1]) & (steps[starts] <= steps[bounds[:-2]])):
        return None
    names = pd.Series(values[bounds[:-1]])
    if not numbered and (pd.to_numeric(names, errors="coerce").notna().any()
                         or all(split_of(tokens(str(name))) for name in names)):
        return None
    return starts


def runs_taking_turns(column: str, cells: pd.Series, steps: np.ndarray) -> dict | None:
    """The rows of each run a run-naming column (RUN_NAME_COLUMNS) names when the runs' rows take turns: each name's
    rows step on, and the runs share their steps (the same epochs, one row a run each), so the rows are several
    runs side by side, not one run whose rows alternate two kinds (a GAN's generator and discriminator rows, each
    at a step of its own)."""
    if column.lower() not in RUN_NAME_COLUMNS or cells.isna().any():
        return None
    values = cells.to_numpy()
    names = pd.unique(values)
    if not 2 <= len(names) <= len(values) // MIN_RUN_RECORDS:
        return None
    rows = {name: np.flatnonzero(values == name) for name in names}
    if any(len(taken) < MIN_RUN_RECORDS or not np.all(np.diff(steps[taken]) > 0) for taken in rows.values()):
        return None
    shared = set.intersection(*(set(steps[taken].tolist()) for taken in rows.values()))
    return rows if len(shared) >= MIN_RUN_RECORDS else None


def run_label(column: str, value) -> str:
    """How a run's name shows its value of a run-naming column: a text as it is, a number beside the column."""
    return f"{column}={value:g}" if isinstance(value, (float, int, np.number)) else str(value).strip()


def load_table(path: Path) -> Table:
    data = read_bytes(path)
    encoding, decoding_problem = encoding_of(data, path)
    if encoding.startswith(("utf-16", "utf-32")):  # the line checks and the C parser work on one-byte line ends
        data, encoding = data.decode(encoding, errors="replace").encode(), "utf-8"
    found = [decoding_problem] if decoding_problem else []
    data = data.lstrip(b"\r\n")
    comment = b""
    while data.startswith(b"#"):  # comment lines above the header (Stable-Baselines' Monitor: #{"t_start": …})
        comment, _, data = data.partition(b"\n")
    header = data.split(b"\n", 1)[0].decode(encoding)
    delimiter = sniff_delimiter(header)
    header_cells = _cells(header, delimiter)
    if delimiter == WHITESPACE and len(header_cells) > 1 and _one_value_a_row(data):
        # one column whose name has spaces ("Total Reward" over one number a line), not a row of names
        delimiter, header_cells = ",", [header.strip()]
    unnamed = bool(header_cells) and all(as_value(cell) is not None for cell in header_cells)
    # pandas names the columns of a bare array 0, 1, …: a header all the same, which names nothing; with its index
    # written too (DataFrame(array).to_csv(path)), ",0,1,2" heads the row numbers and the array's columns
    headerless = unnamed and header_cells != [str(number) for number in range(len(header_cells))]
    indexed_array = len(header_cells) > 1 and not header_cells[0].strip() and header_cells[1:] == [
        str(number) for number in range(len(header_cells) - 1)]
    if (columns := len(header_cells)) > limits.current().max_columns:
        raise limits.refuse(path, f"{columns:,} columns", "max_columns")
    data = drop_cut_last_line(data, delimiter, path, found)
    data = _without_repeated_headers(data, path, found)
    data, summaries = _take_summary_lines(data, delimiter, len(header_cells), encoding)
    # semicolon-separated files come from locales that write a decimal comma (Excel)
    decimal = "," if delimiter == ";" else "."
    # f.write(f"{epoch},{loss},{acc},\n"): a delimiter after each row's last value, one field more than the header
    # names, which pandas would take for row names and shift every column's name one to the right
    trailing = delimiter != WHITESPACE and _ends_each_row(data, delimiter, len(header_cells))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            # Only an empty cell is NA: a logged "nan" must not look like "not logged". Columns of plain numbers
            # come back as float64 from the C parser; the others stay text and are converted column by column.
            frame = pd.read_csv(
                io.BytesIO(data), sep=delimiter, encoding=encoding, keep_default_na=False, na_values=[""],
                on_bad_lines="warn", skipinitialspace=True, engine="c",
                decimal=decimal, header=None if headerless else "infer", index_col=False if trailing else None,
            )
        except (ValueError, pd.errors.ParserError, csv.Error) as exc:
            raise CurvedocError(path, f"not a readable table ({' '.join(str(exc).split())})") from None
    # pandas reports each chunk's bad lines in one message: "Skipping line 26: expected 14 fields, saw 27\n…"
    skipped = [line.strip() for item in caught for line in str(item.message).splitlines()
               if line.strip().startswith("Skipping line")]
    if skipped:
        found.append(f"{path}: {len(skipped)} malformed line(s) skipped ({skipped[0]}"
                     f"{', …' if len(skipped) > 1 else ''})")
    elif summaries:  # each at the row it follows, which a skipped row before it would shift
        frame = _with_summaries(frame, summaries)
        found.append(f"{path}: {len(summaries)} summary line(s) of named values among the rows (e.g. "
                     f"{', '.join(summaries[0][1])}) read at the step of the row before each")
    if not (trailing or headerless) and _named_from_the_first_field(frame, header_cells, data, delimiter):
        frame = _unshifted(frame, header_cells)
        found.append(f"{path}: rows hold {len(frame.columns) - len(header_cells)} field(s) more than the header "
                     f"names: its names go to the first {len(header_cells)}, the rest are kept by place and not "
                     "judged")
    if indexed_array:
        frame = frame.iloc[:, 1:]  # the row numbers, which the row order gives anyway
    if headerless and _one_curve_along_its_row(path, frame):
        # csv.writer(f).writerow(losses): the curve the file is named after, one value an epoch along the row
        frame = frame.T.reset_index(drop=True)
        found.append(f"{path}: one row of {len(frame)} numbers: a curve along the row")
    if unnamed or indexed_array:
        frame.columns = _names_of_headerless(path, frame, _cells(comment.decode(encoding).lstrip("#"), delimiter),
                                             found)
    frame.columns = [str(column).strip() for column in frame.columns]
    if frame.empty:
        raise CurvedocError(path, "header only, no data rows" if len(frame.columns) > 1 else "no data rows")
    return Table(path, frame, found, decimal)


def _named_from_the_first_field(frame: pd.DataFrame, names: list[str], data: bytes, delimiter: str) -> bool:
    """Whether a table whose rows hold more fields than its header names (pandas takes the first ones for row
    names, as R's write.table writes them) names its fields from the first instead: a script that added a value to
    its rows and not to its header. Its step column, read pandas' way, then holds a fraction where the row names
    count in whole numbers ("epoch,loss,acc" over "0,2.0,0.0,7")."""
    step = find_step_column(names)
    rows = _first_rows(data)
    if step is None or step not in frame.columns or not rows or count_fields(rows[0], delimiter) <= len(names):
        return False
    index = np.asarray(frame.index.get_level_values(0), dtype=object)
    counted = np.array([as_value(cell) for cell in index], dtype=float)
    stepped = np.array([as_value(cell) for cell in frame[step]], dtype=float)
    return (bool(np.isfinite(counted).all()) and whole_steps(counted)[1]
            and not whole_steps(stepped[np.isfinite(stepped)])[1])


def _unshifted(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The table with its header's names on its first fields and the fields beyond them named by place."""
    frame = frame.reset_index()
    frame.columns = names + [f"column {place}" for place in range(len(names) + 1, len(frame.columns) + 1)]
    return frame


def _first_rows(data: bytes) -> list[bytes]:
    """The first rows under the header, up to MIN_RUN_RECORDS of them, without their line ends and outer blanks."""
    return [line.strip() for line in data.split(b"\n", MIN_RUN_RECORDS + 1)[1:MIN_RUN_RECORDS + 1] if line.strip()]


def _ends_each_row(data: bytes, delimiter: str, n_names: int) -> bool:
    """Whether the first rows under the header each end with the delimiter, an empty field after as many values as
    the header has names."""
    rows, end = _first_rows(data), delimiter.encode()
    return bool(rows) and all(row.endswith(end) and count_fields(row, delimiter) == n_names + 1 for row in rows)


def _one_value_a_row(data: bytes) -> bool:
    """Whether the first rows under the header hold one number each."""
    rows = _first_rows(data)
    return bool(rows) and all(len(row.split()) == 1 and as_value(row.decode("latin-1")) is not None for row in rows)


def _one_curve_along_its_row(path: Path, frame: pd.DataFrame) -> bool:
    """Whether a headerless table is one row of numbers (MIN_RUN_RECORDS or more) in a file whose name says what
    it measures (``loss.csv``, ``accuracy.csv``): a curve written sideways, not a row of a table."""
    # imported here, as _names_of_headerless does: the text reader imports this module's neighbours
    from curvedoc.readers.textlog import names_a_metric

    return (frame.shape[0] == 1 and frame.shape[1] >= MIN_RUN_RECORDS
            and all(kind in "fiu" for kind in frame.dtypes.map(lambda dtype: dtype.kind))
            and names_a_metric("_".join(tokens(path.stem))))


def _take_summary_lines(data: bytes, delimiter: str, n_columns: int,
                        encoding: str) -> tuple[bytes, list[tuple[int, dict[str, float]]]]:
    """The table without the lines among its rows that hold named numbers (``train_loss=0.72``) and do not have
    the header's cells (so they are no row), and those lines: each as the index of the row it follows and its
    values. A file with an '=' on half its lines or more (in a text column) has none: summaries are a few lines
    among many rows."""
    if b"=" not in data:
        return data, []
    lines = data.split(b"\n")
    marked = [index for index, line in enumerate(lines) if index and b"=" in line]
    if len(marked) >= len(lines) / 2:
        return data, []
    summaries, taken, rows, counted_to = [], set(), 0, 1
    for index in marked:
        line = lines[index]
        rows += sum(1 for before in lines[counted_to:index] if before.strip())
        counted_to = index
        if count_fields(line.strip(), delimiter) == n_columns or not rows:
            continue
        values = {name: float(number) for name, number in NAMED_NUMBER.findall(line.decode(encoding, "replace"))}
        if values:
            summaries.append((rows - 1, values))
            taken.add(index)
            counted_to = index + 1
    if not summaries:
        return data, []
    return b"\n".join(line for index, line in enumerate(lines) if index not in taken), summaries


def _with_summaries(frame: pd.DataFrame, summaries: list[tuple[int, dict[str, float]]]) -> pd.DataFrame:
    """The table with each summary's values on the row it follows, in columns of their own (NaN on the other
    rows): the epoch's end, where an epoch summary belongs. A name the table has as a column already keeps the
    table's values."""
    added: dict[str, dict[int, float]] = {}
    for row, values in summaries:
        for name, value in values.items():
            if name not in frame.columns:
                added.setdefault(name, {})[row] = value
    extra = pd.DataFrame({name: pd.Series(cells, dtype=float) for name, cells in added.items()}, index=frame.index)
    return pd.concat([frame, extra], axis=1)


def _without_repeated_headers(data: bytes, path: Path, found: list[str]) -> bytes:
    """The table without the lines that repeat its header: a logger that appends writes it again above each block
    of rows (fastai's CSVLogger, once a fit). A few bytes' scan when there is none."""
    header, _, body = data.partition(b"\n")
    name_line = header.rstrip(b"\r")
    if not name_line.strip() or name_line not in body:
        return data
    lines = body.split(b"\n")
    kept = [line for line in lines if line.rstrip(b"\r") != name_line]
    if len(kept) == len(lines):
        return data
    found.append(f"{path}: its header repeated {len(lines) - len(kept)} time(s) above appended blocks of rows; "
                 "those lines skipped")
    return b"\n".join([header, *kept])


def _cells(line: str, delimiter: str) -> list[str]:
    line = line.strip()
    return line.split() if delimiter == WHITESPACE else [cell.strip() for cell in line.split(delimiter)]


def _names_of_headerless(path: Path, frame: pd.DataFrame, comment: list[str], found: list[str]) -> list[str]:
    """The names of a table whose first row is numbers, or pandas' names of a bare array's columns (0, 1, …).
    ``np.savetxt(…, header="epoch loss")`` writes its header as the comment line above the rows (``# epoch loss``);
    a script that writes rows with no header at all names its curve by the file (``rewards.csv``: one reward a
    line, or the episode counting up, then the reward). Any other table of unnamed numbers is refused: nothing says
    what its columns measure; but a file whose name says what it measures (``train_loss.txt``, ``loss_log.txt``)
    names its first column of values, the way a script writes the curve it is named after first and what it logs
    beside it after (``f"{loss},{val_loss}"``, ``f"{loss} {reward}"``): those others are kept by their place
    (``column 2``), not judged, since nothing says what they measure."""
    # imported here, as the metric-file reader does: the text reader imports this module's neighbours
    from curvedoc.readers.textlog import names_a_metric

    width = frame.shape[1]
    if len(comment) == width and all(comment) and not any(as_value(cell) is not None for cell in comment):
        return comment
    first = frame.iloc[:, 0].to_numpy()
    # a step counts up in whole numbers (every table's step rule: whole_steps); a session appended to the file
    # starts it over (the restart rule's)
    counter = width > 1 and len(first) > 1 and np.issubdtype(first.dtype, np.number)
    if counter:
        usable, whole = whole_steps(first.astype(np.float64))
        counter = bool(usable.all()) and whole and np.mean(np.diff(first) > 0) >= 0.9
    if width == 1 or (counter and width == 2):
        found.append(f"{path}: no header; the values are named by the file ({path.stem})"
                     + (", the first column, counting up, is their step" if counter else ""))
        return [path.stem] if width == 1 else ["step", path.stem]
    if not names_a_metric("_".join(tokens(path.stem))):
        raise NotALog(path, f"a table of {width} columns of numbers with no header: nothing names what they measure")
    names = [f"column {place}" for place in range(1, width + 1)]
    named = 1 if counter else 0
    names[named] = path.stem
    if counter:
        names[0] = "step"
    found.append(f"{path}: no header; its first column of values is named by the file ({path.stem})"
                 + (", the column before it, counting up, is their step" if counter else "")
                 + f"; {', '.join(names[named + 1:])} kept by place and not judged: nothing names what they measure")
    return names


def count_fields(line: bytes, delimiter: str) -> int:
    return len(line.split()) if delimiter == WHITESPACE else len(line.split(delimiter.encode()))


def last_field(line: bytes, delimiter: str) -> str:
    fields = line.split() if delimiter == WHITESPACE else line.strip().split(delimiter.encode())
    return fields[-1].strip().decode("utf-8", errors="replace") if fields else ""


def drop_cut_last_line(data: bytes, delimiter: str, path: Path, found: list[str]) -> bytes:
    """A last line without its line end may have been being written when the writer stopped: cut anywhere, even
    inside a number (``2,0.`` for ``2,0.75``), which would read as a changed value. It is dropped, as a TensorBoard
    file's cut last record is, and the rows before it kept, unless it is as long as the row before it: every field,
    and a last number with as many decimals (a table written by hand or by ``"\\n".join`` ends so)."""
    if data.endswith((b"\n", b"\r")):
        return data
    body_start = data.rfind(b"\n") + 1
    if body_start == 0 or not data[body_start:].strip():  # the header alone, or trailing blanks: no record
        return data
    header_end = data.find(b"\n")
    rows_before = data.count(b"\n", header_end + 1, body_start)
    if rows_before == 0:  # its only row: kept, since dropping it would leave nothing to read
        found.append(f"{path}: its only row has no line end (cut off while written?); kept it")
        return data
    n_fields = count_fields(data[body_start:], delimiter)
    row_before = data[data.rfind(b"\n", 0, body_start - 1) + 1:body_start].strip()
    # the rows, not the header, say how long a whole row is: a header that ends in a delimiter
    # ("epoch,loss,top1,") names one empty column more than any row holds
    n_row = count_fields(row_before, delimiter)
    if n_fields == n_row and whole_at_line_end(last_field(data[body_start:], delimiter),
                                               last_field(row_before, delimiter)):
        return data
    found.append(f"{path}: last record cut off at byte {body_start} (a line without its line end, {n_fields} of "
                 f"{n_row} fields: the usual state of a crashed or running job); dropped it, kept the "
                 f"{rows_before} complete row(s) before it")
    return data[:body_start]


# Stable-Baselines' Monitor writes one row per episode: its return, its length and the time since the start.
SB3_MONITOR_COLUMNS = {"r": "episode_reward", "l": "episode_length", "t": "time"}


def table_format(table: Table) -> str:
    columns = table.columns
    lowered = {column.lower() for column in columns}
    # Monitor(info_keywords=("is_success",)) writes what the episode's info holds after r, l and t
    if list(columns[:len(SB3_MONITOR_COLUMNS)]) == list(SB3_MONITOR_COLUMNS):
        return "sb3-monitor"
    if lowered == TENSORBOARD_DOWNLOAD:
        return "tensorboard-csv"
    if {"step", "value"} <= lowered and lowered & set(LONG_FORMAT_TAG_COLUMNS):
        return "long-csv"
    if "_step" in lowered and lowered & {"_runtime", "_timestamp"}:
        return "wandb-history-csv"
    # Lightning's before Ultralytics': a LightningModule may log "train/loss" too, beside its step column
    if "step" in columns and (
        table.path.name == "metrics.csv"
        or (table.path.parent / "hparams.yaml").is_file()
        or any(column.endswith(("_step", "_epoch")) or column.startswith("lr-") for column in columns)
    ):
        return "lightning-csv"
    if "epoch" in lowered and any(column.startswith(("train/", "metrics/", "val/")) for column in columns):
        return "ultralytics-csv"
    # fastai's CSVLogger: epoch, train_loss, valid_loss, the metrics, time (mm:ss), its header again above the rows
    # of every fit it appends
    if columns[:2] == ["epoch", "train_loss"] and columns[-1] == "time":
        return "fastai-csv"
    if columns[0] == "epoch" and "step" not in lowered:
        return "keras-csv"
    return "csv"


def tensorboard_download_tag(path: Path) -> str:
    """TensorBoard names a downloaded series ``run-<run>-tag-<tag with / as _>.csv``."""
    match = re.search(r"-tag-(.+)$", path.stem)
    return match.group(1) if match else path.stem


def numeric_cells(cells: pd.Series, decimal: str = ".") -> tuple[np.ndarray, np.ndarray, int]:
    """A text column's values and which cells hold one, and how many present cells were text, not numbers.

    An empty (or ``NA``) cell is "not logged"; ``nan``/``inf``/``Infinity`` are logged values; a value printed
    inside its wrapper (``tensor(3.1304, device='cuda:0', grad_fn=<DivBackward0>)``, ``tf.Tensor(1017.9, shape=(),
    dtype=float32)``, ``np.float64(0.91)``: a list of tensors or NumPy scalars written out with ``to_csv`` or
    ``csv.writer``) is that value.
    """
    if cells.dtype.kind in "fiub":
        values = cells.to_numpy(dtype=np.float64)
        return values, ~np.isnan(values), 0
    text = cells.fillna("")
    if decimal != ".":
        text = text.str.replace(decimal, ".", regex=False)
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    present = np.ones(len(values), dtype=bool)
    text_cells = np.zeros(len(values), dtype=bool)
    # Only cells that did not parse as numbers need a closer look: blanks, logged NaNs, stray text.
    odd = np.flatnonzero(np.isnan(values))
    if len(odd):
        values = values.copy()  # pandas may hand back a read-only view
        for form in (WRAPPED_NUMBER, PERCENT_NUMBER):
            found = pd.to_numeric(text.iloc[odd].str.extract(form, expand=False), errors="coerce")
            values[odd] = found.to_numpy(dtype=np.float64, na_value=np.nan)
            odd = odd[np.isnan(values[odd])]
            if not len(odd):
                break
    if len(odd):
        words = text.iloc[odd].str.strip().str.lower()
        blank = ((words == "") | words.isin(MISSING_WORDS)).to_numpy()
        logged_nan = words.isin(NAN_WORDS).to_numpy()
        present[odd[blank]] = False
        text_cells[odd[~blank & ~logged_nan]] = True
        if not text_cells.any() and _logged_at_a_cadence(np.flatnonzero(~np.isnan(values)), odd[logged_nan]):
            present[odd[logged_nan]] = False
    return values, present & ~text_cells, int(text_cells.sum())


def _logged_at_a_cadence(number_rows: np.ndarray, nan_rows: np.ndarray) -> bool:
    """A column that holds a number every k rows (k > 1, at least MIN_RUN_RECORDS times) and the word nan only on
    rows between them (an evaluation every 50 episodes, written with pandas' default ``na_rep`` of a float column):
    its nan says "not evaluated here", not that the value blew up. A value that turned NaN is NaN where its numbers
    were logged (the rows of the cadence after its last number), which no cadence explains."""
    if len(number_rows) < MIN_RUN_RECORDS or not len(nan_rows):
        return False
    spacing = np.diff(number_rows)
    cadence = int(spacing[0])
    return bool(cadence > 1 and np.all(spacing == cadence) and not np.any((nan_rows - number_rows[0]) % cadence == 0))


def step_values(builder: RunBuilder, table: Table, step_column: str | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each row's step, which rows have one, and whether ``step_column`` really was used as the step."""
    rows = len(table.frame)
    if step_column is not None:
        steps, has_step, _ = numeric_cells(table.frame[step_column], table.decimal)
        usable, whole = whole_steps(steps)
        has_step &= usable
        if whole:
            if not has_step.all():
                builder.warn(f"{table.path}: {int((~has_step).sum())} row(s) without a {step_column} value skipped")
            return steps, has_step, True
        builder.warn(f"{table.path}: {step_column} is not a whole number; the row number is the step")
    else:
        builder.warn(f"{table.path}: no step column ({', '.join(STEP_COLUMNS)}); the row number is the step")
    return np.arange(rows, dtype=np.float64), np.ones(rows, dtype=bool), False


def steps_within_epochs(builder: RunBuilder, table: Table, step_column: str, steps: np.ndarray,
                        has_step: np.ndarray) -> tuple[np.ndarray, set[str]]:
    """``steps`` counted on across epochs when the step starts again with every epoch: the step column itself
    (``iteration`` beside ``epoch``) or, when the epoch is the step (or, with no epoch column, the step column counts
    the epochs: ``iteration,batch``), a batch counter beside it (``Epoch,Batch``),
    else the rows themselves (:func:`rows_within_epochs`); and the columns that then make the step (no curves of
    their own)."""
    by_lower = columns_by_lower(table.columns)
    within = next((by_lower[name] for name in WITHIN_EPOCH_COLUMNS if by_lower.get(name, step_column) != step_column),
                  None)
    # with no epoch column, the step column may count the epochs itself (minimaxir's char-embeddings log:
    # iteration 1, 2, … with a batch 0, 50, … 7800 starting again within each)
    epoch_column = by_lower.get("epoch", step_column if within is not None else None)
    counter_column = step_column if step_column != epoch_column else within
    if epoch_column is not None and counter_column is None:
        return rows_within_epochs(builder, table, epoch_column, steps)
    if epoch_column is None or counter_column is None:
        return steps, set()
    counter, has_counter, _ = numeric_cells(table.frame[counter_column], table.decimal)
    epoch, has_epoch, _ = numeric_cells(table.frame[epoch_column], table.decimal)
    rows = has_counter & has_epoch
    usable, whole = whole_steps(np.where(rows, counter, np.nan))
    if (has_step & ~(rows & usable)).any() or not whole or not counts_within_epoch(counter[rows], epoch[rows]):
        return steps, set()
    steps = steps.copy()
    steps[rows] = steps_across_epochs(counter[rows], epoch[rows])
    return steps, {counter_column, epoch_column}


def wall_times(table: Table) -> tuple[np.ndarray | None, str | None]:
    column = next((c for c in table.columns if c.lower() in WALL_TIME_COLUMNS), None)
    if column is None:
        return None, None
    walls, present, _ = numeric_cells(table.frame[column], table.decimal)
    return np.where(present, walls, np.nan), column


def rows_within_epochs(builder: RunBuilder, table: Table, epoch_column: str, steps: np.ndarray
                       ) -> tuple[np.ndarray, set[str]]:
    """The row order as the step when the epoch is the only x and it holds for several rows in a row, never going
    back: a row a batch (Lightning's 2019 metrics.csv: a created_at clock, the validation's row at the epoch's
    end), which the epoch alone would pile onto one step each. Else ``steps`` as they are."""
    epoch, has_epoch, _ = numeric_cells(table.frame[epoch_column], table.decimal)
    if not has_epoch.all() or np.any(np.diff(epoch) < 0):
        return steps, set()  # an epoch missing, or one logged again: a restart, which the restart rule handles
    if np.unique(epoch, return_counts=True)[1].max() < MIN_ROWS_PER_EPOCH:
        return steps, set()
    builder.warn(f"{table.path}: several rows an epoch and no step column; the row number is the step")
    return np.arange(len(epoch), dtype=np.float64), {epoch_column}


def add_columns(
    builder: RunBuilder, table: Table, step_column: str | None, restart_on_repeat: bool = False,
    columns: dict[str, str] | None = None, prefix: str = "", skip: frozenset[str] | set[str] = frozenset(),
    axis: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None,
) -> None:
    """Adds each mostly-numeric column as a curve (``columns`` maps table columns to tag names; default all but
    ``skip``, each named ``prefix`` and its name). ``axis``: each row's step, which rows have one, and their wall
    times, when the caller has read them already (it then names the ``columns``)."""
    if axis is None:
        steps, has_step, step_used = step_values(builder, table, step_column)
        walls, wall_column = wall_times(table)
    else:
        steps, has_step, walls = axis
    if columns is None:
        skipped = {step_column if step_used else None, wall_column} | SKIPPED_COLUMNS | skip
        if step_used:
            # the other counters beside the step (a global_step beside Lightning's step, an iteration beside a
            # frame count) count the same progress: no curves
            skipped |= {column for column in table.columns if column.lower() in STEP_COLUMNS}
            steps, step_columns = steps_within_epochs(builder, table, step_column, steps, has_step)
            skipped |= step_columns
        # a column that names its own split (a val_macro_f1 among a validation file's or rows' columns) keeps it;
        # a setting repeated on every row (Ray Tune's config/lr) is no curve
        columns = {c: c if prefix and split_of(tokens(c)) else prefix + c
                   for c in table.columns
                   if c not in skipped and c and not c.startswith(("Unnamed: ", f"{SETTINGS_KEY}/"))}
    stray_cells = []
    superseded = np.zeros(len(steps), dtype=bool)
    curves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for column, tag in columns.items():
        values, present, n_text = numeric_cells(table.frame[column], table.decimal)
        if n_text > present.sum():
            continue  # a text column (names, dates): not a curve
        if n_text:
            stray_cells.append(f"{column} ({n_text})")
        rows = has_step & present
        if tag == LIGHTNING_PLACEHOLDER[0]:
            rows &= values != LIGHTNING_PLACEHOLDER[1]
        # Per column, so a table written as a block of train rows then a block of val rows is no "restart".
        dropped = restart_drops(steps, rows, restart_on_repeat)
        superseded |= dropped
        rows &= ~dropped
        if rows.any():
            curves[tag] = values, rows
    validation = validation_metrics({tag: rows for tag, (_, rows) in curves.items()})
    carried = _carried_forward(curves, validation)
    if carried:
        builder.warn(f"{table.path}: {', '.join(carried)} repeated on the rows between evaluations (carried "
                     "forward); each is read where its value changes")
    averaged = []
    # rows of one step that a text column could tell apart (a model, an algorithm, a split by another name) are
    # different curves' points, never one step's batches
    numbers_only = all(table.frame[column].dtype.kind in "fiub" for column in table.columns)
    for tag, (values, rows) in curves.items():
        tag_steps, tag_values = steps[rows], values[rows]
        tag_walls = None if walls is None else walls[rows]
        repeated = tag_steps[1:] == tag_steps[:-1]
        if numbers_only and repeated.sum() >= MIN_RUN_RECORDS and repeated.mean() >= 0.5:
            # several rows of most steps, the step never going back: the micro-batches of gradient accumulation (or
            # one row a process), whose mean is the loss of the step the optimiser took. A few repeated steps are a
            # resumed run's, or a test run twice, whose last row stands (the builder's rule)
            tag_steps, starts = np.unique(tag_steps, return_index=True)
            ends = np.r_[starts[1:], len(tag_values)]
            tag_values = np.add.reduceat(tag_values, starts) / (ends - starts)
            tag_walls = None if tag_walls is None else tag_walls[ends - 1]
            averaged.append(tag)
        builder.add(tag, tag_steps, tag_values, tag_walls, split_hint="val" if tag in validation else None)
    if averaged:
        builder.warn(f"{table.path}: several rows at one step in {listed(averaged, 3)} (gradient-accumulation "
                     "micro-batches, or one row a process); each step's mean is read")
    if stray_cells:
        builder.warn(f"{table.path}: text cells in numeric columns skipped: {', '.join(stray_cells)}")
    warn_restarts(builder, table.path, int(superseded.sum()), "row(s)")


def _carried_forward(curves: dict[str, tuple[np.ndarray, np.ndarray]], validation: set[str]) -> list[str]:
    """The held-out columns a script wrote on every row, repeating the last evaluation's value until the next one
    (33,500 rows of a validation_loss evaluated 338 times), narrowed in place to the rows where each changes; their
    tags. Only where the train curves beside them change from row to row, so that the repeats are no frozen model:
    each run of equal values is at least CARRIED_ROWS rows long at its median, there are at least CARRIED_ROWS
    different values, and the values change on a schedule, as evaluations every so many rows do: every run between
    the first and the last spans a whole number of their median, give or take a tenth, three in four of them (two
    evaluations that scored the same make one run twice as long). A held-out accuracy on a small set that holds its
    value for 3, then 4, then 73 epochs is a model whose predictions barely change, every point of it kept."""
    def changes(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        kept = values[rows]
        return np.r_[True, kept[1:] != kept[:-1]]

    held_out = {tag for tag in curves if tag in validation
                or infer_role(tag) in (Role.VAL_LOSS, Role.TEST_LOSS, Role.VAL_ACC, Role.TEST_ACC)}
    candidates = {}
    for tag in sorted(held_out):
        first = changes(*curves[tag])
        runs = np.diff(np.r_[np.flatnonzero(first), len(first)])
        if first.sum() >= CARRIED_ROWS and np.median(runs) >= CARRIED_ROWS and _on_a_schedule(runs):
            candidates[tag] = first
    if not candidates or not any(changes(*curves[tag]).mean() >= 0.5 for tag in curves
                                 if tag not in held_out and curves[tag][1].sum() > 1):
        return []
    for tag, first in candidates.items():
        rows = curves[tag][1]
        kept = np.flatnonzero(rows)[first]
        rows[:] = False
        rows[kept] = True
    return list(candidates)


def _on_a_schedule(runs: np.ndarray) -> bool:
    """Whether the runs of equal values between the first and the last (either may be cut by the log's ends), two
    at least, span a whole number of their median length, give or take a tenth of it: three in four of them, as a
    schedule that starts again each epoch leaves a short run at each epoch's end (runs of 100 rows, and of 25, 50
    or 75 at six epoch ends in 338)."""
    inner = runs[1:-1]
    if len(inner) < 2:
        return False
    period = float(np.median(inner))
    multiples = np.round(inner / period)
    on_schedule = (multiples >= 1) & (np.abs(inner - multiples * period) <= 0.1 * period)
    return bool(on_schedule.mean() >= 0.75)


def validation_metrics(rows_of: dict[str, np.ndarray]) -> set[str]:
    """The accuracy columns that are the validation's though they name no split: in a table beside a train loss and
    a validation loss that each name their split, an accuracy with no split-named twin, logged only on rows the
    validation loss is logged on. fastai's ``epoch train_loss valid_loss accuracy time`` and the HF Trainer's
    ``Training Loss | Validation Loss | Accuracy`` compute their metrics on the validation set; Keras names both
    of its accuracies (``accuracy``, ``val_accuracy``), and a bare ``loss`` beside them names no split."""
    roles = {tag: infer_role(tag) for tag in rows_of}
    splits = {tag: split_of(tokens(tag)) for tag in rows_of}
    validation_rows = [rows for tag, rows in rows_of.items() if roles[tag] is Role.VAL_LOSS and splits[tag]]
    if not validation_rows or not any(roles[tag] is Role.TRAIN_LOSS and splits[tag] == "train" for tag in rows_of):
        return set()
    on_validation = np.logical_or.reduce(validation_rows)
    named = {tuple(word for word in tokens(tag) if split_of([word]) is None) for tag in rows_of if splits[tag]}
    return {tag for tag, rows in rows_of.items()
            if roles[tag] is Role.TRAIN_ACC and splits[tag] is None and tuple(tokens(tag)) not in named
            and not (rows & ~on_validation).any()}


def add_long_format(builder: RunBuilder, table: Table, tag_column: str, step_column: str, value_column: str,
                    prefix: str = "") -> None:
    """A table with one row per point (``tag, step, value``: tbparse, curvedoc's own scalars); each tag named
    ``prefix`` and its name. A tag that is only a split's name is that split's loss, as build-nanoGPT logs it
    (``step,type,value`` rows of ``train``, ``val`` and ``hella``); numeric columns beside the three (its ``lr``,
    ``norm``) are curves of their own, on the rows that hold them."""
    steps, has_step, _ = step_values(builder, table, step_column)
    walls, wall_column = wall_times(table)
    values, present, n_text = numeric_cells(table.frame[value_column], table.decimal)
    if n_text:
        builder.warn(f"{table.path}: {n_text} text cell(s) in {value_column} skipped")
    codes, tags = pd.factorize(table.frame[tag_column].fillna("").astype(str))
    usable = has_step & present
    for code, tag in enumerate(tags):
        rows = usable & (codes == code)
        if tag and rows.any():
            named = f"{tag}_loss" if len(words := tokens(tag)) == 1 and split_of(words) else tag
            builder.add(prefix + named, steps[rows], values[rows], None if walls is None else walls[rows])
    beside = [column for column in table.columns
              if column not in {tag_column, step_column, value_column, wall_column} | SKIPPED_COLUMNS]
    if beside:
        add_columns(builder, table, step_column, columns={column: prefix + column for column in beside},
                    axis=(steps, has_step, walls))


def wandb_runs_table_columns(columns: list[str]) -> list[str]:
    """The columns that make a table a W&B runs-table export (by its shape: no step column, a run's identity or
    W&B's bookkeeping), or none."""
    if find_step_column(columns) is not None or is_wandb_export(columns):
        return []
    identity = [column for column in WANDB_RUN_IDENTITY if column in columns]
    bookkeeping = [column for column in WANDB_RUN_BOOKKEEPING if column in columns]
    return identity + bookkeeping if identity or len(bookkeeping) >= 2 else []


def read_wandb_exports(source: Source, tables: list[Table] | None = None) -> list[Run]:
    """W&B panel exports: the x-axis column, then ``<run> - <metric>`` per run (``__MIN``/``__MAX`` ignored).

    One run per run name across every file of the source (one panel per file); files exported against
    different x axes (``Step``, a custom ``epoch``) are never merged, each axis giving runs of its own.
    """
    problems = []
    if tables is None:
        tables = []
        for _, path in source.files:
            try:
                tables.append(load_table(path))
            except CurvedocError as error:
                problems.append(str(error))
        if not tables:
            raise CurvedocError(source.path, f"no W&B export in it could be read ({problems[0]})")
    by_axis: dict[str, dict[str, list[tuple[Table, dict[str, str]]]]] = {}
    for table in tables:
        if not is_wandb_export(table.columns):
            problems.append(f"{table.path}: not a W&B panel export (its columns changed?); skipped")
            continue
        by_run = by_axis.setdefault(table.columns[0], {})
        for column in table.columns[1:]:
            match = WANDB_EXPORT_COLUMN.match(column)
            if not match.group("companion"):
                parts = by_run.setdefault(match.group("run"), [])
                if not parts or parts[-1][0] is not table:
                    parts.append((table, {}))
                parts[-1][1][column] = match.group("metric")
    runs = []
    for axis, by_run in by_axis.items():
        for run_name, parts in by_run.items():
            # the run name after "#" keeps each run's path distinct in reports; the axis too when a folder has two
            path = f"{source.path}#{run_name}" + (f" ({axis})" if len(by_axis) > 1 else "")
            builder = RunBuilder(path, "wandb-export", name=run_name)
            for message in problems:
                builder.warn(message)
            for table, columns in parts:
                builder.add_file(table.path)
                for message in table.warnings:
                    builder.warn(message)
                add_columns(builder, table, axis, columns=columns)
            if builder.has_points:
                runs.append(builder.build())
    if not runs:
        raise CurvedocError(source.path, "W&B export with no numeric value")
    return runs


def load_hparams(path: Path, builder: RunBuilder) -> dict:
    try:
        loaded = yaml.load(path.read_text(encoding="utf-8", errors="replace"), Loader=TolerantLoader)
    except (OSError, yaml.YAMLError, ValueError) as exc:
        builder.warn(f"{path}: hyperparameters not read ({' '.join(str(exc).split())[:120]})")
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(key): value for key, value in loaded.items()}
