"""CD601 accuracy_suspicious, CD602 accuracy_majority, CD603 predictions_frozen: real runs that must fire,
healthy ones that must not, and synthetic edge cases (percent scale, tiny evaluation sets, unknown class count,
fast learners whose validation accuracy is level from the first epoch, a million points)."""

import json

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import VOCABULARY, RunBuilder
from curvedoc.rules.accuracy import from_a_large_set
from rule_cases import (CORPUS, FIXTURES, HEALTHY_FIXTURES, alarms_at, codes, healthy_corpus_runs,
                        labelled_corpus_runs, synthetic)

SYMPTOMS = FIXTURES / "symptoms"
FAMILY = {"CD601", "CD602", "CD603"}
HEALTHY = [
    *HEALTHY_FIXTURES, "csv/generic/pandas_healthy.csv",
    "csv/ultralytics/results.csv", "symptoms/healthy_dropout.jsonl", "symptoms/healthy_wine.jsonl",
    "symptoms/healthy_tiny_batch.jsonl", "symptoms/overfit_digits.jsonl", "symptoms/memorize_shuffled.jsonl",
]
FIRES = {"input_zeroed_imbalanced": "CD602", "temperature_only": "CD603"}


def findings(run, codes=FAMILY):
    return [finding for finding in diagnose_run(run) if finding.code in codes]


@pytest.mark.parametrize("name", sorted(FIRES))
def test_real_runs_show_their_symptom_and_only_it(name):
    (run,) = curvedoc.load(SYMPTOMS / f"{name}.jsonl")
    found = findings(run)
    assert [finding.code for finding in found] == [FIRES[name]]
    assert found[0].evidence and found[0].cheapest_check and found[0].tags


@pytest.mark.parametrize("path", HEALTHY)
def test_healthy_runs_have_no_accuracy_findings(path):
    for run in curvedoc.load(FIXTURES / path):
        assert not findings(run)


def test_the_class_prior_is_named_with_its_numbers():
    (run,) = curvedoc.load(SYMPTOMS / "input_zeroed_imbalanced.jsonl")
    (finding,) = findings(run)
    assert "0.6081" in finding.title and finding.severity == "error"
    run.set_n_classes(10, "test")
    (finding,) = findings(run)
    assert "1/10 = 0.1" in finding.evidence[-1]


def test_frozen_predictions_report_the_loss_still_falling():
    (run,) = curvedoc.load(SYMPTOMS / "temperature_only.jsonl")
    (finding,) = findings(run)
    assert "still falling" in finding.evidence[1] and "val/acc = 0.9711" in finding.evidence[0]


def build(curves, n_classes=None):
    """``curves``: tag -> (steps, values)."""
    builder = RunBuilder("/synthetic", "test")
    for tag, (steps, values) in curves.items():
        builder.add(tag, np.asarray(steps), np.asarray(values, dtype=float))
    builder.meta.n_classes = n_classes
    return builder.build()


EPOCHS = np.arange(1, 11) * 100 - 1
STEPS = np.arange(1000)
RNG = np.random.default_rng(0)


def falling_loss(end=0.1):
    return end + 2.2 * np.exp(-np.linspace(0, 6, 1000)) * np.exp(0.2 * RNG.standard_normal(1000))


def slowly_falling_loss():
    return np.linspace(1.0, 0.5, 1000) * np.exp(0.1 * RNG.standard_normal(1000))


def learning_train_acc():
    return np.clip(1 - 0.9 * np.exp(-np.linspace(0, 6, 1000)) + 0.1 * RNG.standard_normal(1000), 0, 1)


def test_near_perfect_in_percent_on_a_large_set_is_suspicious():
    val_acc = [97.1, 98.9, 99.4, 99.5, 99.6, 99.8, 99.9, 100.0, 100.0, 100.0]  # steps of 0.1% -> 1000 examples
    run = build({"train/loss": (STEPS, falling_loss()), "val/acc": (EPOCHS, val_acc)})
    (finding,) = findings(run)
    assert finding.code == "CD601" and finding.step == 699 and "1000 examples" in finding.evidence[2]


