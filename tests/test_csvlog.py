"""CSV/TSV logs: Lightning, Keras, Ultralytics, W&B exports and generic tables, from the committed fixtures."""

from __future__ import annotations

import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.readers import Source, csvlog, discover

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "csv"
LIGHTNING = FIXTURES / "lightning" / "healthy" / "lightning_logs" / "version_0" / "metrics.csv"


def load_one(path: Path):
    runs = curvedoc.load(path)
    assert len(runs) == 1
    return runs[0]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_lightning_metrics_csv_sparse_rows_roles_and_hparams():
    assert b"\r\n" in LIGHTNING.read_bytes()  # Lightning writes CRLF line ends
    run = load_one(LIGHTNING)
    assert run.format == "lightning-csv"
    assert run.roles == {
        "lr-Adam": Role.LR, "train_loss_epoch": Role.TRAIN_LOSS, "train_loss_step": Role.TRAIN_LOSS,
        "val_acc": Role.VAL_ACC, "val_loss": Role.VAL_LOSS,
    }
    counts = run.point_counts()
    assert counts["train_loss_step"] == 129 and counts["val_loss"] == 3 and counts["train_loss_epoch"] == 3
    assert run.series("val_loss")["step"].tolist() == [42, 85, 128]
    assert run.primary(Role.TRAIN_LOSS) == "train_loss_step"
    assert run.meta.n_classes == 10 and "num_classes" in run.meta.n_classes_source
    assert run.meta.hparams["lr"] == 0.003
    assert any(name.endswith("hparams.yaml") for name in run.meta.files)
    assert np.isfinite(run.scalars["value"]).all()
    assert not run.warnings


def test_lightning_hparams_with_python_tags_and_hp_metric_placeholder(tmp_path):
    write(tmp_path / "hparams.yaml", (
        "num_classes: 7\n"
        "input_shape: !!python/tuple\n- 3\n- 32\n"
        "optimizer: !!python/object/apply:torch.optim.adam.Adam\n  args: []\n"
        "loss_fn: !!python/name:torch.nn.functional.cross_entropy ''\n"
    ))
    write(tmp_path / "metrics.csv", "epoch,hp_metric,step,train_loss\n0,-1,0,\n0,,0,2.0\n0,,1,1.5\n1,0.7,2,1.0\n")
    run = load_one(tmp_path / "metrics.csv")
    assert run.format == "lightning-csv"
    assert run.meta.n_classes == 7
    assert run.meta.hparams["input_shape"] == [3, 32]
    assert run.series("hp_metric")["value"].tolist() == [0.7]


def test_lightning_evaluation_metrics_logged_each_batch_are_not_curves_over_training(tmp_path):
    """Lightning puts an evaluation's per-batch values (test_acc_step) at the evaluation loop's batch index, not at a
    training step: the _epoch twin is the evaluation's value. A train metric logged each batch is a curve."""
    rows = "".join(f"0,{1 / (i + 1)},{49 + 50 * i},,,\n" for i in range(6))
    rows += "".join(f",,{i},0.{i},,\n" for i in range(4)) + "0,,349,,0.18,\n0,,349,,,0.2\n"
    path = write(tmp_path / "metrics.csv", "epoch,train_loss_step,step,test_acc_step,test_acc_epoch,train_loss_epoch\n"
                 + rows)
    run = load_one(path)
    assert run.format == "lightning-csv"
    assert sorted(run.tags) == ["test_acc_epoch", "train_loss_epoch", "train_loss_step"]
    assert run.series("test_acc_epoch")["step"].tolist() == [349]


def test_a_stable_baselines3_progress_csv_is_placed_at_its_environment_steps(tmp_path):
    rows = "".join(f"{20 + i},{-0.6 - i / 100},{2048 * (i + 1)},{i + 1},{52.8 - i}\n" for i in range(5))
    header = "rollout/ep_rew_mean,train/entropy_loss,time/total_timesteps,time/iterations,train/value_loss\n"
    run = load_one(write(tmp_path / "progress.csv", header + rows))
    assert run.series("rollout/ep_rew_mean")["step"].tolist() == [2048, 4096, 6144, 8192, 10240]
    assert "time/total_timesteps" not in run.tags and not run.warnings


def test_a_fastai_history_table_s_metrics_are_the_validation_s(tmp_path):
    # fastai's CSVLogger: metrics are computed on the validation set and named without a split
    rows = "".join(f"{e},{1 / (e + 1):.3f},{1.1 / (e + 1):.3f},{0.8 + e / 100:.2f},{0.2 - e / 100:.2f},00:12\n"
                   for e in range(5))
    run = load_one(write(tmp_path / "history.csv", "epoch,train_loss,valid_loss,accuracy,error_rate,time\n" + rows))
    assert run.roles["accuracy"] is Role.VAL_ACC and run.roles["valid_loss"] is Role.VAL_LOSS


def test_an_accuracy_logged_on_the_training_rows_stays_the_training_s(tmp_path):
    # a Lightning table whose bare accuracy comes with the train loss, not on the validation rows
    rows = "".join(f"0,{s},{1 / (s + 1):.3f},{0.5 + s / 100:.2f},\n" for s in range(9)) + "0,9,,,0.7\n"
    run = load_one(write(tmp_path / "metrics.csv", "epoch,step,train_loss,accuracy,val_loss\n" + rows))
    assert run.roles["accuracy"] is Role.TRAIN_ACC


def test_keras_csvlogger():
    run = load_one(FIXTURES / "keras" / "training.log")
    assert run.format == "keras-csv"
    assert run.roles == {
        "accuracy": Role.TRAIN_ACC, "loss": Role.TRAIN_LOSS, "val_accuracy": Role.VAL_ACC, "val_loss": Role.VAL_LOSS,
    }
    assert run.series("val_loss")["step"].tolist() == list(range(6))
    assert not run.warnings


def test_keras_fit_called_again_from_epoch_0_is_a_run_of_its_own():
    # a crashed run started again by hand: a new fit from fresh weights, its own run; the rows of the attempt
    # that crashed are kept, not replaced
    path = FIXTURES / "keras" / "restarted" / "training.log"
    table = pd.read_csv(path)
    assert table["epoch"].tolist() == [0, 1, 2, 0, 1, 2, 3, 4]
    crashed, rerun = curvedoc.load(path)
    assert [run.name for run in (crashed, rerun)] == ["training.log#1", "training.log#2"]
    assert crashed.series("loss")["value"].tolist() == pytest.approx(table["loss"].iloc[:3].tolist())
    assert rerun.series("loss")["step"].tolist() == [0, 1, 2, 3, 4]
    assert rerun.series("loss")["value"].tolist() == pytest.approx(table["loss"].iloc[3:].tolist())
    assert not crashed.warnings and not rerun.warnings


def test_a_lightning_metrics_csv_naming_its_losses_by_split_folders_is_lightning_s(tmp_path):
    text = "epoch,step,train/loss,val/loss\n0,9,0.9,\n0,9,,1.0\n1,19,0.7,\n1,19,,0.8\n"
    run = load_one(write(tmp_path / "metrics.csv", text))
    assert run.format == "lightning-csv" and run.roles["val/loss"] == Role.VAL_LOSS


def test_a_loss_term_exactly_zero_throughout_is_never_the_loss_a_run_is_judged_by(tmp_path):
    """Ultralytics' segmentation results.csv logs train/sem_loss and val/sem_loss, unused, as 0 at every epoch beside
    the box, seg, cls and dfl losses: the loss a person plots is one that moves. A run whose terms are all 0 keeps
    one of them, as before."""
    epochs = np.arange(1, 21)
    columns = {"epoch": epochs}
    for split in ("train", "val"):
        columns[f"{split}/sem_loss"] = np.zeros(20)
        for offset, name in enumerate(("box", "seg", "cls", "dfl")):
            columns[f"{split}/{name}_loss"] = np.linspace(1.8, 0.6, 20) + offset / 10
    pd.DataFrame(columns).to_csv(tmp_path / "results.csv", index=False)
    run = load_one(tmp_path / "results.csv")
    assert run.primary(Role.TRAIN_LOSS) != "train/sem_loss" and run.primary(Role.VAL_LOSS) != "val/sem_loss"
    pd.DataFrame({name: (np.zeros(20) if "loss" in name else values) for name, values in columns.items()}).to_csv(
        tmp_path / "results.csv", index=False)
    assert load_one(tmp_path / "results.csv").primary(Role.TRAIN_LOSS) is not None


def test_ultralytics_padded_results():
    path = FIXTURES / "ultralytics" / "results.csv"
    assert path.read_text().startswith("     ")
    run = load_one(path)
    assert run.format == "ultralytics-csv"
    assert {"train/loss", "val/loss", "lr/pg0", "metrics/accuracy_top1"} <= set(run.tags)
    assert run.roles["train/loss"] == Role.TRAIN_LOSS and run.roles["val/loss"] == Role.VAL_LOSS
    assert run.roles["lr/pg0"] == Role.LR
    assert run.series("val/loss")["step"].tolist() == [1, 2, 3, 4, 5]


def test_wandb_panel_export_holds_several_runs():
    path = FIXTURES / "wandb" / "export_val_loss.csv"
    runs = curvedoc.load(path)
    assert [run.name for run in runs] == ["driven-sun-3", "misty-lake-4"]
    assert [run.path for run in runs] == [f"{path}#driven-sun-3", f"{path}#misty-lake-4"]
    for run in runs:
        assert run.format == "wandb-export" and run.meta.files == [str(path)]
        assert run.roles == {"val_loss": Role.VAL_LOSS}  # __MIN/__MAX companions are not curves
        assert run.series("val_loss")["step"].tolist() == [42, 85, 128, 171]
    healthy, shuffled = (run.series("val_loss")["value"].iloc[-1] for run in runs)
    assert healthy < 0.5 < shuffled


def test_wandb_export_custom_x_axis_and_missing_cells(tmp_path):
    runs = curvedoc.load(FIXTURES / "wandb" / "export_epoch_axis.csv")
    assert all(run.series("val_acc")["step"].tolist() == [0, 1, 2, 3] for run in runs)
    path = write(tmp_path / "chart.csv", (
        '"trainer/global_step","a - loss","a - loss__MIN","a - loss__MAX","b - loss","b - loss__MIN","b - loss__MAX"\n'
        '"0","2.0","2.0","2.0","","",""\n"10","","","","3.0","3.0","3.0"\n"20","NaN","NaN","NaN","2.5","2.5","2.5"\n'
    ))
    first, second = curvedoc.load(path)
    assert first.series("loss")["step"].tolist() == [0, 20] and math.isnan(first.series("loss")["value"][1])
    assert second.series("loss")["step"].tolist() == [10, 20]


