"""MLflow file store and SQLite store, read from fixtures MLflow 3.17 wrote (fixtures/generate/mlflow_logs.py)."""

import math
import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc.errors import CurvedocError
from curvedoc.readers import mlflow as mlflow_reader
from curvedoc.roles import Role

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mlflow"
MLRUNS = FIXTURES / "file" / "mlruns"
DB = FIXTURES / "sqlite" / "mlflow.db"
BROKEN = FIXTURES / "broken"
RUN_NAMES = {"healthy", "lr_too_high", "shuffled_labels"}
TAGS = {"lr", "train/acc", "train/grad_norm", "train/loss", "val/acc", "val/loss"}


def by_name(runs):
    return {run.name: run for run in runs}


@pytest.fixture(scope="module")
def file_runs():
    return by_name(curvedoc.load(MLRUNS))


@pytest.fixture(scope="module")
def sqlite_runs():
    return by_name(curvedoc.load(DB))


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {path.name: (path.stat().st_size, path.stat().st_mtime_ns) for path in folder.iterdir()}


def test_file_store_gives_one_run_per_mlflow_run_not_per_experiment(file_runs):
    runs = curvedoc.load(MLRUNS)
    assert len(runs) == 3 and not runs.problems
    assert set(file_runs) == RUN_NAMES
    for run in runs:
        assert run.format == "mlflow"
        assert Path(run.path).parent.parent == MLRUNS
        assert run.meta.start_time > 1.7e9


def test_an_artifact_copy_of_a_runs_metrics_is_not_a_second_run(tmp_path):
    # Ultralytics logs its metrics to MLflow and copies results.csv into the run's artifacts
    store = shutil.copytree(MLRUNS, tmp_path / "mlruns")
    run_folder = next(path.parent for path in store.glob("*/*/metrics"))
    (run_folder / "artifacts").mkdir(exist_ok=True)
    (run_folder / "artifacts" / "results.csv").write_text("epoch,train/loss\n0,2.3\n1,1.9\n2,1.5\n")
    assert len(curvedoc.load(store)) == 3
    shutil.rmtree(run_folder / "metrics")
    (run_folder / "metrics").mkdir()  # a run that logged no metrics: its artifacts are all there is
    assert any(run.path.endswith("results.csv") for run in curvedoc.load(store))


def test_sqlite_store_gives_one_run_per_live_run_and_skips_the_deleted_one(sqlite_runs):
    assert set(sqlite_runs) == RUN_NAMES  # the generator also logged and deleted "deleted_run"
    for run in sqlite_runs.values():
        assert run.format == "mlflow-sqlite"
        assert run.path.startswith(f"{DB}#")
        assert run.meta.files == [str(DB)]
        assert run.meta.start_time > 1.7e9


@pytest.mark.parametrize("name", sorted(RUN_NAMES))
def test_both_stores_hold_the_same_curves(file_runs, sqlite_runs, name):
    from_files, from_db = file_runs[name], sqlite_runs[name]
    assert set(from_files.tags) == set(from_db.tags) == TAGS
    for tag in TAGS:
        left, right = from_files.series(tag), from_db.series(tag)
        np.testing.assert_array_equal(left["step"], right["step"])
        np.testing.assert_array_equal(left["value"], right["value"])  # NaN == NaN here, and Inf == Inf
        assert np.allclose(left["wall_time"], right["wall_time"], atol=60, rtol=0)


def test_nested_keys_become_tags_with_their_roles(file_runs):
    roles = file_runs["healthy"].roles
    assert roles["train/loss"] == Role.TRAIN_LOSS
    assert roles["val/loss"] == Role.VAL_LOSS
    assert roles["val/acc"] == Role.VAL_ACC
    assert roles["lr"] == Role.LR
    assert roles["train/grad_norm"] == Role.GRAD_NORM


