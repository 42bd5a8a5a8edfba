"""Files beside a log that record what the log does not: the model's class count or vocabulary, and the pretrained
model the run fine-tunes.

Runs keep their class count in a model config (``config.json``: ``num_labels``, ``id2label``, ``vocab_size``), in their
arguments (``args.json``, ``params.json``, ``hparams.json``, ``args.yaml``, ``config.yaml``), in a data config (YOLO's
``data.yaml``: ``nc``, ``names``) or in a label list (``labels.txt``, ``classes.txt``, ``class_names.txt``: one label a
line; ``labels.csv``, ``classes.csv``, ``class_names.csv``: a table of the classes, one a row, numbered 0, 1, … or 1, 2,
… in its first column, as GTSRB's ``ClassId,SignName``; a JSON class list: ``class_indices.json``, ``label_map.json``,
``class_names.json`` …, a name → index or index → name map, or a list of the names) or a Keras model saved by
``model.to_json()`` (``model.json``, ``model_architecture.json``: its softmax output layer's width); a PEFT
``adapter_config.json`` names the base model, and so does the model card the Trainer writes (``README.md``, whose
YAML front matter holds ``base_model``: ``trainer.create_model_card(finetuned_from=…)``, as the Hugging Face example
scripts call it). They are looked for in the run's folder, then one folder up (two above a Hugging Face
``checkpoint-N/``, whose output folder holds the model config, and above a Lightning logger's ``version_N/`` or a W&B
run folder, whose project folder holds the run's configs), each folder's ``configs/`` or ``config/`` folder right after
it (a project's ``configs/config.yaml`` beside the ``outputs/`` its log is written to), nearest folder first;
within a folder the model config first, then data configs, run arguments, other YAML files, other JSON files
named for settings (``default_parameters.json``,
``training_config.json``) or as the summary a script writes at its end (``summary_metrics.json``,
``evaluation_report.json``) or for the model (``model.json``), settings kept as code or INI (``config.py``,
``hparams.py``, ``config.ini``: parsed, never run), the folder's one training script (``train.py``), settings
written out as text (``args.txt``, ``opt.txt``), label lists,
then a classification report an evaluation saved (scikit-learn's, printed to ``classification_report.txt``,
``eval_results.txt`` …, or saved as a table, ``classification_report.csv``: the classes its split held, weakest of
all); last, a data config the run's arguments
name by path (Ultralytics' ``data: data.yaml``, relative to the directory training ran in), in the run folder's parents
up to three levels: the whole relative path, or the end of one from another machine. Only a count stated under a key
:func:`curvedoc.model.n_classes_from` knows is taken, so the ``config.json`` of an unrelated tool says nothing.

Cost: only files under MAX_BYTES are opened, and parsed with the JSON parser or YAML's safe loader. A folder's
listing is kept while its modification time is unchanged and a file's reading while its size and modification
time are, so an audit of thousands of runs under one parent folder lists and reads the parent once per process.
Every companion file read is added to the run's ``meta.files``, so the audit cache sees it change (a companion
created after an audit goes unnoticed until the run's own files change).
"""

from __future__ import annotations

import ast
import configparser
import csv
import functools
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import yaml

from curvedoc.model import (CLASS_COUNT_KEYS, CLASSES, REPORT_ORDER, VOCABULARY_KEYS, ClassCount, ConfigFacts, Run,
                            classes_in_printed_reports, classes_reported, complete_meta, facts_from, n_classes_from,
                            report_facts)

