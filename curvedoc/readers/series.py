"""One metric per file: a text file of nothing but numbers whose name says what they measure, the way a training
script saves a curve it kept in a Python list (``np.savetxt("train_loss.txt", losses)``: one number a line;
``f.write(str(val_accs))``: the list on one line), or a NumPy array saved whole (``np.save("train_loss.npy",
losses)``; one row of numbers an epoch, per-class scores, gives the row's mean). The file's name is the curve's
(``train_loss``, ``val_acc``); a ``.csv`` of nothing but numbers, one a line (``np.savetxt("losses_train.csv",
losses)``), is one too. The files of one folder are the curves of one run, named after the folder, as the
files of a W&B run folder are. The values have no step beside them: each sits at its place in the file (0, 1, 2 …),
as an epoch's or an evaluation's would, and the run says so in a warning; unless each line names its epoch or step
before the value (``f.write(f"epoch {epoch}:{loss}\n")``), which places it. Files of different lengths were written
at different intervals from the run's start to its end (a train loss every 50 iterations, a test loss every 5,000):
each is spread over the longest one's places, with a warning.

A line or item that is no number is skipped with a warning; a file cut off mid-number loses that number only.
"""

from __future__ import annotations

import io
import itertools
import re
import warnings
from pathlib import Path

import numpy as np

from curvedoc.errors import CurvedocError, describe_os_error
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import Source
from curvedoc.readers.records import as_value
from curvedoc.readers.text import encoding_of, read_bytes
from curvedoc.roles import tokens

FORMAT = "metric-files"
# a list printed by Python or numpy: "[2.3, 1.9, …]", "[2.3 1.9 …]", np.float64(2.3) and tensor(2.3) around a value
WRAPPED = re.compile(r"(?:np\.float\d\d|numpy\.float\d\d|tensor|float)\(([^()]{1,64})\)")
MIN_VALUES = 3
GLUED_LISTS = re.compile(r"\][ \t]*\[")
# a line that names its epoch or step, then the value the file is named after: "epoch 3:0.52", "step 100, 0.52";
# or the count alone before a colon ("3: 0.52"): a bare pair of numbers without it is two columns of a table
COUNTED_LINE = re.compile(r"\s*(?:(?:epoch|step|iter|iteration|episode)\s{0,3}[#:=]?\s{0,3}(?P<n>\d{1,12})\s{0,3}"
                          r"[:=,;\s]|(?P<bare>\d{1,12})\s{0,3}:)\s{0,3}(?P<value>[^\s,;:=]+)\s*", re.IGNORECASE)
# f.write(f"{loss},\n"): a delimiter after each line's number, with nothing after it
LINE_END_DELIMITER = re.compile(r"[,;][ \t]*$", re.MULTILINE)


def read(source: Source) -> list[Run]:
    folder = source.path if source.path.is_dir() else source.path.parent
    several = len(source.files) > 1
    name = folder.name if several else source.path.name
    builder = RunBuilder(source.path, FORMAT, name=name)
    placed = False
    curves = []
    for _, path in source.files:
        steps, values, skipped = array_values(builder, path) if path.suffix.lower() == ".npy" else file_values(path)
        builder.add_file(path)
        if skipped:
            builder.warn(f"{path}: {skipped} item(s) that are no number skipped")
        if len(values):
            placed |= steps is None
            curves.append((path.stem, steps, values))
    curves, stretched_over = _placed(curves)
    for tag, steps, values in _unfilled_cut(builder, source.path, curves):
        builder.add(tag, steps, values)
    if not builder.has_points:
        raise CurvedocError(source.path, "a file of numbers with nothing to read")
    if stretched_over:
        builder.warn(f"{source.path}: files of different lengths with no step beside their values: each is spread "
                     f"over the run's {stretched_over} places, as files written from its start to its end")
    elif placed:
        builder.warn(f"{source.path}: no step beside the values; each is at its place in its file (0, 1, 2 …)")
    return [builder.build()]


def _placed(curves: list) -> tuple[list, int]:
    """The curves with a step for each value that names none: its place in its file, stretched over the longest such
    file's places when their lengths differ (and that length, or 0 when nothing was stretched). A script that saves
    a train loss every 50 iterations and a test loss every 5,000 writes both from the run's start to its end: at
    their bare places the test curve would cover the first hundredth of the run, and be compared with the train
    loss there."""
    longest = max((len(values) for _, steps, values in curves if steps is None), default=0)
    stretched = False
    placed = []
    for tag, steps, values in curves:
        if steps is None:
            steps = np.arange(len(values))
            if 1 < len(values) < longest:
                steps = np.rint(steps * ((longest - 1) / (len(values) - 1))).astype(np.int64)
                stretched = True
        placed.append((tag, steps, values))
    return placed, longest if stretched else 0


def _unfilled_cut(builder: RunBuilder, where: Path, curves: list) -> list:
    """The curves of several files of one length without the values from where every one of them is exactly 0 to the
    end: arrays allocated for the planned epochs (np.zeros(epochs)) that the training never filled, since no two
    measurements hit exactly 0 at the same epoch and stay there."""
    lengths = {len(values) for _, _, values in curves}
    if len(curves) < 2 or len(lengths) != 1:
        return curves
    filled = max((int(np.flatnonzero(values != 0)[-1]) + 1 if np.any(values != 0) else 0) for _, _, values in curves)
    if not 0 < filled < lengths.pop():
        return curves
    builder.warn(f"{where}: every file's values are exactly 0 from its value {filled} on: arrays allocated for more "
                 f"epochs than were run; the first {filled} kept")
    return [(tag, steps[:filled], values[:filled]) for tag, steps, values in curves]


