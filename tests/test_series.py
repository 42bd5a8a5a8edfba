"""One metric per file: the numbers a training script saved of a curve it kept in a list (curvedoc.readers.series)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from damage import assert_reads_or_refuses_in_one_line, damaged
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.diagnose import diagnose_run
from curvedoc.readers import discover, series

TRAIN = [2.3 / (epoch + 1) ** 0.5 for epoch in range(20)]
VAL = [1.8 - epoch / 20 if epoch < 10 else 1.3 + (epoch - 10) / 10 for epoch in range(20)]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_file_of_one_number_a_line_is_the_curve_its_name_says(tmp_path):
    # np.savetxt("train_loss.txt", losses)
    path = tmp_path / "train_loss.txt"
    np.savetxt(path, TRAIN)
    (run,) = curvedoc.load(path)
    assert (run.name, run.format, run.roles) == ("train_loss.txt", "metric-files", {"train_loss": Role.TRAIN_LOSS})
    assert run.series("train_loss")["step"].tolist() == list(range(20))
    assert np.allclose(run.series("train_loss")["value"], TRAIN)
    assert any("no step beside the values" in warning for warning in run.warnings)


def test_a_delimiter_after_every_number_leaves_one_number_a_line(tmp_path):
    """f.write(f"{loss},\n"): read as a CSV, its first number was the header and the delimiter a second, empty
    column (a public drowsiness detector's loss_curve.csv became a curve named "0.935858")."""
    path = write(tmp_path / "loss_curve.csv", "".join(f"{value:.6f},\n" for value in TRAIN))
    (run,) = curvedoc.load(path)
    assert run.format == "metric-files" and run.roles == {"loss_curve": Role.TRAIN_LOSS}
    assert np.allclose(run.series("loss_curve")["value"], TRAIN, atol=1e-6)


def test_a_folder_of_metric_files_is_one_run_whose_shape_is_judged(tmp_path):
    # f.write(str(val_losses)), one Python list a file, and numpy's repr of its floats
    write(tmp_path / "exp" / "loss_log.txt", str(TRAIN))
    write(tmp_path / "exp" / "val_loss_log.txt", "[" + ", ".join(f"np.float64({value})" for value in VAL) + "]")
    write(tmp_path / "exp" / "notes.txt", "lr 0.01, batch 32\n")
    (run,) = curvedoc.load(tmp_path)
    assert run.name == "exp" and run.point_counts() == {"loss_log": 20, "val_loss_log": 20}
    assert run.roles["val_loss_log"] == Role.VAL_LOSS
    assert "overfitting" in {finding.symptom for finding in diagnose_run(run)}


def test_csv_files_of_one_number_a_line_join_their_folder_spread_over_the_run(tmp_path):
    """np.savetxt of a public counting model's curves into .csv files: the train MSE every 50 iterations, the test MSE
    every 5,000 (a hundred times fewer values). They are one run's curves, and the test values lie across the whole
    run, not over the first hundredth of it where their places in their file would put them."""
    folder = tmp_path / "results"
    folder.mkdir()
    train = np.linspace(2.0, 0.5, 1000)
    np.savetxt(folder / "loss_history.csv", train)
    np.savetxt(folder / "loss_history_test.csv", train[::100] + 0.1)
    (run,) = curvedoc.load(folder)
    assert run.format == "metric-files"
    assert run.roles == {"loss_history": Role.TRAIN_LOSS, "loss_history_test": Role.TEST_LOSS}
    test_steps = run.series("loss_history_test")["step"].tolist()
    assert test_steps[0] == 0 and test_steps[-1] == 999 and test_steps[1] == 111
    assert any("spread over the run's 1000 places" in warning for warning in run.warnings)
    (alone,) = curvedoc.load(folder / "loss_history.csv")
    assert alone.format == "metric-files" and alone.roles == {"loss_history": Role.TRAIN_LOSS}


def test_lines_that_name_their_epoch_place_each_value_there(tmp_path):
    # f.write(f"epoch {epoch}:{loss}\n") into train_loss.txt and val_loss.txt, evaluated every other epoch
    write(tmp_path / "run" / "train_loss.txt", "".join(f"epoch {epoch}:{value}\n" for epoch, value in enumerate(TRAIN)))
    write(tmp_path / "run" / "val_loss.txt", "".join(f"epoch {2 * index}:{value}\n" for index, value in enumerate(VAL)))
    (run,) = curvedoc.load(tmp_path)
    assert run.format == "metric-files" and run.series("val_loss")["step"].tolist() == list(range(0, 40, 2))
    assert np.allclose(run.series("train_loss")["value"], TRAIN)
    assert not any("no step beside the values" in warning for warning in run.warnings)


def test_lines_that_give_their_step_before_a_colon_place_each_value_there(tmp_path):
    # a public QA model's loss.log: f.write(f"{step}: {loss}\n"); a count that goes back is no step
    (run,) = curvedoc.load(write(tmp_path / "loss.log", "".join(f"{10 * step}: {value}\n"
                                                                  for step, value in enumerate(TRAIN, start=1))))
    assert run.format == "metric-files" and run.series("loss")["step"].tolist() == list(range(10, 210, 10))
    assert np.allclose(run.series("loss")["value"], TRAIN)
    back = write(tmp_path / "back" / "loss.txt", "".join(f"{step % 5}: {value}\n" for step, value in enumerate(TRAIN)))
    assert all(source.family != "metric-files" for source in discover(back.parent).sources)


def test_numbers_whose_file_names_no_metric_or_that_stand_in_columns_are_no_metric_file(tmp_path):
    write(tmp_path / "x.txt", "\n".join(map(str, TRAIN)))
    write(tmp_path / "losses.txt", "".join(f"{epoch} {value}\n" for epoch, value in enumerate(TRAIN)))
    assert [source.family for source in discover(tmp_path).sources] != ["metric-files"] * 2
    assert all(source.family != "metric-files" for source in discover(tmp_path).sources)


def test_one_line_of_numbers_is_the_list_written_out_bare(tmp_path):
    # a public DQN's losses.txt: f.write(" ".join(str(loss) for loss in losses)), 10,000 values on one line and no
    # newline; one row has no columns to be a table of
    path = write(tmp_path / "losses.txt", " ".join(f"{value:.6f}" for value in TRAIN))
    (run,) = curvedoc.load(path)
    assert run.format == "metric-files" and run.roles == {"losses": Role.TRAIN_LOSS}
    assert np.allclose(run.series("losses")["value"], TRAIN, atol=1e-6)


def test_lists_printed_one_after_another_on_a_line_are_refused_and_a_list_a_line_is_one_curve(tmp_path):
    # f.write(str(val_losses)); f.write(str(val_accs)) at each session's end: which list is which metric, the
    # file's one name cannot say; f.write(str(epoch_losses) + "\n") each epoch is one curve written in parts
    glued = write(tmp_path / "glued" / "losses.txt", str(VAL) + str([0.5 + epoch / 50 for epoch in range(20)]))
    with pytest.raises(CurvedocError, match="2 lists printed one after another"):
        curvedoc.load(glued)
    (run,) = curvedoc.load(write(tmp_path / "parts" / "losses.txt", f"{TRAIN[:10]}\n{TRAIN[10:]}\n"))
    assert np.allclose(run.series("losses")["value"], TRAIN)


def test_items_that_are_no_number_past_the_first_ones_are_skipped_with_a_warning(tmp_path):
    values = [f"{0.5 + step / 4000:.6f}" for step in range(1000)]
    path = write(tmp_path / "val_acc.txt", "\n".join(values[:900] + ["--"] + values[900:]) + "\n")
    (run,) = curvedoc.load(path)
    assert len(run.series("val_acc")) == 1000
    assert any("1 item(s) that are no number skipped" in warning for warning in run.warnings)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_metric_files_only_give_curvedoc_errors(tmp_path, data):
    path = tmp_path / "train_loss.txt"
    path.write_bytes(damaged(data, str(TRAIN).encode()))
    assert_reads_or_refuses_in_one_line(series, path)
    # np.savetxt into a .csv: a metric file, or the table reader's when the damage leaves it none
    path = tmp_path / "losses_train.csv"
    path.write_bytes(damaged(data, "".join(f"{value:.18e}\n" for value in TRAIN).encode()))
    try:
        runs = curvedoc.load(path)
    except CurvedocError as error:
        assert "\n" not in str(error)
    else:
        assert all(len(run.scalars) for run in runs)


def save(path: Path, array) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, array)
    return path