def test_wandb_runs_table_is_not_a_curve():
    path = FIXTURES / "wandb" / "runs_table.csv"
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert str(path) in str(error.value) and "runs table" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("header, row", [
    ("Name,Runtime,Created,lr,val_loss", "driven-sun-3,12,2023-11-14T22:13:20.000Z,0.003,0.11"),
    ("ID,lr,batch_size,val_loss", "3kx9ab12,0.003,32,0.11"),
    ("State,Runtime,Notes,lr,val_acc", "finished,12,-,0.003,0.96"),
])
def test_a_wandb_runs_table_is_told_by_its_shape(tmp_path, header, row):
    path = write(tmp_path / "runs.csv", f"{header}\n{row}\n{row}\n")
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    message = str(error.value)
    assert "W&B runs table (one row per run" in message and "no step column" in message and "\n" not in message


@pytest.mark.parametrize("text", [
    "step,Name,loss\n0,a,1.0\n1,a,0.9\n",  # a step column: a curve, whatever else it holds
    "loss,Runtime\n1.0,3\n0.9,6\n",  # one bookkeeping-like column and no run identity: a curve by row number
])
def test_tables_that_only_share_a_column_name_with_a_runs_table_are_curves(tmp_path, text):
    run = load_one(write(tmp_path / "log.csv", text))
    assert run.series("loss")["value"].tolist() == [1.0, 0.9]


def test_wandb_panel_exports_of_one_folder_are_one_run_per_run_name():
    folder = FIXTURES / "wandb_panels"
    files = sorted(folder.iterdir())
    (source,) = discover(folder).sources
    assert source.family == "wandb-export" and source.path == folder
    assert [path for _, path in source.files] == files
    healthy, shuffled = curvedoc.load(folder)
    assert (healthy.name, shuffled.name) == ("driven-sun-3", "misty-lake-4")
    assert (healthy.path, shuffled.path) == (f"{folder}#driven-sun-3", f"{folder}#misty-lake-4")
    assert healthy.roles == {"train_loss": Role.TRAIN_LOSS, "val_loss": Role.VAL_LOSS, "val_acc": Role.VAL_ACC,
                             "grad_norm": Role.GRAD_NORM}
    assert healthy.meta.files == [str(path) for path in files]
    assert set(shuffled.tags) == {"val_loss", "val_acc"} and len(shuffled.meta.files) == 2
    assert healthy.point_counts()["train_loss"] == 172
    assert healthy.series("val_loss")["step"].tolist() == [42, 85, 128, 171]
    assert not healthy.warnings
    # the same curves as the single-panel export of the same runs (regenerated apart: float32 noise differs)
    single = {run.name: run for run in curvedoc.load(FIXTURES / "wandb" / "export_val_loss.csv")}
    assert healthy.series("val_loss")["step"].tolist() == single["driven-sun-3"].series("val_loss")["step"].tolist()
    assert healthy.series("val_loss")["value"].tolist() == pytest.approx(
        single["driven-sun-3"].series("val_loss")["value"].tolist(), rel=1e-6)


def test_wandb_exports_against_different_x_axes_are_not_merged():
    runs = curvedoc.load(FIXTURES / "wandb")
    exports = sorted((run.name, run.path.rsplit("#", 1)[1], tuple(run.tags)) for run in runs
                     if run.format == "wandb-export")
    assert exports == [
        ("driven-sun-3", "driven-sun-3 (Step)", ("val_loss",)), ("driven-sun-3", "driven-sun-3 (epoch)", ("val_acc",)),
        ("misty-lake-4", "misty-lake-4 (Step)", ("val_loss",)), ("misty-lake-4", "misty-lake-4 (epoch)", ("val_acc",)),
    ]


def test_a_broken_panel_export_beside_good_ones_is_named_on_the_runs(tmp_path):
    for path in (FIXTURES / "wandb_panels").iterdir():
        shutil.copy(path, tmp_path / path.name)
    broken = tmp_path / "wandb_export_2023-11-14T22_16_00.000+01_00.csv"
    broken.write_text('"Step","driven-sun-3 - lr","driven-sun-3 - lr__MIN","driven-sun-3 - lr__MAX"\n')
    healthy, _ = curvedoc.load(tmp_path)
    assert "lr" not in healthy.tags
    assert any(str(broken) in warning and "header only" in warning for warning in healthy.warnings)


def test_wandb_history_csv_dump():
    run = load_one(FIXTURES / "wandb" / "history.csv")
    assert run.format == "wandb-history-csv"
    assert "_runtime" not in run.tags and "_timestamp" not in run.tags and not any("Unnamed" in t for t in run.tags)
    series = run.series("train_loss")
    assert series["wall_time"].min() >= 1.7e9 and series["wall_time"].is_monotonic_increasing
    assert run.point_counts()["val_loss"] == 4


def test_tensors_and_numpy_scalars_written_out_whole_are_their_values(tmp_path):
    # what csv.writer makes of a row [epoch, loss_tensor, val_tensor, np.float64(acc)]: str() of each
    rows = "".join(f'{epoch},"tensor({3 / epoch:.4f}, device=\'cuda:0\', grad_fn=<DivBackward0>)",'
                   f'"tensor({2.9 / epoch:.4f}, device=\'cuda:0\')",np.float64({0.2 * epoch}),'
                   f'"tf.Tensor({5 / epoch}, shape=(), dtype=float32)"\n' for epoch in range(1, 5))
    run = load_one(write(tmp_path / "losses.csv", "Epoch,Train_loss,Val_loss,val_acc,box_loss\n" + rows))
    assert run.roles["Train_loss"] == Role.TRAIN_LOSS
    assert run.series("Train_loss")["value"].tolist() == pytest.approx([3.0, 1.5, 1.0, 0.75])
    assert run.series("Val_loss")["step"].tolist() == [1, 2, 3, 4]
    assert run.series("val_acc")["value"].tolist() == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert run.series("box_loss")["value"].tolist() == pytest.approx([5.0, 2.5, 5 / 3, 1.25])


def test_values_written_with_their_percent_sign_are_their_numbers(tmp_path):
    """f"{acc:.1f}%" in a CSV: the accuracy, in percent as printed, where the column was dropped as text."""
    rows = "".join(f"{epoch},{2 / epoch:.3f},{70 + epoch / 10:.1f}%, {80 + epoch} %\n" for epoch in range(1, 5))
    run = load_one(write(tmp_path / "log.csv", "epoch,train_loss,val_acc,train_acc\n" + rows))
    assert run.roles["val_acc"] == Role.VAL_ACC and run.series("val_acc")["value"].tolist() == pytest.approx(
        [70.1, 70.2, 70.3, 70.4])
    assert run.series("train_acc")["value"].tolist() == [81, 82, 83, 84] and not run.warnings


@pytest.mark.parametrize("epoch_column", ["ep", "epoch_num", "Epoch No.", "Epochs"])
def test_an_epoch_column_abbreviated_or_named_as_its_number_is_the_step(tmp_path, epoch_column):
    rows = "".join(f"{row},{row + 1},{1 / (row + 1):.3f}\n" for row in range(4))
    run = load_one(write(tmp_path / "history.csv", f",{epoch_column},loss\n" + rows))  # pandas' index first
    assert run.tags == ["loss"] and run.series("loss")["step"].tolist() == [1, 2, 3, 4]


def test_generic_pandas_csv_and_tsv_agree():
    csv_run = load_one(FIXTURES / "generic" / "pandas_healthy.csv")
    tsv_run = load_one(FIXTURES / "generic" / "healthy.tsv")
    assert csv_run.format == tsv_run.format == "csv"
    assert csv_run.point_counts() == tsv_run.point_counts()
    assert csv_run.point_counts()["val_loss"] == 4 and csv_run.point_counts()["train_loss"] == 172
    assert csv_run.series("train_loss")["wall_time"].notna().all()  # the wall_time column is the clock
    assert np.allclose(csv_run.series("val_loss")["value"], tsv_run.series("val_loss")["value"])


def test_lr_too_high_keeps_nan_and_inf_apart_from_empty_cells():
    run = load_one(FIXTURES / "generic" / "lr_too_high.csv")
    loss = run.series("train_loss")["value"]
    assert np.isnan(loss).sum() > 100 and np.isinf(loss).sum() >= 1
    assert run.point_counts()["val_loss"] == 3  # val cells of train rows are empty: not logged, not NaN


def test_empty_cell_is_not_logged_and_nonfinite_words_are_values(tmp_path):
    text = "step,loss,note\n0,1.0,a\n1,,b\n2,nan,c\n3,inf,d\n4,-Infinity,e\n5,NaN,f\n6, 0.5 ,g\n"
    path = write(tmp_path / "log.csv", text)
    run = load_one(path)
    assert run.tags == ["loss"]  # the text column is not a curve
    series = run.series("loss")
    assert series["step"].tolist() == [0, 2, 3, 4, 5, 6]
    values = series["value"].tolist()
    assert values[0] == 1.0 and math.isnan(values[1]) and values[2] == math.inf and values[3] == -math.inf
    assert math.isnan(values[4]) and values[5] == 0.5


def test_stray_text_cell_is_skipped_with_a_warning(tmp_path):
    run = load_one(write(tmp_path / "log.csv", "iter;loss\n1;0.9\n2;oops\n3;0.7\n"))
    assert run.series("loss")["step"].tolist() == [1, 3]
    assert any("loss (1)" in warning for warning in run.warnings)


def test_no_step_column_uses_the_row_number(tmp_path):
    run = load_one(write(tmp_path / "log.csv", "loss acc\n0.9 0.1\n0.8 0.3\n"))
    assert run.series("loss")["step"].tolist() == [0, 1]
    assert any("row number" in warning for warning in run.warnings)


def test_step_named_in_capitals(tmp_path):
    run = load_one(write(tmp_path / "log.csv", "Step,Loss\n5,0.9\n10,0.8\n"))
    assert run.series("Loss")["step"].tolist() == [5, 10]


def test_a_log_written_in_another_language_has_its_epoch_and_loss(tmp_path):
    """A Catalan audio CNN's log (Gardenou/TFG_IA_Model: Epoca, Perdua, Accuracy, Items) and a Spanish one: the
    epoch column is the x axis and the loss is the train loss, as their English names would be."""
    run = load_one(write(tmp_path / "log.csv", "Epoca,Perdua,Accuracy,Items\n1,2.19,0.22,6986\n2,2.01,0.30,6986\n"))
    assert run.series("Perdua")["step"].tolist() == [1, 2] and run.roles["Perdua"] is Role.TRAIN_LOSS
    assert not any("row number" in warning for warning in run.warnings)
    run = load_one(write(tmp_path / "es.csv", "Época,Pérdida,Pérdida_validación\n1,0.9,1.0\n2,0.8,0.95\n"))
    assert run.series("Pérdida")["step"].tolist() == [1, 2] and run.roles["Pérdida_validación"] is Role.VAL_LOSS


