"""CD901 finetune_start_high, CD902 loss_masked_out, CD903 eval_scores_clustered, and the fine-tune forms of
nan_inf (a NaN the Trainer's logger filtered out of the loss) and flat_from_start (the LR in the evidence): real
Trainer fine-tunes of a tiny GPT-2 (fixtures/finetune, from fixtures/generate/finetune_logs.py) and synthetic
edge cases."""

import json
from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc.diagnose import diagnose_run
from curvedoc.model import VOCABULARY, RunBuilder
from curvedoc.readers.companions import companions_of
from rule_cases import FIXTURES

FINETUNE = FIXTURES / "finetune"
LABELS = json.loads((FINETUNE / "labels.json").read_text())
ALARMS = {"error", "warning"}


def alarms(path):
    return {f.symptom for run in curvedoc.load(path) for f in diagnose_run(run) if f.severity in ALARMS}


@pytest.mark.parametrize("key", sorted(LABELS))
def test_each_fine_tune_raises_exactly_its_labelled_symptoms(key):
    assert alarms(FINETUNE / key) == set(LABELS[key]["symptoms"])


def only(path, code):
    (run,) = curvedoc.load(path)
    return [f for f in diagnose_run(run) if f.code == code]


def test_a_random_init_under_a_pretrained_config_names_the_base_from_the_model_card():
    (finding,) = only(FINETUNE / "finetune_start_high/random_init_pretrained_config", "CD901")
    assert "curvedoc-fixtures/stdlib-gpt2-tiny" in finding.title and "ln(257)" in finding.title
    assert any("5.549" in line for line in finding.evidence)


def test_a_permuted_vocabulary_starts_above_a_uniform_guess_and_is_an_error():
    (finding,) = only(FINETUNE / "finetune_start_high/permuted_vocabulary", "CD901")
    assert finding.severity == "error" and "above where an untrained model starts" in finding.title


def test_a_nan_the_logger_filtered_shows_in_the_grad_norm_of_the_state_and_of_the_wandb_log():
    """The Trainer's WandbCallback logs train/global_step beside W&B's own count of log calls: the same step."""
    for run in curvedoc.load(FINETUNE / "nan_inf/lr_overflow_filtered"):
        (finding,) = [f for f in diagnose_run(run) if f.code == "CD101"]
        assert finding.step == 45 and "logging_nan_inf_filter" in finding.evidence[1]
        assert "exactly 0 at every logged step after it" in finding.evidence[2]


def test_a_learning_rate_too_small_to_move_anything_is_in_the_flat_finding():
    (finding,) = only(FINETUNE / "flat_from_start/lr_1e-7", "CD301")
    assert any(line.startswith("learning_rate over the run:") and line.endswith("9.636e-08") for line in finding.evidence)


def test_a_spike_that_recovers_reports_its_outcome_and_its_rate():
    (finding,) = only(FINETUNE / "spike/spike_recovers", "CD402")
    assert finding.step == 154 and finding.evidence[2].startswith("recovered:")
    assert finding.evidence[-1] == ("1 spike over 298 steps: 33.6 per 10,000 steps; 1 back at the level before it, "
                                    "0 not")


def test_the_model_card_names_the_base():
    found = [c.facts.base_model for c in companions_of(FINETUNE / "healthy/full_sft") if c.facts.base_model]
    assert found == ["curvedoc-fixtures/stdlib-gpt2-tiny"]


def build(curves, n_classes=None, kind=None, base_model=None, language_model=False):
    builder = RunBuilder("/synthetic", "test")
    for tag, (steps, values) in curves.items():
        builder.add(tag, np.asarray(steps), np.asarray(values, dtype=float))
    builder.meta.n_classes, builder.meta.n_classes_kind, builder.meta.base_model = n_classes, kind, base_model
    builder.meta.language_model = language_model
    return builder.build()


STEPS = np.arange(5, 205, 5)
FALLING = 2.0 + np.exp(-STEPS / 60)


