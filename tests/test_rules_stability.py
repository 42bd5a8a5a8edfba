"""CD401 oscillation and CD402 spike: real runs that must fire, healthy (also noisy tiny-batch) runs that must not."""


import re

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from rule_cases import (CORPUS, FIXTURES, HEALTHY_FIXTURES, alarms_at, codes, findings, healthy_corpus_runs,
                        labelled_corpus_runs, synthetic)

TINY_BATCH = ["stability/healthy_batch1.jsonl", "stability/healthy_batch2_sgd.jsonl",
              "symptoms/healthy_tiny_batch.jsonl"]
HEALTHY = HEALTHY_FIXTURES + TINY_BATCH + ["jsonl/detectron2/metrics.json", "csv/ultralytics/results.csv",
                                           "symptoms/healthy_dropout.jsonl", "symptoms/healthy_wine.jsonl"]
OURS = {"CD401", "CD402"}


def alarms(run):
    return {f.code for f in diagnose_run(run) if f.severity in ("error", "warning")} & OURS


@pytest.mark.parametrize("path", [FIXTURES / path for path in HEALTHY]
                         + [CORPUS / path for path in healthy_corpus_runs()])
def test_healthy_runs_are_stable(path):
    """Includes the hard negatives: batch-1 and batch-2 runs logged every step (heavy-tailed per-example losses
    that still converge), warmup + cosine, step decay, sparse step logging."""
    assert not alarms_at(path, OURS)


@pytest.mark.parametrize("path", labelled_corpus_runs({"spike"}))
def test_every_labelled_spike_is_found(path):
    found = findings(CORPUS / path, "CD402")
    assert found
    if path.startswith("spike/"):  # one corrupt batch: the loss comes back
        (finding,) = found
        assert finding.severity == "warning" and "recovered" in finding.evidence[2]


@pytest.mark.parametrize("path", ["corpus/oscillation/sgd_lr_high_clipped",
                                  "corpus/oscillation/iris_sgd_batch4_high_lr", "stability/adam_lr_too_high.jsonl",
                                  "holdout/oscillation/tb_cnn_sgd_lr_05_clipped"])
def test_a_loss_that_keeps_swinging_is_reported(path):
    """The last: SGD at LR 0.5 with clipping, whose per-step losses run from 1e-4 to 4.4 around a median of 1.2 to
    the end: the swings are measured against that typical level, not a mean they pull up themselves."""
    (finding,) = findings(FIXTURES / path, "CD401")
    assert finding.severity == "warning" and finding.step_range
    assert "swing σ" in finding.evidence[0] and any(line.lower().startswith(("lr", "learning"))
                                                    or "/lr" in line.lower() for line in finding.evidence)


@pytest.mark.parametrize("path", ["corpus/spike/corrupt_batch_adam", "stability/corrupt_batch_grad.jsonl"])
def test_one_corrupt_batch_is_a_recovered_spike_at_its_step(path):
    (finding,) = findings(FIXTURES / path, "CD402")
    assert finding.step == 100 and finding.severity == "warning"
    assert "recovered" in finding.evidence[2] and "×" in finding.title


def test_a_jump_over_several_steps_is_a_spike():
    (finding,) = findings(CORPUS / "spike/corrupt_batch_sgd", "CD402")
    assert 60 <= finding.step <= 70 and "recovered" in finding.evidence[2]


@pytest.mark.parametrize("path", ["exploding_grad/sgd_diverging", "exploding_grad/warmup_too_high_diverging",
                                  "exploding_grad/sgd_diverging_no_momentum"])
def test_a_climb_with_a_growing_gradient_norm_is_reported_beside_the_explosion(path):
    # the explosion is the cause, the loss climbing away what it did to the run: a careful reader names both
    (climb,) = findings(CORPUS / path, "CD402")
    assert "never recovers" in climb.title and findings(CORPUS / path, "CD701")


def test_a_stray_zero_at_the_end_does_not_hide_a_divergence():
    rng = np.random.default_rng(6)
    values = np.r_[decaying(100, rng, 0.1), 2.0 * 1.3 ** np.arange(100)][:200]
    values[-1] = 0.0  # an overflow logged as 0
    (finding,) = [f for f in diagnose_run(loss_run(values)) if f.code == "CD402"]
    assert "never recovers" in finding.title


def test_a_noisy_near_zero_loss_that_ends_where_it_already_went_is_no_divergence():
    # a pretrained model's per-batch loss: 1e-6 .. 0.4, a little higher at the end than its first three points
    rng = np.random.default_rng(7)
    values = np.exp(rng.uniform(np.log(1e-6), np.log(0.4), 300)) * np.r_[np.full(150, 0.3), np.ones(150)]
    values[:3] = [1e-4, 2e-4, 3e-4]
    assert "CD402" not in {f.code for f in diagnose_run(loss_run(values))}


def test_a_loss_that_climbs_away_without_nan_or_grad_norm_is_a_spike_that_never_recovers():
    rng = np.random.default_rng(5)
    values = np.r_[decaying(200, rng, 0.2), 0.1 * 1.1 ** np.arange(150)] * rng.lognormal(0, 0.1, 350)
    (finding,) = [f for f in diagnose_run(loss_run(values)) if f.code == "CD402"]
    assert finding.severity == "error" and "never recovers" in finding.title
    assert 200 <= finding.step <= 240 and finding.step_range[1] == 349