def test_every_malformed_line_is_counted(tmp_path):
    # two records written onto one line (rows 1, 5 and 9), as a logger racing another process leaves them
    text = "step,loss\n" + "".join(f"{i},{1 / (i + 1)}\n" if i % 4 != 1 else f"{i},0.5,{i}.1632,0.4\n"
                                   for i in range(12))
    run = load_one(write(tmp_path / "log.csv", text))
    assert any("3 malformed line(s) skipped" in warning for warning in run.warnings)


def test_epoch_summary_lines_among_batch_rows_are_read_at_the_epochs_end(tmp_path):
    """A public fundus classifier writes 'epoch,batch,loss,accuracy' rows and, after each epoch's last batch, one
    'Epoch N Summary,train_loss=…,val_loss=…' line: its held-out curve is only there."""
    lines = ["epoch,batch,loss,accuracy"]
    for epoch in (1, 2, 3):
        lines += [f"{epoch},{batch},{0.9 - 0.01 * batch:.4f},0.5" for batch in (1, 2, 3)]
        lines.append(f"Epoch {epoch} Summary,train_loss={0.8 - 0.1 * epoch:.6f},train_acc=0.6,"
                     f"val_loss={1.9 / epoch:.6f},val_acc=0.5{epoch}")
    run = load_one(write(tmp_path / "loss_log.txt", "\n".join(lines) + "\n"))
    assert run.roles["val_loss"] is Role.VAL_LOSS and run.roles["loss"] is Role.TRAIN_LOSS
    batch_steps = run.series("loss")["step"].tolist()
    assert run.series("val_loss")["step"].tolist() == batch_steps[2::3]
    assert run.series("val_loss")["value"].tolist() == pytest.approx([1.9, 0.95, 1.9 / 3], rel=1e-5)
    assert any("3 summary line(s)" in warning for warning in run.warnings)
    # a skipped line that holds no named numbers is a malformed row, and the summaries are not guessed around it
    broken = load_one(write(tmp_path / "log.csv", "\n".join(lines[:4] + ["1,4,0.5,0.5,extra"] + lines[4:]) + "\n"))
    assert "val_loss" not in broken.tags and any("malformed" in warning for warning in broken.warnings)


def test_a_nan_written_between_evaluations_is_not_logged_and_a_nan_after_a_blow_up_is(tmp_path):
    """A public RL table evaluates every 50 episodes and writes 'nan' in its eval columns at the 49 between (pandas'
    default na_rep): those are no values. A loss that turns NaN and stays so is one."""
    rows = [f"{episode},{1.0 / episode:.4f}," + (f"{episode / 100:.2f}" if episode % 5 == 0 else "nan")
            for episode in range(1, 31)]
    run = load_one(write(tmp_path / "train_log.csv", "episode,train_loss,eval_return\n" + "\n".join(rows) + "\n"))
    assert run.series("eval_return")["step"].tolist() == [5, 10, 15, 20, 25, 30]
    assert not run.series("eval_return")["value"].isna().any()
    blown = [f"{step},{1.0 / step:.4f}" if step < 20 else f"{step},nan" for step in range(1, 31)]
    run = load_one(write(tmp_path / "log.csv", "step,loss\n" + "\n".join(blown) + "\n"))
    assert run.series("loss")["value"].isna().sum() == 11
    # an epoch average every 5 rows, blank between (Lightning), that turns NaN on the rows it is logged at
    epochs = [f"{step}," + ((f"{1.0 / step:.4f}" if step < 20 else "nan") if step % 5 == 0 else "")
              for step in range(1, 31)]
    run = load_one(write(tmp_path / "metrics.csv", "step,train_loss_epoch\n" + "\n".join(epochs) + "\n"))
    assert run.series("train_loss_epoch")["value"].isna().sum() == 3


def test_malformed_middle_line_is_skipped(tmp_path):
    run = load_one(write(tmp_path / "log.csv", "step,loss\n0,1.0\n1,0.9,extra,cells\n2,0.8\n"))
    assert run.series("loss")["step"].tolist() == [0, 2]
    assert any("malformed" in warning for warning in run.warnings)


def test_crashed_run_keeps_rows_before_the_cut_line():
    run = load_one(FIXTURES / "broken" / "crashed.csv")
    assert run.point_counts()["train_loss"] == 42
    assert any("last record cut off" in warning for warning in run.warnings)


@pytest.mark.parametrize("last, kept", [
    ("3,0.6125", True),  # every field, as many decimals as the row before: a table that ends without a line end
    ("3,0.61", False),  # cut inside its number
    ("3,", False),  # cut before its number
    ("3,0.6125,484", True),  # a whole number as many digits long as the row before's (485)
    ("3,0.6125,48", False),  # a whole number shorter: cut
])
def test_a_last_row_without_its_line_end_is_kept_only_when_whole(tmp_path, last, kept):
    columns = last.count(",") + 1
    header, rows = ("step,loss,time", "1,0.9312,523\n2,0.7443,485\n") if columns == 3 else (
        "step,loss", "1,0.9312\n2,0.7443\n")
    run = load_one(write(tmp_path / "log.csv", f"{header}\n{rows}" + last))
    assert run.series("loss")["step"].tolist() == [1, 2, 3][:3 if kept else 2]
    assert any("last record cut off" in warning for warning in run.warnings) is not kept


@pytest.mark.parametrize("last, kept", [("3,0.6125,1.2034,70.77", True), ("3,0.6125,1.20", False)])
def test_a_header_ending_in_a_delimiter_does_not_make_a_whole_last_row_look_cut(tmp_path, last, kept):
    """A public metrics.csv: 'epoch,train_loss,test_loss,top1,' names one empty column more than any row holds, and
    the writer never ended its last row with a line end. That row has every field the rows before it have."""
    text = "epoch,train_loss,test_loss,top1,\n1,0.9312,1.4021,60.12\n2,0.7443,1.3011,65.40\n" + last
    run = load_one(write(tmp_path / "metrics.csv", text))
    assert run.series("test_loss")["step"].tolist() == [1, 2, 3][:3 if kept else 2]
    assert any("last record cut off" in warning for warning in run.warnings) is not kept


def test_a_batch_counter_beside_the_epoch_is_counted_on_across_epochs(tmp_path):
    """Epoch,Batch: each epoch's batches 0..2, so the step is the epoch's offset + the batch, with no warning."""
    rows = "".join(f"{epoch},{batch},{epoch + batch / 10}\n" for epoch in range(3) for batch in range(3))
    run = load_one(write(tmp_path / "training_log.csv", "Epoch,Batch,Gen Loss\n" + rows))
    assert run.tags == ["Gen Loss"]  # the epoch and the batch make the step: no curves of their own
    assert run.series("Gen Loss")["step"].tolist() == list(range(9))
    assert run.series("Gen Loss")["value"].tolist() == pytest.approx([0, 0.1, 0.2, 1, 1.1, 1.2, 2, 2.1, 2.2])
    assert not run.warnings


def test_rows_that_each_log_a_batch_with_only_their_epoch_are_counted_in_row_order(tmp_path):
    """Lightning's 2019 metrics.csv: a row a batch with its epoch and a clock, the validation's row at the epoch's
    end, no step column. The epoch alone would pile each epoch's batches onto one step; the row order keeps them,
    with a warning. A log of one row an epoch, or one whose epochs go back (a restart), keeps the epoch."""
    rows = "".join(f"{0.5 / (1 + 3 * epoch + batch)},{epoch},2019-12-09 21:16:{epoch}{batch}.0,\n" for epoch in range(3)
                   for batch in range(3))
    rows += "".join(f",{epoch},2019-12-09 21:17:0{epoch}.0,{0.05 + epoch / 100}\n" for epoch in range(3))
    ordered = "".join(sorted(rows.splitlines(keepends=True), key=lambda line: (line.split(",")[1], line[0] == ",")))
    (tmp_path / "old").mkdir()
    (tmp_path / "keras").mkdir()
    run = load_one(write(tmp_path / "old" / "metrics.csv", "train_loss,epoch,created_at,val_loss\n" + ordered))
    assert run.series("train_loss")["step"].tolist() == [0, 1, 2, 4, 5, 6, 8, 9, 10]
    assert run.series("val_loss")["step"].tolist() == [3, 7, 11] and run.roles["val_loss"] == Role.VAL_LOSS
    assert any("several rows an epoch" in warning for warning in run.warnings)
    per_epoch = load_one(write(tmp_path / "keras" / "log.csv", "epoch,loss,val_loss\n0,1.0,1.1\n1,0.8,0.9\n2,0.7,0.8\n"))
    assert per_epoch.series("loss")["step"].tolist() == [0, 1, 2] and not per_epoch.warnings


def test_an_iteration_logged_every_k_batches_and_restarting_each_epoch(tmp_path):
    """iteration 0, 50 … 350 in each epoch of 400 batches: epoch 1 starts at 400 (its last print + the stride)."""
    rows = "".join(f"{epoch},{it},{1 / (1 + epoch * 8 + it / 50)}\n" for epoch in range(2) for it in range(0, 400, 50))
    run = load_one(write(tmp_path / "log.csv", "epoch,iteration,loss\n" + rows))
    assert run.tags == ["loss"]
    assert run.series("loss")["step"].tolist() == list(range(0, 800, 50)) and not run.warnings


def test_a_step_column_that_counts_epochs_with_a_batch_counter_within_each(tmp_path):
    """minimaxir's char-embeddings log: 'iteration' numbers the epochs and 'batch' (0, 50 … 150) starts again in
    each, with no epoch column: the step counts on across them instead of keeping each epoch's last row."""
    rows = "".join(f"{it},{batch},{1 / (1 + it * 4 + batch / 50)}\n" for it in (1, 2) for batch in range(0, 200, 50))
    run = load_one(write(tmp_path / "log.csv", "iteration,batch,batch_loss\n" + rows))
    assert run.tags == ["batch_loss"] and not run.warnings
    assert run.series("batch_loss")["step"].tolist() == list(range(0, 400, 50))


def test_a_resumed_run_with_a_batch_counter_keeps_the_latest_epochs(tmp_path):
    """The epoch goes back (the run resumed from epoch 1): that is a restart, the latest values are kept."""
    first = "".join(f"{epoch},{batch},0.{epoch}{batch}1\n" for epoch in range(3) for batch in range(2))
    resumed = "".join(f"{epoch},{batch},0.{epoch}{batch}2\n" for epoch in range(1, 4) for batch in range(2))
    run = load_one(write(tmp_path / "log.csv", "epoch,batch,loss\n" + first + resumed))
    series = run.series("loss")
    assert series["step"].tolist() == list(range(8))
    assert series["value"].tolist() == [0.001, 0.011, 0.102, 0.112, 0.202, 0.212, 0.302, 0.312]
    assert any("restarted run" in warning and "4 row(s)" in warning for warning in run.warnings)


