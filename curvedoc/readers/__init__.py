"""Finding training logs on disk and handing each to the reader of its format family.

Discovery decides *what is a run* (a TensorBoard folder, a W&B run folder, an MLflow run, a CSV file, a CSV file
per split …) from names and a peek at content; each reader module then turns one :class:`Source` into runs. A
reader module exposes ``read(source: Source) -> list[Run]`` and raises :class:`~curvedoc.errors.CurvedocError` when
nothing in the source can be read; partial damage becomes warnings on the run.
"""

from __future__ import annotations

import codecs
import csv
import importlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

from curvedoc.errors import CurvedocError, describe_os_error
from curvedoc.model import Run
from curvedoc.readers.companions import LABEL_TABLE_FILES, YAML_SUFFIXES, one_hot_classes
from curvedoc.readers.generations import is_generations_file
from curvedoc.readers.records import find_step_column
from curvedoc.roles import Role, infer_role, tokens

if TYPE_CHECKING:
    import pandas as pd

# family → module; modules are imported on first use so reading a CSV never pays for TensorBoard's protos.
READER_MODULES = {
    "tensorboard": "curvedoc.readers.tensorboard",
    "csv": "curvedoc.readers.csvlog",
    "jsonl": "curvedoc.readers.jsonl",
    "hf": "curvedoc.readers.huggingface",
    "wandb": "curvedoc.readers.wandb",
    "mlflow": "curvedoc.readers.mlflow",
    "dvclive": "curvedoc.readers.dvclive",
    "deepxde": "curvedoc.readers.deepxde",
    "metric-files": "curvedoc.readers.series",
    "text": "curvedoc.readers.textlog",
    "notebook": "curvedoc.readers.notebook",
    "history": "curvedoc.readers.history",
    # one W&B panel export, or all of one folder's: the UI exports one CSV per panel, so a run spans several
    "wandb-export": "curvedoc.readers.csvlog",
}

# tables whose writers log the same metrics to an event file beside them (see _without_event_copies_of_tables)
COPIED_BY_EVENT_FILES = {"results.csv", "metrics.csv"}
YOLO_RESULTS_TEXT = "results.txt"  # YOLOv5's (to v5.0) and YOLOv3's table of one row an epoch, with no header
DVCLIVE_METRICS = ("plots", "metrics")  # where a DVCLive folder keeps one table per metric

LOOKED_FOR = (
    "TensorBoard event files (events.out.tfevents.*), CSV/TSV logs (metrics.csv, CSVLogger, W&B exports), "
    "trainer_state.json, JSON Lines metric logs, JSON (or YAML, or pickled) histories of metric lists (Keras "
    "history.history), "
    "W&B run folders, MLflow mlruns/ or mlflow.db, DVCLive folders, DeepXDE's loss.dat, "
    "captured training output (*.log, *.txt, *.out, a PBS job's *.o<id>), a Jupyter notebook's printed output, a "
    "metric's values saved one file each "
    "(train_loss.txt, train_loss.npy)"
)

