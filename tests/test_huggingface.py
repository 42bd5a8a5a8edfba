"""Hugging Face Trainer state files written by transformers' own Trainer (fixtures/huggingface)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import curvedoc
from curvedoc import Role
from curvedoc.diagnose import diagnose_run
from curvedoc.readers import Source, read_source
from curvedoc.report import render

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "huggingface"
OUTPUT_DIR = FIXTURES / "digits_mlp"
STATE = OUTPUT_DIR / "trainer_state.json"


def load_one(path: Path):
    runs = curvedoc.load(path)
    assert len(runs) == 1
    return runs[0]


def read_file(path: Path):
    """One state file read as discovery hands it over: with its companion files (the model's config.json)."""
    return read_source(Source("hf", path, ((None, path),), True))


def test_trainer_state_train_and_eval_curves():
    run = load_one(STATE)
    assert run.format == "hf-trainer-state" and run.name == "digits_mlp"
    assert run.roles == {
        "grad_norm": Role.GRAD_NORM, "learning_rate": Role.LR, "loss": Role.TRAIN_LOSS,
        "eval_accuracy": Role.VAL_ACC, "eval_loss": Role.VAL_LOSS, "eval_runtime": Role.OTHER,
        "eval_samples_per_second": Role.OTHER, "eval_steps_per_second": Role.OTHER,
    }
    assert run.series("loss")["step"].tolist() == list(range(3, 130, 3))
    assert run.series("eval_loss")["step"].tolist() == [21, 42, 63, 84, 105, 126, 129]
    accuracy = run.series("eval_accuracy")["value"]
    assert accuracy.iloc[-1] > 0.85 and accuracy.iloc[-1] > accuracy.iloc[0]
    assert not run.warnings


def test_summary_entry_is_metadata_not_a_point():
    run = load_one(STATE)
    assert "train_runtime" not in run.tags and "train_loss" not in run.tags and "total_flos" not in run.tags
    summary = run.meta.hparams["summary"]
    assert summary["train_runtime"] > 0 and summary["step"] == 129
    assert run.meta.hparams["global_step"] == 129 and run.meta.hparams["num_train_epochs"] == 3
    assert "log_history" not in run.meta.hparams


def test_class_count_from_config_json_beside_the_state():
    run = load_one(STATE)
    assert run.meta.n_classes == 10 and "id2label" in run.meta.n_classes_source
    assert str(OUTPUT_DIR / "config.json") in run.meta.files


def test_each_checkpoint_state_reads_as_a_snapshot():
    states = sorted(OUTPUT_DIR.glob("checkpoint-*/trainer_state.json"))
    runs = {run.name: run for path in states for run in read_file(path)}
    assert sorted(runs) == ["digits_mlp/checkpoint-129", "digits_mlp/checkpoint-43", "digits_mlp/checkpoint-86"]
    early = runs["digits_mlp/checkpoint-43"]
    assert early.series("loss")["step"].max() == 42
    assert early.meta.n_classes == 10
    assert "summary" not in early.meta.hparams  # the summary entry is only written after training


def test_output_folder_reads_the_final_state():
    runs = curvedoc.load(OUTPUT_DIR)
    final = next(run for run in runs if run.name == "digits_mlp")
    assert "summary" in final.meta.hparams


def test_config_in_the_output_folder_above_a_checkpoint(tmp_path):
    checkpoint = tmp_path / "out" / "checkpoint-129"
    checkpoint.mkdir(parents=True)
    shutil.copy(OUTPUT_DIR / "checkpoint-129" / "trainer_state.json", checkpoint)
    (tmp_path / "out" / "config.json").write_text(json.dumps({"num_labels": 4, "model_type": "bert"}))
    (checkpoint / "training_args.bin").write_bytes(b"\x80\x04 not to be unpickled")
    [run] = read_file(checkpoint / "trainer_state.json")
    assert run.meta.n_classes == 4 and run.name == "out/checkpoint-129"


def test_shuffled_labels_run_reads():
    run = load_one(FIXTURES / "digits_mlp_shuffled" / "trainer_state.json")
    assert run.series("eval_accuracy")["value"].max() < 0.3


def test_unreadable_model_config_is_a_warning(tmp_path):
    shutil.copy(STATE, tmp_path / "trainer_state.json")
    (tmp_path / "config.json").write_text("{not json")
    [run] = read_file(tmp_path / "trainer_state.json")
    assert run.meta.n_classes is None
    assert any("config" in warning for warning in run.warnings)


def test_step_beyond_int64_in_log_history_is_skipped_not_a_crash(tmp_path):
    state = {"log_history": [{"step": 1, "loss": 1.0}, {"step": 1e30, "loss": 2.0}, {"step": 10**30, "loss": 3.0}]}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    run = load_one(tmp_path / "trainer_state.json")
    assert run.series("loss")["step"].tolist() == [1]


def test_a_trainer_that_logged_only_its_closing_summary_is_read_and_too_thin(tmp_path):
    """logging_steps 500 over a 69-step run (a real public run's shape): the Trainer logged nothing but its summary,
    whose train_loss is the run's mean. It is the run's one point, with a warning that says why there is no more;
    the run is too thin to judge rather than unreadable, and the terminal report shows why."""
    state = {"global_step": 69, "logging_steps": 500, "max_steps": 69, "log_history": [
        {"epoch": 2.98, "step": 69, "total_flos": 1.1e15, "train_loss": 1.77e11, "train_runtime": 36.1}]}
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(state))
    run = load_one(path)
    assert run.series("train_loss")["value"].tolist() == [1.77e11] and run.series("train_loss")["step"].tolist() == [69]
    assert any("logging_steps 500 is more than the 69 steps" in warning for warning in run.warnings)
    diagnose_run(run)
    text = render("text", [run])
    assert "not enough to judge" in text and "read warning" in text and "1 point " in text


