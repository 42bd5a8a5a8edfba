"""CD101 non-finite losses and CD102 negative losses: real runs that must fire, healthy ones that must not."""

from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HEALTHY = [
    "tensorboard/pytorch/healthy", "csv/lightning/healthy", "huggingface/digits_mlp", "wandb/offline",
    "tensorboard/tensorboardx/healthy", "csv/keras/training.log",
]
DIVERGED = ["tensorboard/pytorch/lr_too_high", "wandb/lr_too_high", "csv/generic/lr_too_high.csv",
            "jsonl/generic/lr_too_high.jsonl"]


def codes(run):
    return {finding.code for finding in diagnose_run(run)}


@pytest.mark.parametrize("path", DIVERGED)
def test_a_diverged_run_reports_its_first_nonfinite_step(path):
    (run,) = curvedoc.load(FIXTURES / path)
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD101"]
    loss = run.series(run.primary("train_loss"))
    first_bad = int(loss["step"][~np.isfinite(loss["value"])].iloc[0])
    assert finding.severity == "error" and finding.step == first_bad
    assert f"step {first_bad}" in finding.evidence[0] and finding.cheapest_check


@pytest.mark.parametrize("path", HEALTHY)
def test_healthy_runs_have_no_numeric_findings(path):
    for run in curvedoc.load(FIXTURES / path):
        assert not codes(run) & {"CD101", "CD102"}


def synthetic(tag, values, n_classes=None):
    builder = RunBuilder("/synthetic", "test")
    builder.add(tag, np.arange(len(values)), values)
    builder.meta.n_classes = n_classes
    return builder.build()


def test_nan_only_in_accuracy_is_a_warning():
    builder = RunBuilder("/synthetic", "test")
    builder.add("train/loss", np.arange(5), [2.0, 1.5, 1.2, 1.0, 0.9])
    builder.add("val/acc", np.arange(5), [0.1, 0.3, np.nan, 0.5, 0.6])
    (finding,) = [f for f in diagnose_run(builder.build()) if f.code == "CD101"]
    assert finding.severity == "warning" and finding.step == 2


def test_negative_cross_entropy_fires_and_rounding_does_not():
    values = np.linspace(2.0, -3.0, 50)
    (finding,) = [f for f in diagnose_run(synthetic("train/loss", values)) if f.code == "CD102"]
    assert finding.step == int(np.argmax(values < 0))
    rounding = np.r_[np.linspace(2.0, 0.0, 49), -1e-9]
    assert "CD102" not in codes(synthetic("train/loss", rounding))


def test_a_loss_negative_from_its_start_at_the_scale_it_ends_at_is_signed_by_design():
    """Speech enhancement trained on the negated SI-SNR: -6.1 dB at the first log, -17 at the end, whatever the
    tag says. NLLLoss on raw logits starts near 0 (the untrained logits) and runs away to -200: that one fires."""
    rng = np.random.default_rng(4)
    si_snr = -6.1 - 11 * (1 - np.exp(-np.arange(300) / 60)) + 2.5 * rng.standard_normal(300)
    assert "CD102" not in codes(synthetic("loss", si_snr))
    nll_on_logits = -0.03 - 200 * (1 - np.exp(-np.arange(300) / 60))
    assert "CD102" in codes(synthetic("loss", nll_on_logits))


def test_a_loss_that_falls_through_zero_and_settles_near_it_is_signed_by_design():
    """A public two-speaker separation run (negated SI-SNR, a running mean over the epoch): 40.9 at the first log,
    through zero at a third of the run, -3.2 at the end, closer to zero than it began. A loss that must stay >= 0
    and breaks runs away below zero further than it ever was above it (2.0 -> -3.0 here; NLLLoss on raw logits:
    -0.03 -> -200)."""
    separation = 44 * np.exp(-np.arange(21) / 3) - 3.2
    assert "CD102" not in codes(synthetic("train_loss", separation))
    assert "CD102" in codes(synthetic("train_loss", 5 * np.exp(-np.arange(21) / 3) - 3.0))


def test_a_held_out_loss_that_began_above_where_it_settles_below_zero_is_signed_by_design():
    """A public Sketch-RNN VAE (a mixture-density likelihood of pen offsets, which goes below zero): val/loss 1.84 at
    its first evaluation, 1.01, 0.80 … through zero, -1.34 at its lowest. The level of its first points (1.0) is
    lower than where it began, but it never got further below zero than its first value was above it."""
    falling = np.r_[1.842, 1.006, 0.80, 0.625, 0.592, np.linspace(0.43, -1.3, 95)]
    assert "CD102" not in codes(synthetic("val/loss", falling))