def test_a_train_loss_that_settles_then_climbs_steadily_far_above_its_lowest_has_come_apart():
    """Two public runs' shape (a peptide VAE over 200k iterations, a T5 fine-tune over 10 epochs): the loss falls
    to its lowest, then climbs for the rest of the run to 6-15× that level, still below where it started: a run
    coming apart slowly. A loss at ~0 that wanders up from its floor undoes none of its progress, and a term of the
    loss (a KL growing while the total falls) may grow by design: neither is."""
    rng = np.random.default_rng(12)
    fall = 0.04 + 3.4 * np.exp(-np.arange(60) / 6)
    values = np.r_[fall, 0.04 * np.exp(np.linspace(0, np.log(11), 340))] * rng.lognormal(0, 0.1, 400)
    (finding,) = [f for f in diagnose_run(loss_run(values)) if f.code == "CD402"]
    assert "climbs steadily" in finding.title and finding.severity == "error" and 40 <= finding.step <= 120
    floor = np.r_[fall[:50], 1e-4 * np.exp(np.linspace(0, np.log(20), 350))] * rng.lognormal(0, 0.1, 400)
    assert "CD402" not in {f.code for f in diagnose_run(loss_run(floor))}
    total = np.r_[fall, np.linspace(0.04, 0.03, 340)] * rng.lognormal(0, 0.05, 400)
    run = synthetic({"train/loss": total, "train/kl_loss": np.r_[fall, 0.04 * np.exp(np.linspace(0, 2.5, 340))]})
    assert "CD402" not in {f.code for f in diagnose_run(run)}


@pytest.mark.parametrize("path", ["tensorboard/pytorch/lr_too_high", "wandb/lr_too_high",
                                  "csv/generic/lr_too_high.csv", "jsonl/generic/lr_too_high.jsonl"])
def test_the_climb_into_nan_is_left_to_cd101(path):
    for run in curvedoc.load(FIXTURES / path):
        assert not alarms(run)


def loss_run(values, tag="train/loss"):
    return synthetic({tag: values})


def decaying(n, rng, batch_noise, floor=0.0):
    """A converging cross-entropy-like loss with multiplicative minibatch noise."""
    level = floor + 2.3 * np.exp(-np.linspace(0, 6, n))
    return level * rng.lognormal(0.0, batch_noise, n)


def test_noisy_tiny_batch_run_that_converges_is_quiet():
    rng = np.random.default_rng(0)
    values = decaying(4000, rng, 0.8)
    hard = rng.random(4000) < 0.02  # a batch of one misclassified example: loss 1–8 however low the level is
    values[hard] = rng.uniform(1.0, 8.0, hard.sum())
    assert not alarms(loss_run(values))


def test_short_epoch_curves_are_quiet():
    assert not alarms(loss_run([2.3, 1.1, 0.7, 0.55, 0.5]))
    assert not alarms(loss_run([2.3, 1.1, 0.7]))


def test_a_spike_in_an_mse_loss_with_a_floor_is_found_at_its_step():
    rng = np.random.default_rng(1)
    values = 0.1 + decaying(600, rng, 0.1)
    values[400] = 30.0
    (finding,) = [f for f in diagnose_run(loss_run(values, "val/mse_loss")) if f.code == "CD402"]
    assert finding.step == 400 and "recovered" in finding.evidence[2]


def test_a_jump_on_the_points_either_side_of_one_normal_point_is_sized_by_its_peak():
    """Two high batches with a normal one between them (0.77, 0.077, 0.69 on a loss at 0.077) last as a jump in the
    running median of three, which starts at the normal point: the peak and its size are those of the high
    batches, never a 'jump' of 0.9x."""
    rng = np.random.default_rng(5)
    values = 2.0 * np.exp(-np.arange(300) / 30) + 0.05 + rng.normal(0, 0.003, 300)
    values[128], values[130] = 10 * values[129], 9 * values[129]
    (finding,) = [f for f in diagnose_run(loss_run(values)) if f.code == "CD402"]
    size = float(re.search(r"jumps ([0-9.]+)×", finding.title).group(1))
    assert size > 5 and finding.step == 128


def test_every_spike_is_listed_with_its_size_its_outcome_and_the_rate():
    """Large-run practice compares runs by their spikes per 10,000 steps and asks of each whether it came back."""
    rng = np.random.default_rng(1)
    values = 0.1 + decaying(2000, rng, 0.1)
    values[[500, 1200]] = [40.0, 25.0]
    (finding,) = [f for f in diagnose_run(loss_run(values, "train/loss")) if f.code == "CD402"]
    assert finding.step == 500
    assert "1 more spike: step 1200:" in finding.evidence[3] and "back by step" in finding.evidence[3]
    assert finding.evidence[4] == ("2 spikes over 1,999 steps: 10 per 10,000 steps; 2 back at the level before "
                                   "them, 0 not")


def test_a_spike_right_before_nan_is_not_a_spike():
    rng = np.random.default_rng(2)
    values = decaying(300, rng, 0.2)
    values[250:255] = [5.0, 50.0, 500.0, 5e4, np.nan]
    values[255:] = np.nan
    assert "CD402" not in alarms(loss_run(values))


def test_oscillation_without_progress_fires_and_a_flat_curve_does_not():
    rng = np.random.default_rng(3)
    swinging = 1.5 * rng.lognormal(0.0, 1.0, 500)
    assert "CD401" in alarms(loss_run(swinging))
    flat = 2.3 + 0.01 * rng.standard_normal(500)
    assert not alarms(loss_run(flat))


def test_a_loss_at_exactly_zero_most_of_the_time_does_not_swing():
    # YOLOX's l1_loss, 0 until its last epochs switch it on; a per-sample loss of samples the model already fits
    rng = np.random.default_rng(5)
    values = np.where(rng.random(600) < 0.3, rng.uniform(1.0, 4.0, 600), 0.0)
    values[:3] = 1.0, 0.9, 1.1
    assert "CD401" not in alarms(loss_run(values))


def test_one_spike_among_a_million_points_is_found():
    rng = np.random.default_rng(4)
    values = decaying(1_000_000, rng, 0.3)
    values[700_000] = 100.0
    run = loss_run(values)
    found = [f for f in diagnose_run(run) if f.code in OURS]
    assert [f.step for f in found if f.code == "CD402"] == [700_000]


