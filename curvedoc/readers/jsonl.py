"""JSON Lines metric logs: Detectron2 ``metrics.json``, W&B ``wandb-history.jsonl``, any ``*.jsonl`` of dicts.

One JSON object per line, each holding the values logged at one step; a key missing from a line was not
logged there. Python's json reads the ``NaN``/``Infinity`` tokens these writers emit for non-finite values.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from curvedoc.errors import CurvedocError
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import SPLIT_COLUMNS, Source, file_run_name, limits
from curvedoc.readers.records import (
    SETTINGS_KEY, SKIPPED_COLUMNS, STEP_COLUMNS, STEP_LIMIT, WALL_TIME_COLUMNS, add_rows, as_value, counted_on_note,
    counts_within_epoch, epochs_counted_on, find_filled_step_column, names_the_epoch, primary_train_loss,
    restart_drops, run_of_each_record, splits_of_kinds, steps_across_epochs, stopped_as_it_began, warn_restarts,
    whole_steps,
)
from curvedoc.readers.text import read_text
from curvedoc.roles import Role, infer_role, split_of, tokens

WANDB_STEP, WANDB_WALL_TIME = "_step", "_timestamp"
MAX_FIRST_ROWS = 1000  # the rows whose keys say what the file logs: every key shows up long before its thousandth
# keys that place a record (its step, epoch, wall time) rather than measure anything: an evaluation's keep their names
PLACING_KEYS = SKIPPED_COLUMNS | set(STEP_COLUMNS) | WALL_TIME_COLUMNS


def read(source: Source) -> list[Run]:
    path = source.files[0][1] if source.files else source.path
    builder = RunBuilder(path, "jsonl", name=file_run_name(path))
    builder.add_file(path)
    rows = read_lines(path, builder)
    if not rows:
        raise CurvedocError(path, "no JSON object lines")
    rows = _named_for_their_split(_without_settings(rows, builder, path))
    keys = {key for row in rows[:MAX_FIRST_ROWS] for key in row}
    if WANDB_STEP in keys:
        builder.format = "wandb-history"
        step_key, wall_key = WANDB_STEP, WANDB_WALL_TIME
    else:
        if path.name == "metrics.json" and "iteration" in keys:
            builder.format = "detectron2-jsonl"
        step_key = find_filled_step_column(
            sorted(keys), lambda key: any(row.get(key) is not None for row in rows[:MAX_FIRST_ROWS]))
        wall_key = next((key for key in sorted(keys) if key.lower() in WALL_TIME_COLUMNS), None)
        if step_key is None:
            builder.warn(f"{path}: no step key ({', '.join(STEP_COLUMNS)}); the line number is the step")
        else:
            rows = _evaluations_at_their_epochs(_counted_across_epochs(rows, step_key), step_key)
    sessions = _sessions(rows, step_key, builder, path)
    runs = []
    for number, session in enumerate(sessions, start=1):
        run_builder = builder
        if len(sessions) > 1:
            # each run the file holds, named after it and "#" and its number, as a text or CSV log's are
            run_builder = builder.without_points()
            run_builder.path, run_builder.name = f"{path}#{number}", f"{builder.name}#{number}"
        add_history_rows(run_builder, session, step_key, wall_key, path)
        if not run_builder.has_points:
            raise CurvedocError(path, "no numeric values in its JSON lines")
        runs.append(run_builder.build())
    return runs


def _without_settings(rows: list[dict], builder: RunBuilder, path: Path) -> list[dict]:
    """Rows without the settings each repeats under SETTINGS_KEY (Ray Tune's result.json: the trial's config in
    every record), which are the run's configuration, the first row's read as it (a class count in it counts), not
    curves."""
    first = next((row[SETTINGS_KEY] for row in rows if isinstance(row.get(SETTINGS_KEY), dict)), None)
    if first is None:
        return rows
    builder.add_config(f"{path.name}: {SETTINGS_KEY}", first)
    return [{key: value for key, value in row.items() if key != SETTINGS_KEY} for row in rows]


def _named_for_their_split(rows: list[dict]) -> list[dict]:
    """Rows that say their split in a key of their own (OpenMMLab's ``*.log.json``: ``{"mode": "train", "epoch": 1,
    "iter": 50, "loss": …}`` and ``{"mode": "val", "epoch": 1, "iter": 400, "bbox_mAP": …}``) with every name of a
    held-out row said with its split (``val_bbox_mAP``), as a CSV's split column makes them; the split key left
    out. A held-out row's settings and timings that the train rows carry as well (``lr``, ``time``) describe the
    training at that point: left to the train rows, not read again as a second curve."""
    split_key = next((key for row in rows[:MAX_FIRST_ROWS] for key in row if key.lower() in SPLIT_COLUMNS), None)
    if split_key is None:
        return rows
    kinds = [kind if isinstance(kind := row.get(split_key), str) else None for row in rows]
    splits = splits_of_kinds(set(kinds) - {None})
    if splits is None:
        return rows
    trained = {key for row, kind in zip(rows, kinds, strict=True) if splits.get(kind) == "train" for key in row}
    named = []
    for row, kind in zip(rows, kinds, strict=True):
        split = splits.get(kind)
        row = {key: value for key, value in row.items() if key != split_key}
        named.append(row if split is None or split == "train" else _held_out_row(row, split, trained))
    return named


def _held_out_row(row: dict, split: str, trained: set[str]) -> dict:
    """An evaluation record's values, each name said with ``split`` unless it says a split or places the record;
    without the settings and timings the train records carry too (see :func:`_named_for_their_split`)."""
    return {key if key.lower() in PLACING_KEYS or split_of(tokens(key)) is not None else f"{split}_{key}": value
            for key, value in row.items()
            if key.lower() in PLACING_KEYS or key not in trained or infer_role(key) not in (Role.LR, Role.OTHER)}


def _evaluations_at_their_epochs(rows: list[dict], step_key: str) -> list[dict]:
    """MMEngine's ``vis_data/scalars.json`` (MMDetection 3, MMPretrain, MMSegmentation 1 …): train records place
    themselves at their iteration and say their epoch (``{"loss": …, "epoch": 3, "iter": 1250, "step": 1250}``),
    while the evaluation after each epoch logs its epoch as its step (``{"coco/bbox_mAP": …, "step": 3}``). Such
    records, without an epoch of their own, whose every step is an epoch the train records reached, are placed at
    that epoch's last train step and read as held-out (``val_coco/bbox_mAP``); at their own steps they sat before
    the training and, the step going back, made the reader drop all but the last epoch as a restarted run's."""
    epoch_key = _epoch_key(rows, step_key)
    if epoch_key is None:
        return rows
    last_step_of: dict[float, float] = {}
    for row in rows:
        if epoch_key in row and step_key in row:
            epoch, step = _step_of(row[epoch_key]), _step_of(row[step_key])
            if abs(step) < STEP_LIMIT and abs(epoch) < STEP_LIMIT:
                last_step_of[epoch] = max(step, last_step_of.get(epoch, -np.inf))
    evaluations = [row for row in rows if epoch_key not in row and step_key in row]
    counts_iterations = any(step != epoch for epoch, step in last_step_of.items())
    if not evaluations or not counts_iterations or any(_step_of(row[step_key]) not in last_step_of
                                                       for row in evaluations):
        return rows
    trained = {key for row in rows if epoch_key in row for key in row}
    return [row if epoch_key in row or step_key not in row else
            {**_held_out_row(row, "val", trained), step_key: int(last_step_of[_step_of(row[step_key])])}
            for row in rows]