def test_a_held_out_loss_is_judged_from_where_its_train_loss_began():
    """A public nnU-Net run (cross-entropy plus the negated soft Dice, negative by design): train_loss 0.29 at epoch 0,
    -0.26 at the end; val_loss, first evaluated after a whole epoch of training, 0.13 -> -0.27. Measured from its own
    first value it ran away below zero; from where the loss began (the train loss's start) it did not. The same val
    curve beside a train loss that stays near zero is a broken loss."""
    epochs = np.arange(250)
    train = 0.29 * np.exp(-epochs / 4) - 0.27 * (1 - np.exp(-epochs / 60))
    val = 0.13 * np.exp(-epochs / 4) - 0.28 * (1 - np.exp(-epochs / 60))
    builder = RunBuilder("/synthetic", "test")
    builder.add("train_loss", epochs, train)
    builder.add("val_loss", epochs, val)
    assert "CD102" not in codes(builder.build())
    builder = RunBuilder("/synthetic", "test")
    builder.add("train_loss", epochs, 0.05 + 0.02 * np.exp(-epochs / 4))
    builder.add("val_loss", epochs, val)
    assert "CD102" in codes(builder.build())


@pytest.mark.parametrize("tag", ["train/policy_loss", "loss/entropy", "critic_loss", "train/elbo_loss", "loss_mmd"])
def test_losses_signed_by_design_are_left_alone(tag):
    assert "CD102" not in codes(synthetic(tag, np.linspace(1.0, -5.0, 30)))


def test_a_score_that_turns_nan_is_named_and_one_never_computed_is_not():
    import numpy as np

    from curvedoc.diagnose import diagnose_run
    from rule_cases import synthetic

    loss = np.linspace(2.0, 0.5, 40)
    run = synthetic({"total_loss": loss, "bbox/APs": np.full(4, np.nan), "bbox/AP": [20.0, 40.0, np.nan, np.nan]})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD101"]
    assert finding.severity == "warning" and finding.title == "bbox/AP becomes NaN at step 2"
    assert finding.tags == ["bbox/AP"]


def test_a_mean_reward_undefined_before_the_first_episode_ends_is_not_broken():
    """A public DQN's table logs its mean episode reward as NaN at frame 0 (np.mean of no episodes), then -21
    rising to 19: undefined until its first episode, not broken. A NaN after it had a value still is."""
    frames = np.arange(0, 30_000, 1000)

    def run_of(reward: np.ndarray):
        builder = RunBuilder("/synthetic", "test")
        builder.add("loss", frames, np.r_[0.02, np.geomspace(0.02, 0.0002, 29)])
        builder.add("reward", frames, reward)
        return builder.build()

    reward = np.r_[np.nan, np.linspace(-21, 19, 29)]
    assert "CD101" not in {f.code for f in diagnose_run(run_of(reward))}
    reward[20] = np.nan
    (finding,) = [f for f in diagnose_run(run_of(reward)) if f.code == "CD101"]
    assert finding.step == frames[20] and finding.severity == "warning"


def test_an_error_metric_that_turns_inf_is_named_and_one_never_computed_is_not():
    """A wind-power forecaster's first validation: val_mae=inf val_rmse=inf, finite after. An error metric (MAE,
    RMSE, WER) breaks as a loss would; a column the run never filled (NaN throughout) is undefined."""
    builder = RunBuilder("/synthetic", "test")
    builder.add("train_eps_loss", np.arange(6), [0.54, 0.30, 0.21, 0.17, 0.15, 0.14])
    builder.add("val_mae", np.arange(6), [np.inf, 1.9, 1.6, 1.5, 1.4, 1.4])
    builder.add("val_rmse", np.arange(6), [np.inf, 2.6, 2.2, 2.0, 1.9, 1.9])
    builder.add("test_wer", np.arange(6), np.full(6, np.nan))
    builder.add("tf", np.arange(6), [np.inf, 0.0, 0.0, 0.0, 0.0, 0.0])  # no error metric: not judged
    (finding,) = [f for f in diagnose_run(builder.build()) if f.code == "CD101"]
    assert finding.severity == "warning" and finding.tags == ["val_mae", "val_rmse"] and finding.step == 0