@pytest.mark.parametrize("store", ["file_runs", "sqlite_runs"])
def test_inf_then_nan_of_the_diverged_run_are_kept(request, store):
    loss = request.getfixturevalue(store)["lr_too_high"].series("train/loss")
    values = loss["value"].to_numpy()
    assert math.isfinite(values[0])
    assert values[1] == math.inf  # SQLite holds float64-max here; it is Inf again once read
    assert np.isnan(values[2:]).all()
    assert len(values) == 172


@pytest.mark.parametrize("store", ["file_runs", "sqlite_runs"])
def test_params_become_typed_hparams_and_give_the_class_count(request, store):
    run = request.getfixturevalue(store)["healthy"]
    hparams = run.meta.hparams
    assert hparams["num_classes"] == 10 and hparams["lr"] == 0.003 and hparams["bug"] == "none"
    assert hparams["model/hidden_layers"] == 1  # a nested key: a sub-folder of params/ in the file store
    assert run.meta.n_classes == 10
    assert run.meta.n_classes_source == "MLflow param: num_classes"


def test_a_nested_class_count_param_is_found(tmp_path):
    run_dir = write_run(tmp_path, {"loss": "1 0.5 0\n"})
    (run_dir / "params" / "model").mkdir(parents=True)
    (run_dir / "params" / "model" / "num_classes").write_text("7")
    run = mlflow_reader.read_run_folder(run_dir)
    assert (run.meta.n_classes, run.meta.n_classes_source) == (7, "MLflow param: model/num_classes")


@pytest.mark.parametrize("store", ["file_runs", "sqlite_runs"])
def test_the_final_value_logged_twice_keeps_the_last_one_and_says_so(request, store):
    run = request.getfixturevalue(store)["healthy"]
    assert any("2 point(s) logged again" in warning for warning in run.warnings)
    assert len(run.series("val/loss")) == 4


def test_reading_the_database_creates_no_file_next_to_it():
    before = listing(DB.parent)
    curvedoc.load(DB)
    curvedoc.load(FIXTURES)
    assert listing(DB.parent) == before


def test_a_wal_mode_database_is_read_without_leaving_wal_or_shm_files(tmp_path):
    db = tmp_path / "mlflow.db"
    shutil.copy(DB, db)
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
    connection.close()
    before = listing(tmp_path)
    assert set(by_name(curvedoc.load(db))) == RUN_NAMES
    assert listing(tmp_path) == before


def open_writer_with_pending_rename(db: Path) -> sqlite3.Connection:
    """A copy of the fixture in WAL mode whose writer renamed a run without checkpointing it into the db yet."""
    shutil.copy(DB, db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE runs SET name = 'renamed' WHERE name = 'healthy'")
    writer.commit()
    return writer


def test_a_wal_database_being_written_is_read_with_its_pending_changes(tmp_path):
    db = tmp_path / "mlflow.db"
    writer = open_writer_with_pending_rename(db)
    try:
        before = listing(tmp_path)
        assert "mlflow.db-wal" in before
        assert "renamed" in by_name(curvedoc.load(db))
        assert listing(tmp_path) == before
    finally:
        writer.close()


def test_a_wal_file_without_its_shm_file_is_not_read_and_that_is_said(tmp_path):
    writer_dir, copy_dir = tmp_path / "writer", tmp_path / "copy"
    writer_dir.mkdir()
    copy_dir.mkdir()
    writer = open_writer_with_pending_rename(writer_dir / "mlflow.db")
    for name in ("mlflow.db", "mlflow.db-wal"):  # a backup that forgot the -shm file
        shutil.copy(writer_dir / name, copy_dir / name)
    writer.close()
    before = listing(copy_dir)
    runs = curvedoc.load(copy_dir / "mlflow.db")
    assert set(by_name(runs)) == RUN_NAMES
    assert "changes not yet moved into the database were not read" in runs[0].warnings[0]
    assert listing(copy_dir) == before


def test_a_locked_database_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(mlflow_reader, "LOCK_TIMEOUT_SECONDS", 0.05)
    db = tmp_path / "mlflow.db"
    shutil.copy(DB, db)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CurvedocError, match="locked") as error:
            curvedoc.load(db)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert str(db) in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("damage", ["garbage_after_header", "cut_in_half"])
