"""Training histories saved with pickle (np.save of Keras's history.history, pickle.dump of it or of one metric's
list), read by an unpickler that builds only containers, numbers and NumPy values: anything else a pickle names is
refused before it is built."""

from __future__ import annotations

import collections
import pickle
from pathlib import Path

import numpy as np
import pytest
from damage import assert_reads_or_refuses_in_one_line, damaged
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.readers import history

EPOCHS = 12
HISTORY = {"loss": list(np.linspace(2.0, 0.4, EPOCHS)), "val_loss": list(np.linspace(2.1, 0.9, EPOCHS)),
           "accuracy": [np.float32(value) for value in np.linspace(0.2, 0.9, EPOCHS)]}


class Payload:
    """What a hostile pickle would carry: a call made while it is unpickled."""

    called = False

    def __reduce__(self):
        return (Payload.mark, ())

    @staticmethod
    def mark():
        Payload.called = True


def only_run(path: Path):
    runs = curvedoc.load(path)
    assert runs.problems == [] and len(runs) == 1
    return runs[0]


def test_a_numpy_saved_keras_history_is_read(tmp_path):
    path = tmp_path / "history.npy"
    np.save(path, HISTORY, allow_pickle=True)
    run = only_run(path)
    assert run.format == "pickled-history"
    assert run.roles["loss"] is Role.TRAIN_LOSS and run.roles["val_loss"] is Role.VAL_LOSS
    assert np.allclose(run.series("val_loss")["value"], HISTORY["val_loss"])
    assert run.series("loss")["step"].tolist() == list(range(1, EPOCHS + 1))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_pickled_history_is_read_at_every_protocol(tmp_path, protocol):
    """pickle.dump(history.history, open("trainHistoryDict", "wb")): no suffix, any protocol (0 was Python 2's
    default), values as floats, NumPy scalars or arrays, in a dict or an OrderedDict."""
    document = collections.OrderedDict(loss=np.array(HISTORY["loss"]), val_loss=HISTORY["val_loss"],
                                       accuracy=HISTORY["accuracy"])
    path = tmp_path / "trainHistoryDict"
    path.write_bytes(pickle.dumps(document, protocol=protocol))
    run = only_run(path)
    assert set(run.tags) == {"loss", "val_loss", "accuracy"}
    assert np.allclose(run.series("accuracy")["value"], np.array(HISTORY["accuracy"], dtype=np.float32))


def test_one_metric_pickled_under_its_name_is_that_curve(tmp_path):
    """pickle.dump(history.history["val_loss"], open("val_loss.txt", "wb")): a list named by its file."""
    path = tmp_path / "val_loss.txt"
    path.write_bytes(pickle.dumps([float(value) for value in HISTORY["val_loss"]]))
    run = only_run(path)
    assert run.roles == {"val_loss": Role.VAL_LOSS} and len(run.series("val_loss")) == EPOCHS


def test_a_pickle_naming_anything_else_is_refused_before_it_runs(tmp_path):
    """A pickled Keras History object, a script's class or a call: refused in one line, never built."""
    path = tmp_path / "history.pkl"
    path.write_bytes(pickle.dumps({"loss": HISTORY["loss"], "extra": Payload()}))
    with pytest.raises(CurvedocError, match="names .*Payload.mark, which curvedoc does not load"):
        curvedoc.load(path)
    np.save(tmp_path / "hostile.npy", np.array([Payload()], dtype=object), allow_pickle=True)
    with pytest.raises(CurvedocError, match="which curvedoc does not load"):
        curvedoc.load(tmp_path / "hostile.npy")
    assert not Payload.called


def test_a_walk_reads_pickled_histories_and_leaves_checkpoints_and_other_pickles(tmp_path):
    run_folder = tmp_path / "exp1"
    run_folder.mkdir()
    np.save(run_folder / "history.npy", HISTORY, allow_pickle=True)
    (run_folder / "model.pth").write_bytes(pickle.dumps({"loss": HISTORY["loss"]}))  # a checkpoint: never opened
    (run_folder / "encoder.pkl").write_bytes(pickle.dumps(collections.Counter(cat=3)))  # names a class: passed over
    (run_folder / "config.pkl").write_bytes(pickle.dumps({"lr": 0.001, "epochs": 12}))  # no history in it
    runs = curvedoc.load(tmp_path)
    assert [Path(run.path).name for run in runs] == ["history.npy"] and runs.problems == []


def test_a_pickle_without_a_history_or_a_checkpoint_is_refused_when_named(tmp_path):
    path = tmp_path / "config.pkl"
    path.write_bytes(pickle.dumps({"lr": 0.001, "epochs": 12}))
    with pytest.raises(CurvedocError, match="a pickle that holds no training history"):
        curvedoc.load(path)
    checkpoint = tmp_path / "model.pt"
    checkpoint.write_bytes(pickle.dumps({"loss": HISTORY["loss"]}))
    with pytest.raises(CurvedocError, match="a model checkpoint, not a training log"):
        curvedoc.load(checkpoint)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_pickle_reads_or_is_refused_in_one_line(tmp_path, data):
    path = tmp_path / "history.pkl"
    path.write_bytes(damaged(data, pickle.dumps(HISTORY, protocol=4)))
    assert_reads_or_refuses_in_one_line(history, path)
