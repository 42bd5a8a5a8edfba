"""Training histories saved as one JSON object of metric lists (Keras's history.history, PyTorch scripts' dicts), or
as a list of one record an epoch."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.errors import NotALog
from curvedoc.readers import Source, classify_file, history, limits
from curvedoc.report import INSUFFICIENT, verdict
from damage import assert_reads_or_refuses_in_one_line, damaged

LOSS = [2.3, 1.9, 1.6, 1.4, 1.3, 1.2]
ACCURACY = [0.1, 0.3, 0.5, 0.6, 0.65, 0.7]


def write_json(path: Path, document, indent: int | None = None) -> Path:
    path.write_text(json.dumps(document, indent=indent))
    return path


def load_one(path: Path):
    runs = curvedoc.load(path)
    assert len(runs) == 1 and runs.problems == []
    return runs[0]


def test_keras_history_dict_is_one_run_over_the_epochs(tmp_path):
    path = write_json(tmp_path / "history.json", {
        "loss": LOSS, "accuracy": ACCURACY, "val_loss": [x + 0.1 for x in LOSS], "val_accuracy": ACCURACY,
    })
    run = load_one(path)
    assert run.format == "json-history" and run.name == "history.json"
    assert run.roles == {"loss": Role.TRAIN_LOSS, "accuracy": Role.TRAIN_ACC, "val_loss": Role.VAL_LOSS,
                         "val_accuracy": Role.VAL_ACC}
    assert run.series("val_loss")["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert run.series("loss")["value"].tolist() == LOSS
    no_step_list = (f"{path}: no step list (step, steps, global_step, iteration, iterations, episode, episodes, epoch, "
                    "epochs); the position in the lists is the epoch, from 1")
    assert run.warnings == [no_step_list]


def sacred_run(folder: Path, steps: int) -> Path:
    """A Sacred FileStorageObserver run folder: metrics.json (each metric with its own steps and timestamps, keys
    sorted, indented), config.json, run.json and the captured stdout, cout.txt."""
    def series(at: list[int], values: list[float]) -> dict:
        return {"steps": at, "timestamps": ["2020-01-01T10:00:00.000000"] * len(at), "values": values}
    evaluated = list(range(steps // 10 - 1, steps, steps // 10))
    folder.mkdir(parents=True)
    write_json(folder / "metrics.json", {
        "training.loss": series(list(range(steps)), [2.3 * 0.999 ** step for step in range(steps)]),
        "validation.accuracy": series(evaluated, [0.5 + index / 100 for index in range(len(evaluated))]),
    }, indent=2)
    write_json(folder / "config.json", {"lr": 0.01, "num_classes": 10, "seed": 7})
    write_json(folder / "run.json", {"status": "COMPLETED", "experiment": {"name": "mnist"}})
    (folder / "cout.txt").write_text("".join(f"step {step} loss: {2.3 * 0.999 ** step:.4f}\n" for step in range(steps)))
    return folder


@pytest.mark.parametrize("steps", [40, 12_000])  # judged whole, and by its first bytes beyond 256 KiB
def test_a_sacred_run_is_its_metrics_each_at_its_own_steps(tmp_path, steps):
    """Sacred's metrics.json saves each metric with its own steps: a validation metric logged every tenth step
    sits at those steps, not at the first tenth of the training's. Its printed output beside it is no second run;
    its config.json gives the class count."""
    run = load_one(sacred_run(tmp_path / "my_runs" / "1", steps).parent)
    assert run.series("training.loss")["step"].tolist() == list(range(steps))
    assert run.series("validation.accuracy")["step"].tolist() == list(range(steps // 10 - 1, steps, steps // 10))
    assert run.roles["validation.accuracy"] == Role.VAL_ACC and run.meta.n_classes == 10


def nested_pytorch_history() -> dict:
    return {
        "config": {"num_classes": 10, "lr": 0.001},
        "history": {"epochs": [0, 1, 2, 3, 4, 5], "train_losses": LOSS, "val_losses": LOSS, "train_accs": ACCURACY,
                    "val_accs": ACCURACY, "best_epoch": 5},
    }


def test_nested_pytorch_history_keeps_its_names_and_its_epochs(tmp_path):
    run = load_one(write_json(tmp_path / "training_history.json", nested_pytorch_history(), indent=2))
    assert sorted(run.tags) == ["train_accs", "train_losses", "val_accs", "val_losses"]  # the epochs are the x axis
    assert run.series("train_losses")["step"].tolist() == [0, 1, 2, 3, 4, 5]
    assert run.warnings == []
    # the config saved beside the lists records the class count
    assert run.meta.n_classes == 10 and run.meta.hparams["best_epoch"] == 5


def test_each_splits_metrics_under_its_name_are_one_history(tmp_path):
    """A public EEG script saves {"train": {"loss": [...], "accuracy": [...]}, "val": {..., "predictions": []}}
    beside its best scores: each split's lists are its curves, the empty ones none."""
    document = {"train": {"loss": LOSS, "accuracy": ACCURACY},
                "val": {"loss": [x + 0.1 for x in LOSS], "accuracy": ACCURACY, "predictions": [], "labels": []},
                "best_val_loss": 1.3, "config": "gru_xnet_bs32_lr0.001"}
    run = load_one(write_json(tmp_path / "training_history.json", document, indent=2))
    assert run.roles == {"train_loss": Role.TRAIN_LOSS, "train_accuracy": Role.TRAIN_ACC, "val_loss": Role.VAL_LOSS,
                         "val_accuracy": Role.VAL_ACC}
    assert run.series("val_loss")["value"].tolist() == pytest.approx([x + 0.1 for x in LOSS])


