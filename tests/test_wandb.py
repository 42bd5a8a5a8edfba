import json
import math
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc.errors import CurvedocError
from curvedoc.readers import Source
from curvedoc.readers import wandb as wandb_reader
from curvedoc.roles import Role

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "wandb"
HPARAM_KEYS = {"dataset", "epochs", "batch_size", "lr", "optimizer", "hidden", "seed", "bug", "num_classes"}


def run_folder(case):
    (folder,) = [path for path in (FIXTURES / case / "wandb").iterdir() if not path.is_symlink()]
    return folder


def log_file(case):
    return next(run_folder(case).glob("*.wandb"))


def expected(case):
    return json.loads((FIXTURES / "expected" / f"{case}.json").read_text())


def load_one(path):
    (run,) = curvedoc.load(path)
    return run


def read_log(path):
    (run,) = wandb_reader.read(Source("wandb", path, ((None, path),), explicit=True))
    return run


def assert_points_match(run, logged, complete=True):
    """Every point read is what the training handed to wandb.log at that step (all of them if complete)."""
    assert set(run.tags) == set(logged)
    for tag, points in logged.items():
        series = run.series(tag)
        wanted = dict((step, value) for step, value in points)
        assert set(series["step"]) <= set(wanted)
        if complete:
            assert list(series["step"]) == sorted(wanted)
        got = series["value"].to_numpy()
        want = np.array([wanted[step] for step in series["step"]], dtype=float)
        np.testing.assert_array_equal(got, want)  # NaN equals NaN here; values are bit-exact


# --- a tiny writer of the same framing, for edge cases the real writer produces only rarely -----------------

def varint(number):
    out = bytearray()
    while True:
        out.append(number & 0x7F | (0x80 if number > 0x7F else 0))
        number >>= 7
        if not number:
            return bytes(out)


def message_field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def varint_field(number, value):
    return varint(number << 3) + varint(value)


def history_record(step, metrics):
    items = b"".join(
        message_field(1, message_field(2, key.encode()) + message_field(16, json.dumps(value).encode()))
        for key, value in {"_step": step, **metrics}.items()
    )
    return message_field(2, items)


def framed_log(records):
    out = bytearray(b":W&B" + struct.pack("<HB", 0xBEE1, 0))
    for record in records:
        first = True
        while True:
            left = 32768 - len(out) % 32768
            if left < 7:
                out += bytes(left)
                continue
            piece, record = record[:left - 7], record[left - 7:]
            kind = (1 if not record else 2) if first else (4 if not record else 3)
            out += struct.pack("<IHB", zlib.crc32(piece, zlib.crc32(bytes([kind]))), len(piece), kind) + piece
            first = False
            if not record:
                break
    return bytes(out)


# --- real runs written by wandb ----------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["offline", "synced", "lr_too_high"])
def test_binary_log_holds_exactly_what_training_logged(case):
    run = load_one(FIXTURES / case)
    assert run.format == "wandb" and run.warnings == []
    assert_points_match(run, expected(case))


def test_offline_run_takes_config_and_start_time_from_the_log():
    run = load_one(FIXTURES / "offline")
    assert set(run.meta.hparams) == HPARAM_KEYS  # W&B's own _wandb key is left out
    assert run.meta.hparams["num_classes"] == 10 and run.meta.hparams["dataset"] == "digits"
    assert (run.meta.n_classes, run.meta.n_classes_source) == (10, "config: num_classes")
    first_wall_time = run.series("train/loss")["wall_time"].iloc[0]
    assert 0 < first_wall_time - run.meta.start_time < 60


def test_synced_run_reads_config_yaml_and_metadata():
    run = load_one(FIXTURES / "synced")
    assert set(run.meta.hparams) == HPARAM_KEYS
    assert run.meta.hparams["dataset"] == "wine" and run.meta.n_classes == 3
    assert [Path(path).name for path in run.meta.files] == ["run-cdsynced.wandb", "config.yaml", "wandb-metadata.json"]
    assert run.meta.start_time == pytest.approx(run.series("train/loss")["wall_time"].iloc[0], abs=2)


def test_roles_of_the_logged_tags():
    run = load_one(FIXTURES / "offline")
    assert run.roles == {
        "train/loss": Role.TRAIN_LOSS, "train/acc": Role.TRAIN_ACC, "lr": Role.LR, "grad_norm": Role.GRAD_NORM,
        "val/loss": Role.VAL_LOSS, "val/acc": Role.VAL_ACC,
    }


def test_histograms_and_bookkeeping_are_not_curves():
    run = load_one(FIXTURES / "offline")
    assert not {"weights", "_runtime", "_step", "_timestamp"} & set(run.tags)
    assert run.series("val/loss")["wall_time"].notna().all()


def test_nan_and_inf_that_training_logged_are_kept():
    loss = load_one(FIXTURES / "lr_too_high").series("train/loss")["value"]
    assert loss.isna().any() and np.isinf(loss).any()
    assert math.isfinite(loss.iloc[0])


