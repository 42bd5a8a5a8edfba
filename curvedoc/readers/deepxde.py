"""DeepXDE's loss history (``loss.dat``), what ``dde.saveplot(losshistory, train_state, issave=True)`` and
``dde.utils.save_loss_history`` write: ``numpy.savetxt`` of one row per evaluation, under the header
``# step, loss_train, loss_test, metrics_test``: the step, then each term of the train loss (a PDE residual, each
boundary or initial condition, weighted as the loss sums them), each term of the test loss (the same terms on the
test points), then each test metric (an L2 relative error, say); each ``model.train()`` starts with its
starting state, so a row may repeat the one before it (read once). The header names the groups, not how many columns
each has: the train and test losses have one term each per loss, and the metrics whatever is left. Of the splits of
the columns the count allows, the one read is that whose test terms lie nearest their train terms (the same residual
on other points of the same domain): every term next to itself, not to its neighbour.

Curves: ``train_loss`` and ``test_loss`` (the sums, which the optimiser minimised), and with two terms or more
``train_loss_1`` … and ``test_loss_1`` … (the terms in DeepXDE's order, which its own plot numbers so too), and
``test_metric`` (``test_metric_1`` … for several). A row that is not numbers, or has another number of columns, is
skipped with a warning; a cut last line (a run killed while saving) is dropped with one.
"""

from __future__ import annotations

import math

import numpy as np

from curvedoc.errors import CurvedocError
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import DEEPXDE_HEADER, Source, file_run_name
from curvedoc.readers.text import encoding_of, read_bytes

FORMAT = "deepxde"


def read(source: Source) -> list[Run]:
    path = source.path
    data = read_bytes(path)
    encoding, problem = encoding_of(data, path)
    lines = data.decode(encoding, errors="replace").splitlines()
    if not lines or not lines[0].startswith(DEEPXDE_HEADER.decode()):
        raise CurvedocError(path, f"not a DeepXDE loss history (its first line is not {DEEPXDE_HEADER.decode()!r})")
    builder = RunBuilder(path, FORMAT, name=file_run_name(path))
    builder.add_file(path)
    if problem:
        builder.warn(problem)
    rows = _numeric_rows(lines[1:], path, builder, cut=not data.endswith(b"\n"))
    if not rows:
        raise CurvedocError(path, "DeepXDE loss history without a row of numbers")
    table = np.array(rows)
    # each model.train() records its starting state again: after Adam, L-BFGS's first row repeats Adam's last
    repeated = np.r_[False, (table[1:] == table[:-1]).all(axis=1)]
    table = table[~repeated]
    steps = table[:, 0].astype(np.int64)
    terms, metrics = _split_columns(table.shape[1] - 1, table[:, 1:])
    train, test, metric = table[:, 1:1 + terms], table[:, 1 + terms:1 + 2 * terms], table[:, 1 + 2 * terms:]
    builder.add("train_loss", steps, train.sum(axis=1))
    builder.add("test_loss", steps, test.sum(axis=1))
    if terms > 1:
        for index in range(terms):
            builder.add(f"train_loss_{index + 1}", steps, train[:, index])
            builder.add(f"test_loss_{index + 1}", steps, test[:, index])
    for index in range(metrics):
        builder.add("test_metric" if metrics == 1 else f"test_metric_{index + 1}", steps, metric[:, index])
    return [builder.build()]


def _numeric_rows(lines: list[str], path, builder: RunBuilder, cut: bool) -> list[list[float]]:
    """The rows of numbers, all as long as the first; others are skipped with a warning."""
    rows: list[list[float]] = []
    skipped = []
    for number, line in enumerate(lines, start=2):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            row = [float(cell) for cell in line.split()]
        except ValueError:
            skipped.append(number)
            continue
        # a step that is no finite number ("nan 0.1 0.2", a corrupted cell) places no row
        if len(row) < 3 or not math.isfinite(row[0]) or (rows and len(row) != len(rows[0])):
            skipped.append(number)
            continue
        rows.append(row)
    if cut and skipped and skipped[-1] == len(lines) + 1:
        builder.warn(f"{path}: the last line is cut off (the file ends mid-row): dropped")
        skipped.pop()
    if skipped:
        shown = ", ".join(map(str, skipped[:5])) + (" …" if len(skipped) > 5 else "")
        builder.warn(f"{path}: {len(skipped)} line(s) that are not a row of the table skipped (line {shown})")
    return rows


def _split_columns(columns: int, values: np.ndarray) -> tuple[int, int]:
    """How many loss terms and how many metrics ``columns`` value columns hold: of the splits ``2 × terms +
    metrics`` allows, the one whose test terms sit nearest their train terms (the median distance of their
    logarithms), the fewest metrics when two are as near."""
    best, best_distance = (columns // 2, columns % 2), math.inf
    for terms in range(columns // 2, 0, -1):
        train, test = values[:, :terms], values[:, terms:2 * terms]
        with np.errstate(divide="ignore", invalid="ignore"):
            apart = np.abs(np.log10(np.abs(train)) - np.log10(np.abs(test)))
        apart = apart[np.isfinite(apart)]
        distance = float(np.median(apart)) if len(apart) else math.inf
        if distance < best_distance:
            best, best_distance = (terms, columns - 2 * terms), distance
    return best
