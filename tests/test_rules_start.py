"""CD201 start_high, CD202 start_low and CD203 (a held-out loss below what its accuracy allows): real runs that
must fire, healthy real runs that must not, and synthetic edge cases (regression losses, averaged first values,
MNIST-like fast learners)."""

import math

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from rule_cases import CORPUS, FIXTURES, HEALTHY_FIXTURES, codes, codes_at, findings, healthy_corpus_runs, synthetic

MY_CODES = {"CD201", "CD202", "CD203"}


@pytest.mark.parametrize("name, ratio_at_least", [
    ("logits_x30", 4.0), ("wrong_class_count_100", 2.0), ("wrong_class_count_iris", 3.0),
    ("init_scale_4_cancer", 3.0),
])
def test_a_first_loss_far_above_chance_fires(name, ratio_at_least):
    (finding,) = findings(CORPUS / "start_high" / name, "CD201")
    (run,) = curvedoc.load(CORPUS / "start_high" / name)
    loss = run.series(run.primary("train_loss"))
    assert finding.step == int(loss["step"].iloc[0])
    ratio = float(loss["value"].iloc[0]) / math.log(run.meta.n_classes)
    assert ratio >= ratio_at_least and f"{ratio:.1f}× chance" in finding.evidence[1]
    assert f"−log(1/{run.meta.n_classes})" in finding.evidence[0] and finding.cheapest_check


def test_a_wrong_class_count_names_the_class_count_its_start_fits():
    (finding,) = findings(CORPUS / "start_high" / "wrong_class_count_100", "CD201")
    assert any("uniform guess starts this high with about 11" in line for line in finding.evidence)


@pytest.mark.parametrize("name", ["label_leak_x10", "label_leak_cancer", "label_leak_wine"])
def test_a_leaked_label_fires_start_low(name):
    (finding,) = findings(CORPUS / "start_low" / name, "CD202")
    assert "× chance" in finding.evidence[0]


@pytest.mark.parametrize("path", [*HEALTHY_FIXTURES, "csv/lightning/shuffled_labels"])
def test_healthy_fixtures_start_normally(path):
    assert not codes_at(FIXTURES / path) & MY_CODES


@pytest.mark.parametrize("path", healthy_corpus_runs())
def test_healthy_corpus_runs_start_normally(path):
    assert not codes_at(CORPUS / path) & MY_CODES


def decaying(start, end, points=200, seed=0):
    rng = np.random.default_rng(seed)
    return end + (start - end) * np.exp(-np.arange(points) / (points / 8)) + rng.normal(0, 0.02, points)


def test_a_sane_init_within_twenty_percent_of_chance_is_quiet():
    assert "CD201" not in codes(synthetic({"train/loss": decaying(2.3 * 1.2, 0.05)}, n_classes=10))


def test_a_large_vocabulary_language_model_starting_a_nat_high_is_quiet():
    # GPT-style init: 11.2 nats against ln(50257) = 10.82; under half a nat above chance is a normal start
    assert "CD201" not in codes(synthetic({"train/loss": decaying(11.2, 3.0)}, n_classes=50257))


def test_a_two_class_task_needs_more_than_a_doubling():
    assert "CD201" not in codes(synthetic({"train/loss": decaying(1.5, 0.1)}, n_classes=2))
    assert "CD201" in codes(synthetic({"train/loss": decaying(4.0, 0.1)}, n_classes=2))


def test_a_high_start_that_never_comes_near_chance_is_only_a_note():
    # it may be summed over the batch: −log(1/n) is then no yardstick
    (finding,) = [f for f in diagnose_run(synthetic({"train/loss": decaying(40.0, 8.0)}, n_classes=8))
                  if f.code == "CD201"]
    assert finding.severity == "info"


def test_a_validation_loss_near_chance_shows_the_high_start_is_a_mean_and_warns():
    # the train loss of a run whose learning rate is far too high never gets near chance, but its validation loss
    # (no regulariser, a mean over examples) does: the loss is on the chance scale and started far above it
    run = synthetic({"train/loss": decaying(28.0, 7.0, points=40), "val/loss": decaying(8.0, 2.4, points=40)},
                    n_classes=8)
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD201"]
    assert finding.severity == "warning" and any("val/loss does" in line for line in finding.evidence)


@pytest.mark.parametrize("tag", ["train/mse_loss", "train/huber", "train/contrastive_loss"])
def test_losses_that_are_not_cross_entropy_are_not_compared_with_chance(tag):
    assert not codes(synthetic({tag: decaying(40.0, 0.001)}, n_classes=10)) & MY_CODES