def test_a_reward_that_collapses_after_improving_is_a_spike_of_its_shortfall():
    rng = np.random.default_rng(5)
    reward = np.r_[np.linspace(-500, 200, 300), np.full(200, 200.0), np.full(100, -450.0)] + rng.normal(0, 15, 600)
    run = synthetic({"train/value_loss": 1 + rng.random(600), "rollout/ep_rew_mean": reward})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.tags == ["rollout/ep_rew_mean"] and 495 <= finding.step <= 505 and "collapses" in finding.title
    assert finding.severity == "error"  # it never came back
    # the policy collapsed, not a batch: its causes and check are an agent's, not a loss spike's
    assert "approx_kl" in finding.cheapest_check and "recompute its loss" not in finding.cheapest_check
    assert any("clip range" in cause for cause in finding.causes)


def test_an_agent_whose_running_mean_reward_sinks_below_its_start_collapsed():
    # PPO on a fighting game: ep_rew_mean (a mean over the last 100 episodes) 15,000 -> 32,650 in the first
    # updates, then slides to ~1,700 for the rest of 5M steps: no single jump, yet far worse than the untrained
    # policy began
    rng = np.random.default_rng(7)
    reward = np.r_[[15000, 32650, 17875, 14700, 10786, 9688, 8150, 7125, 6393, 5781], np.full(190, 1700.0)]
    reward[10:] += rng.normal(0, 40, 190)
    run = synthetic({"train/value_loss": 500 + rng.random(200), "rollout/ep_rew_mean": reward})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.severity == "error" and "never recovers" in finding.title and finding.step <= 2
    # a reward that starts negative and ends less negative improved: no finding
    climbing = synthetic({"train/value_loss": 500 + rng.random(200),
                          "rollout/ep_rew_mean": np.linspace(-195, -98, 200) + rng.normal(0, 3, 200)})
    assert "CD402" not in {f.code for f in diagnose_run(climbing)}


def test_a_loss_at_exactly_zero_has_no_level_to_jump_from():
    """A public toy run (StatQuest's: one trainable bias, batch 1, each logged loss one sample's squared error):
    two of its three samples are fitted exactly, so two logged losses in three are 0, and the third sample's error
    (223, 146, 95 …) was "infinitely" many times their level. A ratio to a level of 0 says nothing; a loss that fits its examples outright jumps off it
    whenever one is missed."""
    loss = np.zeros(204)
    loss[::3] = np.geomspace(223.5, 1e-6, 68)  # the one sample not fitted, every third log; the other two are
    run = synthetic({"train_loss": loss})
    assert "CD402" not in {f.code for f in diagnose_run(run)}


def test_a_reward_paid_now_and_then_that_happened_to_be_paid_first_is_no_collapse():
    """A public TRL GRPO run: its mean reward is 0 at most of 100 steps and 0.125 at 16 of them, the first among
    them. Most changes are then 0, so their median spread is none, and a start of 0.0625 "falling" to 0 looked far
    beyond the noise. The noise of such a reward is the spread of its changes."""
    rng = np.random.default_rng(3)
    reward = np.where(rng.random(100) < 0.16, 0.125, 0.0)
    reward[:3] = [0.125, 0.0, 0.125]
    run = synthetic({"loss": 0.01 + 0.001 * rng.random(100), "reward": reward})
    assert "CD402" not in {f.code for f in diagnose_run(run)}


def test_an_agent_that_loses_most_of_its_reward_for_a_stretch_of_noisy_episodes_collapsed():
    """A public CarRacing agent (one reward per episode, 354 episodes): ~1,700 for 150 episodes, then ~450 for some
    25 episodes, then back. Single episodes swing by ±400, so no one point stands out; the running median over the
    curve's window does, and it falls below what the good phase's own worst episodes scored. A curve as noisy that
    only wobbles around its level, and a DPO run's rejected reward that falls by design, are no collapse."""
    rng = np.random.default_rng(3)
    learned = np.r_[np.linspace(0, 1700, 100), np.full(254, 1700.0)]
    dip = learned.copy()
    dip[300:325] = 450.0
    noise = rng.normal(0, 350, 354)
    (finding,) = [f for f in diagnose_run(synthetic({"rewards": dip + noise})) if f.code == "CD402"]
    assert finding.severity == "warning" and "collapses" in finding.title and 100 <= finding.step <= 300
    assert "back halfway to its best" in finding.evidence[-1]
    assert "CD402" not in codes(synthetic({"rewards": learned + noise}))
    # a walker that learned, whose last episode is a fall: at the curve's end the running median's padding would
    # repeat that one episode, so the level is read only where its whole window lies on the curve
    fell_last = np.r_[learned + noise, np.full(1, -100.0)]
    assert "CD402" not in codes(synthetic({"rewards": fell_last}))
    never_back = learned.copy()
    never_back[300:] = 450.0
    (finding,) = [f for f in diagnose_run(synthetic({"rewards": never_back + noise})) if f.code == "CD402"]
    assert finding.severity == "error"
    rejected = np.r_[np.zeros(20), np.linspace(0, -3, 180)] + rng.normal(0, 0.05, 200)
    preference = synthetic({"loss": np.geomspace(0.69, 0.2, 200), "rewards/chosen": 0.3 + rng.normal(0, 0.05, 200),
                            "rewards/rejected": rejected})
    assert "CD402" not in codes(preference)