def named_for_a_metric(path: Path) -> bool:
    """Whether a file's name says what its numbers measure (``train_loss.txt``, ``meanIU.npy``)."""
    # imported here, as the readers are: the text reader imports this package
    from curvedoc.readers.textlog import names_a_metric

    return names_a_metric("_".join(tokens(path.stem)))


def numpy_dtype(head: bytes) -> np.dtype | None:
    """The element type a .npy file's header (its first bytes) declares, or None when it declares none."""
    try:
        return read_numpy_header(io.BytesIO(head))
    except (ValueError, OSError, EOFError, SyntaxError, TypeError):
        return None


def read_numpy_header(stream: io.BytesIO) -> np.dtype:
    """The element type a .npy file's header declares, the stream left at the array's first byte."""
    version = np.lib.format.read_magic(stream)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    return read_header(stream)[2]


def array_values(builder: RunBuilder, path: Path) -> tuple[None, np.ndarray, int]:
    """The numbers of a .npy file, each at its place; a table of them (one row an epoch: a score per class) as each
    row's mean, with a warning. Never unpickled: an array of objects is an error."""
    try:
        with open(path, "rb") as handle:
            array = np.load(handle, allow_pickle=False)
    except OSError as exc:
        raise CurvedocError(path, describe_os_error(exc)) from None
    except (ValueError, EOFError) as exc:
        raise CurvedocError(path, f"not a readable NumPy array of numbers ({exc})") from None
    if array.dtype.kind not in "biuf" or array.ndim not in (1, 2) or not array.size:
        raise CurvedocError(path, f"a NumPy array of {array.dtype} with shape {array.shape}, not a metric's values")
    values = array.astype(np.float64)
    if values.ndim == 2:
        builder.warn(f"{path}: {values.shape[1]} values a row (one a class?): each row's mean is the curve")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row of NaN only (no class present) stays NaN
            values = np.nanmean(values, axis=1)
    return None, values, 0


def file_values(path: Path) -> tuple[np.ndarray | None, np.ndarray, int]:
    """The steps its lines name (None: none, each value sits at its place), the numbers a metric file holds, in
    order, and how many items were no number. Lists printed one after another on one line
    (``f.write(str(val_losses)); f.write(str(val_accs))``) are several variables, which the one name of the file
    cannot tell apart: refused (a list a line is one list written again each epoch)."""
    data = read_bytes(path)
    encoding, _ = encoding_of(data, path)
    text = _without_line_end_delimiters(data.decode(encoding, errors="replace"))
    if counted := _counted(text):
        kept = [(step, value) for step, item in counted if (value := as_value(item)) is not None]
        return (np.array([step for step, _ in kept], dtype=np.int64),
                np.array([value for _, value in kept], dtype=np.float64), len(counted) - len(kept))
    glued = len(GLUED_LISTS.findall(text))
    if glued:
        raise CurvedocError(path, f"{glued + 1} lists printed one after another: the file's one name does not say "
                                  "which metric each holds")
    items = _items(text)
    numbers = [value for item in items if (value := as_value(item)) is not None]
    return None, np.array(numbers, dtype=np.float64), len(items) - len(numbers)


def _counted(text: str) -> list[tuple[int, str]]:
    """Each line's step and value when every line names its epoch or step before its value ([] otherwise)."""
    lines = [line for line in text.splitlines() if line.strip()]
    matches = [COUNTED_LINE.fullmatch(line) for line in lines]
    if not lines or not all(matches):
        return []
    counted = [(int(match["n"] or match["bare"]), match["value"]) for match in matches]
    # a count that names no counter must count up, as a step does, to be one
    if matches[0]["bare"] and any(later <= earlier for (earlier, _), (later, _) in itertools.pairwise(counted)):
        return []
    return counted


def _without_line_end_delimiters(text: str) -> str:
    """The text without the delimiter every line ends with (``f.write(f"{loss},\n")``; the last line of a file
    read only in part may have been cut before it): one number a line as much as without it. A CSV reader takes
    the first line for a header of numbers and the delimiter for a second, empty column."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or not all(LINE_END_DELIMITER.search(line) for line in lines[:-1]):
        return text
    return LINE_END_DELIMITER.sub("", text)


def _items(text: str) -> list[str]:
    """The items of a metric file's text, a printed list's or one a line, the wrappers around them taken off (lists
    glued one after another too, so that the file is known as a metric file, which ``file_values`` then refuses)."""
    text = GLUED_LISTS.sub(", ", WRAPPED.sub(r"\1", text)).strip()
    items = re.split(r"[,\s]+", text.strip("[]() \n")) if text.startswith(("[", "(")) else text.split()
    return [item.strip("[]()") for item in items if item.strip("[]()")]


def holds_metric_values(path: Path, head: bytes, whole_file: bool) -> bool:
    """Whether a text file is one metric's values: a name that says what it measures, then (in the first bytes)
    nothing but numbers, one a line (after the epoch or step it names, or alone) or one list, at least MIN_VALUES
    of them."""
    if not named_for_a_metric(path):
        return False
    text = _without_line_end_delimiters(WRAPPED.sub(r"\1", head.decode("utf-8", errors="replace")).strip())
    if counted := _counted(text if whole_file else text.rpartition("\n")[0]):  # the peek may end inside a line
        return len(counted) >= MIN_VALUES and all(as_value(item) is not None for _, item in counted)
    if not whole_file:
        text = re.split(r"[,\s]+(?=[^,\s]*$)", text)[0]  # the peek may end inside a number
    lines = text.splitlines()
    if not text.startswith(("[", "(")) and len(lines) > 1 and any(len(line.split()) > 1 for line in lines):
        return False  # columns: a table, not one metric; one line of numbers is the list written out bare
    items = _items(text)
    return len(items) >= MIN_VALUES and all(as_value(item) is not None for item in items)