def test_mnist_grade_accuracy_is_not_suspicious():
    """A CNN on MNIST ends around 99.5% and gets there within an epoch or two; so does the weak label leak of
    fixtures/symptoms/label_leak.jsonl (99.56% on 450 digits): without knowing the task, neither says leak."""
    val_acc = [98.61, 98.95, 99.12, 99.31, 99.40, 99.47, 99.52, 99.58, 99.61, 99.65]  # 10,000 examples
    assert not findings(build({"train/loss": (STEPS, falling_loss()), "val/acc": (EPOCHS, val_acc)}))
    (run,) = curvedoc.load(SYMPTOMS / "label_leak.jsonl")
    assert not findings(run, {"CD601"})


def test_perfect_accuracy_on_a_tiny_evaluation_set_says_little():
    val_acc = np.r_[0.911, 0.956, 0.978, np.ones(7)]  # 45 examples: one error is 2.2%
    assert not findings(build({"train/loss": (STEPS, falling_loss()), "val/acc": (EPOCHS, val_acc)}))


def test_near_perfect_at_the_first_evaluation_is_implausibly_early():
    steps = np.arange(1, 41) * 250 - 1
    val_acc = np.r_[0.9995, 0.999, np.full(38, 0.985)] + 0.0005 * (np.arange(40) % 2)
    run = build({"train/loss": (np.arange(10_000), np.repeat(falling_loss(), 10)), "val/acc": (steps, val_acc)})
    (finding,) = findings(run)
    assert finding.code == "CD601" and "early" in finding.title and finding.step == 249


def test_majority_with_known_class_count_but_not_chance():
    flat = np.full(10, 0.6081)
    plateau = np.r_[np.linspace(2.3, 1.55, 300), np.full(700, 1.55)]
    run = build({"train/loss": (STEPS, plateau), "val/acc": (EPOCHS, flat)}, n_classes=10)
    assert [f.code for f in findings(run)] == ["CD602"]
    chance = build({"train/loss": (STEPS, np.full(1000, 2.3)), "val/acc": (EPOCHS, np.full(10, 0.1022))}, 10)
    assert not findings(chance)


def test_a_language_models_flat_token_accuracy_is_no_class_prior():
    """TRL's mean_token_accuracy of a fine-tune that learns nothing sits at 0.48 with the loss: the run's class
    count is its vocabulary, and the commonest token's share is no prior a constant prediction sits at."""
    run = build({"train/loss": (STEPS, np.r_[np.linspace(2.3, 1.55, 300), np.full(700, 1.55)]),
                 "val/mean_token_accuracy": (EPOCHS, np.full(10, 0.4846))}, n_classes=32064)
    run.meta.n_classes_kind = VOCABULARY
    assert "CD602" not in [f.code for f in findings(run)]


@pytest.mark.parametrize("level, fires", [(0.5, False), (0.25, False), (0.3333, False), (0.6081, True),
                                          (0.9, True), (0.0, False), (1.0, False)])
def test_majority_with_unknown_class_count_stays_quiet_at_any_one_over_k(level, fires):
    run = build({"train/loss": (STEPS, np.full(1000, 0.66)), "val/acc": (EPOCHS, np.full(10, level))})
    assert bool(findings(run, {"CD602"})) is fires


def test_a_fast_learner_with_level_validation_accuracy_is_healthy():
    run = build({"train/loss": (STEPS, falling_loss()), "train/acc": (STEPS, learning_train_acc()),
                 "val/acc": (EPOCHS, np.full(10, 0.9737))})
    assert not findings(run)


def test_loss_falling_while_accuracy_frozen_is_not_also_majority():
    run = build({"train/loss": (STEPS, slowly_falling_loss()), "val/acc": (EPOCHS, np.full(10, 0.8))})
    assert [f.code for f in findings(run)] == ["CD603"]


def test_an_accuracy_never_above_zero_while_the_loss_keeps_falling_is_frozen_and_one_at_one_is_not():
    """A public multi-label Chainer run (228 sigmoid outputs, a squared-error loss 55 -> 32 and still falling) whose
    validation accuracy is exactly 0 at every evaluation: not one example is ever answered right, however far the
    loss falls. An accuracy of exactly 1 has nowhere to go instead: the loss only sharpens the same answers."""
    for level, frozen in ((0.0, True), (1.0, False)):
        run = build({"train/loss": (STEPS, np.linspace(1.0, 0.5, 1000)), "val/acc": (EPOCHS, np.full(10, level))})
        assert ("CD603" in {f.code for f in findings(run)}) is frozen, level