# The largest real companions are model configs naming every class (ImageNet-21k's id2label and label2id: ~2 MB)
MAX_BYTES = 4 << 20
MODEL_CONFIGS = ("config.json", "adapter_config.json")
ARGUMENT_FILES = ("hparams.json", "params.json", "args.json")
PREFERRED_YAML = ("data.yaml", "data.yml", "hparams.yaml", "args.yaml", "config.yaml", "config.yml")
YAML_SUFFIXES = (".yaml", ".yml")
LABEL_LIST_FILES = ("labels.txt", "classes.txt", "class_names.txt")
LABEL_TABLE_FILES = ("labels.csv", "classes.csv", "class_names.csv")
ONE_HOT_ROWS = 20  # rows of a table of one-hot labels that are enough to tell it
FILE_NAME = re.compile(r"\.[A-Za-z0-9]{2,5}$")  # an example named by its file (img_017.jpg)
# A table of examples and their one-hot labels, as Roboflow exports a classification set (``train/_classes.csv``:
# ``filename, cat, dog`` over ``img1.jpg, 0, 1``): its one-hot columns are the classes
ONE_HOT_TABLE = re.compile(r"^(?:.*[_\-])?classes\.csv$", re.IGNORECASE)
# A class list saved as JSON: Keras' ``flow_from_directory(...).class_indices`` ({"angry": 0, "disgust": 1, …}),
# torchvision's ``class_to_idx``, an index → name map ({"0": "a", "1": "a lot", …}) or a plain list of the names
LABEL_MAP_JSON = re.compile(
    r"^(?:(?:class(?:es)?|labels?|categor(?:y|ies))(?:[_\-]?(?:names?|maps?|mapping|indices|index|dict|list|ids?"
    r"|(?:to|2)[_\-]?(?:idx|ids?|index)))?|(?:idx|ids?|index)[_\-]?(?:to|2)[_\-]?(?:class(?:es)?|labels?))\.json$",
    re.IGNORECASE)
MODEL_CARD = "README.md"
# A classification report the run's evaluation saved: printed (classification_report.txt, eval_results.txt,
# test_metrics.txt) or as a table (pd.DataFrame(report).transpose().to_csv(): classification_report.csv,
# per_class_metrics.csv)
PRINTED_REPORT_FILE = re.compile(r"^.*(?:report|metrics|results).*\.txt$", re.IGNORECASE)
REPORT_TABLE_FILE = re.compile(r"^.*(?:report|class).*\.csv$", re.IGNORECASE)
CONFIG_FOLDERS = ("configs", "config")
# The names settings files go by, alone or with a qualifier (train_config.py, config_v2.py, training_config.txt)
SETTINGS_WORDS = "config|configs|cfg|settings|params|hparams|hyperparams|hyperparameters|options"
# Settings a project keeps as code or as INI (config.py: NUM_CLASSES = len(CLASS_NAMES); hparams.py; a yacs
# cfg.MODEL.NUM_CLASSES = 9; config.ini: CLASSES = ["fire", "normal"]). Not defaults.py: a framework's defaults,
# which the run's own config overrides
SETTINGS_SOURCE = re.compile(rf"^(?:\w+[_\-])?(?:{SETTINGS_WORDS}|constants?)(?:[_\-]\w+)?\.(?:py|ini|cfg)$",
                             re.IGNORECASE)
# Settings a script wrote out as text (args.txt, opt.txt, training_config.txt: "vocab_size : 226", "lr=0.01" or an
# argparse Namespace), read as a configuration logged as text is
TEXT_SETTINGS = re.compile(rf"^(?:\w+[_\-])?(?:{SETTINGS_WORDS}|args|arguments|opts?)(?:[_\-]\w+)?\.txt$",
                           re.IGNORECASE)
# The script that trained the run (train.py, main.py, finetune_bert.py), read as a settings module for the counts it
# states, when it is the only one in its folder: of train_cifar10.py and train_cifar100.py, none says which ran
TRAINING_SCRIPT = re.compile(r"^(?:train|training|main|finetune|fine_tune)(?:[_\-]\w+)?\.py$", re.IGNORECASE)
# The keyword arguments of a call in such a file that are read as settings: counts only (resnet18(num_classes=10),
# from_pretrained(…, num_labels=2)); any other keyword (read_csv(names=[…])) is an argument, not a setting
COUNT_KEYWORDS = CLASS_COUNT_KEYS | VOCABULARY_KEYS
UNREAD = object()  # a value a settings module computes in a way that is not read without running it
# what the standard parsers raise on text they cannot take (a literal nested too deep, too large, not one at all)
UNPARSABLE = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)
# Named companions: a broken one is worth a warning; any other YAML file may be anything and is passed over quietly
COMPANION_NAMES = frozenset(MODEL_CONFIGS + ARGUMENT_FILES + PREFERRED_YAML + LABEL_LIST_FILES + LABEL_TABLE_FILES)
NOT_CONFIGS = {"meta.yaml"}  # MLflow's run and experiment bookkeeping, in every run folder
# Other JSON files a run's settings are saved in by name (default_parameters.json, train_params.json,
# training_config.json, model_metadata.json), and the summary or report a script writes at its end, which states its
# class count beside the scores (summary_metrics.json, evaluation_report.json: "num_classes": 9); any other JSON beside
# a log is more likely data or results
CONFIG_WORDS = re.compile(r"param|config|args|setting|option|metadata|summary|report")
# A Keras model saved as JSON (model.to_json(): model.json, model_architecture.json, model_save.json), whose output
# layer gives the class count
MODEL_JSON_WORDS = re.compile(r"model|architecture")
KERAS_MODELS = {"Sequential", "Functional", "Model"}
# Layers between a Dense output and the model's end that leave its width as it is
PASSING_LAYERS = {"Activation", "Softmax", "Dropout"}
# Folders a framework makes per checkpoint or per run inside the folder the user chose, whose configs are saved in
# that folder: a Hugging Face checkpoint's model config is in the output folder above it, and the project folder
# holding a Lightning logger's version_N/ or a W&B run folder is two above the log
RUN_SUBFOLDER = re.compile(r"^(checkpoint-\d+|last-checkpoint|version_\d+|(offline-)?run-\d{8}_\d{6}-[a-z0-9]+)$")
LONGEST_LABEL = 200  # characters; a longer line is text, not a class name
CACHED_ENTRIES = 16384  # folders and files each; a long audit starts the cache afresh beyond that


