"""Rows of named values (JSON Lines, W&B history, trainer logs) turned into per-tag curves.

Row-shaped formats log a dict per step with only some keys present; a missing key means "not logged at this
step", while a logged NaN/Infinity stays a value. What counts as a step, and as a restart, is decided here for
every row- and table-shaped format alike.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from curvedoc.errors import describe_os_error
from curvedoc.model import RunBuilder
from curvedoc.roles import Role, infer_role, primary_tag, split_of, tokens

NONFINITE_WORDS = {
    "nan": math.nan, "+nan": math.nan, "-nan": math.nan,
    "inf": math.inf, "+inf": math.inf, "infinity": math.inf, "+infinity": math.inf,
    "-inf": -math.inf, "-infinity": -math.inf,
}
# Step-like columns, finest first: a log with both ``step`` and ``epoch`` is indexed by step.
# The reinforcement-learning loggers count environment steps, the x they plot against: Stable-Baselines3's
# time/total_timesteps, OpenAI Baselines' misc/total_timesteps, total/steps and TimestepsSoFar; Atari agents count
# frames (TorchBeast's frames, an A2C's frame). Coarsest, the counters of other loops: an agent's episode (a DQN
# script's episode,reward table; "Episodes" in the plural counts those an iteration collected, no index), an
# evolutionary search's generation, federated learning's round; last, a batch counter that is a table's only one
# (beside an epoch it counts batches within it: WITHIN_EPOCH_COLUMNS).
# Words after a counter that say it is a number, not a count of them: "Epoch no. = 3", "epoch_num: 3", "Step number
# 500" (before it they count: "num_epochs: 20" is a setting)
ORDINAL_WORDS = {"no", "num", "number", "nr", "idx", "index"}
# (LLaMA-Factory's trainer_log.jsonl counts its steps in current_steps, beside total_steps). Ray Tune's results
# (result.json, progress.csv) count the trainable's reports in training_iteration; RLlib's count environment steps
# too, in timesteps_total (num_env_steps_sampled_lifetime on its newer API), which other trainables log as null.
STEP_COLUMNS = ("step", "global_step", "trainer/global_step", "_step", "current_steps", "iteration", "iter",
                "time/total_timesteps", "misc/total_timesteps", "total_timesteps", "total timesteps", "total/steps",
                "timesteps_total", "num_env_steps_sampled_lifetime", "timestepssofar", "epoch", "frames", "frame",
                "total_frames", "episode", "generation", "round", "training_iteration", "batch")
# The order a table's step column is looked for in: a counter named global (global_episode beside an episode that
# starts again with each stage of a curriculum) counts the whole run, whatever it counts
STEP_COLUMNS_GLOBAL_FIRST = tuple(dict.fromkeys((
    *(f"global_{name}" for name in STEP_COLUMNS if name.isidentifier() and not name.startswith(("global", "_"))),
    *STEP_COLUMNS)))
# Counters a table may log beside its epoch that count batches within it (``Epoch,Batch,Gen Loss``).
WITHIN_EPOCH_COLUMNS = ("batch", "batch_idx", "iters", "it", "update")
WALL_TIME_COLUMNS = {"_timestamp", "wall_time", "walltime", "wall time", "timestamp"}
# Bookkeeping that is neither a curve nor a clock: W&B's seconds since start, the epoch counter that step-indexed
# logs (Lightning) repeat on every row (as a curve it would only add duplicate-step noise), and the length of the run
# and the share of it done (LLaMA-Factory's total_steps and percentage, on its eval records too).
SKIPPED_COLUMNS = {"_runtime", "epoch", "total_steps", "percentage"}
# A record's settings, repeated in every record: Ray Tune's result.json holds the trial's whole config under "config",
# its progress.csv a column each (config/lr)
SETTINGS_KEY = "config"
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


def columns_by_lower(columns) -> dict[str, str]:
    """Each lower-cased column name and the first column spelled so."""
    by_lower: dict[str, str] = {}
    for column in columns:
        by_lower.setdefault(column.lower(), column)
    return by_lower


def splits_of_kinds(kinds: Iterable[str]) -> dict[str, str] | None:
    """The split each value of a split column or key names (``phase``: train, val), when they name two splits or
    more and every value names one; None otherwise (a "stage" of stage1, stage2)."""
    splits = {kind: split_of(tokens(kind)) for kind in kinds}
    return splits if len(set(splits.values())) >= 2 and None not in splits.values() else None


def find_filled_step_column(columns: list[str], holds_values: Callable[[str], bool]) -> str | None:
    """The step column (see :func:`find_step_column`) among those ``holds_values`` says hold a value: a counter
    left empty throughout places nothing (a Ray Tune function trainable's timesteps_total, beside its
    training_iteration)."""
    while (step := find_step_column(columns)) is not None and not holds_values(step):
        columns = [column for column in columns if column != step]
    return step


def find_step_column(columns: list[str]) -> str | None:
    by_lower = columns_by_lower(columns)
    for name in STEP_COLUMNS_GLOBAL_FIRST:
        if name in by_lower:
            return by_lower[name]
    # an epoch column named in another language (Época, Epoche, Эпоха), abbreviated (ep) or as its number (epoch_num,
    # Epoch No.): its one word says epoch
    return next((column for column in columns if names_the_epoch(column)), None)


def names_the_epoch(column: str) -> bool:
    """Whether a column's name says it counts epochs: ``Época``, ``ep``, ``epoch_num``, ``Epoch No.``, ``Epochs``
    (``pd.DataFrame({'Epochs': range(1, n + 1), …})``)."""
    words = tokens(column)
    if len(words) > 1 and words[-1] in ORDINAL_WORDS:
        words = words[:-1]
    return words in (["epoch"], ["epochs"], ["ep"])


# Share of an epoch's starts at which a counter within the epoch goes back (or stays): a log with lines cut out of it
# ("Epoch 18[1616/5011]" then "Epoch 19[4816/5011]") may skip one start, where a global step never goes back at all
WITHIN_EPOCH_SHARE = 0.9


def counts_within_epoch(counter: np.ndarray, epoch: np.ndarray, totals: np.ndarray | None = None) -> bool:
    """Whether ``counter`` starts again with every epoch (a batch index beside the epoch, ``Epoch 1 | Step 0/6501``):
    it goes back where the epoch moves on, at least once, and hardly ever counts on across an epoch's start
    (WITHIN_EPOCH_SHARE); or, with the epoch's length logged beside it (``totals``), it holds one value at every
    epoch's start (``Epoch 3, Batch 0/8``, the only batch a log prints an epoch). A counter that goes back within an
    epoch, or with the epoch, is a resumed run's: the restart rule sorts that out."""
    moves_on = np.diff(epoch) > 0
    across = np.diff(counter)[moves_on]
    if not len(across) or np.mean(across <= 0) < WITHIN_EPOCH_SHARE:
        return False
    return bool(np.any(across < 0) or (totals is not None and np.all(np.isfinite(totals)) and np.all(across == 0)))