def test_a_corrupt_database_is_one_clear_error(tmp_path, damage):
    db = tmp_path / "mlflow.db"
    data = DB.read_bytes()
    if damage == "garbage_after_header":
        data = data[:16] + os.urandom(4096)
    else:
        data = data[: len(data) // 2]
    db.write_bytes(data)
    with pytest.raises(CurvedocError, match="corrupt SQLite database") as error:
        curvedoc.load(db)
    assert str(error.value).startswith(f"{db}: ")


def test_a_sqlite_file_of_another_program_is_named_as_such():
    with pytest.raises(CurvedocError, match="SQLite database without MLflow's metrics/runs tables"):
        curvedoc.load(BROKEN / "not_mlflow.db")


def test_a_folder_walk_reports_the_foreign_database_and_reads_the_rest():
    runs = curvedoc.load(BROKEN)
    assert len(runs) == 1
    assert runs.problems == [f"{BROKEN / 'not_mlflow.db'}: SQLite database without MLflow's metrics/runs tables"]


def test_a_cut_last_line_and_a_garbage_line_are_warnings_and_the_rest_is_read(file_runs):
    run = curvedoc.load(BROKEN / "mlruns")[0]
    healthy = file_runs["healthy"]
    cut = [warning for warning in run.warnings if "last line cut off" in warning]
    garbage = [warning for warning in run.warnings if "not `timestamp value step`" in warning]
    assert len(cut) == 1 and cut[0].endswith("it was dropped") and "metrics/train/loss" in cut[0]
    assert len(garbage) == 1 and "first at line 6" in garbage[0] and "metrics/train/acc" in garbage[0]
    loss = run.series("train/loss")["value"].to_numpy()
    np.testing.assert_array_equal(loss, healthy.series("train/loss")["value"].to_numpy()[:-1])
    np.testing.assert_array_equal(run.series("train/acc")["value"], healthy.series("train/acc")["value"])


def write_run(root: Path, metrics: dict[str, str], meta: str = "run_name: synthetic\nstart_time: 1000\n") -> Path:
    run_dir = root / "mlruns" / "1" / "abc"
    for key, text in metrics.items():
        path = run_dir / "metrics" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (run_dir / "metrics").mkdir(parents=True, exist_ok=True)
    (run_dir / "meta.yaml").write_text(meta)
    return run_dir


def test_legacy_two_field_lines_and_dataset_lines_are_read(tmp_path):
    run_dir = write_run(tmp_path, {
        "legacy": "1000 0.5\n",
        "with_dataset": "1000 0.5 0 train abc123\n2000 nan 1 train abc123\n3000 -inf 2 train abc123\n",
    })
    run = mlflow_reader.read_run_folder(run_dir)
    assert run.series("legacy")[["step", "value"]].values.tolist() == [[0, 0.5]]
    values = run.series("with_dataset")["value"].to_numpy()
    assert values[0] == 0.5 and np.isnan(values[1]) and values[2] == -math.inf
    np.testing.assert_array_equal(run.series("with_dataset")["wall_time"], [1.0, 2.0, 3.0])
    assert run.name == "synthetic" and run.meta.start_time == 1.0
    assert run.warnings == []


def test_real_metric_files_take_the_bulk_parser(monkeypatch):
    def line_by_line(*args):
        raise AssertionError("the bulk parser should have read this file")

    monkeypatch.setattr(mlflow_reader, "_parse_lines_exactly", line_by_line)
    for run_dir in MLRUNS.glob("*/*/metrics"):
        assert len(mlflow_reader.read_run_folder(run_dir.parent).scalars) > 500


def test_lines_mlflow_itself_would_reject_are_skipped_and_counted(tmp_path):
    run = mlflow_reader.read_run_folder(write_run(tmp_path, {
        "loss": "1000 0.5 0\n2000  1\n3000 None 2\n4000 0.25 3 extra\n5000 0.125 4\n",
    }))
    assert run.series("loss")[["step", "value"]].values.tolist() == [[0, 0.5], [4, 0.125]]
    assert run.warnings == [
        f"{run.path}/metrics/loss: 3 line(s) that are not `timestamp value step` skipped (first at line 2)"
    ]


def test_steps_beyond_int64_or_fractional_are_skipped_not_wrapped_or_truncated(tmp_path):
    run = mlflow_reader.read_run_folder(write_run(tmp_path, {
        "loss": "1000 0.5 0\n2000 0.4 99999999999999999999999\n3000 0.3 2.5\n4000 0.25 3\n",
    }))
    assert run.series("loss")[["step", "value"]].values.tolist() == [[0, 0.5], [3, 0.25]]
    assert run.warnings == [
        f"{run.path}/metrics/loss: 2 line(s) that are not `timestamp value step` skipped (first at line 2)"
    ]


def test_metric_files_with_nothing_readable_make_the_run_an_error(tmp_path):
    run_dir = write_run(tmp_path, {"loss": "", "acc": "not a metric\n"})
    with pytest.raises(CurvedocError, match="no readable metric file") as error:
        mlflow_reader.read_run_folder(run_dir)
    assert str(run_dir / "metrics") in str(error.value)


def test_a_run_that_logged_nothing_yet_is_a_run_with_a_warning(tmp_path):
    run = mlflow_reader.read_run_folder(write_run(tmp_path, {}))
    assert run.scalars.empty and any("no metrics logged" in warning for warning in run.warnings)


def test_a_deleted_file_store_run_is_skipped_with_a_reason(tmp_path):
    run_dir = write_run(tmp_path, {"loss": "1 0.5 0\n"}, meta="run_name: gone\nlifecycle_stage: deleted\n")
    with pytest.raises(CurvedocError, match="run is deleted in MLflow") as error:
        curvedoc.load(tmp_path)
    assert str(run_dir) in str(error.value)


def test_broken_meta_yaml_falls_back_to_the_run_name_tag(tmp_path):
    run_dir = write_run(tmp_path, {"loss": "1 0.5 0\n"}, meta="run_name: [unclosed\n")
    (run_dir / "tags").mkdir()
    (run_dir / "tags" / "mlflow.runName").write_text("from-tag")
    run = mlflow_reader.read_run_folder(run_dir)
    assert run.name == "from-tag"
    assert any("meta.yaml: not valid YAML" in warning for warning in run.warnings)


def test_windows_line_ends_are_read(tmp_path):
    run = mlflow_reader.read_run_folder(write_run(tmp_path, {"loss": "1000 0.5 0\r\n2000 0.25 1\r\n"}))
    np.testing.assert_array_equal(run.series("loss")["value"], [0.5, 0.25])
    assert run.warnings == []


def test_metrics_logged_without_a_step_are_read_in_the_order_they_were_logged(tmp_path):
    """mlflow.log_metric(key, value) without a step stores every epoch at step 0."""
    run_dir = tmp_path / "mlruns" / "1" / "abc"
    (run_dir / "metrics").mkdir(parents=True)
    (run_dir / "meta.yaml").write_text("run_name: stepless\nlifecycle_stage: active\n")
    (run_dir / "metrics" / "train_loss").write_text("1656146891988 0.18 0\n1656146894104 0.0078 0\n"
                                                    "1656146896267 0.0052 0\n")
    (run_dir / "metrics" / "test_acc").write_text("1656146896300 0.91 0\n")
    [run] = curvedoc.load(run_dir)
    assert run.series("train_loss")["step"].tolist() == [0, 1, 2] and run.series("test_acc")["step"].tolist() == [0]
    assert any("train_loss logged without a step" in warning for warning in run.warnings)


def test_an_old_schema_without_step_and_is_nan_columns_is_read(tmp_path):
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as connection:
        connection.executescript("""
            CREATE TABLE runs (run_uuid TEXT, experiment_id INTEGER, lifecycle_stage TEXT, start_time);
            CREATE TABLE metrics (key TEXT, value FLOAT, timestamp BIGINT, run_uuid TEXT);
            CREATE TABLE tags (key TEXT, value TEXT, run_uuid TEXT);
            CREATE TABLE params (key TEXT, value, run_uuid TEXT);
            INSERT INTO runs VALUES ('r1', 0, 'active', 'yesterday');
            INSERT INTO params VALUES ('num_classes', 5, 'r1'), ('empty', NULL, 'r1');
            INSERT INTO tags VALUES ('mlflow.runName', 'old-run', 'r1');
            INSERT INTO metrics VALUES ('loss', 2.0, 1000, 'r1'), ('loss', 1.0, 2000, 'r1');
            INSERT INTO metrics VALUES ('note', 'text', 1000, 'r1');
            INSERT INTO metrics VALUES (CAST(X'6163639F' AS TEXT), 0.5, 1000, 'r1');
        """)
    connection.close()
    [run] = curvedoc.load(db)
    assert run.name == "old-run" and run.meta.start_time is None
    assert run.meta.hparams == {"empty": None, "num_classes": 5} and run.meta.n_classes == 5
    assert run.series("acc\ufffd")["value"].tolist() == [0.5]  # a key that is not UTF-8 is still a curve
    # no steps: the order the points were logged in is their step
    assert run.series("loss")[["step", "value"]].values.tolist() == [[0, 2.0], [1, 1.0]]
    assert any("metric 'note' holds values that are not numbers" in warning for warning in run.warnings)


HEALTHY_LOSS = next(path for path in MLRUNS.glob("*/*/metrics/train/loss")
                    if (path.parents[2] / "params" / "bug").read_text() == "none")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, HEALTHY_LOSS.stat().st_size), offset=st.integers(0, HEALTHY_LOSS.stat().st_size),
       junk=st.binary(max_size=40))