def _epoch_key(rows: list[dict], step_key: str) -> str | None:
    """The key that says the epoch of the rows with a step, other than the step key, if any."""
    return next((key for row in rows[:MAX_FIRST_ROWS] if step_key in row for key in row
                 if key != step_key and names_the_epoch(key)), None)


def _counted_across_epochs(rows: list[dict], step_key: str) -> list[dict]:
    """Rows whose step key counts the iterations within an epoch logged beside it (OpenMMLab's ``"epoch": 2,
    "iter": 50``), with that count made one step across the epochs (see ``records.steps_across_epochs``); the rows
    as they are otherwise."""
    epoch_key = _epoch_key(rows, step_key)
    if epoch_key is None:
        return rows
    counter = np.array([_step_of(row.get(step_key)) for row in rows], dtype=np.float64)
    epoch = np.array([_step_of(row.get(epoch_key)) for row in rows], dtype=np.float64)
    usable, whole = whole_steps(counter)
    placed = usable & (np.abs(epoch) < STEP_LIMIT)
    if not whole or not placed.any() or not counts_within_epoch(counter[placed], epoch[placed]):
        return rows
    steps = counter.copy()
    steps[placed] = steps_across_epochs(counter[placed], epoch[placed])
    if not (np.abs(steps[placed]) < STEP_LIMIT).all():
        return rows  # epochs so far apart that their iterations cannot be counted on: the rows place themselves
    return [{**row, step_key: int(step)} if place else row
            for row, step, place in zip(rows, steps.tolist(), placed.tolist(), strict=True)]


def _sessions(rows: list[dict], step_key: str | None, builder: RunBuilder, path: Path) -> list[list[dict]]:
    """The runs a file holds one after another (see ``records.runs_one_after_another``): Detectron2's JSONWriter
    appends to ``metrics.json``, so a training started again in the same output folder without ``--resume``
    writes its iterations from the first after the run before it; one resumed from its checkpoint goes on from a
    later iteration, and stays one run, restarted. A last session that stopped as it began stays with the run it
    would have replaced (``add_history_rows`` says so). Stretches whose loss takes up where the one before left it
    are a step counter starting again every epoch (``{"loss": …, "step": batch_index}``): one run, counted on."""
    if step_key is None:
        return [rows]
    steps = np.array([_step_of(row.get(step_key)) for row in rows], dtype=np.float64)
    usable, whole = whole_steps(steps)
    if not whole or not usable.any():
        return [rows]
    run_of = run_of_each_record(steps, usable)
    if not (run_of > 0).any():
        return [rows]
    loss_key = _loss_key(rows)
    counted = None if loss_key is None else epochs_counted_on(
        steps, np.array([_step_of(row.get(loss_key)) for row in rows], dtype=np.float64), run_of)
    if counted is not None:
        builder.warn(f"{path}: {counted_on_note(int(run_of.max()), loss_key)}")
        return [[{**row, step_key: step} if place else row
                 for row, step, place in zip(rows, counted.tolist(), usable.tolist(), strict=True)]]
    run_of[run_of < 0] = run_of.max()  # a session that stopped as it began: read with the run before it
    return [[row for row, run in zip(rows, run_of.tolist()) if run == number] for number in range(run_of.max() + 1)]


