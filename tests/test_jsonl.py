"""JSON Lines metric logs: Detectron2 metrics.json, generic *.jsonl, a lone W&B wandb-history.jsonl."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.readers import huggingface, jsonl
from curvedoc.readers.jsonl import add_history_file
from damage import assert_reads_or_refuses_in_one_line, damaged
from event_files import write_scalars

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "jsonl"
WANDB_HISTORY = FIXTURES / "wandb_2020" / "wandb-history.jsonl"


def load_one(path: Path):
    runs = curvedoc.load(path)
    assert len(runs) == 1
    return runs[0]


def write_lines(path: Path, rows: list, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + tail)
    return path


def test_detectron2_metrics_json_is_json_lines_indexed_by_iteration():
    run = load_one(FIXTURES / "detectron2" / "metrics.json")
    assert run.format == "detectron2-jsonl"
    assert run.roles["total_loss"] == Role.TRAIN_LOSS
    assert run.roles["validation_loss"] == Role.VAL_LOSS
    assert run.roles["validation_accuracy"] == Role.VAL_ACC
    assert run.roles["lr"] == Role.LR
    assert "iteration" not in run.tags
    assert run.series("total_loss")["step"].tolist() == list(range(19, 160, 20))
    assert run.series("validation_loss")["step"].tolist() == [42, 85, 128, 171]


def test_llama_factorys_trainer_log_counts_its_steps_in_current_steps(tmp_path):
    # {"current_steps": 10, "total_steps": 6750, "loss": 2.219, "lr": …, "epoch": 0.0044, "percentage": 0.15,
    #  "elapsed_time": "0:00:32", "remaining_time": "6:01:13"}, and an eval_loss record at every 50th step
    rows = []
    for step in range(10, 310, 10):
        rows.append({"current_steps": step, "total_steps": 300, "loss": 2.2 - step / 300, "lr": 1e-5,
                     "epoch": step / 300, "percentage": step / 3, "elapsed_time": "0:00:32",
                     "remaining_time": "6:01:13"})
        if step % 50 == 0:
            rows.append({"current_steps": step, "total_steps": 300, "eval_loss": 2.0 - step / 400,
                         "epoch": step / 300, "percentage": step / 3})
    run = load_one(write_lines(tmp_path / "trainer_log.jsonl", rows))
    assert set(run.tags) == {"loss", "lr", "eval_loss"} and run.roles["eval_loss"] == Role.VAL_LOSS
    assert run.series("loss")["step"].tolist()[:3] == [10, 20, 30]
    assert run.series("eval_loss")["step"].tolist() == [50, 100, 150, 200, 250, 300] and not run.warnings


def test_nan_and_infinity_tokens_are_values():
    run = load_one(FIXTURES / "generic" / "lr_too_high.jsonl")
    assert run.format == "jsonl"
    loss = run.series("train_loss")["value"]
    assert (~np.isfinite(loss)).sum() > 50
    assert run.point_counts()["val_loss"] == 2  # keys missing from train lines are not logged there
    assert "epoch" not in run.tags and "step" not in run.tags
    assert run.series("train_loss")["wall_time"].notna().all()


def test_crashed_run_keeps_the_lines_before_the_cut_one():
    run = load_one(FIXTURES / "generic" / "crashed.jsonl")
    assert run.point_counts()["train_loss"] == 86
    assert any("last record cut off" in warning for warning in run.warnings)


def test_lone_wandb_history_file():
    run = load_one(WANDB_HISTORY)
    assert run.format == "wandb-history"
    assert "_runtime" not in run.tags and "_timestamp" not in run.tags and "_step" not in run.tags
    assert run.series("train_loss")["wall_time"].min() >= 1.7e9
    assert run.roles["val_loss"] == Role.VAL_LOSS


def test_add_history_file_for_the_wandb_reader(tmp_path):
    builder = RunBuilder(tmp_path, "wandb")
    used = add_history_file(builder, WANDB_HISTORY)
    assert used == len(WANDB_HISTORY.read_text().splitlines())
    run = builder.build()
    assert run.meta.files == [str(WANDB_HISTORY)]
    assert run.series("lr")["step"].tolist()[:3] == [0, 1, 2]


def test_add_history_file_warns_on_bad_lines(tmp_path):
    tail = 'not json\n{"_step": 1, "loss": 0.5}\n[1]\n'
    path = write_lines(tmp_path / "wandb-history.jsonl", [{"_step": 0, "loss": 1.0}], tail=tail)
    builder = RunBuilder(tmp_path, "wandb")
    assert add_history_file(builder, path) == 2
    assert any("2 line(s)" in warning for warning in builder.warnings)


def test_two_records_written_back_to_back_on_one_line_are_both_read(tmp_path):
    """A validation writer and a train writer appending to one train.jsonl without a line end between them (a real
    public log, twice in 800 lines): both records are kept, and a damaged line is still skipped with a warning."""
    text = ('{"step": 10, "lm_loss": 3.9}\n{"step": 20, "val_loss": 3.7}{"step": 25, "lm_loss": 3.5}\n'
            ' {"step": 30, "lm_loss": 3.4}  {"step": 30, "val_loss": 3.3}\n{"step": 40, "lm_loss": 3.2}{"step": 4\n'
            '{"step": 50, "lm_loss": 3.1}\n')
    path = tmp_path / "train.jsonl"
    path.write_text(text)
    run = load_one(path)
    assert run.series("lm_loss")["step"].tolist() == [10, 25, 30, 50]
    assert run.series("val_loss")["step"].tolist() == [20, 30]
    assert any("1 line(s) that are not JSON objects" in warning for warning in run.warnings)


def test_no_step_key_uses_the_line_number(tmp_path):
    run = load_one(write_lines(tmp_path / "log.jsonl", [{"loss": 1.0}, {"loss": math.inf}, {"loss": 0.5}]))
    assert run.series("loss")["step"].tolist() == [0, 1, 2]
    assert math.isinf(run.series("loss")["value"][1])
    assert any("line number" in warning for warning in run.warnings)


def test_restarted_run_keeps_what_was_logged_last(tmp_path):
    rows = [{"iteration": i, "loss": 1.0} for i in range(5)] + [{"iteration": i, "loss": 2.0} for i in range(3, 6)]
    run = load_one(write_lines(tmp_path / "log.jsonl", rows))
    series = run.series("loss")
    assert series["step"].tolist() == [0, 1, 2, 3, 4, 5]
    assert series["value"].tolist() == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    assert any("restarted" in warning for warning in run.warnings)


def test_a_training_started_again_after_a_finished_run_is_a_run_of_its_own(tmp_path):
    """Detectron2's JSONWriter appends: train_net.py run twice into one output folder without --resume writes the
    second training's iterations from the first after the whole first run. One started again after a run cut short
    is that run restarted (the restart rule), as in a text or CSV log."""
    first = [{"iteration": i, "total_loss": 4.0 - i / 50} for i in range(19, 200, 20)]
    second = [{"iteration": i, "total_loss": 3.0 - i / 100} for i in range(19, 200, 20)]
    runs = curvedoc.load(write_lines(tmp_path / "output" / "metrics.json", first + second))
    assert [run.name for run in runs] == ["output#1", "output#2"]
    assert [run.series("total_loss")["value"].iloc[0] for run in runs] == [3.62, 2.81]
    assert all(run.point_counts() == {"total_loss": 10} and not run.warnings for run in runs)
    (restarted,) = curvedoc.load(write_lines(tmp_path / "cut" / "metrics.json", first[:4] + second))
    assert restarted.series("total_loss")["value"].iloc[0] == 2.81
    assert any("restarted run" in warning for warning in restarted.warnings)


def test_a_batch_index_logged_as_the_step_is_counted_on_when_the_loss_takes_up_where_it_left(tmp_path):
    """``log({"loss": loss, "step": i})`` inside ``for i, batch in enumerate(loader)`` (Arda-Bati's autoencoder):
    the step starts again every epoch, and each epoch's loss goes on from where the last one ended. That is one
    run's epochs, counted on; a sweep whose runs each start again at an untrained model's loss stays runs."""
    def epoch(first_loss: float) -> list[dict]:
        return [{"step": 50 * i, "loss": first_loss * 0.98 ** i} for i in range(20)]
    rows, loss = [], 1.1
    for _ in range(4):
        rows += epoch(loss)
        loss = rows[-1]["loss"]
    run = load_one(write_lines(tmp_path / "epochs" / "loss_train.jsonl", rows))
    assert run.series("loss")["step"].tolist()[19:22] == [950, 1000, 1050] and len(run.series("loss")) == 80
    assert any("counted on across them" in warning for warning in run.warnings)
    runs = curvedoc.load(write_lines(tmp_path / "sweep" / "loss_train.jsonl", epoch(1.1) + epoch(1.1) + epoch(1.12)))
    assert len(runs) == 3 and all(run.series("loss")["step"].max() == 950 for run in runs)


def test_a_last_session_that_stopped_as_it_began_does_not_replace_the_run(tmp_path):
    """A Detectron2 metrics.json of appended sessions whose last job wrote its iteration-0 record and died
    (Get-My-Money/Blood-cells-task): that one record would replace the whole run before it. It is not read, the
    run is kept, and the warning says so; a real restart (a stretch that can stand for a run) still replaces."""
    rows = [{"iteration": i, "total_loss": 4.0 - i / 50} for i in range(19, 150, 10)] + [
        {"iteration": 0, "total_loss": 4.03}]
    run = load_one(write_lines(tmp_path / "metrics.json", rows))
    assert run.series("total_loss")["step"].tolist() == list(range(19, 150, 10))
    assert any("stopped as it began" in warning for warning in run.warnings)
    assert not any("restarted run" in warning for warning in run.warnings)


def test_nested_dicts_become_slash_tags(tmp_path):
    rows = [{"step": 1, "train": {"loss": 0.5}}, {"step": 2, "train": {"loss": 0.4}}]
    run = load_one(write_lines(tmp_path / "log.jsonl", rows))
    assert run.roles == {"train/loss": Role.TRAIN_LOSS}


@pytest.mark.parametrize("name, content, problem", [
    ("log.jsonl", "", "empty file"),
    ("log.jsonl", "garbage\nmore garbage\n", "no JSON object lines"),
    ("log.jsonl", '{"step": 1, "name": "a"}\n{"step": 2, "name": "b"}\n', "no numeric values"),
    ("trainer_state.json", '{"global_step": 10, "epoch": 1.0}', "not a Hugging Face trainer state"),
    ("trainer_state.json", "[1, 2, 3]", "not a Hugging Face trainer state"),
    ("trainer_state.json", '{"log_history": [{"loss": 1.0, "st', "not valid JSON"),
    ("trainer_state.json", "", "empty file"),
])
def test_unreadable_json_logs_give_one_line_errors(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert str(path) in str(error.value) and problem in str(error.value) and "\n" not in str(error.value)


def test_a_trainer_that_logged_nothing_is_a_run_not_enough_to_judge(tmp_path):
    """A Trainer run stopped after 3 steps, logging every 10: its trainer_state.json is a run of its own, with no
    curve and a warning that says why, which diagnose calls not enough to judge, not a file refused as unreadable."""
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 3, "logging_steps": 10, "max_steps": 3, "log_history": []}))
    run = load_one(path)
    assert run.tags == [] and diagnose_run(run) == [] and run.insufficient == "no scalar curve at all"
    assert any("holds no logged values: the run took 3 step(s) and logs every 10" in w for w in run.warnings)


def test_non_utf8_bytes_are_read_with_a_warning(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"step": 0, "loss": 1.0, "note": "\xe9t\xe9"}\n{"step": 1, "loss": 0.5}\n')
    run = load_one(path)
    assert run.point_counts() == {"loss": 2}
    assert any("not UTF-8" in warning for warning in run.warnings)


REAL_JSON = sorted(FIXTURES.rglob("*.json*")) + sorted((FIXTURES.parent / "huggingface").rglob("trainer_state.json"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_json_logs_only_give_curvedoc_errors(tmp_path, data):
    source = data.draw(st.sampled_from(REAL_JSON))
    path = tmp_path / source.name
    path.write_bytes(damaged(data, source.read_bytes()))
    assert_reads_or_refuses_in_one_line(huggingface if source.name == "trainer_state.json" else jsonl, path)


def test_integer_beyond_float_range_is_infinite_not_a_crash(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"step": 0, "loss": 1' + "0" * 400 + ', "extra": {"x": -1' + "0" * 400 + '}}\n{"step": 1, "loss": 2}\n')
    run = load_one(path)
    assert run.series("loss")["value"].tolist() == [math.inf, 2.0]
    assert run.series("extra/x")["value"].tolist() == [-math.inf]


def test_step_beyond_int64_is_skipped_with_a_warning(tmp_path):
    run = load_one(write_lines(tmp_path / "log.jsonl", [{"step": 1, "loss": 1.0}, {"step": 10**30, "loss": 2.0},
                                                        {"step": 2, "loss": 3.0}]))
    assert run.series("loss")["step"].tolist() == [1, 2]
    assert any("1 line(s) without a step value skipped" in warning for warning in run.warnings)


def test_fractional_steps_are_not_truncated_the_line_number_is_the_step(tmp_path):
    # as in CSV: an epoch counter of 0.5, 1.0 … is no step; truncating it would merge points
    run = load_one(write_lines(tmp_path / "log.jsonl", [{"epoch": 0.5, "loss": 1.0}, {"epoch": 1.0, "loss": 2.0}]))
    assert run.series("loss")["step"].tolist() == [0, 1]
    assert "epoch" not in run.roles
    assert any("not a whole number" in warning for warning in run.warnings)


def test_utf16_json_lines_cut_mid_character_keep_the_complete_lines(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes('{"step": 0, "loss": 1}\n{"step": 1, "loss": 2}\n'.encode("utf-16")[:-1])
    run = load_one(path)
    assert run.series("loss")["step"].tolist() == [0]
    assert any("last record cut off" in warning for warning in run.warnings)


def test_detectron2_run_is_named_by_its_output_folder():
    assert load_one(FIXTURES / "detectron2" / "metrics.json").name == "detectron2"


def test_duplicate_step_warning_names_the_file(tmp_path):
    path = write_lines(tmp_path / "log.jsonl", [{"step": 1, "loss": 1.0}, {"step": 1, "loss": 2.0}])
    run = load_one(path)
    assert run.series("loss")["value"].tolist() == [2.0]
    assert run.warnings == [
        f"{path}: 1 point(s) logged again at a step that already had a value (in loss); "
        "each curve keeps the last value logged per step"
    ]


def openmmlab_records(epochs: int, iterations: int, every: int) -> list[dict]:
    """What OpenMMLab's TextLoggerHook (mmcv 1.x: MMDetection 2, MMSegmentation 0.x …) appends to
    ``{timestamp}.log.json``: the environment first, then train records counting iterations within their epoch
    and an evaluation record after every epoch, at the epoch's last iteration."""
    rows: list[dict] = [{"env_info": "sys.platform: linux", "config": "model = dict(type='FasterRCNN')", "seed": 0}]
    for epoch in range(1, epochs + 1):
        for iteration in range(every, iterations + 1, every):
            rows.append({"mode": "train", "epoch": epoch, "iter": iteration, "lr": 0.02, "memory": 3500,
                         "data_time": 0.01, "loss_cls": 0.5 / epoch, "loss_bbox": 0.4 / epoch,
                         "loss": 0.9 / epoch + iteration / 1e4, "time": 0.3})
        rows.append({"mode": "val", "epoch": epoch, "iter": iterations, "lr": 0.02, "bbox_mAP": 0.2 + epoch / 100,
                     "bbox_mAP_copypaste": "0.213 0.401 0.211 0.120 0.240 0.276"})
    return rows


def test_openmmlab_log_json_is_one_run_its_iterations_counted_on_and_its_evaluations_held_out(tmp_path):
    """Each epoch's iterations start again at the first: one run whose steps count on across the epochs (the
    records once made a run of every epoch), with the evaluation records' names said with their split."""
    work_dir = tmp_path / "work_dirs" / "faster_rcnn"
    write_lines(work_dir / "20230101_120000.log.json", openmmlab_records(epochs=4, iterations=400, every=50))
    # the hook prints the same records to the text log beside it: that is no second run
    (work_dir / "20230101_120000.log").write_text("".join(
        f"2023-01-01 12:00:00,000 - mmdet - INFO - Epoch [{epoch}][{it}/400]\tlr: 2.000e-02, loss: {0.9 / epoch:.4f}\n"
        for epoch in range(1, 5) for it in range(50, 401, 50)))
    run = load_one(work_dir)
    assert run.series("loss")["step"].tolist() == list(range(50, 1601, 50))
    assert run.roles["val_bbox_mAP"] == Role.SCORE and run.series("val_bbox_mAP")["step"].tolist() == [
        400, 800, 1200, 1600]
    assert run.roles["loss"] == Role.TRAIN_LOSS and "val_lr" not in run.tags and "mode" not in run.tags


def test_mmengine_evaluations_logged_at_their_epoch_sit_at_the_end_of_it(tmp_path):
    """MMEngine's vis_data/scalars.json places train records at their iteration and the evaluation after each
    epoch at the epoch's number: read at that step the evaluations sat before the training, and the step going
    back made every epoch but the last a restarted run's, dropped. The {timestamp}.json copy beside it is no
    second run."""
    rows = []
    for epoch in range(1, 5):
        for iteration in range((epoch - 1) * 400 + 50, epoch * 400 + 1, 50):
            rows.append({"lr": 0.02, "data_time": 0.01, "loss": 2 - iteration / 1000, "time": 0.3, "epoch": epoch,
                         "iter": iteration, "memory": 3500, "step": iteration})
        rows.append({"accuracy/top1": 50.0 + epoch, "data_time": 0.01, "time": 0.05, "step": epoch})
    vis_data = tmp_path / "20230101_120000" / "vis_data"
    write_lines(vis_data / "scalars.json", rows)
    write_lines(vis_data / "20230101_120000.json", rows)
    run = load_one(tmp_path)
    assert run.series("loss")["step"].tolist() == list(range(50, 1601, 50)) and not run.warnings
    assert run.roles["val_accuracy/top1"] == Role.VAL_ACC
    assert run.series("val_accuracy/top1")["step"].tolist() == [400, 800, 1200, 1600]


def tune_trial(folder: Path, rows: list[dict]) -> Path:
    """A Ray Tune trial's folder as Tune writes it: every result to result.json, to progress.csv (the config
    flattened into config/… columns) and to an event file, the trial's config to params.json."""
    write_lines(folder / "result.json", rows)
    (folder / "params.json").write_text(json.dumps(rows[0]["config"]))
    flat = [{**{key: value for key, value in row.items() if key != "config"},
             **{f"config/{key}": value for key, value in row["config"].items()}} for row in rows]
    header = list(flat[0])
    (folder / "progress.csv").write_text(",".join(header) + "\n" + "".join(
        ",".join("" if row[key] is None else str(row[key]) for key in header) + "\n" for row in flat))
    write_scalars(folder, {"ray/tune/loss": [row["loss"] for row in rows]})
    return folder


def test_a_ray_tune_trial_is_one_run_counted_in_training_iterations(tmp_path):
    """A function trainable's results log timesteps_total as null and count reports in training_iteration; the
    trial's config, repeated in every result, is its settings (its class count read), not curves; progress.csv and
    the event file beside result.json hold the same results again: one run."""
    rows = [{"loss": 2.3 - i / 10, "accuracy": 0.1 + i / 20, "timesteps_total": None, "episodes_total": None,
             "training_iteration": i, "done": i == 8, "timestamp": 1_700_000_000 + i, "time_total_s": 10.0 * i,
             "config": {"lr": 0.01, "num_classes": 10}} for i in range(1, 9)]
    run = load_one(tune_trial(tmp_path / "train_fn_2023-01-01" / "train_fn_abc12_00000_0_lr=0.01", rows))
    assert run.format == "jsonl" and run.series("loss")["step"].tolist() == list(range(1, 9))
    assert run.meta.n_classes == 10 and not [tag for tag in run.tags if tag.startswith("config")]
    # progress.csv on its own reads the same way: the empty timesteps_total places nothing
    table = load_one(tmp_path / "train_fn_2023-01-01" / "train_fn_abc12_00000_0_lr=0.01" / "progress.csv")
    assert table.series("loss")["step"].tolist() == list(range(1, 9)) and "config/lr" not in table.tags


def test_rllib_results_are_counted_in_environment_steps(tmp_path):
    rows = [{"episode_reward_mean": 20.0 + i, "episode_len_mean": 20.0 + i, "timesteps_total": 4000 * i,
             "training_iteration": i, "info": {"learner": {"default_policy": {"learner_stats": {
                 "total_loss": 8.0 - i / 2, "cur_lr": 5e-5}}}}, "config": {"lr": 5e-5, "gamma": 0.99}}
            for i in range(1, 7)]
    run = load_one(write_lines(tmp_path / "PPO_CartPole-v1_0" / "result.json", rows))
    assert run.series("episode_reward_mean")["step"].tolist() == [4000 * i for i in range(1, 7)]
    assert run.primary(Role.SCORE) == "episode_reward_mean" and "config/gamma" not in run.tags


ODD_VALUES = st.one_of(st.none(), st.integers(-3, 10**20), st.floats(allow_nan=True, allow_infinity=True),
                       st.sampled_from(["train", "val", "test", "x", ""]), st.lists(st.integers(0, 3), max_size=2),
                       st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 3), max_size=1))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.fixed_dictionaries({"loss": st.floats(0, 10)}, optional={
    "mode": ODD_VALUES, "epoch": ODD_VALUES, "iter": ODD_VALUES, "step": ODD_VALUES, "acc": ODD_VALUES}),
    min_size=1, max_size=12))
def test_split_and_epoch_keys_of_any_value_only_give_curvedoc_errors(tmp_path, rows):
    """The split key, the epoch and the step of OpenMMLab's and MMEngine's records as any JSON may hold them (a
    list, an object, Infinity, 1e20): a run or a one-line refusal, never a crash."""
    path = tmp_path / "20230101_120000.log.json"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert_reads_or_refuses_in_one_line(jsonl, path)
