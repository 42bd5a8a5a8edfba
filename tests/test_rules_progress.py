"""CD301 flat_from_start, CD302 flat_at_chance, CD303 plateau_high, CD304 underfitting: real runs that must fire,
healthy real runs (incl. hard negatives: tiny batches, fast-then-slow, warmup + cosine, MSE) that must not, and
synthetic edge cases (noise only, a million points, 5 epoch points, resumed runs, converged runs)."""

import numpy as np
import pytest

from curvedoc.diagnose import diagnose_run
from rule_cases import CORPUS, FIXTURES, HEALTHY_FIXTURES, codes, codes_at, findings, healthy_corpus_runs, synthetic

MY_CODES = {"CD301", "CD302", "CD303", "CD304"}


def findings_of(run, code: str) -> list:
    return [finding for finding in diagnose_run(run) if finding.code == code]


@pytest.mark.parametrize("name", ["lr_zero", "step_missing", "zero_grad_after_backward", "wrong_param_group",
                                  "detached_output_regression", "lr_zero_regression"])
def test_a_loss_that_never_moves_fires_flat_from_start(name):
    (finding,) = findings(CORPUS / "flat_from_start" / name, "CD301")
    assert finding.severity == "error" and finding.step_range and "noise allows" in finding.evidence[0]


@pytest.mark.parametrize("path", ["flat_at_chance/input_zeroed", "flat_at_chance/input_zeroed_iris",
                                  "flat_at_chance/input_zeroed_wine", "flat_from_start/lr_zero"])
def test_a_run_frozen_at_chance_is_both_flat_and_at_chance(path):
    assert {"CD301", "CD302"} <= codes_at(CORPUS / path)


def test_a_flat_noisy_loss_beside_an_accuracy_that_climbs_is_no_frozen_model():
    # a triplet loss that mining keeps near its margin while retrieval accuracy climbs 0.75 -> 0.90
    rng = np.random.default_rng(4)
    loss = 0.45 + rng.normal(0, 0.03, 20)
    climbing = np.linspace(0.75, 0.90, 20) + rng.normal(0, 0.01, 20)
    assert "CD301" in codes(synthetic({"loss": loss}))
    assert "CD301" not in codes(synthetic({"loss": loss, "acc": climbing}))


def test_a_pinned_loss_is_flat_whatever_an_accuracy_beside_it_does():
    # 0.743668 at every log: no longer computed from weights that change, however train accuracy moves
    loss = np.r_[0.7482, 0.7437, np.full(40, 0.743668)]
    assert "CD301" in codes(synthetic({"loss": loss, "acc": np.linspace(0.87, 0.998, 42)}))


@pytest.mark.parametrize("path", ["csv/lightning/shuffled_labels", "huggingface/digits_mlp_shuffled"])
def test_shuffled_labels_keep_the_validation_loss_at_chance(path):
    (finding,) = findings(FIXTURES / path, "CD302")
    assert "−log(1/10) = 2.303" in finding.evidence[0]
    assert any("1/10 = 0.1" in line for line in finding.evidence)  # the accuracy agrees


@pytest.mark.parametrize("name", ["lr_decayed_to_zero", "lr_decayed_to_zero_sgd", "lr_decayed_to_zero_wine",
                                  "lr_decayed_to_zero_cancer"])
def test_a_decayed_learning_rate_leaves_a_high_plateau_and_says_so(name):
    (finding,) = findings(CORPUS / "plateau_high" / name, "CD303")
    assert any("the schedule had cut the LR" in line for line in finding.evidence)
    assert finding.step_range[0] < finding.step_range[1]


@pytest.mark.parametrize("name", ["tiny_model_weight_decay", "tiny_model_weight_decay_wine",
                                  "tiny_model_weight_decay_cancer", "tiny_model_weight_decay_epochs"])
def test_a_tiny_regularised_model_underfits(name):
    codes = codes_at(CORPUS / "underfitting" / name)
    assert "CD304" in codes and not codes & {"CD301", "CD302", "CD303"}


@pytest.mark.parametrize("path", HEALTHY_FIXTURES)
def test_healthy_fixtures_make_progress(path):
    assert not codes_at(FIXTURES / path) & MY_CODES


@pytest.mark.parametrize("path", healthy_corpus_runs())
def test_healthy_corpus_runs_make_progress(path):
    assert not codes_at(CORPUS / path) & MY_CODES