def test_numpy_arrays_saved_a_metric_a_file_are_one_run_cut_where_none_was_filled(tmp_path):
    """A public FCN trainer np.save()s each metric's array, allocated with np.zeros for the 500 planned epochs and
    filled for the 330 run; its per-class IoU is one row of 32 an epoch. The files are one run, the rows' means
    its score, and the tail where every file holds exactly 0 is no epoch at all."""
    planned, run_for = 30, len(TRAIN)
    loss, iou = np.zeros(planned), np.zeros((planned, 4))
    loss[:run_for] = TRAIN
    iou[:run_for] = np.linspace(0.1, 0.6, run_for)[:, None] + np.array([0.0, 0.1, 0.2, np.nan])
    save(tmp_path / "scores" / "train_loss.npy", loss)
    save(tmp_path / "scores" / "meanIU.npy", iou)
    (run,) = curvedoc.load(tmp_path)
    assert run.format == "metric-files" and run.roles["meanIU"] is Role.SCORE
    assert np.allclose(run.series("train_loss")["value"], TRAIN)
    assert np.allclose(run.series("meanIU")["value"], np.linspace(0.1, 0.6, run_for) + 0.1)
    assert any("exactly 0 from its value 20 on" in warning for warning in run.warnings)


def test_an_array_of_numbers_whose_name_says_nothing_is_no_metric(tmp_path):
    save(tmp_path / "models" / "weights.npy", np.ones(10))
    with pytest.raises(CurvedocError, match="no training logs found"):
        curvedoc.load(tmp_path / "models")