def test_a_held_out_accuracy_of_zero_throughout_while_training_fits_is_frozen_whatever_its_own_loss_does():
    """A public handwriting classifier: val_acc exactly 0.0 at all 30 epochs while the train loss falls 1.16 ->
    0.05 and the train accuracy climbs, and val_loss climbs 1.39 -> 10 as the wrong answers grow surer. No model
    that learned within its first epoch answers not one held-out example right, so the climbing train accuracy
    does not excuse it, and the train loss shows the fit that never reaches the predictions. Settled, not still
    falling, it is frozen all the same (an accuracy of 0 is not a prior a constant prediction sits at). A train
    loss that never falls moves nothing, and says nothing of frozen predictions."""
    epochs = np.arange(30)
    train_loss = 1.16 * np.exp(-epochs / 6) + 0.04
    train_acc = np.minimum(0.98, 0.3 + 0.05 * epochs)
    val_loss = 1.386 + 0.3 * epochs
    found = findings(build({"train_loss": (epochs, train_loss), "train_acc": (epochs, train_acc),
                            "val_loss": (epochs, val_loss), "val_acc": (epochs, np.zeros(30))}))
    assert [f.code for f in found] == ["CD603"] and found[0].tags == ["train_loss", "val_acc"]
    flat_train = np.full(30, 1.16)
    assert not findings(build({"train_loss": (epochs, flat_train), "train_acc": (epochs, np.full(30, 0.3)),
                               "val_loss": (epochs, val_loss), "val_acc": (epochs, np.zeros(30))}), {"CD603"})


@pytest.mark.parametrize("value,large", [(0.669774, True), (0.002908, True), (0.95, False), (0.9, False),
                                         (0.121951, False), (0.9737, False), (0.0, False)])
def test_an_accuracy_tells_a_large_set_only_when_its_digits_rule_out_every_small_one(value, large):
    # 503/751; 0.121951 is 5/41 (100 of an 820-image set, which its digits cannot tell from 41); 0.9737 has too
    # few digits to tell the counts of sets under 100 apart
    assert from_a_large_set(value) is large


def test_a_held_out_accuracy_the_same_to_its_last_digit_on_a_large_set_is_frozen_whatever_train_does():
    """A public HAM10000 run (Keras CSVLogger): val_accuracy 0.6697736 (503 of 751 images, the majority class's
    share) at all 9 epochs while the train accuracy climbs 0.45 -> 0.66 onto the same share: the validation
    predictions never change, the model predicts the commonest class. The same shape on a set of 20 (0.95, one
    value its 19 right answers give) is a small set the model answers the same way, which says nothing."""
    epochs = np.arange(9)
    train_acc = [0.447, 0.628, 0.646, 0.654, 0.660, 0.663, 0.664, 0.666, 0.668]
    train_loss = [1.79, 1.32, 1.25, 1.22, 1.20, 1.19, 1.18, 1.175, 1.17]
    val_loss = [1.215, 1.168, 1.129, 1.124, 1.120, 1.118, 1.126, 1.115, 1.117]
    for val_acc, frozen in ((0.6697736382484436, True), (0.95, False)):
        run = build({"loss": (epochs, train_loss), "accuracy": (epochs, train_acc), "val_loss": (epochs, val_loss),
                     "val_accuracy": (epochs, np.full(9, val_acc))})
        assert bool({f.code for f in findings(run)} & {"CD602", "CD603"}) is frozen, val_acc


def test_train_accuracy_alone_at_the_prior_is_majority():
    batch_acc = RNG.binomial(32, 0.7, 1000) / 32
    run = build({"train/loss": (STEPS, 0.61 + 0.05 * RNG.standard_normal(1000)), "train/acc": (STEPS, batch_acc)})
    assert [f.code for f in findings(run)] == ["CD602"]


def test_a_train_accuracy_alone_on_a_plateau_above_any_prior_is_no_majority():
    """A stage-2 action classifier logs only its minibatch accuracy: 10 of 16 right (0.625) at its median for
    3,000 steps while its loss creeps 1.22 -> 1.14, far above the 0.66 a model predicting one class at that share
    can score: a model stuck at 63%, which the accuracy alone cannot tell from one that learned the prior."""
    batch_acc = RNG.binomial(16, 0.625, 1000) / 16
    loss = np.linspace(1.22, 1.14, 1000) + 0.1 * RNG.standard_normal(1000)
    assert "CD602" not in [f.code for f in findings(build({"train/loss": (STEPS, loss), "train/acc": (STEPS, batch_acc)}))]
    # with its 4 classes known, a loss above what a prior with a 0.75 majority can score is no prior either
    batch_acc = RNG.binomial(16, 0.75, 1000) / 16
    run = build({"train/loss": (STEPS, np.full(1000, 1.2)), "train/acc": (STEPS, batch_acc)}, n_classes=4)
    assert "CD602" not in [f.code for f in findings(run)]
    run = build({"train/loss": (STEPS, np.full(1000, 0.8)), "train/acc": (STEPS, batch_acc)}, n_classes=4)
    assert "CD602" in [f.code for f in findings(run)]


