"""DeepXDE's loss.dat and printed training table (fixtures/deepxde, written by DeepXDE itself:
fixtures/generate/deepxde_logs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from damage import assert_reads_or_refuses_in_one_line, damaged
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.diagnose import diagnose_run
from curvedoc.readers import deepxde

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deepxde"
HEADER = "# step, loss_train, loss_test, metrics_test\n"


def test_a_loss_history_is_the_sums_its_terms_and_the_metric():
    (run,) = curvedoc.load(FIXTURES / "healthy" / "loss.dat")
    assert (run.name, run.format) == ("healthy", "deepxde")
    assert run.roles == {"train_loss": Role.TRAIN_LOSS, "train_loss_1": Role.TRAIN_LOSS,
                         "train_loss_2": Role.TRAIN_LOSS, "test_loss": Role.TEST_LOSS, "test_loss_1": Role.TEST_LOSS,
                         "test_loss_2": Role.TEST_LOSS, "test_metric": Role.OTHER}
    # Adam's 31 rows (steps 0..6000), then L-BFGS's, whose first row repeats Adam's last and is read once
    assert run.point_counts()["train_loss"] == 32 and not run.warnings
    assert run.series("train_loss")["step"].tolist()[-2:] == [6000, 6073]
    table = np.loadtxt(FIXTURES / "healthy" / "loss.dat")
    first = run.series("train_loss")["value"].iloc[0]
    assert first == pytest.approx(table[0, 1] + table[0, 2])
    assert run.series("test_metric")["value"].iloc[0] == pytest.approx(table[0, 5])


def test_the_printed_table_reads_as_the_loss_history_does():
    (history,) = curvedoc.load(FIXTURES / "healthy" / "loss.dat")
    (printed,) = curvedoc.load(FIXTURES / "healthy" / "train.log")
    assert printed.point_counts() == history.point_counts() and not printed.warnings
    for tag in history.tags:
        assert printed.series(tag)["step"].tolist() == history.series(tag)["step"].tolist()
        # printed with three significant digits
        assert np.allclose(printed.series(tag)["value"], history.series(tag)["value"], rtol=6e-3, atol=1e-12)


def test_a_folder_with_both_is_one_run_read_from_the_loss_history():
    runs = curvedoc.load(FIXTURES)
    assert [(run.name, run.format) for run in runs] == [("healthy", "deepxde"), ("lr_too_high", "deepxde")]


def test_the_learning_rate_too_high_is_found_and_the_healthy_run_passes():
    healthy, broken = curvedoc.load(FIXTURES)
    assert not [finding for finding in diagnose_run(healthy) if finding.severity != "info"]
    spikes = [finding for finding in diagnose_run(broken) if finding.symptom == "spike"]
    assert spikes and spikes[0].step == 600


@pytest.mark.parametrize("metrics", [0, 1, 2])
def test_the_columns_split_where_each_test_term_sits_beside_its_train_term(tmp_path, metrics):
    rng = np.random.default_rng(0)
    steps = np.arange(0, 1000, 100)
    residual, boundary = 10.0 ** -np.linspace(0, 4, 10), 10.0 ** -np.linspace(2, 8, 10)
    columns = [steps, residual, boundary, residual * 1.3, boundary * 0.8]
    columns += [rng.uniform(0.01, 0.5, 10) for _ in range(metrics)]
    path = tmp_path / "loss.dat"
    np.savetxt(path, np.column_stack(columns), header=HEADER[2:-1])
    (run,) = curvedoc.load(path)
    assert run.series("test_loss_2")["value"].to_numpy() == pytest.approx(boundary * 0.8)
    expected = {0: set(), 1: {"test_metric"}, 2: {"test_metric_1", "test_metric_2"}}[metrics]
    assert {tag for tag in run.tags if "metric" in tag} == expected


def test_a_history_cut_mid_row_keeps_its_complete_rows(tmp_path):
    path = shutil.copy(FIXTURES / "lr_too_high" / "loss.dat", tmp_path / "loss.dat")
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:-40])
    (run,) = curvedoc.load(path)
    assert run.point_counts()["train_loss"] == 30
    assert any("cut off" in warning for warning in run.warnings)


def test_a_history_without_a_row_is_a_one_line_error(tmp_path):
    path = tmp_path / "loss.dat"
    path.write_text(HEADER + "step loss\n")
    with pytest.raises(CurvedocError, match="without a row of numbers") as error:
        curvedoc.load(path)
    assert "\n" not in str(error.value)


def test_a_row_whose_step_is_no_number_is_skipped(tmp_path):
    path = tmp_path / "loss.dat"
    path.write_text(HEADER + "0 1.0 1.1 0.5\nnan 0.5 0.6 0.6\n100 0.2 0.3 0.7\n")
    (run,) = curvedoc.load(path)
    assert list(run.series("train_loss")["step"]) == [0, 100]
    assert any("1 line(s) that are not a row" in warning for warning in run.warnings)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cut_or_corrupted_loss_histories_only_give_curvedoc_errors(tmp_path, data):
    source = data.draw(st.sampled_from(sorted(FIXTURES.glob("*/loss.dat"))))
    path = tmp_path / "loss.dat"
    path.write_bytes(damaged(data, source.read_bytes()))
    assert_reads_or_refuses_in_one_line(deepxde, path)
