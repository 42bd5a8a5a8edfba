"""DVCLive output folders (fixtures/dvclive, written by DVCLive itself: fixtures/generate/dvclive_logs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.diagnose import diagnose_run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "dvclive"


def test_a_dvclive_folder_is_one_run_of_its_metric_tables():
    (run,) = curvedoc.load(FIXTURES / "healthy")
    assert (run.name, run.format) == ("healthy", "dvclive")
    assert run.roles == {"grad_norm": Role.GRAD_NORM, "lr": Role.LR, "train/acc": Role.TRAIN_ACC,
                         "train/loss": Role.TRAIN_LOSS, "val/acc": Role.VAL_ACC, "val/loss": Role.VAL_LOSS}
    assert run.point_counts()["train/loss"] == 172 and run.point_counts()["val/loss"] == 4
    assert run.series("val/loss")["step"].tolist() == [42, 85, 128, 171]
    # timestamp=True: milliseconds since the epoch, read as the wall time in seconds
    walls = run.series("train/loss")["wall_time"].to_numpy()
    assert 1.7e9 < walls[0] < 2e9 and np.all(np.diff(walls) >= 0)
    assert run.series("val/acc")["wall_time"].isna().all()
    # log_params: params.yaml, with the class count
    assert run.meta.hparams["num_classes"] == 10 and run.meta.n_classes == 10
    assert not run.warnings


def test_a_folder_of_dvclive_runs_gives_each_once_and_no_table_as_a_run():
    runs = curvedoc.load(FIXTURES)
    assert [run.name for run in runs] == ["healthy", "resumed", "shuffled_labels"]
    assert all(run.format == "dvclive" for run in runs)


def test_a_run_resumed_into_the_same_folder_is_one_run():
    healthy, resumed = curvedoc.load(FIXTURES / "healthy")[0], curvedoc.load(FIXTURES / "resumed")[0]
    assert resumed.point_counts() == healthy.point_counts() and not resumed.warnings
    assert resumed.series("train/loss")["step"].tolist() == list(range(172))


def test_the_symptom_of_a_dvclive_run_is_found():
    (healthy,), (shuffled,) = curvedoc.load(FIXTURES / "healthy"), curvedoc.load(FIXTURES / "shuffled_labels")
    assert not [finding for finding in diagnose_run(healthy) if finding.severity != "info"]
    assert "flat_at_chance" in {finding.symptom for finding in diagnose_run(shuffled)}


def test_a_table_cut_off_mid_line_keeps_its_complete_rows(tmp_path):
    run_dir = shutil.copytree(FIXTURES / "healthy", tmp_path / "dvclive")
    table = run_dir / "plots" / "metrics" / "train" / "loss.tsv"
    table.write_bytes(table.read_bytes()[:-12])  # a crashed job's last row, half written
    (run,) = curvedoc.load(run_dir)
    assert run.point_counts()["train/loss"] == 171
    assert any("cut off" in warning for warning in run.warnings)


def test_a_dvclive_folder_without_a_readable_table_is_one_line_error(tmp_path):
    run_dir = tmp_path / "dvclive"
    (run_dir / "plots" / "metrics").mkdir(parents=True)
    (run_dir / "metrics.json").write_text("{}")
    (run_dir / "plots" / "metrics" / "loss.tsv").write_text("when\twhat\nmonday\tthis\n")
    with pytest.raises(CurvedocError, match="DVCLive folder without a readable metric") as error:
        curvedoc.load(run_dir)
    assert "\n" not in str(error.value)
