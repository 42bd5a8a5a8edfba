"""TensorBoard reader: real-writer fixtures, the hand decoder against protobuf, restarts, damaged files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboard.summary.writer.record_writer import RecordWriter
from tensorboard.util import tensor_util
from event_files import EventWriter, write_scalars

import curvedoc
from curvedoc.cli import main
from curvedoc.errors import CurvedocError
from curvedoc.readers.tensorboard import event_file_points
from curvedoc.roles import Role

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tensorboard"
READABLE_FILES = sorted(p for p in FIXTURES.rglob("events.out.tfevents.*") if "broken" not in p.parts)
PYTORCH_TAGS = {"train/loss", "train/acc", "train/grad_norm", "lr", "val/loss", "val/acc"}


def only_run(path: Path):
    runs = curvedoc.load(path)
    assert len(runs) == 1, [run.path for run in runs]
    return runs[0]


def protobuf_points(path: Path) -> list[tuple[str, int, float, float]]:
    """What TensorBoard's own loader and protobuf classes say the scalars of a file are."""
    plugins: dict[str, str] = {}
    points = []
    for event in EventFileLoader(str(path)).Load():
        for value in event.summary.value:
            if value.HasField("metadata"):
                plugins.setdefault(value.tag, value.metadata.plugin_data.plugin_name)
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                number = value.simple_value
            elif kind == "tensor" and plugins.get(value.tag) == "scalars":
                number = float(tensor_util.make_ndarray(value.tensor).item())
            else:
                continue
            points.append((value.tag, event.step, event.wall_time, number))
    return points


def same_floats(left, right) -> bool:
    return np.array_equal(np.asarray(left, np.float64), np.asarray(right, np.float64), equal_nan=True)


