"""The held-out corpus (fixtures/generate/holdout.py): other people's training code, labelled by its curves.

Thresholds are chosen on fixtures/corpus and reported here, so this corpus must be well-formed, varied enough to
mean something, and read by curvedoc as the runs it is: every run (captured stdout included) reads as one run
with its curves' roles, and every class count its files hold reads back.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

import curvedoc
from curvedoc.roles import Role
from curvedoc.rules import SYMPTOMS
from rule_cases import read_labelled_run

HOLDOUT = Path(__file__).resolve().parent.parent / "fixtures" / "holdout"
LABELS = json.loads((HOLDOUT / "labels.json").read_text())
CLASSIFICATION = {"classification", "binary"}
# A failing run's symptoms: the registry's ids less its note that a check lacked the class count, and less the
# fine-tuning symptoms, which need a pretrained language model and its generations: fixtures/finetune holds them.
FINE_TUNING = {"finetune_start_high", "loss_masked_out", "eval_scores_clustered", "prompt_echoed",
               "generations_cut_off", "template_leaked"}
FAILURES = set(SYMPTOMS) - {"needs_n_classes"} - FINE_TUNING


def test_labels_are_well_formed():
    for key, entry in LABELS.items():
        assert set(entry["symptoms"]) <= FAILURES, key
        assert entry["healthy"] == (not entry["symptoms"]), key
        assert key.split("/")[0] == (entry["symptoms"][0] if entry["symptoms"] else "healthy"), key
        assert entry["why"] and entry["recipe"] and entry["family"] and entry["curves"], key
        assert any(ch.isdigit() for ch in entry["why"]), f"{key}: why gives no numbers"
        assert ("hard_negative" in entry) <= entry["healthy"], key
        assert (entry["n_classes"] is None) == (entry["task"] in ("regression", "vae")), key
        assert not entry["n_classes_recorded"] or entry["n_classes"], key


def test_the_mix_meets_the_minimums():
    assert 100 <= len(LABELS) <= 135
    healthy = [entry for entry in LABELS.values() if entry["healthy"]]
    assert len(healthy) >= 0.35 * len(LABELS)
    counts = Counter(symptom for entry in LABELS.values() for symptom in entry["symptoms"])
    assert {symptom: counts[symptom] for symptom in FAILURES if counts[symptom] < 4} == {}
    kinds = {entry.get("hard_negative") for entry in healthy}
    assert {"tiny_batch", "fast_then_slow", "warmup_cosine", "lr_restarts", "step_schedule", "short_epochs",
            "long_steps", "no_validation", "regression"} <= kinds


def test_writers_families_and_recorded_class_counts_are_mixed():
    writers = Counter(entry["writer"] for entry in LABELS.values())
    assert len(writers) >= 7 and max(writers.values()) < 0.3 * len(LABELS)
    assert 0.07 * len(LABELS) <= writers["stdout"] <= 0.13 * len(LABELS)
    assert len({entry["family"] for entry in LABELS.values()}) >= 7
    classification = [entry for entry in LABELS.values() if entry["task"] in CLASSIFICATION]
    unrecorded = sum(not entry["n_classes_recorded"] for entry in classification)
    assert 0.4 * len(classification) <= unrecorded <= 0.6 * len(classification)


@pytest.mark.parametrize("key", sorted(LABELS))
def test_every_labelled_run_reads_as_one_run(key):
    run = read_labelled_run(HOLDOUT, key, LABELS[key])
    assert bool(run.tags_with(Role.GRAD_NORM)) == LABELS[key]["has_grad_norm"]


@pytest.mark.parametrize("key", sorted(LABELS))
def test_recorded_class_counts_read_back(key):
    entry = LABELS[key]
    found = [run.meta.n_classes for run in curvedoc.load(HOLDOUT / key)]
    if entry["n_classes_recorded"]:
        assert found == [entry["n_classes"]] * len(found)
    else:
        # nothing to read: a count may only come from inference, and then it must be the true one
        assert set(found) <= {None, entry["n_classes"]}