def test_a_gan_term_that_jumps_out_of_its_hovering_is_a_spike_and_its_hovering_is_not():
    rng = np.random.default_rng(11)
    d_loss = 0.6 + 0.05 * rng.standard_normal(270)
    g_loss = np.r_[2.0 - 0.7 * np.linspace(0, 1, 30), 1.3 + 0.05 * rng.standard_normal(236), [5.1, 5.3, 5.0, 5.2]]
    found = [f for f in diagnose_run(synthetic({"Discriminator loss": d_loss, "Generator loss": g_loss}))
             if f.code == "CD402"]
    assert [f.tags[0] for f in found] == ["Generator loss"] and found[0].step >= 266
    hovering = synthetic({"loss_D": d_loss, "loss_G": 1.3 + 0.3 * rng.standard_normal(270)})
    assert not [f for f in diagnose_run(hovering) if f.severity in ("error", "warning")]


def test_a_gans_per_image_reconstruction_loss_is_not_read_as_oscillation():
    # CycleGAN at batch 1: cycle_A falls 1.7 -> 1.0 and each printed value is one image's, σ ≈ 0.55
    rng = np.random.default_rng(12)
    cycle = np.r_[np.linspace(1.7, 1.0, 40), np.full(80, 1.0)] * np.exp(0.6 * rng.standard_normal(120))
    cycle[:3] = 1.7, 1.68, 1.66
    adversarial = {"D_A": 0.25 + 0.03 * rng.standard_normal(120), "G_A": 0.3 + 0.03 * rng.standard_normal(120)}
    assert "CD401" not in {f.code for f in diagnose_run(synthetic({"cycle_A": cycle, **adversarial}))}
    assert "CD401" in {f.code for f in diagnose_run(synthetic({"train/loss": cycle}))}  # no GAN: swings count


def test_one_image_far_above_a_gans_per_image_reconstruction_loss_is_no_spike_and_a_lasting_jump_is():
    """A public CycleGAN at batch 1 prints cycle_A = 9.6 once over a running level of 0.49 (one hard image), and
    never again near it: the prints are snapshots of one image, as for CD401. A jump that lasts is still a spike."""
    rng = np.random.default_rng(13)
    cycle = np.r_[np.linspace(1.0, 0.5, 100), np.full(500, 0.5)] * np.exp(0.3 * rng.standard_normal(600))
    cycle[350] = 9.6
    adversarial = {"D_A": 0.25 + 0.03 * rng.standard_normal(600), "G_A": 0.3 + 0.03 * rng.standard_normal(600)}
    assert "CD402" not in {f.code for f in diagnose_run(synthetic({"cycle_A": cycle, **adversarial}))}
    assert "CD402" in {f.code for f in diagnose_run(synthetic({"train/loss": cycle}))}  # no GAN: one batch's
    cycle[350:420] *= 6
    assert "CD402" in {f.code for f in diagnose_run(synthetic({"cycle_A": cycle, **adversarial}))}


def test_the_largest_of_a_long_heavy_tailed_minibatch_loss_is_not_a_spike_unless_it_stands_out_of_its_tail():
    # 7,760 per-batch losses of a small-batch fine-tune: a handful of hard batches reach 5-10x the running level
    rng = np.random.default_rng(21)
    loss = 0.05 + 2.0 * np.exp(-np.arange(7760) / 300) + 0.03 * rng.standard_normal(7760) ** 2
    hard = rng.choice(np.arange(500, 7700), 6, replace=False)
    loss[hard] += rng.uniform(1.0, 1.6, 6)
    loss[1135] += 2.0  # the largest, by less than twice the others
    assert "CD402" not in {f.code for f in diagnose_run(synthetic({"train/loss": loss}))}
    loss[1135] += 20.0  # one batch far beyond every other excursion still is
    assert "CD402" in {f.code for f in diagnose_run(synthetic({"train/loss": loss}))}


def test_a_per_batch_training_score_beside_its_loss_is_not_judged_for_collapse():
    # batch 4: the F1 moves by whole examples (0.75, 1, 0.75 …); what matters shows on the loss
    f1 = [0.25, 0.25, 0.75, 1, 1, 0.75, 1, 0.75, 1, 1]
    loss = [1.04, 1.10, 0.63, 0.22, 0.23, 0.44, 0.35, 0.40, 2.5e-6, 0.05]
    run = synthetic({"train_loss": loss, "train_f1_score": f1})
    assert "CD402" not in {f.code for f in diagnose_run(run)}


def test_a_per_class_score_of_three_examples_is_no_collapse_of_the_run():
    # a token classifier's per-class breakdown: class T045's recall goes 1 -> 2/3 when one of its three examples
    # is missed; the overall F1 the run is judged by keeps climbing
    evals = np.arange(1, 11) * 700
    run = synthetic({"loss": np.linspace(0.3, 0.005, 28), "eval_overall_f1": np.linspace(0.09, 0.17, 10),
                     "eval_T045_recall": [0.67, 1, 1, 0.67, 0.67, 0.67, 0.67, 0.67, 0.67, 0.67],
                     "eval_T007_recall": [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]},
                    steps={"loss": np.arange(28) * 250, "eval_overall_f1": evals, "eval_T045_recall": evals,
                           "eval_T007_recall": evals})
    assert "CD402" not in {f.code for f in diagnose_run(run)}


def test_an_evolved_populations_mean_fitness_that_collapses_is_a_spike():
    """A genetic algorithm evolving Breakout agents (a public training_log.csv: Generation, Top Fitness, Mean
    Fitness): the mean fitness climbs to ~125 with ±20 between generations, then falls to ~15 at generation 346 and
    stays there. Its fitness is the agents' reward; the population's mean, not its best agent, is its level."""
    rng = np.random.default_rng(7)
    climbed = np.r_[np.linspace(1, 125, 300), np.full(45, 125.0), np.full(100, 15.0)]
    mean = climbed + rng.normal(0, 20, len(climbed)) * climbed / 125
    top = 8 * climbed + rng.normal(0, 250, len(climbed))
    (finding,) = [f for f in diagnose_run(synthetic({"Top Fitness": top, "Mean Fitness": mean})) if f.code == "CD402"]
    assert finding.tags == ["Mean Fitness"] and 300 <= finding.step <= 346
    assert "CD402" not in codes(synthetic({"Top Fitness": top[:345], "Mean Fitness": mean[:345]}))