def test_a_million_points_of_pure_noise_are_flat_and_cheap():
    rng = np.random.default_rng(0)
    run = synthetic({"train/loss": 1.7 + rng.normal(0, 0.3, 1_000_000)})
    assert "CD301" in codes(run)


def test_a_frozen_model_logged_each_step_and_each_epoch_is_flat_on_its_epoch_averages():
    """Lightning's train_loss_step beside train_loss_epoch, four batches an epoch (a public EEG-to-fMRI regression
    with unnormalised targets: 2.68777e8 -> 2.68736e8 over 68 epochs): the step values are the same four per-batch
    losses every epoch (2.891e8, 2.884e8, 2.548e8, 2.114e8, unshuffled), whose first points and last tenth say
    nothing of a level; the averages do not move. A model that learns moves its averages too, and is no finding."""
    batches = np.array([2.891e8, 2.884e8, 2.548e8, 2.114e8])
    per_step = np.tile(batches, 68)
    epochs = np.arange(68) * 4 + 3
    frozen = {"train_loss_step": per_step, "train_loss_epoch": np.full(68, batches.mean()) - np.arange(68) * 600,
              "val_loss_epoch": np.full(68, 2.6877e8) - np.arange(68) * 600}
    run = synthetic(frozen, steps={"train_loss_epoch": epochs, "val_loss_epoch": epochs})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD301"]
    assert finding.tags[0] == "train_loss_epoch"
    learning = {**frozen, "train_loss_step": per_step * np.repeat(np.geomspace(1, 0.3, 68), 4),
                "train_loss_epoch": batches.mean() * np.geomspace(1, 0.3, 68)}
    assert "CD301" not in codes(synthetic(learning, steps={"train_loss_epoch": epochs, "val_loss_epoch": epochs}))


def test_a_loss_that_fell_in_its_first_epoch_is_not_flat_on_its_epoch_averages():
    """A public Lightning run (a tiny transformer on a 3-token process): train_loss_step falls 1.35 -> 0.96 -> 0.91
    in its first 15 steps, then sits at its entropy floor for 50,000 steps, and train_loss_epoch (first point: the
    average of the first epoch) is 0.889 throughout. The epoch averages are flat, but the model moved, within the
    first epoch: no frozen model."""
    rng = np.random.default_rng(2)
    per_step = np.r_[1.35, 0.957, 0.910, 0.889 + rng.normal(0, 0.004, 2000)]
    epochs = np.arange(100) * 20 + 19
    run = {"train_loss_step": per_step, "train_loss_epoch": 0.8885 + rng.normal(0, 0.0002, 100)}
    assert "CD301" not in codes(synthetic(run, steps={"train_loss_epoch": epochs}))
    # the same epoch averages beside step losses that start where they stay: nothing moved at any point
    frozen = {**run, "train_loss_step": 0.889 + rng.normal(0, 0.004, 2003)}
    assert "CD301" in codes(synthetic(frozen, steps={"train_loss_epoch": epochs}))


def test_very_noisy_but_improving_is_not_flat():
    rng = np.random.default_rng(1)
    trend = np.linspace(1.0, 0.8, 2000)
    run = synthetic({"train/loss": trend + rng.normal(0, 0.4, 2000)})
    assert "CD301" not in codes(run)


def test_an_agents_episode_returns_as_spread_as_its_game_can_still_be_flat():
    """A2C on a puzzle game (a real public monitor.csv's shape): 718 episode scores spread 18-1,146 around a median
    of 208, the medians of every tenth within their noise of each other: the policy never improved. The same
    spread around returns that climb is no flat start."""
    rng = np.random.default_rng(7)
    scores = rng.lognormal(np.log(200), 0.6, 718)
    assert "CD301" in codes(synthetic({"episode_reward": scores}))
    assert "CD301" not in codes(synthetic({"episode_reward": scores * np.linspace(1, 1.6, 718)}))


def test_an_agents_reward_that_gains_beyond_its_noise_moved_however_small_a_share_of_its_level():
    """An RL4CO scheduling policy (a real public run's shape): val/reward, minus the makespan, goes -114.5 -> -110.5
    within its first 20 of 200 evaluations and stays there ±0.3. Four units are 3.5% of a level its game chose, and
    13 times its noise: the policy learned. A reward that wanders ±0.3 around -114.5 did not."""
    rng = np.random.default_rng(3)
    gained = -110.5 - 4.0 * np.exp(-np.arange(200) / 8.0) + rng.normal(0, 0.3, 200)
    assert "CD301" not in codes(synthetic({"val/reward": gained}))
    assert "CD301" in codes(synthetic({"val/reward": -114.5 + rng.normal(0, 0.3, 200)}))