def codes(run):
    return {f.code for f in diagnose_run(run) if f.severity in ALARMS}


def test_an_eval_at_step_zero_is_the_base_loss_the_first_train_loss_is_judged_against():
    run = build({"loss": (STEPS, 3 * FALLING), "eval_loss": ([0, 100, 200], [2.1, 2.2, 2.1])})
    assert "CD901" in codes(run)
    run = build({"loss": (STEPS, FALLING), "eval_loss": ([0, 100, 200], [2.1, 2.2, 2.1])})
    assert "CD901" not in codes(run)


@pytest.mark.parametrize("first,base,fires", [(10.8, "gpt2", True), (9.9, "gpt2", True), (9.5, "gpt2", False),
                                              (10.8, None, False)])
def test_near_ln_vocabulary_only_counts_for_a_named_pretrained_base(first, base, fires):
    run = build({"loss": (STEPS, np.r_[first, first - 1, np.linspace(first - 2, 3.5, len(STEPS) - 2)])},
                n_classes=50257, kind=VOCABULARY, base_model=base)
    assert ("CD901" in codes(run)) == fires


def test_one_term_at_zero_beside_terms_that_are_not_is_switched_off_and_all_at_zero_are_masked_out():
    """A public YOLO segmentation run logs train/sem_loss, unused, as exactly 0 at every epoch beside box, seg, cls
    and dfl losses that fall: a term switched off. A detector whose every term is exactly 0 from its first epoch
    supervises nothing."""
    falling = np.linspace(1.7, 0.6, len(STEPS))
    terms = {f"train/{name}_loss": (STEPS, falling) for name in ("box", "seg", "cls", "dfl")}
    run = build({"train/sem_loss": (STEPS, np.zeros(len(STEPS))), **terms})
    assert "CD902" not in codes(run)
    zeros = {tag: (STEPS, np.zeros(len(STEPS))) for tag in terms}
    run = build({"train/sem_loss": (STEPS, np.zeros(len(STEPS))), **zeros})
    assert "CD902" in codes(run)


def test_a_loss_of_exactly_zero_with_gradients_flowing_is_not_masked_out():
    run = build({"loss": (STEPS, np.zeros(len(STEPS))), "grad_norm": (STEPS, np.full(len(STEPS), 0.7))})
    assert "CD902" not in codes(run)
    run = build({"loss": (STEPS, np.zeros(len(STEPS))), "grad_norm": (STEPS, np.zeros(len(STEPS)))})
    assert "CD902" in codes(run)


def test_a_loss_of_exactly_zero_beside_answers_right_or_improving_never_moved_rather_than_supervised_nothing():
    """Public runs: a YOLO classifier whose train loss is exactly 0 beside a top-1 accuracy of 1.0 from its first
    epoch (one class to learn: the 0 is right), and a detector whose loss columns are 0 at every epoch while its
    mAP climbs (the logger never filled them): flat from the start, CD301, not CD902's nothing supervised. A zero
    loss beside an accuracy at chance, as a captcha reader's with its loss detached, is CD902's still."""
    zeros = np.zeros(len(STEPS))
    perfect = build({"train/loss": (STEPS, zeros), "metrics/accuracy_top1": (STEPS, np.ones(len(STEPS)))})
    climbing = build({"box_loss": (STEPS, zeros), "metrics/mAP50(B)": (STEPS, np.linspace(0.0, 0.45, len(STEPS)))})
    for run in (perfect, climbing):
        found = {f.code: f for f in diagnose_run(run) if f.severity in ALARMS}
        assert "CD902" not in found and "CD301" in found
        assert any("exactly 0 at every logged step" in line for line in found["CD301"].evidence)
    at_chance = build({"loss": (STEPS, zeros), "accuracy": (STEPS, 0.02 + 0.01 * np.sin(STEPS))})
    assert {"CD902"} <= codes(at_chance) and "CD301" not in codes(at_chance)