# Ultralytics trains in a working directory holding runs/<task>/<name>/ and saves ``data: data.yaml`` in the run's
# args.yaml relative to it (or as an absolute path on the training machine): the data config is looked for by its
# file name in the run folder's parents, up to the working directory
NAMED_DATA_LEVELS = 3
NAMED_DATA_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Companion:
    path: str
    facts: ConfigFacts
    problem: str | None  # a named companion that could not be read: one line for the run's warnings
    # the path of the data config it names (Ultralytics' ``data: data.yaml``), as its folders and file name
    data_config: tuple[str, ...] | None = None


def complete(runs: list[Run], source_path: Path) -> None:
    """Gives runs read from ``source_path`` (a log file or a run folder) the class count and base model their
    companion files record, where their own logs and hyperparameters did not."""
    pending = [run for run in runs
               if run.meta.n_classes is None or run.meta.base_model is None or run.meta.base_loss is None]
    if not pending:
        return
    anchor = source_path if source_path.is_dir() else source_path.parent
    for companion in companions_of(anchor):
        for run in pending:
            # a file the log's own reader already listed, by the relative path it was given
            if os.path.abspath(companion.path) not in map(os.path.abspath, run.meta.files):
                run.meta.files.append(companion.path)
            if companion.problem:
                run.warnings.append(companion.problem)
            complete_meta(run.meta, os.path.relpath(companion.path, anchor), companion.facts)


def companions_of(folder: Path) -> list[Companion]:
    """The companion files of a run whose log is in ``folder``, nearest first, each read (or taken from the cache)."""
    found = []
    for level in _with_config_folders(search_folders(folder)):
        for name in _candidates(level):
            companion = _read(os.path.join(level, name))
            if companion is not None:
                found.append(companion)
    read = {companion.path for companion in found}
    for named in dict.fromkeys(companion.data_config for companion in found if companion.data_config):
        path = _named_data_config(folder, named)
        if path is not None and path not in read and (companion := _read(path)) is not None:
            found.append(companion)
    return found


def _named_data_config(folder: Path, named: tuple[str, ...]) -> str | None:
    """The data config the path ``named`` leads to from the folder training ran in, within NAMED_DATA_LEVELS
    parents of the run folder, nearest first: the whole relative path (``hockey_vio-1/data.yaml``), or as much of
    the end of a path from another machine as this tree holds (``C:/Users/me/project/archive/grading.yaml`` is
    ``archive/grading.yaml`` of the project the runs were copied with), down to the file name alone."""
    level = os.path.abspath(folder)
    for _ in range(NAMED_DATA_LEVELS):
        parent = os.path.dirname(level)
        if parent == level:
            return None
        level = parent
        for start in range(len(named) - 1):
            if os.path.isfile(path := os.path.join(level, *named[start:])):
                return path
        if named[-1] in folder_names(level):  # the file name alone, from the listing an archive's runs share
            return os.path.join(level, named[-1])
    return None


