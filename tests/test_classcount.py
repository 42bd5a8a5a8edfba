"""The class count a run's curves give away when its files do not record it, how sure that is, and what a finding
built on it says; perplexities read as the loss they are the exponential of."""

import json
import math

import numpy as np
import pytest

import curvedoc
from curvedoc.classcount import class_count, infer_class_count
from curvedoc.diagnose import diagnose_run
from curvedoc.features import RunCurves, chance_loss_of
from curvedoc.roles import Role
from rule_cases import CORPUS, synthetic

LABELS = json.loads((CORPUS / "labels.json").read_text())


def inferred(curves: dict, steps=None):
    return infer_class_count(RunCurves(synthetic(curves, steps=steps)))


def falling(start: float, n: int = 300, end: float = 0.2) -> np.ndarray:
    return end + (start - end) * np.exp(-np.arange(n) / 40)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 10])
def test_a_first_loss_at_ln_k_is_evidence_of_k(k):
    count = inferred({"train/loss": falling(math.log(k) + 0.03)})
    assert count.n == k and count.inferred and not count.certain
    assert f"≈ ln {k}" in count.source


@pytest.mark.parametrize("first", [1.25, 1.9, 2.6, 3.5, 4.6])
def test_a_first_loss_beyond_the_small_counts_says_nothing(first):
    """ln k and ln(k+1) lie within a first loss's own spread from k = 6 on: 1.9 could be 6, 7 or 8 classes,
    4.6 a 91-character vocabulary as well as 100 classes (seen on the held-out language models)."""
    assert inferred({"train/loss": falling(first)}) is None


@pytest.mark.parametrize("k", [7, 20, 100])
def test_a_loss_that_never_leaves_ln_k_tells_any_k(k):
    rng = np.random.default_rng(k)
    assert inferred({"val/loss": math.log(k) + 0.0001 * rng.standard_normal(12)}).n == k


def test_a_model_that_never_leaves_its_init_sits_a_little_above_ln_k_and_tells_k():
    """A learning rate of 1e-9: the loss stays at 2.308 for every epoch, ln 10 plus the init's excess."""
    assert inferred({"train/loss": np.full(12, 2.308), "val/loss": np.full(12, 2.306)}).n == 10


def test_a_flat_level_too_far_above_ln_k_for_an_init_tells_nothing():
    assert inferred({"val/loss": np.full(12, math.log(10) + 0.06)}) is None


def test_a_fine_tune_starting_near_a_small_ln_k_is_not_read_as_k():
    """A LoRA fine-tune whose first points sit at 2.06 (3% below ln 8) before falling: no count."""
    rng = np.random.default_rng(3)
    loss = np.r_[2.06 + 0.005 * rng.standard_normal(6), np.linspace(2.0, 1.4, 180)]
    assert inferred({"loss": loss}) is None


def test_an_epoch_average_is_not_the_untrained_loss():
    """A train loss logged once per epoch (as often as validation) starts at the first epoch's mean."""
    curves = {"train/loss": falling(2.31, n=10), "val/loss": falling(2.0, n=10)}
    assert inferred(curves) is None


def test_an_epoch_average_beside_a_test_accuracy_is_not_the_untrained_loss():
    """A script that tests every epoch logs its train loss as rarely: 1.63 after epoch 1 is a mean over learning,
    not ln 5 at step 0 (CIFAR-10)."""
    curves = {"Train_Loss": falling(1.63, n=20, end=0.5), "Test_Acc": np.linspace(0.3, 0.8, 20)}
    assert inferred(curves, steps={"Train_Loss": np.arange(1, 21), "Test_Acc": np.arange(1, 21)}) is None


def test_an_accuracy_at_one_over_k_and_a_loss_at_ln_k_make_a_certain_count():
    rng = np.random.default_rng(0)
    count = inferred({"train/loss": 2.303 + 0.01 * rng.standard_normal(200),
                      "val/loss": np.full(10, 2.3026), "val/acc": 0.1 + 0.004 * rng.standard_normal(10)},
                     steps={"val/loss": np.arange(10) * 20 + 19, "val/acc": np.arange(10) * 20 + 19})
    assert count.n == 10 and count.certain


def test_an_accuracy_that_sat_at_chance_before_it_learned_is_evidence():
    acc = np.r_[np.full(5, 0.1), np.linspace(0.15, 0.38, 45)]
    count = inferred({"val/acc": acc})
    assert count.n == 10 and "at the first 5 of 50 evaluations" in count.source
    assert inferred({"val/acc": np.r_[0.2044, 0.22, 0.2267, np.linspace(0.25, 0.3, 9)]}) is None


