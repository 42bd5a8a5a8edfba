"""A TensorBoard run read again and again while it is written (`curvedoc watch`): each read goes on from the end
of the last complete record, and its result is always the one a fresh read of the files as they are gives."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest

from curvedoc.readers import discover, tensorboard
from curvedoc.readers.tfrecord import FrameWalk
from event_files import EventWriter
from tensorboard.compat.proto import event_pb2


def fresh(folder):
    return tensorboard.read(discover(folder).sources[0])[0]


def followed(follower, folder):
    return follower.read(discover(folder).sources[0])[0]


def curve(run, tag):
    series = run.series(tag)
    return pd.Series(series["value"].to_numpy(), index=series["step"].to_numpy())


def same_run(a, b):
    pd.testing.assert_frame_equal(a.scalars.reset_index(drop=True), b.scalars.reset_index(drop=True))
    assert a.warnings == b.warnings and a.meta.files == b.meta.files


@pytest.fixture
def starts(monkeypatch):
    """The byte each walk of an event file starts at."""
    seen = []
    real_iter = FrameWalk.__iter__

    def recording(walk):
        seen.append(walk.start)
        return real_iter(walk)

    monkeypatch.setattr(FrameWalk, "__iter__", recording)
    return seen


def test_each_read_goes_on_from_the_last_complete_record(tmp_path, starts):
    follower = tensorboard.Follower(tmp_path)
    with EventWriter(tmp_path) as writer:
        for look in range(4):
            for step in range(look * 50, look * 50 + 50):
                writer.scalar("train/loss", 1.0 / (step + 1), step)
            writer.flush()
            same_run(followed(follower, tmp_path), fresh(tmp_path))
    event_file = next(tmp_path.glob("*tfevents*"))
    followed_starts = starts[0::2]  # every other walk is the fresh read's, from 0
    assert followed_starts[0] == 0 and followed_starts == sorted(followed_starts)
    assert followed_starts[-1] > 0.7 * os.path.getsize(event_file)
    assert len(curve(followed(follower, tmp_path), "train/loss")) == 200


def test_a_record_half_written_is_read_once_it_is_whole(tmp_path):
    with EventWriter(tmp_path) as writer:
        for step in range(10):
            writer.scalar("loss", 2.0 - step / 10, step)
    event_file = next(tmp_path.glob("*tfevents*"))
    whole = event_file.read_bytes()
    record = event_pb2.Event(step=10, wall_time=1.7e9 + 10)
    record.summary.value.add(tag="loss", simple_value=0.5)
    with EventWriter(tmp_path / "other") as writer:  # the same record, framed by the real writer
        writer._writer.add_event(record)
    framed = next((tmp_path / "other").glob("*tfevents*")).read_bytes()
    last = framed[-(len(record.SerializeToString()) + 16):]
    shutil.rmtree(tmp_path / "other")

    follower = tensorboard.Follower(tmp_path)
    event_file.write_bytes(whole + last[:7])
    run = followed(follower, tmp_path)
    assert len(curve(run, "loss")) == 10 and any("last record cut off" in w for w in run.warnings)
    event_file.write_bytes(whole + last)
    run = followed(follower, tmp_path)
    assert curve(run, "loss").index.max() == 10 and not any("cut off" in w for w in run.warnings)
    same_run(run, fresh(tmp_path))


def test_records_that_are_no_event_are_reported_once_however_many_reads_found_them(tmp_path):
    from tensorboard.summary.writer.record_writer import RecordWriter

    def append_garbage(path):
        with open(path, "ab") as handle:
            RecordWriter(handle).write(b"\xff\xff no Event proto")  # framed with valid CRCs

    with EventWriter(tmp_path) as writer:
        for step in range(5):
            writer.scalar("loss", 2.0 - step / 10, step)
    event_file = next(tmp_path.glob("*tfevents*"))
    append_garbage(event_file)
    follower = tensorboard.Follower(tmp_path)
    followed(follower, tmp_path)
    append_garbage(event_file)
    run = followed(follower, tmp_path)
    assert [w for w in run.warnings if "not valid Event protos" in w] == [
        f"{event_file}: 2 record(s) are not valid Event protos; skipped them"]
    same_run(run, fresh(tmp_path))


def test_a_file_cut_shorter_or_replaced_is_read_afresh(tmp_path):
    with EventWriter(tmp_path) as writer:
        for step in range(30):
            writer.scalar("loss", 1.0 + step, step)
    event_file = next(tmp_path.glob("*tfevents*"))
    follower = tensorboard.Follower(tmp_path)
    assert len(curve(followed(follower, tmp_path), "loss")) == 30
    event_file.write_bytes(event_file.read_bytes()[:200])
    same_run(followed(follower, tmp_path), fresh(tmp_path))
    event_file.unlink()
    with EventWriter(tmp_path) as writer:
        for step in range(5):
            writer.scalar("accuracy", 0.1 * step, step)
    run = followed(follower, tmp_path)
    same_run(run, fresh(tmp_path))
    assert set(run.tags) == {"accuracy"}


def test_a_resumed_run_in_a_new_file_drops_what_the_restart_replaces(tmp_path):
    follower = tensorboard.Follower(tmp_path)
    with EventWriter(tmp_path) as writer:
        for step in range(100):
            writer.scalar("loss", 3.0, step)
    followed(follower, tmp_path)
    second = tmp_path / "later"
    with EventWriter(second) as writer:
        writer._writer.add_event(event_pb2.Event(step=60, session_log=event_pb2.SessionLog(status=1)))
        for step in range(60, 120):
            writer.scalar("loss", 1.0, step)
    (first,) = tmp_path.glob("*tfevents*")
    for path in second.iterdir():
        # named to sort after the first file, as a later timestamp does (the writers' own names may not: within
        # one second, a uid of 10 sorts before a uid of 9)
        path.rename(tmp_path / (first.name + "z"))
    run = followed(follower, tmp_path)
    same_run(run, fresh(tmp_path))
    loss = curve(run, "loss")
    assert loss.index.max() == 119 and np.allclose(loss.loc[60:], 1.0)
    assert any("restarted at step 60" in w for w in run.warnings)


def test_a_file_that_has_no_record_yet_is_waited_for(tmp_path):
    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"")
    follower = tensorboard.Follower(tmp_path)
    source = discover(tmp_path).sources[0]
    with pytest.raises(Exception, match="empty file"):
        follower.read(source)
    with EventWriter(tmp_path) as writer:
        writer.scalar("loss", 1.0, 0)
    (tmp_path / "events.out.tfevents.1.host").unlink()
    assert len(curve(followed(follower, tmp_path), "loss")) == 1