def test_a_global_step_beside_the_epoch_stays_as_logged(tmp_path):
    rows = "".join(f"{step // 3},{step},{1 / (step + 1)}\n" for step in range(9))
    run = load_one(write(tmp_path / "log.csv", "epoch,step,loss\n" + rows))
    assert run.series("loss")["step"].tolist() == list(range(9)) and not run.warnings


def test_non_utf8_bytes_are_read_with_a_warning():
    run = load_one(FIXTURES / "broken" / "latin1.csv")
    assert "précision" in run.tags and "note" not in run.tags
    assert any("not UTF-8" in warning for warning in run.warnings)


@pytest.mark.parametrize("name, problem", [
    ("empty.csv", "empty file"),
    ("header_only.csv", "header only"),
    ("no_numeric.csv", "no numeric column"),
    ("lfs_pointer.csv", "Git LFS pointer"),
])
def test_bad_files_give_one_line_errors(name, problem):
    path = FIXTURES / "broken" / name
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    message = str(error.value)
    assert str(path) in message and problem in message and "\n" not in message


def test_permission_denied_is_a_curvedoc_error(tmp_path, monkeypatch):
    path = write(tmp_path / "log.csv", "step,loss\n0,1\n")

    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(CurvedocError, match="permission denied"):
        csvlog.read(Source("csv", path, ((None, path),), True))


def test_folder_of_csv_logs_reads_every_good_file_and_lists_the_bad_ones():
    runs = curvedoc.load(FIXTURES)
    formats = {run.format for run in runs}
    assert {"lightning-csv", "keras-csv", "ultralytics-csv", "wandb-export", "wandb-history-csv", "csv"} <= formats
    # empty, header-only, LFS pointer, runs table; a table of text only is no log, passed over as notes are
    assert len(runs.problems) == 4 and not any("no_numeric.csv" in problem for problem in runs.problems)


def test_a_million_row_csv_reads(tmp_path):
    rows = 1_000_000
    steps = np.arange(rows)
    loss = np.linspace(2.0, 0.1, rows)
    frame = pd.DataFrame({"step": steps, "loss": loss, "lr": 1e-3})
    frame.loc[frame.index % 1000 == 0, "lr"] = np.nan  # written as empty: not logged
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    run = load_one(path)
    assert run.point_counts() == {"loss": rows, "lr": rows - 1000}
    assert run.series("loss")["value"].iloc[-1] == pytest.approx(0.1)


def test_keras_na_cells_are_not_logged(tmp_path):
    # Keras CSVLogger writes NA for a metric not computed that epoch (validation_freq=2)
    run = load_one(write(tmp_path / "training.log", "epoch,loss,val_loss\n0,1.0,NA\n1,0.8,0.9\n2,0.6,NA\n"))
    assert run.format == "keras-csv"
    assert run.series("val_loss")["step"].tolist() == [1] and not run.warnings


def test_tensorboard_chart_download(tmp_path):
    path = write(tmp_path / "run-version_0-tag-train_loss.csv",
                 "Wall time,Step,Value\n1700000000.5,0,2.3\n1700000001.5,10,1.1\n")
    run = load_one(path)
    assert run.format == "tensorboard-csv"
    assert run.roles == {"train_loss": Role.TRAIN_LOSS}
    assert run.series("train_loss")["wall_time"].tolist() == [1700000000.5, 1700000001.5]


def test_long_table_of_tag_step_value(tmp_path):
    path = write(tmp_path / "scalars.csv", "tag,step,wall_time,value\nloss,0,,2.0\nval/loss,0,,2.1\nloss,1,,nan\n")
    run = load_one(path)
    assert run.format == "long-csv"
    assert run.roles == {"loss": Role.TRAIN_LOSS, "val/loss": Role.VAL_LOSS}
    assert math.isnan(run.series("loss")["value"][1])


def test_a_long_table_of_split_named_rows_with_columns_beside(tmp_path):
    """build-nanoGPT's log as a table: step,type,value with type train, val or hella (the split's loss, and a
    HellaSwag accuracy), and the train rows' lr and norm beside."""
    rows = "".join(f"{s},val,{10.9 - s / 10}\n{s},hella,0.25\n" if s % 5 == 0 else "" for s in range(20))
    rows += "".join(f"{s},train,{10.95 - s / 9},{s * 1e-5},{1.5}\n" for s in range(20))
    run = load_one(write(tmp_path / "training_metrics.csv", "step,type,value,lr,norm\n" + rows))
    assert run.format == "long-csv"
    assert run.roles["train_loss"] == Role.TRAIN_LOSS and run.roles["val_loss"] == Role.VAL_LOSS
    assert run.point_counts()["val_loss"] == 4 and run.point_counts()["lr"] == 20 and run.roles["lr"] == Role.LR


def test_a_validation_loss_carried_forward_on_every_row_is_read_where_it_changes(tmp_path):
    """A script that writes its last validation loss on every training row: 100 rows an evaluation."""
    rows = "".join(f"{i},{3 - i / 400:.5f},{3.1 - (i // 100) / 4:.4f}\n" for i in range(600))
    run = load_one(write(tmp_path / "training.csv", "step,training_loss,validation_loss\n" + rows))
    assert run.series("validation_loss")["step"].tolist() == [0, 100, 200, 300, 400, 500]
    assert run.point_counts()["training_loss"] == 600 and any("carried" in warning for warning in run.warnings)
    # a frozen held-out loss, the same at every evaluation, is evidence and stays as logged
    frozen = "".join(f"{e},{1 - e / 20:.3f},0.693\n" for e in range(10))
    run = load_one(write(tmp_path / "frozen.csv", "epoch,loss,val_loss\n" + frozen))
    assert run.point_counts()["val_loss"] == 10


