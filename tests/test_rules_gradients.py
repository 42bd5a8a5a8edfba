"""CD701 exploding and CD702 vanishing gradients: real runs that must fire, healthy runs that must not."""

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from rule_cases import (CORPUS, FIXTURES, HEALTHY_FIXTURES, alarms_at, findings, healthy_corpus_runs,
                        labelled_corpus_runs, synthetic)

# Those that log a gradient norm are the evidence (PyTorch, tensorboardX, W&B, Detectron2, the batch-1 and batch-2
# runs whose per-example norms are 100–1000× their median on hard examples); the rest must simply stay quiet.
HEALTHY = HEALTHY_FIXTURES + ["jsonl/detectron2/metrics.json", "stability/healthy_batch1.jsonl",
                               "stability/healthy_batch2_sgd.jsonl", "gradients/deep_relu_layers"]
OURS = {"CD701", "CD702"}


def alarms(run):
    return {f.code for f in diagnose_run(run) if f.severity in ("error", "warning")} & OURS


@pytest.mark.parametrize("path", [FIXTURES / path for path in HEALTHY]
                         + [CORPUS / path for path in healthy_corpus_runs()])
def test_healthy_runs_have_no_gradient_findings(path):
    assert not alarms_at(path, OURS)


@pytest.mark.parametrize("path", labelled_corpus_runs({"exploding_grad"}))
def test_a_gradient_norm_growing_by_orders_of_magnitude_is_an_explosion(path):
    (finding,) = findings(CORPUS / path, "CD701")
    assert finding.severity == "error" and finding.step_range
    assert "×" in finding.title and any("loss" in line for line in finding.evidence)


def test_one_corrupt_batch_is_a_gradient_spike_with_the_loss_jump_in_the_evidence():
    (finding,) = findings(FIXTURES / "stability/corrupt_batch_grad.jsonl", "CD701")
    assert finding.step == 100 and finding.severity == "error" and not finding.step_range
    assert "train/loss at step 100 = 16.79" in " ".join(finding.evidence)


@pytest.mark.parametrize("path", labelled_corpus_runs({"vanishing_grad"}))
def test_a_vanished_gradient_while_the_loss_is_at_chance_is_reported(path):
    (finding,) = findings(CORPUS / path, "CD702")
    assert finding.severity == "warning" and finding.step_range
    assert "near zero" in finding.title


def test_converged_runs_have_small_gradients_and_no_vanishing_finding():
    """Loss ~1e-8 and gradient norms ~1e-7 at the end: vanished by any absolute measure, but the run is done."""
    for path in ("healthy/wine_sgd_high_lr", "healthy/cancer_sgd_lr2_converges"):
        for run in curvedoc.load(CORPUS / path):
            assert run.primary("grad_norm") and "CD702" not in alarms(run)


def grad_run(loss, grad):
    return synthetic({"train/loss": loss, "train/grad_norm": grad})