def test_killed_run_keeps_every_record_wandb_flushed_without_a_warning():
    run = load_one(FIXTURES / "killed")
    assert run.warnings == []
    logged = expected("killed")
    assert_points_match(run, logged, complete=False)
    steps = run.series("train/loss")["step"]
    # at least the first 32 KiB block (about 68 steps) reached the disk
    assert list(steps) == list(range(len(steps))) and 60 < len(steps) < len(logged["train/loss"])


def test_truncated_log_warns_once_and_keeps_complete_records():
    run = load_one(FIXTURES / "truncated")
    (warning,) = run.warnings
    assert "run-cdhealthy.wandb" in warning and "cut off mid-write" in warning
    assert_points_match(run, expected("offline"), complete=False)
    assert 40 < len(run.series("train/loss")) < len(expected("offline")["train/loss"])


def test_discovery_reads_the_run_folder_once_despite_latest_run_symlink():
    runs = curvedoc.load(FIXTURES / "offline")
    assert len(runs) == 1 and runs.problems == []
    assert Path(runs[0].path) == run_folder("offline")
    assert [Path(path).name for path in runs[0].meta.files] == ["run-cdhealthy.wandb"]


def test_every_fixture_is_one_run():
    runs = curvedoc.load(FIXTURES)
    assert runs.problems == []
    names = sorted(Path(run.path).parent.parent.name for run in runs)
    assert names == ["killed", "legacy_2020", "lr_too_high", "offline", "synced", "truncated"]


def test_legacy_2020_folder_reads_history_jsonl_config_and_metadata():
    run = load_one(FIXTURES / "legacy_2020")
    assert run.warnings == []
    assert_points_match(run, expected("legacy_2020"))
    assert set(run.meta.hparams) == HPARAM_KEYS  # wandb_version and _wandb are W&B's, not the user's
    assert run.meta.n_classes == 3
    assert run.meta.start_time == pytest.approx(run.series("train/loss")["wall_time"].iloc[0], abs=2)


def test_a_lone_wandb_file_is_read_with_the_config_it_carries():
    run = load_one(log_file("offline"))
    assert run.path == str(log_file("offline")) and run.meta.hparams["num_classes"] == 10
    assert_points_match(run, expected("offline"))


# --- damage -------------------------------------------------------------------------------------------------

def test_bad_header_is_a_one_line_error(tmp_path):
    path = tmp_path / "run-x.wandb"
    path.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert str(error.value) == f"{path}: not a W&B .wandb log (its header is not ':W&B' with magic 0xBEE1)"


@pytest.mark.parametrize("content, problem", [
    (b"", "empty file"),
    (b":W&B\xe1", "W&B log cut off inside its 7-byte header"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 65536\n", "is a Git LFS pointer"),
])
def test_unreadable_logs_are_one_line_errors(tmp_path, content, problem):
    path = tmp_path / "run-x.wandb"
    path.write_bytes(content)
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert str(error.value).startswith(f"{path}: {problem}") and "\n" not in str(error.value)


def test_bad_checksum_skips_to_the_next_block_and_names_the_offset(tmp_path):
    data = bytearray(log_file("offline").read_bytes())
    data[5000] ^= 0xFF
    path = tmp_path / "run-x.wandb"
    path.write_bytes(bytes(data))
    run = read_log(path)
    (warning,) = run.warnings
    assert str(path) in warning and "checksum mismatch at offset" in warning and "offset 32768" in warning
    assert_points_match(run, expected("offline"), complete=False)
    steps = run.series("train/loss")["step"]
    assert steps.iloc[0] == 0 and steps.iloc[-1] == 128 and len(steps) < 129


def test_zero_padding_after_the_last_record_is_normal(tmp_path):
    data = log_file("offline").read_bytes()
    path = tmp_path / "run-x.wandb"
    path.write_bytes(data + bytes(70000))
    run = read_log(path)
    assert run.warnings == []
    assert_points_match(run, expected("offline"))


def test_record_spanning_several_blocks_is_joined(tmp_path):
    big = history_record(1, {"loss": 0.5, "notes": "x" * 80000})
    path = tmp_path / "run-x.wandb"
    path.write_bytes(framed_log([history_record(0, {"loss": 1.0}), big, history_record(2, {"loss": float("nan")})]))
    run = read_log(path)
    assert run.warnings == [] and run.tags == ["loss"]
    np.testing.assert_array_equal(run.series("loss")["value"], [1.0, 0.5, np.nan])


def test_typed_history_values_keys_and_record_step_are_understood(tmp_path):
    items = (
        message_field(1, message_field(1, b"a") + varint(6 << 3 | 1) + struct.pack("<d", 2.5))  # number (double)
        + message_field(1, message_field(2, b"b") + message_field(2, b"c") + varint_field(5, 5))  # sint64 -3
        + message_field(1, message_field(1, b"ok") + varint_field(4, 1))  # boolean
    )
    history = message_field(2, items + message_field(2, varint_field(1, 7)))  # HistoryStep, no _step item
    config = message_field(5, message_field(1, message_field(1, b"num_classes") + message_field(16, b"4"))
                           + message_field(1, message_field(1, b"_wandb") + message_field(16, b"{}")))
    path = tmp_path / "run-x.wandb"
    path.write_bytes(framed_log([config, history]))
    run = read_log(path)
    assert run.warnings == [] and run.meta.hparams == {"num_classes": 4} and run.meta.n_classes == 4
    assert {tag: run.series(tag)[["step", "value"]].values.tolist() for tag in run.tags} == {
        "a": [[7, 2.5]], "b/c": [[7, -3.0]], "ok": [[7, 1.0]],
    }


def test_log_without_history_is_a_run_without_curves(tmp_path):
    path = tmp_path / "run-x.wandb"
    path.write_bytes(framed_log([]))
    run = read_log(path)
    assert run.tags == [] and "no history rows" in run.warnings[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 70000), flip=st.integers(0, 70000), byte=st.integers(1, 255))