def test_a_reward_whitened_per_batch_has_no_level_to_keep():
    """An LLM's PPO log (a real public run's shape): reward_mean is -0.0015 ± 0.002 at every step because each
    batch's rewards are normalised; it says nothing of progress. (Returns spread around a level away from 0 that
    never moves are flat: test_an_agents_episode_returns_as_spread_as_its_game_can_still_be_flat.)"""
    rng = np.random.default_rng(13)
    assert "CD301" not in codes(synthetic({"reward_mean": 0.0024 * rng.standard_normal(110) - 0.0015}))
    rng = np.random.default_rng(7)
    assert "CD301" in codes(synthetic({"episode_reward": rng.lognormal(np.log(200), 0.6, 718)}))


def test_a_metric_near_its_ceiling_moves_by_what_it_misses_of_perfect():
    """A log of scores only (no loss): a train SRCC 0.89 -> 0.93 closed a third of its gap to 1, which is no flat
    start, however small a share of its level; one that is 0.50 at every evaluation never moved."""
    climbing = [0.891, 0.905, 0.899, 0.918, 0.922, 0.917, 0.926]
    assert "CD301" not in codes(synthetic({"train_metrics/srcc": climbing}))
    assert "CD301" in codes(synthetic({"train_metrics/srcc": [0.50] * 7}))


def test_evaluation_scores_that_differ_come_from_a_model_that_moves():
    """OpenJERE's log of F1 only, one evaluation per epoch (a real public log's shape): 0.408 after the first of 49
    epochs, then 0.405-0.440 without a trend. Each evaluation follows training, and scores that differ come from
    weights that changed: a model near its best after one epoch, not one that never moved. The same score identical
    at every evaluation is a model that never changed."""
    rng = np.random.default_rng(7)
    f1 = 0.41 + 0.01 * np.linspace(0, 1, 49) + rng.normal(0, 0.008, 49)
    assert "CD301" not in codes(synthetic({"fscore": f1}))
    assert "CD301" in codes(synthetic({"fscore": np.full(20, 0.4081)}))


def test_a_success_rate_perfect_from_the_start_has_nowhere_to_go():
    """A Stable-Baselines Monitor of a policy loaded already trained (a real public log: 7,658 episodes, success 1
    on nine in ten of them from the first): a task it already solves is no flat start; one it never solves is."""
    rng = np.random.default_rng(3)
    solved = (rng.random(600) < 0.9).astype(float)
    solved[:5] = 1.0
    rewards = rng.normal(6.0, 2.0, 600)
    assert "CD301" not in codes(synthetic({"episode_reward": rewards, "success": solved}))
    assert "CD301" in codes(synthetic({"episode_reward": rewards, "success": np.zeros(600)}))


def test_ray_tunes_counters_do_not_make_a_supervised_trial_an_agent():
    """Every Ray Tune trial logs timesteps_since_restore and timesteps_total, RL or not: an LSTM regressor whose
    loss never moves (58.5 -> 57.7) is still judged flat."""
    rng = np.random.default_rng(2)
    flat = 57.7 + 0.8 * np.exp(-np.arange(150) / 3) + 0.05 * rng.standard_normal(150)
    run = synthetic({"train_loss": flat, "val_loss": flat + 1.6, "timesteps_since_restore": np.zeros(150),
                     "timesteps_total": np.zeros(150)})
    assert "CD301" in codes(run)


def test_a_dqn_whose_table_logs_its_exploration_is_an_agent():
    """A self-play DQN's table (avg_loss, epsilon, win_rate every 100 episodes): its TD loss moves with the targets
    and stays at its level by design; the decaying epsilon says an agent explores, so the loss is not judged flat."""
    rng = np.random.default_rng(4)
    loss = 0.004 + 0.0004 * rng.standard_normal(30)
    run = synthetic({"avg_loss": loss, "epsilon": np.linspace(0.97, 0.05, 30), "win_rate": 0.4 + 0.05 * rng.random(30)})
    assert "CD301" not in codes(run)
    assert "CD301" in codes(synthetic({"avg_loss": loss, "learning_rate": np.linspace(0.01, 0.001, 30)}))