def test_the_histories_of_numbered_phases_are_a_run_each(tmp_path):
    """A public Keras script trains a head on a frozen backbone, then fine-tunes the whole model, and saves both
    History dicts under stage1 and stage2: a run a phase, in their order, whose switch (layers unfrozen, a lower
    learning rate) makes the loss jump by design. An object of other things beside histories is no such file."""
    stage = {"loss": LOSS, "val_loss": LOSS, "accuracy": ACCURACY}
    fine_tune = {"loss": [1.0, 0.9, 0.85], "val_loss": [1.1, 1.0, 0.95], "accuracy": [0.8, 0.85, 0.86]}
    path = write_json(tmp_path / "training_history.json", {"stage2": fine_tune, "stage1": stage})
    runs = curvedoc.load(path)
    assert [run.name for run in runs] == ["training_history.json#stage1", "training_history.json#stage2"]
    assert runs[1].series("loss")["value"].tolist() == [1.0, 0.9, 0.85] and runs.problems == []
    assert history.looks_like_history(path.read_bytes(), complete=True, name=path.stem)
    apart = {"stage1": {"loss": [1.0, 2.0, 3.0]}, "stage2": {"reward": [1.0, 2.0]}}
    with pytest.raises(CurvedocError, match="nor a training history"):
        curvedoc.load(write_json(tmp_path / "other.json", apart))


def test_a_pretty_printed_history_whose_first_bytes_are_settings_and_its_x_axis_is_found(tmp_path):
    """A public DQN script dumps its settings, then "episodes": [1, 2, …] one number a line, then the rewards
    (json.dump(..., indent=2)): its first 4 KiB hold no metric's list, so a small file is judged whole; a big one
    that opens so (a data file) is not read whole to find out."""
    settings = {"algorithm": "double_dqn", "seed": 42, "num_episodes": 600, "mean_reward": 148.1}
    episodes = list(range(1, 601))
    document = {**settings, "episodes": episodes, "episode_rewards": [-100 + e / 2 for e in episodes]}
    (tmp_path / "run").mkdir()
    write_json(tmp_path / "run" / "training_metrics.json", document, indent=2)
    (run,) = curvedoc.load(tmp_path / "run")
    assert run.tags == ["episode_rewards"] and run.series("episode_rewards")["step"].tolist()[:3] == [1, 2, 3]
    (tmp_path / "data").mkdir()
    write_json(tmp_path / "data" / "positions.json", {"frames": list(range(120_000)), "rewards": [0.5] * 120_000},
               indent=2)
    with pytest.raises(CurvedocError, match="no training logs"):
        curvedoc.load(tmp_path / "data")


def test_a_history_saved_under_a_captured_output_name_is_a_history(tmp_path):
    """A public PPO script's json.dump(log, open("save/log.txt", "w"), indent=4): a history of metric lists, not
    captured output; JSON Lines and printed dicts under such a name stay the text reader's."""
    document = {"actor loss": [-0.14, -0.24, -0.01, -0.12], "critic loss": [3.1, 2.2, 1.9, 1.7],
                "mean return": [7057.0, 7210.0, 7447.0, 7300.0]}
    (run,) = curvedoc.load(write_json(tmp_path / "log.txt", document, indent=4))
    assert run.format == "json-history" and run.series("critic loss")["value"].tolist() == [3.1, 2.2, 1.9, 1.7]
    lines = "".join(f'{{"step": {step}, "loss": {1 / step}}}\n' for step in range(1, 6))
    (tmp_path / "train_log.txt").write_text(lines)
    assert curvedoc.load(tmp_path / "train_log.txt")[0].format != "json-history"