def test_cut_and_corrupted_logs_never_raise_anything_but_curvedoc_error(tmp_path, cut, flip, byte):
    data = bytearray(log_file("lr_too_high").read_bytes())
    if flip < len(data):
        data[flip] ^= byte
    path = tmp_path / "run-x.wandb"
    path.write_bytes(bytes(data[:cut]))
    try:
        runs = wandb_reader.read(Source("wandb", path, ((None, path),), explicit=True))
    except CurvedocError as error:
        assert "\n" not in str(error)
    else:
        assert all("\n" not in warning for run in runs for warning in run.warnings)


def test_unreadable_log_in_a_folder_with_history_jsonl_falls_back_to_it(tmp_path):
    folder = tmp_path / "run-20200612_101010-abc"
    shutil.copytree(run_folder("legacy_2020"), folder)
    (folder / "run-abc.wandb").write_bytes(b"garbage")
    run = load_one(folder)
    assert "not a W&B .wandb log" in run.warnings[0]
    assert_points_match(run, expected("legacy_2020"))


def test_a_run_that_logged_no_metrics_is_read_from_its_printed_output(tmp_path):
    folder = tmp_path / "wandb" / "run-20240101_000000-abc"
    (folder / "files").mkdir(parents=True)
    (folder / "run-abc.wandb").write_bytes(framed_log([]))
    keras = Path(__file__).resolve().parent.parent / "fixtures" / "textlog" / "keras_verbose2" / "train.log"
    shutil.copy(keras, folder / "files" / "output.log")
    run = load_one(tmp_path)
    assert run.format == "wandb" and run.path == str(folder)
    assert run.roles["val_loss"] == Role.VAL_LOSS and run.series("val_loss")["step"].tolist() == [1, 2, 3, 4]
    assert str(folder / "files" / "output.log") in run.meta.files
    assert any("read from the printed output files/output.log" in warning for warning in run.warnings)


@pytest.mark.parametrize("log_bytes, problem", [(b"", "empty file"), (b"garbage", "not a W&B .wandb log")])
def test_a_broken_log_beside_printed_output_is_a_warning_and_the_output_is_read(tmp_path, log_bytes, problem):
    """A run killed as it started leaves its .wandb empty (W&B had flushed nothing) while files/output.log holds
    what training printed: the run is read from that, and the log's problem is said in one line."""
    folder = tmp_path / "run-20240101_000000-abc"
    (folder / "files").mkdir(parents=True)
    (folder / "run-abc.wandb").write_bytes(log_bytes)
    keras = Path(__file__).resolve().parent.parent / "fixtures" / "textlog" / "keras_verbose2" / "train.log"
    shutil.copy(keras, folder / "files" / "output.log")
    run = load_one(folder)
    assert run.series("val_loss")["step"].tolist() == [1, 2, 3, 4]
    assert any(problem in warning for warning in run.warnings)
    (folder / "files" / "output.log").write_text("Using cpu device\n")
    with pytest.raises(CurvedocError, match=problem):
        curvedoc.load(folder)


def test_printed_output_is_not_read_when_the_history_holds_metrics(tmp_path):
    folder = tmp_path / "run-20240101_000000-abc"
    (folder / "files").mkdir(parents=True)
    (folder / "run-abc.wandb").write_bytes(framed_log([history_record(0, {"loss": 1.0})]))
    (folder / "files" / "output.log").write_text("epoch 1 loss 9\nepoch 2 loss 8\nepoch 3 loss 7\n")
    run = load_one(folder)
    assert run.series("loss")[["step", "value"]].values.tolist() == [[0, 1.0]]


def test_printed_output_without_metrics_leaves_a_run_without_curves(tmp_path):
    folder = tmp_path / "run-20240101_000000-abc"
    (folder / "files").mkdir(parents=True)
    (folder / "run-abc.wandb").write_bytes(framed_log([]))
    (folder / "files" / "output.log").write_text("Using cpu device\nwarnings.warn(\n")
    run = load_one(folder)
    assert run.tags == [] and any("no history rows" in warning for warning in run.warnings)