def test_a_cut_or_overwritten_metric_file_gives_warnings_or_our_error(tmp_path_factory, cut, offset, junk):
    data = HEALTHY_LOSS.read_bytes()[:cut]
    data = data[:offset] + junk + data[offset + len(junk):]
    run_dir = write_run(tmp_path_factory.mktemp("run"), {"train/loss": ""})
    (run_dir / "metrics" / "train" / "loss").write_bytes(data)
    try:
        run = mlflow_reader.read_run_folder(run_dir)
    except CurvedocError as error:
        assert "\n" not in str(error)
    else:
        assert run.scalars["step"].dtype == "int64" and run.scalars["value"].dtype == "float64"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offset=st.integers(0, DB.stat().st_size - 1), junk=st.binary(min_size=1, max_size=512))
def test_a_database_with_overwritten_bytes_gives_runs_or_our_error(tmp_path_factory, offset, junk):
    data = DB.read_bytes()
    db = tmp_path_factory.mktemp("db") / "mlflow.db"
    db.write_bytes(data[:offset] + junk + data[offset + len(junk):])
    try:
        runs = mlflow_reader.read_database(db)
    except CurvedocError as error:
        assert "\n" not in str(error)
    else:
        assert all(run.scalars["value"].dtype == "float64" for run in runs)