def test_without_a_class_count_the_rules_wait_for_one():
    run = synthetic({"train/loss": decaying(40.0, 0.1)})
    found = diagnose_run(run)
    assert not {f.code for f in found} & MY_CODES
    assert any(f.code == "CD000" and "CD201" in f.evidence[0] for f in found)


def test_an_averaged_first_value_counts_only_when_the_loss_falls_after_it():
    steps = {"train/loss": np.array([100, 200, 300, 400, 500])}
    falling = synthetic({"train/loss": [9.0, 3.0, 1.0, 0.5, 0.3]}, n_classes=10, steps=steps)
    (finding,) = [f for f in diagnose_run(falling) if f.code == "CD201"]
    assert "20% into the run" in finding.evidence[2]
    diverging = synthetic({"train/loss": [9.0, 12.0, 30.0, 80.0, 200.0]}, n_classes=10, steps=steps)
    assert "CD201" not in codes(diverging)


def test_mnist_like_fast_learning_is_not_a_leak():
    # a CNN on MNIST: val loss 0.04 (0.017× chance) and val accuracy 0.987 after the first epoch
    steps = {"train/loss": np.arange(0, 4690, 10), "val/loss": np.array([468, 937, 1406]),
             "val/acc": np.array([468, 937, 1406])}
    run = synthetic({"train/loss": decaying(2.3, 0.02, 469), "val/loss": [0.04, 0.033, 0.03],
                     "val/acc": [0.987, 0.99, 0.991]}, n_classes=10, steps=steps)
    assert "CD202" not in codes(run)


def test_perfect_accuracy_with_a_tiny_first_val_loss_is_a_leak():
    steps = {"val/loss": np.array([42, 85, 128]), "val/acc": np.array([42, 85, 128])}
    run = synthetic({"val/loss": [0.04, 0.01, 0.005], "val/acc": [1.0, 1.0, 1.0]}, n_classes=10, steps=steps)
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD202"]
    assert finding.step == 42 and "val/acc = 1" in finding.evidence[1]


def test_a_negative_loss_is_not_a_leak():
    run = synthetic({"val/loss": [-1.0, -5.0, -9.0, -12.0]}, n_classes=10)
    assert "CD202" not in codes(run)


def test_fine_tuning_a_pretrained_language_model_is_not_a_leak():
    # GPT-2 fine-tuning: step-0 loss 3.3 against ln(50257) = 10.8, a 0.3× chance start that pretraining explains
    rng = np.random.default_rng(5)
    run = synthetic({"train/loss": 3.3 - 0.3 * np.linspace(0, 1, 500) + rng.normal(0, 0.1, 500)}, n_classes=50257)
    assert not codes(run) & {"CD202", "CD301", "CD302", "CD303", "CD304"}


def test_a_speech_model_loaded_from_a_named_checkpoint_starts_where_its_pretraining_left_it():
    """Whisper-small fine-tuned on ASR (a real public run's shape): its first evaluation, after 100 steps, is
    0.10 nats against ln(51865) = 10.86, 0.009× chance. Its config.json names openai/whisper-small as
    _name_or_path: a pretrained output layer, not a leak. The same curves with no checkpoint named are one."""
    steps = {"eval_loss": np.arange(100, 1500, 100)}
    curves = {"loss": 0.18 * np.exp(-np.linspace(0, 3, 140)) + 0.01,
              "eval_loss": 0.1 * np.exp(-np.linspace(0, 2.4, 14))}
    run = synthetic(curves, n_classes=51865, steps=steps)
    run.meta.n_classes_kind = "vocabulary"
    assert "CD202" in codes(run)
    run.meta.checkpoint = "openai/whisper-small"
    assert "CD202" not in codes(run)


def test_a_perfect_but_unsure_first_evaluation_is_not_a_leak():
    # a tiny easy validation set can be all right after one epoch; at 0.3× chance the model is far from certain
    steps = {"val/loss": np.array([10, 20, 30]), "val/acc": np.array([10, 20, 30])}
    run = synthetic({"val/loss": [0.33, 0.2, 0.1], "val/acc": [1.0, 1.0, 1.0]}, n_classes=3, steps=steps)
    assert "CD202" not in codes(run)


def test_an_agent_gets_no_class_count_note():
    # a policy's and a value function's losses are objectives, not cross-entropies over classes
    run = synthetic({"train/value_loss": decaying(52.0, 30.0, points=40), "rollout/ep_rew_mean": np.linspace(20, 60, 40)})
    assert "CD000" not in codes(run)