def test_a_noisy_reward_that_climbs_is_no_collapse():
    rng = np.random.default_rng(6)
    reward = np.linspace(-500, 200, 3000) + rng.normal(0, 120, 3000)  # per-episode returns: noisy by nature
    run = synthetic({"train/value_loss": 1 + rng.random(3000), "episode_reward": reward})
    assert "CD402" not in {f.code for f in diagnose_run(run)}


def test_a_map_that_drops_and_recovers_is_a_warning():
    m_ap = np.r_[np.linspace(0.05, 0.6, 40), [0.12, 0.15], np.linspace(0.58, 0.65, 18)]
    run = synthetic({"train/box_loss": np.linspace(1.0, 0.3, 60), "metrics/mAP50(B)": m_ap})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.severity == "warning" and finding.tags == ["metrics/mAP50(B)"] and finding.step == 40


def test_a_blow_up_before_any_progress_is_a_spike_from_the_start():
    """LR warmup to 1.0 without clipping: the loss leaves its start of 4.6 for 19 at once, then settles."""
    run = synthetic({"train/loss": [4.59, 19.05, 3.11, 3.80, 4.51, 3.07, 3.02, 2.94, 2.83]})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.step == 1 and finding.severity == "warning"


def test_a_first_point_below_the_next_few_is_no_level_to_blow_up_from():
    """A per-step loss whose first logged batch (0.61) sits below the next ones (1.15, 1.12), then falls to 0.1
    (TanmayAmbadkar's controller MLP): the start is noisy, not blown up."""
    rng = np.random.default_rng(4)
    loss = np.r_[0.61, 1.15, 1.12, np.geomspace(1.0, 0.1, 135) * np.exp(0.05 * rng.standard_normal(135))]
    assert "CD402" not in {f.code for f in diagnose_run(synthetic({"train_loss_step": loss}))}


def test_a_term_that_grows_from_its_start_by_design_is_no_spike_from_the_start():
    """Detectron2: loss_box_reg counts only the foreground proposals, which appear over the first iterations, so
    it rises 0.11 -> 0.59 while the total falls (a total that blows up from its start is a spike: see below)."""
    rng = np.random.default_rng(3)
    box = np.r_[0.107, 0.587, 0.6, np.linspace(0.58, 0.21, 72)] * np.exp(0.02 * rng.standard_normal(75))
    cls = np.geomspace(0.99, 0.03, 75) * np.exp(0.02 * rng.standard_normal(75))
    total = box + cls + np.geomspace(1.0, 0.05, 75)
    assert not alarms(synthetic({"total_loss": total, "loss_box_reg": box, "loss_cls": cls}))


def test_a_term_that_climbs_away_by_a_sliver_of_its_total_is_no_spike_but_one_that_moves_it_is():
    """DETR's auxiliary class loss of one decoder layer breaks away on the held-out set, 0.0004 -> 0.06, beside box
    and GIoU terms that sum to ~8: far above its own start, but it moves nothing. Grown to 6, it moves the loss."""
    rng = np.random.default_rng(4)
    epochs = 120

    def noisy(values: np.ndarray) -> np.ndarray:
        return values * np.exp(0.03 * rng.standard_normal(epochs))

    box, giou = noisy(np.geomspace(6.0, 3.6, epochs)), noisy(np.geomspace(6.5, 4.2, epochs))
    for climbs_to, spikes in ((0.06, False), (6.0, True)):
        ce = noisy(np.r_[np.geomspace(0.002, 0.0004, 60), np.full(60, climbs_to)])
        run = synthetic({"train_loss": np.geomspace(20, 2, epochs), "test_loss": box + giou + ce,
                         "test_loss_ce_1": ce, "test_loss_bbox_1": box, "test_loss_giou_1": giou})
        assert ("CD402" in alarms(run)) is spikes


def test_a_coefficient_near_zero_that_dips_below_it_is_no_collapse():
    """A public GAT regressor stuck at the mean: val/r2 -0.23, -0.01, -0.02, then -0.11 for two epochs and back. R²
    is out of 1 however far below 0 it goes: its shortfall moved 1.02 -> 1.11, not a score falling fivefold."""
    r2 = np.array([-0.2323, -0.0098, -0.0196, -0.1077, -0.1156, -0.0468, -0.0151, -0.0174, -0.0128, -0.0372])
    loss = np.array([1.924, 1.816, 1.490, 1.272, 1.354, 1.345, 1.320, 1.304, 1.538, 1.342])
    assert "CD402" not in alarms(synthetic({"train/loss": loss, "val/r2": r2}))


def test_a_loss_diverging_from_its_start_is_not_a_run_of_spikes():
    """One blow-up that never comes back, whose peak is the last point only because it never stopped climbing."""
    run = synthetic({"train/loss": 2.3 * np.exp(np.linspace(0, 30, 200))})
    assert [f.severity for f in diagnose_run(run) if f.code == "CD402"] == ["error"]


def test_a_collapse_after_a_long_climb_is_found_beside_a_higher_rise_over_a_higher_median():
    """A DQN's running mean reward (a public run: one row an episode) crawls up for thousands of episodes, reaches
    its cap, collapses to 72 and comes back, then dips briefly late: the late dip is a larger rise over the running
    median of its window (the cap's) than the collapse over the crawl's, but a far smaller share of it. The collapse
    is the finding."""
    rng = np.random.default_rng(0)
    reward = np.r_[np.geomspace(1, 600, 6000), np.full(100, 4950.0), np.full(40, 72.0), np.full(3000, 4950.0),
                   np.full(2, 4000.0), np.full(858, 4950.0)] + rng.normal(0, 5, 10000)
    run = synthetic({"train/loss": 1 + rng.random(10000), "rollout/ep_rew_mean": reward})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.step in range(6100, 6140) and "collapses" in finding.title