def test_lists_named_by_a_split_alone_beside_others_are_told_by_their_course(tmp_path):
    """A public translation notebook's history.json: ``train`` and ``val`` (its label-smoothed losses) beside
    ``ppl``, ``acc`` and ``lr``; nothing else names a loss, and both fall, as a loss does. Split-named lists that
    climb within 0–1 beside a learning rate are that split's accuracy."""
    losses = {"train": [8.31, 5.56, 4.19, 3.50], "val": [7.81, 5.84, 4.49, 4.12], "ppl": [2466.0, 343.0, 89.0, 61.0],
              "acc": [20.1, 35.2, 44.0, 45.5], "lr": [1e-4, 2e-4, 1.4e-4, 1.1e-4]}
    (run,) = curvedoc.load(write_json(tmp_path / "history.json", losses))
    assert run.roles["train_loss"] == Role.TRAIN_LOSS and run.roles["val_loss"] == Role.VAL_LOSS
    assert run.series("val_loss")["value"].tolist() == losses["val"]
    accuracies = {"train": [0.41, 0.62, 0.75, 0.81], "val": [0.40, 0.58, 0.66, 0.70], "lr": [1e-3, 1e-3, 1e-4, 1e-4]}
    (run,) = curvedoc.load(write_json(tmp_path / "scores.json", accuracies))
    assert run.roles["train_acc"] == Role.TRAIN_ACC and run.roles["val_acc"] == Role.VAL_ACC


def test_lists_grouped_under_a_key_are_curves_of_the_history(tmp_path):
    """A public SRGAN script saves its losses beside {"validation_metrics": {"PSNR": [...], "MSE": [...]},
    "learning_rates": {"generator": [...]}}: lists as long as the history's own are its curves; a group of lists
    of another length (a config's milestones) is not."""
    document = {"generator_losses": LOSS, "discriminator_losses": LOSS,
                "validation_metrics": {"PSNR": [20.0, 22.0, 23.0, 24.0, 24.5, 25.0], "MSE": LOSS},
                "learning_rates": {"generator": [1e-4] * 6}, "schedule": {"milestones": [2, 4]}}
    run = load_one(write_json(tmp_path / "training_history.json", document))
    assert run.roles["validation_metrics/MSE"] is Role.VAL_LOSS and run.roles["learning_rates/generator"] is Role.LR
    assert run.series("validation_metrics/PSNR")["value"].tolist() == [20.0, 22.0, 23.0, 24.0, 24.5, 25.0]
    assert not any(tag.startswith("schedule") for tag in run.tags)