def _with_config_folders(folders: list[str]) -> list[str]:
    """The search folders, each followed by the settings folder it keeps its configs in (``configs/``, ``config/``):
    a Keras script's ``models/configs/label_mapping.json`` beside ``models/training_log.csv``, and a project's
    ``configs/config.yaml`` beside the ``outputs/`` or ``lightning_logs/`` its runs are written to."""
    searched = []
    for level in folders:
        names = folder_names(level)
        searched += [level, *(os.path.join(level, name) for name in CONFIG_FOLDERS if name in names)]
    return searched


def search_folders(folder: Path) -> list[str]:
    folders = [os.path.abspath(folder)]
    levels = 2 if RUN_SUBFOLDER.match(Path(folders[0]).name) else 1
    for _ in range(levels):
        parent = os.path.dirname(folders[-1])
        if parent == folders[-1]:
            break
        folders.append(parent)
    return folders


_listings: dict[str, tuple[int, frozenset[str]]] = {}
_readings: dict[str, tuple[tuple[int, int], Companion | None]] = {}


def folder_names(folder: str) -> frozenset[str]:
    """The names in ``folder`` (hidden ones left out), listed once while its modification time is unchanged: an
    archive's runs under one parent look at that parent once, not once each (companions, generations)."""
    try:
        modified = os.stat(folder).st_mtime_ns
    except OSError:
        return frozenset()
    cached = _listings.get(folder)
    if cached and cached[0] == modified:
        return cached[1]
    try:
        with os.scandir(folder) as entries:
            names = frozenset(entry.name for entry in entries if not entry.name.startswith("."))
    except OSError:
        names = frozenset()
    _remember(_listings, folder, (modified, names))
    return names


def _candidates(folder: str) -> tuple[str, ...]:
    """The companion names in ``folder`` in the order they are consulted (see the module doc)."""
    return _ordered_candidates(folder_names(folder))


@functools.lru_cache(maxsize=1024)
def _ordered_candidates(names: frozenset[str]) -> tuple[str, ...]:
    """Once per listing (folder_names hands the same frozenset while the folder is unchanged, and its hash is
    kept): an archive's thousands of run folders under one parent are not filtered and sorted once per run."""
    other_yaml = sorted(name for name in names if name.lower().endswith(YAML_SUFFIXES)
                        and name not in PREFERRED_YAML and name not in NOT_CONFIGS)
    label_maps = sorted(name for name in names if LABEL_MAP_JSON.match(name))
    other_json = sorted(name for name in names if name.lower().endswith(".json") and name not in COMPANION_NAMES
                        and name not in label_maps
                        and (CONFIG_WORDS.search(name.lower()) or MODEL_JSON_WORDS.search(name.lower())))
    settings_sources = sorted(filter(_is_settings_file, names))
    scripts = [name for name in names if TRAINING_SCRIPT.match(name) and name not in settings_sources]
    settings_sources += scripts if len(scripts) == 1 else []
    ordered = [name for name in (*MODEL_CONFIGS, *ARGUMENT_FILES, *PREFERRED_YAML) if name in names]
    one_hot = sorted(name for name in names if ONE_HOT_TABLE.match(name) and name not in LABEL_TABLE_FILES)
    # last of all: the classes an evaluation happened to meet
    reports = sorted(name for name in names if _is_report_file(name))
    return (*ordered, *other_yaml, *other_json, *settings_sources,
            *(name for name in (*LABEL_LIST_FILES, *LABEL_TABLE_FILES) if name in names), *one_hot, *label_maps,
            *((MODEL_CARD,) if MODEL_CARD in names else ()), *reports)


def _is_settings_file(name: str) -> bool:
    return bool(SETTINGS_SOURCE.match(name) or TEXT_SETTINGS.match(name))


def _is_report_file(name: str) -> bool:
    return (name not in COMPANION_NAMES and not ONE_HOT_TABLE.match(name)
            and bool(PRINTED_REPORT_FILE.match(name) or REPORT_TABLE_FILE.match(name)))


def _read(path: str) -> Companion | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    stamp = (info.st_size, info.st_mtime_ns)
    cached = _readings.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    companion = _parse(path, info.st_size)
    _remember(_readings, path, (stamp, companion))
    return companion