def test_a_detectors_summed_loss_has_no_chance_level_over_its_classes():
    """YOLOv3 in Lightning on PASCAL VOC (20 classes): train_loss sums box, objectness and class terms and starts at
    46; the run's obj / no-obj accuracies say it is a detector. The same start on a classifier is far too high."""
    loss = np.geomspace(45.9, 3.9, 60)
    detector = synthetic({"train_loss": loss, "val_Obj_Accuracy": np.linspace(0.2, 0.72, 60),
                          "val_Class_Accuracy": np.linspace(0.34, 0.9, 60)}, n_classes=20)
    assert not {"CD201", "CD304"} & codes(detector)
    assert "CD201" in codes(synthetic({"train_loss": loss, "val_accuracy": np.linspace(0.34, 0.9, 60)}, n_classes=20))


def test_a_held_out_loss_far_below_what_its_accuracy_allows_is_on_another_scale():
    """Cross-entropy divided once more by the dataset size (a real public run): 3e-6 at 97.8% validation accuracy.
    2.2% of the examples are wrong and each costs at least ln 2, so no per-example loss is below 0.015. No class
    count needed."""
    rng = np.random.default_rng(6)
    epochs = np.arange(1, 31)
    accuracy = np.clip(0.978 + 0.012 * (1 - np.exp(-epochs / 8)) + 0.002 * rng.standard_normal(30), 0, 0.999)
    run = synthetic({"train_loss": np.linspace(1.1e-6, 1.5e-7, 30), "val_loss": np.linspace(3.1e-6, 1.1e-6, 30),
                     "val_acc": accuracy}, steps={"val_loss": epochs, "val_acc": epochs, "train_loss": epochs})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD203"]
    assert finding.symptom == "start_low" and "far below any loss that accuracy allows" in finding.title
    assert "CD203" not in codes(synthetic({"val_loss": 0.3 - 0.008 * epochs, "val_acc": 0.8 + 0.005 * epochs},
                                          steps={"val_loss": epochs, "val_acc": epochs}))


def test_a_loss_and_an_accuracy_logged_apart_are_not_compared():
    """A public log appends an autoencoder's sessions ('[Val] Epoch: N, Loss:0.000069', 100 epochs) and a linear
    classifier's on its embeddings ('[Val Classifier] Epoch: N, Accuracy:73.66', 20 epochs): the loss is a
    reconstruction error, no cross-entropy of those predictions. Logged together at every evaluation, the same
    numbers are one classifier's and fire."""
    epochs = np.arange(100)
    curves = {"val_Loss": 8.9e-5 * np.exp(-epochs / 40), "val_Accuracy": np.linspace(78.4, 90.0, 20)}
    assert "CD203" not in codes(synthetic(curves, steps={"val_Loss": epochs, "val_Accuracy": epochs[:20]}))
    together = {"val_Loss": curves["val_Loss"][:20], "val_Accuracy": curves["val_Accuracy"]}
    assert "CD203" in codes(synthetic(together, steps={tag: epochs[:20] for tag in together}))


@pytest.mark.parametrize("case", ["printed_zero", "regression_exact_match", "mse_named_plainly"])
def test_a_loss_below_its_accuracy_bound_needs_a_classifier_and_real_values(case):
    """A test loss printed as 0.000 is rounding; an exact-match 'accuracy' of a regression (near 0) says nothing of
    its MSE; an MSE named as such is no cross-entropy."""
    epochs = np.arange(1, 11)
    curves = {"printed_zero": {"val_loss": np.zeros(10), "val_acc": np.full(10, 0.99)},
              "regression_exact_match": {"val_loss": np.full(10, 1e-4), "val_acc": np.full(10, 0.12)},
              "mse_named_plainly": {"val_mse_loss": np.full(10, 1e-5), "val_acc": np.full(10, 0.9)}}[case]
    assert "CD203" not in codes(synthetic(curves, steps={tag: epochs for tag in curves}))


@pytest.mark.parametrize(("setting", "fires"), [("<function arcface_loss at 0x7fdfa60d5620>", False),
                                                 ("CrossEntropyLoss()", True), ("FocalLoss(gamma=2)", False),
                                                 ("BCEWithLogitsLoss()", False)])
def test_a_loss_function_the_settings_name_decides_whether_chance_is_its_yardstick(setting, fires):
    """ArcFace with scale 64 and margin 0.5 starts near 20 over 91,354 identities (ln n = 11.4) by design; a focal
    factor starts below ln n, and a per-label binary cross-entropy's chance is ln 2, not ln n. What the settings
    call the loss function is what the untagged loss is."""
    from curvedoc.model import RunBuilder

    builder = RunBuilder("/synthetic", "test")
    builder.add("train_loss", np.arange(200), decaying(20.2, 2.1))
    builder.meta.n_classes = 91354
    builder.meta.hparams = {"loss_fn": setting, "scale": 64, "margin": 0.5}
    assert ("CD201" in codes(builder.build())) == fires
