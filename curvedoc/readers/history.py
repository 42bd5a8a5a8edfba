"""Training histories saved as one JSON object of metric lists: Keras's ``json.dump(history.history, f)`` (``{"loss":
[...], "accuracy": [...], "val_loss": [...]}``), a PyTorch script's ``{"train_losses": [...], "val_accs": [...]}``,
or either nested one level down (``{"history": {...}, "config": {...}}``; ``{"history": [{"epoch": 1, …}, …]}``), or
one metric's lists named by their split only, the metric named by the file (``losses.json``: ``{"train": [...],
"val": [...]}``, read as ``train_losses`` and ``val_losses``), or each split's metrics under its name (``{"train":
{"loss": [...]}, "val": {...}}``: ``train_loss``, ``val_loss``), or one history a numbered phase of the training
(``{"stage1": {...}, "stage2": {...}}``, each phase a run of its own: its switch makes the curves jump by design; so
is each of the models a script compared, each under its name), its values as ``[epoch, value]`` pairs, with more
lists grouped under a key (``"validation_metrics": {"PSNR": [...]}``: ``validation_metrics/PSNR``), or a bare list of
one metric's values, named by the file (``json.dump(losses, f)`` to ``losses.json``); or as a list of one record an
epoch, which a hand-written loop appends to and dumps (``[{"epoch": 1, "train_loss": 0.9, "val": {"loss": 1.1, "acc":
0.6}}, …]``; a nested object's keys joined by ``/``), read as the same lists: Chainer's LogReport writes its ``log``
so, a file with no suffix. A list of records is a history only with an epoch or step key that never goes back, or a
loss in it: detections or predictions saved as a list of records (COCO's ``[{"image_id": …, "score": …}]``) are not.

Each list holds one value per epoch. An ``epoch``/``epochs``/``step`` list beside them is the x axis, else the
position in the list (1 … n). A list shorter than the longest by a whole factor k was logged every k epochs
(validation every other epoch): its values sit at the end of each k-epoch block.

Scripts save such a history under any name, beside configs and results saved as ``.json`` too, so the content
decides (:func:`is_history`): a config is an object of scalars, per-class results are lists of lists, a label set a
list of names. A folder's walk judges a file by its first bytes (:func:`looks_like_history`: all of a small file);
the reader decides on the whole document and raises :class:`NotALog` for one that is no history after all, which a
walk passes over quietly.
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np

from curvedoc.errors import CurvedocError, NotALog
from curvedoc.features import LOSS_ROLES, listed
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import SPLIT_FILE_WORDS, Source, file_run_name, pickled
from curvedoc.readers.companions import YAML_SUFFIXES, parse_yaml
from curvedoc.readers.records import as_value, restart_drops, warn_restarts, whole_steps
from curvedoc.readers.text import read_json, read_text
from curvedoc.roles import Role, infer_role, is_error_metric, singular, tokens

# Keys scripts nest a history under, beside its config or summary
CONTAINER_KEYS = {"history", "hist", "training_history", "train_history", "metrics", "log", "logs", "results",
                  "stats"}
# The x axis a history may save beside its metrics (Keras's History.epoch, a script's "epochs"), finest first
STEP_KEYS = ("step", "steps", "global_step", "iteration", "iterations", "episode", "episodes", "epoch", "epochs")
# A numbered phase of one training saved as a history of its own (stage1, phase_2)
PHASE_KEY = re.compile(r"^(?:stage|phase)[ _\-]?(\d+)$", re.IGNORECASE)
# A metric logged fewer times is a summary (a final test score), and says nothing of the file being a history
MIN_EPOCHS = 3
# Share of a step list's entries that rise, from which it is an x axis that a resumed run went back on
MOSTLY_RISING = 0.5
# Where records per split tell how many of them a resumed run's later records replaced (see _records_by_split)
RESTARTED_RECORDS = "\0restarted records"
# Not what a model is judged by, though a history logs them beside its metrics
NOT_MEASUREMENTS = {Role.OTHER, Role.LR, Role.GRAD_NORM}
# A key whose list starts with a number, as a history's first bytes show it: "val_loss": [0.93, …
KEYED_NUMBERS = re.compile(rb'"([^"\\]{1,200})"\s*:\s*\[\s*(?:-?[\d.]|NaN|-?Infinity|null)')
# A key whose list starts with a record: "train": [{"loss": 0.93, …
KEYED_RECORDS = re.compile(rb'"([^"\\]{1,200})"\s*:\s*\[\s*\{')
# A record's number, as a list of records' first bytes show it: {"epoch": 1, "val_loss": 0.93, …
RECORD_NUMBERS = re.compile(rb'"([^"\\]{1,200})"\s*:\s*(?:-?[\d.]|NaN|-?Infinity)')
NUMBER_TYPES = {int, float}  # bool is not one: type(True) is bool
# A top-level key whose list of numbers follows it in YAML: "val_loss:\n- 0.93" or "val_loss: [0.93, …"
YAML_LISTED_NUMBERS = re.compile(rb"^([A-Za-z_][\w./@\-]{0,200}):(?:[ \t]*\r?\n- |[ \t]*\[)[ \t]*[-+]?\.?\d",
                                 re.MULTILINE)
# A bare list of numbers, as json.dump(losses, f) writes it, each number in a list of its own too
BARE_NUMBERS = re.compile(rb"\[\s*(?:\[\s*)?(?:-?[\d.]|NaN|-?Infinity)")
# A metric's lists by split: "loc_loss": {"train": [
METRIC_BY_SPLIT = re.compile(rb'"([^"\\]{1,200})"\s*:\s*\{\s*"([^"\\]{1,200})"\s*:\s*\[')
# A metric saved with its own steps, as Sacred's FileStorageObserver writes its metrics.json (keys sorted):
# "training.loss": {"steps": [0, 1, …], "timestamps": […], "values": [2.3, …]}
SERIES_WITH_STEPS = re.compile(rb'"([^"\\]{1,200})"\s*:\s*\{\s*"steps"\s*:\s*\[')
SERIES_KEYS = ("steps", "values")


def read(source: Source) -> list[Run]:
    """The run a history file holds; one run a key when it saves a history under a key each (see
    :func:`runs_by_key`; named after the file and "#" and the key): the phases of a training, whose switch (unfrozen
    layers, a new learning rate) makes the curves jump by design, or the models a script compared."""
    path = source.files[0][1] if source.files else source.path
    fmt = "json-history"
    if path.suffix.lower() in YAML_SUFFIXES:
        document, decoding_problem = _read_yaml(path)
    elif pickled.is_pickled(path):
        document, decoding_problem, fmt = pickled.load(path), None, "pickled-history"
    else:
        document, decoding_problem = read_json(path)
    document = _printed(document)
    runs = runs_by_key(document, path.stem)
    if runs:
        beside = {key: value for key, value in document.items() if key not in dict(runs)}
        return [_run_of(path, beside, history, decoding_problem, fmt, key) for key, history in runs]
    history = find_history(document, path.stem) or (short_history(document) if source.explicit else None)
    if history is None:
        raise NotALog(path, f"JSON file that is not a training history (no object whose values are mostly lists of "
                            f"numbers, one a metric logged at least {MIN_EPOCHS} times, nor a list of one record an "
                            f"epoch)")
    return [_run_of(path, document, history, decoding_problem, fmt)]


def _read_yaml(path: Path) -> tuple[Any, str | None]:
    text, decoding_problem = read_text(path)
    document = parse_yaml(text)
    if document is None:
        raise CurvedocError(path, "not valid YAML, or not a mapping at its top (cut off or corrupted?)")
    return document, decoding_problem


def looks_like_yaml_history(head: bytes) -> bool:
    """Whether a YAML file starting with ``head`` holds a history as ``yaml.dump`` writes one: a measurement's name
    at the top level, then its values as a block list (``loss:`` over ``- 0.65``) or a flow list (``loss: [0.65,
    …``, PyYAML before 5.1). The reader decides on the whole document."""
    return any(names_a_measurement(match.group(1).decode("utf-8", errors="replace"))
               for match in YAML_LISTED_NUMBERS.finditer(head))


def _run_of(path: Path, document: Any, history: dict, decoding_problem: str | None, fmt: str,
            key: str = "") -> Run:
    suffix = f"#{key}" if key else ""
    builder = RunBuilder(f"{path}{suffix}", fmt, name=file_run_name(path) + suffix)
    builder.add_file(path)
    if decoding_problem:
        builder.warn(decoding_problem)
    warn_restarts(builder, path, history.pop(RESTARTED_RECORDS, 0), "record(s)")
    outer = document if isinstance(document, dict) and history is not document else {}
    for tag, (steps, values) in history_curves(history, outer, lambda message: builder.warn(f"{path}: {message}")):
        builder.add(tag, steps, values)
    lists = {key: value for key, value in history.items() if isinstance(value, list)}
    empty = [key for key, value in lists.items() if not value]
    not_curves = [key for key, value in lists.items() if value and not _is_number_list(value)]
    if empty:
        # a list the script declared and never appended to: a term it stopped logging
        builder.warn(f"{path}: empty lists, nothing logged under them: {listed(empty)}")
    if not_curves:
        builder.warn(f"{path}: not lists of numbers (per-class arrays, names …), so not read as curves: "
                     f"{listed(not_curves)}")
    # a config or a summary saved beside the lists: where a class count may be recorded
    builder.meta.hparams = {key: value for holder in (outer, history) for key, value in holder.items()
                            if not isinstance(value, list) and value is not history}
    return builder.build()


def looks_like_history(head: bytes, complete: bool, name: str = "", explicit: bool = False) -> bool:
    """Whether a .json file starting with ``head`` (``name``: the file's stem) holds a training history: decided on
    the whole document when ``head`` is all of it (``complete``; one of an epoch or two too when the user names the
    file, ``explicit``: see :func:`short_history`), else on the lists it starts (a metric's name, or a split's where
    the file names the metric, then a number), or on the keys of the first records it holds, at its top or nested in
    an object (an epoch or step, and a measurement)."""
    text = head.lstrip()
    if complete and text.startswith((b'"{', b'"[')):
        text = head = _printed_head(head)
    records = text.startswith(b"[") and text[1:].lstrip().startswith(b"{")
    if BARE_NUMBERS.match(text):
        return names_a_measurement(name)
    if not records and not text.startswith(b"{"):
        return False
    if complete:
        try:
            document = json.loads(head.decode("utf-8", errors="replace"))
            return find_history(document, name) is not None or (explicit and short_history(document) is not None)
        except (ValueError, RecursionError):
            pass  # cut off or corrupted: if its lists say it is a history, the reader says what is wrong with it
    keys = {match.group(1).decode("utf-8", errors="replace") for match in RECORD_NUMBERS.finditer(head)}
    if any(key.lower() in STEP_KEYS for key in keys) and any(names_a_measurement(key) for key in keys):
        return True
    if any(names_a_measurement(metric.decode("utf-8", errors="replace"))
           and _bare_split(split.decode("utf-8", errors="replace"))
           for metric, split in METRIC_BY_SPLIT.findall(head)):
        return True
    if any(names_a_measurement(metric.decode("utf-8", errors="replace")) for metric in SERIES_WITH_STEPS.findall(head)):
        return True
    # records under a split's name, their measurement named by a key or by the file (see _records_by_split)
    splits = [match.group(1).decode("utf-8", errors="replace") for match in KEYED_RECORDS.finditer(head)]
    if any(map(_bare_split, splits)) and (names_a_measurement(name) or any(map(names_a_measurement, keys))):
        return True
    listed_keys = [match.group(1).decode("utf-8", errors="replace") for match in KEYED_NUMBERS.finditer(head)]
    return not records and any(names_a_measurement(key) or (_bare_split(key) and names_a_measurement(name))
                               for key in listed_keys)


def _printed(document: Any) -> Any:
    """A document that is one JSON string holding a printed Python literal (``json.dump(str(history.history), f)``:
    the dict with single quotes) as that literal; any other document as it is."""
    if not isinstance(document, str) or not document.lstrip().startswith(("{", "[")):
        return document
    try:
        return printed_literal(document.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return document  # no literal: the reader says the file holds no history


# How Python, numpy and torch print a number that is no literal: nan, inf, np.float64(0.5), tensor(0.5)
NON_FINITE_NAMES = {"nan": math.nan, "NaN": math.nan, "inf": math.inf, "Infinity": math.inf}
NUMBER_WRAPPERS = {"float", "float16", "float32", "float64", "int32", "int64", "tensor"}


def printed_literal(text: str):
    """The value of a printed Python literal of dicts, lists and numbers (see :func:`_printed_value`); ValueError
    (or SyntaxError, RecursionError, MemoryError) for anything else."""
    return _printed_value(ast.parse(text, mode="eval").body)


def _printed_value(node: ast.AST):
    """The value a printed Python literal of dicts, lists and numbers stands for, with the numbers as Python, numpy
    and torch print them (``nan``, ``np.float64(0.5)``, ``tensor(0.5)``); ValueError for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {_printed_value(key): _printed_value(value) for key, value in zip(node.keys, node.values,
                                                                                  strict=True) if key is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_printed_value(item) for item in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _printed_value(node.operand)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in NON_FINITE_NAMES:
        return NON_FINITE_NAMES[node.id]
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        wrapper = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        value = _printed_value(node.args[0])
        if wrapper in NUMBER_WRAPPERS and isinstance(value, (int, float)):
            return float(value)
    raise ValueError("not a printed literal")


def _printed_head(head: bytes) -> bytes:
    """A whole file that is one JSON string holding a printed literal as that literal written as JSON (b"" when it
    holds none), for :func:`looks_like_history` to judge."""
    try:
        document = _printed(json.loads(head.decode("utf-8", errors="replace")))
        return json.dumps(document).encode() if not isinstance(document, str) else b""
    except (ValueError, TypeError, RecursionError):
        return b""


def short_history(document: Any) -> dict | None:
    """A history of fewer than MIN_EPOCHS epochs, as its lists: an object of metric lists (``{"loss": [0.2877]}``)
    or a list of records (``[{"epoch": 10, "train_loss": 0.011, "val_loss": 0.127}]``), of a run stopped after an
    epoch or two. A folder's walk passes over such a file (a results file looks the same); one a user names is
    read, and its run is "not enough to judge"."""
    if isinstance(document, list) and document and all(isinstance(record, dict) for record in document):
        document = _columns([dict(_flattened(record)) for record in document])
    if not isinstance(document, dict):
        return None
    lists = {key: values for key, values in document.items() if _is_number_list(values)}
    short = all(len(values) < MIN_EPOCHS for values in lists.values())
    return document if lists and short and any(map(names_a_measurement, lists)) else None


def find_history(document: Any, name: str = "") -> dict | None:
    """The object of ``document`` that is a history (see :func:`is_history`): the document itself, or one nested
    under a key such as ``history`` or ``metrics`` (an object of lists, or a list of records); None when there is
    none. ``name`` (the file's stem) names the metric of lists named by their split only (:func:`_named_by_the_file`)."""
    if isinstance(document, list):
        # a bare list of numbers: one metric, named by the file (json.dump(losses, open("losses.json", "w"))), each
        # number in a list of its own too ([[106], [113], …]: a score appended as [score])
        numbers = [item[0] if isinstance(item, list) and len(item) == 1 else item for item in document]
        columns = {name: numbers} if _is_number_list(numbers) and name else _columns_of_records(document)
        return columns if columns is not None and is_history(columns) else None
    if not isinstance(document, dict):
        return None
    if is_history(named := _as_lists(document, name)):
        return named
    if runs := runs_by_key(document, name):
        return runs[0][1]
    for key, value in document.items():
        # records under any key (a DVC plots file's stage: {"prc": [{"epoch": 1, "loss": 3.77}, …]}): a list of
        # records is a history only with an ordered epoch or a loss in it, which no other list of objects has
        nested = _columns_of_records(value) if isinstance(value, list) else value
        if ((key.lower() in CONTAINER_KEYS or isinstance(value, list)) and isinstance(nested, dict)
                and is_history(named := _as_lists(nested, name))):
            return named
    return None


def _as_lists(candidate: dict, name: str) -> dict:
    """``candidate`` with the layouts scripts save a history's lists in read as its lists (see the functions
    called)."""
    return _named_by_the_file(_records_by_split(_groups_of_lists(_splits_by_metric(_metrics_by_split(
        _pairs_as_values(_series_at_their_steps(candidate))))), name), name)


def _series_at_their_steps(candidate: dict) -> dict:
    """An object of metrics each saved with its own steps (Sacred's metrics.json: ``{"training.loss": {"steps":
    [0, 1, …], "timestamps": […], "values": [2.3, …]}, "validation.loss": {"steps": [9, 19, …], …}}``) as the lists
    of a history over all the steps any was logged at, each metric's None at the others: a validation metric logged
    every tenth step sits at its own steps. Any other object as it is."""
    series = {key: value for key, value in candidate.items() if isinstance(value, dict) and _is_series(value)}
    if not series:
        return candidate
    steps = sorted({step for value in series.values() for step in value["steps"]})
    at = {step: index for index, step in enumerate(steps)}
    lists = {}
    for key, value in series.items():
        values: list = [None] * len(steps)
        for step, number in zip(value["steps"], value["values"], strict=True):
            values[at[step]] = number
        lists[key] = values
    return {**{key: value for key, value in candidate.items() if key not in series}, "step": steps, **lists}


def _is_series(value: dict) -> bool:
    """Whether ``value`` holds one metric's whole steps and values, as many of each (see _series_at_their_steps)."""
    steps, values = (value.get(key) for key in SERIES_KEYS)
    return (_is_number_list(steps) and None not in steps and _is_number_list(values)
            and len(steps) == len(values) == len(set(steps)))


def _pairs_as_values(candidate: dict) -> dict:
    """An object whose metric lists hold ``[epoch, value]`` pairs (``"bleu4_scores": [[1, 0.117], [2, 0.149],
    …]``) with each such list as its values, when its epochs are where the history places a list's values anyway:
    every k-th epoch from the k-th (k = 1: every epoch). Any other object as it is."""
    paired = {}
    for key, value in candidate.items():
        if (isinstance(value, list) and len(value) >= MIN_EPOCHS
                and all(isinstance(pair, list) and len(pair) == 2 and _is_number_list(pair) for pair in value)):
            epochs = np.array([pair[0] for pair in value], dtype=np.float64)
            every = epochs[0]
            if every >= 1 and np.array_equal(epochs, every * np.arange(1, len(epochs) + 1)):
                paired[key] = [pair[1] for pair in value]
    return {**candidate, **paired} if paired else candidate


def _groups_of_lists(candidate: dict) -> dict:
    """An object of lists with more of them grouped under a key (``{"generator_losses": [...],
    "validation_metrics": {"PSNR": [...], "SSIM": [...]}, "learning_rates": {"generator": [...]}}``), or kept as one
    record an epoch under a key (``"val_metrics": [{"P2M_Acc@1": 0.87, "Avg_Acc": 0.81}, …]``), with each grouped
    list as one of its own (``validation_metrics/PSNR``), when it is as long as the object's own lists: a list of
    another length under a group (a config's milestones) is no curve of this history."""
    lengths = {len(value) for value in candidate.values() if _is_number_list(value)}
    groups = {}
    for key, value in candidate.items():
        if isinstance(value, list) and len(value) in lengths and all(isinstance(record, dict) for record in value):
            value = _columns([dict(_flattened(record)) for record in value])
        if (isinstance(value, dict) and value
                and all(_is_number_list(values) and len(values) in lengths for values in value.values())):
            groups[key] = value
    return _groups_spread(candidate, groups, lambda key, name: f"{key}/{name}")


def _groups_spread(candidate: dict, groups: dict[str, dict], name_of: Callable[[str, str], str]) -> dict:
    """``candidate`` with each group's lists (a key's object of lists) as lists of its own, named by ``name_of``
    from the group's key and the list's; ``candidate`` itself when there is no group."""
    if not groups:
        return candidate
    flat = {key: value for key, value in candidate.items() if key not in groups}
    for key, lists in groups.items():
        flat.update({name_of(key, name): values for name, values in lists.items()})
    return flat


def runs_by_key(document: Any, name: str = "") -> list[tuple[str, dict]]:
    """The runs a document saves a history each of under a key of its own, each as its lists: the numbered phases of
    one training (``{"stage1": {"loss": [...]}, "stage2": {...}}``: a head trained on a frozen backbone, then the
    whole model fine-tuned), in their order, or the models a script compared (``{"Softmax": {"train_loss": [...],
    "config": {...}}, "Linear": {...}}``), in the file's order; [] for a document that holds anything else beside
    them to read (a list, an object under a split's or a container's name)."""
    if not isinstance(document, dict):
        return []
    keyed = {key: value for key, value in document.items() if isinstance(value, dict) and not _bare_split(key)
             and key.strip().lower() not in CONTAINER_KEYS}
    if len(keyed) < 2 or len(keyed) < sum(isinstance(value, (dict, list)) for value in document.values()):
        return []
    order = list(keyed)
    if all(PHASE_KEY.match(key.strip()) for key in order):
        order.sort(key=lambda key: int(PHASE_KEY.match(key.strip()).group(1)))
    histories = [(key, _as_lists(keyed[key], name)) for key in order]
    return histories if all(is_history(history) for _, history in histories) else []


def _metrics_by_split(candidate: dict) -> dict:
    """An object holding each split's metrics as lists under the split's name (``{"train": {"loss": [...],
    "accuracy": [...]}, "val": {...}}``) as one list a split and metric (``train_loss``, ``val_accuracy``), also
    when they sit a level deeper, by output (Ludwig's ``{"training": {"combined": {"loss": [...]}, "label":
    {...}}}``: ``training_combined/loss``); lists that are empty or hold no numbers (predictions saved beside them)
    are left out. Any other object as it is."""
    by_split = {key: {metric: values for metric, values in _flattened(value) if _is_number_list(values)}
                for key, value in candidate.items() if _bare_split(key) and isinstance(value, dict)}
    return _groups_spread(candidate, {split: lists for split, lists in by_split.items() if lists},
                          lambda split, metric: f"{split}_{metric}")


def _splits_by_metric(candidate: dict) -> dict:
    """An object whose metrics each hold their lists by split (``{"loc_loss": {"train": [...], "validation":
    [...]}}``) as one list a metric and split (``train_loc_loss``, ``validation_loc_loss``); any other as it is."""
    by_split = {key: value for key, value in candidate.items() if isinstance(value, dict) and value
                and all(_bare_split(split) and _is_number_list(values) for split, values in value.items())}
    return _groups_spread(candidate, by_split, lambda metric, split: f"{split}_{metric}")


def _records_by_split(candidate: dict, name: str) -> dict:
    """An object holding one list of records an epoch per split (``{"train": [{"loss": 0.9, "acc": 0.6}, …],
    "val": […]}``) as the lists of one history, each record's key prefixed by its split (``train/loss``) and, when
    it names no measurement itself, followed by the one the file is named after (``loss_history.json``'s
    ``{"train": [{"total": 3.9, "bbox": 0.02}, …]}``: ``train/total_loss``); an epoch or step the records hold is
    the x axis of every split, each value at its own record's epoch. Any other object as it is."""
    splits = {key: value for key, value in candidate.items() if _bare_split(key) and isinstance(value, list)}
    if not splits or not all(value and all(isinstance(record, dict) for record in value)
                             for value in splits.values()):
        return candidate
    metric = next((singular(word) for word in tokens(name) if names_a_measurement(word)), None)
    flat = {split: [dict(_flattened(record)) for record in records] for split, records in splits.items()}
    step_key = next((key for key in STEP_KEYS if all(_rising([record.get(key) for record in records])
                                                     for records in flat.values())), None)
    merged = {key: value for key, value in candidate.items() if key not in splits}
    if step_key is not None:
        # a run resumed from a checkpoint logs steps again: its later records replace the earlier ones from the
        # step it went back to (TensorBoard's restart rule)
        dropped = 0
        for split, records in flat.items():
            superseded = restart_drops(np.array([record[step_key] for record in records], dtype=np.float64),
                                       np.ones(len(records), dtype=bool), restart_on_repeat=False)
            flat[split] = [record for record, gone in zip(records, superseded, strict=True) if not gone]
            dropped += int(superseded.sum())
        if dropped:
            merged[RESTARTED_RECORDS] = dropped
        steps = merged[step_key] = sorted({record[step_key] for records in flat.values() for record in records})
    for split, records in flat.items():
        if step_key is not None:  # each split's records at their epochs (else each list stands by its position)
            at = {record.pop(step_key): record for record in records}
            records = [at.get(step, {}) for step in steps]
        for key, values in _columns(records).items():
            merged[f"{split}/{key if names_a_measurement(key) or metric is None else f'{key}_{metric}'}"] = values
    return merged


def _columns(records: list[dict]) -> dict[str, list]:
    """Flat records as one list a key, in the order the keys first appear; None where a record lacks the key."""
    return {key: [record.get(key) for record in records]
            for key in dict.fromkeys(key for record in records for key in record)}


def _named_by_the_file(candidate: dict, name: str) -> dict:
    """An object whose lists of numbers are all named by a split alone (``{"train": [...], "val": [...]}``) with the
    metric the file's name says prefixed by it (``losses.json``: ``train_losses``, ``val_losses``): a script that
    saves one metric's lists names the file after it. Lists named by a split alone beside others that name no loss
    (``{"train": [...], "val": [...], "ppl": [...], "lr": [...]}`` in ``history.json``) are that split's loss when
    they fall, as a loss does, and its accuracy when they climb within 0–1 or 0–100, as an accuracy does. Any other
    object as it is."""
    lists = [key for key, value in candidate.items() if _is_number_list(value)]
    bare = [key for key in lists if _bare_split(key)]
    if not bare:
        return candidate
    if len(bare) == len(lists):
        if not names_a_measurement(name):
            return candidate  # a file of splits' lists alone, whose name says nothing: indices as likely as losses
        return {(f"{key}_{name}" if key in lists else key): value for key, value in candidate.items()}
    if any("loss" in tokens(key) for key in lists):
        return candidate
    named = {key: f"{key}_{kind}" for key in bare if (kind := _measured_by_its_course(candidate[key])) is not None}
    return {named.get(key, key): value for key, value in candidate.items()}


def _measured_by_its_course(values: list) -> str | None:
    """"loss" for numbers that end below where they start, "acc" for ones that end above it and stay within 0–1 or
    0–100 (an accuracy, a fraction or a percentage); None for any other course."""
    numbers = np.array([number for number in map(as_value, values) if number is not None], dtype=np.float64)
    numbers = numbers[np.isfinite(numbers)]
    if len(numbers) < MIN_EPOCHS or numbers[-1] == numbers[0]:
        return None
    if numbers[-1] < numbers[0]:
        return "loss"
    return "acc" if numbers.min() >= 0 and numbers.max() <= 100 else None


def _bare_split(key: str) -> bool:
    """A key that is a split's name alone (train, val, validation, test …; not a container such as metrics)."""
    return key.strip().lower() in SPLIT_FILE_WORDS


def _columns_of_records(records: list) -> dict | None:
    """A list of one record an epoch as the lists of a history (None where a record lacks a key), when it is one:
    each record an object, and an epoch or step key that never goes back, or a loss among the keys."""
    if len(records) < MIN_EPOCHS or not all(isinstance(record, dict) for record in records):
        return None
    columns = _columns([dict(_flattened(record)) for record in records])
    ordered = any(key.lower() in STEP_KEYS and _is_number_list(values)
                  and np.all(np.diff([value for value in values if value is not None]) >= 0)
                  for key, values in columns.items())
    losses = any(infer_role(key) in LOSS_ROLES and _is_number_list(values) for key, values in columns.items())
    return columns if ordered or losses else None


def _flattened(record: dict, prefix: str = ""):
    for key, value in record.items():
        if isinstance(value, dict):
            yield from _flattened(value, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}", value


def is_history(candidate: dict) -> bool:
    """Whether most of ``candidate``'s lists and objects are lists of numbers, one of them a metric logged at least
    MIN_EPOCHS times, or two of them are losses logged as often (a train and a held-out loss, beside the reports
    and config a script saved with them). Scalars beside them (a best epoch, a run time) leave it a history; a
    config is all scalars."""
    number_lists = {key: value for key, value in candidate.items() if _is_number_list(value)}
    others = sum(isinstance(value, (list, dict)) for value in candidate.values()) - len(number_lists)
    if len(number_lists) >= others and any(
            len(values) >= MIN_EPOCHS and names_a_measurement(key) for key, values in number_lists.items()):
        return True
    loss_lengths = [len(values) for key, values in number_lists.items()
                    if len(values) >= MIN_EPOCHS and _names_a_loss(key)]
    return len(loss_lengths) > len(set(loss_lengths))


def _names_a_loss(name: str) -> bool:
    """Whether ``name`` names a loss, as written or in the plural a script's list of them takes (``val_losses``)."""
    return any(infer_role(spelling) in LOSS_ROLES for spelling in _spellings(name))


def names_a_measurement(name: str) -> bool:
    """Whether ``name`` names what a model is judged by (a loss, an accuracy, a score, an error), as written or in
    the plural a script's list of them takes (``train_losses``, ``val_accs``, ``accuracies``, ``errors``)."""
    # role inference reads a loss's and an accuracy's plural; a score's (val_f1s, rewards) is read off its singular
    return (any(infer_role(spelling) not in NOT_MEASUREMENTS for spelling in _spellings(name))
            or is_error_metric(_spellings(name)[1]))


def _spellings(name: str) -> tuple[str, str]:
    """``name`` as written and in the singular (``val_losses``, ``val_loss``): a script names a list of values in
    the plural."""
    return name, "_".join(singular(word) for word in tokens(name))


def _rising(values: list) -> bool:
    """An x axis: numbers that rise at every entry (a count of batches per epoch, 29 in every record, is none), or
    whole numbers that rise at most of them, where a run resumed from a checkpoint logged its steps again."""
    if not _is_number_list(values) or None in values:
        return False
    steps = np.array([as_value(value) for value in values], dtype=np.float64)
    rises = np.diff(steps) > 0
    return bool(rises.all() or (whole_steps(steps)[1] and rises.mean() >= MOSTLY_RISING))


def _is_number_list(value: Any) -> bool:
    """A list of numbers, where a null is an epoch the metric was not logged at."""
    if not isinstance(value, list):
        return False
    kinds = set(map(type, value))
    return bool(kinds & NUMBER_TYPES) and kinds <= NUMBER_TYPES | {type(None)}


# Each curve's tag, steps and values
Curves = list[tuple[str, tuple[np.ndarray, np.ndarray]]]


def history_curves(history: dict, outer: dict, warn: Callable[[str], None]) -> Curves:
    """Each metric list of ``history`` (a dict :func:`is_history` accepts; ``outer``: the document around it) as a
    tag and its steps and values (see :func:`_placed`); what was read how said through ``warn``."""
    metrics = {key: values for key, values in history.items()
               if _is_number_list(values) and key.lower() not in STEP_KEYS}
    return _placed(warn, metrics, _epochs(warn, metrics, [history, outer]))


def _epochs(warn: Callable[[str], None], metrics: dict[str, list], holders: list[dict]) -> np.ndarray:
    """The x axis: a step list of the history (or of the document around it) as long as its longest metric list,
    else the position in the lists from 1."""
    longest = max(map(len, metrics.values()))
    positions = np.arange(1, longest + 1, dtype=np.int64)
    candidates = sorted(((key, values) for holder in holders for key, values in holder.items()
                         if key.lower() in STEP_KEYS and _is_number_list(values)),
                        key=lambda item: STEP_KEYS.index(item[0].lower()))
    if not candidates:
        warn(f"no step list ({', '.join(STEP_KEYS)}); the position in the lists is the epoch, from 1")
        return positions
    for _, values in candidates:
        steps = np.array([np.nan if value is None else as_value(value) for value in values], dtype=np.float64)
        usable, whole = whole_steps(steps)
        # a count that never changes (batches per epoch, 29 in every record) is no x axis
        if len(steps) == longest and usable.all() and whole and (longest == 1 or np.ptp(steps) > 0):
            return steps.astype(np.int64)
    key, values = candidates[0]
    why = (f"holds {len(values)} values, the longest metric list {longest}" if len(values) != longest
           else "is not all whole numbers")
    warn(f"its {key} list {why}; the position in the lists is the epoch, from 1")
    return positions


def _placed(warn: Callable[[str], None], metrics: dict[str, list], epochs: np.ndarray) -> Curves:
    """Each metric list as a curve over ``epochs``; a shorter list logged every k epochs at the end of each block."""
    every: dict[int, list[str]] = {}
    unplaced: list[str] = []
    curves = []
    for key, values in metrics.items():
        if len(values) == len(epochs):
            steps = epochs
        elif len(epochs) % len(values) == 0:
            spacing = len(epochs) // len(values)
            steps = epochs[spacing - 1::spacing]
            every.setdefault(spacing, []).append(key)
        else:
            steps = np.arange(1, len(values) + 1, dtype=np.int64)
            unplaced.append(key)
        logged = np.array([value is not None for value in values])
        curves.append((key, (steps[logged], np.array([as_value(value) for value in values if value is not None],
                                                     dtype=np.float64))))
    for spacing, keys in every.items():
        warn(f"one value every {spacing} epochs ({len(epochs) // spacing} against {len(epochs)}), each placed at the "
             f"end of its {spacing}-epoch block: {listed(keys)}")
    if unplaced:
        warn(f"a number of values that does not divide the {len(epochs)} epochs, so each value placed at its own "
             f"position in the list, from 1: {listed(unplaced)}")
    return curves