def _parse(path: str, size: int) -> Companion | None:
    name = os.path.basename(path)
    if size > MAX_BYTES:
        # a file this big is data, not a config, unless its name says otherwise
        problem = f"{path}: over {MAX_BYTES >> 20} MB; no class count read from it" if name in COMPANION_NAMES else None
        return Companion(path, ConfigFacts(), problem)
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8-sig", errors="replace")
    except OSError:
        return None
    if name in LABEL_LIST_FILES:
        return _label_count(path, _label_list(text))
    if name in LABEL_TABLE_FILES or ONE_HOT_TABLE.match(name):
        return _label_count(path, _label_table(text) or one_hot_classes(text))
    if name == MODEL_CARD:
        return Companion(path, ConfigFacts(base_model=_card_base_model(text)), None)
    if LABEL_MAP_JSON.match(name):
        return _label_count(path, _label_map(text))
    if _is_report_file(name):
        count = _report_table(text) if name.lower().endswith(".csv") else classes_in_printed_reports(text)
        return Companion(path, report_facts(count), None)
    if _is_settings_file(name) or TRAINING_SCRIPT.match(name):
        settings = _settings_in(name.lower(), text)
        return Companion(path, facts_from(settings) if settings else ConfigFacts(), None)
    config = parse_json(text) if name.endswith(".json") else parse_yaml(text)
    if config is None:
        kind = "JSON" if name.endswith(".json") else "YAML"
        problem = f"{path}: not valid {kind}; no class count read from it" if name in COMPANION_NAMES else None
        return Companion(path, ConfigFacts(), problem)
    if is_wandb_config(config):
        config = wandb_values(config)  # the config.yaml beside a W&B run's captured output.log
    if (keras := keras_model_facts(config)) is not None:
        return Companion(path, keras, None)
    return Companion(path, facts_from(config), None, _data_config_named(config))


def keras_model_facts(config: dict) -> ConfigFacts | None:
    """What a Keras model's JSON (``model.to_json()``, or the graph Keras' TensorBoard callback logs) says of the
    run: its class count, from its output layer; None for a config that is no Keras model."""
    if config.get("class_name") not in KERAS_MODELS or not isinstance(config.get("config"), dict):
        return None
    return ConfigFacts(count=_keras_output_classes(config["config"]))


def _keras_output_classes(model: dict) -> ClassCount | None:
    """The class count of a Keras model saved by ``model.to_json()``: the width of the Dense layer that makes its one
    output, when a softmax ends it (a sigmoid on one unit: two classes). A linear or ReLU output is a regression, or
    logits whose loss the file does not say; a sigmoid on several units is multi-label."""
    layers = [layer for layer in model.get("layers", []) if isinstance(layer, dict)]
    names = [layer.get("name") or layer.get("config", {}).get("name") for layer in layers]
    outputs = model.get("output_layers")  # a functional model's: [[name, node, tensor], …] (Keras 3: one unnested)
    outputs = [outputs] if isinstance(outputs, list) and outputs and isinstance(outputs[0], str) else outputs
    if not layers or (outputs is not None and (len(outputs) != 1 or outputs[0][0] not in names)):
        return None
    index = names.index(outputs[0][0]) if outputs else len(layers) - 1
    activation = None
    while index > 0 and layers[index].get("class_name") in PASSING_LAYERS:
        kind = layers[index]["class_name"]
        said = "softmax" if kind == "Softmax" else layers[index].get("config", {}).get("activation")
        activation = activation or said
        index -= 1
    settings = layers[index].get("config", {})
    units, activation = settings.get("units"), activation or settings.get("activation")
    if layers[index].get("class_name") != "Dense" or not isinstance(units, int) or isinstance(units, bool):
        return None
    count = units if activation == "softmax" and units >= 2 else 2 if activation == "sigmoid" and units == 1 else None
    return count and ClassCount(count, f"output layer {names[index]}: {units} unit(s), {activation}", CLASSES)


def _data_config_named(config: dict) -> tuple[str, ...] | None:
    """The folders and file name of the data config a run's arguments name (``data: data.yaml``; a Windows path
    too), from after the last part that says where it started (a drive, ``..``, ``.``)."""
    named = config.get("data")
    if not isinstance(named, str) or not named.lower().endswith(NAMED_DATA_SUFFIXES):
        return None
    parts = [part for part in re.split(r"[\\/]", named) if part]
    after = max((index + 1 for index, part in enumerate(parts) if part in ("..", ".") or part.endswith(":")),
                default=0)
    return tuple(parts[after:]) or None