def test_a_train_loss_that_climbs_from_its_very_start_diverges():
    """A vanilla RNN at LR 1: the loss never gets below its start of 2.35 and ends near 8, swinging."""
    rng = np.random.default_rng(8)
    loss = 2.35 * np.exp(np.linspace(0, 1.3, 108)) * np.exp(0.2 * rng.standard_normal(108))
    run = synthetic({"train/loss": loss})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.severity == "error" and "climbs away" in finding.title
    smooth_climb = synthetic({"train/loss": 2.35 * np.exp(np.linspace(0, 1.3, 108))})
    (finding,) = [f for f in diagnose_run(smooth_climb) if f.code == "CD402"]
    assert "climbs away from its start" in finding.title


def test_a_jump_in_a_seven_point_eval_curve_stands_out_from_the_noise_of_the_other_points():
    """nanoGPT's eval every 100 iterations: 4.60, 3.29, then 11.3 (the LR blew the model up), then back. The jump
    must not make most of its own noise estimate, nor be measured from a baseline padded with the first value."""
    run = synthetic({"val/loss": [4.60, 3.29, 11.27, 3.13, 3.07, 2.98, 2.78]},
                    steps={"val/loss": np.arange(7) * 100})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.step == 200 and "recovered" in finding.evidence[2]
    assert not alarms(synthetic({"val/loss": [4.60, 3.29, 3.6, 3.13, 3.07, 2.98, 2.78]}))


def test_the_baseline_of_the_first_points_is_the_median_of_the_points_before_them():
    from curvedoc.features import expanding_median, trailing_median

    assert trailing_median(np.array([4.0, 2.0, 10.0, 3.0, 1.0]), 3).tolist() == [4.0, 4.0, 3.0, 4.0, 3.0]
    values = np.random.default_rng(5).standard_normal(101)
    assert expanding_median(values) == pytest.approx([np.median(values[:i + 1]) for i in range(101)])


def test_the_nanogpt_run_whose_learning_rate_blew_it_up_twice_has_a_spike():
    found = findings(FIXTURES / "holdout" / "spike" / "stdout_nanogpt_lr_too_high", "CD402")
    assert found and all(finding.severity == "warning" for finding in found)


def test_a_held_out_loss_zigzagging_by_a_third_of_its_level_swings_and_a_train_curve_so_does_not():
    """A public Keras pneumonia classifier: val_loss 0.256, 0.488, 0.418, 0.082, 0.145, 0.107, 0.471, 0.204, 0.455,
    0.162 over 10 epochs. An average over the same examples at every evaluation moves only with the weights: swings
    of a third of its level and more that reverse at every epoch are the run's, even though they are a small share of
    the loss's scale. The same swings on an epoch-averaged train loss that came down from 1.5 (other batches, other
    augmentations each epoch) are not enough."""
    val = [0.2558, 0.4881, 0.4179, 0.08175, 0.1451, 0.107, 0.4705, 0.2043, 0.4546, 0.1618]
    train = [0.323, 0.1648, 0.1259, 0.09744, 0.1227, 0.1136, 0.1108, 0.07799, 0.1249, 0.1352]
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": train, "val_loss": val})) if f.code == "CD401"]
    assert finding.tags == ["val_loss"] and any("reverse the previous one" in line for line in finding.evidence)
    assert "CD401" not in alarms(synthetic({"train_loss": [1.5, 0.9, 0.6, *val[3:]]}))
    settling = [6.64, 5.36, 4.95, 4.73, 4.80, 4.68, 4.62, 4.66, 4.59, 4.63]  # ±1% wobbles: no swing
    assert "CD401" not in alarms(synthetic({"train_loss": train, "val_loss": settling}))


def test_a_held_out_loss_swinging_in_runs_of_a_few_evaluations_swings_and_one_excursion_does_not():
    """A public MAE fine-tune (DeepLense, 50 epochs): the train loss falls smoothly 0.98 -> 0.44 while the
    validation loss jumps between 0.5 and 2.5 for the whole run, sometimes for two or three evaluations in a row
    (it reverses direction at 61% of its changes, fewer than a strict zig-zag's 75%). An average over the same
    examples moves only with the weights: swings like these are the run's. A validation loss that sits still but
    for one evaluation 20 times higher reverses at few of its changes: a lone excursion, not a swing."""
    train = [0.978, 0.8571, 0.8027, 0.7498, 0.7208, 0.6906, 0.6638, 0.6458, 0.6307, 0.6123, 0.6073, 0.5938, 0.5797,
             0.5658, 0.5581, 0.553, 0.5481, 0.5467, 0.5343, 0.5298, 0.53, 0.5202, 0.5174, 0.5196, 0.5063, 0.5001,
             0.5042, 0.4988, 0.4994, 0.4926, 0.4883, 0.4965, 0.4849, 0.4818, 0.4808, 0.4795, 0.4734, 0.4639, 0.4671,
             0.4776, 0.4666, 0.4658, 0.4642, 0.4608, 0.4589, 0.4488, 0.4476, 0.4493, 0.4446, 0.441]
    val = [1.376, 0.9801, 0.9628, 2.082, 0.9564, 1.018, 0.7685, 0.8962, 0.849, 1.599, 0.7248, 1.55, 0.6876, 0.7109,
           1.289, 0.5406, 0.8302, 1.034, 0.5643, 0.7788, 1.703, 0.7868, 1.444, 0.5807, 0.6416, 0.6283, 0.5239, 0.5878,
           0.5381, 1.974, 1.106, 0.532, 0.5784, 1.334, 1.416, 0.5121, 1.252, 2.477, 1.525, 1.545, 2.039, 0.5034,
           0.5294, 0.5818, 1.756, 0.7697, 0.5015, 0.7979, 2.12, 1.569]
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": train, "val_loss": val})) if f.code == "CD401"]
    assert finding.tags == ["val_loss"]
    lone = [0.0148, 0.0141, 0.2983, 0.0140, 0.0136, 0.0134, 0.0132, 0.0132, 0.0131, 0.0130]
    assert "CD401" not in alarms(synthetic({"train_loss": [0.09, 0.05, 0.04, 0.035, 0.03, 0.028, 0.026, 0.025, 0.024,
                                                           0.023], "val_loss": lone}))