def test_an_agents_loss_logged_as_zero_until_learning_starts_is_not_masked_out():
    """SB3's DQN logs its loss as 0 until learning_starts: no update yet, then a TD loss that settles."""
    steps = np.arange(1, 301)
    loss = np.r_[np.zeros(20), np.geomspace(9.9, 0.8, 280)]
    run = build({"Loss": (steps, loss), "Reward_Mean": (steps, np.linspace(0.25, 4.9, 300))})
    assert "CD902" not in codes(run)


def test_a_loss_that_is_nan_from_its_first_value_is_nan_inf_naming_unsupervised_batches():
    run = build({"loss": (STEPS, np.full(len(STEPS), np.nan)), "grad_norm": (STEPS, np.full(len(STEPS), np.nan))})
    found = {f.code: f for f in diagnose_run(run)}
    assert "CD902" not in found and "0/0" in found["CD101"].evidence[-2]


def test_a_grad_norm_that_is_inf_now_and_then_is_a_skipped_mixed_precision_step():
    norm = np.full(len(STEPS), 0.8)
    norm[[7, 20]] = np.inf
    assert "CD101" not in codes(build({"loss": (STEPS, FALLING), "grad_norm": (STEPS, norm)}))


def test_a_constant_score_is_clustered_only_while_the_train_loss_moves():
    evals = [20, 40, 60, 80, 100]
    run = build({"loss": (STEPS, FALLING), "eval_exact_match": (evals, np.zeros(5))}, language_model=True)
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD903"]
    assert "0 at every one of 5 evaluations" in finding.title
    flat = build({"loss": (STEPS, np.full(len(STEPS), 2.0)), "eval_exact_match": (evals, np.zeros(5))},
                 language_model=True)
    assert "CD903" not in codes(flat)
    few = build({"loss": (STEPS, FALLING), "eval_exact_match": (evals[:3], np.zeros(3))}, language_model=True)
    assert "CD903" not in codes(few)
    moving = build({"loss": (STEPS, FALLING), "eval_exact_match": (evals, [0.1, 0.2, 0.2, 0.3, 0.3])},
                   language_model=True)
    assert "CD903" not in codes(moving)
    # a classifier's or a detector's score too: a public Mask R-CNN's val_mask_AP is exactly 1.0 at all 50 evaluations
    # of a 10-image validation set, and public-dev11's radio-signal run scores F1 0 (its labels all one class)
    assert "CD903" in codes(build({"loss": (STEPS, FALLING), "val_mask_AP": (evals, np.ones(5))}))
    (finding,) = [f for f in diagnose_run(build({"loss": (STEPS, FALLING), "val_f1": (evals, np.zeros(5))}))
                  if f.code == "CD903"]
    assert "labelled examples of the evaluation split" in finding.cheapest_check
    # one value to the digits a report shows: a public UNet++'s test_dice over 59 epochs moves by a pixel at most
    dice = np.array([0.08381021, 0.08381052, 0.08381021, 0.08381021, 0.08381021])
    assert "CD903" in codes(build({"loss": (STEPS, FALLING), "test_dice": (evals, dice)}))
    assert "CD903" not in codes(build({"loss": (STEPS, FALLING), "test_dice": (evals, dice + [0, 0, 0, 0.001, 0])}))
    # beside a held-out accuracy frozen as well, the frozen predictions are CD603's finding, said once
    frozen = build({"loss": (STEPS, FALLING), "val_f1": (evals, np.full(5, 0.63)), "val_acc": (evals, np.full(5, 0.7))})
    assert "CD903" not in codes(frozen) and "CD603" in codes(frozen)