def is_wandb_config(config: dict) -> bool:
    """W&B's ``config.yaml``: its own ``_wandb`` block, or every key mapped to ``{value: ..., desc: ...}``."""
    return "_wandb" in config or bool(config) and all(
        isinstance(entry, dict) and "value" in entry and set(entry) <= {"value", "desc"} for entry in config.values())


def wandb_values(config: dict) -> dict:
    """The plain ``{key: value}`` of a W&B config, whose keys each map to ``{value: ..., desc: ...}``."""
    return {str(key): entry["value"] if isinstance(entry, dict) and "value" in entry else entry
            for key, entry in config.items()}


def _card_base_model(text: str) -> str | None:
    """``base_model`` from a model card's YAML front matter (a name, or a list whose first entry is the base)."""
    if not text.startswith("---"):
        return None
    front, separator, _ = text[3:].partition("\n---")
    card = parse_yaml(front) if separator else None
    base = (card or {}).get("base_model")
    base = base[0] if isinstance(base, list) and base else base
    return base.strip() if isinstance(base, str) and base.strip() else None


def _label_count(path: str, count: int | None) -> Companion:
    return Companion(path, ConfigFacts(count=count and ClassCount(count, "labels", CLASSES)), None)


def _report_table(text: str) -> int | None:
    """The class count of a classification report saved as a table: a row per class, then the accuracy and the
    averages, under a header of the four scores (its first cell the index's, often empty)."""
    rows = list(csv.reader(text.splitlines()))
    if not rows or tuple(cell.strip().lower() for cell in rows[0][1:]) != REPORT_ORDER:
        return None
    # the accuracy's row repeats it under every column: one score, no class
    report = {row[0].strip(): dict(zip(REPORT_ORDER, row[1:], strict=True)) for row in rows[1:]
              if len(row) == len(rows[0]) and row[0].strip() != "accuracy"}
    return classes_reported(report)


def _label_list(text: str) -> int | None:
    """The number of labels of a one-label-a-line file; a file with repeats or long lines is not a label list."""
    labels = [line.strip() for line in text.splitlines() if line.strip()]
    if len(labels) < 2 or len(set(labels)) != len(labels) or max(map(len, labels)) > LONGEST_LABEL:
        return None
    return len(labels)


def _label_table(text: str) -> int | None:
    """The number of classes of a table of them, one a row under a header, numbered 0, 1, … (or from 1) in its first
    column; a table of examples and their labels numbers no classes so (its first column is a file, or repeats)."""
    rows = [line.split(",", 1)[0].strip().strip('"') for line in text.splitlines()[1:] if line.strip()]
    if len(rows) < 2 or not all(row.isdigit() for row in rows):
        return None
    return _count_of_class_indices(list(map(int, rows)))


def one_hot_classes(text: str) -> int | None:
    """The number of classes of a table of examples and their one-hot labels (a file name, then a 0 or 1 under each
    class's column; an example may have none), or None when ``text`` (its first rows are enough) is no such table."""
    lines = [line for line in text.split("\n", ONE_HOT_ROWS + 1)[:ONE_HOT_ROWS + 1] if line.strip()]
    if len(lines) < 3:
        return None
    header, *rows = ([cell.strip().strip('"') for cell in line.split(",")] for line in lines)
    if len(header) < 3 or any(len(row) != len(header) for row in rows[:-1]):
        return None  # the last line of a peek may be cut
    if not all(FILE_NAME.search(row[0]) and set(row[1:]) <= {"0", "1"} for row in rows[:-1]):
        return None
    return len(header) - 1 if any("1" in row[1:] for row in rows[:-1]) else None


def _count_of_class_indices(indices: list[int]) -> int | None:
    """How many classes ``indices`` number, when they are 0, 1, … (or from 1) without a gap or a repeat."""
    numbers = sorted(indices)
    return len(numbers) if numbers in (list(range(len(numbers))), list(range(1, len(numbers) + 1))) else None