def test_held_out_values_that_repeat_off_any_schedule_are_evaluations_each_kept(tmp_path):
    """A held-out accuracy on a small set, evaluated every epoch, that holds 0.25 for 3 epochs, 0.5 for 4 and 0.75
    for the other 73 (a model whose predictions barely change), and a validation loss rounded to two decimals that
    repeats for 1 to 4 epochs at a time: no evaluation schedule repeats them, so every epoch is a point. Values that
    change every 5 rows, or every 10 where two evaluations scored the same, were carried forward."""
    accuracy = [0.25] * 3 + [0.5] * 4 + [0.75] * 73
    rounded = [round(1.0 - 0.01 * (e // 3 + e % 2), 2) for e in range(80)]
    rows = "".join(f"{e},{2 - e / 50:.4f},{rounded[e]},{accuracy[e]}\n" for e in range(80))
    run = load_one(write(tmp_path / "history.csv", "epoch,train_loss,val_loss,val_accuracy\n" + rows))
    assert run.point_counts() == {"train_loss": 80, "val_loss": 80, "val_accuracy": 80} and not run.warnings
    scheduled = [round(1.0 - 0.05 * (e // 5), 2) if e // 5 != 4 else 0.85 for e in range(60)]
    rows = "".join(f"{e},{2 - e / 50:.4f},{scheduled[e]}\n" for e in range(60))
    run = load_one(write(tmp_path / "every_5.csv", "epoch,train_loss,val_loss\n" + rows))
    assert run.series("val_loss")["step"].tolist() == [0, 5, 10, 15, 25, 30, 35, 40, 45, 50, 55]


def test_a_long_table_with_columns_beside_reads_its_steps_once(tmp_path):
    text = "step,type,value,lr\n0,val,10.9,\n0,train,10.95,1e-5\n,train,10.8,2e-5\n2,train,10.7,3e-5\n3,train,10.6,4e-5\n"
    run = load_one(write(tmp_path / "training_metrics.csv", text))
    assert run.warnings == [f"{tmp_path / 'training_metrics.csv'}: 1 row(s) without a step value skipped"]


def test_an_atari_agents_frames_are_its_steps(tmp_path):
    rows = "".join(f"{i / 10},{640 * (i + 1)},{0.2 - i / 100}\n" for i in range(6))
    run = load_one(write(tmp_path / "progress.csv", "episode_reward,frame,value\n" + rows))
    assert run.series("episode_reward")["step"].tolist() == [640 * (i + 1) for i in range(6)] and not run.warnings


@pytest.mark.parametrize("counter", ["Episode", "generation", "round"])
def test_an_episode_generation_or_round_counter_is_the_step(tmp_path, counter):
    rows = "".join(f"{10 * i},{i / 7},{0.5 + i / 20}\n" for i in range(1, 7))
    run = load_one(write(tmp_path / "training_log.csv", f"{counter},reward,epsilon\n" + rows))
    assert run.tags == ["reward", "epsilon"] and run.series("reward")["step"].tolist() == [10, 20, 30, 40, 50, 60]


def test_a_global_counter_beside_one_that_starts_again_is_the_step(tmp_path):
    """A public traffic-signal agent trains over a curriculum of volumes: its episode starts again at 0 with each,
    its global_episode counts on. The run is one, placed by the global count, not runs cut at every new volume."""
    rows = "".join(f"{volume},{episode},{20 * stage + episode},{1 + (20 * stage + episode) / 50:.3f}\n"
                   for stage, volume in enumerate((200, 400, 600)) for episode in range(20))
    (run,) = curvedoc.load(write(tmp_path / "training_log.csv", "volume,episode,global_episode,total_reward\n" + rows))
    assert run.series("total_reward")["step"].tolist() == list(range(60)) and not run.warnings


def test_a_phase_column_names_each_row_s_split(tmp_path):
    rows = "".join(f"{epoch / 4:.2f},{epoch * 50},train,{3 - epoch / 10:.2f},,1e-5\n" for epoch in range(1, 9))
    rows += "".join(f"{epoch:.2f},{epoch * 200},val,{2.5 - epoch / 10:.2f},0.{60 + epoch},\n" for epoch in (1, 2))
    run = load_one(write(tmp_path / "training_metrics.csv", "epoch,global_step,phase,loss,accuracy,learning_rate\n"
                         + rows))
    assert sorted(run.tags) == ["learning_rate", "loss", "val_accuracy", "val_loss"]
    assert run.series("val_loss")["step"].tolist() == [200, 400] and run.roles["val_loss"] == Role.VAL_LOSS
    assert run.point_counts()["loss"] == 8


@pytest.mark.parametrize("column", ["type", "set"])
def test_a_type_column_of_split_names_names_each_row_s_split(tmp_path, column):
    rows = "".join(f"{epoch},{kind},{1 / epoch:.3f},0.001\n" for epoch in range(1, 6)
                   for kind in ("train", "validation") + (("test",) if epoch == 5 else ()))
    run = load_one(write(tmp_path / "loss_log.csv", f"epoch,{column},loss,lr\n" + rows))
    assert run.roles["val_loss"] == Role.VAL_LOSS and run.point_counts()["loss"] == 5
    assert run.series("test_loss")["step"].tolist() == [5]


def test_the_split_column_is_the_one_whose_cells_are_split_names(tmp_path):
    """A "stage" column (stage1, stage2: a fine-tune's stages) before the "phase" column that names the splits."""
    rows = "".join(f"stage1,{epoch},{phase},{1 / epoch:.3f}\n" for epoch in range(1, 5) for phase in ("train", "val"))
    run = load_one(write(tmp_path / "train_log.csv", "stage,epoch,phase,loss\n" + rows))
    assert run.roles["val_loss"] == Role.VAL_LOSS and run.point_counts()["loss"] == 4


def test_a_type_column_of_other_words_is_no_split(tmp_path):
    rows = "".join(f"{epoch},{kind},{1 / epoch:.3f}\n" for epoch in range(1, 6) for kind in ("cnn", "mlp"))
    assert "val_loss" not in load_one(write(tmp_path / "loss_log.csv", "epoch,type,loss\n" + rows)).tags


def test_columns_that_name_their_split_are_not_named_again_by_a_phase_column(tmp_path):
    rows = "".join(f"{epoch},fit,{1 / epoch:.3f},{1.2 / epoch:.3f}\n" for epoch in range(1, 5))
    run = load_one(write(tmp_path / "log.csv", "epoch,phase,train_loss,val_loss\n" + rows))
    assert sorted(run.tags) == ["train_loss", "val_loss"]
    rows = "".join(f"{epoch},{phase},{1 / epoch:.3f},{1.2 / epoch:.3f}\n" for epoch in range(1, 5)
                   for phase in ("train", "val"))
    run = load_one(write(tmp_path / "split.csv", "epoch,phase,train_loss,val_loss\n" + rows))
    assert sorted(run.tags) == ["train_loss", "val_loss"]


def test_a_phase_column_beside_columns_filled_on_the_validation_rows_alone(tmp_path):
    """A script that writes one row per split and epoch, the shared loss and accuracy on both, and the scores it
    only computes on validation (val_macro_f1) on the validation rows: each split's curves, the validation scores
    under their own names."""
    rows = "".join(f"{e},train,{0.5 / e:.3f},{0.8 + e / 50:.3f},,\n{e},val,{0.6 / e:.3f},{0.85 + e / 50:.3f},"
                   f"{0.84 + e / 50:.3f},{0.83 + e / 50:.3f}\n" for e in range(1, 6))
    run = load_one(write(tmp_path / "train_log.csv", "epoch,phase,loss,acc,val_macro_f1,val_f1_curling\n" + rows))
    assert sorted(run.tags) == ["acc", "loss", "val_acc", "val_f1_curling", "val_loss", "val_macro_f1"]
    assert run.point_counts()["val_macro_f1"] == 5 and run.roles["val_loss"] == Role.VAL_LOSS and not run.warnings
    filled_on_train = rows.replace("1,train,0.500,0.820,,", "1,train,0.500,0.820,0.9,", 1)
    run = load_one(write(tmp_path / "mixed.csv", "epoch,phase,loss,acc,val_macro_f1,val_f1_curling\n"
                         + filled_on_train))
    assert "val_loss" not in run.tags  # a validation column filled on a train row: no table of per-row splits


def test_a_problem_met_by_each_splits_rows_of_one_table_is_one_warning(tmp_path):
    """Two sessions appended to one phase-column CSV: the train rows and the val rows each go back to epoch 1, one
    restart of one run, said once."""
    session = "".join(f"{e},train,{0.5 / e:.3f}\n{e},val,{0.6 / e:.3f}\n" for e in range(1, 4))
    run = load_one(write(tmp_path / "train_log.csv", "epoch,phase,loss\n" + session + session))
    assert len([message for message in run.warnings if "step went back" in message]) == 1


def test_counters_beside_the_step_and_a_lone_batch_counter_are_no_curves(tmp_path):
    run = load_one(write(tmp_path / "metrics.csv", "step,global_step,loss\n" + "".join(
        f"{i},{i},{1 / (i + 1)}\n" for i in range(5))))
    assert run.tags == ["loss"]
    run = load_one(write(tmp_path / "gan.csv", "batch,d_loss,g_loss\n" + "".join(
        f"{1 + 5 * i},{1 / (i + 1)},{i / 10}\n" for i in range(5))))
    assert run.tags == ["d_loss", "g_loss"] and run.series("d_loss")["step"].tolist() == [1, 6, 11, 16, 21]


def test_train_block_then_val_block_is_not_a_restart(tmp_path):
    text = "step,loss,val_loss\n" + "".join(f"{i},{1 / (i + 1)},\n" for i in range(10)) + "4,,0.5\n9,,0.4\n"
    run = load_one(write(tmp_path / "log.csv", text))
    assert run.point_counts() == {"loss": 10, "val_loss": 2} and not run.warnings


def test_the_rows_of_one_step_under_gradient_accumulation_are_its_mean(tmp_path):
    """A public LoRA fine-tune writes ``epoch,global_step,loss,lr``, one row per micro-batch: four rows at each
    optimiser step. The step never goes back, so no row is a restart's; the step's loss is the mean of its four."""
    rows = "".join(f"1,{step},{0.4 / (step + 1) + 0.01 * batch:.4f},1e-4\n" for step in range(6) for batch in range(4))
    run = load_one(write(tmp_path / "training_log.csv", "epoch,global_step,loss,lr\n" + rows))
    assert run.series("loss")["step"].tolist() == [0, 1, 2, 3, 4, 5]
    assert run.series("loss")["value"].tolist() == pytest.approx([0.4 / (step + 1) + 0.015 for step in range(6)],
                                                                 abs=1e-4)
    assert not any("restarted" in warning for warning in run.warnings)
    assert any("each step's mean" in warning for warning in run.warnings)


def test_a_step_logged_twice_once_keeps_its_last_row(tmp_path):
    # a test run twice at the end of training: two rows, no layout of batches; the last stands
    rows = "".join(f"{e},{1 / (e + 1):.3f},\n" for e in range(6)) + "6,,0.93\n6,,0.73\n"
    run = load_one(write(tmp_path / "metrics.csv", "step,train_loss,test_acc\n" + rows))
    assert run.series("test_acc")["value"].tolist() == [0.73]


def test_semicolon_table_with_decimal_commas(tmp_path):
    run = load_one(write(tmp_path / "log.csv", "epoch;loss;val_loss\n1;0,9;1,0\n2;0,8;nan\n"))
    assert run.series("loss")["value"].tolist() == [0.9, 0.8]
    assert run.series("val_loss")["value"].iloc[0] == 1.0 and math.isnan(run.series("val_loss")["value"].iloc[1])


def test_a_tab_separated_log_whose_names_open_with_a_digit_is_a_table(tmp_path):
    """A public pose-lifting repository's logger writes ``log.txt`` as a tab-separated table, one row an epoch, each
    line ended by its tab, under names such as ``2d_loss`` and ``3d_loss``: names, though they open with a digit."""
    rows = "".join(f"{6.0 / epoch:.6f}\t{7.0 / epoch:.6f}\t{1.8:.6f}\t\n" for epoch in range(1, 6))
    run = load_one(write(tmp_path / "log.txt", "2d_loss   \t3d_loss   \tadv_loss   \t\n" + rows))
    assert set(run.tags) == {"2d_loss", "3d_loss", "adv_loss"} and len(run.series("2d_loss")) == 5
    assert run.roles["3d_loss"] == Role.TRAIN_LOSS


REAL_TABLES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".yaml")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_tables_only_give_curvedoc_errors(tmp_path, data):
    source = data.draw(st.sampled_from(REAL_TABLES))
    content = bytearray(source.read_bytes())
    cut = data.draw(st.integers(0, len(content)))
    content = content[:cut]
    for offset in data.draw(st.lists(st.integers(0, max(cut - 1, 0)), max_size=5)) if cut else []:
        content[offset] = data.draw(st.integers(0, 255))
    path = tmp_path / source.name
    path.write_bytes(bytes(content))
    try:
        runs = csvlog.read(Source("csv", path, ((None, path),), True))
    except CurvedocError as error:
        assert "\n" not in str(error)
    else:
        assert all(run.scalars["value"].dtype == np.float64 and len(run.scalars) for run in runs)


def test_a_header_of_its_epoch_alone_above_rows_of_text_is_refused_in_one_line(tmp_path):
    # an Ultralytics results.csv with a line end written into its header: no row has an epoch
    path = write(tmp_path / "results.csv", " " * 18 + "epoch\n" + " " * 13 + "train/loss,  metrics/accuracy_top1,"
                 + " " * 15 + "val/loss," + " " * 17 + "l")
    with pytest.raises(CurvedocError) as error:
        csvlog.read(Source("csv", path, ((None, path),), True))
    assert "\n" not in str(error.value)


def test_step_beyond_int64_is_no_step_rather_than_a_wrapped_number(tmp_path):
    run = load_one(write(tmp_path / "log.csv", "step,loss\n1,0.9\n1e30,0.8\n2,0.7\n"))
    assert run.series("loss")["step"].tolist() == [1, 2]
    assert any("1 row(s) without a step value skipped" in warning for warning in run.warnings)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_windows_encodings_with_a_byte_order_mark(tmp_path, encoding):
    # PowerShell 5's Out-File writes UTF-16 with a BOM; Excel's "CSV UTF-8" starts with a UTF-8 BOM
    text = "step,loss\r\n0,1.5\r\n1,0.5\r\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "log.csv").write_bytes(data)
    run = load_one(tmp_path / "log.csv")
    assert run.series("loss")[["step", "value"]].values.tolist() == [[0, 1.5], [1, 0.5]]
    assert run.warnings == []


def test_a_file_named_by_its_writer_is_named_by_its_folder_like_a_tensorboard_run(tmp_path):
    # Lightning's CSVLogger and TensorBoardLogger both write version_N/: the run is version_0 either way
    assert load_one(LIGHTNING).name == "version_0"
    assert load_one(FIXTURES / "ultralytics" / "results.csv").name == "ultralytics"
    assert load_one(write(tmp_path / "my_run.csv", "step,loss\n0,1\n")).name == "my_run.csv"


def test_rows_with_a_field_more_than_the_header_keep_the_headers_names(tmp_path):
    """f.write(f"{epoch},{loss},{acc},\\n") ends each row with a comma, and a script that adds a value to its rows
    but not to its header writes one field more: pandas takes the first field for row names and shifts every name
    one to the right (loss read as the epoch). R's write.table writes row names for real ("1",0,2.0,0.0 under
    "epoch","loss","acc"): its epoch column then counts in whole numbers, and stays as pandas reads it."""
    trailing = write(tmp_path / "trailing.csv",
                     "epoch,loss,acc\n" + "".join(f"{e},{2.0 / (1 + e):.3f},{0.1 * e:.2f},\n" for e in range(10)))
    run = load_one(trailing)
    assert run.series("loss")["value"].tolist()[:2] == [2.0, 1.0] and run.series("loss")["step"].tolist()[:2] == [0, 1]
    assert not run.warnings
    extra = write(tmp_path / "extra.csv",
                  "epoch,loss,acc\n" + "".join(f"{e},{2.0 / (1 + e):.3f},{0.1 * e:.2f},{7 * e}\n" for e in range(10)))
    run = load_one(extra)
    assert run.series("loss")["value"].tolist()[:2] == [2.0, 1.0] and run.roles["column 4"] == Role.OTHER
    assert "1 field(s) more than the header names" in run.warnings[0]
    named_rows = write(tmp_path / "r.csv", '"epoch","loss","acc"\n' + "".join(
        f'"{e + 1}",{e},{2.0 / (1 + e):.3f},{0.1 * e:.2f}\n' for e in range(10)))
    run = load_one(named_rows)
    assert run.series("loss")["value"].tolist()[:2] == [2.0, 1.0] and set(run.tags) == {"loss", "acc"}


def test_one_column_whose_name_has_a_space_is_one_curve(tmp_path):
    """A PPO script's rewards3.csv (a real public log): "Total Reward" over one episode's return a line is one
    column, not the two names a whitespace-separated header would give."""
    path = write(tmp_path / "rewards3.csv", "Total Reward\n" + "".join(f"{1000.0 + 7 * i}\n" for i in range(20)))
    run = load_one(path)
    assert run.roles == {"Total Reward": Role.SCORE} and len(run.series("Total Reward")) == 20
    # a whitespace table keeps its columns
    table = write(tmp_path / "losses.txt", "epoch loss\n" + "".join(f"{i} {2.0 - i / 20}\n" for i in range(20)))
    assert set(load_one(table).tags) == {"loss"}


def test_a_stable_baselines_monitor_log_is_an_episode_reward_curve(tmp_path):
    """Monitor writes a JSON comment line above its header, then one row per episode: return, length, time."""
    path = tmp_path / "monitor.csv"
    path.write_text('#{"t_start": 1699895683.208566, "env_id": "CartPole-v1"}\nr,l,t\n'
                    + "".join(f"{10.0 + i},{10 + i},{0.5 * i:.3f}\n" for i in range(30)))
    (run,) = curvedoc.load(path)
    assert run.format == "sb3-monitor"
    assert run.roles["episode_reward"].value == "score" and len(run.series("episode_reward")) == 30
    # a row is an episode: its count is the step, nothing to warn of
    assert run.series("episode_reward")["step"].tolist() == list(range(30)) and not run.warnings


def test_a_monitor_with_info_keywords_keeps_its_episode_columns(tmp_path):
    """Monitor(info_keywords=("is_success",)) writes the episode info's keys after r, l and t (a real public log:
    r,l,t,episode_energy,success): the same Monitor, its return still the episode reward."""
    path = tmp_path / "monitor.csv"
    path.write_text('#{"t_start": 1755599034.44, "env_id": "None"}\nr,l,t,episode_energy,is_success\n'
                    + "".join(f"{5.0 + i},{100 + i},{0.5 * i:.3f},{i % 7},{i % 2 == 0}\n" for i in range(30)))
    (run,) = curvedoc.load(path)
    assert run.format == "sb3-monitor"
    assert {"episode_reward", "episode_length", "episode_energy", "is_success"} <= set(run.tags)
    assert run.roles["episode_reward"].value == "score"


def test_numpy_savetxt_header_is_the_comment_above_the_rows(tmp_path):
    history = np.c_[np.arange(1, 11), np.linspace(2.0, 0.5, 10), np.linspace(2.1, 0.7, 10)]
    for name, delimiter in (("losses.txt", " "), ("losses.csv", ",")):
        np.savetxt(tmp_path / name, history, delimiter=delimiter, header=delimiter.join(["epoch", "train_loss",
                                                                                          "val_loss"]))
        run = load_one(tmp_path / name)
        assert run.roles == {"train_loss": Role.TRAIN_LOSS, "val_loss": Role.VAL_LOSS}
        assert run.series("val_loss")["step"].tolist() == list(range(1, 11)) and not run.warnings


def test_rows_of_numbers_with_no_header_are_named_by_the_file(tmp_path):
    # a script's f.write(f"{reward}\n") and f.write(f"{episode},{reward}\n"): the first row is a value, no name
    run = load_one(write(tmp_path / "rewards.csv", "".join(f"{0.5 + i / 10}\n" for i in range(20))))
    assert run.tags == ["rewards"] and run.series("rewards")["value"].iloc[0] == 0.5
    run = load_one(write(tmp_path / "loss_log.txt", "".join(f"{i}, {2 / i:.4f}\n" for i in range(1, 20))))
    assert run.roles == {"loss_log": Role.TRAIN_LOSS} and run.series("loss_log")["step"].tolist()[:2] == [1, 2]
    assert any("no header" in warning for warning in run.warnings)


def test_numbers_saved_by_numpy_in_scientific_notation_are_a_table_named_by_the_file(tmp_path):
    """np.savetxt("loss_history.csv", losses): 4.941687592463495093e-08 a row; the e of the exponent is no word
    naming a value, so the file is no captured output but a column the file names (a public counting model's)."""
    np.savetxt(tmp_path / "loss_history.csv", np.geomspace(5e-3, 5e-8, 40))
    run = load_one(tmp_path / "loss_history.csv")
    assert run.roles == {"loss_history": Role.TRAIN_LOSS} and len(run.series("loss_history")) == 40


def test_columns_named_by_their_split_alone_hold_the_metric_the_file_is_named_after(tmp_path):
    """pd.DataFrame({"ep": …, "train": …, "valid": …, "total": …}).to_csv("losses.csv"), a public OCT model's summed
    epoch losses: train and valid are the two splits' losses; a column no split names stays as it is, and a file
    whose name says nothing of what it measures names nothing."""
    frame = pd.DataFrame({"ep": np.arange(1, 21), "train": np.linspace(54.9, 40.0, 20),
                          "valid": np.linspace(16.3, 12.0, 20), "total": np.linspace(71.2, 52.0, 20)})
    frame.to_csv(tmp_path / "losses.csv")
    run = load_one(tmp_path / "losses.csv")
    assert run.roles == {"train_losses": Role.TRAIN_LOSS, "valid_losses": Role.VAL_LOSS, "total": Role.OTHER}
    frame.to_csv(tmp_path / "numbers.csv")
    assert set(load_one(tmp_path / "numbers.csv").tags) == {"train", "valid", "total"}


def test_pandas_names_of_a_bare_arrays_columns_are_no_value(tmp_path):
    pd.DataFrame(np.linspace(2.3, 0.4, 30)).to_csv(tmp_path / "train_losses.csv", index=False)  # header "0"
    run = load_one(tmp_path / "train_losses.csv")
    assert run.roles == {"train_losses": Role.TRAIN_LOSS} and run.series("train_losses")["value"].iloc[0] == 2.3


def test_a_bare_array_written_with_pandas_index_is_named_as_the_array_is(tmp_path):
    """pd.DataFrame(np.array(losses)).to_csv("loss.csv"): a header ",0,1,2" over the row numbers and three columns
    (a public adversarial autoencoder's D, G and reconstruction losses): the file names the first, the others kept."""
    losses = np.column_stack([np.linspace(1.4, 0.7, 30), np.linspace(0.8, 1.2, 30), np.linspace(0.2, 0.05, 30)])
    pd.DataFrame(losses).to_csv(tmp_path / "loss.csv")
    run = load_one(tmp_path / "loss.csv")
    assert run.roles == {"loss": Role.TRAIN_LOSS, "column 2": Role.OTHER, "column 3": Role.OTHER}
    assert run.series("loss")["step"].tolist()[:2] == [0, 1] and run.series("loss")["value"].iloc[0] == 1.4


def test_a_file_named_by_a_metric_names_its_first_column_and_keeps_the_others_by_place(tmp_path):
    # f.write(f"{loss},{val_loss}\n") every few batches, f.write(f"{epoch} {loss} {acc}\n"): the curve the file is
    # named after comes first; what the script logs beside it is kept, unjudged, as nothing names it
    lines = "".join(f"{2 / (i + 1):.4f},{2.2 / (i + 1):.4f}\n" for i in range(30))
    run = load_one(write(tmp_path / "train_loss.txt", lines))
    assert run.roles == {"train_loss": Role.TRAIN_LOSS, "column 2": Role.OTHER}
    assert run.series("train_loss")["value"].iloc[0] == 2.0 and len(run.series("column 2")) == 30
    assert any("column 2 kept by place and not judged" in warning for warning in run.warnings)
    (tmp_path / "epochs").mkdir()
    rows = "".join(f"{epoch} {1 / epoch:.4f} {epoch / 40:.3f}\n" for epoch in range(1, 30))
    run = load_one(write(tmp_path / "epochs" / "loss.txt", rows))
    assert run.roles == {"loss": Role.TRAIN_LOSS, "column 3": Role.OTHER}
    assert run.series("loss")["step"].tolist()[:2] == [1, 2]


def test_one_row_of_numbers_in_a_file_named_by_a_metric_is_its_curve_along_the_row(tmp_path):
    """A public LSTM's script writes each metric's history with csv.writer(f).writerow(history): ``loss.csv`` is one
    row of 500 values, one an epoch. One row is no table: it is the curve the file is named after, laid sideways."""
    values = np.geomspace(3.7, 0.66, 40)
    run = load_one(write(tmp_path / "loss.csv", ",".join(f"{value:.6f}" for value in values) + "\n"))
    assert run.roles == {"loss": Role.TRAIN_LOSS} and run.series("loss")["step"].tolist() == list(range(40))
    assert run.series("loss")["value"].iloc[0] == pytest.approx(3.7)
    assert any("one row of 40 numbers" in warning for warning in run.warnings)


def test_columns_of_numbers_that_nothing_names_are_refused_in_one_line(tmp_path):
    path = write(tmp_path / "train_log.csv", "".join(f"{4.5 - i / 10},{i / 20}\n" for i in range(20)))
    with pytest.raises(CurvedocError, match="2 columns of numbers with no header"):
        curvedoc.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one row has no steps to count up: refused, with no numpy warning on the way
        with pytest.raises(CurvedocError, match="2 columns of numbers with no header"):
            curvedoc.load(write(tmp_path / "one_row.csv", "3,4.5\n"))


def epochs_of(name: str, epochs: int, first_loss: float = 1.0) -> str:
    return "".join(f"{name},{e},{first_loss / e:.4f},{first_loss / e + 0.1:.4f}\n" for e in range(1, epochs + 1))


def test_runs_one_after_another_named_in_a_model_column_are_runs_of_their_own(tmp_path):
    # three trainings appended to one file, the epoch starting over with each; the first model trained again last
    text = "model,epoch,train_loss,val_loss\n" + epochs_of("baseline", 6) + epochs_of("proposed", 7, 0.8) + \
        epochs_of("baseline", 3)
    path = write(tmp_path / "training_log.csv", text)
    runs = curvedoc.load(path)
    assert [run.name for run in runs] == [
        "training_log.csv#baseline", "training_log.csv#proposed", "training_log.csv#baseline (2)"]
    assert [run.path for run in runs] == [f"{path}#baseline", f"{path}#proposed", f"{path}#baseline (2)"]
    assert [run.series("val_loss")["step"].tolist() for run in runs] == [
        list(range(1, 7)), list(range(1, 8)), list(range(1, 4))]
    assert runs[1].series("train_loss")["value"].iloc[0] == pytest.approx(0.8)
    for run in runs:
        assert run.roles == {"train_loss": Role.TRAIN_LOSS, "val_loss": Role.VAL_LOSS}
        assert run.meta.files == [str(path)] and not run.warnings


@pytest.mark.parametrize("column, first", [("seed", 0), ("run_id", 26), ("trial_id", 3)])
def test_runs_numbered_by_a_seed_column_are_runs_and_the_seed_no_curve(tmp_path, column, first):
    # a GAN's train_metrics.csv appends each run under its run_id: 26 for 19 epochs, 27 for 100 (a public log)
    rows = "".join(f"{step},{number},{2.0 / (step + 1) + number / 100:.4f}\n"
                   for number in (first, first + 1, first + 2) for step in range(5))
    runs = curvedoc.load(write(tmp_path / "sweep.csv", f"step,{column},loss\n" + rows))
    assert [run.name for run in runs] == [f"sweep.csv#{column}={number}" for number in (first, first + 1, first + 2)]
    assert all(run.tags == ["loss"] and run.point_counts() == {"loss": 5} for run in runs)


def test_two_run_naming_columns_name_the_runs_together(tmp_path):
    rows = "".join(f"{model},{seed},{e},{1 / e:.3f}\n" for model in ("cnn", "vit") for seed in (1, 2)
                   for e in range(1, 5))
    runs = curvedoc.load(write(tmp_path / "log.csv", "model,seed,epoch,loss\n" + rows))
    assert [run.name.split("#")[1] for run in runs] == ["cnn seed=1", "cnn seed=2", "vit seed=1", "vit seed=2"]


def test_runs_whose_rows_take_turns_are_runs_of_their_own(tmp_path):
    # a comparison loop that trains each model one epoch at a time and appends a row for each
    rows = "".join(f"{model},{e},{scale / e:.4f},{scale * 1.1 / e:.4f}\n"
                   for e in range(1, 9) for model, scale in (("resnet18", 1.0), ("vgg16", 1.3), ("mobilenet", 0.8)))
    runs = curvedoc.load(write(tmp_path / "compare.csv", "model,epoch,train_loss,val_loss\n" + rows))
    assert [run.name for run in runs] == ["compare.csv#resnet18", "compare.csv#vgg16", "compare.csv#mobilenet"]
    assert all(run.series("val_loss")["step"].tolist() == list(range(1, 9)) and not run.warnings for run in runs)
    assert runs[1].series("train_loss")["value"].iloc[0] == pytest.approx(1.3)


def test_a_generators_and_a_discriminators_rows_taking_turns_at_steps_of_their_own_are_one_run(tmp_path):
    rows = "".join(f"{step},{model},{1 / (step + 1):.4f}\n"
                   for step, model in zip(range(12), ["generator", "discriminator"] * 6, strict=True))
    runs = curvedoc.load(write(tmp_path / "gan.csv", "step,model,loss\n" + rows))
    assert len(runs) == 1


def test_a_single_valued_model_column_is_one_run_as_before(tmp_path):
    run = load_one(write(tmp_path / "training_log.csv", "model,epoch,train_loss,val_loss\n" + epochs_of("resnet", 8)))
    assert run.name == "training_log.csv" and run.path == str(tmp_path / "training_log.csv")
    assert run.point_counts() == {"train_loss": 8, "val_loss": 8} and not run.warnings


@pytest.mark.parametrize("header, rows", [
    # a phase column alternating train and val rows of one run
    ("epoch,phase,loss,acc", "".join(f"{e},{phase},{1 / e:.3f},{0.5 + e / 100:.2f}\n"
                                     for e in range(1, 9) for phase in ("train", "val"))),
    # the same as a block of train rows then a block of val rows, each counting the epochs from 1
    ("epoch,split,loss", "".join(f"{e},{split},{1 / e:.3f}\n" for split in ("train", "val") for e in range(1, 9))),
    ("epoch,subset_name,loss", "".join(f"{e},{split},{1 / e:.3f}\n"
                                       for split in ("training", "validation") for e in range(1, 9))),
    # Lightning's stage names (fit, validate) say what a row is of, never which run
    ("epoch,stage,loss", "".join(f"{e},{stage},{1 / e:.3f}\n" for stage in ("fit", "validate") for e in range(1, 9))),
    # a label column that changes from row to row
    ("step,label,loss", "".join(f"{s},{'cat' if s % 3 else 'dog'},{1 / (s + 1):.3f}\n" for s in range(12))),
])
def test_a_column_telling_rows_of_one_run_apart_does_not_split_it(tmp_path, header, rows):
    assert len(curvedoc.load(write(tmp_path / "log.csv", f"{header}\n{rows}"))) == 1


def test_a_text_column_changing_where_a_run_resumed_mid_way_is_no_run_name(tmp_path):
    # resumed from its epoch-4 checkpoint the next day: a restart, the latest values kept, as without the column
    rows = "".join(f"2024-03-01,{e},{1 / e:.3f}\n" for e in range(1, 7)) + \
        "".join(f"2024-03-02,{e},{0.9 / e:.3f}\n" for e in range(4, 10))
    run = load_one(write(tmp_path / "log.csv", "date,epoch,loss\n" + rows))
    assert run.series("loss")["step"].tolist() == list(range(1, 10))
    assert run.series("loss")["value"].iloc[3] == pytest.approx(0.9 / 4)
    assert any("restarted" in warning for warning in run.warnings)


@pytest.mark.parametrize("header, first, second", [
    ("epoch,batch_size,loss", "32", "64"),  # numbers name runs only under a name for it (seed, fold)
    ("epoch,lr,loss", "NA", "0.001"),  # nor do they written as text (Keras's NA where it logged none)
])
def test_a_metric_holding_still_between_restarts_names_no_run(tmp_path, header, first, second):
    rows = "".join(f"{e},{value},{1 / e:.3f}\n" for value in (first, second) for e in range(1, 6))
    rows += "".join(f"{e},{second},{0.5 / e:.3f}\n" for e in range(3, 6))  # the second run cut and resumed
    runs = curvedoc.load(write(tmp_path / "log.csv", f"{header}\n{rows}"))
    # two whole runs one after another, numbered, not named by the column; the second restarted
    assert [run.name.split("#")[1] for run in runs] == ["1", "2"]
    assert runs[1].point_counts()["loss"] == 5 and any("restarted" in warning for warning in runs[1].warnings)


def test_keras_csvlogger_appending_each_run_of_the_script_gives_each_its_own_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "torch")  # the backend the test environment has
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(256, 8)), rng.integers(0, 2, 256)
    log = tmp_path / "training_log.csv"
    for epochs in (6, 4):  # the script run twice, the second time cut short by hand: a run of its own all the same
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                                  keras.layers.Dense(2, activation="softmax")])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        model.fit(x, y, epochs=epochs, validation_split=0.25, verbose=0,
                  callbacks=[keras.callbacks.CSVLogger(str(log), append=True)])
    first, second = curvedoc.load(log)
    assert (first.name, second.name) == ("training_log.csv#1", "training_log.csv#2")
    assert first.point_counts()["val_loss"] == 6 and second.point_counts()["val_loss"] == 4
    assert not first.warnings and not second.warnings


def test_early_stopped_fits_appended_to_one_keras_log_are_each_a_run(tmp_path):
    # CSVLogger(append=True) over a sweep whose fits early stopping ends where each one's patience runs out: none
    # need reach the furthest epoch of the log to have ended
    lengths = (12, 7, 9, 5)
    rows = "".join(f"{e},{(1 + run) / (e + 1):.3f}\n" for run, length in enumerate(lengths) for e in range(length))
    runs = curvedoc.load(write(tmp_path / "training_log.csv", "epoch,loss\n" + rows))
    assert [run.point_counts() for run in runs] == [{"loss": length} for length in lengths]
    assert not any(run.warnings for run in runs)


def test_a_text_log_session_cut_short_and_started_over_is_one_run_restarted(tmp_path):
    lines = [f"epoch {e} loss {1 / (e + 1):.3f}" for e in range(4)] + [f"epoch {e} loss {0.9 / (e + 1):.3f}"
                                                                       for e in range(10)]
    run = load_one(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert run.point_counts() == {"loss": 10} and any("restarted" in warning for warning in run.warnings)


def test_a_keras_fit_resumed_at_its_checkpoints_epoch_is_one_run_restarted(tmp_path):
    # fit(initial_epoch=4) after a crash at epoch 6: the epochs go back, but not to the first
    rows = "".join(f"{e},{1 / (e + 1):.3f}\n" for e in range(7)) + "".join(f"{e},{0.9 / (e + 1):.3f}\n"
                                                                         for e in range(4, 10))
    run = load_one(write(tmp_path / "training_log.csv", "epoch,loss\n" + rows))
    assert run.point_counts() == {"loss": 10} and any("restarted" in warning for warning in run.warnings)


@pytest.mark.parametrize("header, rows", [
    # a block of train rows then a block of val rows, each counting the epochs from 0, in columns of their own
    ("epoch,train_loss,val_loss", "".join(f"{e},{1 / (e + 1):.3f},\n" for e in range(6))
     + "".join(f"{e},,{1.1 / (e + 1):.3f}\n" for e in range(6))),
    # an iteration counter that starts again with every epoch, beside the epoch going on
    ("epoch,iteration,loss", "".join(f"{e},{i},{1 / (3 * e + i + 1):.3f}\n" for e in range(4) for i in range(4))),
])
def test_counting_from_the_start_again_within_one_run_starts_no_session(tmp_path, header, rows):
    assert len(curvedoc.load(write(tmp_path / "log.csv", f"{header}\n{rows}"))) == 1


def test_a_last_session_that_stopped_as_it_began_is_not_read(tmp_path):
    rows = "".join(f"{e},{1 / (e + 1):.3f}\n" for e in range(8)) + "0,0.97\n1,0.6\n"
    run = load_one(write(tmp_path / "training_log.csv", "epoch,loss\n" + rows))
    assert run.point_counts() == {"loss": 8} and any("stopped as it began" in warning for warning in run.warnings)


def test_blocks_too_short_for_runs_are_no_run_names(tmp_path):
    rows = "".join(f"{name},{e},{1 / e:.3f}\n" for name in ("a", "b", "c", "d") for e in (1, 2))
    run = load_one(write(tmp_path / "log.csv", "model,epoch,loss\n" + rows))
    assert run.point_counts() == {"loss": 2}


def performance_rows(epochs: int, first_loss: float) -> str:
    return "".join(f"{0.2 + e / 50:.4f},{0.18 + e / 50:.4f},{0.2 + e / 50:.4f},{first_loss - e / 20:.4f}\n"
                   for e in range(epochs))


def test_a_run_written_as_a_table_per_split_is_one_run_named_by_its_train_file(tmp_path):
    # a Keras model.evaluate loop writing each split's metrics to its own file, under the same column names
    header = "Accuracy,Precision,Recall,loss\n"
    train = write(tmp_path / "train_performance.csv", header + performance_rows(6, 2.05))
    val = write(tmp_path / "val_performance.csv", header + performance_rows(5, 1.9))
    test = write(tmp_path / "test_performance.csv", "Accuracy,Precision,Recall\n0.12,0.08,0.12\n")
    runs = curvedoc.load(tmp_path)
    assert len(runs) == 1 and not runs.problems
    run = runs[0]
    assert (run.name, run.path, run.format) == ("train_performance.csv", str(train), "csv")
    assert run.meta.files == [str(train), str(val), str(test)]
    assert run.roles == {
        "train_Accuracy": Role.TRAIN_ACC, "train_Precision": Role.SCORE, "train_Recall": Role.SCORE,
        "train_loss": Role.TRAIN_LOSS,
        "val_Accuracy": Role.VAL_ACC, "val_Precision": Role.SCORE, "val_Recall": Role.SCORE, "val_loss": Role.VAL_LOSS,
        "test_Accuracy": Role.TEST_ACC, "test_Precision": Role.SCORE, "test_Recall": Role.SCORE,
    }
    assert run.series("val_loss")["step"].tolist() == [0, 1, 2, 3, 4]
    assert run.series("val_loss")["value"].iloc[0] == pytest.approx(1.9)
    assert sum("no step column" in warning for warning in run.warnings) == 3
    # the user names the run's log, whichever split's file: its other splits come with it
    for named in (train, val, test):
        assert load_one(named).roles == run.roles and load_one(named).path == str(train)


def test_split_files_with_a_step_column_share_its_axis(tmp_path):
    write(tmp_path / "history_train.csv", "epoch,loss,acc\n" + "".join(f"{e},{1 / e:.3f},{e / 10:.2f}\n"
                                                                        for e in range(1, 9)))
    write(tmp_path / "history_valid.csv", "epoch,loss,acc\n" + "".join(f"{e},{1.2 / e:.3f},{e / 11:.2f}\n"
                                                                        for e in (2, 4, 6, 8)))
    run = load_one(tmp_path)
    assert run.name == "history_train.csv"
    assert run.roles == {"train_loss": Role.TRAIN_LOSS, "train_acc": Role.TRAIN_ACC,
                         "valid_loss": Role.VAL_LOSS, "valid_acc": Role.VAL_ACC}
    assert run.series("valid_loss")["step"].tolist() == [2, 4, 6, 8]
    assert run.series("train_loss")["step"].tolist() == list(range(1, 9)) and not run.warnings



def test_tensorboard_chart_downloads_of_keras_s_train_and_validation_runs_are_one_run(tmp_path):
    # TensorBoard names a download after its run, and Keras's runs are the splits train/ and validation/
    write(tmp_path / "run-train-tag-epoch_loss.csv", "Wall time,Step,Value\n1700000000.5,0,2.3\n1700000001.5,1,1.1\n")
    write(tmp_path / "run-validation-tag-epoch_loss.csv",
          "Wall time,Step,Value\n1700000000.7,0,2.4\n1700000001.7,1,1.3\n")
    run = load_one(tmp_path)
    assert run.format == "tensorboard-csv" and run.name == "run-train-tag-epoch_loss.csv"
    assert run.roles == {"train_epoch_loss": Role.TRAIN_LOSS, "validation_epoch_loss": Role.VAL_LOSS}

def test_a_held_out_split_file_without_its_train_file_is_read_alone(tmp_path):
    write(tmp_path / "val_metrics.csv", "epoch,loss\n1,0.9\n2,0.8\n")
    write(tmp_path / "test_metrics.csv", "epoch,loss\n2,0.85\n")
    run = load_one(tmp_path)
    assert run.name == "val_metrics.csv" and run.roles == {"val_loss": Role.VAL_LOSS, "test_loss": Role.TEST_LOSS}


def test_an_unreadable_split_file_is_a_warning_on_its_run(tmp_path):
    train = write(tmp_path / "train_log.csv", "epoch,loss\n1,0.9\n2,0.8\n")
    write(tmp_path / "val_log.csv", "epoch,loss\n")
    run = load_one(train)
    assert run.path == str(train) and run.tags == ["train_loss"]
    assert any("val_log.csv: header only" in warning for warning in run.warnings)


@pytest.mark.parametrize("files", [
    # names differing by more than the split word
    {"train_metrics.csv": "epoch,loss\n1,0.9\n2,0.8\n", "val_scores.csv": "epoch,loss\n1,1.0\n2,0.9\n"},
    # headers that share nothing: two different logs
    {"train_log.csv": "epoch,loss\n1,0.9\n2,0.8\n", "val_log.csv": "step,bleu\n1,10\n2,12\n"},
    # a data set's splits, no metric log
    {"train.csv": "id,text,label\n1,good,1\n2,bad,0\n", "val.csv": "id,text,label\n3,fine,1\n4,poor,0\n"},
    # a log that names its splits already: a Keras CSVLogger beside a test-set evaluation
    {"train_history.csv": "epoch,loss,val_loss\n0,1.0,1.1\n1,0.8,0.9\n", "test_history.csv": "epoch,loss\n1,0.95\n"},
    # a split column names the split of each row
    {"train_results.csv": "epoch,phase,loss\n1,train,0.9\n1,val,1.0\n", "test_results.csv": "epoch,phase,loss\n"
                                                                                              "1,test,1.1\n"},
    # two files of one split: no telling which is the run's
    {"train_run.csv": "epoch,loss\n1,0.9\n", "training_run.csv": "epoch,loss\n1,0.8\n"},
])
def test_tables_that_are_not_one_run_s_splits_stay_runs_of_their_own(tmp_path, files):
    for name, text in files.items():
        write(tmp_path / name, text)
    assert sorted(run.name for run in curvedoc.load(tmp_path)) == sorted(files)


def test_a_lightning_metrics_csv_beside_a_split_named_file_is_not_merged(tmp_path):
    shutil.copy(LIGHTNING, tmp_path / "metrics.csv")
    write(tmp_path / "val_x.csv", "epoch,loss\n1,0.9\n2,0.8\n")
    runs = curvedoc.load(tmp_path)
    assert sorted(run.name for run in runs) == [tmp_path.name, "val_x.csv"]
    assert load_one(tmp_path / "val_x.csv").tags == ["loss"]
    assert load_one(tmp_path / "metrics.csv").roles == load_one(LIGHTNING).roles


def test_a_table_of_named_rows_without_a_step_is_no_log(tmp_path):
    """pandas' DataFrame.to_csv of a data set's class counts: the index of class names under an empty header, a
    column per split. Its Train and Val columns are counts per class, not curves: refused when named, passed over
    in a folder beside the run's log."""
    (tmp_path / "logs").mkdir()
    stats = write(tmp_path / "logs" / "dataset_stats.csv", ",Train,Val,Test,Total\nEOSINOPHIL,160,40,623,823\n"
                  "LYMPHOCYTE,160,40,620,820\nMONOCYTE,160,40,620,820\nNEUTROPHIL,160,40,624,824\n"
                  "Total,640,160,2487,3287\n")
    with pytest.raises(CurvedocError, match="one row per named item"):
        curvedoc.load(stats)
    write(tmp_path / "logs" / "training_log.csv", "epoch,loss\n" + "".join(f"{e},{1 / e:.3f}\n" for e in range(1, 6)))
    assert [run.name for run in curvedoc.load(tmp_path / "logs")] == ["training_log.csv"]
    # a pandas index of dates is points in time
    dated = write(tmp_path / "daily.csv", ",loss\n" + "".join(f"2024-03-0{d},{1 / d:.3f}\n" for d in range(1, 6)))
    assert curvedoc.load(dated)[0].point_counts() == {"loss": 5}


FASTAI_HEADER = "epoch,train_loss,valid_loss,dice,time\n"


def _fastai_fit(losses) -> str:
    return FASTAI_HEADER + "".join(f"{epoch},{loss:.5f},{loss * 0.9:.5f},{1 - loss:.4f},00:14\n"
                                   for epoch, loss in enumerate(losses))


def test_fastai_fits_appended_under_their_own_headers_are_one_run_counted_on(tmp_path):
    """fastai's CSVLogger(append=True) writes its header again above every fit's epochs, each counted from 0 while
    the same learner trains on (a public segmentation log: 20 fits of 10 epochs). Read as one run of 30 epochs,
    not as the last fit alone; a fit interrupted after its first epoch (#na# for the loss it never computed) is a
    restart the next fit replaces."""
    losses = 0.01 + 0.04 * np.exp(-np.arange(30) / 3)
    text = (FASTAI_HEADER + "0,0.0557,#na#,#na#,00:12\n" + _fastai_fit(losses[:10]) + _fastai_fit(losses[10:20])
            + _fastai_fit(losses[20:]))
    run = load_one(write(tmp_path / "history.csv", text))
    assert run.format == "fastai-csv"
    assert run.series("train_loss")["step"].tolist() == list(range(30))
    assert run.series("train_loss")["value"].tolist() == pytest.approx(np.round(losses, 5).tolist())
    assert any("header repeated 3 time(s)" in warning for warning in run.warnings)


def test_fastai_fits_each_from_scratch_are_runs_of_their_own(tmp_path):
    losses = 0.05 * np.exp(-np.arange(10) / 4)
    runs = curvedoc.load(write(tmp_path / "history.csv", _fastai_fit(losses) + _fastai_fit(losses * 1.01)))
    assert [run.path.rsplit("#", 1)[-1] for run in runs] == ["1", "2"]
    assert all(run.series("train_loss")["step"].tolist() == list(range(10)) for run in runs)