# Folders holding one split of a run whose tags repeat the other splits' names (``loss``): the folder names the
# split. Keras (TF2) writes train/ and validation/; a TF Estimator evaluates into eval/ (or eval_<name>/) inside the
# training folder, TF-Agents into train/ and eval/. A folder named train is such a split only beside validation/ or
# eval/, or when TF2's writer made its files (".v2", as Keras's callback does): Ultralytics and others name whole
# runs train/, their tags naming their own splits.
HELD_OUT_SPLIT_FOLDER = re.compile(r"^(validation|eval(_[\w.\-]+)?)$")
TRAIN_SPLIT_FOLDER = "train"
TF2_EVENT_FILE_SUFFIX = ".v2"
# torch's and tensorboardX's add_hparams() write the hparams into a subfolder named by time.time(): same run.
ADD_HPARAMS_FOLDER = re.compile(r"^\d{9,}\.\d+$")
# what TensorBoard's add_embedding writes beside a run's event files
PROJECTOR_FILES = {"tensors.tsv", "metadata.tsv"}
SKIPPED_FOLDERS = {".ipynb_checkpoints", ".git", "__pycache__", "node_modules", ".trash", ".hg", ".svn"}
# What discovery reads of a file to tell its format: all of most small files, so a small .json is judged whole
PEEK_BYTES = 4096
# A JSON Lines record is read whole up to this size to tell it from the start of one long document
LONGEST_JSON_LINE = 1 << 20
JSON_LINES_PEEKED = 4  # lines read for two records (blank lines between them are skipped)
# A .json file up to this size whose first bytes say nothing is judged on its whole document
JUDGED_WHOLE_BYTES = 256 << 10
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
JSON_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson"})
SQLITE_HEADER = b"SQLite format 3\x00"
DEEPXDE_HEADER = b"# step, loss_train, loss_test"  # numpy.savetxt's header line of DeepXDE's loss.dat
NUMPY_MAGIC = b"\x93NUMPY"  # np.save's .npy file
# pickle.dump at protocol 2 or later starts with PROTO (0x80) and its number; protocols 0 and 1 (Python 2's default)
# start a dict or a list put in the memo's first place ("(dp0" is MARK, DICT, PUT 0; "}q\0" an EMPTY_DICT, BINPUT 0;
# "]q\0" an EMPTY_LIST) or name the OrderedDict they build
PICKLE_PROTOCOLS = range(2, 6)
PICKLE_OPENINGS = (b"(dp0\n", b"(lp0\n", b"}q\x00", b"]q\x00", b"ccollections\nOrderedDict\n")
DEEPXDE_TABLE_HEADER = re.compile(rb"^Step +Train loss +Test loss +Test metric", re.MULTILINE)  # what its stdout prints
TABLE_SUFFIXES = {".csv", ".tsv"}
PANDAS_UNNAMED_HEADER = re.compile(rb"\A\s*0\s*\r?\n")  # the header pandas writes over one unnamed column
# a number standing on its own in a line's cell (``Epoch:0``, ``loss is 0.1366``), not a digit within a name
LOG_LINE_NUMBER = re.compile(rb"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
# Captured stdout (`> train.log`, nohup.out, Slurm's .out); a table saved under such a name is still a table.
TEXT_LOG_SUFFIXES = {".log", ".txt", ".out"}
# A PBS or Grid Engine job's captured stdout and stderr, named <job name>.o<job id> and .e<job id> (train.o45696); its
# stderr holds what Python's logging module prints
JOB_OUTPUT_SUFFIX = re.compile(r"^\.[oe]\d+$")
# text a user may name that is never a training log (read as one, a config's lr: 0.001 would be a one-point curve).
# Markdown may be: console output pasted into a code block, an experiment's notes kept as its log (a .md file named
# on the command line is read as text, which says so when it holds no log)
NOT_LOG_SUFFIXES = {*YAML_SUFFIXES, ".toml", ".cfg", ".ini", ".py", ".rst", ".html", ".xml", ".sh"}
NOTEBOOK_SUFFIX = ".ipynb"  # a Jupyter notebook, whose cells' outputs may be a training's only log
EVENT_FILE = re.compile(r"tfevents")
# The W&B UI's "Export CSV" of a panel: the x-axis column, then `<run name> - <metric>` and its __MIN/__MAX.
WANDB_EXPORT_COLUMN = re.compile(r"^(?P<run>.+) - (?P<metric>.+?)(?P<companion>__MIN|__MAX)?$")
# What a table's cells are split at when its header holds no delimiter (``step loss`` columns)
WHITESPACE = r"\s+"
# One run's splits written to sibling tables named alike but for the split (train_performance.csv beside
# val_performance.csv and test_performance.csv, history_train.csv beside history_val.csv): the file names the split,
# as Keras's train/ and validation/ folders do, and the tables repeat one another's column names (loss, Accuracy).
# Each word of a name, with the split it names; the run is read in SPLIT_ORDER, named after its first file.
SPLIT_FILE_WORDS = {"train": "train", "training": "train", "val": "val", "valid": "val", "validation": "val",
                    "eval": "val", "test": "test"}
SPLIT_FILE_WORD = re.compile(rf"(?<![^\W_])({'|'.join(SPLIT_FILE_WORDS)})(?![^\W_])", re.IGNORECASE)
SPLIT_ORDER = ("train", "val", "test")
# A column naming the split of its rows: its table holds its run's splits already, as Lightning's metrics.csv and
# Keras's CSVLogger (val_loss) do by the columns' names.
SPLIT_COLUMNS = {"split", "phase", "mode", "subset", "stage"}


def is_wandb_export(columns: list[str]) -> bool:
    rest = columns[1:]
    return bool(rest) and all(WANDB_EXPORT_COLUMN.match(column) for column in rest)


@dataclass(frozen=True)
class Source:
    """One thing to read: ``family`` names the reader, ``path`` the run (a folder or a file).

    ``files`` lists what the reader should open, each with the split its folder (Keras) or file name implies, in
    reading order; ``explicit`` is true when the user named this file, so a file that is not a log is an error
    rather than something to pass over quietly.
    """

    family: str
    path: Path
    files: tuple[tuple[str | None, Path], ...] = ()
    explicit: bool = False


@dataclass
class Discovery:
    sources: list[Source] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class RunList(list):
    """The runs found under a path; ``problems`` holds one line per source that could not be read at all."""

    def __init__(self, runs=(), problems=()):
        super().__init__(runs)
        self.problems: list[str] = list(problems)

    def frame(self) -> pd.DataFrame:
        """Every point of every run in one long table: ``run, tag, role, step, wall_time, value``."""
        import pandas as pd

        columns = ["run", "tag", "role", "step", "wall_time", "value"]
        parts = [
            run.scalars.assign(
                run=run.path,
                role=run.scalars["tag"].map({tag: role.value for tag, role in run.roles.items()}).astype(str),
                tag=run.scalars["tag"].astype(str),
            )[columns]
            for run in self
        ]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)

    def _repr_html_(self) -> str:
        """The runs as a notebook shows them: each with its verdict, findings and plots, as in the HTML report."""
        # imported here: the report pulls in matplotlib, which `import curvedoc` must not
        from curvedoc.report.html import notebook_html

        return notebook_html(self, self.problems)


# Log files every run of their writer names the same (Lightning CSVLogger, Ultralytics, Detectron2, HF Trainer,
# 2020-era W&B): the folder names the run, as a TensorBoard folder does.
WRITER_FIXED_NAMES = {"metrics.csv", "results.csv", "metrics.json", "trainer_state.json", "wandb-history.jsonl",
                      "loss.dat"}


def file_run_name(path: Path) -> str:
    """The name of the run a single log file holds: its folder's when the writer fixed the file's name."""
    if path.name in WRITER_FIXED_NAMES:
        return path.absolute().parent.name or path.name
    return path.name


def read_source(source: Source, reader: Callable[[Source], list[Run]] | None = None) -> list[Run]:
    """The runs of ``source``, completed from their companion files (a model config, a label list beside the log:
    see :mod:`curvedoc.readers.companions`) where their own files do not record the class count. Raises
    :class:`CurvedocError` when it yields none, so no source vanishes unreported. ``reader``: a :func:`follower`
    of the source, for a run read again as it grows."""
    from curvedoc.readers import baseline, companions, generations

    runs = (reader or importlib.import_module(READER_MODULES[source.family]).read)(source)
    if not runs:
        raise CurvedocError(source.path, "holds no run (nothing in it could be read as one)")
    companions.complete(runs, source.path)
    generations.complete(runs, source.path)
    baseline.complete(runs, source.path)
    return runs


def follower(source: Source) -> Callable[[Source], list[Run]]:
    """A reader to call on ``source`` at each look while its run is written: one that reads only what was appended
    since its last call where the format has one (TensorBoard), the format's reader otherwise."""
    module = importlib.import_module(READER_MODULES[source.family])
    follower_class = getattr(module, "Follower", None)
    return follower_class(source.path).read if follower_class else module.read