def _label_map(text: str) -> int | None:
    """The number of classes of a JSON class list: a list of distinct names, a name → index map or an index → name
    map whose indices are 0, 1, … (or from 1) without a gap; else, a settings object that states a count under a key
    :func:`curvedoc.model.n_classes_from` knows. A file of annotations or of examples and their labels numbers no
    classes so (its indices repeat, or are no indices)."""
    try:
        loaded = json.loads(text)
    except ValueError:
        return None
    if isinstance(loaded, list):
        return _label_list("\n".join(loaded)) if all(isinstance(item, str) for item in loaded) else None
    if not isinstance(loaded, dict) or not loaded:
        return None
    keys, values = list(loaded), list(loaded.values())
    # a map of one entry is no class list ({"0": "cat"}); an object of one key may hold one ({"class_names": […]})
    if len(loaded) > 1 and all(isinstance(value, int) and not isinstance(value, bool) for value in values):
        indices = values  # name → index
    elif len(loaded) > 1 and all(isinstance(value, str) for value in values) and all(key.isdigit() for key in keys):
        indices = [int(key) for key in keys]  # index → name
    else:
        count = n_classes_from(loaded)
        return count.count if count is not None and count.kind == CLASSES else None
    return _count_of_class_indices(indices)


def parse_json(text: str) -> dict | None:
    try:
        loaded = json.loads(text)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


class TolerantLoader(yaml.SafeLoader):
    """SafeLoader that reads Python-object tags Lightning may write (``!!python/tuple`` ...) as plain data."""


def _plain_data(loader: yaml.SafeLoader, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


TolerantLoader.add_constructor(None, _plain_data)  # any tag SafeLoader does not know
TolerantLoader.add_multi_constructor(
    "tag:yaml.org,2002:python/", lambda loader, _suffix, node: _plain_data(loader, node)
)


def parse_yaml(text: str) -> dict | None:
    """A YAML mapping; Python tags that Lightning writes (``!!python/tuple``) are read as plain data."""
    try:
        loaded = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.constructor.ConstructorError:
        try:
            loaded = yaml.load(text, Loader=TolerantLoader)
        except (yaml.YAMLError, ValueError):
            return None
    except (yaml.YAMLError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _settings_in(name: str, text: str) -> dict | None:
    """The settings of a settings module, an INI file or settings written out as text, by its (lower-case) name."""
    if name.endswith(".py"):
        return settings_in_code(text)
    return parse_config_text(text) if name.endswith(".txt") else settings_in_ini(text)


def settings_in_code(text: str) -> dict | None:
    """The settings a Python module states, by their (dotted) names: what its assignments give a literal value
    (``NUM_CLASSES = 7``, ``num_classes: int = 7``, ``cfg.MODEL.NUM_CLASSES = 9``, ``CONFIG = {"num_labels": 6}``), or
    the length of one (``NUM_CLASSES = len(CLASS_NAMES)``), an argparse option's default (``add_argument("--num_classes",
    default=7)``) and a count passed by keyword (``from_pretrained(…, num_labels=2)``). The module is parsed, never
    run. A name given two different values (one per dataset or per model), or assigned one that only running the
    module tells, says neither; a keyword passed a value read elsewhere (``Net(num_classes=args.num_classes)``)
    states nothing of its own."""
    try:
        with warnings.catch_warnings():
            # an invalid escape in a string ("C:\data") warns as the module is compiled: the user's code, not ours
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(text)
    except UNPARSABLE:
        return None
    stated: dict[str, list[tuple[ast.expr, bool]]] = {}
    for node in ast.walk(tree):
        for name, value, passed in _stated_in(node):
            stated.setdefault(name, []).append((value, passed))
    # first the literals, then what is computed from them (a len() of a list, a name standing for a literal)
    known: dict = {}
    for _ in range(2):
        known = {name: value for name, nodes in stated.items()
                 if (value := _one_value([(_literal(node, known), passed) for node, passed in nodes])) is not UNREAD}
    return known or None


def _stated_in(node: ast.AST) -> list[tuple[str, ast.expr, bool]]:
    """The (name, value expression, passed by keyword) triples one node of a settings module states."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        name = _setting_name(node.targets[0])
        return [(name, node.value, False)] if name else []
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        name = _setting_name(node.target)
        return [(name, node.value, False)] if name else []
    if not isinstance(node, ast.Call):
        return []
    keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
    if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument" and "default" in keywords:
        options = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        named = max(options, key=len, default="").lstrip("-").replace("-", "_")
        return [(named, keywords["default"], False)] if named else []
    return [(name, value, True) for name, value in keywords.items() if name.lower() in COUNT_KEYWORDS]


def _setting_name(target: ast.expr) -> str | None:
    """``NUM_CLASSES``, ``cfg.MODEL.NUM_CLASSES`` or ``config.num_classes`` for ``config["num_classes"]``."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return f"{owner}.{target.attr}" if (owner := _setting_name(target.value)) else None
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value,
                                                                                                    str):
        return f"{owner}.{target.slice.value}" if (owner := _setting_name(target.value)) else None
    return None


def _literal(node: ast.expr, known: dict):
    """The value of ``node`` when it is a literal, a name ``known`` holds, or len() of either; else UNREAD."""
    if (value := _evaluated(node, UNREAD)) is not UNREAD:
        return value
    if isinstance(node, ast.Name):
        return known.get(node.id, UNREAD)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1
            and not node.keywords):
        inner = _literal(node.args[0], known)
        return len(inner) if isinstance(inner, (list, tuple, dict, set)) else UNREAD
    return UNREAD