def _history_evaluated_again_after_training() -> list[dict]:
    """Two epochs of a Trainer with load_best_model_at_end, then trainer.evaluate() after train(): the best epoch's
    model scored again, at the last step."""
    return [{"loss": 0.9, "epoch": 0.5, "step": 50},
            {"eval_loss": 0.60, "eval_accuracy": 0.82, "epoch": 1.0, "step": 100},
            {"loss": 0.5, "epoch": 1.5, "step": 150},
            {"eval_loss": 0.66, "eval_accuracy": 0.80, "epoch": 2.0, "step": 200},
            {"train_runtime": 300.9, "total_flos": 1.9e14, "train_loss": 0.65, "epoch": 2.0, "step": 200},
            {"eval_loss": 0.60, "eval_accuracy": 0.82, "epoch": 2.0, "step": 200}]


def test_an_evaluation_after_training_does_not_replace_the_last_one_during_it(tmp_path):
    """trainer.evaluate() after train() scores the model training ended with (the best checkpoint reloaded), and the
    history puts it at the last step: it would replace the last evaluation of training there, and hide the rise
    that made an earlier checkpoint the best. The evaluation during training is kept, with a warning; saved as a
    table (pd.DataFrame(log_history).to_csv) it is read the same way."""
    entries = _history_evaluated_again_after_training()
    state = tmp_path / "trainer_state.json"
    state.write_text(json.dumps({"global_step": 200, "log_history": entries}))
    table = tmp_path / "training_history.csv"
    columns = list(dict.fromkeys(key for entry in entries for key in entry))
    table.write_text(",".join(columns) + "\n" + "".join(
        ",".join(str(entry.get(column, "")) for column in columns) + "\n" for entry in entries))
    for path in (state, table):
        (run,) = curvedoc.load(path)
        assert run.series("eval_loss")["value"].tolist() == [0.60, 0.66], path.name
        assert any("after training" in warning for warning in run.warnings), path.name