def test_a_database_whose_runs_are_all_deleted_is_named_not_dropped(tmp_path):
    db = tmp_path / "mlflow.db"
    with sqlite3.connect(db) as connection:
        connection.executescript("""
            CREATE TABLE runs (run_uuid TEXT, name TEXT, lifecycle_stage TEXT, start_time BIGINT);
            CREATE TABLE metrics (key TEXT, value FLOAT, timestamp BIGINT, step BIGINT, run_uuid TEXT);
            INSERT INTO runs VALUES ('r1', 'thrown-away', 'deleted', 0);
            INSERT INTO metrics VALUES ('loss', 2.0, 1000, 0, 'r1');
        """)
    connection.close()
    with pytest.raises(CurvedocError, match=r"mlflow.db: no runs in it \(all 1 deleted in MLflow\)"):
        curvedoc.load(db)
    (tmp_path / "metrics.csv").write_text("step,loss\n0,1.0\n")
    runs = curvedoc.load(tmp_path)
    assert len(runs) == 1 and runs.problems == [f"{db}: no runs in it (all 1 deleted in MLflow)"]


def _keras_autolog_early_stopped(log):
    """What MLflow's Keras autolog logs for 12 epochs stopped early with restore_best_weights=True (best epoch 1):
    each epoch's metrics at its step, stopped_epoch and restored_epoch, then every metric again at step
    stopped_epoch + 1 with the restored epoch's values (mlflow.tensorflow._log_early_stop_callback_metrics)."""
    losses = [0.1258, 0.0334, 0.031, 0.026, 0.022, 0.02, 0.018, 0.016, 0.0145, 0.0134, 0.0128, 0.0123]
    val = [0.09, 0.0201, 0.024, 0.027, 0.03, 0.029, 0.031, 0.033, 0.032, 0.034, 0.035, 0.036]
    for epoch, (loss, val_loss) in enumerate(zip(losses, val, strict=True)):
        log({"loss": loss, "val_loss": val_loss}, epoch)
    log({"stopped_epoch": 11, "restored_epoch": 1}, 0)
    log({"loss": losses[1], "val_loss": val[1]}, 12)