def test_an_accuracy_at_one_over_k_beside_a_loss_no_unlearned_model_scores_is_no_evidence():
    """Four public runs read a count off an accuracy at 1/k that was a learned level: a 120-breed classifier at
    0.25 beside a validation loss of 2.9 (2.1× ln 4), a language model's token accuracy at 0.26, an EEG model at
    0.48 among 6 classes. An unlearned model over k classes scores about ln k beside 1/k; one whose loss blew up
    (50× ln 10) is broken, and its constant answer scores 1/k on balanced data."""
    steps = {"val/loss": np.arange(10) * 20 + 19, "val/acc": np.arange(10) * 20 + 19}
    learned = np.r_[np.full(5, 0.2485), np.linspace(0.25, 0.28, 5)]
    assert inferred({"val/acc": learned, "val/loss": np.full(10, 2.9)}, steps=steps) is None
    assert inferred({"val/acc": learned, "val/loss": np.full(10, 1.40)}, steps=steps).n == 4
    assert inferred({"val/acc": np.full(10, 0.1), "val/loss": np.full(10, 118.9)}, steps=steps).n == 10


def test_a_loss_at_ln_k_beside_an_accuracy_twice_one_over_k_is_no_evidence():
    """A temperature-only fine-tune of an 8-class model: its validation loss sits at 1.778, near ln 6, beside an
    accuracy of 0.3375, twice 1/6: no model guessing among 6 classes scores that (nor among 3, with a loss 1.6×
    ln 3). An accuracy of 0.40, no 1/k of its own, rules out the 6 alone."""
    steps = {"val/loss": np.arange(10) * 20 + 19, "val/acc": np.arange(10) * 20 + 19}
    assert inferred({"val/loss": np.full(10, 1.778), "val/acc": np.full(10, 0.3375)}, steps=steps) is None
    assert inferred({"val/loss": np.full(10, 1.778), "val/acc": np.full(10, 0.40)}, steps=steps) is None
    assert inferred({"val/loss": np.full(10, 1.778), "val/acc": np.full(10, 0.17)}, steps=steps).n == 6


def test_curves_that_disagree_give_no_count():
    assert inferred({"train/loss": falling(0.69), "val/acc": np.full(10, 0.1)}) is None


def test_a_count_read_off_a_start_does_not_judge_that_start():
    run = RunCurves(synthetic({"train/loss": np.r_[0.72, falling(0.5)]}))
    assert run.n_classes == 2 and chance_loss_of(run, run.curve(Role.TRAIN_LOSS)) is None


def test_a_recorded_count_the_curves_contradict_with_certainty_gives_way():
    """A CIFAR-10 run whose config records a 200-way head: loss at ln 10 and accuracy at 10% all run long."""
    rng = np.random.default_rng(1)
    run = synthetic({"train/loss": 2.3026 + 0.002 * rng.standard_normal(50), "val/loss": np.full(50, 2.3026),
                     "val/acc": np.full(50, 10.0)}, n_classes=200)
    count = class_count(RunCurves(run))
    assert count.n == 10 and count.certain and "records 200" in count.source


def test_an_accuracy_that_never_moved_from_a_tenth_rules_out_a_recorded_200_on_its_own():
    """The same 200-way head, the loss far from any ln k: a constant prediction on 200 balanced classes scores
    0.005, not 10% at every evaluation. The count is the curves', uncertain (one kind of evidence)."""
    run = synthetic({"train/loss": 2.5 + 2.5 * np.exp(-np.arange(50) / 3), "val/loss": np.linspace(2.6, 2.5, 5),
                     "val/acc": np.full(5, 10.0)}, n_classes=200, steps={"val/loss": np.arange(5) * 10 + 9,
                                                                      "val/acc": np.arange(5) * 10 + 9})
    count = class_count(RunCurves(run))
    assert count.n == 10 and not count.certain and "records 200" in count.source


def test_a_loss_nearer_ln_of_the_recorded_count_keeps_the_record_against_an_unmoved_accuracy():
    """25 sign classes recorded, accuracy 0.095-0.101 at every evaluation (the commonest signs' share), the loss at
    3.11, 97% of ln 25: no uniform guess over 10 classes scores a loss a third above ln 10."""
    rng = np.random.default_rng(3)
    run = synthetic({"train/loss": np.linspace(3.154, 3.032, 30), "val/loss": 3.11 + 0.003 * rng.standard_normal(30),
                     "val/acc": 0.098 + 0.002 * rng.standard_normal(30)}, n_classes=25)
    assert class_count(RunCurves(run)).n == 25