def steps_across_epochs(counter: np.ndarray, epoch: np.ndarray, totals: np.ndarray | None = None) -> np.ndarray:
    """A counter that starts again with every epoch (see :func:`counts_within_epoch`) made one global step: each
    epoch starts where the one before ended. An epoch's length is its logged total (``Step 0/6501``), else the one
    its prints give away (:func:`lengths_from_print_period`), else its largest counter + the counter's stride −
    the counter's first value (``0, 50 … 350`` → 400; ``1 … 21`` → 21). Offsets go by the epoch's value, so a
    resumed run that logs an epoch again lands on the steps it had, where the restart rule keeps the later."""
    period = print_period(counter, epoch)
    printed_lengths = lengths_from_print_period(counter, epoch, period)
    first = counter.min()
    # per epoch, in column operations: a Python loop over rows (or a mask per epoch) costs rows × epochs
    values, inverse = np.unique(epoch, return_inverse=True)
    largest = np.full(len(values), -np.inf)
    np.maximum.at(largest, inverse, counter)
    lengths = np.array([printed_lengths.get(value, top - first + period)
                        for value, top in zip(values.tolist(), largest.tolist(), strict=True)])
    if totals is not None:
        logged = np.full(len(values), -np.inf)
        np.maximum.at(logged, inverse, np.where(np.isfinite(totals), totals, -np.inf))
        lengths = np.where(logged > largest, logged, lengths)
    offsets = np.concatenate(([0.0], np.cumsum(lengths)[:-1]))
    return counter + offsets[inverse]


def print_period(counter: np.ndarray, epoch: np.ndarray) -> float:
    """How far apart a counter's prints are within an epoch: the median gap (1 when it never moves on)."""
    gaps = np.diff(counter)[np.diff(epoch) == 0]
    gaps = gaps[gaps > 0]
    return float(np.median(gaps)) if len(gaps) else 1.0


def lengths_from_print_period(counter: np.ndarray, epoch: np.ndarray, period: float) -> dict[float, float]:
    """Epoch lengths given away by a writer that prints every ``period`` iterations of a global counter but shows
    the iteration within the epoch (CycleGAN's train.py: when total_iters % print_freq == 0). The next epoch's first
    print then lands ``period`` iterations after the last one (iters 2900, then 25 in the next epoch, period 100):
    the epoch is 2900 + 100 − 25 long. A next epoch printing first at 0 or ``period`` counts its own iterations and
    gives nothing away. Where sessions of different lengths are appended, the last one's length counts: its steps
    are the ones a restart keeps."""
    last = np.flatnonzero(np.diff(epoch) == 1)  # an epoch's last print, right before the next epoch's first
    first = counter[last + 1]
    telling = (first > 0) & (first < period)
    return dict(zip(epoch[last][telling].tolist(), (counter[last] + period - first)[telling].tolist(), strict=True))