def test_a_few_evaluations_coming_down_in_a_bend_do_not_swing():
    """A public Keras CNN on Devanagari characters: val_loss 0.353, 0.195, 0.138, 0.148, 0.105, 0.109, 0.093, 0.089,
    0.100, 0.089 zig-zags by a hundredth on its way down. Around a straight line its bend looks like swings of 30% of
    its level; against its closest never-rising course it moves by a few percent, and it does not oscillate. 192cm's
    TFT trial (val_loss 6.64, 5.36, 4.65, 4.93, 4.80, 5.18, 3.76, 5.07, 4.19, 6.53, a labelled oscillation) moves
    against that course by 9% of its level, below the 15% a held-out curve swings from: its first three evaluations'
    descent, not its zig-zag, made the 16% its straight trend leaves."""
    train = [1.579, 0.5705, 0.4109, 0.345, 0.2966, 0.2736, 0.2521, 0.2357, 0.222, 0.2089]
    val = [0.3532, 0.1947, 0.1381, 0.1481, 0.1046, 0.1085, 0.0932, 0.0887, 0.0996, 0.089]
    assert "CD401" not in alarms(synthetic({"train_loss": train, "val_loss": val}))
    tft = [6.64, 5.36, 4.65, 4.93, 4.80, 5.18, 3.76, 5.07, 4.19, 6.53]
    tft_train = [12.44, 9.1, 7.29, 6.2, 5.49, 5.1, 4.8, 4.34, 5.00, 4.69]
    assert "CD401" not in alarms(synthetic({"train_loss": tft_train, "val_loss": tft}))


def test_a_held_out_loss_that_swings_on_a_lasting_rise_is_overfitting_not_oscillation():
    """A public fastai fine-tune (sports balls, 19 epochs): valid_loss falls to 0.231 at epoch 6, then climbs with
    growing swings to 0.691 while the train loss keeps falling. The rise after the best is what to act on (stop at
    epoch 6); its swings are a small validation set's scatter on a climbing loss, not a learning rate that overshoots.
    The same swings around a level that does not climb still oscillate."""
    train = [0.810, 0.620, 0.507, 0.384, 0.290, 0.211, 0.187, 0.175, 0.165, 0.152, 0.140, 0.130, 0.114, 0.112,
             0.110, 0.109, 0.108, 0.108, 0.107]
    val = [0.462, 0.418, 0.340, 0.316, 0.287, 0.317, 0.231, 0.304, 0.364, 0.392, 0.392, 0.388, 0.388, 0.529, 0.327,
           0.439, 0.614, 0.403, 0.691]
    codes_found = {f.code for f in diagnose_run(synthetic({"train_loss": train, "val_loss": val}))}
    assert "CD501" in codes_found and "CD401" not in codes_found
    level = [0.462, 0.418, 0.340, 0.316, 0.287, 0.317, 0.231, 0.304, 0.246, 0.392, 0.221, 0.388, 0.231, 0.429, 0.227,
             0.399, 0.244, 0.403, 0.236]
    codes_found = {f.code for f in diagnose_run(synthetic({"train_loss": train, "val_loss": level}))}
    assert "CD401" in codes_found and "CD501" not in codes_found


def test_a_held_out_loss_swinging_through_120_evaluations_swings_as_a_short_one_would():
    """A public cats-vs-dogs Lightning run: train_loss falls to ~0.5 while val_loss, evaluated after each of 120
    epochs, keeps swinging between 0.55 and 3.9 around a median of ~0.8 to the end. Each evaluation averages the
    same split however many the run logs, so its swings are judged against its own level (15%) as a 10-epoch
    log's are, not against the loss's scale; the same curve wobbling by 3% does not swing."""
    rng = np.random.default_rng(7)
    train = np.geomspace(0.69, 0.5, 120) * (1 + 0.02 * rng.standard_normal(120))
    val = 0.8 * np.exp(0.35 * rng.standard_normal(120))
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss": train, "val_loss": val})) if f.code == "CD401"]
    assert finding.tags == ["val_loss"]
    wobbling = 0.8 * np.exp(0.03 * rng.standard_normal(120))
    assert "CD401" not in alarms(synthetic({"train_loss": train, "val_loss": wobbling}))


def test_one_last_evaluation_far_up_is_no_climb_that_never_recovers():
    """BananaLee's 9 epochs: val_loss 0.57 … 0.32 then 2.03 at the last evaluation. One point shows no staying."""
    train = [0.60, 0.61, 0.55, 0.55, 0.48, 0.51, 0.46, 0.51, 0.53]
    val = [0.57, 0.53, 0.54, 0.76, 0.22, 0.44, 1.15, 0.32, 2.03]
    found = [f for f in diagnose_run(synthetic({"train_loss": train, "val_loss": val})) if f.code == "CD402"]
    assert not any("never recovers" in f.title for f in found)
    stays = [f for f in diagnose_run(synthetic({"train_loss": train, "val_loss": val[:-2] + [2.03, 2.2, 2.1]}))
             if f.code == "CD402"]
    assert any("never recovers" in f.title for f in stays)