def test_an_accuracy_near_one_over_the_recorded_count_keeps_the_record():
    run = synthetic({"train/loss": np.linspace(2.5, 2.0, 50), "val/acc": np.full(5, 0.1)}, n_classes=8,
                    steps={"val/acc": np.arange(5) * 10 + 9})
    assert class_count(RunCurves(run)).n == 8


def test_a_finding_on_an_uncertain_count_says_so_and_drops_a_level():
    rng = np.random.default_rng(2)
    train = np.r_[0.6931, 0.45 * np.exp(-np.arange(299) / 30) + 0.24 + 0.01 * rng.standard_normal(299)]
    run = synthetic({"train/loss": train, "val/loss": np.full(10, 0.6930)},
                    steps={"val/loss": np.arange(10) * 30 + 29})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD302"]
    assert finding.severity == "warning"  # flat-at-chance is an error on a recorded count
    assert "assumed 2 classes because the first train/loss 0.6931 ≈ ln 2" in finding.evidence[-1]
    assert "uncertain" in finding.evidence[-1]


def test_inferred_counts_on_the_corpus_are_right_whenever_given():
    """Measured where the truth is known: every classification run of the corpus, its recorded count hidden."""
    right = wrong = 0
    for key, label in LABELS.items():
        if label["task"] != "classification":
            continue
        (run,) = curvedoc.load(CORPUS / key)
        run.meta.n_classes = None
        count = infer_class_count(RunCurves(run))
        if count is not None:
            right += count.n == label["n_classes"]
            wrong += count.n != label["n_classes"]
    # one run of 137 is wrong: a 10-class validation loss stuck at 2.04 for its 4 evaluations, 2% below ln 8
    assert wrong <= 1 and right >= 30


def test_a_perplexity_is_judged_as_the_loss_it_is_the_exponential_of():
    ppl = np.exp(np.r_[np.linspace(5, 3, 20), np.linspace(3, 4.5, 10)])
    run = synthetic({"train_loss": np.linspace(6, 2.5, 300), "val_ppl": ppl},
                    steps={"val_ppl": np.arange(30) * 10 + 9})
    curves = RunCurves(run)
    assert curves.curve(Role.VAL_LOSS).finite_values[0] == pytest.approx(5.0)
    (finding,) = [f for f in diagnose_run(run, curves=curves) if f.code == "CD501"]
    assert "val_ppl best = 3 " in finding.evidence[0]
    assert "ln(perplexity)" in finding.evidence[-1]


@pytest.mark.parametrize("parts, value, expected", [
    (("dataset",), "CIFAR-100", 100),
    (("data",), "./data/cifar10", 10),
    (("dataset", "value"), "IMDB", 2),  # W&B's config.yaml keeps each value under `value`
    (("dataset_name",), "stanfordnlp/imdb", 2),
    (("task_name",), "mnli", 3),
    (("data",), "coco128.yaml", None),  # detection: no fixed class count listed
    (("model",), "cifar10", None),  # not a key that names the data
    (("dataset",), 10, None),
])
def test_a_config_naming_a_public_benchmark_tells_its_class_count(parts, value, expected):
    from curvedoc.datasets import benchmark_classes

    found = benchmark_classes(parts, value)
    assert (found and found[1]) == expected


def test_a_config_naming_two_benchmarks_of_different_counts_tells_none():
    from curvedoc.model import facts_from

    assert facts_from({"dataset": "cifar10", "data": {"name": "cifar100"}}).benchmark is None
    assert facts_from({"dataset": "mnist", "data": "fashion_mnist"}).benchmark == ("dataset = 'mnist'", 10)


def _named(curves: dict, dataset: str, n_classes=None, steps=None):
    run = synthetic(curves, n_classes=n_classes, steps=steps)
    run.meta.benchmark_classes = (f"config: dataset = {dataset!r}", {"imdb": 2, "cifar10": 10}[dataset.lower()])
    return run