def whole_at_line_end(last: str, before: str) -> bool:
    """Whether ``last``, the number a file's last line ends in when it has no line end, was written whole: it has
    as many decimals as ``before``, the same number on the line of its kind before it (``0.455`` of ``0.45561`` has
    fewer); a whole number, as many digits (``484`` after ``485``: ``48`` would have been cut; a count that gains a
    digit on its last line, ``100`` of ``1000`` after ``999``, is the rare case this takes for whole)."""
    if "." in last or "." in before:
        return "." in last and "." in before and len(last.partition(".")[2]) == len(before.partition(".")[2])
    return last.isdigit() and before.isdigit() and len(last) == len(before)


# A run a log holds has at least this many records with a step of their own; fewer, last in the log, are a session
# that stopped as it began
MIN_RUN_RECORDS = 3
# A last stretch after the step went back replaces what it overlaps only when it could stand for a run: at least
# MIN_RUN_RECORDS records, and this share of the records it would replace
SHORT_LAST_SHARE = 0.01


def runs_one_after_another(steps: np.ndarray, ended: np.ndarray, closed: np.ndarray) -> np.ndarray:
    """Which of the runs a log holds one after another each record is of (0, 1, …), given each record's step.

    A log that starts over (back to its first step) after a stretch that went to its end holds a new run: a sweep's
    configurations or a cross-validation's folds printed to one stdout, each trained to the end. A stretch went to its
    end when one of its records says so (``ended``: ``Epoch 100/100``), or when it went as far as any stretch of the
    log goes. Starting over after a stretch cut short is that run restarted, whose later values replace the earlier
    ones (TensorBoard's rule, applied per run: :func:`restart_drops`); so is going back to a later step, as a session
    resumed from a checkpoint does, unless the stretch before closed (``closed``: the Trainer printed its closing
    summary, after which nothing resumes): then any step going back starts a new run. A stretch of fewer than
    ``MIN_RUN_RECORDS`` records is no run but such a restart's, and stays with the one after it; last in the log, it
    is a session that stopped as it began, which neither replaces the run before it nor is judged: -1, not read.
    """
    run_of = np.zeros(len(steps), dtype=np.int64)
    if len(steps) < 2 * MIN_RUN_RECORDS:
        return run_of
    first, furthest = steps[0], steps.max()
    goes_back = np.flatnonzero(steps[1:] < steps[:-1]) + 1
    start = stretch = 0
    for where in goes_back:
        starts_over = steps[where] <= first < steps[where - 1]
        went_to_end = steps[start:where].max() >= furthest or ended[start:where].any()
        if where - stretch >= MIN_RUN_RECORDS and (closed[start:where].any() or (starts_over and went_to_end)):
            run_of[where:] += 1
            start = where
        stretch = where
    if start and len(steps) - start < MIN_RUN_RECORDS:
        run_of[start:] = -1
    return run_of


# Where a stretch of a log begins and ends: the median of this many of its first or last values.
EDGE_POINTS = 5
# A stretch takes a curve up where the one before left it when it begins at least this many times closer to that
# stretch's end than to where the log began.
TAKES_UP_CLOSER = 4


def epochs_counted_on(steps: np.ndarray, values: np.ndarray, run_of: np.ndarray) -> np.ndarray | None:
    """``steps`` counted on across a log's stretches when they are one run's epochs (see
    :func:`takes_up_where_it_left`; ``values``: its train loss at each record, NaN where it logged none), those of a
    last session that stopped as it began (``run_of`` -1) as they are; None when the stretches are runs."""
    if not takes_up_where_it_left(steps, values, run_of):
        return None
    counted = steps.astype(np.float64)
    epochs = (run_of >= 0) & np.isfinite(counted)
    counted[epochs] = steps_across_epochs(counted[epochs], run_of[epochs])
    return counted


def primary_train_loss(counts: Mapping[str, int]) -> str | None:
    """Of the names a log gives its values (each with how many it logged), the train loss a person would plot."""
    return primary_tag([name for name in counts if infer_role(name) == Role.TRAIN_LOSS], counts)


def counted_on_note(restarts: int, loss: str, counter: str = "a counter starting again every epoch") -> str:
    return (f"the step starts again {restarts} time(s) and each time {loss} takes up where it left off: {counter}, "
            "counted on across them")