def test_one_record_an_epoch_under_a_key_is_curves_of_the_history(tmp_path):
    """A public retrieval model saves {"train_loss": [...], "epochs": [...], "val_metrics": [{"P2M_Acc@1": 0.87,
    "Avg_Acc": 0.81}, …]}: the records, one an epoch, are the validation curves; records of another count (the
    evaluations of a config's milestones) are not."""
    records = [{"P2M_Acc@1": 0.8 + epoch / 100, "Avg_Acc": 0.7 + epoch / 100} for epoch in range(6)]
    document = {"train_loss": LOSS, "epochs": list(range(1, 7)), "val_metrics": records,
                "milestones": [{"epoch": 2}, {"epoch": 4}]}
    run = load_one(write_json(tmp_path / "history.json", document))
    assert run.roles["val_metrics/Avg_Acc"] is Role.VAL_ACC and run.roles["val_metrics/P2M_Acc@1"] is Role.VAL_ACC
    assert run.series("val_metrics/Avg_Acc")["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert not any(tag.startswith("milestones") for tag in run.tags)


def test_a_json_string_holding_a_printed_history_is_that_history(tmp_path):
    """A public video classifier saved json.dump(str(history.history), f): one JSON string holding the dict as
    Python prints it, single quotes and all (and nan where a loss blew up)."""
    history = {"loss": LOSS, "val_loss": [x + 0.1 for x in LOSS]}
    printed = str(history).replace(str(LOSS[-1]) + "]", "nan]", 1)
    (run,) = curvedoc.load(write_json(tmp_path / "model_history.json", printed))
    assert run.roles == {"loss": Role.TRAIN_LOSS, "val_loss": Role.VAL_LOSS}
    values = run.series("loss")["value"].tolist()
    assert values[:-1] == LOSS[:-1] and math.isnan(values[-1])
    with pytest.raises(CurvedocError):
        curvedoc.load(write_json(tmp_path / "history.json", "{'loss': see the plots}"))


def test_the_histories_of_compared_models_are_a_run_each(tmp_path):
    """A public script compares four attention variants and saves each model's history, with its config, under the
    model's name: a run a model, in the file's order."""
    model = {"train_loss": LOSS, "val_loss": [x + 0.1 for x in LOSS], "config": {"hidden_size": 256}}
    runs = curvedoc.load(write_json(tmp_path / "history.json", {"Softmax": model, "Linear": model}))
    assert [run.name for run in runs] == ["history.json#Softmax", "history.json#Linear"]
    assert runs[0].roles == {"train_loss": Role.TRAIN_LOSS, "val_loss": Role.VAL_LOSS}


def test_lists_of_epoch_value_pairs_are_that_metrics_values(tmp_path):
    """A public captioning script saves its scores as [epoch, value] pairs beside plain loss lists."""
    pairs = [[epoch, 0.1 * epoch] for epoch in range(1, 7)]
    run = load_one(write_json(tmp_path / "history_cnn.json", {"train_losses": LOSS, "val_losses": LOSS,
                                                               "bleu4_scores": pairs, "lr_history": pairs}))
    assert run.series("bleu4_scores")["value"].tolist() == pytest.approx([0.1 * epoch for epoch in range(1, 7)])
    assert run.series("bleu4_scores")["step"].tolist() == [1, 2, 3, 4, 5, 6]


def test_a_history_of_one_epoch_a_user_names_is_read_and_not_enough_to_judge(tmp_path):
    """A public surrogate model saved a one-record history ([{"epoch": 10, "train_loss": …, "val_loss": …}]): named
    by the user, it is a run of one point, 'not enough to judge', not a refusal that says it is no list of records.
    A folder's walk passes over it, as over any results file of that shape."""
    path = write_json(tmp_path / "training_history.json",
                      [{"epoch": 10, "train_loss": 0.0114, "val_loss": 0.1267, "val_mae": 0.3266}])
    (run,) = curvedoc.diagnose(path)
    assert run.series("val_loss")["step"].tolist() == [10]
    assert verdict(run) == INSUFFICIENT and "only 1 point" in run.insufficient
    # two epochs are no curve to tell a history by in a walk, which passes over such files
    two_epochs = write_json(tmp_path / "other.json", {"loss": [0.5, 0.4], "val_loss": [0.6, 0.5]})
    assert history.find_history({"loss": [0.5, 0.4]}) is None and classify_file(two_epochs) is None
    assert verdict(curvedoc.diagnose(two_epochs)[0]) == INSUFFICIENT
    with pytest.raises(CurvedocError, match="no training logs found"):
        curvedoc.load(tmp_path)


def test_plural_metric_names_get_their_roles(tmp_path):
    run = load_one(write_json(tmp_path / "training_history.json", nested_pytorch_history()))
    assert run.roles == {"train_losses": Role.TRAIN_LOSS, "val_losses": Role.VAL_LOSS, "train_accs": Role.TRAIN_ACC,
                         "val_accs": Role.VAL_ACC}


def test_validation_every_two_epochs_sits_at_the_end_of_each_block(tmp_path):
    path = write_json(tmp_path / "log.json", {"loss": LOSS, "val_loss": [1.8, 1.5, 1.3]})
    run = load_one(path)
    assert run.series("loss")["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert run.series("val_loss")["step"].tolist() == [2, 4, 6]
    assert f"{path}: one value every 2 epochs (3 against 6), each placed at the end of its 2-epoch block: " \
           "val_loss" in run.warnings


def test_validation_every_two_epochs_of_an_epoch_list(tmp_path):
    run = load_one(write_json(tmp_path / "log.json", {"epoch": [0, 1, 2, 3, 4, 5], "loss": LOSS,
                                                      "val_loss": [1.8, 1.5, 1.3]}))
    assert run.series("val_loss")["step"].tolist() == [1, 3, 5]


def test_a_list_length_that_does_not_divide_the_epochs_keeps_its_own_positions(tmp_path):
    path = write_json(tmp_path / "log.json", {"loss": LOSS, "val_loss": [1.8, 1.5, 1.3, 1.2]})
    run = load_one(path)
    assert run.series("val_loss")["step"].tolist() == [1, 2, 3, 4]
    assert any("does not divide the 6 epochs" in warning and warning.endswith(": val_loss")
               for warning in run.warnings)


def test_an_epoch_list_of_another_length_is_not_the_x_axis(tmp_path):
    path = write_json(tmp_path / "log.json", {"epochs": 6, "epoch": [1, 2], "loss": LOSS})
    run = load_one(path)
    assert run.series("loss")["step"].tolist() == [1, 2, 3, 4, 5, 6] and "epoch" not in run.tags
    assert f"{path}: its epoch list holds 2 values, the longest metric list 6; the position in the lists is the " \
           "epoch, from 1" in run.warnings


def test_null_is_an_epoch_without_a_value_and_nan_is_a_value(tmp_path):
    path = tmp_path / "log.json"
    path.write_text('{"loss": [1.0, NaN, 0.5, 0.4], "val_loss": [null, 0.9, null, 0.7]}')
    run = load_one(path)
    assert run.series("val_loss")["step"].tolist() == [2, 4]
    assert math.isnan(run.series("loss")["value"][1])


def test_a_list_of_one_record_an_epoch_is_a_history(tmp_path):
    """A hand-written loop appends a record each epoch and dumps the list: nested objects give their keys joined by
    ``/``, the epoch key is the x axis, and a record without a key is an epoch without that value."""
    records = [{"epoch": epoch, "train_loss": loss, "val": {"loss": loss + 0.1, "acc": accuracy}}
               for epoch, (loss, accuracy) in enumerate(zip(LOSS, ACCURACY, strict=True), start=1)]
    records[2]["val"].pop("acc")
    path = tmp_path / "history.json"
    path.write_text(json.dumps(records, indent=2))
    run = load_one(path)
    assert run.format == "json-history" and run.tags == ["train_loss", "val/loss", "val/acc"]
    assert run.roles == {"train_loss": Role.TRAIN_LOSS, "val/loss": Role.VAL_LOSS, "val/acc": Role.VAL_ACC}
    assert run.series("val/loss")["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert run.series("val/acc")["step"].tolist() == [1, 2, 4, 5, 6] and run.warnings == []
    # found by a folder's walk too, from its first bytes, however long the file
    assert classify_file(path) is not None and history.looks_like_history(path.read_bytes()[:200], complete=False)


def test_records_nested_under_a_history_key_beside_the_config_are_a_history(tmp_path):
    records = [{"epoch": epoch, "train_loss": loss, "val_loss": loss + 0.1, "epoch_time_sec": 27.9}
               for epoch, loss in enumerate(LOSS, start=1)]
    path = write_json(tmp_path / "training_log.json", {"seed": 42, "config": {"lr": 3e-4, "num_classes": 4},
                                                       "history": records, "total_params": 145344}, indent=2)
    run = load_one(path)
    assert run.roles["train_loss"] == Role.TRAIN_LOSS and run.series("val_loss")["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert run.meta.hparams["config"] == {"lr": 3e-4, "num_classes": 4}
    assert history.looks_like_history(path.read_bytes()[:300], complete=False)  # past the peek too


@pytest.mark.parametrize("name, tags", [("losses", ["train_losses", "val_losses"]),
                                        ("accuracy", ["train_accuracy", "val_accuracy"])])
def test_lists_named_by_their_split_alone_measure_what_the_file_is_named_after(tmp_path, name, tags):
    path = write_json(tmp_path / f"{name}.json", {"train": LOSS, "val": [loss + 0.1 for loss in LOSS]})
    run = load_one(path)
    assert run.tags == tags
    assert history.looks_like_history(path.read_bytes()[:40], complete=False, name=name)


def test_records_listed_per_split_are_one_history_with_the_split_in_each_tag(tmp_path):
    """``{"train": [{…}, …], "val": [{…}, …]}``: validation every other epoch, at its own records' epochs; a count
    that is the same in every record (batches per epoch) is no x axis."""
    document = {"train": [{"loss": loss, "accuracy": accuracy, "steps": 29, "epoch": epoch}
                          for epoch, (loss, accuracy) in enumerate(zip(LOSS, ACCURACY, strict=True), start=1)],
                "val": [{"loss": loss + 0.1, "steps": 29, "epoch": epoch}
                        for epoch, loss in enumerate(LOSS, start=1) if epoch % 2 == 0]}
    path = write_json(tmp_path / "training_stats.json", document, indent=2)
    run = load_one(path)
    assert run.tags == ["train/loss", "train/accuracy", "train/steps", "val/loss", "val/steps"]
    assert run.roles["train/loss"] == Role.TRAIN_LOSS and run.roles["val/loss"] == Role.VAL_LOSS
    assert run.series("train/loss")["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert run.series("val/loss")["step"].tolist() == [2, 4, 6]
    assert history.looks_like_history(path.read_bytes()[:60], complete=False, name="training_stats")


def test_records_per_split_whose_step_goes_back_keep_what_the_resumed_run_logged_again(tmp_path):
    """Kaya-SLM's ``{"train": [{"step": 100, "loss": …}, …], "val": [{"step": 13200, "val_loss": …}, …]}``,
    resumed from a checkpoint at step 14100 after it had logged to 14400: the step is still the x axis, and the later
    records replace the earlier ones from 14100 on, as TensorBoard's restart rule has it."""
    first, resumed = range(13100, 14500, 100), range(14100, 14600, 100)
    document = {"train": [{"step": step, "epoch": 3, "loss": 2 - step / 10_000} for step in first]
                + [{"step": step, "epoch": 4, "loss": 1.5 - step / 10_000} for step in resumed],
                "val": [{"step": step, "val_loss": 1.3 - step / 100_000}
                        for step in (13200, 13800, 14400, 14100, 14400)]}
    run = load_one(write_json(tmp_path / "training_log.json", document))
    assert run.series("train/loss")["step"].tolist() == list(range(13100, 14600, 100))
    assert run.series("train/loss")["value"].tolist()[-5:] == [1.5 - step / 10_000 for step in resumed]
    assert run.series("val/val_loss")["step"].tolist() == [13200, 13800, 14100, 14400]
    assert any("restarted run" in warning for warning in run.warnings)


def test_per_split_records_that_name_no_measurement_measure_what_the_file_is_named_after(tmp_path):
    records = [{"total": loss, "bbox": loss / 10} for loss in LOSS]
    path = write_json(tmp_path / "loss_history.json", {"train": records, "val": records}, indent=2)
    run = load_one(path)
    assert run.tags == ["train/total_loss", "train/bbox_loss", "val/total_loss", "val/bbox_loss"]
    assert run.roles["val/total_loss"] == Role.VAL_LOSS
    assert history.looks_like_history(path.read_bytes()[:40], complete=False, name="loss_history")


def test_each_metric_s_lists_by_split_are_a_history(tmp_path):
    """``{"loc_loss": {"train": [...], "validation": [...]}, …}`` (a detector's history; NaN as Python writes it)."""
    document = {"loc_loss": {"train": [math.nan] * 6, "validation": [math.nan] * 6},
                "class_loss": {"train": LOSS, "validation": [loss + 0.1 for loss in LOSS]},
                "time_stamps": list(range(6))}
    path = write_json(tmp_path / "train_history.json", document, indent=4)
    run = load_one(path)
    assert run.roles["validation_class_loss"] == Role.VAL_LOSS and run.roles["train_loc_loss"] == Role.TRAIN_LOSS
    assert history.looks_like_history(path.read_bytes()[:60], complete=False, name="train_history")


def test_each_split_s_metrics_by_output_feature_are_a_history(tmp_path):
    """Ludwig's training_statistics.json: split, then output feature (``combined`` is the total), then metric."""
    by_output = {"combined": {"loss": LOSS}, "label": {"loss": LOSS, "accuracy": ACCURACY, "hits_at_k": ACCURACY}}
    document = {split: by_output for split in ("training", "validation", "test")}
    run = load_one(write_json(tmp_path / "training_statistics.json", document))
    assert run.roles["training_combined/loss"] == Role.TRAIN_LOSS
    assert run.roles["validation_label/accuracy"] == Role.VAL_ACC and run.roles["test_combined/loss"] == Role.TEST_LOSS


def test_an_episode_counter_is_the_x_axis_of_records(tmp_path):
    records = [{"episode": episode, "return": 10.0 * episode} for episode in range(1, 8)]
    run = load_one(write_json(tmp_path / "training_log.json", records, indent=4))
    assert run.tags == ["return"] and run.series("return")["step"].tolist() == list(range(1, 8))


def test_numbers_each_in_a_list_of_their_own_are_a_bare_list(tmp_path):
    path = write_json(tmp_path / "train_score_log.json", [[106], [113], [8], [210], [3]])
    assert load_one(path).series("train_score_log")["value"].tolist() == [106, 113, 8, 210, 3]


def test_records_under_a_key_of_any_name_are_a_history(tmp_path):
    """A DVC plots file keys its records by the stage that wrote them."""
    path = write_json(tmp_path / "loss_curve.json",
                      {"prc": [{"epoch": epoch, "loss": loss} for epoch, loss in enumerate(LOSS, start=1)]})
    assert load_one(path).series("loss")["value"].tolist() == LOSS


@pytest.mark.parametrize("name, role", [("losses", Role.TRAIN_LOSS), ("val_losses", Role.VAL_LOSS),
                                        ("accuracy", Role.TRAIN_ACC)])
def test_a_bare_list_of_numbers_is_the_metric_its_file_is_named_after(tmp_path, name, role):
    path = write_json(tmp_path / f"{name}.json", LOSS)
    run = load_one(path)
    assert run.tags == [name] and run.roles[name] == role and run.series(name)["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert history.looks_like_history(path.read_bytes()[:10], complete=False, name=name)
    assert classify_file(write_json(tmp_path / "coordinates.json", LOSS)) is None  # a file that names no metric


def test_lists_named_by_their_split_alone_in_a_file_that_names_no_metric_are_no_history(tmp_path):
    path = write_json(tmp_path / "splits.json", {"train": LOSS, "val": LOSS})
    assert classify_file(path) is None


def test_chainers_log_report_with_no_suffix_is_found_and_read(tmp_path):
    """Chainer's LogReport dumps its records with json.dump(..., indent=4) to ``<out>/log``: no suffix. A folder's
    walk finds it, and iterations are its x axis (finer than epochs)."""
    records = [{"epoch": i // 5, "iteration": 100 * (i + 1), "elapsed_time": 15.0 * i, "main/loss": loss,
                "main/accuracy": accuracy} for i, (loss, accuracy) in enumerate(zip(LOSS, ACCURACY, strict=True))]
    records[-1]["validation/main/loss"] = 1.4
    (tmp_path / "result").mkdir()
    (tmp_path / "result" / "log").write_text(json.dumps(records, indent=4))
    (tmp_path / "result" / "command.txt").write_text("python train.py --gpu 0\n")
    run = load_one(tmp_path)
    assert run.path.endswith("log") and run.format == "json-history"
    assert run.roles["main/loss"] == Role.TRAIN_LOSS and run.roles["validation/main/loss"] == Role.VAL_LOSS
    assert run.series("main/loss")["step"].tolist() == [100, 200, 300, 400, 500, 600]


def test_a_keras_csv_log_with_no_suffix_is_found_by_its_header(tmp_path):
    """CSVLogger("results/log"): a folder's walk reads a table with no suffix whose header names its epoch and a
    measurement; one that names neither (a data file with no suffix) is passed over."""
    (tmp_path / "results").mkdir()
    rows = "".join(f"{epoch},{loss},{loss + 0.1}\n" for epoch, loss in enumerate(LOSS))
    (tmp_path / "results" / "log").write_text("epoch,loss,val_loss\n" + rows)
    (tmp_path / "results" / "coords").write_text("x,y\n" + "1,2\n" * 6)
    run = load_one(tmp_path)
    assert run.path.endswith("log") and run.roles["val_loss"] == Role.VAL_LOSS
    assert classify_file(tmp_path / "results" / "coords") is None


def test_lists_that_are_not_numbers_are_no_curves(tmp_path):
    path = write_json(tmp_path / "log.json", {"loss": LOSS, "acc": ACCURACY, "per_class_acc": [[0.1, 0.9]] * 6})
    run = load_one(path)
    assert sorted(run.tags) == ["acc", "loss"]
    assert any(warning.endswith("not read as curves: per_class_acc") for warning in run.warnings)


def test_a_list_never_appended_to_is_said_to_be_empty(tmp_path):
    # a colourisation GAN's history declares its G_gan and G_l1 lists and never fills them
    path = write_json(tmp_path / "train_history.json", {"G_loss": LOSS, "D_loss": LOSS, "G_gan": [], "G_l1": []})
    run = load_one(path)
    assert sorted(run.tags) == ["D_loss", "G_loss"]
    assert any(warning.endswith("empty lists, nothing logged under them: G_gan, G_l1") for warning in run.warnings)
    assert not any("not lists of numbers" in warning for warning in run.warnings)


def test_a_train_and_held_out_loss_beside_saved_reports_and_a_config_are_a_history(tmp_path):
    """A script that saves its train and validation losses with the classification reports of several models and
    its config in one object: the two loss lists of equal length make it a history however many objects sit
    beside them; one loss list among them does not."""
    report = {"precision": 0.7, "recall": 0.8, "f1-score": 0.75, "support": 916.0}
    results = {name: {"Rush": report, "Pass": report, "accuracy": 0.79, "macro avg": report}
               for name in ("last_gcn_results", "best_gcn_results", "rf_results", "mlp_results")}
    document = {**results, "train_losses": LOSS, "val_losses": LOSS[::-1], "config": {"GCN": {"EPOCHS": 500}}}
    run = load_one(write_json(tmp_path / "training_results.json", document))
    assert sorted(run.tags) == ["train_losses", "val_losses"] and run.meta.n_classes == 2
    assert history.find_history({**results, "train_losses": LOSS, "config": {"lr": 0.1}}) is None


@pytest.mark.parametrize("document", [
    {"lr": 0.001, "batch_size": 32, "epochs": 10, "model": {"depth": 18}},  # a config
    {"per_class_acc": [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]},  # per-class arrays
    {"classes": ["cat", "dog", "bird"], "loss": "cross_entropy"},  # names
    {"milestones": [30, 60, 90], "gamma": 0.1},  # a scheduler's config: no metric
    {"val_loss": [0.5, 0.4, 0.3], "images": [{"id": 1}], "annotations": [{"id": 2}], "categories": [{"id": 3}]},
    # detections saved as a list of records (COCO's results file): no epoch that moves on, no loss
    [{"image_id": i // 3, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.9 - i / 100} for i in range(30)],
    [{"epoch": 3, "val_acc": 0.5}, {"epoch": 2, "val_acc": 0.6}, {"epoch": 1, "val_acc": 0.7}],  # not in order
])
def test_json_that_is_no_history_is_not_a_run(tmp_path, document):
    path = write_json(tmp_path / "other.json", document)
    assert history.find_history(document) is None
    assert classify_file(path) is None
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)


def test_a_large_file_whose_first_bytes_look_like_a_history_is_decided_by_reading_it(tmp_path):
    # past the peek, discovery sees only a metric list's start; the reader sees the rest
    document = {"val_acc": [0.5, 0.6, 0.7], "samples": [{"text": "x" * 100}] * 100, "labels": [["a"]] * 10}
    path = write_json(tmp_path / "results.json", document)
    assert classify_file(path).family == "history"
    with pytest.raises(NotALog, match="not a training history"):
        history.read(Source("history", path, ((None, path),), True))
    # found in a folder, it is passed over without a word, as a .json that is no log
    write_json(tmp_path / "history.json", {"loss": LOSS})
    runs = curvedoc.load(tmp_path)
    assert [run.name for run in runs] == ["history.json"] and runs.problems == []


def test_a_long_history_is_found_past_the_peek(tmp_path):
    epochs = 2000
    path = write_json(tmp_path / "history.json", {"loss": [1 / (i + 1) for i in range(epochs)],
                                                  "val_loss": [1 / (i + 2) for i in range(epochs)]})
    assert path.stat().st_size > 4096
    assert classify_file(path).family == "history"
    assert load_one(path).point_counts() == {"loss": epochs, "val_loss": epochs}


@pytest.mark.parametrize("content, line", [
    ('{"loss": [0.9, 0.8, 0.7], "val_loss": [0.9, 0.', 1),  # cut off
    ('{\n  "loss": [0.9, 0.8, 0.7],\n  "val_loss": [0.9, 0.8, 0.7],\n}', 4),  # a trailing comma
])
def test_corrupt_history_is_a_one_line_error(tmp_path, content, line):
    path = tmp_path / "history.json"
    path.write_text(content)
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert str(error.value) == f"{path}: not valid JSON at line {line} (cut off or corrupted?)"
    # found in a folder, it is a problem listed beside the runs, not a crash
    write_json(tmp_path / "good.json", {"loss": LOSS})
    runs = curvedoc.load(tmp_path)
    assert len(runs) == 1 and len(runs.problems) == 1 and str(path) in runs.problems[0]


def test_a_history_over_the_read_limits_is_refused(tmp_path):
    path = write_json(tmp_path / "history.json", {"loss": LOSS * 10})
    with limits.using(limits.ReadLimits(max_line_bytes=100)), pytest.raises(CurvedocError) as error:
        history.read(Source("history", path, ((None, path),), True))
    assert "limits.max_line_bytes" in str(error.value) and "\n" not in str(error.value)


def test_plural_names_are_measurements():
    for name in ("train_losses", "val_accs", "accuracies", "valLosses", "test_f1s", "val_mse"):
        assert history.names_a_measurement(name), name
    for name in ("epochs", "lrs", "learning_rates", "milestones", "betas", "steps", "grad_norms"):
        assert not history.names_a_measurement(name), name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_histories_only_give_curvedoc_errors(tmp_path, data):
    path = tmp_path / "training_history.json"
    path.write_bytes(damaged(data, json.dumps(nested_pytorch_history(), indent=2).encode()))
    assert_reads_or_refuses_in_one_line(history, path)


ODD_ENTRIES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**20), st.text(max_size=3),
                       st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(series=st.dictionaries(st.sampled_from(["training.loss", "validation.accuracy", "lr"]), st.fixed_dictionaries(
    {"steps": st.lists(ODD_ENTRIES, max_size=6), "values": st.lists(ODD_ENTRIES, max_size=6)},
    optional={"timestamps": st.lists(st.text(max_size=2), max_size=2)}), min_size=1))
def test_sacred_metrics_of_any_shape_only_give_curvedoc_errors(tmp_path, series):
    """Steps and values of unequal lengths, steps repeated, null or far beyond int64, values of any kind."""
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(series))
    assert_reads_or_refuses_in_one_line(history, path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_lists_of_records_only_give_curvedoc_errors(tmp_path, data):
    records = [{"epoch": epoch, "iteration": 100 * epoch, "main/loss": loss, "validation": {"main/accuracy": accuracy}}
               for epoch, (loss, accuracy) in enumerate(zip(LOSS, ACCURACY, strict=True))]
    path = tmp_path / "log"
    path.write_bytes(damaged(data, json.dumps(records, indent=4).encode()))
    assert_reads_or_refuses_in_one_line(history, path)


def test_a_keras_history_saved_as_yaml_is_a_history_and_a_config_beside_it_is_not(tmp_path):
    """``yaml.dump(history.history, f)`` writes each metric as a block list (a flow list before PyYAML 5.1), with
    the final test scores as scalars beside them: the same history as the JSON one. A config saved as YAML in the
    same folder, whose lists are settings (milestones), is no run, and one the user names is refused in one line."""
    import yaml

    epochs = range(6)
    history_of = {"accuracy": [0.6 + e / 20 for e in epochs], "loss": [1.0 - e / 10 for e in epochs],
                  "val_accuracy": [0.55 + e / 25 for e in epochs], "val_loss": [1.1 - e / 12 for e in epochs],
                  "test_accuracy": 0.8, "test_loss": 0.6}
    folder = tmp_path / "output"
    folder.mkdir()
    (folder / "DenseNet121.yaml").write_text(yaml.dump(history_of))
    (folder / "MobileNet.yml").write_text(yaml.dump(history_of, default_flow_style=None))
    (folder / "config.yaml").write_text(yaml.dump({"lr": 0.001, "milestones": [30, 60, 90], "epochs": 100}))
    runs = curvedoc.load(folder)
    assert sorted(Path(run.path).name for run in runs) == ["DenseNet121.yaml", "MobileNet.yml"]
    for run in runs:
        assert run.series("val_loss")["step"].tolist() == [1, 2, 3, 4, 5, 6]
        assert run.roles["val_accuracy"] == Role.VAL_ACC and "test_loss" not in run.tags
    with pytest.raises(CurvedocError, match=r"a \.yaml file \(configuration"):
        curvedoc.load(folder / "config.yaml")
