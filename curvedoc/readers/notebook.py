"""Jupyter notebooks (``.ipynb``): what the cells printed while they trained, read as captured output.

Much training is done in a notebook (Colab, Kaggle), and the notebook saved with its outputs is then the only log:
Keras's progress lines, a loop's prints, tqdm bars and the Hugging Face Trainer's progress table sit in the cells'
outputs. Those outputs, in the order of the cells, are read as the text reader reads captured output (see
:mod:`curvedoc.readers.textlog`), each output on lines of its own:

- a stream (stdout, stderr) as printed;
- a displayed table (``text/html``: the Trainer's ``Epoch | Training Loss | Validation Loss | Accuracy`` table,
  redrawn as training goes and saved as last drawn; a pandas frame of a history) as its rows, each a line of its
  cells named by the header's (``Epoch: 2, Training Loss: 0.2501, Validation Loss: 0.3012, Accuracy: 0.82``);
- any other result as its plain-text form (``TrainOutput(global_step=500, training_loss=0.31, …)``);
- images and error tracebacks are no log.

A notebook whose outputs hold no training log (analysis, plots, a notebook saved without outputs) raises
:class:`~curvedoc.errors.NotALog`, which a folder's walk passes over quietly.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

from curvedoc.errors import CurvedocError, NotALog
from curvedoc.model import Run
from curvedoc.readers import Source, textlog
from curvedoc.readers.text import read_text

FORMAT = "notebook"
TABLE = re.compile(r"<table\b.{0,20000000}?</table>", re.IGNORECASE | re.DOTALL)
ROW = re.compile(r"<tr\b[^>]{0,2000}>(.*?)</tr>", re.IGNORECASE | re.DOTALL)
CELL = re.compile(r"<t[hd]\b[^>]{0,2000}>(.*?)</t[hd]>", re.IGNORECASE | re.DOTALL)
TAG = re.compile(r"<[^>]{0,2000}>")
WHITESPACE = re.compile(r"\s+")


def read(source: Source) -> list[Run]:
    path = source.files[0][1] if source.files else source.path
    document, decoding_problem = _notebook(path)
    printed = "\n".join(_outputs(document))
    if not printed.strip():
        raise NotALog(path, "a notebook whose cells hold no printed output")
    runs = textlog.read(source, content=printed.encode("utf-8"), fmt=FORMAT)
    if decoding_problem:
        for run in runs:
            run.warnings.append(decoding_problem)
    return runs


def _notebook(path) -> tuple[Any, str | None]:
    """The notebook's JSON document. Not read through ``text.read_json``: its depth check counts the brackets inside
    strings too, and a notebook's code and outputs are full of them (a Keras bar's ``[=====>....]``); the parser's
    own recursion limit guards against a document nested too deep."""
    text, decoding_problem = read_text(path)
    try:
        return json.loads(text), decoding_problem
    except RecursionError:
        raise CurvedocError(path, "JSON nested too deep to read as a notebook") from None
    except ValueError as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise CurvedocError(path, f"not valid JSON{where} (cut off or corrupted?)") from None


def _outputs(document: Any) -> Iterator[str]:
    """The text of each output of the notebook's code cells, in order (see the module's description)."""
    if not isinstance(document, dict):
        return
    cells = document.get("cells")
    if cells is None:  # nbformat 3 kept its cells in worksheets
        worksheets = document.get("worksheets")
        cells = worksheets[0].get("cells") if isinstance(worksheets, list) and worksheets and isinstance(
            worksheets[0], dict) else None
    for cell in cells if isinstance(cells, list) else ():
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else ():
            if isinstance(output, dict) and (text := _output_text(output)):
                yield text


def _output_text(output: dict) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text"))
    if kind not in ("execute_result", "display_data", "pyout"):
        return ""  # an error's traceback, or an output of a kind no notebook writes
    data = output.get("data") if isinstance(output.get("data"), dict) else output  # nbformat 3: no "data"
    shown = _joined(data.get("text/html", data.get("html")))
    if "<table" in shown.lower():
        return "\n".join(_table_lines(shown))
    return _joined(data.get("text/plain", data.get("text")))


def _joined(text: Any) -> str:
    """A notebook's text, saved as one string or as a list of lines."""
    if isinstance(text, list):
        return "".join(part for part in text if isinstance(part, str))
    return text if isinstance(text, str) else ""


def _table_lines(shown: str) -> Iterator[str]:
    """Each row under the header of each HTML table in ``shown``, its cells named by the header's: ``name: value``
    pairs, as a script prints them (a cell without a name or a value, pandas' index or the Trainer's "No log",
    left out)."""
    for table in TABLE.finditer(shown):
        header = None
        for row in ROW.finditer(table.group()):
            cells = [WHITESPACE.sub(" ", html.unescape(TAG.sub("", cell))).strip() for cell in CELL.findall(row[1])]
            if header is None:
                header = cells
            elif pairs := [f"{name}: {cell}" for name, cell in zip(header, cells, strict=False) if name and cell]:
                yield ", ".join(pairs)