def healthy_curves(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    loss = 2.3 * np.exp(-np.linspace(0, 5, n)) * rng.lognormal(0, 0.3, n)
    grad = np.exp(-np.linspace(0, 2, n)) * rng.lognormal(0, 0.5, n)
    return loss, grad


def test_one_exploding_step_is_reported_with_the_loss_there():
    loss, grad = healthy_curves()
    grad[1500] *= 1e4
    loss[1500:] = np.nan
    (finding,) = [f for f in diagnose_run(grad_run(loss, grad)) if f.code == "CD701"]
    assert finding.step == 1500 and "becomes nan at step 1500" in " ".join(finding.evidence)


def test_a_norm_that_starts_exploded_while_the_loss_makes_no_progress_is_an_explosion_not_a_vanishing():
    """A public Marian fine-tune logs an epoch's mean gradient norm: 7.8e9, 1.3e5, 1.1e4, 118, then 17-50, while
    the loss climbs 4.57 -> 4.65 and only then falls to 2.6. The first updates exploded; the norm's fall back to its
    ordinary level is no vanishing. A warm-up whose large first norms already lower the loss is neither."""
    grad = np.array([7.8e9, 1.3e5, 1.1e4, 118, 50, 32, 24, 21, 19, 17])
    loss = np.array([4.57, 4.40, 4.47, 4.65, 3.54, 3.13, 2.94, 2.74, 2.65, 2.58])
    run = grad_run(loss, grad)
    assert alarms(run) == {"CD701"}
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD701"]
    assert finding.step == 0 and "no progress while the norm was that high" in " ".join(finding.evidence)
    warm_up = np.array([4.57, 3.2, 2.9, 2.7, 2.6, 2.5, 2.45, 2.4, 2.38, 2.35])
    assert not alarms(grad_run(warm_up, np.array([60, 25, 9, 4, 3, 2.6, 2.4, 2.2, 2.1, 2.0])))
    assert not alarms(grad_run(loss, np.array([60, 25, 9, 4, 3, 2.6, 2.4, 2.2, 2.1, 2.0])))


def test_a_norm_that_grows_while_the_loss_drifts_away_from_its_lowest_is_an_explosion():
    """A peptide VAE's shape (a public run): the loss settles at 0.03, then climbs for the rest of the run to 0.43
    while the gradient norm's level grows 11-24× from where it stood then. The growth counts from the loss's lowest
    point, not from the first norms, which were as large (early training); the same norm beside a loss that keeps
    falling is no explosion."""
    rng = np.random.default_rng(13)
    fall = 0.03 + 3.4 * np.exp(-np.arange(100) / 10)
    drifting = np.r_[fall, 0.03 * np.exp(np.linspace(0, np.log(14), 300))] * rng.lognormal(0, 0.1, 400)
    growing = 0.5 * np.exp(np.linspace(0, np.log(24), 300))
    grad = np.r_[np.linspace(6, 0.5, 100), growing] * rng.lognormal(0, 0.2, 400)
    (finding,) = [f for f in diagnose_run(grad_run(drifting, grad)) if f.code == "CD701"]
    assert "where train/loss stood lowest" in finding.evidence[0] and finding.step > 100
    falling = np.r_[fall, np.linspace(0.03, 0.02, 300)] * rng.lognormal(0, 0.1, 400)
    assert "CD701" not in {f.code for f in diagnose_run(grad_run(falling, grad))}


def test_isolated_inf_norms_of_mixed_precision_are_skipped_steps():
    loss, grad = healthy_curves()
    grad[[100, 700, 1300]] = np.inf
    run = grad_run(loss, grad)
    assert not alarms(run)


def test_tiny_batch_gradient_noise_is_not_an_explosion():
    rng = np.random.default_rng(1)
    loss, grad = healthy_curves(4000, seed=1)
    hard = rng.random(4000) < 0.02  # one misclassified example: a gradient 100–1000× the median of easy ones
    grad[hard] *= 10 ** rng.uniform(2, 3, hard.sum())
    assert not alarms(grad_run(loss, grad))


def test_all_zero_gradients_are_a_clue_not_a_vanishing_alarm():
    loss = 2.3 + 0.01 * np.random.default_rng(2).standard_normal(300)
    found = [f for f in diagnose_run(grad_run(loss, np.zeros(300))) if f.code == "CD702"]
    assert [f.severity for f in found] == ["info"] and "exactly 0" in found[0].title


def test_zero_norms_of_accumulation_steps_are_not_a_vanished_gradient():
    _, grad = healthy_curves()
    loss = np.linspace(2.3, 1.6, len(grad))  # a hard task: the loss stays high, which is no reason to fire
    grad[np.arange(len(grad)) % 4 != 3] = 0.0  # only every 4th step updates; the others log 0
    assert not alarms(grad_run(loss, grad))


def test_gradients_that_collapse_while_the_loss_stays_high_vanish():
    rng = np.random.default_rng(3)
    loss = 2.3 - 0.1 * np.linspace(0, 1, 500) + 0.02 * rng.standard_normal(500)
    grad = np.r_[np.full(100, 1.0), np.full(400, 1e-4)] * rng.lognormal(0, 0.2, 500)
    (finding,) = [f for f in diagnose_run(grad_run(loss, grad)) if f.code == "CD702"]
    assert finding.step_range[0] >= 95


def test_a_few_epoch_points_are_judged_without_error():
    run = grad_run([2.3, 1.2, 0.8, 0.6, 0.5], [1.0, 0.8, 0.5, 0.4, 0.3])
    assert not alarms(run)


def test_the_first_layers_vanish_first_and_the_finding_lists_them():
    """Ten sigmoid layers at a tenth of the default init: the total norm is the last layer's, ordinary; the first
    eight layers' norms are 1e-17 to 1e-4 while the loss sits at chance."""
    (finding,) = findings(FIXTURES / "gradients" / "deep_sigmoid_layers", "CD702")
    assert finding.severity == "warning" and "8 of 10 layer gradient norms" in finding.title
    assert finding.tags[0] == "grad_norm/0.weight" and "grad_norm/total" not in finding.tags
    assert "in logging order: grad_norm/0.weight, grad_norm/2.weight" in finding.evidence[0]


def test_an_explosion_only_the_layers_show_is_found_once():
    """No total norm is logged: the corrupt batch shows on every layer at step 120, reported once, on the first."""
    (finding,) = findings(FIXTURES / "gradients" / "corrupt_batch_layers", "CD701")
    assert finding.step == 120 and finding.tags[0] == "grad_norm/0.weight"
    assert sum("shows it too" in line for line in finding.evidence) == 3


def test_a_layer_exploding_under_a_quiet_total_is_reported():
    rng = np.random.default_rng(4)
    steps = 600
    total = 1.0 + 0.05 * rng.standard_normal(steps)
    layer = 1e-3 * np.exp(0.1 * rng.standard_normal(steps))
    layer[400] = 5.0  # 5,000× its level, still small beside the total
    loss = np.linspace(2.3, 0.3, steps) + 0.02 * rng.standard_normal(steps)
    loss[400:] += 1.5  # the step it took threw the embeddings: the loss is back near its start
    run = synthetic({"train/loss": loss, "grad_norm/total": total, "grad_norm/encoder.embed.weight": layer})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD701"]
    assert finding.tags[0] == "grad_norm/encoder.embed.weight" and finding.step == 400


def test_a_norm_spike_the_loss_shows_nothing_of_left_no_trace():
    """A fine-tune that fits its training set to ~0 (the Hugging Face Trainer logs the norm before clipping it):
    a misfit batch makes a norm 10,000× the median of easy ones, and a loss that is a rare excursion, no more;
    the points after it are where they were."""
    rng = np.random.default_rng(5)
    steps = 600
    loss = 0.7 * np.exp(-np.linspace(0, 8, steps)) * rng.lognormal(0, 0.5, steps)
    grad = 3 * np.exp(-np.linspace(0, 6, steps)) * rng.lognormal(0, 0.5, steps)
    misfit = rng.choice(np.arange(100, steps), 12, replace=False)
    loss[misfit] *= 10 ** rng.uniform(1.5, 2.5, 12)
    grad[misfit] *= 10 ** rng.uniform(1.5, 2.5, 12)
    spike = misfit[0]
    grad[spike] = 1e4 * np.median(grad[spike - 20:spike])
    loss[spike] = 10 * np.median(loss[spike - 20:spike])  # a misfit batch, smaller than the loss's rarest ones
    assert "CD701" not in alarms(grad_run(loss, grad))
    loss[spike + 1:] *= 20  # the same spike, after which the loss stays up: it threw the weights
    assert "CD701" in alarms(grad_run(loss, grad))


def test_a_norm_that_explodes_within_its_first_steps_is_measured_from_its_first_few():
    """A vanilla RNN at SGD LR 2 (a real held-out run's shape): its head's norm goes 0.3 → 8 in four of 129 logged
    steps and stays there while the loss climbs 2.35 → 200. Its start is its first few norms, not a twentieth of
    the log, which would already hold the explosion."""
    rng = np.random.default_rng(4)
    grad = np.r_[0.27, 0.46, 1.44, 4.87, 7.7 + 0.4 * rng.standard_normal(125)]
    loss = np.r_[2.35, 2.3, 3.5, 20.0, 150 + 60 * rng.random(125)]
    (finding,) = [f for f in diagnose_run(grad_run(loss, grad)) if f.code == "CD701"]
    assert finding.step <= 6 and "median 0.46 over the first points" in finding.evidence[0]


def test_layer_norms_compare_only_with_norms_of_their_own_order():
    """OLMo's gradient-provenance log: an L2 and an L1 norm of the embedding's and the output projection's gradient.
    The L1 norm sums every element of a 50,000 × 768 matrix, so it is thousands of times the L2 norm of the same
    layer: beside it the L2 norms look vanished, though they are ordinary. Two L2 layers that far apart vanish."""
    rng = np.random.default_rng(4)
    loss = 9.0 - 3.4 * np.linspace(0, 1, 37) ** 0.3 + 0.05 * rng.standard_normal(37)
    wiggle = rng.lognormal(0, 0.2, (4, 37))
    provenance = {"train/CrossEntropyLoss": loss,
                  "grad_provenance/embedding_grad_l2_norm": 0.006 * wiggle[0],
                  "grad_provenance/embedding_grad_l1_norm": 12.0 * wiggle[1],
                  "grad_provenance/output_proj_grad_l2_norm": 0.05 * wiggle[2],
                  "grad_provenance/output_proj_grad_l1_norm": 40.0 * wiggle[3]}
    assert not [f for f in diagnose_run(synthetic(provenance)) if f.code == "CD702"]
    provenance["grad_provenance/output_proj_grad_l2_norm"] = 40.0 * wiggle[2]
    (finding,) = [f for f in diagnose_run(synthetic(provenance)) if f.code == "CD702"]
    assert finding.tags[0] == "grad_provenance/embedding_grad_l2_norm"