def _one_value(values: list[tuple[object, bool]]):
    """The value all of ``values`` (each with whether it was passed by keyword) agree on; UNREAD when two differ, or
    an assignment's is unread, or none is read."""
    if any(value is UNREAD and not passed for value, passed in values):
        return UNREAD
    read = [value for value, _ in values if value is not UNREAD]
    return read[0] if read and all(repr(value) == repr(read[0]) for value in read[1:]) else UNREAD


def settings_in_ini(text: str) -> dict | None:
    """An INI file's settings by section, each value read as a Python literal where it is one
    (``CLASSES = ["fire", "normal"]``); settings before any section header are read as a section of their own."""
    for attempt in (text, "[settings]\n" + text):
        parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True)
        try:
            parser.read_string(attempt)
        except configparser.MissingSectionHeaderError:
            continue
        except (configparser.Error, AttributeError):
            # AttributeError: the standard parser's own stumble on an indented line below a key without a value
            return None
        return {section: {key: _evaluated(value, value) if value else value for key, value in parser.items(section)}
                for section in parser.sections()} or None
    return None


def _evaluated(literal: ast.expr | str, otherwise):
    """The value of a Python literal (an expression's node, or its text), ``otherwise`` when it is none."""
    try:
        return ast.literal_eval(literal)
    except UNPARSABLE:
        return otherwise


MARKDOWN_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
MARKDOWN_RULE = re.compile(r"^\s*\|?[\s:|\-]+\|?\s*$")
KEY_VALUE = re.compile(r"(?:^|[\s,(])([A-Za-z_][\w.\-]*)\s*=\s*('[^']*'|\"[^\"]*\"|[^,\s)]+)")
CODE_FENCE = re.compile(r"^```[\w-]*\s*\n(.*?)\n\s*```$", re.DOTALL)


def parse_config_text(text: str) -> dict | None:
    """A configuration logged as text (a TensorBoard text summary): JSON (the HF Trainer's), a Markdown table of
    ``| key | value |`` rows (CleanRL's), an argparse ``Namespace(key=value, ...)`` or ``key=value`` lines, or
    YAML (``key: value`` lines). None when the text holds no mapping."""
    text = text.strip()
    if fenced := CODE_FENCE.match(text):
        text = fenced.group(1).strip()
    if text.startswith("{"):
        return parse_json(text)
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(MARKDOWN_ROW.match(line) for line in lines):
        return _markdown_table(lines)
    pairs = dict(KEY_VALUE.findall(text))
    if pairs and (text.startswith("Namespace(") or len(pairs) >= len(lines)):
        return {key: value.strip("'\"") for key, value in pairs.items()}
    return parse_yaml(text)


def _markdown_table(lines: list[str]) -> dict | None:
    """``| key | value |`` rows; a header row above the ``|---|---|`` rule names the columns and is skipped."""
    rule = next((index for index, line in enumerate(lines) if MARKDOWN_RULE.match(line)), -1)
    table = {}
    for line in lines[rule + 1:]:
        cells = [cell.strip() for cell in MARKDOWN_ROW.match(line).group(1).split("|")]
        if len(cells) >= 2 and cells[0]:
            table[cells[0].strip("`*")] = cells[1].strip("`*")
    return table or None


def _remember(cache: dict, key: str, value) -> None:
    if len(cache) >= CACHED_ENTRIES:
        cache.clear()
    cache[key] = value
