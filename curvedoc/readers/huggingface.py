"""Hugging Face ``Trainer`` state: ``trainer_state.json`` and its ``log_history``.

``log_history`` mixes train entries (``loss, grad_norm, learning_rate, epoch, step``), eval entries
(``eval_loss, eval_<metric>, eval_runtime ...``) on their own step grid, and after training one summary entry
(``train_runtime, train_loss, total_flos ...``) that is not a point of any curve, unless it is all there is (a
``logging_steps`` larger than the run): then its mean ``train_loss`` is the run's one point.

Each ``checkpoint-N/`` folder holds its own ``trainer_state.json`` whose history is a prefix of the later
ones; this reader reads any one of them as a complete snapshot, and discovery chooses which to read. The model's
``config.json`` (class count, vocabulary) is a companion file (:mod:`curvedoc.readers.companions`).
``training_args.bin`` is a pickle and is never opened.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from curvedoc.errors import CurvedocError
from curvedoc.model import Run, RunBuilder
from curvedoc.readers import Source, file_run_name
from curvedoc.readers.records import add_rows
from curvedoc.readers.text import read_json

SUMMARY_KEYS = {"train_runtime", "total_flos"}
# The epoch is bookkeeping on every entry, not a curve of the model.
BOOKKEEPING_KEYS = ("epoch",)
NOT_HPARAMS = {"log_history", "stateful_callbacks"}


def read(source: Source) -> list[Run]:
    path = source.files[0][1] if source.files else source.path
    builder = RunBuilder(path, "hf-trainer-state", name=run_name(path))
    state = load_state(path, builder)
    builder.add_file(path)
    history = state["log_history"]
    entries = [entry for entry in history if isinstance(entry, dict)]
    if len(entries) < len(history):
        builder.warn(f"{path}: {len(history) - len(entries)} log_history entries that are not objects skipped")
    summaries = [entry for entry in entries if SUMMARY_KEYS & entry.keys()]
    again = evaluated_again_after_training([entry.get("step") for entry in entries],
                                           [entry.keys() for entry in entries])
    if (warning := evaluated_again_warning(path, again)) is not None:
        builder.warn(warning)
    points = [entry for entry, repeated in zip(entries, again, strict=True)
              if not (SUMMARY_KEYS & entry.keys() or repeated)]
    hparams = {key: value for key, value in state.items() if key not in NOT_HPARAMS}
    if summaries:
        hparams["summary"] = summaries[-1]
    builder.meta.hparams = hparams
    add_rows(builder, points, "step", skip_keys=BOOKKEEPING_KEYS)
    if not builder.has_points:
        closing = next((entry for entry in reversed(summaries) if _number(entry.get("train_loss")) is not None), None)
        if closing is None:
            _nothing_logged(builder, path, state)
        else:
            _closing_summary_only(builder, path, state, closing)
    return [builder.build()]


def evaluated_again_after_training(steps: list, keys: list[Collection[str]]) -> list[bool]:
    """Which entries of a log_history, given each one's step and keys, evaluate again after the Trainer's closing
    summary at a step whose evaluation the history already holds: ``trainer.evaluate()`` after ``train()``, which
    scores the model training ended with (the best checkpoint, reloaded by ``load_best_model_at_end``), not the
    model at that step. Last in the history, it would replace the evaluation logged during training there."""
    closing = next((index for index, names in enumerate(keys) if SUMMARY_KEYS & set(names)), None)
    again = [False] * len(keys)
    if closing is None:
        return again
    measured: dict = {}
    for step, names in zip(steps[:closing], keys[:closing], strict=True):
        measured.setdefault(step, set()).update(names)
    for index in range(closing + 1, len(keys)):
        evaluations = {name for name in keys[index] if name.startswith("eval_")}
        again[index] = bool(evaluations & measured.get(steps[index], set()))
    return again


def evaluated_again_warning(path: Path, again: list[bool]) -> str | None:
    if not any(again):
        return None
    return (f"{path}: {sum(again)} evaluation(s) after training at a step already evaluated during it "
            "(trainer.evaluate() after train(): the model training ended with, the best checkpoint when "
            "load_best_model_at_end) not taken; the evaluation logged during training there kept")


def _nothing_logged(builder: RunBuilder, path: Path, state: dict) -> None:
    """A Trainer that stopped before it logged anything (3 steps, logging every 10): a run of its own, with no curve,
    whose verdict is that there is not enough to judge, rather than a file refused as unreadable."""
    steps, logging_steps = _number(state.get("global_step")), _number(state.get("logging_steps"))
    why = (f": the run took {steps:g} step(s) and logs every {logging_steps:g}"
           if logging_steps and steps is not None and logging_steps > steps else "")
    builder.warn(f"{path}: log_history holds no logged values{why}")


def _closing_summary_only(builder: RunBuilder, path: Path, state: dict, closing: dict) -> None:
    """A Trainer that logged nothing but its closing summary (logging_steps above the steps the run took): its
    train_loss, the mean over the whole run, is the one point there is, so the run is read, and judged too thin,
    rather than refused."""
    mean_loss, steps = _number(closing["train_loss"]), _number(state.get("global_step"))
    builder.add("train_loss", [int(_number(closing.get("step")) or steps or 0)], [mean_loss])
    logging_steps = _number(state.get("logging_steps"))
    why = (f": logging_steps {logging_steps:g} is more than the {steps:g} steps the run took"
           if logging_steps and steps is not None and logging_steps > steps else "")
    builder.warn(f"{path}: only the Trainer's closing summary was logged{why}; its train_loss {mean_loss:.4g} is the "
                 "mean over the whole run")


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def load_state(path: Path, builder: RunBuilder) -> dict:
    state, decoding_problem = read_json(path)
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        raise CurvedocError(path, "JSON file that is not a Hugging Face trainer state (no log_history list)")
    if decoding_problem:
        builder.warn(decoding_problem)
    return state


def run_name(path: Path) -> str:
    """``output/checkpoint-500`` for a checkpoint's state, the output folder's name otherwise."""
    folder = path.absolute().parent
    if folder.name.startswith("checkpoint-"):
        return f"{folder.parent.name}/{folder.name}"
    return file_run_name(path)