def takes_up_where_it_left(steps: np.ndarray, values: np.ndarray, run_of: np.ndarray) -> bool:
    """Whether a log's stretches (``run_of``: 0, 1, … from :func:`run_of_each_record`) are one run's epochs, counted
    by a step that starts again every epoch (the batch index logged as the step, no epoch beside it): every stretch
    but the last (which a stopped run may cut short) goes up to the same step, the epoch's length (two stretches at
    least), never going back within itself, and each after the first begins where the one before it ended, far from
    where the first began. Runs one after another (a sweep's, a cross-validation's folds) each begin again at an
    untrained model's level instead; a stretch too short to tell its ends apart from its noise says neither."""
    count = int(run_of.max()) + 1
    if count < 2:
        return False
    stretch_steps = [steps[(run_of == run) & np.isfinite(steps)] for run in range(count)]
    if any(np.any(np.diff(stretch) < 0) for stretch in stretch_steps):
        return False  # a stretch restarted within itself: sessions one after another, not an epoch's batches
    ends = [stretch.max() for stretch in stretch_steps]
    if len(set(ends[:-1])) > 1 or ends[-1] > ends[0] or ends.count(ends[0]) < 2:
        return False  # two whole epochs at least, of one length
    stretches = [values[(run_of == run) & np.isfinite(values)] for run in range(count)]
    if any(len(stretch) < 2 * EDGE_POINTS for stretch in stretches):
        return False
    began = np.median(stretches[0][:EDGE_POINTS])
    for before, after in itertools.pairwise(stretches):
        ended, resumed = np.median(before[-EDGE_POINTS:]), np.median(after[:EDGE_POINTS])
        if not TAKES_UP_CLOSER * abs(resumed - ended) < abs(resumed - began):
            return False
    return True


def run_of_each_record(steps: np.ndarray, own: np.ndarray, ended: np.ndarray | None = None,
                       closed: np.ndarray | None = None) -> np.ndarray:
    """:func:`runs_one_after_another` over the records with a step of their own (``own``; ``ended`` and ``closed``
    given for those records, none when omitted), every record of the log placed: one without a step of its own is of
    the run of the record with one before it."""
    owned = np.flatnonzero(own)
    if not len(owned):
        return np.zeros(len(steps), dtype=np.int64)
    none = np.zeros(len(owned), dtype=bool)
    own_runs = runs_one_after_another(steps[owned], ended=none if ended is None else ended,
                                      closed=none if closed is None else closed)
    before = np.searchsorted(owned, np.arange(len(steps)), side="right") - 1
    return np.where(before >= 0, own_runs[np.maximum(before, 0)], 0)


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


def stopped_as_it_began(steps: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The records of a last stretch, after the step last went back, too short to stand for a run (see
    SHORT_LAST_SHARE): a session that stopped as it began (a Detectron2 job that wrote its iteration-0 record and
    died), whose one record would otherwise replace the whole run before it. Not read, and the run kept."""
    where = np.flatnonzero(present)
    logged = steps[where]
    backs = np.flatnonzero(logged[1:] < logged[:-1]) + 1
    stopped = np.zeros(len(steps), dtype=bool)
    if len(backs):
        last = int(backs[-1])
        stretch, replaced = len(logged) - last, int(np.count_nonzero(logged[:last] >= logged[last]))
        if stretch < MIN_RUN_RECORDS or stretch < SHORT_LAST_SHARE * replaced:
            stopped[where[last:]] = True
    return stopped


def warn_restarts(builder: RunBuilder, path: Path, n_dropped: int, unit: str) -> None:
    if n_dropped:
        builder.warn(
            f"{path}: the step went back (a restarted run); {n_dropped} {unit} logged before the restart at steps "
            "it logged again were dropped, the latest values kept"
        )


def files_under(folder: Path, builder: RunBuilder) -> list[tuple[str, Path]]:
    """``(key, path)`` for every file below ``folder``, its key its path under it with ``/`` between folders: MLflow's
    ``metrics/train/loss``, DVCLive's ``plots/metrics/train/loss.tsv``. A folder that cannot be listed is a warning."""
    found = []
    if not folder.is_dir():
        return found  # a run that logged no params has no params/ folder (MLflow)
    for current, folders, names in os.walk(folder, onerror=lambda exc: builder.warn(
            f"{exc.filename}: {describe_os_error(exc)}")):
        # hidden entries are the OS's or an editor's (.DS_Store, .ipynb_checkpoints), not the logger's
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(name for name in names if not name.startswith(".")):
            path = Path(current, name)
            found.append((PurePosixPath(*path.relative_to(folder).parts).as_posix(), path))
    return found