def test_a_named_benchmark_alone_is_an_uncertain_count_a_finding_names():
    """A per-batch loss at ln 2 all run long (IMDB sentiment that never learns), whose first batch says nothing and
    whose swings leave its level too loose to tell k: the config's dataset tells it."""
    rng = np.random.default_rng(3)
    run = _named({"train_loss": np.r_[1.5, math.log(2) + 0.02 * rng.standard_normal(2000)]}, "IMDB")
    count = class_count(RunCurves(run))
    assert count.n == 2 and count.inferred and not count.certain
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD302"]
    assert finding.severity == "warning"
    assert "config: dataset = 'IMDB' names a benchmark of 2 classes" in finding.evidence[-1]


def test_a_named_benchmark_a_curve_agrees_with_is_certain():
    run = _named({"train/loss": np.full(50, 2.3026), "val/acc": np.full(10, 0.1)}, "cifar10",
                 steps={"val/acc": np.arange(10) * 5 + 4})
    count = class_count(RunCurves(run))
    assert count.n == 10 and count.certain and "names a benchmark of 10 classes" in count.source


def test_a_recorded_count_or_certain_curves_outweigh_a_named_benchmark():
    assert class_count(RunCurves(_named({"train/loss": falling(1.5)}, "cifar10", n_classes=7))).n == 7
    certain = _named({"train/loss": np.full(50, 0.6931), "val/acc": np.full(10, 0.5)}, "cifar10",
                     steps={"val/acc": np.arange(10) * 5 + 4})
    assert class_count(RunCurves(certain)).n == 2


def test_a_generative_model_of_a_named_benchmark_raises_no_alarm_against_its_chance():
    """A VAE on MNIST: its loss (a reconstruction summed over pixels) is no cross-entropy over the 10 digits, and
    the named count is uncertain, so a comparison with ln 10 is at most a note."""
    rng = np.random.default_rng(0)
    run = _named({"loss": 16 + 28 * np.exp(-np.arange(300) / 30) + 0.3 * rng.standard_normal(300),
                  "val_loss": 17 + 10 * np.exp(-np.arange(10) / 2)}, "cifar10",
                 steps={"val_loss": np.arange(10) * 30 + 29})
    assert all(f.severity == "info" for f in diagnose_run(run))


def test_a_config_naming_the_benchmark_reaches_the_run(tmp_path):
    """A Lightning run whose hparams.yaml names its dataset and no class count; a CSV log whose args.json beside it
    does."""
    version = tmp_path / "lightning_logs" / "version_0"
    version.mkdir(parents=True)
    (version / "hparams.yaml").write_text("lr: 0.001\ndataset: fashion_mnist\n")
    rows = "\n".join(f"{step},0,{2.3026 + 0.001 * (step % 3)}" for step in range(60))
    (version / "metrics.csv").write_text("step,epoch,train_loss\n" + rows + "\n")
    (run,) = curvedoc.load(version)
    assert run.meta.benchmark_classes == ("config: dataset = 'fashion_mnist'", 10)
    assert "CD302" in {f.code for f in diagnose_run(run)}
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "args.json").write_text(json.dumps({"data": "./data/CIFAR-100", "lr": 0.1}))
    (plain / "log.csv").write_text("step,loss\n" + "\n".join(f"{step},{4.6 - step / 100}" for step in range(50)))
    (run,) = curvedoc.load(plain / "log.csv")
    assert run.meta.benchmark_classes == ("args.json: data = './data/CIFAR-100'", 100)


def test_a_recall_of_1_with_precision_equal_to_accuracy_is_a_binary_task_called_all_positive():
    """A fine-tuned classifier that learned only the prior (a real public run's shape): at its evaluations
    eval_recall is 1 and eval_precision equals eval_accuracy, the positive share of a 71-example set. Only a
    binary task's positive-class metrics make that identity; beside a loss sitting at ln 2 the count is certain."""
    evals = np.array([43, 86, 130])
    steps = {"eval_accuracy": evals, "eval_precision": evals, "eval_recall": evals, "eval_loss": evals}
    curves = {"loss": np.r_[np.full(7, 0.69), np.linspace(0.67, 0.61, 19)],
              "eval_accuracy": [43 / 71, 43 / 71, 44 / 71], "eval_precision": [43 / 71, 43 / 71, 0.63],
              "eval_recall": [1.0, 1.0, 0.895], "eval_loss": [0.668, 0.660, 0.635]}
    count = inferred(curves, steps)
    assert (count.n, count.certain) == (2, True) and "every example called positive" in count.source
    macro = dict(curves, eval_recall=[0.5, 0.5, 0.55])  # macro-averaged: a constant prediction's recall is 1/k
    count = inferred(macro, steps)  # the loss at ln 2 alone
    assert not count.certain and "called positive" not in count.source