def test_a_sparse_reward_with_small_penalties_is_no_whitened_reward():
    """A Breakout agent that never scores: 0 per episode two times in three, small penalties otherwise. It sits on
    0, a level it never leaves; a whitened reward is continuous and never repeats a value."""
    reward = np.tile([0.0, 0.0, -0.05, 0.0, -0.1, 0.0, -0.05, 0.0, 0.05, -0.05], 99)
    assert "CD301" in codes(synthetic({"episode_reward": reward}))


def test_a_sparse_reward_never_earned_is_flat():
    """An agent whose episode reward is 0 from the first episode to the last never earned one; its flat start is
    reported (the evidence says the change from 0, which has no share), and no rule fails on it."""
    run = synthetic({"episode_reward": np.zeros(300)})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD301"]
    assert "0 from 0" in " ".join(finding.evidence) and not run.warnings
    # from 0 to a penalty: a collapse whose share of the start has no meaning, said in the reward's own units
    run = synthetic({"episode_reward": np.r_[np.zeros(20), np.full(280, -5.0)]})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert "5 lower" in " ".join(finding.evidence) and not run.warnings


def test_the_environments_pay_per_step_beside_returns_that_climb_is_no_flat_run():
    """Lightning's DQN example logs CartPole's reward of the step (1 for every step survived: 1.0 at every log)
    beside the return of the last episode, which climbs 13 -> 200: the agent learned. Rewards that never move at
    all, each of them, still are a flat run."""
    rng = np.random.default_rng(0)
    returns = np.minimum(200, np.linspace(13, 260, 39) + rng.normal(0, 15, 39))
    run = synthetic({"reward": np.ones(39), "total_reward": returns, "train_loss": rng.lognormal(1, 1, 39)})
    assert "CD301" not in codes(run)
    assert "CD301" in codes(synthetic({"reward": np.ones(39), "total_reward": np.full(39, 9.0),
                                       "train_loss": rng.lognormal(1, 1, 39)}))


def test_returns_that_climb_from_an_unlucky_high_start_are_not_flat():
    """The first three episode scores (199, 375, 312) put the start level where the last tenth ends, 60% of
    improvement later: the tenths, not that start, say whether the policy moved."""
    rng = np.random.default_rng(12)
    scores = rng.lognormal(np.log(200), 0.6, 718) * np.linspace(1, 1.6, 718)
    assert "CD301" not in codes(synthetic({"episode_reward": scores}))


def test_five_epoch_points_that_do_not_move_are_flat():
    run = synthetic({"train/loss": [0.93, 0.94, 0.93, 0.93, 0.94], "val/loss": [0.95, 0.95, 0.95, 0.95, 0.95]})
    assert "CD301" in codes(run)


def test_a_converged_model_that_gains_nothing_is_a_warning_not_an_error():
    """A loss that starts at 1% of chance was trained before (a fine-tune, a restart): flat, it gained nothing,
    which is worth a warning, not the error of a model that never learned."""
    rng = np.random.default_rng(2)
    run = synthetic({"train/loss": 0.02 + rng.normal(0, 0.002, 500)}, n_classes=10)
    (finding,) = findings_of(run, "CD301")
    assert finding.severity == "warning" and "trained before" in finding.evidence[0]
    assert not codes(run) & (MY_CODES - {"CD301"})


def test_a_resumed_session_that_gains_nothing_is_a_warning_that_says_so():
    """A session resumed at step 9,000 that stays at 0.8: either the run had converged before it (compute
    wasted) or the resume lost the optimizer's state; not the error of a run that never learned."""
    rng = np.random.default_rng(3)
    steps = {"train/loss": np.arange(9000, 10000)}
    run = synthetic({"train/loss": 0.8 + rng.normal(0, 0.05, 1000)}, steps=steps)
    (finding,) = findings_of(run, "CD301")
    assert finding.severity == "warning" and "resumed session" in finding.evidence[0]


def test_an_mse_plateau_without_a_chance_level_or_lr_evidence_is_quiet():
    loss = 0.45 + 0.55 * np.exp(-np.arange(300) / 20)
    run = synthetic({"train/loss": loss, "val/loss": loss[::30] + 0.1})
    alarms = {f.code for f in diagnose_run(run) if f.severity != "info"}
    assert not alarms & MY_CODES
    # a start of 1.0 and 1.1 nats is near ln 3 by chance alone: a note at most, that says what it assumed
    assert all("assumed 3 classes" in f.evidence[-1] for f in run.findings if f.code in MY_CODES)