def test_a_changing_accuracy_is_never_flat():
    val_acc = np.linspace(0.5, 0.9, 10)
    assert not findings(build({"train/loss": (STEPS, falling_loss()), "val/acc": (EPOCHS, val_acc)}))


def test_a_validation_after_fit_on_a_split_drawn_anew_is_leakage():
    """trainer.validate after fit, one step after the last in-fit validation: the same model on the same split
    scores the same, so a loss 2.8x lower (as in a public MNIST run) is a split that now holds training images."""
    val_steps = np.r_[np.arange(1, 6) * 1719 - 1, 8595]
    val_loss = [0.0711, 0.0459, 0.0443, 0.0467, 0.0392, 0.0142]
    val_acc = [0.9762, 0.9848, 0.9858, 0.9848, 0.9868, 0.9964]
    run = build({"train/loss": (np.arange(0, 8595, 50), falling_loss()[:172]),
                 "val/loss": (val_steps, val_loss), "val/acc": (val_steps, val_acc)})
    (finding,) = findings(run)
    assert finding.code == "CD601" and finding.step == 8595 and "2.76×" in finding.title
    assert "0.9868 → 0.9964" in finding.evidence[-1]


@pytest.mark.parametrize("last_step,last_loss", [(8595, 0.0392), (8595, 0.035), (9000, 0.0142)])
def test_a_revalidation_that_agrees_or_follows_training_is_quiet(last_step, last_loss):
    val_steps = np.r_[np.arange(1, 6) * 1719 - 1, last_step]
    val_loss = [0.0711, 0.0459, 0.0443, 0.0467, 0.0392, last_loss]
    run = build({"train/loss": (np.arange(0, 8595, 50), falling_loss()[:172]), "val/loss": (val_steps, val_loss)})
    assert not findings(run, {"CD601"})


def test_epoch_steps_leave_no_room_to_tell_a_revalidation_apart():
    run = build({"train/loss": (np.arange(10), np.linspace(1, 0.1, 10)),
                 "val/loss": (np.r_[np.arange(10), 10], np.r_[np.linspace(1, 0.3, 10), 0.1])})
    assert not findings(run, {"CD601"})


def test_a_train_loss_that_is_nan_throughout_still_lets_accuracy_be_judged():
    run = build({"train_loss": (np.arange(49, 500, 50), np.full(10, np.nan)),
                 "train_accuracy": (np.arange(49, 500, 50), np.ones(10)),
                 "test_accuracy": (np.array([540]), [1.0])})
    finding = next(f for f in diagnose_run(run) if f.code == "CD601")
    assert "after the last training step (499)" in finding.evidence[1]
    assert not any("failed on this run" in warning for warning in run.warnings)


def test_a_million_points_are_judged_whole():
    steps = np.arange(1_000_000)
    run = build({"train/loss": (steps, np.repeat(slowly_falling_loss(), 1000)),
                 "train/acc": (steps, RNG.binomial(32, 0.8, 1_000_000) / 32),
                 "val/acc": (np.arange(1, 101) * 10_000 - 1, np.full(100, 0.8))})
    assert [f.code for f in findings(run)] == ["CD603"]


def test_a_held_out_cross_entropy_near_zero_implies_a_near_perfect_accuracy_never_logged():
    # a hate-speech classifier whose eval loss is 2e-5: at most 0.003% of the examples can be wrong
    steps = np.arange(0, 1000, 10)
    run = build({"train/loss": (steps, 0.85 * np.exp(-steps / 20) + 1e-6),
                 "eval/loss": (np.array([499, 999]), [2.1e-5, 1.3e-5])}, n_classes=3)
    (finding,) = findings(run, {"CD601"})
    assert "no held-out accuracy is logged" in finding.evidence[0] and "ln 2" in finding.evidence[1]