def discover(path: str | os.PathLike[str], exclude: tuple[str | os.PathLike[str], ...] = ()) -> Discovery:
    """Every source under ``path``; folders in ``exclude`` (an audit's own output and cache) are not entered."""
    root = Path(path)
    try:
        info = root.stat()
    except FileNotFoundError:
        raise CurvedocError(root, "no such file or directory") from None
    except OSError as exc:
        raise CurvedocError(root, describe_os_error(exc)) from None
    found = Discovery()
    if stat.S_ISDIR(info.st_mode):
        _walk(root, found, {key for folder in exclude if (key := _folder_key(folder))})
        if not found.sources and not found.problems:
            raise CurvedocError(root, f"no training logs found; looked for {LOOKED_FOR}")
    else:
        source = classify_file(root, explicit=True)
        if isinstance(source, str):
            raise CurvedocError(root, source)
        found.sources.append(_with_split_siblings(source))
    return found


def _under_projector(path: Path) -> bool:
    """Whether a file lies in the embedding folders (``<step>/<tag>/``) of a TensorBoard log with a projector."""
    return any((folder / "projector_config.pbtxt").is_file() for folder in path.parents[:3])


def classify_file(path: Path, explicit: bool = False, regular: bool = False) -> Source | str | None:
    """The source a single file is, a one-line reason it is unusable, or None when it is not a log at all.
    ``regular``: the caller's directory listing already says it is a regular file (no stat needed)."""
    try:
        if not regular and not stat.S_ISREG(path.stat().st_mode):
            # reading a named pipe or a device would block forever or never end
            return "not a regular file (a pipe or device)" if explicit else None
    except OSError as exc:
        return describe_os_error(exc)
    name = path.name
    if EVENT_FILE.search(name):
        return Source("tensorboard", path, ((None, path),), explicit)
    if not explicit and name in PROJECTOR_FILES and _under_projector(path):
        return None  # TensorBoard's embedding projector (add_embedding): vectors and their labels, no curve
    if name.endswith(".wandb"):
        return Source("wandb", path, ((None, path),), explicit)
    if not explicit and is_generations_file(path):
        return None  # a model's outputs, read beside the run's logs (curvedoc.readers.generations), not a log
    if not explicit and name in LABEL_TABLE_FILES:
        return None  # a table of the classes, read beside the run's logs for its class count, not a log
    try:
        with open(path, "rb") as handle:
            head = handle.read(PEEK_BYTES)
    except OSError as exc:
        return describe_os_error(exc)
    whole_file = len(head) < PEEK_BYTES
    suffix = path.suffix.lower()
    suffix = ".out" if JOB_OUTPUT_SUFFIX.match(suffix) else suffix
    if head.startswith(LFS_POINTER):
        if not explicit and suffix not in JSON_SUFFIXES | TABLE_SUFFIXES | TEXT_LOG_SUFFIXES:
            return None  # a model's weights or another binary kept in LFS (pytorch_model.bin): no log to fetch
        return "is a Git LFS pointer, not the log itself (run `git lfs pull` to fetch the real file)"
    head = head.removeprefix(codecs.BOM_UTF8)  # Windows editors and Excel start text files with one
    if head.startswith(SQLITE_HEADER):
        return Source("mlflow", path, ((None, path),), explicit)
    if head.startswith(DEEPXDE_HEADER):
        return Source("deepxde", path, ((None, path),), explicit)
    if head.startswith(NUMPY_MAGIC):
        return _numpy_array(path, head, explicit)
    if is_pickle(head):
        return _pickled_history(path, explicit)
    if suffix == NOTEBOOK_SUFFIX:
        return Source("notebook", path, ((None, path),), explicit)
    if suffix in JSON_SUFFIXES:
        text = head.lstrip()
        if b'"log_history"' in head or name == "trainer_state.json":
            return Source("hf", path, ((None, path),), explicit)
        if suffix != ".json" or _looks_like_json_lines(head, path):
            return Source("jsonl", path, ((None, path),), explicit)
        if _file_holds_a_history(path, head, whole_file, explicit):
            return Source("history", path, ((None, path),), explicit)
        if explicit:
            if not text:
                return "empty file"
            return ("JSON file that is neither a Hugging Face trainer_state.json (no log_history), JSON Lines, nor a "
                    "training history (an object of metric lists, or a list of one record an epoch)")
        return None
    # Chainer's LogReport writes its records as a JSON list to a file named ``log``, with no suffix
    if not suffix and head.lstrip()[:1] == b"[" and _holds_a_history(head, whole_file):
        return Source("history", path, ((None, path),), explicit)
    # Keras' CSVLogger writes wherever it is told, to a file named ``log`` too: a table with no suffix is a log when
    # its header names its epoch or step and a measurement
    if not suffix and _looks_like_table(head) and _names_a_step_and_a_measurement(_header_cells(head)):
        return Source("csv", path, ((None, path),), explicit)
    # yaml.dump(history.history, f): a Keras history saved as YAML, beside the configs that YAML usually holds
    if suffix in YAML_SUFFIXES and _yaml_holds_a_history(head):
        return Source("history", path, ((None, path),), explicit)
    if suffix not in TABLE_SUFFIXES and suffix not in TEXT_LOG_SUFFIXES:
        if not explicit:
            return None
        # a file the user names is read for what it holds, whatever its name: captured output saved as results.rb
        # or with no suffix at all is still a training log (the reader says so when it is not)
        if not head:
            return "empty file"
        if suffix in NOT_LOG_SUFFIXES:
            return f"a {suffix} file (configuration, code or notes), not a training log; curvedoc reads {LOOKED_FOR}"
        if not _is_text(head, whole_file):
            return f"not a training log curvedoc knows; it reads {LOOKED_FOR}"
    # json.dump(history, open("log.txt", "w")): a history of metric lists saved under a captured-output name; one
    # JSON record a line there (DETR's ``log.txt``) is the text reader's, which tells a new model's run by its
    # parameter count
    if suffix in TEXT_LOG_SUFFIXES and head.lstrip()[:1] == b"{" and not _looks_like_json_lines(head, path) and (
            _file_holds_a_history(path, head, whole_file, explicit)):
        return Source("history", path, ((None, path),), explicit)
    # np.savetxt("losses_train.csv", losses): a .csv of nothing but numbers, one a line, is one metric's values as
    # much as a .txt is, and joins the other metric files of its folder (losses_validation.csv) as one run; one whose
    # first line is "0" is pandas' (pd.DataFrame(losses).to_csv(…, index=False) names its column 0): a table
    if ((suffix in TEXT_LOG_SUFFIXES or (suffix in TABLE_SUFFIXES and not PANDAS_UNNAMED_HEADER.match(head)))
            and _holds_metric_values(path, head, whole_file)):
        return Source("metric-files", path, ((None, path),), explicit)
    if suffix in TABLE_SUFFIXES and one_hot_classes(head.decode("utf-8", errors="replace")) is not None:
        # examples and their one-hot labels (Roboflow's _classes.csv): the class count of the runs beside it
        return "a table of examples and their one-hot labels, not a training log" if explicit else None
    if (suffix in TABLE_SUFFIXES and not _opens_with_a_log_line(head)) or _looks_like_table(head):
        family = "wandb-export" if is_wandb_export(_header_cells(head, ",")) else "csv"
        return Source(family, path, ((None, path),), explicit)
    # whether it is a training log or notes is told by reading it: the reader raises NotALog for notes
    return Source("text", path, ((None, path),), explicit)