def test_warmup_cosine_flattening_low_is_healthy():
    steps = np.arange(1000)
    lr = np.where(steps < 100, steps / 100, 0.5 * (1 + np.cos(np.pi * (steps - 100) / 900))) * 1e-3
    loss = 0.03 + 2.27 * np.exp(-steps / 80)
    assert not codes(synthetic({"train/loss": loss, "lr": lr}, n_classes=10)) & MY_CODES


def test_an_lr_decayed_early_explains_a_plateau_even_without_a_class_count():
    steps = np.arange(600)
    lr = 1e-3 * 0.1 ** (steps // 60)
    loss = 1.2 + 1.1 * np.exp(-steps / 25)
    (finding,) = [f for f in diagnose_run(synthetic({"train/loss": loss, "lr": lr})) if f.code == "CD303"]
    assert "× its peak" in finding.evidence[-1]


def test_an_lr_low_at_the_plateau_but_raised_again_by_warm_restarts_explains_no_plateau():
    """A public MNIST run on a simulated memristor device: cosine with warm restarts every 25 epochs, so the LR is
    0.03x its peak where the loss levels off, and back at its peak 10 epochs later. The schedule did not hold the
    loss up; the same shape under a step schedule that stays cut does."""
    steps = np.arange(600)
    loss = 1.2 + 1.1 * np.exp(-steps / 25)
    restarts = 1e-3 * 0.5 * (1 + np.cos(np.pi * (steps % 100) / 100))
    assert "CD303" not in codes(synthetic({"train/loss": loss, "lr": restarts}))
    assert "CD303" in codes(synthetic({"train/loss": loss, "lr": 1e-3 * 0.1 ** (steps // 60)}))


def test_an_lr_cut_that_answers_a_stalled_validation_loss_explains_no_plateau():
    # Keras ReduceLROnPlateau (factor 0.2): each cut follows an evaluation that was no new best, so the plateau
    # caused the cuts, not the reverse (a BraTS segmentation run: loss 0.056 -> 0.026, val 0.055 -> 0.034)
    loss = [0.056, 0.043, 0.039, 0.040, 0.033, 0.030, 0.029, 0.028, 0.027, 0.0269, 0.0267, 0.0265, 0.0263, 0.0260,
            0.0260, 0.0259, 0.0259, 0.0259, 0.0258, 0.0258]
    val = [0.0546, 0.0453, 0.0453, 0.0507, 0.0388, 0.0366, 0.0366, 0.0368, 0.0355, 0.0352, 0.0346, 0.0347, 0.0349,
           0.03447, 0.03457, 0.03453, 0.03455, 0.03454, 0.03455, 0.03456]
    lr = [1e-3] * 4 + [2e-4] * 4 + [4e-5] * 5 + [8e-6] * 3 + [1.6e-6] * 2 + [1e-6] * 2
    assert "CD303" not in codes(synthetic({"loss": loss, "val_loss": val, "lr": lr}))
    # the same cuts on a validation loss still improving at each of them do explain where it stopped
    improving = list(np.linspace(0.0546, 0.0420, 8)) + list(0.0419 + 1e-5 * np.arange(12) % 3e-5)
    assert "CD303" in codes(synthetic({"loss": loss, "val_loss": improving, "lr": lr}))


def test_a_loss_that_fell_then_jumped_back_to_its_start_is_no_flat_start():
    # CIFAR-100 from scratch: 4.46 -> 3.36 over 31 epochs, back to ~4.1 at epoch 33 for the remaining 67
    rng = np.random.default_rng(8)
    loss = np.r_[3.3 + 1.2 * np.exp(-np.arange(32) / 8), np.full(68, 4.1)] + 0.03 * rng.standard_normal(100)
    val = loss + 0.05
    assert "CD301" not in codes(synthetic({"train/loss": loss, "val/loss": val}))


def test_a_minibatch_loss_that_wanders_with_batch_difficulty_is_still_flat():
    # a fine-tune logged every 50 micro-steps of batch 2: quarter means 2.46, 2.20, 2.08, 2.43, no trend
    rng = np.random.default_rng(9)
    loss = 2.3 + 0.25 * np.sin(np.arange(50) * 2 * np.pi / 25) + 0.35 * rng.standard_normal(50)
    assert "CD301" in codes(synthetic({"train/loss": loss}))


def test_a_held_out_loss_that_stops_changing_explains_a_plateau_without_lr_or_class_count():
    # no LR logged, no class count: validation repeats 1.416 to the digit for its last 15 of 20 evaluations
    loss = 1.4 + 0.9 * np.exp(-np.arange(600) / 20) + 0.05 * np.random.default_rng(2).standard_normal(600)
    val = np.r_[1.535, 1.45, 1.42, 1.417, 1.4161, np.full(15, 1.416)]
    run = synthetic({"train/loss": loss, "val/loss": val}, steps={"val/loss": np.arange(1, 21) * 30 - 1})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD303"]
    assert "last 15 of 20 evaluations" in finding.evidence[-1]


def test_a_converged_run_whose_schedule_ends_at_zero_is_no_plateau():
    # a cosine schedule's last evaluations repeat, but the loss went low: nothing stopped it early
    loss = 0.05 + 2.25 * np.exp(-np.arange(600) / 40)
    val = np.r_[0.05 + 2.25 * np.exp(-np.arange(0, 600, 30)[:17] / 40) + 0.02, np.full(3, 0.0702)]
    run = synthetic({"train/loss": loss, "val/loss": val}, steps={"val/loss": np.arange(1, 21) * 30 - 1})
    assert "CD303" not in codes(run)


def test_a_loss_still_falling_at_the_end_is_underfitting_not_a_plateau():
    loss = 2.3 - 1.0 * np.linspace(0, 1, 400)
    found = codes(synthetic({"train/loss": loss, "val/loss": loss[::40] + 0.05}, n_classes=10))
    assert "CD304" in found and "CD303" not in found


def test_a_run_stopped_early_when_validation_turned_up_is_overfitting_not_underfitting():
    """A public 4-class EEG run (ln 4 = 1.386), early-stopped on val_loss: train 1.44 → 1.02 and still falling at
    its last epoch while val_loss bottoms at epoch 7 and climbs ~11%. The train loss is high because the run
    stopped, not because the model cannot fit it: a bigger model would overfit sooner. Beside a train loss that
    levelled off high instead, the same validation curve shows a model that cannot fit: underfitting."""
    epochs = np.arange(23)
    val = np.r_[1.38, 1.36, 1.34, 1.33, 1.32, 1.31, 1.30, 1.29, np.linspace(1.33, 1.45, 15)]
    falling = 1.44 - 0.42 * epochs / 22
    found = codes(synthetic({"train_loss": falling, "val_loss": val}, n_classes=4))
    assert "CD501" in found and "CD304" not in found
    levelled = np.r_[np.linspace(1.44, 1.05, 8), np.full(15, 1.05)] + 0.003 * (-1) ** epochs
    found = codes(synthetic({"train_loss": levelled, "val_loss": val}, n_classes=4))
    assert "CD304" in found


def test_a_high_loss_beside_an_accuracy_near_perfect_is_no_underfitting():
    """A public binary malware detector (MalConv): train and validation cross-entropy level off at 0.36, half of
    ln 2, while validation accuracy sits at 0.975: hard or mislabelled examples keep the loss up, not a model that
    kept half of a uniform guess. The same losses beside an accuracy of 0.62 are a model that learned little."""
    epochs = np.arange(12)
    train = np.r_[0.52, 0.45, 0.40, np.full(9, 0.36)] + 0.002 * (-1) ** epochs
    val = np.r_[0.48, 0.42, 0.38, np.full(9, 0.362)] + 0.002 * (-1) ** (epochs + 1)
    for accuracy, underfits in ((0.975, False), (0.62, True)):
        val_acc = np.r_[np.linspace(accuracy - 0.1, accuracy, 3), np.full(9, accuracy)]
        found = codes(synthetic({"train_loss": train, "val_loss": val, "val_acc": val_acc}, n_classes=2))
        assert bool(found & {"CD303", "CD304"}) is underfits, (accuracy, found)


@pytest.mark.parametrize("values,n_classes,flat", [
    ([3.596, 3.577, 3.571], None, False),  # a public flan-t5 smoke test: 3 evaluations, 0.7% down
    ([0.0415, 0.0413, 0.0412], None, False),  # a 3-epoch YOLOv5 fine-tune from pretrained weights
    ([0.171511, 0.171499, 0.171490, 0.171479], None, True),  # lr 1e-5: 0.02% in 4 epochs, a thousandth of nothing
    ([10.10, 10.4851, 10.4851, 10.4851], None, True),  # the same value to the digit after the first
    ([2.302, 2.3015, 2.301], 10, True),  # at ln 10, where no learning leaves a loss
])
def test_three_or_four_points_that_barely_move_are_flat_only_when_they_keep_their_value_or_sit_at_chance(
        values, n_classes, flat):
    steps = {"eval_loss": np.arange(1, len(values) + 1)}
    found = codes(synthetic({"eval_loss": values}, n_classes=n_classes, steps=steps))
    assert bool(found & {"CD301", "CD302"}) is flat, found


def test_a_short_train_log_still_coming_down_has_not_shown_where_it_stays():
    """A BERT fine-tune for a binary task logged every 500 steps, one evaluation (a real public run's shape): its
    train loss 0.452 → 0.299 falls at every log, so 0.43× ln 2 at the last one is where it was, not where it stays.
    The same log levelled off at that height is stuck high (a plateau after its fast drop)."""
    falling = [0.452, 0.373, 0.344, 0.328, 0.299]
    steps = {"loss": np.arange(500, 3000, 500), "eval_loss": np.array([2500])}
    assert "CD304" not in codes(synthetic({"loss": falling, "eval_loss": [0.29]}, n_classes=2, steps=steps))
    settled = [0.452, 0.373, 0.344, 0.33, 0.335, 0.329, 0.332]
    steps = {"loss": np.arange(500, 4000, 500), "eval_loss": np.array([3500])}
    assert {"CD303", "CD304"} & codes(synthetic({"loss": settled, "eval_loss": [0.33]}, n_classes=2, steps=steps))


@pytest.mark.parametrize("path", ["memorizing/random_labels_cancer", "exploding_grad/sgd_diverging",
                                  "exploding_grad/warmup_too_high_diverging", "nan_inf/warmup_too_high_nan"])
def test_a_loss_that_rises_again_is_neither_a_plateau_nor_underfitting(path):
    assert not codes_at(CORPUS / path) & {"CD303", "CD304"}


def test_a_noisy_train_loss_on_a_plateau_is_not_still_falling():
    rng = np.random.default_rng(4)
    steps = np.arange(1000)
    loss = 1.3 + 1.0 * np.exp(-steps / 40) + rng.normal(0, 0.3, 1000)
    val = 1.35 + 0.1 * np.exp(-np.arange(10) / 2)
    found = codes(synthetic({"train/loss": loss, "val/loss": val}, n_classes=10,
                            steps={"val/loss": np.arange(99, 1000, 100)}))
    assert "CD303" in found and "CD304" not in found


@pytest.mark.parametrize("name", ["imbalanced_input_zeroed", "imbalanced_wine_zeroed", "imbalanced_digits_zeroed"])
def test_a_prior_only_model_is_left_to_accuracy_majority(name):
    # val accuracy takes one value at every evaluation: the plateau is the class prior, reported once (CD602)
    assert not codes_at(CORPUS / "accuracy_majority" / name) & {"CD303", "CD304"}


def test_a_language_model_stuck_at_log_vocabulary_is_at_chance():
    rng = np.random.default_rng(6)
    run = synthetic({"train/loss": np.log(32000) + rng.normal(0, 0.05, 3000)}, n_classes=32000)
    assert {"CD301", "CD302"} <= codes(run)


def test_a_short_curve_swinging_upwards_is_not_flat_within_its_own_swings():
    run = synthetic({"val/loss": [2.58, 4.68, 5.27, 5.81, 5.39, 4.41]})
    assert "CD301" not in codes(run)


def test_a_loss_that_turns_nan_is_left_to_cd101():
    rng = np.random.default_rng(7)
    run = synthetic({"train/loss": np.r_[19 + rng.normal(0, 5, 10), np.full(160, np.nan)]}, n_classes=10)
    found = codes(run)
    assert "CD101" in found and not found & {"CD301", "CD303", "CD304"}


def test_a_validation_loss_identical_at_every_evaluation_is_a_frozen_model():
    # The real run: a detached graph, so the weights never change; its train loss wanders with the minibatches
    # (up 8 % by chance) while every evaluation of the same weights gives 1.2008336…
    (finding,) = findings(FIXTURES / "audit" / "sweep_detached" / "wd0.0001_h64", "CD301")
    assert "val/loss" in finding.tags and any("val/loss" in line and "+0.0%" in line for line in finding.evidence)
    rng = np.random.default_rng(0)
    wandering = 1.2 + 0.05 * rng.standard_normal(60)
    assert "CD301" in codes(synthetic({"train_loss": wandering, "val_loss": np.full(60, 1.2008)}))
    # a train loss that clearly falls while the evaluation never changes is a broken evaluation, not this
    learning = np.linspace(1.2, 0.2, 60) + 0.02 * rng.standard_normal(60)
    assert "CD301" not in codes(synthetic({"train_loss": learning, "val_loss": np.full(60, 1.2008)}))


def test_a_loss_on_the_floor_of_a_softmax_applied_twice_is_held_up_there():
    """A binary classifier whose forward ends in softmax, trained with CrossEntropyLoss (two real public runs'
    shape): the loss falls fast, then sits on ln(1 + 1/e) = 0.31326 and never goes below it. A healthy binary
    loss passes through that value on its way down, and one that levels off at 0.35 is on no such floor."""
    rng = np.random.default_rng(10)
    floor = np.log1p(1 / np.e)
    capped = floor + 0.35 * np.exp(-np.arange(600) / 60) * rng.uniform(0.5, 1.0, 600)
    found = [f for f in diagnose_run(synthetic({"train/loss": capped})) if f.code == "CD303"]
    assert found and "ln(1 + 1/e)" in found[0].title and "softmax applied twice" in found[0].title
    healthy = 0.05 + 0.65 * np.exp(-np.arange(600) / 120) * rng.uniform(0.8, 1.2, 600)
    levelled = 0.35 + 0.35 * np.exp(-np.arange(600) / 60) * rng.uniform(0.8, 1.2, 600)
    for loss in (healthy, levelled):
        assert "CD303" not in codes(synthetic({"train/loss": loss}))


def test_a_joint_models_classification_loss_at_chance_beside_its_regression_loss():
    """A joint classification (200 classes) and regression head (a real public run's shape): the classification
    losses sit at ln 200 = 5.298 from first to last, while the regression loss, which no chance level measures,
    is the run's main train loss by name. The classification loss is the one −log(1/n) judges."""
    rng = np.random.default_rng(11)
    steps = {"val_classification_loss": np.arange(0, 240, 40), "val_regression_loss": np.arange(0, 240, 40)}
    run = synthetic({"train_classification_loss": np.log(200) + 0.012 * rng.standard_normal(240),
                     "train_regression_loss": 700 * rng.lognormal(0, 0.5, 240),
                     "val_classification_loss": np.full(6, 5.2987), "val_regression_loss": 740 + rng.normal(0, 20, 6)},
                    n_classes=200, steps=steps)
    found = [f for f in diagnose_run(run) if f.code == "CD302"]
    assert found and found[0].tags[0] == "val_classification_loss"


def test_a_score_stuck_beside_a_loss_that_is_nan_throughout_is_no_flat_start_of_its_own():
    """A mixed-precision U-Net (a real public run's shape): train_loss NaN at every log, train F1 0 at every log.
    The NaN is the finding; the F1 the NaN leaves at 0 is no flat start beside it."""
    run = synthetic({"train_loss": np.full(10, np.nan), "train_f1_score": np.zeros(10)})
    found = codes(run)
    assert "CD101" in found and "CD301" not in found


def test_a_flat_loss_at_the_entropy_of_an_imbalanced_prior_is_at_chance():
    """A 43-class traffic-sign CNN that learns nothing (a real public run's shape): both losses settle on 3.479,
    the entropy of GTSRB's class frequencies, 7.5% under ln 43 = 3.761, and never move from there; the accuracy
    sits at the commonest sign's share. A model that ignores its input scores the prior's entropy, so that is
    chance for this run. A loss that fell to the same level learned its way there and is no such finding."""
    rng = np.random.default_rng(12)
    prior = 3.479 + 0.002 * rng.standard_normal(15)
    stuck = synthetic({"train_loss": prior + 0.01, "val_loss": prior, "val_acc": np.full(15, 0.0577)},
                      n_classes=43)
    (finding,) = [f for f in diagnose_run(stuck) if f.code == "CD302"]
    assert "CD304" not in codes(stuck)
    assert any("imbalanced class prior" in line for line in finding.evidence)
    fell = np.linspace(np.log(43), 3.48, 15) + 0.002 * rng.standard_normal(15)
    assert "CD302" not in codes(synthetic({"train_loss": fell + 0.01, "val_loss": fell}, n_classes=43))


def test_a_validation_loss_at_exactly_0_hides_no_flat_train_loss():
    """A public pose estimator's validation writes 0.0 at every epoch (nothing measured) beside a train loss that
    never moves, 0.03981 -> 0.03979: the run is flat from its start."""
    rng = np.random.default_rng(5)
    train = 0.0398 + 0.00002 * rng.standard_normal(15)
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": train, "val_loss": np.zeros(15)}))
                  if f.code == "CD301"]
    assert finding.tags == ["train_loss"]