@pytest.mark.parametrize("path", READABLE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_hand_decoder_matches_protobuf_on_every_record(path):
    expected = protobuf_points(path)
    found = event_file_points(path)
    assert expected, "fixture without scalars"
    assert list(found["tag"]) == [p[0] for p in expected]
    assert list(found["step"]) == [p[1] for p in expected]
    assert same_floats(found["wall_time"], [p[2] for p in expected])
    assert same_floats(found["value"], [p[3] for p in expected])


def test_pytorch_healthy_run_reads_cleanly_with_hparams():
    run = only_run(FIXTURES / "pytorch" / "healthy")
    assert run.format == "tensorboard"
    assert set(run.tags) == PYTORCH_TAGS
    assert run.warnings == []
    assert run.roles["train/loss"] == Role.TRAIN_LOSS and run.roles["val/loss"] == Role.VAL_LOSS
    assert run.roles["train/acc"] == Role.TRAIN_ACC and run.roles["val/acc"] == Role.VAL_ACC
    assert run.roles["lr"] == Role.LR and run.roles["train/grad_norm"] == Role.GRAD_NORM
    counts = run.point_counts()
    assert counts["train/loss"] == 258 and counts["val/loss"] == 6
    assert run.meta.n_classes == 10 and run.meta.hparams["num_classes"] == 10
    assert run.meta.hparams["optimizer"] == "adam"
    assert run.meta.start_time and run.meta.start_time <= run.scalars["wall_time"].min()


def test_nan_and_inf_losses_are_kept():
    run = only_run(FIXTURES / "pytorch" / "lr_too_high")
    loss = run.series("train/loss")["value"].to_numpy()
    assert len(loss) == 129
    assert np.isfinite(loss[:60]).all()
    assert (~np.isfinite(loss)).sum() > 20


def test_purge_step_restart_drops_the_orphaned_points_and_says_so():
    folder = FIXTURES / "pytorch" / "resumed"
    run = only_run(folder)
    [warning] = run.warnings
    assert "restarted at step 100" in warning and "SessionLog.START" in warning and "100-150" in warning
    loss = run.series("train/loss")
    assert list(loss["step"]) == list(range(172))
    second = event_file_points(sorted(folder.glob("events*"))[1])
    resumed = second[second["tag"] == "train/loss"]
    assert same_floats(loss["value"][100:], resumed["value"])


def test_steps_going_back_without_marker_drop_the_tags_earlier_points():
    run = only_run(FIXTURES / "pytorch" / "resumed_no_marker")
    assert any("steps went back to 100 without a restart marker" in w for w in run.warnings)
    assert list(run.series("train/loss")["step"]) == list(range(172))


def test_several_files_in_one_folder_are_one_run_in_name_order():
    run = only_run(FIXTURES / "pytorch" / "multi_file")
    assert len(run.meta.files) == 2 and run.meta.files == sorted(run.meta.files)
    assert list(run.series("train/loss")["step"]) == list(range(30))
    assert run.warnings == []


def test_images_histograms_text_and_graphs_are_skipped():
    run = only_run(FIXTURES / "pytorch" / "media")
    assert set(run.tags) == PYTORCH_TAGS
    assert run.point_counts()["train/loss"] == 129


def test_tf2_tensor_scalars_float_double_half_and_tensor_content():
    new_style = only_run(FIXTURES / "pytorch" / "new_style")
    assert set(new_style.tags) == PYTORCH_TAGS
    assert (new_style.series("lr")["value"] == 0.003).all()  # DT_DOUBLE: not rounded to float32
    api = only_run(FIXTURES / "tensorboard_api")
    assert set(api.tags) == {"train/loss", "train/acc", "val/loss", "val/acc"}
    acc = api.series("train/acc")["value"]  # DT_HALF
    assert all(value == float(np.float16(value)) for value in acc) and acc.between(0, 1).all()
    assert api.point_counts()["val/loss"] == 5


def test_tensorboardx_run():
    run = only_run(FIXTURES / "tensorboardx" / "healthy")
    assert set(run.tags) == PYTORCH_TAGS and run.warnings == []


def test_keras_train_and_validation_folders_merge_into_one_run():
    run = only_run(FIXTURES / "keras")
    assert set(run.tags) == {"train/epoch_loss", "train/epoch_accuracy", "validation/epoch_loss",
                             "validation/epoch_accuracy"}
    assert run.primary(Role.TRAIN_LOSS) == "train/epoch_loss"
    assert run.primary(Role.VAL_LOSS) == "validation/epoch_loss"
    assert run.primary(Role.VAL_ACC) == "validation/epoch_accuracy"
    assert list(run.series("validation/epoch_loss")["step"]) == list(range(8))


def test_a_tf_estimator_run_reads_its_eval_folder_as_validation(tmp_path):
    # TF1 Estimator: the same tag "loss" in model/ (training) and model/eval/ (each evaluation)
    write_scalars(tmp_path / "model", {"loss": [2.3, 1.1, 0.6], "average_loss": [2.3, 1.1, 0.6]})
    write_scalars(tmp_path / "model" / "eval", {"loss": [2.2, 1.3], "average_loss": [2.2, 1.3], "accuracy": [0.2, 0.6]})
    run = only_run(tmp_path)
    assert run.path == str(tmp_path / "model")
    assert run.primary(Role.TRAIN_LOSS) == "loss" and run.primary(Role.VAL_LOSS) == "eval/loss"
    assert run.roles["eval/average_loss"] == Role.VAL_LOSS and run.roles["eval/accuracy"] == Role.VAL_ACC
    alone = only_run(tmp_path / "model" / "eval")
    assert alone.primary(Role.VAL_LOSS) == "eval/loss" and alone.primary(Role.TRAIN_LOSS) is None


def test_an_ultralytics_run_folder_named_train_keeps_its_own_splits(tmp_path):
    write_scalars(tmp_path / "runs" / "detect" / "train",
                  {"train/box_loss": [1.2, 1.0], "val/box_loss": [1.3, 1.1], "metrics/mAP50-95(B)": [0.1, 0.2]})
    run = only_run(tmp_path)
    assert run.roles == {"train/box_loss": Role.TRAIN_LOSS, "val/box_loss": Role.VAL_LOSS,
                         "metrics/mAP50-95(B)": Role.SCORE}


def test_truncated_file_keeps_every_complete_record():
    folder = FIXTURES / "broken" / "truncated"
    run = only_run(folder)
    [warning] = run.warnings
    assert "cut off" in warning and str(next(folder.iterdir())) in warning
    assert len(run.scalars) == len(protobuf_points(next(folder.iterdir()))) == 59


def test_data_crc_mismatch_skips_one_record_and_reads_on():
    run = only_run(FIXTURES / "broken" / "crc_mismatch")
    [warning] = run.warnings
    assert "fails its CRC check" in warning and "byte 2801" in warning
    assert len(run.scalars) == 119 - 1  # every scalar record of the 120 except the damaged one


def test_length_crc_mismatch_stops_at_the_lost_frame():
    run = only_run(FIXTURES / "broken" / "length_crc_mismatch")
    [warning] = run.warnings
    assert "framing is lost" in warning and "byte 2801" in warning
    assert len(run.scalars) == 59


@pytest.mark.parametrize("name, problem", [
    ("random", "not a TensorBoard event file"),
    ("empty", "empty file"),
])
def test_unreadable_file_is_a_one_line_error_naming_it(name, problem):
    path = next((FIXTURES / "broken" / name).iterdir())
    for target in (path, path.parent):
        with pytest.raises(CurvedocError) as caught:
            curvedoc.load(target)
        assert problem in str(caught.value) and str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_cli_reports_random_bytes_in_one_line(capsys):
    path = FIXTURES / "broken" / "random" / "events.out.tfevents.x"
    assert main([str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("curvedoc: error: ") and "not a TensorBoard event file" in err and "\n" not in err


def test_bad_files_next_to_good_ones_become_problems_not_failures():
    runs = curvedoc.load(FIXTURES / "broken")
    assert len(runs) == 3
    assert any("empty file" in p for p in runs.problems)
    assert any("not a TensorBoard event file" in p for p in runs.problems)


def write_events(path: Path, events: list[event_pb2.Event]) -> Path:
    with open(path, "wb") as handle:
        writer = RecordWriter(handle)
        for event in events:
            writer.write(event.SerializeToString())
    return path


def scalar_value(tag, number, metadata=False):
    value = summary_pb2.Summary.Value(tag=tag, simple_value=number)
    if metadata:
        value.metadata.CopyFrom(scalar_metadata.create_summary_metadata(display_name=tag, description=""))
    return value


def test_tf1_merged_summaries_odd_records_and_unusual_tensors(tmp_path):
    """Several values per event next to an image, negative and huge steps (10-byte varints, the protobuf
    fallback), int and non-scalar tensors, a tensor whose plugin came on an earlier value."""
    image = summary_pb2.Summary.Value(tag="img", image=summary_pb2.Summary.Image(encoded_image_string=b"\x89PNG" * 50))
    int_tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_INT64, tensor_shape={}, int64_val=[7])
    vector = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape={"dim": [{"size": 2}]}, float_val=[1, 2])
    counter = summary_pb2.Summary.Value(tag="count", tensor=int_tensor)
    counter.metadata.CopyFrom(scalar_metadata.create_summary_metadata(display_name="", description=""))
    events = [
        event_pb2.Event(wall_time=1.0, file_version="brain.Event:2"),
        event_pb2.Event(wall_time=2.0, step=1, summary=summary_pb2.Summary(
            value=[scalar_value("a", 1.5, metadata=True), image, scalar_value("b", math.inf), counter])),
        event_pb2.Event(wall_time=3.0, step=-5, summary=summary_pb2.Summary(value=[scalar_value("a", 2.5)])),
        event_pb2.Event(wall_time=4.0, step=2**62, summary=summary_pb2.Summary(value=[scalar_value("b", math.nan)])),
        event_pb2.Event(wall_time=5.0, step=3, summary=summary_pb2.Summary(value=[
            summary_pb2.Summary.Value(tag="count", tensor=int_tensor),
            summary_pb2.Summary.Value(tag="vec", tensor=vector)])),
    ]
    path = write_events(tmp_path / "events.out.tfevents.1.host", events)
    found = event_file_points(path)
    expected = protobuf_points(path)
    assert list(zip(found["tag"], found["step"])) == [(p[0], p[1]) for p in expected]
    assert same_floats(found["value"], [p[3] for p in expected])
    assert ("a", -5) in set(zip(found["tag"], found["step"])) and ("count", 3) in set(zip(found["tag"], found["step"]))
    run = only_run(path)
    assert run.meta.start_time == 1.0


def test_session_start_drops_later_steps_of_every_tag(tmp_path):
    events = [event_pb2.Event(wall_time=1.0, file_version="brain.Event:2")]
    events += [event_pb2.Event(wall_time=2.0, step=s, summary=summary_pb2.Summary(value=[scalar_value(t, s)]))
               for s in range(10) for t in ("x", "y")]
    events.append(event_pb2.Event(step=4, session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))
    events += [event_pb2.Event(wall_time=3.0, step=s, summary=summary_pb2.Summary(value=[scalar_value("x", -s)]))
               for s in range(4, 6)]
    run = only_run(write_events(tmp_path / "events.out.tfevents.2.host", events))
    assert list(run.series("x")["value"]) == [0, 1, 2, 3, -4, -5]
    assert list(run.series("y")["step"]) == [0, 1, 2, 3]
    [warning] = run.warnings
    assert "dropped 12 point(s)" in warning and "steps 4-9" in warning


def test_non_utf8_tag_is_replaced_and_reported(tmp_path):
    event = event_pb2.Event(wall_time=1.0, step=1, summary=summary_pb2.Summary(value=[scalar_value("loss", 1.0)]))
    data = event.SerializeToString().replace(b"loss", b"lo\xffs")
    path = tmp_path / "events.out.tfevents.3.host"
    with open(path, "wb") as handle:
        RecordWriter(handle).write(data)
    run = only_run(path)
    assert run.tags == ["lo\ufffds"]
    assert any("not valid UTF-8" in w for w in run.warnings)


def test_record_larger_than_a_chunk_and_events_across_chunks(tmp_path, monkeypatch):
    from curvedoc.readers import tfrecord

    monkeypatch.setattr(tfrecord, "CHUNK_BYTES", 1000)
    big = summary_pb2.Summary.Value(tag="img", image=summary_pb2.Summary.Image(encoded_image_string=bytes(5000)))
    events = [event_pb2.Event(wall_time=1.0, step=s, summary=summary_pb2.Summary(
        value=[scalar_value("loss", s / 2)] + ([big] if s == 30 else []))) for s in range(100)]
    path = write_events(tmp_path / "events.out.tfevents.4.host", events)
    run = only_run(path)
    assert list(run.series("loss")["value"]) == [s / 2 for s in range(100)]


def test_lightning_tensorboard_logger_run():
    run = only_run(FIXTURES / "lightning" / "version_0")
    assert run.primary(Role.TRAIN_LOSS) == "train_loss_step" and run.primary(Role.VAL_LOSS) == "val_loss"
    assert run.roles["lr-Adam"] == Role.LR and run.roles["train_loss_epoch"] == Role.TRAIN_LOSS
    assert run.meta.n_classes == 3
    assert run.point_counts()["train_loss_step"] == 45


def test_a_step_that_restarts_every_epoch_reads_in_linear_time(tmp_path):
    """The batch index logged as the step (0..9 every epoch): 20,000 steps back, each judged by TensorBoard's rule
    (the tag keeps only the last epoch) without re-scanning the whole curve per step back."""
    import io

    epochs, batches = 20_000, 10

    def framed_epoch(value: float) -> bytes:
        buffer = io.BytesIO()
        writer = RecordWriter(buffer)
        for batch in range(batches):
            summary = summary_pb2.Summary(value=[scalar_value("loss", value + batch)])
            writer.write(event_pb2.Event(step=batch, wall_time=1.0, summary=summary).SerializeToString())
        return buffer.getvalue()

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.out.tfevents.1.host").write_bytes(framed_epoch(-100) * (epochs - 1) + framed_epoch(0))
    run = only_run(tmp_path / "run")
    assert run.series("loss")[["step", "value"]].values.tolist() == [[batch, batch] for batch in range(batches)]
    assert any(f"dropped {(epochs - 1) * batches} earlier point(s) at steps 0-9" in w for w in run.warnings)


def _later_file(folder: Path, scalars: list[tuple[str, float, int]]) -> None:
    """Writes ``scalars`` into a second event file of ``folder`` that sorts after its first."""
    later = folder / "later"
    with EventWriter(later) as writer:
        for tag, value, step in scalars:
            writer.scalar(tag, value, step)
    (first,) = folder.glob("*tfevents*")
    for path in later.iterdir():
        path.rename(folder / (first.name + "z"))
    later.rmdir()


def test_a_last_stretch_too_short_to_be_a_run_does_not_replace_the_run(tmp_path):
    """A finished run, then an aborted restart of 5 steps (desinurch/lottery-ticket-hypothesis) or a final
    evaluate() a new Trainer logs at step 0 (andreevromano/HSE_LSML2): the run is kept, the stragglers not read."""
    with EventWriter(tmp_path) as writer:
        for step in range(1, 1001):
            writer.scalar("train_loss", 2.3 / step ** 0.3, step)
        for step in (250, 500, 750, 1000):
            writer.scalar("eval/loss", 1.0 / step ** 0.1, step)
    _later_file(tmp_path, [("train_loss", 2.3, step) for step in range(1, 6)] + [("eval/loss", 0.5, 0)])
    (run,) = curvedoc.load(tmp_path)
    assert list(run.series("train_loss")["step"]) == list(range(1, 1001))
    assert list(run.series("eval/loss")["step"]) == [250, 500, 750, 1000]
    assert [warning for warning in run.warnings if "not read those" in warning] and not [
        warning for warning in run.warnings if "as TensorBoard does" in warning]


def test_a_restart_long_enough_to_be_a_run_replaces_what_it_overlaps(tmp_path):
    with EventWriter(tmp_path) as writer:
        for step in range(100):
            writer.scalar("loss", 3.0, step)
    _later_file(tmp_path, [("loss", 1.0, step) for step in range(60, 65)])
    (run,) = curvedoc.load(tmp_path)
    assert list(run.series("loss")["step"]) == list(range(65))
    assert any("steps went back to 60 without a restart marker" in warning for warning in run.warnings)


def test_add_scalars_subfolders_are_curves_of_their_run(tmp_path):
    """SummaryWriter.add_scalars("Loss", {"train": …, "val": …}) writes runs/Loss_train and runs/Loss_val, each
    under the tag Loss, from the process that wrote the run's own file: one run, its curves named by folder. A
    subfolder another process wrote is a run of its own."""
    runs = tmp_path / "runs"
    with EventWriter(runs) as writer:
        for step in range(5):
            writer.scalar("LR", 0.01, step)
    for key, level in (("train", 1.0), ("val", 1.2)):
        with EventWriter(runs / f"Loss_{key}") as writer:
            for step in range(5):
                writer.scalar("Loss", level / (step + 1), step)
    (run,) = curvedoc.load(runs)
    assert run.roles["Loss_train/Loss"] == Role.TRAIN_LOSS and run.roles["Loss_val/Loss"] == Role.VAL_LOSS
    assert run.series("Loss_val/Loss")["value"].tolist() == pytest.approx([1.2 / (s + 1) for s in range(5)])
    other = runs / "seed_2"
    with EventWriter(other) as writer:
        writer.scalar("Loss", 1.0, 0)
    (event_file,) = other.glob("events.out.tfevents.*")
    fields = event_file.name.split(".")
    fields[-2] = str(int(fields[-2]) + 1)  # written by another process
    event_file.rename(other / ".".join(fields))
    assert sorted(Path(run.path).name for run in curvedoc.load(runs)) == ["runs", "seed_2"]
