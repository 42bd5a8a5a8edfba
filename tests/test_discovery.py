import os

import pytest

import curvedoc
import curvedoc.readers as readers
from curvedoc.errors import CurvedocError
from curvedoc.readers import discover
from curvedoc.roles import Role

EVENT = "events.out.tfevents.1700000000.host.1.0"


def touch(path, content=b"x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def families(found):
    return sorted((source.family, os.path.relpath(source.path)) for source in found.sources)


def test_missing_path_is_a_one_line_error(tmp_path):
    with pytest.raises(CurvedocError) as error:
        discover(tmp_path / "nope")
    assert str(error.value) == f"{tmp_path / 'nope'}: no such file or directory"


def test_folder_without_logs_says_what_was_looked_for(tmp_path):
    touch(tmp_path / "notes.md", b"# hello")
    touch(tmp_path / "config.json", b'{"a": 1}')
    with pytest.raises(CurvedocError) as error:
        discover(tmp_path)
    message = str(error.value)
    assert "no training logs found" in message and "tfevents" in message and "\n" not in message


def test_keras_train_and_validation_subfolders_are_one_run(tmp_path):
    touch(tmp_path / "fit" / "train" / EVENT)
    touch(tmp_path / "fit" / "validation" / EVENT)
    (source,) = discover(tmp_path).sources
    assert source.family == "tensorboard" and source.path == tmp_path / "fit"
    assert [split for split, _ in source.files] == ["train", "validation"]


def test_a_tf_estimator_eval_folder_is_the_validation_split_of_its_training_folder(tmp_path):
    touch(tmp_path / "model" / EVENT)
    touch(tmp_path / "model" / "eval" / EVENT)
    touch(tmp_path / "model" / "eval_holdout" / EVENT)
    (source,) = discover(tmp_path).sources
    assert source.path == tmp_path / "model"
    assert sorted(split or "" for split, _ in source.files) == ["", "eval", "eval_holdout"]


def test_a_split_folder_named_on_its_own_keeps_its_split(tmp_path):
    touch(tmp_path / "fit" / "train" / EVENT)
    touch(tmp_path / "fit" / "validation" / EVENT)
    touch(tmp_path / "model" / "eval" / EVENT)
    for folder, split in [("fit/validation", "validation"), ("model/eval", "eval"), ("fit/train", "train")]:
        (source,) = discover(tmp_path / folder).sources
        assert source.path == tmp_path / folder and [s for s, _ in source.files] == [split]


def test_a_train_folder_alone_is_a_run_unless_keras_wrote_it(tmp_path):
    # Ultralytics names a whole run train/ (its tags say train/, val/, metrics/); Keras without validation data
    # writes train/ alone, with TF2's ".v2" event files
    touch(tmp_path / "runs" / "detect" / "train" / EVENT)
    touch(tmp_path / "logs" / "fit" / "train" / f"{EVENT}.v2")
    found = sorted((os.path.relpath(s.path, tmp_path), [split for split, _ in s.files]) for s in discover(tmp_path).sources)
    assert found == [("logs/fit", ["train"]), ("runs/detect/train", [None])]


def test_several_event_files_in_one_folder_are_one_run_in_name_order(tmp_path):
    touch(tmp_path / "run" / "events.out.tfevents.1700000200.host.1.0")
    touch(tmp_path / "run" / "events.out.tfevents.1700000100.host.1.0")
    (source,) = discover(tmp_path).sources
    assert [path.name for _, path in source.files] == [
        "events.out.tfevents.1700000100.host.1.0", "events.out.tfevents.1700000200.host.1.0",
    ]


def test_a_folder_mixing_formats_yields_one_source_per_format(tmp_path):
    touch(tmp_path / EVENT)
    touch(tmp_path / "log.csv", b"step,loss\n0,1.0\n")
    touch(tmp_path / "trainer_state.json", b'{"log_history": []}')
    touch(tmp_path / "log.jsonl", b'{"step": 0}\n{"step": 1}\n')
    found = discover(tmp_path)
    assert sorted(source.family for source in found.sources) == ["csv", "hf", "jsonl", "tensorboard"]


def test_json_histories_are_found_by_content_and_other_json_is_not(tmp_path):
    touch(tmp_path / "results" / "training_history.json",
          b'{"train_losses": [3.1, 2.5, 2.2], "val_losses": [3.0, 2.7, 2.6]}')
    touch(tmp_path / "keras.json", b'{\n  "history": {\n    "loss": [\n      0.9,\n      0.5,\n      0.4\n    ]\n  }\n}')
    touch(tmp_path / "config.json", b'{"lr": 0.001, "epochs": 10, "model": {"depth": 18}}')
    touch(tmp_path / "per_class.json", b'{"val_acc": [[0.1, 0.9], [0.2, 0.8], [0.3, 0.7]]}')
    touch(tmp_path / "labels.json", b'{"classes": ["cat", "dog", "bird"]}')
    # past the peek only its first bytes are seen: a vocabulary's are no metric list
    touch(tmp_path / "vocab.json", b"{" + b", ".join(b'"w%d": %d' % (i, i) for i in range(1000)) + b"}")
    found = discover(tmp_path)
    assert sorted((s.family, s.path.relative_to(tmp_path).as_posix()) for s in found.sources) == [
        ("history", "keras.json"), ("history", "results/training_history.json"),
    ]
    assert not found.problems


def test_tensorboard_embedding_projector_files_are_no_runs(tmp_path):
    touch(tmp_path / "run" / EVENT)
    touch(tmp_path / "run" / "projector_config.pbtxt", b'embeddings { tensor_name: "line" }\n')
    touch(tmp_path / "run" / "01968" / "line" / "tensors.tsv", b"0.1\t0.2\n0.3\t0.4\n0.5\t0.6\n")
    touch(tmp_path / "run" / "01968" / "line" / "metadata.tsv", b"A\nB\nC\n")
    found = discover(tmp_path)
    assert [source.family for source in found.sources] == ["tensorboard"] and not found.problems


def test_symlink_loops_are_not_followed_forever(tmp_path):
    touch(tmp_path / "a" / "metrics.csv", b"step,loss\n0,1\n")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    found = discover(tmp_path)
    assert len(found.sources) == 1
    assert any("loop" in problem for problem in found.problems)


def test_a_symlink_pointing_at_itself_is_a_one_line_error(tmp_path):
    os.symlink(tmp_path / "self", tmp_path / "self")
    with pytest.raises(CurvedocError) as error:
        discover(tmp_path / "self")
    assert "symbolic links" in str(error.value)


def test_editor_copies_and_hidden_folders_are_skipped(tmp_path):
    touch(tmp_path / "metrics.csv", b"step,loss\n0,1\n")
    touch(tmp_path / ".ipynb_checkpoints" / "metrics-checkpoint.csv", b"step,loss\n0,1\n")
    touch(tmp_path / ".git" / "x.csv", b"step,loss\n0,1\n")
    assert len(discover(tmp_path).sources) == 1


def test_git_lfs_pointer_is_named_not_read(tmp_path):
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n"
    touch(tmp_path / "metrics.csv", pointer)
    touch(tmp_path / "other.csv", b"step,loss\n0,1\n")
    found = discover(tmp_path)
    assert len(found.sources) == 1
    (problem,) = found.problems
    assert "metrics.csv" in problem and "Git LFS pointer" in problem
    with pytest.raises(CurvedocError, match="Git LFS pointer"):
        discover(tmp_path / "metrics.csv")
    # nor are a model's weights kept in LFS beside the log, or a table of the classes (read for the class count)
    touch(tmp_path / "labels.csv", b"ClassId,Name\n0,Speed limit (20km/h)\n1,Speed limit (30km/h)\n")
    touch(tmp_path / "pytorch_model.bin", pointer)
    touch(tmp_path / "model.safetensors", pointer)
    assert len(discover(tmp_path).problems) == 1
    assert [problem.split(":")[0] for problem in curvedoc.load(tmp_path).problems] == [str(tmp_path / "metrics.csv")]


def test_mlflow_run_folders_are_runs_and_their_metric_files_are_not_read_alone(tmp_path):
    run = tmp_path / "mlruns" / "0" / "abc123"
    touch(tmp_path / "mlruns" / "0" / "meta.yaml", b"name: Default\n")
    touch(run / "meta.yaml", b"run_id: abc123\n")
    touch(run / "metrics" / "train" / "loss.csv", b"1 2 3\n")
    found = discover(tmp_path)
    assert [(s.family, s.path) for s in found.sources] == [("mlflow", run)]


def test_wandb_run_folder_is_read_once_even_through_latest_run(tmp_path):
    run = tmp_path / "wandb" / "run-20240101_000000-abc"
    touch(run / "run-abc.wandb", b":W&B")
    touch(run / "files" / "wandb-summary.json", b"{}")
    touch(run / "files" / "output.csv", b"a,b\n1,2\n")
    os.symlink(run, tmp_path / "wandb" / "latest-run")
    found = discover(tmp_path)
    assert [(s.family, s.path) for s in found.sources] == [("wandb", run)]


def test_unreadable_file_is_named_with_the_problem(tmp_path, monkeypatch):
    touch(tmp_path / "metrics.csv", b"step,loss\n0,1\n")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(readers, "open", denied, raising=False)
    with pytest.raises(CurvedocError) as error:
        discover(tmp_path / "metrics.csv")
    assert str(error.value) == f"{tmp_path / 'metrics.csv'}: permission denied"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_folder_is_reported_and_the_rest_still_found(tmp_path):
    touch(tmp_path / "ok" / "metrics.csv", b"step,loss\n0,1\n")
    locked = tmp_path / "locked"
    touch(locked / "metrics.csv", b"step,loss\n0,1\n")
    locked.chmod(0)
    try:
        found = discover(tmp_path)
    finally:
        locked.chmod(0o755)
    assert len(found.sources) == 1 and "permission denied" in found.problems[0]


def test_a_named_file_that_is_no_log_is_an_error(tmp_path):
    with pytest.raises(CurvedocError, match="not a training log"):
        discover(touch(tmp_path / "model.pt", b"\x80\x02"))
    with pytest.raises(CurvedocError, match="empty file"):
        discover(touch(tmp_path / "empty.bin", b""))
    with pytest.raises(CurvedocError, match="neither a Hugging Face"):
        discover(touch(tmp_path / "config.json", b'{"hidden": 4}'))


def test_printed_lines_saved_under_a_tables_name_are_captured_output(tmp_path):
    # LaneSeg's print(f"Epoch:{epoch}, mask loss is {loss:.4f}") redirected to train.csv: no header, no table
    printed = touch(tmp_path / "printed" / "train.csv", "".join(
        f"Epoch:{epoch}, mask loss is {0.14 - epoch / 100:.4f} \n" for epoch in range(6)).encode())
    assert [source.family for source in discover(printed).sources] == ["text"]
    assert curvedoc.load(printed)[0].point_counts() == {"mask_loss": 6}
    # a header's names may hold digits, never a number standing on its own
    table = touch(tmp_path / "table" / "metrics.csv", b"epoch,top1_acc,top5_acc\n0,0.5,0.8\n1,0.6,0.9\n")
    assert [source.family for source in discover(table).sources] == ["csv"]


def test_a_named_text_file_is_read_for_what_it_holds_whatever_its_suffix(tmp_path):
    log = touch(tmp_path / "results.rb", b"Epoch 1/2\n5s - loss: 0.9 - val_loss: 1.0\nEpoch 2/2\n5s - loss: 0.5\n")
    table = touch(tmp_path / "history", b"epoch,loss\n0,1.2\n1,1.0\n")
    assert [source.family for source in discover(log).sources] == ["text"]
    assert [source.family for source in discover(table).sources] == ["csv"]
    # a folder's walk takes only the names logs have, and a table with no suffix whose header names its epoch and
    # a measurement (Keras' CSVLogger writes where it is told)
    assert [source.path.name for source in discover(tmp_path).sources] == ["history"]
    with pytest.raises(CurvedocError, match="no training log in it"):
        curvedoc.load(touch(tmp_path / "notes", "Les résultats sont bons\n".encode()))
    with pytest.raises(CurvedocError, match="a .yaml file .*not a training log"):
        discover(touch(tmp_path / "args.yaml", b"lr0: 0.01\niou: 0.7\nwarmup_bias_lr: 0.1\n"))
    # console output pasted into Markdown, named on the command line, is read; notes are not a log
    pasted = touch(tmp_path / "log_cifar10.md", b"# run 3\n```\n" + b"".join(
        f"Epoch {epoch} loss {2 / epoch:.3f} | Acc {40 + epoch}%\n".encode() for epoch in range(1, 6)) + b"```\n")
    assert curvedoc.load(pasted)[0].point_counts() == {"loss": 5, "Acc": 5}
    with pytest.raises(CurvedocError, match="no training log in it"):
        curvedoc.load(touch(tmp_path / "README.md", b"# Results\n\nThe model reaches 91% on the test set.\n"))


def test_keras_csvlogger_training_log_is_found_by_content(tmp_path):
    touch(tmp_path / "training.log", b"epoch,accuracy,loss\n0,0.5,1.2\n1,0.6,1.0\n")
    touch(tmp_path / "output.log", b"Epoch 1/10 starting\nloss went down\n")
    assert sorted((s.family, s.path.name) for s in discover(tmp_path).sources) == [
        ("csv", "training.log"), ("text", "output.log"),
    ]
    # the text file is read as captured output, holds no curve, and is passed over without a word
    runs = curvedoc.load(tmp_path)
    assert [run.format for run in runs] == ["keras-csv"] and runs.problems == []


def test_hugging_face_checkpoints_are_one_run(tmp_path):
    state = b'{"log_history": []}'
    for folder in ("out/checkpoint-500", "out/checkpoint-1000", "crashed/checkpoint-20", "crashed/checkpoint-100"):
        touch(tmp_path / folder / "trainer_state.json", state)
    touch(tmp_path / "out" / "trainer_state.json", state)
    paths = [source.path.relative_to(tmp_path).as_posix() for source in discover(tmp_path).sources]
    assert paths == ["crashed/checkpoint-100/trainer_state.json", "out/trainer_state.json"]


def test_the_baselines_loggers_text_copy_beside_its_table_is_no_second_run(tmp_path):
    """Baselines' logger (and SB3's, asked for "log" and "csv") prints each row of progress.csv to log.txt too."""
    table = "\n".join(["-" * 30, "| eprewmean          | {r} |", "| misc/total_timesteps | {t} |", "-" * 30])
    touch(tmp_path / "ppo" / "progress.csv",
          b"eprewmean,misc/total_timesteps\n" + b"".join(b"%d,%d\n" % (10 * i, 2048 * i) for i in range(1, 6)))
    touch(tmp_path / "ppo" / "log.txt",
          ("Logging to ppo\n" + "\n".join(table.format(r=10 * i, t=2048 * i) for i in range(1, 6))).encode())
    touch(tmp_path / "other" / "log.txt", b"epoch 1 loss 0.9\nepoch 2 loss 0.8\nepoch 3 loss 0.7\n")
    assert sorted((source.family, source.path.relative_to(tmp_path).as_posix())
                  for source in discover(tmp_path).sources) == [("csv", "ppo/progress.csv"), ("text", "other/log.txt")]


def test_add_hparams_subfolder_belongs_to_its_run(tmp_path):
    touch(tmp_path / "run" / EVENT)
    touch(tmp_path / "run" / "1700000123.4567" / EVENT)
    (source,) = discover(tmp_path).sources
    assert source.path == tmp_path / "run" and len(source.files) == 2


def test_a_byte_order_mark_does_not_hide_a_log_from_content_detection(tmp_path):
    bom = b"\xef\xbb\xbf"
    touch(tmp_path / "training.log", bom + b"epoch,accuracy,loss\r\n0,0.5,1.2\r\n1,0.6,1.0\r\n")
    touch(tmp_path / "metrics.json", bom + b'{"iteration": 0, "loss": 1}\n{"iteration": 1, "loss": 2}\n')
    assert sorted((s.family, s.path.name) for s in discover(tmp_path).sources) == [
        ("csv", "training.log"), ("jsonl", "metrics.json"),
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_passed_over_not_read_forever(tmp_path):
    os.mkfifo(tmp_path / "live.csv")
    touch(tmp_path / "log.csv", b"step,loss\n0,1\n")
    assert [s.path.name for s in discover(tmp_path).sources] == ["log.csv"]
    with pytest.raises(CurvedocError, match="live.csv: not a regular file"):
        discover(tmp_path / "live.csv")



def files_of(source):
    return [(split, path.name) for split, path in source.files]


def test_sibling_tables_named_by_their_split_are_one_run_read_train_first(tmp_path):
    touch(tmp_path / "valid_metrics.csv", b"epoch,loss\n1,0.9\n")
    touch(tmp_path / "train_metrics.csv", b"epoch,loss\n1,1.0\n")
    touch(tmp_path / "TEST_metrics.csv", b"epoch,loss\n1,0.95\n")
    touch(tmp_path / "train_metrics_v2.csv", b"epoch,loss\n1,1.0\n")  # no sibling named as it is
    run, alone = discover(tmp_path).sources
    assert run.family == "csv" and run.path == tmp_path / "train_metrics.csv" and not run.explicit
    assert files_of(run) == [("train", "train_metrics.csv"), ("valid", "valid_metrics.csv"),
                             ("TEST", "TEST_metrics.csv")]
    assert files_of(alone) == [(None, "train_metrics_v2.csv")]


def test_a_split_file_named_on_its_own_brings_its_siblings(tmp_path):
    touch(tmp_path / "history_train.tsv", b"epoch\tloss\n1\t1.0\n")
    touch(tmp_path / "history_val.tsv", b"epoch\tloss\n1\t1.1\n")
    touch(tmp_path / "history_test.csv", b"epoch,loss\n1,1.1\n")  # another suffix: another writer's file
    (source,) = discover(tmp_path / "history_val.tsv").sources
    assert source.explicit and source.path == tmp_path / "history_train.tsv"
    assert files_of(source) == [("train", "history_train.tsv"), ("val", "history_val.tsv")]
    (source,) = discover(tmp_path / "history_test.csv").sources
    assert files_of(source) == [(None, "history_test.csv")]


def test_split_tables_saved_as_text_whose_columns_name_their_own_split_are_one_run(tmp_path):
    """A public transformer's logs/: train_loss.txt holding "Epoch,Train Loss" rows beside val_loss.txt's "Epoch,Val
    Loss": one run's splits, each column naming its file's split. A table whose columns name another split holds
    the run's splits already."""
    touch(tmp_path / "train_loss.txt", b"Epoch,Train Loss\n" + b"".join(b"%d,%.3f\n" % (e, 1 / e) for e in range(1, 5)))
    touch(tmp_path / "val_loss.txt", b"Epoch,Val Loss\n" + b"".join(b"%d,%.3f\n" % (e, 1.2 / e) for e in range(1, 5)))
    (run,) = curvedoc.load(tmp_path)
    assert run.roles == {"Train Loss": Role.TRAIN_LOSS, "Val Loss": Role.VAL_LOSS}
    (tmp_path / "other").mkdir()
    touch(tmp_path / "other" / "train_history.csv", b"epoch,train_loss,val_loss\n1,1.0,1.1\n2,0.9,1.0\n")
    touch(tmp_path / "other" / "val_history.csv", b"epoch,val_loss\n1,1.1\n2,1.0\n")
    assert len(curvedoc.load(tmp_path / "other")) == 2


@pytest.mark.parametrize("name, named", [
    ("train_performance.csv", ("train", "\0_performance.csv")),
    ("Val-Performance.CSV", ("Val", "\0-performance.csv")),
    ("history.validation.tsv", ("validation", "history.\0.tsv")),
    ("train.csv", ("train", "\0.csv")),
    ("train_val_split.csv", None),  # two splits named
    ("pretrained.csv", None),  # a split word inside another word
    ("trainer_state.csv", None),
    ("train_performance.json", None),
])
def test_the_split_word_of_a_table_s_name(name, named):
    assert readers.split_file_name(name) == named


def test_a_csvlogger_file_with_doubled_carriage_returns_is_a_table(tmp_path):
    """19090418G/dissertation_deep_learning's train.log: Keras CSVLogger rows ended by '\\r\\r', no line feed."""
    path = touch(tmp_path / "train.log", b"epoch,acc,loss,val_acc,val_loss\r\r" + b"".join(
        f"{e},0.{50 + e},0.{90 - e},0.6,0.8\r\r".encode() for e in range(5)))
    assert [source.family for source in discover(path).sources] == ["csv"]
    (run,) = curvedoc.load(path)
    assert len(run.series("val_loss")) == 5


def optim_logger(names: list[str], rows: list[list[float]]) -> str:
    """What Torch's optim.Logger writes (optim/Logger.lua, add): each name then a tab on the first line, each value
    as '%11.4e' then a tab on the next ones."""
    return "".join(f"{name}\t" for name in names) + "\n" + "".join(
        "".join(f"{value:11.4e}\t" for value in row) + "\n" for row in rows)


def test_torch_optim_logger_tables_are_read_as_tables(tmp_path):
    """Old Torch runs keep their curves in optim.Logger files (train.log, test.log): a header of names such as
    '% mean class accuracy (test set)' and one percentage a line, every line ended by a tab; one column or more."""
    train = [[14.63 + epoch] for epoch in range(30)]
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "train.log").write_text(optim_logger(["% mean class accuracy (train set)"], train))
    (run,) = curvedoc.load(tmp_path / "one")
    assert run.format == "csv" and run.point_counts() == {"% mean class accuracy (train set)": 30}
    assert run.roles["% mean class accuracy (train set)"] == curvedoc.Role.TRAIN_ACC
    (tmp_path / "two").mkdir()
    both = [[14.63 + epoch, 17.5 + epoch] for epoch in range(30)]
    (tmp_path / "two" / "test.log").write_text(optim_logger(
        ["% mean class accuracy (train set)", "% mean class accuracy (test set)"], both))
    (run,) = curvedoc.load(tmp_path / "two")
    assert run.roles["% mean class accuracy (test set)"] == curvedoc.Role.TEST_ACC
    assert run.series("% mean class accuracy (test set)")["value"].iloc[-1] == pytest.approx(46.5)


def test_key_value_lines_under_a_one_line_heading_are_a_log_not_a_table(tmp_path):
    # ProtoPNet's trainlog.txt: a heading of two words, then "epoch: <tab>0" and tab-indented "name: <tab>value" lines,
    # which split on white space into as many cells as the heading has words
    blocks = "".join(f"epoch: \t{epoch}\n\ttrain\n\tcross ent: \t{4.8 - epoch / 10:.3f}\n\taccu: \t\t{5 + epoch}%\n"
                     for epoch in range(6))
    (tmp_path / "trainlog.txt").write_text("start training\n" + blocks)
    (run,) = curvedoc.load(tmp_path / "trainlog.txt")
    assert run.format == "text-log" and set(run.tags) == {"cross_ent", "accu"}


@pytest.mark.parametrize("table", ["results.csv", "metrics.csv"])
def test_an_event_file_beside_the_table_its_writer_also_wrote_is_one_run(tmp_path, table):
    """YOLOv5 writes results.csv and, with TensorBoard on by default, the same metrics to an event file in the same
    run folder; Lightning's CSVLogger and TensorBoardLogger share version_N/: one training, read from its table.
    Event files in split subfolders (Keras' train/ and validation/) beside a table are another layout."""
    run = tmp_path / "runs" / "train" / "exp"
    touch(run / EVENT, b"")
    touch(run / table, b"epoch,train/box_loss\n0,0.1\n")
    assert families(discover(tmp_path)) == [("csv", os.path.relpath(run / table))]
    keras = tmp_path / "keras"
    touch(keras / "train" / EVENT, b"")
    touch(keras / table, b"epoch,loss\n0,0.1\n")
    assert "tensorboard" in {family for family, _ in families(discover(keras))}