def _holds_a_history(head: bytes, whole_file: bool, name: str = "", explicit: bool = False) -> bool:
    # imported here, as the readers are: it imports Source from this module
    from curvedoc.readers.history import looks_like_history

    return looks_like_history(head, complete=whole_file, name=name, explicit=explicit)


def _names_a_step_and_a_measurement(header: list[str]) -> bool:
    # imported here, as the readers are: they import Source from this module
    from curvedoc.readers.history import names_a_measurement

    return find_step_column(header) is not None and any(map(names_a_measurement, header))


def _yaml_holds_a_history(head: bytes) -> bool:
    # imported here, as in _holds_a_history
    from curvedoc.readers.history import looks_like_yaml_history

    return looks_like_yaml_history(head)


def _file_holds_a_history(path: Path, head: bytes, whole_file: bool, explicit: bool) -> bool:
    """Whether a JSON file holds a history: judged on its first bytes, else, when those say nothing, on its whole
    document when it is small (JUDGED_WHOLE_BYTES) or named by the user: a pretty-printed history may spend its first
    4 KiB on settings and an x axis (``"num_episodes": 1000, …, "episodes": [1, 2, 3, …``) before any metric's list."""
    if _holds_a_history(head, whole_file, path.stem, explicit):
        return True
    if whole_file:
        return False  # the head was the whole file, and was judged as such
    try:
        if not explicit and path.stat().st_size > JUDGED_WHOLE_BYTES:
            return False
        whole = path.read_bytes()
    except OSError:
        return False
    return _holds_a_history(whole, True, path.stem, explicit)


def _numpy_array(path: Path, head: bytes, explicit: bool) -> Source | str | None:
    """A .npy file: one metric's values when it holds numbers and its name says what they measure (np.save
    ("train_loss.npy", losses)); an array of Python objects (np.save of a dict: a Keras history) is never loaded,
    since unpickling runs code the file brings."""
    # imported here, as the readers are: they import Source from this module
    from curvedoc.readers.series import named_for_a_metric, numpy_dtype

    dtype = numpy_dtype(head)
    if dtype is not None and dtype.kind in "biuf" and named_for_a_metric(path):
        return Source("metric-files", path, ((None, path),), explicit)
    if dtype is not None and dtype.hasobject:
        return _pickled_history(path, explicit)
    if not explicit:
        return None
    if dtype is not None and dtype.kind in "biuf":
        return "a NumPy array of numbers whose file name does not say what they measure (name it train_loss.npy …)"
    return f"not a training log curvedoc knows; it reads {LOOKED_FOR}"