@pytest.mark.parametrize("tag,end", [("eval/loss", 0.02), ("eval/mse_loss", 1e-5)])
def test_a_held_out_loss_that_is_low_or_no_cross_entropy_implies_nothing(tag, end):
    steps = np.arange(0, 1000, 10)
    run = build({"train/loss": (steps, 0.85 * np.exp(-steps / 20) + 0.01),
                 tag: (np.array([499, 999]), [2 * end, end])}, n_classes=3)
    assert not findings(run, {"CD601"})


def test_a_loss_that_goes_negative_says_nothing_of_frozen_predictions():
    # NLLLoss on raw logits: the "loss" falls without bound, no cross-entropy, whatever the accuracy does
    epochs = np.arange(1, 7) * 42
    run = build({"val/loss": (epochs, [-2.7, -6.4, -9.4, -12.2, -14.9, -17.5]),
                 "val/acc": (epochs, np.full(6, 0.0978))}, n_classes=10)
    assert not findings(run)


def test_a_loss_below_what_any_constant_prediction_scores_is_frozen_even_when_settled():
    val_loss = np.r_[np.linspace(0.15, 0.082, 10), np.full(10, 0.082)]
    epochs = np.arange(1, 21) * 50 - 1
    run = build({"val_loss": (epochs, val_loss), "val_acc": (epochs, np.full(20, 0.9737))}, n_classes=3)
    (finding,) = findings(run)
    assert finding.code == "CD603" and "depend on the input" in finding.evidence[2]


def test_a_model_that_never_trained_is_not_a_learned_prior():
    # the optimizer holds another model's parameters: loss above ln 3, accuracy whatever the init predicts
    run = build({"train/loss": (STEPS, 1.14 + 0.1 * RNG.standard_normal(1000)),
                 "val/loss": (EPOCHS, np.full(10, 1.141)), "val/acc": (EPOCHS, np.full(10, 0.4222))}, n_classes=3)
    assert not findings(run)


def test_a_prior_learned_in_the_first_steps_is_majority():
    train_acc = np.r_[0.0, RNG.binomial(32, 0.9, 999) / 32]
    train_loss = np.r_[np.linspace(2.3, 0.52, 30), 0.52 + 0.1 * RNG.standard_normal(970)]
    run = build({"train/loss": (STEPS, train_loss), "train/acc": (STEPS, train_acc),
                 "val/loss": (EPOCHS, np.full(10, 0.521)), "val/acc": (EPOCHS, np.full(10, 0.902))}, n_classes=10)
    assert [f.code for f in findings(run)] == ["CD602"]