def test_a_metric_nan_throughout_beside_the_same_metric_of_another_split_with_values_is_broken():
    """A public Keras U-Net: dice_coefficient_t is NaN at all 32 epochs (it divides by a training batch's mask area,
    0 on its empty masks) while val_dice_coefficient_t has values: the examples are there and the metric fails on
    them. A Dice never logged with values on any split is undefined, as before."""
    epochs = np.arange(32)
    builder = RunBuilder("/synthetic", "test")
    builder.add("loss", epochs, np.geomspace(0.009, 0.0012, 32))
    builder.add("dice_coefficient_t", epochs, np.full(32, np.nan))
    builder.add("val_dice_coefficient_t", epochs, np.linspace(0.3, 0.7, 32))
    (finding,) = [f for f in diagnose_run(builder.build()) if f.code == "CD101"]
    assert finding.severity == "warning" and finding.tags == ["dice_coefficient_t"] and finding.step == 0
    assert "while val_dice_coefficient_t does" in finding.evidence[-1]
    builder = RunBuilder("/synthetic", "test")
    builder.add("loss", epochs, np.geomspace(0.009, 0.0012, 32))
    builder.add("dice_coefficient_t", epochs, np.full(32, np.nan))
    builder.add("val_dice_coefficient_t", epochs, np.full(32, np.nan))
    assert "CD101" not in codes(builder.build())


def test_the_headline_score_nan_at_every_evaluation_that_computed_others_is_broken():
    """A public VoteNet on KITTI: its evaluation prints Car AP 0.003 -> 0.62 while Van AP, with no Van in the set,
    is NaN, and so is the mAP, the mean taken with that NaN in it, at all 21 evaluations: the run's headline score
    is never usable. One class's AP alone NaN throughout is a class without examples, undefined, as before."""
    evaluations = np.arange(100, 2200, 100)
    builder = RunBuilder("/synthetic", "test")
    builder.add("mean_loss", np.arange(10, 2010, 10), np.geomspace(40, 10, 200))
    builder.add("eval_mean_loss", evaluations, np.geomspace(26, 10.6, 21))
    builder.add("eval_Car_Average_Precision", evaluations, np.linspace(0.003, 0.62, 21))
    builder.add("eval_Van_Average_Precision", evaluations, np.full(21, np.nan))
    builder.add("eval_mAP", evaluations, np.full(21, np.nan))
    (finding,) = [f for f in diagnose_run(builder.build()) if f.code == "CD101"]
    assert finding.severity == "warning" and finding.tags == ["eval_mAP"] and finding.step == 100
    assert "while eval_Car_Average_Precision does" in finding.evidence[-1]
    builder = RunBuilder("/synthetic", "test")
    builder.add("mean_loss", np.arange(10, 2010, 10), np.geomspace(40, 10, 200))
    builder.add("eval_Car_Average_Precision", evaluations, np.linspace(0.003, 0.62, 21))
    builder.add("eval_Van_Average_Precision", evaluations, np.full(21, np.nan))
    assert "CD101" not in codes(builder.build())
    builder = RunBuilder("/synthetic", "test")  # the headline may be either class's: neither is judged so
    builder.add("mean_loss", np.arange(10, 2010, 10), np.geomspace(40, 10, 200))
    builder.add("eval_Van_Average_Precision", evaluations, np.full(21, np.nan))
    builder.add("eval_Car_Average_Precision", evaluations, np.linspace(0.003, 0.62, 21))
    assert "CD101" not in codes(builder.build())


def test_a_perplexity_capped_at_inf_beside_a_finite_loss_is_no_overflow():
    """A trainer that prints exp(loss) only below 10 nats and inf above (the held-out loss of the first evaluations
    of a language model) logs an infinite perplexity beside a finite loss: the loss is fine, and so is the run. An
    infinite perplexity with no finite loss at its step is still reported."""
    steps = np.arange(0, 500, 100)
    losses = np.array([12.0, 10.5, 9.1, 7.9, 7.2])
    builder = RunBuilder("/synthetic", "test")
    builder.add("train_loss", steps, losses - 0.2)
    builder.add("eval_Loss", steps, losses)
    builder.add("eval_Perplexity", steps, np.where(losses < 10, np.exp(losses), np.inf))
    assert "CD101" not in codes(builder.build())
    builder = RunBuilder("/synthetic", "test")
    builder.add("train_loss", steps, losses - 0.2)
    builder.add("eval_Perplexity", steps, np.where(losses < 10, np.exp(losses), np.inf))
    assert "CD101" in codes(builder.build())