def is_pickle(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a pickle of a dict or a list, or one at protocol 2 or later."""
    return (head[:1] == b"\x80" and len(head) > 1 and head[1] in PICKLE_PROTOCOLS) or head.startswith(PICKLE_OPENINGS)


def _pickled_history(path: Path, explicit: bool) -> Source | str | None:
    """The source a pickle is when it holds a training history (np.save or pickle.dump of Keras's
    history.history), read by an unpickler that builds only what a history is made of (curvedoc.readers.pickled);
    else why not, for a file the user names. A model's checkpoint is never opened, nor a large pickle by a walk."""
    # imported here, as the readers are: they import Source from this module
    from curvedoc.readers import pickled
    from curvedoc.readers.history import find_history, short_history

    if path.suffix.lower() in pickled.CHECKPOINT_SUFFIXES:
        return f"a model checkpoint, not a training log; curvedoc reads {LOOKED_FOR}" if explicit else None
    try:
        if not explicit and path.stat().st_size > JUDGED_WHOLE_BYTES:
            return None
        document = pickled.load(path)
    except (CurvedocError, OSError) as exc:
        return (exc.problem if isinstance(exc, CurvedocError) else describe_os_error(exc)) if explicit else None
    if find_history(document, path.stem) is not None or (explicit and short_history(document) is not None):
        return Source("history", path, ((None, path),), explicit)
    return ("a pickle that holds no training history (an object of metric lists, or a list of one metric's values "
            "named by the file)") if explicit else None


def _holds_metric_values(path: Path, head: bytes, whole_file: bool) -> bool:
    # imported here, as the readers are: it imports Source from this module
    from curvedoc.readers.series import holds_metric_values

    return holds_metric_values(path, head, whole_file)


def _is_text(head: bytes, whole_file: bool) -> bool:
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # the peek may end inside a character; anything else undecodable is a binary file (a pickle, a checkpoint)
        return not whole_file and exc.reason == "unexpected end of data"
    return True


def _header_cells(head: bytes, delimiter: str | None = None) -> list[str]:
    """The complete cells of a table's first line (a header longer than the peek loses its cut last cell), split at
    ``delimiter``, else at the one the line holds most of."""
    first, newline, _ = head.partition(b"\n")
    line = first.decode("utf-8", errors="replace").rstrip("\r")
    delimiter = delimiter or sniff_delimiter(line)
    try:
        cells = line.split() if delimiter == WHITESPACE else next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return []
    return cells if newline else cells[:-1]


def sniff_delimiter(header: str) -> str:
    counts = {delimiter: header.count(delimiter) for delimiter in (",", "\t", ";", "|")}
    best = max(counts, key=counts.get)
    return best if counts[best] else WHITESPACE


def _looks_like_json_lines(head: bytes, path: Path) -> bool:
    """Two lines that each open a JSON object. A record longer than the peek (DETR's ``log.txt`` writes 4 KiB a line,
    its COCO metrics among them) leaves one line in it: the file's first records are then read whole."""
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    if len(lines) >= 2:
        return all(line.startswith(b"{") for line in lines[:2])
    return bool(lines) and lines[0].startswith(b"{") and _opens_with_json_records(path)


def _opens_with_json_records(path: Path) -> bool:
    """The file's first two lines, read whole, are each one JSON object (a minified history is a single line, and
    the dicts a script prints with ``print(logs)`` are Python's, in single quotes)."""
    try:
        with open(path, "rb") as handle:
            records = [line for line in (handle.readline(LONGEST_JSON_LINE) for _ in range(JSON_LINES_PEEKED))
                       if line.strip()][:2]
    except OSError:
        return False
    return len(records) == 2 and all(_is_json_object(record) for record in records)


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:  # a cut record (longer than LONGEST_JSON_LINE), or no JSON at all
        return False


def _looks_like_table(head: bytes) -> bool:
    """A .log/.txt that is really a table (Keras CSVLogger's ``training.log``, a ``step loss`` column dump, Torch's
    optim.Logger ``test.log``: names such as ``% mean class accuracy (test set)``, every line ended by its
    delimiter): a header of names, then numbers. The header may be a comment (``np.savetxt(…, header="epoch
    loss")`` writes ``# epoch loss``), or missing: rows of numbers alone, which the table reader names by the file."""
    lines = [line for line in head.splitlines() if line.strip()]  # "\r\r" line ends (a doubled CR) split twice
    if len(lines) < 2:
        return False
    for delimiter in (b",", b"\t", b";", None):
        header = _cells_before_line_end(lines[0].removeprefix(b"#"), delimiter)
        first = _cells_before_line_end(lines[1], delimiter)
        # one column is a table only when its writer ends every line with the delimiter
        one_column = delimiter is not None and lines[0].rstrip(b"\r").endswith(delimiter)
        # a row cell naming what follows it ("epoch: 0", "loss= 0.3") makes a line of key/value pairs, no table row
        names_a_value = any(cell.strip().endswith((b":", b"=")) for cell in first)
        if (len(header) == len(first) and (len(header) >= 2 or one_column) and any(map(_is_number, first))
                and not names_a_value):
            return (all(map(_names_a_column, header)) or all(map(_is_number, header + first)))
    return False


def _names_a_column(cell: bytes) -> bool:
    """A header cell: a name, which may open with a digit (``2d_loss``, ``3d_loss``) but is no number itself."""
    return (re.fullmatch(rb"\s*%?\s*[A-Za-z_0-9][\w./ \-@()%]*\s*", cell) is not None
            and re.search(rb"[A-Za-z_]", cell) is not None and not _is_number(cell))


def _opens_with_a_log_line(head: bytes) -> bool:
    """A .csv whose first line is no header but a printed line of values, a number in each of its cells beside the
    words that name it (``Epoch:0, mask loss is 0.1366``: a script's print() saved under a table's name): captured
    output, for the text reader. A header's names may hold digits (``top1_acc``), never a number of their own."""
    first = next((line for line in head.splitlines() if line.strip()), b"")
    cells = [cell for cell in _cells_before_line_end(first, b",") if cell.strip()]
    # the words are outside the numbers: the e of 4.94e-08 names nothing
    return bool(cells) and all(re.search(rb"[A-Za-z]", LOG_LINE_NUMBER.sub(b"", cell)) and LOG_LINE_NUMBER.search(cell)
                               for cell in cells)


def _cells_before_line_end(line: bytes, delimiter: bytes | None) -> list[bytes]:
    """A line's cells, without the empty one after a delimiter that ends the line (a writer that puts one after
    every value)."""
    cells = line.rstrip(b"\r").split(delimiter)
    return cells[:-1] if delimiter is not None and len(cells) > 1 and not cells[-1].strip() else cells


def _is_number(cell: bytes) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _folder_key(folder) -> tuple[int, int] | None:
    try:
        info = os.stat(folder)
    except OSError:
        return None  # a folder that does not exist yet holds nothing to skip
    return info.st_dev, info.st_ino


def _walk(root: Path, found: Discovery, excluded: set[tuple[int, int]]) -> None:
    visited: set[tuple[int, int]] = set()
    event_files: dict[Path, list[tuple[str | None, Path]]] = {}
    claimed_runs: set[str] = set()

    def visit(folder: Path) -> None:
        try:
            info = folder.stat()
        except OSError as exc:
            found.problems.append(f"{folder}: {describe_os_error(exc)}")
            return
        key = (info.st_dev, info.st_ino)
        if key in excluded:
            return
        if key in visited:
            # A link back to an ancestor is a loop worth telling; a second name for a run (W&B's latest-run) is not.
            target = os.path.realpath(folder)
            if folder.is_symlink() and os.path.commonpath([os.path.realpath(folder.parent), target]) == target:
                found.problems.append(f"{folder}: symlink loop (points back to {target}); not followed")
            return
        visited.add(key)
        try:
            # Real folders before symlinks, so a run is known by its own name rather than by an alias.
            entries = sorted(os.scandir(folder), key=lambda entry: (entry.is_symlink(), entry.name))
        except OSError as exc:
            found.problems.append(f"{folder}: {describe_os_error(exc)}")
            return
        names = {entry.name for entry in entries}
        run_family = _run_folder_family(folder, names)
        folder_split: tuple[str | None] | None = None  # decided at the folder's first event file
        if run_family:
            real = os.path.realpath(folder)
            if real not in claimed_runs:
                claimed_runs.add(real)
                found.sources.append(Source(run_family, folder))
            if run_family in ("wandb", "dvclive"):
                return  # the folder's files are the run's, read together
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name in SKIPPED_FOLDERS or (entry.name.startswith(".") and entry.name != "."):
                    continue
                if run_family == "mlflow" and entry.name in {"metrics", "params", "tags"}:
                    continue
                if run_family == "mlflow" and entry.name == "artifacts" and _logs_metrics(folder):
                    continue  # the run's own outputs (Ultralytics copies its results.csv there): not another run
                visit(path)
                continue
            if "-checkpoint." in entry.name:
                continue  # a Jupyter autosave copy of a file read on its own
            try:
                # the listing's file type costs no system call; a symlink is still checked by classify_file
                regular = entry.is_file(follow_symlinks=False)
            except OSError:
                regular = False
            source = classify_file(path, regular=regular)
            if source is None:
                continue
            if isinstance(source, str):
                found.problems.append(f"{path}: {source}")
            elif source.family == "tensorboard":
                if folder_split is None:
                    folder_split = (split_folder_name(folder, path),)
                split = folder_split[0]
                # a split folder read on its own (the user named it) stays the run, its split still known
                nested = folder != root and (split is not None or ADD_HPARAMS_FOLDER.match(folder.name))
                run_folder = folder.parent if nested else folder
                event_files.setdefault(run_folder, []).append((split, path))
            else:
                found.sources.append(source)

    visit(root)
    _add_scalars_children_to_their_run(event_files, root)
    for run_folder, files in event_files.items():
        ordered = sorted(files, key=lambda item: (item[0] or "", item[1].name))
        found.sources.append(Source("tensorboard", run_folder, tuple(ordered)))
    found.sources = _without_superseded_checkpoints(found.sources)
    found.sources = _wandb_exports_by_folder(found.sources)
    found.sources = _metric_files_by_folder(found.sources)
    found.sources = _split_files_as_runs(found.sources)
    found.sources = _without_logger_copies(found.sources)
    found.sources = _without_printed_copies_of_loss_history(found.sources)
    found.sources = _without_event_copies_of_tables(found.sources)
    found.sources.sort(key=lambda source: (str(source.path), source.family))


def _add_scalars_children_to_their_run(event_files: dict[Path, list[tuple[str | None, Path]]], root: Path) -> None:
    """PyTorch's ``SummaryWriter.add_scalars("Loss", {"train": …, "val": …})`` writes each series to a subfolder
    of the run named ``Loss_train``, ``Loss_val``, under the one tag ``Loss``: the subfolders are the run's, not runs
    of their own. They are known by their event files' names: written by the process that wrote the run's own file
    (PyTorch names a file by its host and process id), in a folder named ``<tag>_<key>``. Each is read as a split of
    the run named after its folder, so its ``Loss`` is ``Loss_train/Loss``."""
    for folder in [folder for folder in event_files if folder != root and "_" in folder.name]:
        parent_writers = {_writer(path) for split, path in event_files.get(folder.parent, ()) if split is None}
        files = event_files[folder]
        if parent_writers - {None} and all(split is None and _writer(path) in parent_writers for split, path in files):
            event_files[folder.parent] += [(folder.name, path) for _, path in files]
            del event_files[folder]


def _writer(event_file: Path) -> tuple[str, str] | None:
    """The host and process id a PyTorch event file's name holds (``events.out.tfevents.<time>.<host>.<pid>.<n>``,
    the host possibly dotted), or None for a name without them (tensorboardX's, TF's ``….v2``)."""
    fields = event_file.name.split(".")
    if len(fields) < 7 or not (fields[-1].isdigit() and fields[-2].isdigit()):
        return None
    return ".".join(fields[4:-2]), fields[-2]


def split_folder_name(folder: Path, event_file: Path) -> str | None:
    """The split ``folder`` holds when it is one split folder of a run (see HELD_OUT_SPLIT_FOLDER), else None."""
    name = folder.name
    if HELD_OUT_SPLIT_FOLDER.match(name):
        return name
    if name == TRAIN_SPLIT_FOLDER and (
        event_file.name.endswith(TF2_EVENT_FILE_SUFFIX)
        or any((folder.parent / sibling).is_dir() for sibling in ("validation", "eval"))
    ):
        return name
    return None


CHECKPOINT_FOLDER = re.compile(r"checkpoint-(\d+)$")
# the Baselines / Stable-Baselines3 logger's table file, and the text copy of its rows it writes beside it
PROGRESS_TABLE, LOGGER_COPY = "progress.csv", "log.txt"
OPENMMLAB_RECORDS = ".log.json"  # the records OpenMMLab's TextLoggerHook prints to the {timestamp}.log beside them
MMENGINE_SCALARS, MMENGINE_COPY = "scalars.json", re.compile(r"\d{8}_\d{6}\.json")
TUNE_RESULTS, TUNE_PARAMS = "result.json", "params.json"  # a Ray Tune trial's records, and its config beside them
# a Sacred run's folder (FileStorageObserver): its metrics, its status, and its captured stdout
SACRED_METRICS, SACRED_RUN, SACRED_OUTPUT = "metrics.json", "run.json", "cout.txt"


def _without_superseded_checkpoints(sources: list[Source]) -> list[Source]:
    """One Hugging Face run, not one per checkpoint, nor a second one from its TensorBoard log.

    The Trainer saves ``checkpoint-N/trainer_state.json`` holding the whole history up to step N, and the final
    ``trainer_state.json`` in the output folder; each is a prefix of the next. Keep the output folder's state, or
    failing that (a crashed run) the latest checkpoint's. Its ``runs/`` TensorBoard log beside them holds the
    same history again.
    """
    by_output: dict[Path, list[tuple[int, Source]]] = {}
    for source in sources:
        if source.family != "hf":
            continue
        match = CHECKPOINT_FOLDER.match(source.path.parent.name)
        if match:
            by_output.setdefault(source.path.parent.parent, []).append((int(match.group(1)), source))
    superseded = set()
    for output, checkpoints in by_output.items():
        final_state = any(s.family == "hf" and s.path.parent == output for s in sources)
        newest = max(checkpoints, key=lambda item: item[0])[1]
        superseded.update(s for _, s in checkpoints if final_state or s is not newest)
    # The Trainer's TensorBoard callback logs the same history under <output>/runs/<date>_<host>/: one training,
    # already read from its state (the runs/ log adds only a one-point summary of train_loss)
    outputs = {s.path.parent for s in sources if s.family == "hf"} | set(by_output)
    superseded.update(s for s in sources if s.family == "tensorboard" and s.path.parent.name == "runs"
                      and s.path.parent.parent in outputs)
    return [source for source in sources if source not in superseded]


def _without_event_copies_of_tables(sources: list[Source]) -> list[Source]:
    """One run from a folder where two loggers wrote the same training: YOLOv5 and Ultralytics write
    ``results.csv`` (up to YOLOv5 v5.0, ``results.txt``) and, with TensorBoard on (YOLOv5's default), the same metrics
    to an event file beside it;
    Lightning's CSVLogger and TensorBoardLogger share ``lightning_logs/version_N/`` when both are given one save
    directory; a Ray Tune trial writes each result to ``result.json`` and to an event file. The table or records
    are kept, which their format's reader knows more of (Ultralytics' columns, Lightning's hparams.yaml, Tune's
    config); event files in split subfolders (Keras' train/ and validation/) are another layout, kept."""
    tables = {source.path.parent for source in sources
              if (source.family == "csv" and source.path.name in COPIED_BY_EVENT_FILES)
              or (source.family == "text" and source.path.name == YOLO_RESULTS_TEXT
                  and _yolo_results_text(source.path))
              or _tune_results(source)}
    return [source for source in sources
            if not (source.family == "tensorboard" and source.path in tables
                    and all(path.parent == source.path for _, path in source.files))]


def _tune_results(source: Source) -> bool:
    """Whether ``source`` is a Ray Tune trial's records: ``result.json`` read as JSON Lines, the trial's
    ``params.json`` beside it."""
    return (source.family == "jsonl" and source.path.name == TUNE_RESULTS
            and (source.path.parent / TUNE_PARAMS).is_file())


def _yolo_results_text(path: Path) -> bool:
    """Whether ``path`` is the results.txt YOLOv5 (to v5.0) and YOLOv3 write: its first line is one of its rows."""
    # imported here, as the readers are: the text reader imports Source from this module
    from curvedoc.readers.textlog import yolo_results_row

    first = _head(path).split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return yolo_results_row(first) is not None


def _head(path: Path) -> bytes:
    """The first PEEK_BYTES of a file discovery has classified already, to tell two of a folder's logs apart;
    nothing when it cannot be read now."""
    try:
        with open(path, "rb") as handle:
            return handle.read(PEEK_BYTES)
    except OSError:
        return b""


def _without_logger_copies(sources: list[Source]) -> list[Source]:
    """One run from the OpenAI Baselines and Stable-Baselines3 logger, not two: with its "log" and "csv" outputs
    both on (Baselines' default) it prints each table to ``log.txt`` as it writes the row to ``progress.csv``
    beside it. Nor two from OpenMMLab's TextLoggerHook, which prints each record to ``{timestamp}.log`` as it
    writes it, unrounded, to ``{timestamp}.log.json`` beside it: the JSON is kept; nor from MMEngine's, whose
    records go to ``vis_data/scalars.json`` and again to ``vis_data/{timestamp}.json``: scalars.json is kept. Nor
    two from a Ray Tune trial, whose every result goes to ``result.json`` (beside the trial's ``params.json``) and
    to ``progress.csv``: result.json, the records as reported, is kept (its event file is a copy as a table's is,
    see _without_event_copies_of_tables). Nor two from a Sacred run,
    whose metrics.json holds what it logged and ``cout.txt`` (beside its ``run.json``) what it printed: the metrics
    are kept."""
    tables = {source.path.parent for source in sources if source.path.name == PROGRESS_TABLE}
    records = {source.path for source in sources if source.path.name.endswith(OPENMMLAB_RECORDS)}
    scalars = {source.path.parent for source in sources if source.path.name == MMENGINE_SCALARS}
    trials = {source.path.parent for source in sources if _tune_results(source)}
    sacred = {source.path.parent for source in sources if source.path.name == SACRED_METRICS
              and source.family == "history" and (source.path.parent / SACRED_RUN).is_file()}

    def written_again(source: Source) -> bool:
        name, folder = source.path.name, source.path.parent
        if folder in scalars and MMENGINE_COPY.fullmatch(name):
            return True
        if (folder in trials and name == PROGRESS_TABLE) or (folder in sacred and name == SACRED_OUTPUT):
            return True
        return source.family == "text" and (name == LOGGER_COPY and folder in tables
                                            or source.path.with_name(name + ".json") in records)

    return [source for source in sources if not written_again(source)]


def _without_printed_copies_of_loss_history(sources: list[Source]) -> list[Source]:
    """One run from a DeepXDE folder holding both its ``loss.dat`` and the captured stdout of the training, whose
    table prints the same rows rounded to three digits: the loss history is kept."""
    histories = {source.path.parent for source in sources if source.family == "deepxde"}
    return [source for source in sources
            if not (source.family == "text" and source.path.parent in histories and _prints_deepxde_table(source.path))]


def _prints_deepxde_table(path: Path) -> bool:
    return DEEPXDE_TABLE_HEADER.search(_head(path)) is not None


def _wandb_exports_by_folder(sources: list[Source]) -> list[Source]:
    """The W&B panel exports of one folder as one source: the UI exports a CSV per panel, so one run's curves are
    spread over the folder's files, and the reader joins them by run name."""
    return _by_folder(sources, "wandb-export")


def _metric_files_by_folder(sources: list[Source]) -> list[Source]:
    """A folder's files of one metric each (``train_loss.txt`` beside ``val_loss.txt``) as one run's source."""
    return _by_folder(sources, "metric-files")


def _by_folder(sources: list[Source], family: str) -> list[Source]:
    """The sources of ``family`` in one folder as one source of all their files, in the order of their names."""
    by_folder: dict[Path, list[Source]] = {}
    for source in sources:
        if source.family == family:
            by_folder.setdefault(source.path.parent, []).append(source)
    grouped = {id(source) for files in by_folder.values() if len(files) > 1 for source in files}
    kept = [source for source in sources if id(source) not in grouped]
    for folder, members in by_folder.items():
        if len(members) > 1:
            files = tuple(sorted((file for source in members for file in source.files), key=lambda item: item[1].name))
            kept.append(Source(family, folder, files))
    return kept


def split_file_name(name: str) -> tuple[str, str] | None:
    """The split word a table's file name holds and the name without it, lower-cased (the key its run's other split
    files share), when it holds exactly one: ``train_val_split.csv`` names no one split."""
    stem, suffix = os.path.splitext(name)
    # a table saved under a captured-output name too (train_loss.txt holding "Epoch,Train Loss" rows)
    words = list(SPLIT_FILE_WORD.finditer(stem)) if suffix.lower() in TABLE_SUFFIXES | TEXT_LOG_SUFFIXES else []
    if len(words) != 1:
        return None
    word = words[0]
    return word.group(), f"{stem[:word.start()]}\0{stem[word.end():]}{suffix}".lower()


def split_files_run(members: list[tuple[str, Path]], explicit: bool = False) -> Source | None:
    """The source that reads the sibling tables ``members`` (each with the split word of its name) as one run, when
    they are one run's splits: each split once, and headers alike (the same columns, or some of them: a test file
    without the loss) that name no split themselves, or None."""
    splits = [SPLIT_FILE_WORDS[word.lower()] for word, _ in members]
    if len(set(splits)) < len(splits):
        return None  # train_x.csv beside training_x.csv: no telling which is the run's
    headers = [_split_file_columns(path, split) for split, (_, path) in zip(splits, members, strict=True)]
    if any(header is None for header in headers):
        return None
    widest = max(headers, key=len)
    if not all(header <= widest for header in headers):
        return None
    files = tuple(member for _, member in sorted(zip(splits, members, strict=True),
                                                 key=lambda item: SPLIT_ORDER.index(item[0])))
    return Source("csv", files[0][1], files, explicit)


def _split_file_columns(path: Path, split: str) -> set[str] | None:
    """The columns of a table that can be the ``split`` of a run, without the words naming that split (``Val
    Loss`` in val_loss.txt beside ``Train Loss`` in train_loss.txt: one loss), or None: one whose header names
    another split holds the run's splits already, and one naming neither a metric nor a step is no log (a data set's
    train.csv and test.csv)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(PEEK_BYTES).removeprefix(codecs.BOM_UTF8)
    except OSError:
        return None
    columns = [cell.strip() for cell in _header_cells(head)]
    if any(column.lower() in SPLIT_COLUMNS or any(SPLIT_FILE_WORDS.get(word, split) != split
                                                  for word in tokens(column)) for column in columns):
        return None
    if find_step_column(columns) is None and all(infer_role(column) is Role.OTHER for column in columns):
        return None
    return {" ".join(word for word in tokens(column) if word not in SPLIT_FILE_WORDS) for column in columns}


def _split_files_as_runs(sources: list[Source]) -> list[Source]:
    """The tables of a folder that are one run's splits (see SPLIT_FILE_WORDS) as one source, read as one run."""
    by_name: dict[tuple[Path, str], list[tuple[str, Path]]] = {}
    for source in sources:
        named = split_file_name(source.path.name) if source.family == "csv" else None
        if named:
            by_name.setdefault((source.path.parent, named[1]), []).append((named[0], source.path))
    joined = [run for members in by_name.values() if len(members) > 1 and (run := split_files_run(members))]
    merged = {path for run in joined for _, path in run.files}
    return [source for source in sources if source.family != "csv" or source.path not in merged] + joined


def _with_split_siblings(source: Source) -> Source:
    """A table named on its own together with its run's other split files beside it, as a folder's walk reads them:
    the user named the run's log and expects its validation curve with it, whichever split's file was named."""
    named = split_file_name(source.path.name) if source.family == "csv" else None
    if named is None:
        return source
    folder = source.path.parent
    try:
        names = os.listdir(folder)
    except OSError:
        return source
    members = [(named[0], source.path)]
    for name in names:
        sibling = split_file_name(name) if name != source.path.name else None
        if sibling and sibling[1] == named[1]:
            found = classify_file(folder / name)
            if isinstance(found, Source) and found.family == "csv":
                members.append((sibling[0], found.path))
    return (len(members) > 1 and split_files_run(members, explicit=True)) or source


def _logs_metrics(mlflow_run: Path) -> bool:
    """Whether an MLflow run folder holds logged metrics (its curves are the run's, whatever its artifacts copy)."""
    try:
        with os.scandir(mlflow_run / "metrics") as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def _run_folder_family(folder: Path, names: set[str]) -> str | None:
    """A folder that is a run as a whole (its files only make sense together)."""
    if "meta.yaml" in names and "metrics" in names:
        return "mlflow"
    if (
        any(name.endswith(".wandb") for name in names)
        or "wandb-history.jsonl" in names
        or ("files" in names and (folder / "files" / "wandb-history.jsonl").exists())
        or (folder.name.startswith(("run-", "offline-run-")) and (folder / "files" / "config.yaml").exists())
    ):
        return "wandb"
    # DVCLive's output: plots/metrics/ beside the summary, the parameters or the pipeline stage it writes
    if ("plots" in names and not names.isdisjoint({"metrics.json", "params.yaml", "dvc.yaml"})
            and folder.joinpath(*DVCLIVE_METRICS).is_dir()):
        return "dvclive"
    return None