def test_accuracy_flat_because_the_learning_rate_decayed_to_zero_is_left_to_plateau_high():
    lr = 1e-3 * 0.1 ** (STEPS // 100)
    run = build({"train/loss": (STEPS, 0.57 + 0.05 * RNG.standard_normal(1000)), "lr": (STEPS, lr),
                 "val/loss": (EPOCHS, np.full(10, 0.572)), "val/acc": (EPOCHS, np.full(10, 0.8811))})
    assert not findings(run)
    cosine = 1e-3 * 0.5 * (1 + np.cos(np.pi * STEPS / 1000))
    run = build({"train/loss": (STEPS, 0.57 + 0.05 * RNG.standard_normal(1000)), "lr": (STEPS, cosine),
                 "val/loss": (EPOCHS, np.full(10, 0.572)), "val/acc": (EPOCHS, np.full(10, 0.8811))})
    assert [f.code for f in findings(run)] == ["CD602"]



# The labelled corpus (fixtures/corpus, labels.json): each run labelled with one of these symptoms must raise it;
# every healthy run must stay quiet, except known false alarms, listed here so they stay in sight.
SYMPTOM_IDS = {"accuracy_suspicious", "accuracy_majority", "predictions_frozen"}
CORPUS_MISSES = set()


@pytest.mark.parametrize("path", [p for p in labelled_corpus_runs(SYMPTOM_IDS) if p not in CORPUS_MISSES])
def test_labelled_corpus_runs_raise_their_symptom(path):
    expected = set(json.loads((CORPUS / "labels.json").read_text())[path]["symptoms"]) & SYMPTOM_IDS
    assert expected <= alarms_at(CORPUS / path, FAMILY)


@pytest.mark.parametrize("path", healthy_corpus_runs())
def test_healthy_corpus_runs_are_quiet(path):
    assert not alarms_at(CORPUS / path, FAMILY)


def test_an_accuracy_swinging_between_half_and_all_of_a_test_folder_is_no_fixed_prediction():
    # a per-epoch accuracy on one held-out folder (named without a split), its train loss summed over batches
    accuracy = [0.9483, 0.975, 0.937, 0.721, 0.991, 0.496, 0.807, 0.911, 0.784, 0.661, 0.529, 0.797, 0.939, 0.658,
                0.588]
    loss = [12.43, 5.89, 3.42, 2.46, 2.28, 3.79, 2.05, 1.96, 2.18, 1.80, 1.16, 2.56, 2.85, 2.16, 1.94]
    run = synthetic({"train_loss": loss, "acc_day": accuracy})
    assert not {f.code for f in diagnose_run(run)} & {"CD602", "CD603"}


def test_a_constant_prediction_scored_on_batches_of_32_still_holds_its_level():
    rng = np.random.default_rng(3)
    accuracy = rng.binomial(32, 0.85, 60) / 32  # the majority class's share of each batch
    loss = 0.45 + 0.02 * rng.standard_normal(60)  # settled at about the prior's entropy
    loss[:5] = [2.0, 1.2, 0.8, 0.6, 0.5]
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": loss, "train_acc": accuracy})) if f.code == "CD602"]
    assert finding.evidence[0].startswith("train_acc holds at 0.84")


def test_a_segmentations_pixel_accuracy_near_1_is_the_background_not_a_leak():
    """A U-Net logging Dice and IoU beside its pixel accuracy (a real public run's shape): validation accuracy
    0.993 → 0.9996 from the third epoch, counted over millions of pixels, most of them background. The same
    accuracy with no overlap metric beside it is a classifier's, and suspicious."""
    epochs = 100
    accuracy = 0.9996 - 0.0066 * np.exp(-np.arange(epochs) / 1.5)
    dice = 0.91 - 0.61 * np.exp(-np.arange(epochs) / 15)
    curves = {"train/loss": 0.5 * np.exp(-np.arange(epochs) / 20) + 0.05, "Validation Accuracy": accuracy}
    assert "CD601" in codes(synthetic(curves))
    assert "CD601" not in codes(synthetic({**curves, "Validation Dice": dice, "Validation IoU": dice - 0.08}))


def test_an_epoch_accuracy_that_climbs_86_to_94_percent_has_predictions_that_change():
    """A ResNet fine-tune's epoch lines (a real public log's shape): loss 1.56 → 0.11, accuracy 86.4% → 93.8% in
    ten epochs, each an average over the same examples. Too few points for a trend test to call the climb
    significant, but a model whose predictions stay fixed scores those examples the same way every epoch."""
    loss = [1.5573, 0.5817, 0.3763, 0.2616, 0.1988, 0.1755, 0.1385, 0.1132, 0.1281, 0.1077]
    accuracy = [86.4, 86.6, 89.8, 90.2, 93.6, 91.0, 93.6, 93.8, 92.0, 91.8]
    assert not {"CD602", "CD603"} & codes(synthetic({"Loss": loss, "Accuracy": accuracy}))
    assert "CD603" in codes(synthetic({"Loss": loss, "Accuracy": [91.4] * 10}))


def test_an_accuracy_jittering_in_its_seventh_digit_has_not_changed():
    # Keras averages the metric in float32: the same predictions read 0.9866069 … 0.9866073 from epoch to epoch
    epochs = np.arange(35)
    jitter = np.array([0.9866069, 0.9866073, 0.9866071, 0.9866070, 0.9866072] * 7)
    val_loss = np.r_[0.785, 0.31, 0.12, 0.08, 0.065, np.full(30, 0.058) + 0.001 * RNG.standard_normal(30)]
    run = build({"val_loss": (epochs, val_loss), "val_accuracy": (epochs, jitter)})
    (finding,) = findings(run)
    assert finding.code == "CD603" and "0.9866 at all 35 points" in finding.evidence[0]


def test_a_loss_that_fell_within_the_first_quarter_of_a_frozen_span_fell():
    # 31 evaluations, the loss down 0.518 -> 0.443 in the first 7 and settled after: the first quarter's median
    # is already most of the way down, the fall is read from where the span starts
    epochs = np.arange(31)
    val_loss = np.r_[np.linspace(0.518, 0.443, 8), 0.449 + 0.003 * RNG.standard_normal(23)]
    run = build({"val_loss": (epochs, val_loss), "val_acc": (epochs, np.full(31, 0.72414))}, n_classes=2)
    (finding,) = findings(run)
    assert finding.code == "CD603" and "starts the span at 0.518" in finding.evidence[1]


def test_a_small_steady_fall_beside_an_accuracy_that_never_moves_is_frozen_predictions():
    # a NAS candidate on a balanced binary task: val_acc exactly 0.5 at all 10 evaluations while val_loss creeps
    # down 2.754 -> 2.709 without a single rise: the outputs change, their argmax never does
    epochs = np.arange(10)
    run = build({"val_loss": (epochs, np.linspace(2.754, 2.709, 10)), "val_acc": (epochs, np.full(10, 0.5))})
    assert "CD603" in {finding.code for finding in findings(run)}
    # the same small change without a trend is a settled loss's noise
    wobble = 2.73 + 0.02 * np.array([1, -1, 1, -1, 1, -1, 1, -1, 1, -1])
    assert "CD603" not in {finding.code for finding in findings(build({"val_loss": (epochs, wobble),
                                                                        "val_acc": (epochs, np.full(10, 0.5))}))}


def test_an_accuracy_that_answers_one_example_differently_holds_its_predictions():
    """A CapsNet on a 60-image validation set (a public run): 36/60 at six evaluations and 35/60 at two, while the
    validation loss falls 16%: one example answered differently, the predictions otherwise frozen. Two values
    that are no counts one apart of one set (0.5 and 0.9 of ten) are a model that changed its answers."""
    epochs = np.arange(8)
    val_loss = np.array([0.339, 0.308, 0.290, 0.317, 0.294, 0.285, 0.272, 0.260])
    one_apart = np.array([0.6, 0.6, 0.583333, 0.6, 0.6, 0.583333, 0.6, 0.6])
    run = build({"val_loss": (epochs, val_loss), "val_acc": (epochs, one_apart)}, n_classes=7)
    assert "CD603" in [finding.code for finding in findings(run)]
    far_apart = np.array([0.5, 0.5, 0.9, 0.5, 0.9, 0.9, 0.5, 0.9])
    run = build({"val_loss": (epochs, val_loss), "val_acc": (epochs, far_apart)}, n_classes=7)
    assert "CD603" not in [finding.code for finding in findings(run)]


def test_an_accuracy_over_a_large_set_that_moves_by_a_few_examples_holds_its_predictions():
    """A public PTP-attack detector: validation accuracy 0.70713-0.70731 over 23 epochs (its smallest step, one
    window of about 135,000, so 25 windows answered differently) while the validation loss falls 0.75 -> 0.56,
    below what any constant prediction at 70.7% scores. Moving by 0.5% of such a set is a model that learns."""
    rng = np.random.default_rng(7)
    epochs = np.arange(23)
    val_loss = np.linspace(0.75, 0.56, 23) + rng.normal(0, 0.01, 23)
    size = 135_000
    counts = 95_475 + rng.integers(-12, 13, 23)
    run = build({"val_loss": (epochs, val_loss), "val_acc": (epochs, counts / size)})
    assert "CD603" in [finding.code for finding in findings(run)]
    learning = (95_475 + np.linspace(0, 700, 23).astype(int)) / size
    assert "CD603" not in [finding.code for finding in findings(build({"val_loss": (epochs, val_loss),
                                                                        "val_acc": (epochs, learning)}))]


def test_near_perfect_at_three_evaluations_is_suspicious_however_the_accuracy_ends():
    """A 29-class sign-alphabet CNN (a public run): validation accuracy 1.000 at three epochs on a set of
    thousands, then 0.986 at the last, when the loss jumps. Three perfect evaluations are no lucky pass; one is."""
    val_acc = [0.9650, 0.8650, 0.9850, 1.0, 1.0, 1.0, 0.9860, 0.9900, 0.9880, 0.9870]
    run = build({"train/loss": (STEPS, falling_loss()), "val/acc": (EPOCHS, np.round(val_acc, 4))})
    (finding,) = findings(run, {"CD601"})
    assert finding.step == 399 and "3 evaluations" in finding.title
    once = [0.9650, 0.8650, 0.9850, 1.0, 0.9890, 0.9860, 0.9860, 0.9900, 0.9880, 0.9870]
    assert not findings(build({"train/loss": (STEPS, falling_loss()), "val/acc": (EPOCHS, once)}), {"CD601"})