def test_a_baseline_run_gives_the_base_loss_a_fine_tune_starts_against(capsys):
    from curvedoc.cli import main

    permuted = FINETUNE / "finetune_start_high/permuted_vocabulary"
    base = FINETUNE / "healthy/full_sft"
    (run,) = curvedoc.diagnose(permuted, baseline=base)
    (finding,) = [f for f in run.findings if f.code == "CD901"]
    assert "3.9× the base model's 2.051" in finding.title and "from --baseline" in finding.evidence[1]
    assert main([str(FINETUNE / "healthy/lora_sft"), "--baseline", str(base), "-q"]) == 0
    capsys.readouterr()
    assert main([str(FINETUNE / "healthy/lora_sft"), "--baseline", str(FINETUNE)]) == 2
    assert "runs here; name the one run of the base model" in capsys.readouterr().err


def test_an_adapter_of_a_causal_lm_is_a_language_model_whose_vocabulary_no_curve_gives_away():
    """lora_sft_long's eval loss sits near ln 9: a class count read off it would call the run flat at chance."""
    path = FINETUNE / "healthy/lora_sft_long"
    (run,) = curvedoc.load(path)
    assert run.meta.language_model and run.meta.n_classes is None
    (note,) = [f for f in diagnose_run(run) if f.symptom == "needs_n_classes"]
    assert note.title.startswith("Vocabulary size unknown") and "len(tokenizer)" in note.cheapest_check
    (run,) = curvedoc.load(path, num_classes=257)
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (257, VOCABULARY)


LOOP = FIXTURES / "finetune_loop"


@pytest.mark.parametrize("key", sorted(json.loads((LOOP / "labels.json").read_text())))
def test_the_held_out_loops_are_read_with_their_vocabulary_base_and_outputs(key):
    """The held-out source's files, read as any user's would be: its runs' symptoms are measured by
    `python -m curvedoc.evaluate` (part finetune-held-out), not pinned here."""
    runs = curvedoc.load(LOOP / key)
    assert len(runs) == 1 and not runs.problems
    (run,) = runs
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (104, VOCABULARY)
    assert run.meta.base_model == "curvedoc-fixtures/pydoc-llama-tiny"
    assert bool(run.generations) == (LOOP / key / "predictions.jsonl").exists()


@pytest.mark.parametrize("key,fires", [("base_eval_loss", True), ("baseline_loss", True), ("eval_loss", False)])
def test_a_base_loss_the_run_config_records_is_the_yardstick(tmp_path, key, fires):
    state = {"log_history": [{"step": step, "loss": 6.0 - step / 100, "epoch": step / 50} for step in range(5, 105, 5)]}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    (tmp_path / "args.json").write_text(json.dumps({"model_name_or_path": "gpt2", key: 3.1}))
    (run,) = curvedoc.load(tmp_path)
    found = [f for f in diagnose_run(run) if f.code == "CD901"]
    assert bool(found) == fires
    if fires:
        assert found[0].evidence[1] == f"the base model's loss: 3.1 (args.json: {key})"


def test_a_base_folder_the_config_names_in_the_same_archive_gives_the_base_loss(tmp_path):
    """An archive with the pretraining run's output beside the fine-tune whose args name it by path."""
    import shutil

    shutil.copytree(FINETUNE / "healthy/full_sft", tmp_path / "outputs/base")
    tune = tmp_path / "outputs/tune"
    tune.mkdir()
    shutil.copy(FINETUNE / "finetune_start_high/permuted_vocabulary/trainer_state.json", tune)
    (tune / "args.json").write_text(json.dumps({"model_name_or_path": "outputs/base"}))
    runs = curvedoc.load(tune)
    (run,) = runs
    assert run.meta.base_loss == pytest.approx(2.051, abs=1e-3)
    assert any(name.endswith("outputs/base/trainer_state.json") for name in run.meta.files)  # an audit sees it change
    (finding,) = [f for f in diagnose_run(run) if f.code == "CD901"]
    assert "the base the config names" in finding.evidence[1]
    audited = curvedoc.load(tmp_path)  # both runs of the archive; the base is not its own base
    assert {Path(r.path).parent.name: r.meta.base_loss is not None for r in audited} == {"base": False, "tune": True}
