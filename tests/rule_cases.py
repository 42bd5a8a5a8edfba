"""Helpers the rule tests share: the fixture folders, the corpus's healthy runs, and synthetic runs."""

import json
from pathlib import Path

import numpy as np

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.roles import Role

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = FIXTURES / "corpus"
HEALTHY_FIXTURES = [
    "tensorboard/pytorch/healthy", "csv/lightning/healthy", "huggingface/digits_mlp", "wandb/offline",
    "tensorboard/tensorboardx/healthy", "csv/keras/training.log",
]


def healthy_corpus_runs() -> list[str]:
    labels = json.loads((CORPUS / "labels.json").read_text())
    return sorted(path for path, label in labels.items() if label.get("healthy"))


def labelled_corpus_runs(symptoms: set[str]) -> list[str]:
    """The corpus runs labelled with any of ``symptoms``."""
    labels = json.loads((CORPUS / "labels.json").read_text())
    return sorted(path for path, label in labels.items() if symptoms & set(label.get("symptoms", [])))


def read_labelled_run(root: Path, key: str, label: dict):
    """The one run a labelled corpus names at ``key``, read without problems, with a train loss, and with a
    validation loss exactly when its label says so."""
    runs = curvedoc.load(root / key)
    assert len(runs) == 1 and not runs.problems
    run = runs[0]
    assert run.primary(Role.TRAIN_LOSS) is not None
    assert (run.primary(Role.VAL_LOSS) is not None) == label["has_validation"]
    return run


def alarms_at(path: Path, rule_codes: set[str]) -> set[str]:
    """The symptoms that the rules ``rule_codes`` raise as an error or a warning on the runs at ``path``."""
    return {f.symptom for run in curvedoc.load(path) for f in diagnose_run(run)
            if f.code in rule_codes and f.severity in ("error", "warning")}


def findings(path: Path, code: str):
    return [f for run in curvedoc.load(path) for f in diagnose_run(run) if f.code == code]


def codes_at(path: Path) -> set[str]:
    return {f.code for run in curvedoc.load(path) for f in diagnose_run(run)}


def synthetic(curves: dict, n_classes=None, steps=None):
    """A run of the given ``{tag: values}``, at steps 0, 1, … unless ``steps`` gives a tag its own."""
    builder = RunBuilder("/synthetic", "test")
    for tag, values in curves.items():
        values = np.asarray(values, dtype=float)
        builder.add(tag, np.arange(len(values)) if steps is None or tag not in steps else steps[tag], values)
    builder.meta.n_classes = n_classes
    return builder.build()


def codes(run) -> set[str]:
    return {f.code for f in diagnose_run(run)}
