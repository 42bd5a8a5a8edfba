"""The labelled corpus of real training runs (fixtures/generate/corpus.py) is consistent with its labels."""

import json
from collections import Counter
from pathlib import Path

import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.roles import Role
from rule_cases import read_labelled_run

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
LABELS = json.loads((CORPUS / "labels.json").read_text())
SYMPTOMS = {
    "nan_inf", "start_high", "start_low", "flat_from_start", "flat_at_chance", "plateau_high", "oscillation",
    "spike", "overfitting", "memorizing", "underfitting", "val_below_train", "train_negative",
    "accuracy_suspicious", "accuracy_majority", "predictions_frozen", "exploding_grad", "vanishing_grad",
}


def test_corpus_meets_the_issue_minimums():
    assert len(LABELS) >= 120
    healthy = [entry for entry in LABELS.values() if entry["healthy"]]
    assert len(healthy) >= 0.3 * len(LABELS)
    counts = Counter(symptom for entry in LABELS.values() for symptom in entry["symptoms"])
    assert {symptom: counts[symptom] for symptom in SYMPTOMS if counts[symptom] < 5} == {}
    kinds = {entry.get("hard_negative") for entry in healthy}
    assert {"tiny_batch", "fast_then_slow", "warmup_cosine", "mild_dropout", "regression", "short_epochs",
            "long_steps", "no_validation"} <= kinds


def test_labels_are_well_formed():
    for key, entry in LABELS.items():
        assert set(entry["symptoms"]) <= SYMPTOMS, key
        assert entry["healthy"] == (not entry["symptoms"]), key
        assert key.split("/")[0] == (entry["symptoms"][0] if entry["symptoms"] else "healthy"), key
        assert entry["why"] and entry["recipe"], key


def test_writers_are_mixed_and_some_runs_lack_a_class_count():
    writers = Counter(entry["writer"] for entry in LABELS.values())
    assert len(writers) >= 5 and writers["tensorboard"] < len(LABELS) / 2
    classification = [entry for entry in LABELS.values() if entry["task"] == "classification"]
    unrecorded = sum(not entry["n_classes_recorded"] for entry in classification)
    assert 0.05 * len(classification) <= unrecorded <= 0.25 * len(classification)


@pytest.mark.parametrize("key", sorted(LABELS))
def test_every_labelled_run_reads_as_one_run(key):
    entry = LABELS[key]
    run = read_labelled_run(CORPUS, key, entry)
    assert (run.primary(Role.GRAD_NORM) is not None) == entry["has_grad_norm"]
    if entry["n_classes_recorded"]:
        assert run.meta.n_classes == entry["n_classes"]
    else:
        assert run.meta.n_classes is None


GANS = sorted(key for key, entry in LABELS.items() if entry["task"] == "gan")


@pytest.mark.parametrize("key", GANS)
def test_healthy_gans_get_no_alarm_and_their_adversarial_terms_are_no_losses(key):
    (run,) = curvedoc.load(CORPUS / key)
    assert not [f.code for f in diagnose_run(run) if f.severity in ("error", "warning")]
    assert run.tags_with(Role.ADVERSARIAL) and run.insufficient is None


def test_a_gan_logging_its_adversarial_terms_alone_is_too_thin_to_judge():
    (run,) = curvedoc.load(CORPUS.parent / "tensorboard" / "gan_vanilla")
    assert not [f.code for f in diagnose_run(run) if f.severity in ("error", "warning")]
    assert run.insufficient.startswith("only a GAN's adversarial terms (loss_D, loss_G)")