def _loss_key(rows: list[dict]) -> str | None:
    """The key of the training loss the rows log, if one is named so: the one a person would plot of several."""
    return primary_train_loss(Counter(key for row in rows[:MAX_FIRST_ROWS] for key in row))


def add_history_file(builder: RunBuilder, path: Path) -> int:
    """Adds a W&B ``wandb-history.jsonl`` (``_step`` steps, ``_timestamp`` wall times); returns the rows used.

    Raises :class:`CurvedocError` when the file cannot be read at all; bad lines become warnings.
    """
    builder.add_file(path)
    return add_history_rows(builder, read_lines(path, builder), WANDB_STEP, WANDB_WALL_TIME, path)


def add_history_rows(
    builder: RunBuilder, rows: list[dict], step_key: str | None, wall_key: str | None, path: Path
) -> int:
    """Adds ``rows`` as curves, after dropping what a restarted run logged again (steps going back)."""
    if step_key is not None:
        steps = np.array([_step_of(row.get(step_key)) for row in rows], dtype=np.float64)
        usable, whole = whole_steps(steps)
        if not whole:
            builder.warn(f"{path}: {step_key} is not a whole number; the line number is the step")
            return add_rows(builder, rows, None, wall_key, skip_keys=SKIPPED_COLUMNS | {step_key})
        if not usable.all():
            builder.warn(f"{path}: {int((~usable).sum())} line(s) without a {step_key} value skipped")
        stopped = stopped_as_it_began(steps, usable)
        if stopped.any():
            builder.warn(f"{path}: the step went back to {int(steps[stopped][0])} for a last {int(stopped.sum())} "
                         "line(s) only (a session that stopped as it began); kept the run they would have replaced, "
                         "not read those")
        dropped = restart_drops(steps, usable & ~stopped, restart_on_repeat=False) | stopped
        warn_restarts(builder, path, int((dropped & ~stopped).sum()), "line(s)")
        rows = [row for row, superseded in zip(rows, dropped) if not superseded]
    skipped = SKIPPED_COLUMNS - {step_key}
    return add_rows(builder, rows, step_key, wall_key, skip_keys=skipped)


def _step_of(raw: Any) -> float:
    if type(raw) is int:
        return raw
    value = as_value(raw)
    return np.nan if value is None else value


def read_lines(path: Path, builder: RunBuilder) -> list[dict]:
    """The JSON objects of a JSON Lines file; a cut last line or a bad line becomes a warning, not a failure."""
    text, decoding_problem = read_text(path)
    if decoding_problem:
        builder.warn(decoding_problem)
    limits.check_json_depth(text, path, per_line=True)
    lines = text.splitlines()
    rows = _decode_all_at_once(lines)
    if rows is not None:
        return rows
    rows = []
    bad_lines: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        objects = _objects_on(line)
        if objects:
            rows.extend(objects)
        else:
            bad_lines.append(number)
    if bad_lines and bad_lines[-1] == len(lines) and not text.endswith("\n"):
        builder.warn(f"{path}: last record cut off (line {bad_lines.pop()} has no line end: the usual state of a "
                     f"crashed or running job); dropped it, kept the {len(rows)} complete line(s) before it")
    if bad_lines:
        builder.warn(f"{path}: {len(bad_lines)} line(s) that are not JSON objects skipped (first: line {bad_lines[0]})")
    return rows


_DECODER = json.JSONDecoder()


def _objects_on(line: str) -> list[dict] | None:
    """The JSON objects one line holds: one, or several written back to back when two writers append to one file
    without a line end between them (``{…"step": 8000}{"lm_loss": 3.49, …}``); None when the line is anything else
    (damaged, cut, or a value that is no object)."""
    objects, position = [], 0
    while (position := len(line) - len(line[position:].lstrip())) < len(line):
        try:
            value, position = _DECODER.raw_decode(line, position)
        except ValueError:
            return None
        if type(value) is not dict:
            return None
        objects.append(value)
    return objects


def _decode_all_at_once(lines: list[str]) -> list[dict] | None:
    """All lines as one JSON array: one C-level parse instead of a million Python-level calls.

    Returns None when any line is damaged or not an object; the caller then goes line by line to keep the rest.
    """
    joined = ",".join(line for line in lines if line.strip())
    try:
        rows = _DECODER.decode(f"[{joined}]")
    except ValueError:
        return None
    return rows if all(type(row) is dict for row in rows) else None