def test_keras_autologs_copy_of_the_restored_epoch_is_no_epoch_that_ran(tmp_path):
    lines: dict[str, str] = {}

    def log(metrics, step):
        for key, value in metrics.items():
            lines[key] = lines.get(key, "") + f"{1000 + step} {value} {step}\n"

    _keras_autolog_early_stopped(log)
    [run] = curvedoc.load(write_run(tmp_path, lines))
    assert run.series("loss")["step"].tolist() == list(range(12)) and run.series("loss")["value"].iloc[-1] == 0.0123
    assert any("restored epoch 1" in warning and "dropped" in warning for warning in run.warnings)


def test_the_restored_epochs_copy_is_dropped_from_the_database_too(tmp_path):
    db = tmp_path / "mlflow.db"
    shutil.copy(DB, db)  # MLflow's own schema, as the fixtures' writer left it
    with sqlite3.connect(db) as connection:
        run_uuid, experiment = connection.execute("SELECT run_uuid, experiment_id FROM runs LIMIT 1").fetchone()
        connection.execute("DELETE FROM runs WHERE run_uuid != ?", (run_uuid,))
        connection.execute("DELETE FROM metrics")
        _keras_autolog_early_stopped(lambda metrics, step: connection.executemany(
            "INSERT INTO metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, ?, 0, ?)",
            [(key, value, 1000 + step, step, run_uuid) for key, value in metrics.items()]))
    connection.close()
    [run] = curvedoc.load(db)
    assert run.series("val_loss")["step"].tolist() == list(range(12))


def test_a_last_point_that_is_no_copy_of_the_restored_epoch_is_kept(tmp_path):
    lines = {"loss": "".join(f"{1000 + step} {0.5 - 0.01 * step} {step}\n" for step in range(13)),
             "stopped_epoch": "1500 11 0\n", "restored_epoch": "1500 1 0\n"}
    [run] = curvedoc.load(write_run(tmp_path, lines))
    assert run.series("loss")["step"].tolist() == list(range(13))