def test_one_hard_batch_among_a_few_logged_single_batch_losses_is_no_spike():
    """Lightning's train_loss_step every 50 steps: 22 points, each one batch's MSE on a heavy-tailed target, one
    at 3.5x its neighbours. Few points do not make them averages: a batch needs the per-step 10x. The same
    values as an epoch average (train_loss_epoch) would be a spike."""
    rng = np.random.default_rng(5)
    losses = np.r_[np.linspace(4300, 2000, 10), 2000 + 300 * rng.standard_normal(12)]
    losses[12] = 6974
    steps = np.arange(22) * 50 + 49
    for tag, fires in (("train_loss_step", False), ("train_loss_epoch", True)):
        run = synthetic({tag: losses}, steps={tag: steps})
        assert ("CD402" in alarms(run)) == fires, tag


def test_a_few_leaps_far_beyond_a_clean_loss_are_spikes_however_many():
    """A controller regression logged every 50 steps (a real public run's shape): the step loss settles at 0.1 with
    small noise, and eight single batches leap 37-89x above it across the run. Each stands far beyond everything
    else the curve does, so they are eight spikes, not a heavy tail that the largest has to stand out of."""
    rng = np.random.default_rng(3)
    loss = 0.1 + 0.5 * np.exp(-np.arange(18_000) / 300) + 0.012 * np.abs(rng.standard_normal(18_000))
    leaps = [1231, 3164, 4677, 7677, 8087, 11495, 17443, 17804]
    loss[leaps] = [8.6, 7.8, 4.6, 5.9, 5.7, 5.0, 3.7, 3.6]
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss_step": loss})) if f.code == "CD402"]
    assert "its other spikes set aside" in " ".join(finding.evidence) and "more spikes" in " ".join(finding.evidence)


def test_a_listed_spike_is_back_at_its_level_after_its_highest_point():
    """A long curve reads its level over hundreds of points, and leaps closer than that are one event: listed at
    its highest point, with its size, and back at the level after that point (a public DQN's 10,000 losses
    listed "step 819: 19.79×, back by step 603")."""
    rng = np.random.default_rng(4)
    loss = 0.5 + 2 * np.exp(-np.arange(10_000) / 200) + 0.05 * np.abs(rng.standard_normal(10_000))
    leaps = {3000: 6.0, 3200: 12.0, 7000: 30.0}
    loss[list(leaps)] = list(leaps.values())
    (finding,) = [f for f in diagnose_run(synthetic({"train_loss_step": loss})) if f.code == "CD402"]
    assert finding.step == 7000
    (listed,) = re.findall(r"step (\d+): ([\d.]+)×, back by step (\d+)", " ".join(finding.evidence))
    assert int(listed[0]) == 3200 and 20 < float(listed[1]) < 26 and int(listed[2]) > 3200


def test_an_agent_whose_episode_reward_dips_for_two_episodes_did_not_collapse():
    """A DQN agent on a navigation task (+100 at the goal, -50 and more on a crash) that reaches the goal episode
    after episode, and then crashes twice in a row: an ε-greedy agent acts at random one step in twenty, and a
    reward of each episode back at its level the next episode is that, not a collapse. The same dip in a mean over
    the last hundred episodes (SB3's ep_rew_mean) could not happen by chance, and is still a collapse."""
    rng = np.random.default_rng(11)
    reward = np.r_[rng.choice([-55.0, 97.0], 400, p=[0.7, 0.3]), 95 + rng.normal(0, 2, 400)]
    dipped = reward.copy()
    dipped[700:702] = [-130.7, -131.0]
    assert "CD402" not in codes(synthetic({"train/loss": 1 + rng.random(800), "episode_reward": dipped}))
    averaged = np.r_[np.linspace(-40, 95, 400), 95 + rng.normal(0, 0.5, 400)]
    averaged[700:702] = [-130.7, -131.0]
    assert "CD402" in codes(synthetic({"train/loss": 1 + rng.random(800), "rollout/ep_rew_mean": averaged}))


def test_a_short_run_of_bad_episodes_among_good_ones_is_no_collapse():
    """A DQN lander that learned to land (+240) and still hovers until the time limit now and then (0, one episode
    in five): a stretch of 40 episodes in which it hovers more often than not tips the running median of its
    41-episode window down for a few points only. A collapse is a level the agent stays at: the median down for
    at least half a window, as when every episode of a hundred crashes."""
    rng = np.random.default_rng(0)
    hovers = rng.random(1000) < 0.2
    hovers[600:640] = rng.random(40) < 0.6
    reward = np.where(hovers, rng.normal(0, 20, 1000), rng.normal(240, 30, 1000))
    reward[:200] = np.linspace(-150, 240, 200) + rng.normal(0, 60, 200)
    loss = 1 + rng.random(1000)
    assert "CD402" not in codes(synthetic({"train/loss": loss, "episode_reward": reward}))
    crashed = reward.copy()
    crashed[600:700] = rng.normal(0, 20, 100)
    assert "CD402" in codes(synthetic({"train/loss": loss, "episode_reward": crashed}))


def test_a_jump_of_a_six_epoch_validation_loss_is_not_its_own_noise():
    """Six evaluations leave one second difference apart from a middle point's three: the noise there is the
    other points' spread, not the jump's own second differences (1.0, 0.6, 0.5, then 2.5, back to 0.5)."""
    run = synthetic({"train_loss": np.linspace(1.0, 0.3, 6), "val_loss": np.array([1.0, 0.6, 0.5, 2.5, 0.5, 0.48])})
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD402"]
    assert finding.step == 3 and "val_loss" in finding.title
