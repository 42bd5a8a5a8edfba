"""Free-text training logs: captured stdout of Keras, the HF Trainer, nanoGPT, fairseq, PyTorch's MNIST example and a
hand-written logging script (fixtures/textlog/), the traps of real output, and the reader's bounds."""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from damage import assert_reads_or_refuses_in_one_line, damaged
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc import CurvedocError, Role
from curvedoc.errors import NotALog
from curvedoc.model import RunBuilder
from curvedoc.readers import Source, discover, textlog

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "textlog"
WILD = Path(__file__).resolve().parent.parent.parent / "shared" / "wild"


def load_one(path: Path):
    runs = curvedoc.load(path)
    assert len(runs) == 1
    return runs[0]


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def read(path: Path):
    (run,) = textlog.read(Source("text", path, ((None, path),), explicit=True))
    return run


def values(run, tag) -> list[float]:
    return run.series(tag)["value"].tolist()


def steps(run, tag) -> list[int]:
    return run.series(tag)["step"].tolist()


# ---------------------------------------------------------------------------------------------- real output

def test_keras_3_progress_bars_give_one_point_per_epoch():
    log = FIXTURES / "keras_verbose1" / "train.log"
    raw = log.read_bytes()
    assert b"\r" in raw and b"\x08" in raw and b"\x1b[" in raw and b" 1/43" in raw  # redrawn per-batch bars
    run = load_one(log)
    assert run.format == "text-log" and run.name == "train.log"
    assert run.roles == {
        "accuracy": Role.TRAIN_ACC, "loss": Role.TRAIN_LOSS, "val_accuracy": Role.VAL_ACC,
        "val_loss": Role.VAL_LOSS, "learning_rate": Role.LR,
    }
    for tag in run.tags:
        assert steps(run, tag) == [1, 2, 3, 4, 5, 6]  # the epochs, not the 43 batches of each
    assert values(run, "val_loss")[0] == 0.4814 and values(run, "loss")[-1] == 0.0555
    # the closing evaluate() bar (accuracy 0.9711, loss 0.0998 on 15/15) belongs to no epoch: no point
    assert 0.0998 not in values(run, "loss")
    assert not run.warnings


def test_keras_verbose_2_lines_read_the_same_as_verbose_1():
    one = load_one(FIXTURES / "keras_verbose1" / "train.log")
    two = load_one(FIXTURES / "keras_verbose2" / "train.log")
    for tag in ("loss", "val_loss", "accuracy"):
        assert values(two, tag) == values(one, tag)[:4]


def test_a_finished_run_then_a_rerun_appended_to_the_log_are_two_runs():
    """The first try trained its 3 epochs to the end ("Epoch 3/3"), so the second, appended with ``>>``, is a run of
    its own: neither is lost or spliced into the other."""
    first, second = curvedoc.load(FIXTURES / "keras_restarted" / "train.log")
    log = (FIXTURES / "keras_restarted" / "train.log").read_text()
    lines = [line for line in log.splitlines() if "val_loss" in line]
    logged = [float(line.rsplit("val_loss: ", 1)[1]) for line in lines]
    assert steps(first, "val_loss") == [1, 2, 3] and values(first, "val_loss") == logged[:3]
    assert steps(second, "val_loss") == [1, 2, 3, 4, 5] and values(second, "val_loss") == logged[3:]
    assert not first.warnings and not second.warnings


LOSS_LOG = """\
================ Training Loss (Thu Jun 10 10:26:25 2021) ================
(epoch: 1, iters: 100, time: 0.857, data: 2.929) D_A: 0.111 G_A: 0.660 cycle_A: 1.700 idt_A: 0.559 
(epoch: 1, iters: 200, time: 0.861, data: 0.000) D_A: 0.318 G_A: 0.512 cycle_A: 1.650 idt_A: 0.541 
================ Training Loss (Thu Jun 10 10:42:20 2021) ================
(epoch: 1, iters: 100, time: 0.859, data: 3.144) D_A: 0.461 G_A: 0.404 cycle_A: 1.812 idt_A: 0.601 
(epoch: 1, iters: 200, time: 0.849, data: 0.000) D_A: 0.234 G_A: 0.301 cycle_A: 1.402 idt_A: 0.512 
(epoch: 1, iters: 300, time: 0.862, data: 0.000) D_A: 0.243 G_A: 0.322 cycle_A: 1.203 idt_A: 0.433 
(epoch: 2, iters: 75, time: 0.777, data: 0.001) D_A: 0.106 G_A: 0.291 cycle_A: 1.101 idt_A: 0.402 
(epoch: 2, iters: 175, time: 0.787, data: 0.001) D_A: 0.175 G_A: 0.330 cycle_A: 1.052 idt_A: 0.350 
================ Training Loss (Fri Jun 11 21:04:24 2021) ================
"""


def test_cyclegan_loss_log_sessions_global_iterations_and_losses_only(tmp_path):
    run = read(write(tmp_path / "loss_log.txt", LOSS_LOG))
    # time and data are the Visualizer's timings, not curves; the session headers' dates are no settings
    assert sorted(run.tags) == ["D_A", "G_A", "cycle_A", "idt_A"]
    assert run.meta.hparams == {}
    # the last session is kept whole; epoch 1 is 325 iterations long: printed every 100 on the global counter,
    # epoch 2's first print at 75 comes 100 after epoch 1's last at 300
    assert steps(run, "cycle_A") == [100, 200, 300, 400, 500]
    assert values(run, "cycle_A") == [1.812, 1.402, 1.203, 1.101, 1.052]
    assert {tag: run.roles[tag] for tag in run.tags} == {
        "D_A": Role.ADVERSARIAL, "G_A": Role.ADVERSARIAL, "cycle_A": Role.TRAIN_LOSS, "idt_A": Role.TRAIN_LOSS}
    # a step counted on across epochs is the format read as meant: no warning; the dropped session is said
    assert len(run.warnings) == 1 and "restarted run" in run.warnings[0]


def test_loss_log_variants_of_forks(tmp_path):
    text = "".join(f"(Epoch: 1, Iters: {i}/400, lr: 0.000200, t_data: 0.010) , G: {1 / i:.4f} \n"
                   for i in range(100, 500, 100))
    run = read(write(tmp_path / "loss_log.txt", text))
    assert run.tags == ["G"] and run.roles["G"] == Role.TRAIN_LOSS  # a loss whatever its name, no GAN beside it
    assert steps(run, "G") == [100, 200, 300, 400]


DARKNET_LOG = """\
yolo-obj
   layer   filters  size/strd(dil)      input                output
   0 conv     32       3 x 3/ 1    416 x 416 x   3 ->  416 x 416 x  32 0.299 BF
Learning Rate: 0.001, Momentum: 0.9, Decay: 0.0005
 v3 (mse loss, Normalizer: (iou: 0.75, cls: 1.00) Region 82 Avg (IOU: 0.331524, GIOU: 0.267839), Class: 0.502185, \
Obj: 0.475432, No Obj: 0.495226, .5R: 0.250000, .75R: 0.000000, count: 8, class_loss = 1234.5, iou_loss = 12.3, \
total_loss = 1246.8
 total_bbox = 8, rewritten_bbox = 0.000000 %

 1: 1384.392944, 1384.392944 avg loss, 0.000000 rate, 4.125046 seconds, 64 images, -1.000000 hours left
Loaded: 0.000030 seconds

 2: 1210.123000, 1366.966000 avg loss, 0.000000 rate, 3.900000 seconds, 128 images, 12.300000 hours left

 3: 1100.500000, 1340.320000 avg loss, 0.000001 rate, 3.900000 seconds, 192 images, 12.200000 hours left
 (next mAP calculation at 3 iterations)
 calculation mAP (mean average precision)...
 detections_count = 120, unique_truth_count = 40
class_id = 0, name = cone, ap = 12.34%   \t (TP = 3, FP = 10)
class_id = 1, name = sign, ap = 56.78%   \t (TP = 9, FP = 2)
 for conf_thresh = 0.25, precision = 0.23, recall = 0.07, F1-score = 0.11
 mean average precision (mAP@0.50) = 0.345600, or 34.56 %
 Last accuracy mAP@0.5 = 34.56 %, best = 34.56 %
 4: 980.100000, 1304.300000 avg loss, 0.000001 rate, 3.900000 seconds, 256 images, 12.100000 hours left
1000, 3.937: 2.310000, 2.402000 avg, 0.100000 rate, 0.201000 seconds, 128000 images
"""


def test_darknet_iterations_their_loss_running_average_rate_and_map(tmp_path):
    """detector.c prints the iteration, that batch's loss and the running average (0.9 of the last) before their
    names; with -map, the mean average precision of each evaluation, and a class a line before it (no curve).
    classifier.c's line also says the epochs seen."""
    run = read(write(tmp_path / "train.log", DARKNET_LOG))
    assert sorted(run.tags) == ["avg_loss", "loss", "lr", "val_mAP50"]
    assert steps(run, "loss") == [1, 2, 3, 4, 1000]
    assert values(run, "loss") == [1384.392944, 1210.123, 1100.5, 980.1, 2.31]
    assert values(run, "avg_loss") == [1384.392944, 1366.966, 1340.32, 1304.3, 2.402]
    assert (steps(run, "val_mAP50"), values(run, "val_mAP50")) == ([3], [0.3456])
    assert run.roles["loss"] == Role.TRAIN_LOSS and run.roles["val_mAP50"] == Role.SCORE


def batch_loss_log(epochs: int, batches: int) -> str:
    """Python logging of a T5 fine-tuning script: a loss per batch with only its epoch, the epoch's average, BLEU
    on two held-out splits every second epoch and the checkpoint it saves."""
    lines = []
    for epoch in range(1, epochs + 1):
        lines.append(f"2025-03-02 05:16:20,348 - INFO - ##### Epoch {epoch} #####")
        lines += [f"2025-03-02 05:16:20,962 - INFO - Epoch {epoch} - Batch loss: {9 / (epoch + batch):.4f}"
                  for batch in range(batches)]
        lines.append(f"2025-03-02 05:24:38,655 - INFO - Epoch {epoch} - Average Train Loss: {2 / epoch:.4f}")
        if epoch % 2 == 0:
            lines.append(f"2025-03-02 05:34:00,482 - INFO - Epoch {epoch} - Validation BLEU: BLEU-1 7{epoch}.65, "
                         f"BLEU-2 6{epoch}.76, BLEU-3 46.57, BLEU-4 31.75")
            lines.append(f"2025-03-02 05:34:01,370 - INFO - Epoch {epoch} - New best model saved with BLEU-2: "
                         f"6{epoch}.76")
            lines.append(f"2025-03-02 05:34:22,147 - INFO - Epoch {epoch} - Dev BLEU: BLEU-1 63.88, BLEU-2 59.46, "
                         "BLEU-3 43.86, BLEU-4 32.20")
    return "\n".join(lines) + "\n"


def test_batch_losses_with_only_their_epoch_are_numbered_within_it(tmp_path):
    run = read(write(tmp_path / "train.log", batch_loss_log(epochs=4, batches=5)))
    # each batch line is the next step of its epoch; epoch 2 starts where epoch 1's 5 batches end
    assert steps(run, "Batch_loss") == list(range(20))
    assert values(run, "Batch_loss")[5] == 9 / 2
    # an epoch's average and its evaluation sit at its last batch
    assert steps(run, "Average_Train_Loss") == [4, 9, 14, 19]
    assert steps(run, "validation_BLEU-2") == [9, 19] and values(run, "validation_BLEU-2") == [62.76, 64.76]
    assert steps(run, "dev_BLEU-4") == [9, 19]
    assert run.roles["Batch_loss"] == run.roles["Average_Train_Loss"] == Role.TRAIN_LOSS
    assert run.roles["validation_BLEU-2"] == run.roles["dev_BLEU-1"] == Role.SCORE
    # the checkpoint's "saved with BLEU-2" restates the validation score: no curve of its own
    assert "BLEU-2" not in run.tags
    assert not run.warnings


def test_a_metric_printed_once_or_twice_an_epoch_stays_on_the_epoch(tmp_path):
    """A loss printed after training and again after evaluation under the same name is no batch counter: the
    epoch stays the x, and the second value is the epoch's (as before)."""
    text = "".join(f"Epoch {epoch} loss: 0.{9 - epoch}1\nEpoch {epoch} loss: 0.{9 - epoch}2\n" for epoch in range(1, 5))
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "loss") == [1, 2, 3, 4] and values(run, "loss") == [0.82, 0.72, 0.62, 0.52]


def bracketed_epochs_log(sessions: int, epochs: int) -> str:
    """A hand-written logging script: the data's sizes, then ``Epoch [001/30] TrainLoss=… | ValLoss=…`` a line
    per epoch with a checkpoint line after it; each session after the first resumes from the checkpoint of epoch 2
    and prints the checkpoint it loaded (the same epoch and value every time)."""
    prefix = "2026-05-08 22:39:25 | INFO | "
    lines = []
    for session in range(sessions):
        lines += [f"{prefix}  Class [00] AKIEC: 303 images", f"{prefix}[Split] Train=3667 | Val=786 | Test=787",
                  f"{prefix}[DataLoaders] Train=115 batches | Val=25 batches | Test=25 batches",
                  f"{prefix}[Model] Parameters — Trainable: 119,590,923 | Total: 134,305,611 params"]
        first = 1
        if session:
            lines.append(f"{prefix}[Checkpoint] Loaded ← best_model.pth  (epoch=2, val_loss=1.0521)")
            first = 3
        for epoch in range(first, epochs + 1):
            lines.append(f"{prefix}Epoch [{epoch:03d}/{epochs}] TrainLoss={2 / epoch:.4f} TrainAcc={50 + epoch}.54% | "
                         f"ValLoss={1.5 - epoch / 100:.4f} ValAcc={60 + epoch}.94% | LR=1.00e-04 | Time=480.3s")
            lines.append(f"{prefix}[Checkpoint] Saved → best_model.pth  (epoch={epoch}, val_acc={60 + epoch}.9415)")
    return "\n".join(lines) + "\n"


def test_bracketed_zero_padded_epochs_with_pairs_between_bars(tmp_path):
    run = read(write(tmp_path / "training.log", bracketed_epochs_log(sessions=1, epochs=5)))
    for tag in ("TrainLoss", "TrainAcc", "ValLoss", "ValAcc", "LR"):
        assert steps(run, tag) == [1, 2, 3, 4, 5]
    assert values(run, "TrainAcc")[0] == 51.54 and values(run, "ValLoss")[-1] == 1.45  # a percent stays as logged
    assert run.roles["TrainLoss"] == Role.TRAIN_LOSS and run.roles["ValLoss"] == Role.VAL_LOSS
    assert run.roles["ValAcc"] == Role.VAL_ACC and run.roles["LR"] == Role.LR
    # the split sizes and batch counts are neither losses nor settings; 134,305,611 is read whole, not 134,305
    assert not {"Train_loss", "Val_loss", "Test_loss", "Train", "AKIEC"} & (set(run.tags) | set(run.meta.hparams))
    assert run.meta.hparams["Trainable"] == 119590923 and "Total" not in run.meta.hparams
    assert not run.warnings


def test_a_checkpoint_each_session_loads_again_is_no_batch_of_its_epoch(tmp_path):
    """Every resumed session prints ``(epoch=2, val_loss=…)`` of the checkpoint it loaded: three lines at epoch 2
    with other epochs logged between them are no loss printed batch after batch, so the epochs stay the x."""
    run = read(write(tmp_path / "training.log", bracketed_epochs_log(sessions=3, epochs=5)))
    assert steps(run, "TrainLoss") == steps(run, "ValAcc") == [1, 2, 3, 4, 5]
    assert values(run, "TrainLoss") == [2.0, 1.0, round(2 / 3, 4), 0.5, 0.4]
    assert steps(run, "val_loss") == [2]


@pytest.mark.parametrize("line, expected", [
    ("Epoch 3 [DataLoaders] Train=115 batches | Val=25 batches | Test=25 batches | loss=0.5", {"loss": 0.5}),
    ("Epoch 3 train 2.01 val 2.05 over 12 files", {"train_loss": 2.01, "val_loss": 2.05}),
    ("Epoch 3 Train: 3667 | Val: 786 | val_acc: 0.91", {"val_acc": 0.91}),
    # a word for things counted that names a number itself, or is part of a name, is a name
    ("Epoch 3 loss 0.5 samples/s 300 steps_per_second 4 tokens: 512",
     {"loss": 0.5, "samples/s": 300, "steps_per_second": 4, "tokens": 512}),
    ("epoch 3 steps 120 loss 0.5", {"steps": 120, "loss": 0.5}),
])
def test_counts_of_things_and_split_sizes_are_no_values(tmp_path, line, expected):
    run = read(write(tmp_path / "train.log", "".join(line.replace("3", str(epoch), 1) + "\n" for epoch in (1, 2, 3))))
    assert {tag: values(run, tag)[-1] for tag in run.tags} == pytest.approx(expected)


def test_a_checkpoint_message_still_places_its_line(tmp_path):
    text = "".join(f"loss: 0.{9 - step}\nsaving model at step {step}\n" for step in range(1, 5))
    run = read(write(tmp_path / "train.log", text))
    assert "step" not in run.tags and steps(run, "loss")[-3:] == [1, 2, 3]


@pytest.mark.parametrize("name", ["stdout.log", "train.out"])
def test_hugging_face_trainer_printed_dicts(name):
    run = load_one(FIXTURES / "hf_trainer" / name)
    assert run.roles["loss"] == Role.TRAIN_LOSS and run.roles["eval_loss"] == Role.VAL_LOSS
    assert run.roles["eval_accuracy"] == Role.VAL_ACC and run.roles["learning_rate"] == Role.LR
    assert run.roles["grad_norm"] == Role.GRAD_NORM
    assert "epoch" not in run.tags and "train_runtime" not in run.tags  # the closing summary is no point
    assert "train_loss" not in run.tags
    # printed epochs 0.25, 0.5 … 3: the x axis is the epoch × 100, said in a warning
    assert steps(run, "loss") == list(range(25, 301, 25))
    assert steps(run, "eval_loss") == [100, 200, 300]
    assert any("epoch × 100" in warning for warning in run.warnings)


def test_tqdm_bars_between_the_dicts_change_nothing():
    quiet, noisy = load_one(FIXTURES / "hf_trainer" / "stdout.log"), load_one(FIXTURES / "hf_trainer" / "train.out")
    assert b"it/s]" in (FIXTURES / "hf_trainer" / "train.out").read_bytes()
    for tag in ("loss", "grad_norm", "learning_rate", "eval_loss", "eval_accuracy"):
        assert values(noisy, tag) == values(quiet, tag)


def test_a_dict_the_bar_redraws_over_on_its_line_is_still_a_record(tmp_path):
    """With ``2>&1`` the Trainer's print and tqdm's stderr interleave: the dict's line end lands after the bar's
    next redraws, so on disk the dict is followed by ``\\r`` and bars on its line (as in a TRL SFT log)."""
    quiet = (FIXTURES / "hf_trainer" / "stdout.log").read_text()
    dicts = [line for line in quiet.splitlines() if line.startswith("{")]
    bars = "".join(f"\r {k:3d}%|#         | {k}/60 [00:0{k % 10}<00:00, 26.1it/s]" for k in range(5))
    text = "".join(f"{record}{bars}\n" for record in dicts)
    run = read(write(tmp_path / "train.out", text))
    reference = load_one(FIXTURES / "hf_trainer" / "stdout.log")
    for tag in ("loss", "eval_loss", "eval_accuracy"):
        assert values(run, tag) == values(reference, tag)


def test_a_line_of_evaluation_scores_without_a_step_is_the_evaluations(tmp_path):
    """HRNet-Semantic-Segmentation's loop logs its batches with their epoch and iteration, then its validation as
    ``Loss: 3.124, MeanIU:  0.0649, Best_mIoU:  0.0649``: no step, no split named, but a mean IU (the FCN paper's
    mIoU) is computed on an evaluation set, so the line's loss is the validation loss and its best-so-far is no
    curve. A line of bare names without such a score stays unread: it may be either split's."""
    text = ""
    for epoch in range(3):
        for iteration in (0, 10, 20):
            text += (f"Epoch: [{epoch}/520] Iter:[{iteration}/247], Time: 0.62, lr: [0.0079], "
                     f"Loss: {3.5 - epoch / 2 - iteration / 100:.6f}, Acc:{0.4 + epoch / 10:.6f}\n")
        text += "=> saving checkpoint to output/cityscapes/checkpoint.pth.tar\n"
        text += f"Loss: {3.1 - epoch / 10:.3f}, MeanIU:  {0.06 + epoch / 100:.4f}, Best_mIoU:  {0.06 + epoch / 100:.4f}\n"
        text += f"Average: {0.5 + epoch:.3f}\n"
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["val_Loss"] == Role.VAL_LOSS and run.roles["val_MeanIU"] == Role.SCORE
    assert values(run, "val_MeanIU") == [0.06, 0.07, 0.08] and values(run, "val_Loss") == [3.1, 3.0, 2.9]
    assert not {"Best_mIoU", "val_Best_mIoU", "Average", "val_Average"} & set(run.tags)


def test_lightnings_checkpoint_messages_give_the_monitored_metric_at_their_step():
    """A real Lightning fit with ModelCheckpoint(verbose=True), its output captured with 2>&1 as W&B keeps it: the
    validation loss is only in the checkpoint's messages, at the global step each names; "was not in top 1" reports
    no value, and the best so far and the number of checkpoints kept are no curves."""
    path = FIXTURES / "lightning_checkpoints" / "output.log"
    text = path.read_text()
    reached = [float(value) for value in re.findall(r"'val_loss' reached ([\d.]+)", text)]
    run = load_one(path)
    assert run.tags == ["val_loss"] and run.roles["val_loss"] == Role.VAL_LOSS
    assert values(run, "val_loss") == reached and len(reached) == 11 and "was not in top 1" in text
    assert steps(run, "val_loss")[:3] == [22, 44, 66] and 220 not in steps(run, "val_loss")


def test_a_line_without_a_step_whose_first_name_says_train_reports_training(tmp_path):
    """A VGAE script logs ``Epoch: 3, Loss: 1.51``, then ``Train. Total Loss: …, KL: …, AUC: …%`` and ``Val. Total
    Loss: …, KL: …`` without a step: each line's first name says whose its bare names are."""
    text = "".join(
        f"09-02 20:39:12 - INFO - __main__ - Epoch: {epoch}, Loss: {1.6 - epoch / 10:.2f}\n"
        f"09-02 20:39:12 - INFO - __main__ - Train. Total Loss: {1.6 - epoch / 10:.2f}, KL: {0.14 - epoch / 100:.2f}, "
        f"AUC: {50 + epoch}.42%\n"
        f"09-02 20:39:12 - INFO - __main__ - Val. Total Loss: {1.8 - epoch / 20:.2f}, KL: 0.2{epoch}, AUC: 49.9{epoch}%\n"
        for epoch in range(4))
    run = read(write(tmp_path / "train.log", text))
    assert values(run, "train_KL") == [0.14, 0.13, 0.12, 0.11] and values(run, "val_KL") == [0.2, 0.21, 0.22, 0.23]
    assert run.roles["train_AUC"] == Role.SCORE and steps(run, "train_AUC") == [0, 1, 2, 3]


def test_nanogpt_lines():
    run = load_one(FIXTURES / "nanogpt" / "train.log")
    assert (FIXTURES / "nanogpt" / "train.log").read_text().startswith("The Zen of Python")  # other output first
    assert run.roles["train_loss"] == Role.TRAIN_LOSS and run.roles["val_loss"] == Role.VAL_LOSS
    assert run.roles["loss"] == Role.TRAIN_LOSS
    assert steps(run, "val_loss") == list(range(0, 301, 50))
    assert steps(run, "loss") == list(range(0, 301, 10))
    assert values(run, "mfu")[0] == -100.0  # nanoGPT prints -100.00% until it has measured
    assert run.primary(Role.TRAIN_LOSS) == "loss"
    assert not run.warnings


def test_pytorch_mnist_example_counts_samples_on_across_epochs():
    run = load_one(FIXTURES / "mnist_example" / "train.log")
    assert run.roles == {"Loss": Role.TRAIN_LOSS, "test_Average_loss": Role.TEST_LOSS, "test_Accuracy": Role.TEST_ACC}
    # "Train Epoch: 2 [640/1347 (47%)]": the sample count starts again each epoch; epoch 2 starts at 1347
    assert steps(run, "Loss")[:4] == [0, 640, 1280, 1347]
    # the test line after each epoch sits at that epoch's last step; "Accuracy: 385/450" is a fraction
    assert steps(run, "test_Average_loss") == [1280, 2627, 3974, 5321]
    assert values(run, "test_Accuracy")[0] == pytest.approx(385 / 450)
    assert not run.warnings  # nothing was dropped: a step counted within epochs is the format, not a problem


def test_a_step_counted_within_epochs_named_only_after_their_batches_is_one_run():
    # "  step    20 | loss 2.1014" … "  step    80", then "Epoch 00001 | Loss: 1.5796 | Val Loss: 0.8507"
    run = load_one(FIXTURES / "epoch_summary_after_steps" / "train.log")
    assert steps(run, "loss")[:6] == [20, 40, 60, 80, 100, 120]  # epoch 2 goes on from epoch 1's 80
    assert steps(run, "Val_Loss") == [80, 160, 240, 320, 400, 480]  # each summary at its epoch's last step
    assert run.roles["Val_Loss"] == Role.VAL_LOSS and not run.warnings


def within_epoch_steps_log(epochs: list[int], epoch_first: bool) -> str:
    lines = []
    for epoch in epochs:
        batches = [f"step {step} | loss {1 / (epoch + step / 100):.4f}" for step in range(100, 600, 100)]
        summary = [f"Epoch {epoch} | lr 0.001"]
        lines += summary + batches if epoch_first else batches + summary
    return "\n".join(lines) + "\n"


def test_a_step_counted_within_epochs_named_before_their_batches_is_one_run(tmp_path):
    run = read(write(tmp_path / "train.log", within_epoch_steps_log([1, 2, 3], epoch_first=True)))
    assert steps(run, "loss") == list(range(100, 1501, 100))


def test_a_stretch_after_the_last_epoch_line_is_the_epoch_in_progress(tmp_path):
    text = within_epoch_steps_log([1, 2], epoch_first=False) + "step 100 | loss 0.3\nstep 200 | loss 0.29\n"
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "loss")[-3:] == [1000, 1100, 1200]


def test_epoch_lines_that_name_an_epoch_again_are_restarted_sessions(tmp_path):
    # the same command run twice: epochs 1, 2, then 1, 2 again: the step's restart there is a new session
    text = within_epoch_steps_log([1, 2], epoch_first=False) * 2
    assert len(curvedoc.load(write(tmp_path / "train.log", text))) == 2


def test_fairseq_updates_and_the_valid_subset():
    run = load_one(FIXTURES / "fairseq" / "train.log")
    assert run.roles["loss"] == Role.TRAIN_LOSS and run.roles["valid_loss"] == Role.VAL_LOSS
    assert run.roles["gnorm"] == Role.GRAD_NORM and run.roles["lr"] == Role.LR
    assert steps(run, "valid_loss") == [43, 86, 129, 172]  # num_updates, not the epoch 001
    assert "num_updates" not in run.tags and "epoch" not in run.tags
    assert not any(tag.startswith("2021") or tag == "INFO" for tag in run.tags)


def test_logging_script_with_colours_timestamps_tqdm_percent_and_a_class_named_inf():
    run = load_one(FIXTURES / "python_logging" / "train.log")
    raw = (FIXTURES / "python_logging" / "train.log").read_text()
    assert "\x1b[32mINFO" in raw and " INF  " in raw and "UserWarning" in raw and "val_acc=88.9%" in raw
    assert set(run.tags) == {"train_loss", "val_loss", "val_acc"}  # the report's rows and bars are no curves
    assert values(run, "val_acc")[0] == 88.9  # a percent stays as logged
    assert steps(run, "val_loss") == [1, 2, 3, 4, 5, 6]
    assert np.isfinite(run.scalars["value"]).all()  # "INF" is a class, not infinity
    # the settings printed before training are the run's hyperparameters, class count included
    assert run.meta.hparams["lr"] == 0.003 and run.meta.n_classes == 3


# ---------------------------------------------------------------------------------------------- line forms

@pytest.mark.parametrize("text, expected", [
    ("Epoch 3 | train_loss=0.51 | val_loss=0.48 | acc=91.2%\n",  # the scores after the validation loss are its
     {"train_loss": 0.51, "val_loss": 0.48, "val_acc": 91.2}),
    ("epoch: 3, loss: 0.51, val_loss: 0.48\n", {"loss": 0.51, "val_loss": 0.48}),
    ("[epoch 3/10] loss 0.51 val_acc 0.91\n", {"loss": 0.51, "val_acc": 0.91}),
    ("Epoch [3/10], Step [100/600], Loss: 0.2345\n", {"Loss": 0.2345}),
    ("Epoch 3/10 - loss: 1.2e-04 - Accuracy: 91.2\n", {"loss": 1.2e-4, "Accuracy": 91.2}),
    ("{'eval_loss': np.float64(0.41), 'eval_accuracy': np.float64(0.9), 'epoch': 3.0}\n",
     {"eval_loss": 0.41, "eval_accuracy": 0.9}),
    ('{"loss": 0.41, "step": 3}\n', {"loss": 0.41}),
    ("step 3: loss tensor(0.4100, grad_fn=<NllLossBackward0>)\n", {"loss": 0.41}),
    ("iter 3: loss 2.3100, time 45.21ms, mfu 3.10%\n", {"loss": 2.31, "mfu": 3.1}),
    ("| epoch 003 | loss 9.1 | ppl 549.3 | wps 12,345 | num_updates 500\n",
     {"loss": 9.1, "ppl": 549.3, "wps": 12345}),
    # gradient boosting's evaluation lines: XGBoost's, LightGBM's (a metric named for its dataset with a
    # possessive), CatBoost's (its iteration, the loss on its learn and test sets)
    ("[3]\ttrain-logloss:0.51\tvalid-logloss:0.55\n", {"train-logloss": 0.51, "valid-logloss": 0.55}),
    ("[3]\tvalid_0's binary_logloss: 0.52\tvalid_0's auc: 0.81\n",
     {"valid_0_binary_logloss": 0.52, "valid_0_auc": 0.81}),
    ("3:\tlearn: 0.6851\ttest: 0.6859\tbest: 0.6859 (3)\ttotal: 52ms\tremaining: 52s\n",
     {"train_loss": 0.6851, "test_loss": 0.6859}),
])
def test_each_common_line_form(tmp_path, text, expected):
    run = read(write(tmp_path / "train.log", text * 3))
    got = {tag: values(run, tag)[-1] for tag in run.tags}
    assert got == pytest.approx(expected)


@pytest.mark.parametrize("form", [
    "loss in step {n} is {loss}",  # a sentence: the metric, then the step it was measured at
    "Loss at step {n}: {loss}",
    "loss after step {n} = {loss}",
    "Loss for step {n}: {loss}",  # a public toxic-comment classifier's "Average loss for epoch 1: 0.3625"
    "Step #{n} loss: {loss}",
    "Step no. {n}, loss {loss}",
    "## Step no. = {n}\n- loss: {loss}",  # a Markdown heading, the values listed under it
    "step_num: {n}, loss: {loss}",
    "Step Number: {n}, Loss: {loss}",
    "batch_index={n} loss={loss}",
    "Iteration step: {n}, loss: {loss}",
    "INFO:__main__:[{n}] loss: {loss}",  # Python logging's default format: level, logger name, message
    "INFO:tensorflow:[  {n}] | loss  {loss}",  # the step padded in its brackets, a bar after them
])
def test_a_step_however_it_is_spelled_places_the_loss(tmp_path, form):
    text = "".join(form.format(n=100 * i, loss=2.0 / (i + 1)) + "\n" for i in range(4))
    run = read(write(tmp_path / "train.log", text))
    (tag,) = run.tags
    assert tag.lower() == "loss"
    assert steps(run, tag) == [0, 100, 200, 300]
    assert values(run, tag) == pytest.approx([2.0, 1.0, 2 / 3, 0.5])


def test_a_sentence_naming_the_epoch_and_the_batch_within_it_places_the_loss_on_one_axis(tmp_path):
    # an ASR confidence model's train_CEM.py: "Loss at epoch 0 and iteration 500 is 0.219", every 500 of its 1,200
    # batches an epoch, the batch counter starting over with each epoch
    text = "".join(f"{name} at epoch {epoch} and iteration {batch} is {value / (epoch + 1)}\n"
                   for epoch in range(4) for batch in (0, 500, 1000)
                   for name, value in (("Loss", 0.8), ("NCE Loss", -0.5)))
    run = read(write(tmp_path / "loss.txt", text))
    assert set(run.tags) == {"Loss", "NCE_Loss"}
    loss_steps = steps(run, "Loss")
    assert len(loss_steps) == 12 and loss_steps == sorted(set(loss_steps))  # epochs counted on, not overwritten
    assert values(run, "Loss")[:4] == pytest.approx([0.8, 0.8, 0.8, 0.4])


def test_a_tensorflow_estimators_evaluation_results_are_the_held_out_splits(tmp_path):
    # TF 1's tf.logging (Python logging's default format): the train loss every 100 steps, evaluate() every 1000
    text = "INFO:tensorflow:Calling model_fn.\n" + "".join(
        f"INFO:tensorflow:loss = {2.3 / i:.4f}, step = {100 * i}\n"
        f"INFO:tensorflow:global_step/sec: 12.{i}\n"
        + (f"INFO:tensorflow:Saving dict for global step {100 * i}: accuracy = 0.{i}, global_step = {100 * i}, "
           f"loss = {2.0 / i:.4f}\n" if i % 10 == 0 else "")
        for i in range(1, 31))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "eval_accuracy", "eval_loss"}
    assert steps(run, "eval_loss") == [1000, 2000, 3000] and len(steps(run, "loss")) == 30
    assert run.roles["eval_loss"] == Role.VAL_LOSS and run.roles["eval_accuracy"] == Role.VAL_ACC
    assert not any("logged again" in warning for warning in run.warnings)  # the train loss is not overwritten


def test_a_step_restated_in_an_evaluations_block_of_results_keeps_the_block(tmp_path):
    # BERT's run_classifier: the train loss every 100 steps, and every 500 an "Eval results" block, one result a line,
    # the global step among them and the evaluation's loss after it
    text = "".join(
        f"INFO:tensorflow:loss = {2 / i:.4f}, step = {100 * i}\n"
        + (f"INFO:tensorflow:***** Eval results *****\nINFO:tensorflow:  eval_accuracy = 0.{i}\n"
           f"INFO:tensorflow:  eval_loss = {1.5 / i:.4f}\nINFO:tensorflow:  global_step = {100 * i}\n"
           f"INFO:tensorflow:  loss = {1.5 / i:.4f}\n" if i % 5 == 0 else "")
        for i in range(1, 21))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "eval_accuracy", "eval_loss"}
    assert values(run, "loss")[4] == pytest.approx(0.4)  # step 500's train loss, not the evaluation's
    assert steps(run, "eval_loss") == [500, 1000, 1500, 2000]
    assert not any("logged again" in warning for warning in run.warnings)


def test_monais_batches_under_each_epoch_are_its_steps(tmp_path):
    # MONAI's segmentation tutorials: "epoch 3/600", each batch's "b/16, train_loss: x", the epoch's average, and a
    # validation Dice every second epoch
    lines = []
    for epoch in range(1, 7):
        lines += ["-" * 10, f"epoch {epoch}/600"]
        lines += [f"{batch}/16, train_loss: {0.7 - 0.03 * epoch - 0.001 * batch:.4f}" for batch in range(1, 17)]
        lines.append(f"epoch {epoch} average loss: {0.7 - 0.03 * epoch:.4f}")
        if epoch % 2 == 0:
            lines += ["saved new best metric model", f"current epoch: {epoch} current mean dice: {0.05 * epoch:.4f}",
                      f"best mean dice: {0.05 * epoch:.4f} at epoch: {epoch}"]
    run = read(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert steps(run, "train_loss") == list(range(1, 6 * 16 + 1))
    assert values(run, "train_loss")[16] == pytest.approx(0.7 - 0.06 - 0.001)  # epoch 2's first batch
    assert len(values(run, "current_mean_dice")) == 3 and run.roles["current_mean_dice"] == Role.SCORE
    assert not run.warnings


def ruled_table(headers: list[str], rows: list[tuple]) -> str:
    """A table as tabulate's "simple" format and spaCy's training output print it: right-aligned columns at least
    two wider than their names, a rule of dashes as wide as each column under the header."""
    widths = [max(len(header) + 2, *(len(f"{row[index]}") for row in rows)) for index, header in enumerate(headers)]
    lines = ["  ".join(header.ljust(width) for header, width in zip(headers, widths, strict=True)),
             "  ".join("-" * width for width in widths)]
    lines += ["  ".join(f"{value}".rjust(width) for value, width in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines) + "\n"


def test_a_ruled_tables_column_names_are_where_its_dashes_are(tmp_path):
    rows = [(epoch, round(1 / epoch, 4), round(1.1 / epoch, 4), round(0.5 + epoch / 40, 4)) for epoch in range(1, 9)]
    run = read(write(tmp_path / "results.txt", ruled_table(["epoch", "train loss", "val loss", "val acc"], rows)))
    assert set(run.tags) == {"train_loss", "val_loss", "val_acc"} and run.roles["val_acc"] == Role.VAL_ACC
    assert steps(run, "val_loss") == list(range(1, 9))


def test_spacys_training_table_is_its_losses_and_scores_at_its_steps(tmp_path):
    headers = ["E", "#", "LOSS TOK2VEC", "LOSS NER", "ENTS_F", "ENTS_P", "ENTS_R", "SCORE"]
    rows = [(index // 4, 200 * index, f"{0.5 * index:.2f}", f"{49.84 / (index + 1):.2f}", f"{5.0 * index:.2f}",
             f"{5.0 * index:.2f}", f"{5.0 * index:.2f}", f"{0.05 * index:.2f}") for index in range(12)]
    run = read(write(tmp_path / "train.log", ruled_table(headers, rows)))
    assert set(run.tags) == {"LOSS_TOK2VEC", "LOSS_NER", "ENTS_f1", "ENTS_precision", "ENTS_recall", "SCORE"}
    assert run.roles["LOSS_NER"] == Role.TRAIN_LOSS and run.roles["ENTS_f1"] == Role.SCORE
    assert steps(run, "SCORE") == [200 * index for index in range(12)]


def test_allennlps_metrics_table_gives_each_split_its_column(tmp_path):
    # AllenNLP's trainer logs each epoch's metrics as a table: a header of the two splits, a row a metric, N/A where
    # a split has no value
    trainer = "2020-01-01 10:00:00,000 - INFO - allennlp.training.trainer - "
    writer = "2020-01-01 10:00:00,000 - INFO - allennlp.training.tensorboard_writer - "
    lines = []
    for epoch in range(6):
        lines += [f"{trainer}Epoch {epoch}/9", f"{writer}                     Training |  Validation",
                  f"{writer}accuracy        |     {0.5 + epoch * 0.04:.3f}  |     {0.55 + epoch * 0.03:.3f}",
                  f"{writer}gpu_0_memory_MB |  1234.000  |       N/A",
                  f"{writer}loss            |     {1.0 - epoch * 0.08:.3f}  |     {0.95 - epoch * 0.05:.3f}",
                  f"{trainer}Epoch duration: 0:00:10.123456"]
    run = read(write(tmp_path / "out.log", "\n".join(lines) + "\n"))
    assert {run.roles[tag] for tag in run.tags} == {Role.TRAIN_ACC, Role.VAL_ACC, Role.TRAIN_LOSS, Role.VAL_LOSS}
    assert values(run, "Validation_loss") == pytest.approx([0.95 - epoch * 0.05 for epoch in range(6)])
    assert steps(run, "Training_accuracy") == list(range(6))


def test_a_top_k_accuracy_written_in_words_is_one_name(tmp_path):
    # an ImageNet-style log: "Epoch: e/50, Iteration step: s, loss: x" lines, then each epoch's top-1 and top-5
    text = "".join(f"Epoch: {epoch}/50, Iteration step: {1300 * (epoch + 1)}, loss: {5 - epoch:.3f}\n"
                   f"==============Epoch: {epoch}/50,top 1 acc: {0.03 * (epoch + 1):.4f}==============\n"
                   f"==============Epoch: {epoch}/50,top 5 acc: {0.12 * (epoch + 1):.4f}==============\n"
                   for epoch in range(4))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "top1_acc", "top5_acc"}
    assert values(run, "top1_acc") == pytest.approx([0.03, 0.06, 0.09, 0.12])
    assert values(run, "top5_acc") == pytest.approx([0.12, 0.24, 0.36, 0.48])
    assert steps(run, "loss") == [1300, 2600, 3900, 5200]


def test_each_markdown_section_of_a_log_kept_in_markdown_is_a_run_of_its_own(tmp_path):
    sections = {"DQN": 40, "Hill climbing": 10, "Policy gradient": 25}  # the first goes furthest
    text = "".join(f"#### {name}\n```\n" + "".join(f"Episode {100 * k} Avg: {-1000 + 5 * k:.2f}\n"
                                                   for k in range(1, episodes + 1)) + "```\n\n"
                   for name, episodes in sections.items())
    runs = curvedoc.load(write(tmp_path / "results.md", text))
    assert [len(run.series("Avg")) for run in runs] == list(sections.values())


def coco_summary(precision: float) -> str:
    """pycocotools' COCOeval.summarize() printout, from its own format string."""
    line = " {:<18} {} @[ IoU={:<9} | area={:>6s} | maxDets={:>3d} ] = {:0.3f}\n"
    rows = [("Average Precision", "(AP)", "0.50:0.95", "all", 100, precision),
            ("Average Precision", "(AP)", "0.50", "all", 100, 2 * precision),
            ("Average Precision", "(AP)", "0.75", "all", 100, precision / 2),
            ("Average Precision", "(AP)", "0.50:0.95", "small", 100, -1.0),  # no small objects
            ("Average Precision", "(AP)", "0.50:0.95", "large", 100, 1.5 * precision),
            ("Average Recall", "(AR)", "0.50:0.95", "all", 1, precision / 3),
            ("Average Recall", "(AR)", "0.50:0.95", "all", 100, 1.2 * precision)]
    return "".join(line.format(*row) for row in rows)


def test_pycocotools_summary_lines_are_the_evaluations_average_precisions(tmp_path):
    evaluation = ("Running per image evaluation...\nEvaluate annotation type *bbox*\nDONE (t=9.54s).\n"
                  "Accumulating evaluation results...\nDONE (t=0.09s).\n")  # what pycocotools prints before it
    text = "".join(f"Epoch {epoch}/3 loss: {3 / epoch:.2f}\n" + evaluation + coco_summary(0.1 * epoch)
                   for epoch in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "val_AP", "val_AP50", "val_AP75", "val_APl"}
    assert values(run, "val_AP50") == pytest.approx([0.2, 0.4, 0.6])
    assert steps(run, "val_AP") == [1, 2, 3]
    assert run.roles["val_AP"] == Role.SCORE


def test_a_count_of_epochs_before_its_word_is_still_a_setting(tmp_path):
    run = read(write(tmp_path / "train.log", "num_epochs: 20\n" + "".join(
        f"epoch {epoch}: loss {1 / epoch:.3f}\n" for epoch in range(1, 5))))
    assert run.tags == ["loss"] and run.meta.hparams == {"num_epochs": 20}


def test_nonfinite_values_count_and_log_levels_and_labels_do_not(tmp_path):
    text = (
        "INFO 4 workers started\n"
        "epoch 1: loss nan, val_loss inf, label INF, pred NAN\n"
        "epoch 2: loss NaN, val_loss -inf, grad_norm Infinity\n"
        "epoch 3: loss 0.5, val_loss 0.4, grad_norm 2.0\n"
        "INFO: epoch 4 done\n"
    )
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "val_loss", "grad_norm"}
    loss, val_loss = values(run, "loss"), values(run, "val_loss")
    assert math.isnan(loss[0]) and math.isnan(loss[1]) and loss[2] == 0.5
    assert val_loss[:2] == [math.inf, -math.inf]
    assert values(run, "grad_norm")[0] == math.inf


def test_timestamps_and_log_prefixes_make_no_values(tmp_path):
    text = "".join(
        f"[2023-05-01 12:00:0{i},123] INFO train.py:88] I0501 12:00:0{i}.000123 4242 trainer.cc:10] "
        f"step {i * 10}: loss {1 / (i + 1):.3f}\n"
        for i in range(4)
    )
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["loss"] and steps(run, "loss") == [0, 10, 20, 30]


def test_the_logging_formats_source_file_before_a_message_is_no_part_of_its_names(tmp_path):
    """``logging.basicConfig(format="%(asctime)s %(filename)s %(message)s")`` as a GPT-2 pre-training script writes
    it, with its step right-aligned in a field: the file name says where the line was written."""
    import logging

    path = tmp_path / "log"
    logger = logging.getLogger("curvedoc-test-filename-prefix")
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(filename)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        for step in range(6):
            if step % 3 == 0:
                logger.info(f"validation loss: {11 - step:.4f}")
            logger.info(f"step {step:5d} | loss: {11.02 - step / 10:.6f} | lr 8.3916e-07 | norm: 14.3291")
    finally:
        handler.close()
        logger.removeHandler(handler)
    run = read(path)
    assert "validation_loss" in run.tags and "loss" in run.tags
    assert steps(run, "loss") == [0, 1, 2, 3, 4, 5]
    assert values(run, "validation_loss")[-1] == 8.0


def test_other_programs_lines_interleaved_add_nothing(tmp_path):
    text = (
        "Downloading: 100%|██████████| 3/3 [00:00<00:00, 12.1it/s]\n"
        "epoch 1 loss 0.9 val_loss 0.95\n"
        "CUDA Version 12.1 | Driver 535.104\n"
        "saved checkpoint to ckpt_1.pt (size 42 MB)\n"
        "epoch 2 loss 0.7 val_loss 0.8\n"
        "Test accuracy 0.93\n"
        "epoch 3 loss 0.6 val_loss 0.7\n"
    )
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "val_loss", "Test_accuracy"}
    assert steps(run, "Test_accuracy") == [2]  # printed after epoch 2: it sits there


def test_a_resumed_run_keeps_what_was_logged_last_in_step_order(tmp_path):
    cut_short = "".join(f"Epoch {e}/5 - loss: {1.0 / e:.3f}\n" for e in range(1, 4))
    again = "".join(f"Epoch {e}/5 - loss: {2.0 / e:.3f}\n" for e in range(1, 6))
    run = read(write(tmp_path / "train.log", cut_short + again))
    assert steps(run, "loss") == [1, 2, 3, 4, 5]
    assert values(run, "loss") == [round(2.0 / e, 3) for e in range(1, 6)]
    assert any("restarted run" in warning for warning in run.warnings)


def test_runs_printed_one_after_another_are_runs_of_their_own(tmp_path):
    """A sweep's or a cross-validation's runs printed to one stdout (derekchen14/snippet_rnn's 22 Keras runs, saved
    as results.rb): each starts over after the one before ran to the end; the last may stop early."""
    def session(scale, epochs):
        return "Train on 8000 samples\n" + "".join(
            f"Epoch {e}/15\n65s - loss: {scale / e:.4f} - val_loss: {scale / e + 0.1:.4f}\n"
            for e in range(1, epochs + 1))

    path = write(tmp_path / "results.rb", session(1.0, 15) + session(2.0, 15) + session(3.0, 14))
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert [run.name for run in runs] == ["results.rb#1", "results.rb#2", "results.rb#3"]
    assert [len(run.series("val_loss")) for run in runs] == [15, 15, 14]
    assert [values(run, "loss")[0] for run in runs] == [1.0, 2.0, 3.0]
    assert not any(run.warnings for run in runs)
    assert len({run.path for run in runs}) == 3


def test_a_program_that_prints_its_opening_line_again_starts_a_run_however_the_last_one_stopped(tmp_path):
    """A public assignment's log of five Keras fits, each a new process ("Using TensorFlow backend." first), most
    early-stopped before their 30 epochs: a fit that stopped at epoch 22 is no crash the next one resumes, so each
    is a run of its own. Without the banner the same epochs going back read as one run restarted."""
    def session(scale, epochs, banner="Using TensorFlow backend.\n"):
        return banner + "Train on 6557 samples, validate on 825 samples\n" + "".join(
            f"Epoch {e}/30\n6557/6557 [==============================] - 1s 104us/step - loss: {scale / e:.4f} - "
            f"acc: 0.6 - val_loss: {scale / e + 0.1:.4f} - val_acc: 0.6\n" for e in range(1, epochs + 1))

    path = write(tmp_path / "activations.log", session(1.0, 22) + session(2.0, 30) + session(3.0, 28))
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert [len(run.series("val_loss")) for run in runs] == [22, 30, 28]
    assert [values(run, "loss")[0] for run in runs] == [1.0, 2.0, 3.0]
    path = write(tmp_path / "restarted.log", session(1.0, 22, "") + session(2.0, 30, ""))
    (run,) = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert values(run, "loss")[0] == 2.0 and any("restarted" in warning for warning in run.warnings)


def test_each_run_printed_one_after_another_has_the_settings_its_session_printed(tmp_path):
    """A log of sessions appended one after another, each echoing its own configuration as a JSON dump before it
    trains (Cheralia/PC-Transformers: a 50,259-token first session, then sessions of a 1,024-token vocabulary):
    each run is judged with its own vocabulary, not the first session's; a setting a session does not print again
    stays as printed first."""
    def session(vocabulary, scale):
        config = f'Saving the configuration:\n{{\n  "vocab_size": {vocabulary},\n  "batch_size": 8\n}}\n'
        return config + "".join(f"Epoch {e}/8 | Train Loss: {scale / e:.4f} | Val Loss: {scale / e + 0.1:.4f}\n"
                                for e in range(1, 9))

    path = write(tmp_path / "training.log", session(50259, 1.0) + session(1024, 2.0) + session(1024, 3.0))
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert [run.meta.hparams.get("vocab_size") for run in runs] == [50259, 1024, 1024]
    assert all(run.meta.hparams.get("batch_size") == 8 for run in runs)
    assert [values(run, "Train_Loss")[0] for run in runs] == [1.0, 2.0, 3.0]


def test_batches_under_an_epoch_heading_count_on_across_epochs(tmp_path):
    epoch = "Epoch {e}/3\n" + "".join(f"  Batch {b}/30 | Batch Loss: {{loss:.3f}}\n" for b in (10, 20, 30))
    text = "".join(epoch.format(e=e, loss=1.0 / e) for e in range(1, 4))
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "Batch_Loss") == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert not run.warnings


def test_batch_headings_under_an_epoch_heading_count_on_across_epochs(tmp_path):
    """PointNet's train log: "**** EPOCH 000 ****", then " ---- batch: 010 ----" headings each over its values,
    and an evaluation block per epoch. One run, its batches counted on across the epochs."""
    def epoch(e):
        batches = "".join(f" ---- batch: {b:03d} ----\nmean acc: {0.2 + e / 10:.2f}\n"
                          f"mean loss: {2.0 - e / 10 - b / 1000:.3f}\n" for b in (10, 20, 30))
        return (f"**** EPOCH {e:03d} ****\n2023-05-19 16:04:05.972562\n{batches}**** EVAL EPOCH {e:03d} START****\n"
                f"eval mean acc: {0.5 + e / 20:.2f}\neval mean loss: {1.0 - e / 10:.2f}\n"
                f"**** EVAL EPOCH {e:03d} END****\n")
    run = read(write(tmp_path / "log_train.txt", "".join(epoch(e) for e in range(3))))
    assert steps(run, "mean_loss") == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert steps(run, "eval_mean_loss") == [30, 60, 90] and not run.warnings


def test_a_number_alone_between_fences_heads_its_epoch(tmp_path):
    """A PointNet port's log: "-----3------" on a line of its own, then that epoch's "train_mean loss: …" lines.
    The fenced number is the epoch, not a count of records (which put each epoch's four values at four steps)."""
    text = "".join(f"-----{e}------\ntrain_mean loss: {2.5 - e / 10:.6f}\ntrain_accuracy: {0.3 + e / 20:.6f}\n"
                   f"test_mean loss: {2.0 - e / 10:.6f}\ntest_accuracy: {0.4 + e / 20:.6f}\n" for e in range(6))
    run = read(write(tmp_path / "log_train.txt", text))
    assert steps(run, "train_mean_loss") == steps(run, "test_accuracy") == [0, 1, 2, 3, 4, 5]
    # under an epoch heading of words, a fenced number numbers the epoch's data files (PointNet's own log): the
    # file's values stay as they were read before, one per epoch heading
    own = "".join(f"**** EPOCH {e:03d} ****\n" + "".join(f"----{f}-----\nmean loss: {2.0 - e / 10 - f / 100:.3f}\n"
                                                          for f in range(3)) for e in range(4))
    run = read(write(tmp_path / "log_own.txt", own))
    assert steps(run, "mean_loss") == [0, 1, 2, 3]


def test_chainer_print_report_with_blank_columns_under_its_progress_bar(tmp_path):
    """Chainer's PrintReport pads each column to its header and leaves a value not yet reported blank (validation
    between evaluations); its ProgressBar, drawn over with cursor codes, prints "10 iter, 0 epoch / 120000
    iterations", as many words as the header has columns. Each row's cells are read under the header cell they
    start at, the iteration beside the epoch is the step, and the progress lines are no rows."""
    header = "epoch       iteration   lr          main/loss   validation/main/loss\n"
    rows = []
    for i in range(1, 9):
        val = f"{1.2 - i / 20:<20.4f}" if i % 4 == 0 else ""
        rows.append(f"\x1b[4A\x1b[J{i // 4:<12d}{10 * i:<12d}{0.001:<12g}{2.0 - i / 10:<12.4f}{val}\n"
                    f"\x1b[J     total [..................................................]  0.01%\n"
                    f"this epoch [##########........................................] 20.53%\n"
                    f"{10 * i:>10d} iter, {i // 4} epoch / 120000 iterations\n"
                    f"  0.010923 iters/sec. Estimated time to finish: 127 days, 2:09:19.104062.\n")
    run = read(write(tmp_path / "job.o45696", "training begin\n" + header + "".join(rows)))
    assert steps(run, "main/loss") == [10, 20, 30, 40, 50, 60, 70, 80]
    assert values(run, "main/loss")[0] == pytest.approx(1.9)
    assert steps(run, "validation/main/loss") == [40, 80] and "iteration" not in run.tags


def test_a_printed_class_list_gives_the_class_count(tmp_path):
    """print("Classes:", dataset.classes) at the top of a captured log (a public CIFAR-100 subset run prints
    "Классы: ['bicycle', 'flatfish', 'train']"): its length is the run's own record of its class count. A list of
    numbers or with repeats is some other list."""
    epochs = "".join(f"Epoch [{e}/5] | Train Loss: {1.1 - e / 10:.3f} | Test Loss: {1.0 - e / 10:.3f}\n"
                     for e in range(1, 6))
    for head, count in (("Classes: ['bicycle', 'flatfish', 'train']\n", 3), ("Классы: ['a', 'b']\n", 2),
                        ("classes: [1, 2, 3]\n", None), ("class_names = ['cat', 'cat', 'dog']\n", None)):
        run = read(write(tmp_path / "train.log", head + epochs))
        assert run.meta.n_classes == count, head


# scikit-learn's print(classification_report(y_true, y_pred)), as it lays it out
PRINTED_REPORT = """              precision    recall  f1-score   support

     Negative       0.33      1.00      0.50        20
      Neutral       0.00      0.00      0.00        20
Very Positive       0.00      0.00      0.00        20

     accuracy                           0.33        60
    macro avg       0.11      0.33      0.17        60
 weighted avg       0.11      0.33      0.17        60
"""


def test_a_printed_classification_report_gives_the_class_count(tmp_path):
    """An evaluation's classification report lists the classes it met, one row each (a name may have spaces): the
    count, where nothing the log states says otherwise. Its rows are no values of the log, and the lines after it
    are read as ever."""
    epochs = [f"Epoch {e}/4, Loss: {1.1 - e / 10:.4f}\nValidation Loss: {1.0 - e / 10:.4f}\n" for e in range(1, 5)]
    run = read(write(tmp_path / "train.log", "".join(epochs[:2]) + PRINTED_REPORT + "".join(epochs[2:])))
    assert (run.meta.n_classes, run.meta.n_classes_source) == (3, "the log: classification report")
    assert sorted(run.tags) == ["Loss", "Validation_Loss"] and len(values(run, "Loss")) == 4
    # the classes the run names beat those its evaluation met
    run = read(write(tmp_path / "train.log", "num_classes: 4\n" + "".join(epochs) + PRINTED_REPORT))
    assert run.meta.n_classes == 4
    # one report of a split that lacked a class, one of all of them: the run has as many as the larger lists
    fewer = PRINTED_REPORT.replace("Very Positive       0.00      0.00      0.00        20\n", "")
    run = read(write(tmp_path / "train.log", "".join(epochs) + fewer + PRINTED_REPORT))
    assert run.meta.n_classes == 3


def test_a_multi_label_report_counts_no_classes(tmp_path):
    """A multi-label report (its samples avg) lists labels, each a yes-or-no task: no uniform guess over them."""
    report = PRINTED_REPORT.replace("     accuracy                           0.33        60\n", "") + (
        "  samples avg       0.11      0.33      0.17        60\n")
    epochs = "".join(f"Epoch {e}/4, Loss: {1.1 - e / 10:.4f}\n" for e in range(1, 5))
    assert read(write(tmp_path / "train.log", epochs + report)).meta.n_classes is None


def test_an_infinite_value_printed_again_reads_without_a_numpy_warning(tmp_path):
    """A value a loop prints as inf before its first evaluation ("keeping last val_loss=inf"), twice in an epoch:
    comparing it with itself by subtraction made NaN, and numpy's RuntimeWarning reached the user's terminal."""
    text = "".join(f"Epoch {e}/5 | Train Loss: {1 / e:.3f}\nSkipping validation (keeping last val_loss=inf)\n"
                   f"Skipping validation (keeping last val_loss=inf)\n" for e in range(1, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        run = read(write(tmp_path / "train.log", text))
    assert steps(run, "Train_Loss") == [1, 2, 3, 4, 5]


def test_tab_separated_names_and_values_are_pairs_not_a_table_header(tmp_path):
    """print(f"epoch:{e}", f"Accuracy:{acc}", f"Average precision:{p}", sep="\t"): each cell a name and its value."""
    text = "".join(f"epoch:{e}\tAccuracy:{70 + e}.5\tAverage precision:{71 + e}.25\n" for e in range(1, 6))
    run = read(write(tmp_path / "log.txt", text))
    assert steps(run, "Accuracy") == [1, 2, 3, 4, 5] and values(run, "Average_precision")[0] == 72.25


def test_keras_2_bars_per_batch_lines_are_not_epochs(tmp_path):
    batches = "".join(
        f"\r {n:5d}/60000 [=====>........] - ETA: 3s - loss: {2 - n / 60000:.4f} - acc: 0.5" + "\b" * 60
        for n in range(6000, 60000, 6000)
    )
    epoch = ("Epoch {e}/2\n" + batches + "\r60000/60000 [==============================] - 5s 83us/step - loss: {loss}"
             " - acc: 0.9 - val_loss: {val} - val_acc: 0.91\n")
    text = epoch.format(e=1, loss=0.3, val=0.25) + epoch.format(e=2, loss=0.2, val=0.21)
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "loss") == [1, 2] and values(run, "loss") == [0.3, 0.2]
    assert values(run, "val_loss") == [0.25, 0.21]


def test_keras_2_callback_lines_and_a_closing_evaluate_add_no_epoch(tmp_path):
    summary = "1875/1875 [==============================] - 5s 3ms/step - loss: {} - val_loss: {}\n"
    text = (
        "Epoch 1/2\n" + summary.format(0.30, 0.15)
        + "\nEpoch 00001: val_loss improved from inf to 0.15000, saving model to best.h5\n"
        + "Epoch 2/2\n" + summary.format(0.14, 0.11)
        + "\nEpoch 00002: ReduceLROnPlateau reducing learning rate to 0.0005000000237487257.\n"
        + "313/313 [==============================] - 1s 2ms/step - loss: 0.1200\n"
    )
    run = read(write(tmp_path / "train.log", text))
    assert values(run, "loss") == [0.30, 0.14] and values(run, "val_loss") == [0.15, 0.11]
    assert run.tags == ["loss", "val_loss"] and not run.warnings


def test_a_bare_split_name_is_its_loss_and_an_eval_line_names_its_split(tmp_path):
    text = "".join(f"[eval] iter {i}: train {3 - i / 100:.2f} val {3.1 - i / 100:.2f} lr 1e-3\n"
                   f"[train] iter {i}: loss {3 - i / 90:.2f}\n" for i in range(0, 300, 100))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles == {"train_loss": Role.TRAIN_LOSS, "val_loss": Role.VAL_LOSS, "eval_lr": Role.LR,
                         "loss": Role.TRAIN_LOSS}


def test_a_line_that_names_its_split_with_a_verb_gives_that_split(tmp_path):
    # pytorch/examples-style prints: the running validation loss is on a "Validate:" line, under a bare name
    text = "".join(f"Epoch {e} * Train Acc {50 + e} Train Loss {2 - e / 10:.2f}\n"
                   f"Validate: Time 0.003 Loss {1.9 - e / 10:.2f} Acc@1 {40 + e}\n" for e in range(1, 4))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["validate_Loss"] is Role.VAL_LOSS and run.roles["Train_Loss"] is Role.TRAIN_LOSS
    assert values(run, "validate_Loss") == [1.8, 1.7, 1.6]


def sb3_table(iteration: int) -> str:
    """One Stable-Baselines3 stdout table, as its HumanOutputFormat draws it."""
    rows = [("rollout/", ""), ("   ep_len_mean", f"{20 + 10 * iteration}"), ("   ep_rew_mean", f"{20 + 10 * iteration}"),
            ("time/", ""), ("   fps", "4410"), ("   total_timesteps", f"{2048 * iteration}")]
    if iteration > 1:
        rows += [("train/", ""), ("   entropy_loss", f"{-0.69 + iteration / 100:.3f}"), ("   loss", "8.36"),
                 ("   value_loss", "52.8")]
    rule = "-" * 41
    return "\n".join([rule, *(f"| {key:<23} | {value:<11} |" for key, value in rows), rule]) + "\n"


def test_stable_baselines3_tables_are_one_record_each_at_their_timesteps(tmp_path):
    text = "Using cpu device\nWrapping the env in a DummyVecEnv.\n" + "".join(sb3_table(i) for i in range(1, 5))
    run = read(write(tmp_path / "output.log", text))
    assert steps(run, "rollout/ep_rew_mean") == [2048, 4096, 6144, 8192]
    assert values(run, "rollout/ep_rew_mean") == [30, 40, 50, 60]
    assert values(run, "train/entropy_loss") == [-0.67, -0.66, -0.65]
    assert run.roles["rollout/ep_rew_mean"] is Role.SCORE and "time/total_timesteps" not in run.tags


def test_openai_baselines_tables_keep_their_whole_keys(tmp_path):
    rule = "-" * 39 + "\n"
    text = "Logging to /tmp/openai-2018\n" + "".join(
        rule + f"| rollout/return          | {-1840 + 500 * epoch:<9} |\n| reference_perturbed_... | 0.792     |\n"
        f"| total/epochs            | {epoch:<9} |\n| total/steps             | {2000 * epoch:<9} |\n" + rule + "\n"
        for epoch in range(1, 4))
    run = read(write(tmp_path / "log.txt", text))
    assert steps(run, "rollout/return") == [2000, 4000, 6000]
    assert values(run, "rollout/return") == [-1340, -840, -340]
    assert "reference_perturbed_" in run.tags


def test_a_printed_two_column_data_table_is_not_a_metrics_table(tmp_path):
    text = "| epoch | loss |\n|---|---|\n" + "".join(f"| {e} | {1 / e:.2f} |\n" for e in range(1, 6))
    text += "".join(f"epoch {e} loss {1 / e:.2f}\n" for e in range(1, 6))
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["loss"] and steps(run, "loss") == [1, 2, 3, 4, 5]


def test_timm_lines_give_epoch_and_batch_and_the_test_block_its_split(tmp_path):
    lines = []
    for epoch in range(3):
        lines += [f"Train: {epoch} [{batch:>4}/1251 ({batch // 13:>3}%)]  Loss: {6.9 - epoch / 10 - batch / 5000:.3f} "
                  f"({6.9 - epoch / 10:.2f})  Time: 0.312s, 3282.05/s  LR: 1.000e-04  Data: 0.010 (0.051)"
                  for batch in (0, 50, 100)]
        lines.append("Test: [   0/48]  Time: 1.951 (1.951)  Loss:  6.8516 (6.8516)  Acc@1:  0.2930 ( 0.2930)")
        # the batch's value, then the average over the pass so far: at its last batch, the pass's result
        lines.append(f"Test: [  48/48]  Time: 0.120 (0.250)  Loss:  6.9000 ({6.7 - epoch / 10:.4f})  "
                     f"Acc@1:  0.1000 ( {epoch + 0.5:.4f})  Acc@5:  2.0000 ( 1.6000)")
    run = read(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert steps(run, "Loss")[:4] == [0, 50, 100, 1251] and "Train" not in run.tags
    assert run.roles["test_Acc@1"] is Role.TEST_ACC and values(run, "test_Loss") == [6.7, 6.6, 6.5]
    assert values(run, "test_Acc@1") == [0.5, 1.5, 2.5] and steps(run, "test_Loss") == [100, 1351, 2602]
    assert not run.warnings


def test_a_list_of_per_class_overlap_scores_is_their_mean_and_other_lists_their_first(tmp_path):
    # nnU-Net v2: "Pseudo dice [np.float32(0.0), np.float32(0.91), …]", one value a foreground class; the score it
    # tracks is their mean, a class without a case (nan) left out. A list of other things keeps its first.
    lines = []
    for epoch in range(4):
        lines += [f"2026-07-28 17:08:15.413092: Epoch {epoch}",
                  f"2026-07-28 17:08:15.413092: train_loss {0.3 - epoch / 10:.4f}",
                  "2026-07-28 17:08:15.413500: Pseudo dice [" + ", ".join(
                      f"np.float32({value})" for value in (0.0, epoch / 5, "nan")) + "]",
                  f"2026-07-28 17:08:15.413600: lr [{0.01 / (epoch + 1):.4f}, 0.5]"]
    run = read(write(tmp_path / "training_log.txt", "\n".join(lines) + "\n"))
    assert values(run, "Pseudo_dice") == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert values(run, "lr") == pytest.approx([0.01, 0.005, 0.0033, 0.0025])


def test_a_test_pass_printed_batch_by_batch_is_its_summary_at_the_step_before_it(tmp_path):
    # pytorch/examples' ImageNet script (and MoCo, SimSiam … built on it): batch lines of the pass print each value
    # with its running average, then " * Acc@1 … Acc@5 …" the pass's result; the first batch alone is no evaluation
    lines = []
    for epoch in range(3):
        lines += [f"Epoch: [{epoch}][{batch:>4}/5005]\tTime  0.129 ( 0.605)\tLoss {2.3 - epoch / 10:.4e} "
                  f"({2.4 - epoch / 10:.4e})\tAcc@1  58.98 ( 52.55)\tAcc@5  78.91 ( 75.97)" for batch in (0, 5000)]
        lines.append("Test: [  0/196]\tTime  6.985 ( 6.985)\tLoss 9.9738e-01 (9.9738e-01)\tAcc@1  75.78 ( 75.78)")
        lines.append(f"Test: [100/196]\tTime  0.111 ( 0.647)\tLoss 2.2271e+00 ({1.6 - epoch / 10:.4e})\t"
                     "Acc@1  50.00 ( 65.00)")
        lines.append(f" * Acc@1 {62 + epoch:.3f} Acc@5 85.638")
    run = read(write(tmp_path / "main.log", "\n".join(lines) + "\n"))
    assert run.roles["test_Loss"] is Role.TEST_LOSS and values(run, "test_Loss") == [1.6, 1.5, 1.4]
    assert values(run, "test_Acc@1") == [62, 63, 64] and steps(run, "test_Acc@1") == [5000, 10005, 15010]
    assert values(run, "Loss")[:2] == [2.3, 2.3] and not run.warnings


def test_mmengine_epoch_train_lines_place_the_run_and_epoch_val_lines_name_their_split(tmp_path):
    lines = []
    for epoch in range(1, 4):
        lines += [f"05/01 10:00:00 - mmengine - INFO - Epoch(train)   [{epoch}][{batch:>4}/1251]  lr: 1.0000e-03  "
                  f"eta: 1 day, 0:00:00  time: 0.3000  loss: {6.9 - epoch / 10 - batch / 5000:.4f}"
                  for batch in (50, 100)]
        lines.append(f"05/01 10:10:00 - mmengine - INFO - Epoch(val) [{epoch}][50/50]    "
                     f"accuracy/top1: {epoch + 0.2:.4f}  time: 0.1000")
    run = read(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert steps(run, "loss") == [50, 100, 1301, 1351, 2552, 2602]
    assert run.roles["val_accuracy/top1"] is Role.VAL_ACC and steps(run, "val_accuracy/top1") == [100, 1351, 2602]


def test_a_validation_line_placed_by_its_iteration_names_its_split_before_it(tmp_path):
    # Megatron-LM: " validation loss at iteration 300 | lm loss value: 5.91E+00 | lm loss PPL: 3.69E+02 |"
    lines = [f" iteration {it:>8}/  500000 | learning rate: 1.500E-05 | lm loss: {7.5 - it / 400:.6E} | "
             "grad norm: 1.2 |" for it in range(100, 700, 100)]
    lines += [f" validation loss at iteration {it} | lm loss value: {7.0 - it / 400:.6E} | lm loss PPL: 3.69E+02 |"
              for it in (300, 600)]
    run = read(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert run.roles["validation_lm_loss_value"] is Role.VAL_LOSS and run.roles["lm_loss"] is Role.TRAIN_LOSS
    assert steps(run, "validation_lm_loss_value") == [300, 600]


def test_a_value_stated_in_a_sentence_is_named_by_what_comes_before_the_verb(tmp_path):
    text = "".join(f"Epoch: {e}| train loss: {1 / e:.3f}\nEpoch {e}: Val acc is {80 + e:.4f}%\n" for e in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["Val_acc"] is Role.VAL_ACC and values(run, "Val_acc") == [81, 82, 83]


def test_names_said_again_after_another_splits_loss_are_that_splits(tmp_path):
    text = "".join(f"Epoch {e} |  Train Loss: {11 - e:.4f} | Token Acc: 0.05 | Seq Acc: 0.0000 |  "
                   f"Val Loss: {10.9 - e:.4f} | Token Acc: 0.0{6 + e} | Seq Acc: 0.0000\n" for e in range(3))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["val_Token_Acc"] is Role.VAL_ACC and values(run, "val_Token_Acc") == [0.06, 0.07, 0.08]
    assert values(run, "train_Token_Acc") == [0.05, 0.05, 0.05] and run.roles["Val_Loss"] is Role.VAL_LOSS


@pytest.mark.parametrize("form", [
    "{e} \tTrain(loss={t:.3f}  | acc=0.80) \tValid(loss={v:.3f}  | acc=0.70)",
    "Epoch {e} train: loss={t:.3f} acc=0.80 val: loss={v:.3f} acc=0.70",
    "epoch {e}, train: {{'loss': {t:.3f}, 'acc': 0.80}}, val: {{'loss': {v:.3f}, 'acc': 0.70}}",
    "Epoch {e} - Training - loss: {t:.3f}, accuracy: 0.80 - Validation - loss: {v:.3f}, accuracy: 0.70",
    "Epoch {e}: [train] loss {t:.3f} acc 0.80 [val] loss {v:.3f} acc 0.70",
    # ESPnet's epoch summary, where a train name ("train_time") comes between the two groups
    "{e}epoch results: [train] iter_time=0.1, loss={t:.3f}, acc=0.80, train_time=100, [valid] loss={v:.3f}, acc=0.70",
])
def test_each_split_heading_a_group_of_the_same_names_gets_its_own_group(tmp_path, form):
    """A split printed as a heading over the names after it, twice in one line with the same names under each:
    every group is its heading's. Read with the line's one split word, the train group became the validation
    loss and the validation values were lost."""
    text = "".join(form.format(e=e, t=2 - e / 10, v=3 + e / 100) + "\n" for e in range(1, 5))
    run = read(write(tmp_path / "train.log", text))
    train_loss, val_loss = run.primary(Role.TRAIN_LOSS), run.primary(Role.VAL_LOSS)
    assert values(run, train_loss) == [1.9, 1.8, 1.7, 1.6] and values(run, val_loss) == [3.01, 3.02, 3.03, 3.04]
    assert {values(run, tag)[0] for tag, role in run.roles.items() if role in (Role.TRAIN_ACC, Role.VAL_ACC)} == {
        0.8, 0.7}


@pytest.mark.parametrize("form", [
    "Epoch {e} Acc: train=0.8 val=0.7 Loss: train={t:.3f} val={v:.3f}",
    "Epoch {e} | Loss: Train {t:.3f}, Val {v:.3f} | Accuracy: Train 0.8, Val 0.7",
    # litgpt's: the measure said with the first split carries to the bare split after it
    "Epoch 1 | iter {e} step {e} | loss train: {t:.3f}, val: {v:.3f} | acc train: 0.8, val: 0.7 | iter time: 9 ms",
])
def test_splits_bare_values_under_a_measures_heading_are_that_measures(tmp_path, form):
    """"Acc: train=0.8 val=0.7 Loss: train=… val=…": the splits' bare values after each heading are what it
    measures. Read as the loss a split's bare value otherwise is, the accuracies became the losses and the
    losses, their names said again, were dropped."""
    text = "".join(form.format(e=e, t=2 - e / 10, v=3 + e / 100) + "\n" for e in range(1, 5))
    run = read(write(tmp_path / "train.log", text))
    assert values(run, run.primary(Role.TRAIN_LOSS)) == [1.9, 1.8, 1.7, 1.6]
    assert values(run, run.primary(Role.VAL_LOSS)) == [3.01, 3.02, 3.03, 3.04]
    assert values(run, run.primary(Role.VAL_ACC)) == [0.7] * 4 and values(run, run.primary(Role.TRAIN_ACC)) == [0.8] * 4


def test_scores_printed_after_the_validation_loss_are_the_validations(tmp_path):
    """Public ICU-mortality and ship-detection logs print "Train loss: … | Val loss: … | AUROC: … | F1: …": the
    line reports its splits in turn, so the scores after the validation loss are validation scores. A score
    before it stays the training split's, and a setting after it (the LR) is no score of either."""
    text = "".join(f"13:39:23  INFO    → Train loss: {0.9 - e / 10:.4f}  |  Val loss: {0.8 - e / 10:.4f}  |  "
                   f"AUROC: 0.9{e}  |  F1: 0.6{e}  |  4s\n" for e in range(1, 4))
    run = read(write(tmp_path / "training.log", text))
    assert run.roles["val_AUROC"] is Role.SCORE and values(run, "val_F1") == [0.61, 0.62, 0.63]
    assert "AUROC" not in run.tags and "train_AUROC" not in run.tags
    text = "".join(f"Epoch {e} | train_loss {0.5 - e / 10:.3f} | acc 0.8{e} | val_loss {0.4 - e / 10:.3f} | "
                   f"ACC 0.9{e} | lr 0.001\n" for e in range(1, 4))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["val_ACC"] is Role.VAL_ACC and values(run, "val_ACC") == [0.91, 0.92, 0.93]
    assert run.roles["acc"] is Role.TRAIN_ACC and run.roles["lr"] is Role.LR


def test_a_heading_that_names_validation_makes_the_result_lines_under_it_validations(tmp_path):
    # BasicSR / IQA-PyTorch: the scores of each validation sit on lines of their own under a heading
    lines = ["2025-02-04 16:40:00 INFO: phase: val", "2025-02-04 16:40:01 INFO: val:[", "  val_freq: 800.0"]
    for it in (100, 200, 300, 400):
        lines.append(f"2025-02-04 16:48:00 INFO: [basel..][epoch: {it // 50}, iter: {it}, lr:(3e-05,)] "
                     f"l_mos: {1 / it:.4e}")
        if it % 200 == 0:
            lines += ["2025-02-04 17:11:42 INFO: Validation koniq10k", f"\t # srcc: {0.9 + it / 1e4:.4f}\tBest: 0.9",
                      ""]
    lines += ["  lr: 3e-05", "Traceback (most recent call last):",
              '  File "/envs/IQA/bin/torchrun", line 33, in <module>', "    sys.exit(main())"]
    run = read(write(tmp_path / "nohup.out", "\n".join(lines) + "\n"))
    assert steps(run, "validation_srcc") == [200, 400] and values(run, "validation_srcc") == [0.92, 0.94]
    assert "line" not in run.tags and "validation_lr" not in run.tags and "lr" in run.tags


def test_a_keras_log_that_lost_its_first_epoch_header_keeps_that_epoch(tmp_path):
    """A public Keras log copied from its first epoch's summary on: no "Epoch 1/10" above it. The report before
    "Epoch 2/10", with the same names as epoch 2's, is epoch 1's; a line of settings before it is not."""
    bar = "69121/69121 ━━━━━━━━━━━━━━━━━━━━ 3399s 49ms/step"
    reports = [f"{bar} - accuracy: 0.8{e} - loss: 0.9{9 - e} - val_accuracy: 0.8{e} - val_loss: 0.8{9 - e}"
               for e in range(1, 6)]
    lines = [reports[0]] + [line for e in range(2, 6) for line in (f"Epoch {e}/5", reports[e - 1])]
    run = read(write(tmp_path / "training_output.txt", "\n".join(lines) + "\n"))
    assert steps(run, "loss") == [1, 2, 3, 4, 5] and values(run, "loss")[0] == 0.98
    settings = ["learning_rate: 0.001 - batch_size: 32"] + lines[1:]
    run = read(write(tmp_path / "resumed.txt", "\n".join(settings) + "\n"))
    assert steps(run, "loss") == [2, 3, 4, 5] and "learning_rate" not in run.tags


def test_a_line_labelled_with_the_training_split_reports_training(tmp_path):
    """A public EEG classifier prints "  Train — Acc: 0.62  F1: 0.61" and "  Test  — Acc: …" under each
    "Epoch 001/60 | Loss: … | LR: …" line: the training split's word labels the line as an evaluation's word
    does."""
    lines = [line for e in range(1, 5) for line in (
        f"Epoch {e:03d}/60  |  Loss: {1.2 - e / 10:.4f}  |  LR: 3.00e-04",
        f"  Train — Acc: {0.6 + e / 100:.4f}  F1: {0.61 + e / 100:.4f}",
        f"  Test  — Acc: {0.62 + e / 100:.4f}  F1: {0.60 + e / 100:.4f}")]
    run = read(write(tmp_path / "train_log.txt", "\n".join(lines) + "\n"))
    assert {"train_Acc", "train_F1", "test_Acc", "test_F1"} <= set(run.tags)
    assert values(run, "train_Acc") == [0.61, 0.62, 0.63, 0.64] and steps(run, "train_F1") == [1, 2, 3, 4]


def test_a_later_launch_logging_a_name_with_its_epoch_leaves_an_earlier_launchs_values(tmp_path):
    """The same log's later launch prints "Epoch 1" on a line of its own and "Test Acc: …, F1: …" under it: its
    F1 has an epoch of its own, which says nothing of the first launch's F1 printed beside its epoch line."""
    first = [line for e in range(1, 5) for line in (
        f"Epoch {e:03d}/4  |  Loss: {1.2 - e / 10:.4f}",
        f"  Test  — Acc: {0.62 + e / 100:.4f}  F1: {0.6 + e / 100:.4f}")]
    later = [line for e in range(1, 5) for line in (
        f"Epoch {e}", f"Loss: {1.1 - e / 10:.4f}", f"Test Acc: {0.7 + e / 100:.4f}, F1: {0.71 + e / 100:.4f}")]
    runs = curvedoc.load(write(tmp_path / "train_log.txt", "\n".join(first + ["Starting training"] + later) + "\n"))
    assert len(runs) == 2 and values(runs[0], "test_F1") == [0.61, 0.62, 0.63, 0.64]
    assert not any("were not taken" in warning for warning in runs[0].warnings)


def test_the_trainers_evaluation_printed_as_the_test_splits_is_the_test_splits(tmp_path):
    """A public NER fine-tune prints the Trainer's dicts, then "Final test metrics: {'eval_loss': 0.117, …,
    'epoch': 3.0}": evaluate() names its results eval_* whatever it scored, and the line says the test split; the
    file ends on that line without its line end, its dict closed, so it is whole."""
    lines = [line for e in range(1, 4) for line in (
        f"{{'loss': {1 - e / 10:.3f}, 'learning_rate': 1e-05, 'epoch': {e - 0.43:.2f}}}",
        f"{{'eval_loss': {0.5 - e / 100:.3f}, 'eval_f1': 0.8, 'epoch': {e:.1f}}}")]
    lines += ["{'train_runtime': 1205.98, 'train_loss': 0.0726, 'epoch': 3.0}",
              "Final test metrics: {'eval_loss': 0.117, 'eval_f1': 0.88, 'epoch': 3.0}"]
    run = read(write(tmp_path / "logs.txt", "\n".join(lines)))
    assert values(run, "eval_loss") == [0.49, 0.48, 0.47] and values(run, "test_loss") == [0.117]
    assert values(run, "test_f1") == [0.88] and steps(run, "test_loss") == steps(run, "eval_loss")[-1:]


def test_loguru_s_source_location_is_no_value(tmp_path):
    text = "".join(f"INFO     | 2024-05-02 10:5{i}:14 | autotrain.trainers.common:on_log:226 - "
                   f"{{'loss': {1.6 - i / 10:.1f}, 'learning_rate': 2e-06, 'epoch': {i + 1}}}\n" for i in range(4))
    run = read(write(tmp_path / "output.log", text))
    assert run.tags == ["loss", "learning_rate"] and values(run, "loss") == [1.6, 1.5, 1.4, 1.3]


def test_yoloxs_module_and_line_are_no_value_and_a_metric_before_a_dash_stays_one(tmp_path):
    """YOLOX's loguru format names the module and the line only ("yolox.core.trainer:261 - epoch: 1/300, …"): no
    curve "yolox.core.trainer" at 261. A metric line's own "epoch:3 - loss: …" keeps its epoch."""
    text = "".join(f"2023-01-01 10:00:00 | INFO     | yolox.core.trainer:261 - epoch: {e}/300, iter: 10/10, "
                   f"mem: 5000Mb, total_loss: {15 - e:.1f}, iou_loss: 3.1, lr: 1.0e-04, size: 640\n" for e in (1, 2, 3))
    run = read(write(tmp_path / "train_log.txt", text))
    assert "yolox.core.trainer" not in run.tags and values(run, "total_loss") == [14, 13, 12]
    run = read(write(tmp_path / "other.log", "".join(f"epoch:{e} - loss: {1 / e:.3f}\n" for e in (1, 2, 3, 4))))
    assert steps(run, "loss") == [1, 2, 3, 4]


def test_paddleocrs_current_metric_is_the_evaluations_and_its_best_so_far_no_curve(tmp_path):
    text = "".join(f"[2023/01/01 10:00:00] ppocr INFO: epoch: [{e}/500], global_step: {e * 100}, lr: 0.001000, "
                   f"acc: 0.{e}, loss: {10 - e:.4f}, avg_reader_cost: 0.1 s, ips: 200 samples/s\n"
                   f"[2023/01/01 10:00:00] ppocr INFO: cur metric, acc: 0.{e}1, norm_edit_dis: 0.6, fps: 100\n"
                   f"[2023/01/01 10:00:00] ppocr INFO: best metric, acc: 0.{e}1, best_epoch: {e}\n" for e in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["eval_acc"] is Role.VAL_ACC and values(run, "eval_acc") == [0.11, 0.21, 0.31]
    assert values(run, "acc") == [0.1, 0.2, 0.3] and steps(run, "eval_acc") == [100, 200, 300]


def test_bare_splits_beside_a_named_loss_with_a_train_split_among_them_are_accuracies(tmp_path):
    """PyTorch Geometric's examples print "Epoch: 001, Loss: 1.9463, Train: 0.2786, Val: 0.2440, Test: 0.2370":
    the train split's bare value cannot be the loss printed by its name, so the splits' fractions are accuracies.
    A held-out split alone beside the loss ("Loss: 0.169 | Val: 0.027", a validation loss; "loss = 2.31  eval =
    0.11", an accuracy) says neither, and stays unnamed."""
    text = "".join(f"Epoch: {e:03d}, Loss: {1.9 - e / 10:.4f}, Train: 0.{e}786, Val: 0.{e}440, Test: 0.{e}370\n"
                   for e in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["Train_acc"] is Role.TRAIN_ACC and run.roles["Val_acc"] is Role.VAL_ACC
    assert values(run, "Test_acc") == [0.137, 0.237, 0.337] and run.roles["Loss"] is Role.TRAIN_LOSS
    run = read(write(tmp_path / "mesh.log", "".join(f"Epoch {e}/280 | Loss: 0.{9 - e} | Val: 0.0{e}\n"
                                                    for e in (1, 2, 3))))
    assert run.roles["Val"] is Role.OTHER


def test_flairs_qualified_f1_is_the_development_splits_score(tmp_path):
    """Flair's "DEV : loss 1.15 - f1-score (micro avg)  0.8100": the words in brackets qualify the measure before
    them, whose value follows after a space; a word in brackets before a count stays text."""
    text = "".join(f"2023-01-01 10:00:00,000 epoch {e} - iter {i}/100 - loss {2.5 - e / 10:.8f} - lr: 0.100000\n"
                   + (f"2023-01-01 10:00:00,000 DEV : loss {1.2 - e / 20:.8f} - f1-score (micro avg)  0.{80 + e}00\n"
                      if i == 100 else "") for e in (1, 2, 3) for i in (50, 100))
    run = read(write(tmp_path / "training.log", text))
    assert run.roles["dev_f1-score_micro_avg"] is Role.SCORE
    assert values(run, "dev_f1-score_micro_avg") == [0.81, 0.82, 0.83]


def test_a_step_counter_said_with_its_split_places_the_line(tmp_path):
    """Stable-Baselines3's EvalCallback prints "Eval num_timesteps=10000, episode_reward=-190.00 +/- 50.00": the
    environment steps place the evaluation, no curve of their own; fairseq's "valid_num_updates" places its
    validation record the same way."""
    text = "".join(f"Eval num_timesteps={t * 10000}, episode_reward=-{200 - t * 10:.2f} +/- 50.00\n"
                   f"Episode length: 200.00 +/- 0.00\n" for t in range(1, 5))
    run = read(write(tmp_path / "eval.log", text))
    assert steps(run, "eval_episode_reward") == [10000, 20000, 30000, 40000]
    assert "Eval_num_timesteps" not in run.tags


def test_steps_and_epochs_beyond_what_int64_holds_place_nothing(tmp_path):
    text = "epoch 1e300 loss 5\nstep 99999999999999999999 loss 4\n"
    text += "".join(f"epoch {e} loss {e}\n" for e in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "loss") == [1, 2, 3]


def test_no_step_nor_epoch_uses_the_line_order_and_drops_settings(tmp_path):
    text = "lr: 0.001\nbatch_size: 32\n" + "".join(f"Cumulative Reward: {r}\n" for r in (12.0, 28.0, 31.0, 15.0))
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["Cumulative_Reward"] and steps(run, "Cumulative_Reward") == [2, 3, 4, 5]
    assert any("order of the lines" in warning for warning in run.warnings)


def test_settings_before_training_become_hparams(tmp_path):
    text = "num_classes: 10\nlearning_rate: 3e-4\n" + "".join(f"step {s} loss {1 / (s + 1)}\n" for s in range(3))
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["loss"]
    assert run.meta.hparams == {"num_classes": 10.0, "learning_rate": 3e-4} and run.meta.n_classes == 10


def test_nanogpts_printed_vocabulary_is_the_runs_vocabulary(tmp_path):
    text = ("tokens per iteration will be: 16,384\nfound vocab_size = 65 (inside data/shakespeare_char/meta.pkl)\n"
            + "".join(f"iter {i}: loss {4.2 - i / 100:.4f}, time 12.34ms, mfu 1.00%\n" for i in range(0, 50, 10)))
    run = read(write(tmp_path / "train.log", text))
    assert (run.meta.n_classes, run.meta.n_classes_kind) == (65, "vocabulary")


def test_a_physics_informed_nets_loss_terms_at_spaced_epochs(tmp_path):
    # W&B output.log of a PINN: "EPOCH :   1000/ 50001 | Loss_PDE : 500653.3750| Loss_DATA : …"
    text = "".join(f"EPOCH : {e:>6}/ 50001 | Loss_PDE : {1e6 / (e + 1):.4f}| Loss_DATA : {60 - e / 1000:.4f} | "
                   f"RHO : 99.9284 | VIS : 0.004959\n" for e in range(0, 5000, 1000))
    run = read(write(tmp_path / "output.log", text + "\nFinal learned rho: 99.1909\nmodel saved\n"))
    assert set(run.tags) == {"Loss_PDE", "Loss_DATA", "RHO", "VIS"}
    assert run.roles["Loss_PDE"] is run.roles["Loss_DATA"] is Role.TRAIN_LOSS
    assert steps(run, "Loss_DATA") == [0, 1000, 2000, 3000, 4000] and values(run, "Loss_DATA")[-1] == 56


def mnist_session(train_bsize: int, epochs: int, config: list[str] | None = None, scale: float = 1) -> str:
    """One session of a script that prints its configuration at each start, then per-batch losses and a test line
    whose loss is printed with too few decimals."""
    prefix = "[2020-01-14 21:39:13 main.py:47] INFO     "
    config = config or ["datapath:/data/MNIST/train.csv", "epoch:20", "gamma:0.7", "gpu:0", "lr:0.01",
                        "momentum:0.9", "testpath:/data/MNIST/test.csv", f"train_bsize:{train_bsize}", "val_bsize:1"]
    lines = [*config, "Number of model parameters: 61610", "Not Resume"]
    for epoch in range(1, epochs + 1):
        lines.append(f"This is {epoch - 1}-th epoch")
        lines += [f"Epoch: {epoch}/20   Training Loss: {scale / (epoch + batch):.3f}" for batch in range(4)]
        lines.append(f"Epoch: {epoch}/20    Test Average loss: 0.000, Accuracy: {6100 + epoch}/6300 ({epoch}%)")
    return "".join(prefix + line + "\n" for line in lines)


def test_a_configuration_printed_at_each_start_is_settings_not_curves(tmp_path):
    # "epoch:20" is the number of epochs to run, no epoch the settings after it are logged at
    text = mnist_session(4, 2, scale=2) + mnist_session(20, 3)
    run = read(write(tmp_path / "training.log", text))
    assert set(run.tags) == {"Training_Loss", "Test_Average_loss", "test_Accuracy"}  # no gamma, lr, "This"
    # the settings are those the restarted session printed, whose values replace the first session's
    assert run.meta.hparams == {"gamma": 0.7, "gpu": 0, "lr": 0.01, "momentum": 0.9, "train_bsize": 20,
                                "val_bsize": 1, "model_parameters": 61610}
    # the second session starts epoch 1 again: a restart, whose values are kept
    assert steps(run, "Training_Loss") == list(range(12)) and values(run, "Training_Loss")[0] == 1
    assert run.roles["test_Accuracy"] is Role.TEST_ACC
    assert values(run, "test_Accuracy")[-1] == pytest.approx(6103 / 6300)
    # a held-out loss printed as 0.000 at every evaluation stays what was printed: the rules read a loss that is
    # exactly 0 everywhere as one that measured nothing
    assert values(run, "Test_Average_loss") == [0, 0, 0]
    assert any("restarted run" in warning for warning in run.warnings)


def test_a_configuration_whose_metric_comes_right_after_its_epoch_count_is_still_settings(tmp_path):
    config = ["epoch:20", "lr:0.01", "gamma:0.7"]
    text = mnist_session(4, 2, config) + mnist_session(4, 3, config)
    run = read(write(tmp_path / "training.log", text))
    assert "lr" not in run.tags and run.meta.hparams["lr"] == 0.01


def test_an_epoch_written_as_a_setting_that_headed_a_loss_heads_its_epoch_past_a_time(tmp_path):
    """A public structural-estimation log prints "Epoch: 1", then tab-indented "Cross entropy loss: …", "Eval time:
    0.96", "Train loss: …": once a loss stood under it, "Epoch: 1" heads that epoch; the time after it shows no
    configuration (which "epoch:20" over "lr:0.01" and "gamma:0.7" still is)."""
    text = "".join(f"Epoch: {n}\n\tCross entropy loss: {5 / n:.3f}\n\tEval time: 0.96\n\tTrain loss: {4 / n:.3f}\n"
                   for n in range(1, 5))
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "Train_loss") == [1, 2, 3, 4] and steps(run, "Cross_entropy_loss") == [1, 2, 3, 4]
    assert not any("order of the lines" in warning for warning in run.warnings)


@pytest.mark.parametrize("header", ["Epoch {n}/3", "Step: {n}", "=== Epoch {n} ==="])
def test_a_header_of_a_position_heads_its_metric_lines_past_one_that_names_none(tmp_path, header):
    text = "".join(f"{header.format(n=n)}\nsamples seen: {512 * n}\ntrain loss: {1 / n:.2f}\n" for n in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["train_loss"] and steps(run, "train_loss") == [1, 2, 3]


def test_git_merge_conflict_markers_are_no_lines_and_both_versions_are_read(tmp_path):
    ours = "".join(f"epoch {e} loss {2 / e:.2f}\n" for e in (1, 2))
    theirs = "".join(f"epoch {e} loss {1 / e:.2f}\n" for e in (1, 2, 3))
    text = (f"<<<<<<< HEAD\n{ours}||||||| merged common ancestors\nepoch 1 loss 9.99\n=======\n{theirs}"
            ">>>>>>> 437352c110228df91c51503d92636f758eccfe29\n=======\nepoch 4 loss 0.2\n")
    run = read(write(tmp_path / "training.log", text))
    assert run.tags == ["loss"] and steps(run, "loss") == [1, 2, 3, 4]
    assert values(run, "loss") == [1, 0.5, 0.33, 0.2]  # the later version where both logged; never the base's
    assert any("merge-conflict markers" in warning for warning in run.warnings)


LLM_ANSWER = """Archibald eats 1 apple a day for two weeks. Over these 7 weeks, how many apples does he average a week?

**Step 1: First Two Weeks**

* Archibald eats 1 apple per day for 2 weeks.
* This means he eats 1 * 14 = 14 apples.
* There are 12 months in a year.
James paves a new parking lot.  It is 400 feet by 500 feet.  Only 80% of that is useable for parking.
**Step 2: Total and Average**
**Final answer:** Sansa earns $195 every 3 days.
===
"""


def test_prose_a_training_prints_is_not_read(tmp_path):
    # an LLM's RL fine-tuning prints the prompts and the model's answers between its own lines
    text = "Print found 2000 lines of training data\n" + "".join(
        f"=== Epoch {epoch}/2 ===\n{LLM_ANSWER}" + "".join(
            f"Step: {step} | Loss: {0.5 / step:.4f} | KL: 0.0{step}\n" for step in range(3 * epoch - 2, 3 * epoch + 1))
        for epoch in (1, 2))
    run = read(write(tmp_path / "ppo.log", text))
    assert set(run.tags) == {"Loss", "KL"} and steps(run, "Loss") == [1, 2, 3, 4, 5, 6]
    assert not run.meta.hparams and not run.warnings


def test_quoted_text_holds_no_values_and_a_quoted_number_is_one(tmp_path):
    text = "".join(f"{{'prompt': 'She has 5 apples and eats 2', 'loss': {1 / s:.2f}, 'lr': '0.001', "
                   f"'ratio': tensor(1.0001, device='mps:0'), 'step': {s}}}\n" for s in (1, 2, 3))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "lr", "ratio"} and values(run, "lr") == [0.001] * 3


def test_a_dict_printed_before_every_step_line_is_that_steps(tmp_path):
    lines = ["=== Epoch 1/2 ===", "[System Health] RAM: 63.4% | Swap Used: 4.67 GB"]
    for step in range(1, 7):
        if step == 4:
            lines += ["=== Epoch 2/2 ===", "**Step 1: Hours per month**", "* There are 12 months in a year."]
        statistics = (f"{{'prompt_id_length': {90 + step}, 'reward_mean': tensor({step / 100:.4f}, device='mps:0'), "
                      f"'policy_loss': -0.00{step}, 'value_loss': 0.03{step}}}")
        lines += [f"{step - 1}", statistics, f"Step: {step} | Loss: {0.5 / step:.4f} | KL: 0.000{step}",
                  f"[System Health] RAM: {50 + step}.0% | Swap Used: 20.18 GB"]
    run = read(write(tmp_path / "ppo.log", "\n".join(lines) + "\n"))
    for tag in ("reward_mean", "policy_loss", "value_loss", "prompt_id_length", "Loss"):
        assert steps(run, tag) == [1, 2, 3, 4, 5, 6]
    assert values(run, "reward_mean") == [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    assert run.roles["reward_mean"] is Role.SCORE and run.roles["value_loss"] is Role.TRAIN_LOSS
    assert not run.warnings


def test_an_evaluation_printed_after_every_epoch_line_stays_an_evaluation(tmp_path):
    # once an epoch, after its line: a bare accuracy there is the evaluation's, not a training curve
    text = "".join(f"Epoch {e} loss {1 / e:.2f}\naccuracy: 0.{e}\nval_loss: {1.1 / e:.2f}\n" for e in (1, 2, 3, 4))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "val_loss"} and steps(run, "val_loss") == [1, 2, 3, 4]


def test_a_split_and_its_epoch_out_of_the_total_in_brackets_place_every_line(tmp_path):
    text = "".join(
        f"100%|##########| 132/132 [00:30<00:00,  4.32it/s]\n"
        f"[ Train | {n:03d}/100 ] loss = {2 / n:.5f}, acc = {n / 10:.5f}\n"
        f"[ Valid | {n:03d}/100 ] loss = {1 / n:.5f}, acc = {n / 20:.5f}\n"
        + (f"[ Valid | {n:03d}/100 ] loss = {1 / n:.5f}, acc = {n / 20:.5f} -> best\n"
           f"Best model found at epoch {n}, saving model\n" if n % 2 else "")
        for n in (1, 2, 3, 4)
    ) + "accuracy: 1.0\nF1: 1.0\nrecall: 1.0\n"
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss", "acc", "valid_loss", "valid_acc"}  # the closing summary is no curve
    for tag in run.tags:
        assert steps(run, tag) == [1, 2, 3, 4]
    assert values(run, "valid_loss") == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4], abs=1e-5)
    assert run.roles["valid_loss"] == Role.VAL_LOSS and run.roles["loss"] == Role.TRAIN_LOSS
    assert not any("logged again" in warning for warning in run.warnings)  # a line printed again is one point


def test_a_step_in_brackets_before_the_first_pair_places_its_line(tmp_path):
    prefix = "I0103 20:09:51.218508 139972513848384"
    text = f"{prefix} train.py:150] Step: 1/100 warmup_lr: 0.001\n" + "".join(
        f"{prefix} logging_writer.py:35] [{n}] img_sec_core_train=18.1, train_loss={1 / n:.6f}\n"
        f"{prefix} train.py:201] Step: {n}/100 {n}%, img/sec/core: 18.1\n"
        f"{prefix} local.py:50] Created artifact [10] Profile of type ArtifactType.URL and value None.\n"
        for n in (10, 20, 30, 40)
    )
    run = read(write(tmp_path / "train.log", text))
    assert steps(run, "train_loss") == [10, 20, 30, 40]  # not each at the "Step:" line before it
    assert values(run, "train_loss") == pytest.approx([0.1, 0.05, 1 / 30, 0.025], rel=1e-4)
    assert not any("restart" in warning or "went back" in warning for warning in run.warnings)


def test_the_training_splits_step_in_brackets_after_absls_prefix_places_its_line(tmp_path):
    # a JAX trainer's absl log (glog's prefix): its settings, a "[Train N/M] {…}" line every 10 of its 1,882 steps,
    # then a final evaluation's progress through its batches
    prefix = "I1216 14:22:57.913980 139628846601088"
    text = (f"{prefix} train.py:184] training_steps: 1882\n" + "".join(
        f"{prefix} train.py:577] [Train {n}/1882] {{'grads_finite': 1.0, 'train_loss': {1 / n:.6f}}}\n"
        for n in (10, 20, 30, 40))
        + "".join(f"{prefix} train.py:398] [Val {n}/287] {{'eval_batch': {n}}}\n" for n in (10, 20)))
    run = read(write(tmp_path / "train_log.txt", text))
    assert set(run.tags) == {"grads_finite", "train_loss"}  # the evaluation's batch counts are no curve
    assert steps(run, "train_loss") == [10, 20, 30, 40]
    assert values(run, "train_loss") == pytest.approx([0.1, 0.05, 1 / 30, 0.025], rel=1e-4)
    assert run.roles["train_loss"] == Role.TRAIN_LOSS
    assert run.meta.hparams["training_steps"] == 1882
    assert not any("order of the lines" in warning for warning in run.warnings)


def conlleval(accuracy: float, f1: float) -> str:
    """What conlleval prints for one evaluation of a named-entity tagger: counts, totals, one line per entity type."""
    return (f"processed 74542 tokens with 5600 phrases; found: 5611 phrases; correct: 5570.\n"
            f"accuracy: {accuracy:6.2f}%; precision: {f1:6.2f}%; recall: {f1:6.2f}%; FB1: {f1:6.2f}\n"
            + "".join(f"{kind:>17}: precision: {f1:6.2f}%; recall: {f1:6.2f}%; FB1: {f1:6.2f}  {count}\n"
                      for kind, count in (("FOREST", 2873), ("PARK", 6627), ("UNIT", 6518))))


def test_conllevals_totals_are_the_scores_of_the_split_its_heading_names(tmp_path):
    # a Chinese NER repository's log (logging's prefix on every line): after each epoch the dev and the test split
    # are tagged and scored by conlleval under an "evaluate:<split>" heading; no line names a step
    prefix = "2020-02-10 21:04:50,178 - log\\train.log - INFO - "
    evaluations = [(7.9, 0.0), (62.0, 66.0), (82.0, 71.0), (99.95, 99.3)]
    text = "".join(f"{prefix}evaluate:{split}\n"
                   + "".join(prefix + line + "\n" for line in conlleval(a, f).splitlines())
                   + (f"{prefix}new best {split} f1 score:{f:.3f}\n" if f else "")
                   for a, f in evaluations for split in ("dev", "test"))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {f"{split}_{name}" for split in ("dev", "test")
                             for name in ("accuracy", "precision", "recall", "FB1")}
    assert values(run, "test_accuracy") == pytest.approx([a for a, _ in evaluations])
    assert run.roles["dev_accuracy"] == Role.VAL_ACC and run.roles["test_accuracy"] == Role.TEST_ACC
    assert run.roles["dev_FB1"] == Role.SCORE  # the entity types' own lines are no points of it
    assert len(values(run, "dev_FB1")) == len(evaluations)


def test_a_printed_dict_of_settings_is_settings(tmp_path):
    text = (
        "Hyperparameters: {'accum_steps': 8, 'batch': 512, 'model': {'hidden_size': 768}, "
        "'pp': {'crop': 384, 'test': 'test'}, 'grad_norm_clip': 1.0}\n"
        + "".join(f"step {n}: train_loss {1 / n:.3f}\n" for n in (1, 2, 3))
        + "config = {'eval_every': 100, 'epoch': 20}\n"
    )
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["train_loss"] and steps(run, "train_loss") == [1, 2, 3]
    assert run.meta.hparams == {"accum_steps": 8, "batch": 512, "hidden_size": 768, "crop": 384,
                                "grad_norm_clip": 1.0, "eval_every": 100, "epoch": 20}


def test_a_value_printed_again_under_its_words_reordered_is_one_curve(tmp_path):
    text = "".join(
        f"Step: {n} Learning rate: 0.0075000, Test accuracy: {0.6 + n / 1000:.5f}\n"
        f"[{n}] accuracy_test={0.6 + n / 1000 + 1e-7}, lr=0.007500\n"
        f"[{n}] loss_test={n / 1000 + 0.2}\n"
        f"test loss: {n / 1000 + 0.3}\n"  # another value under the same words: another curve
        for n in (100, 200, 300)
    )
    run = read(write(tmp_path / "train.log", text))
    assert "Test_accuracy" in run.tags and "accuracy_test" not in run.tags
    assert {"loss_test", "test_loss"} <= set(run.tags)


# ---------------------------------------------------------------------------------------------- bytes and bounds

def test_crlf_and_a_utf8_byte_order_mark(tmp_path):
    text = "\ufeff" + "".join(f"epoch {e}: loss {1 / e}\r\n" for e in range(1, 4))
    run = read(write(tmp_path / "train.log", text.encode("utf-8")))
    assert steps(run, "loss") == [1, 2, 3] and not run.warnings


def test_utf16_as_powershell_redirects_it(tmp_path):
    text = "".join(f"epoch {e}: loss {1 / e}\r\n" for e in range(1, 4))
    run = read(write(tmp_path / "train.log", text.encode("utf-16")))
    assert values(run, "loss") == pytest.approx([1, 0.5, 1 / 3])


@pytest.mark.parametrize("content, problem", [
    (b"", "empty file"),
    (b"\n \r\n\t", "empty file"),
    (b"\xff\xfe", "empty file"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 9\n", "Git LFS pointer"),
])
def test_unreadable_text_files_give_one_line_errors(tmp_path, content, problem):
    path = write(tmp_path / "train.log", content)
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path)
    assert str(error.value).startswith(f"{path}: ") and problem in str(error.value) and "\n" not in str(error.value)


CUT_LINES_BEFORE = "step 1 loss 0.93 acc 0.51{}\nstep 2 loss 0.82 acc 0.62{}\nstep 3 loss 0.74 acc 0.70{}\n"


@pytest.mark.parametrize("lines_end, last", [
    ("", "step 4 loss 0.61 acc 0.7"),  # cut inside the number: 0.7 of 0.71, fewer decimals than the lines before
    (" lr 0.001", "step 4 loss 0.61 acc 0.71"),  # cut before its last number: it names less than its kind
    (" lr 30", "step 4 loss 0.61 acc 0.71 lr 3"),  # same names, but a whole number with fewer digits: 3 of 30
])
def test_a_last_line_cut_mid_write_is_dropped(tmp_path, lines_end, last):
    run = read(write(tmp_path / "train.log", CUT_LINES_BEFORE.format(*[lines_end] * 3) + last))
    assert steps(run, "loss") == [1, 2, 3]
    assert any("last record cut off" in warning for warning in run.warnings)


@pytest.mark.parametrize("before, last", [
    ("".join(f"epoch {epoch:02d}, loss: 0.26695, acc: 0.89347, val_loss: 0.29012, val_accuracy: 0.8{epoch}987\n"
             for epoch in range(2, 10)),
     "epoch 10, loss: 0.04553, acc: 0.98613, val_loss: 0.45561, val_accuracy: 0.88960"),
    ("step 1 loss 0.9\nstep 2 loss 0.8\nstep 3 loss 0.7\n", "step 4 loss 0.6"),  # one decimal, as every loss before
    ("step 1 loss 4.7e-05\nstep 2 loss 3.1e-05\nstep 3 loss 2.2e-05\n", "step 4 loss 1.2e-05"),
    # Keras: each summary line takes the epoch of the header above it, which must not make it another kind of line
    ("".join(f"Epoch {epoch}/10\n100/100 - 1s - loss: 0.4{epoch}12 - accuracy: 0.6{epoch}34\n" for epoch in range(1, 7))
     + "Epoch 7/10\n", "100/100 - 1s - loss: 0.4712 - accuracy: 0.6734"),
])
def test_a_whole_last_line_without_its_line_end_is_kept(tmp_path, before, last):
    """W&B's output.log of a finished run ends so: the last epoch's line, no line end after it."""
    run = read(write(tmp_path / "output.log", before + last))
    tag = last.rsplit(" ", 2)[1].rstrip(":")
    assert steps(run, tag)[-1] in (4, 7, 10) and values(run, tag)[-1] == float(last.rsplit(" ", 1)[1])
    assert not run.warnings


def test_a_100_mb_line_keeps_only_its_end(tmp_path):
    path = tmp_path / "train.log"
    with open(path, "wb") as handle:
        handle.write(b"step 1 loss 0.9\nstep 2 loss 0.8\n")
        handle.write(b"x" * (100 << 20))
        handle.write(b" step 3 loss 0.7\n")
    run = read(path)
    assert steps(run, "loss") == [1, 2, 3]
    assert any("1 line(s) longer than 64 KiB" in warning for warning in run.warnings)


def test_a_100_mb_file_of_hostile_lines_reads_to_its_last_record(tmp_path):
    """10 MB of lines built to make a backtracking pattern explode (words without values, endless digits,
    brackets, quotes, bars, pairs by the thousand), each near the 64 KiB line cap, then one 90 MB line."""
    hostile = [
        "a b c d e f g h " * 4096, "9" * 65000, "epoch [" * 9000, "'a': '" * 10000, "5%|" * 20000,
        "loss: " * 10000, "\x1b[" * 30000, "x nan " * 10000, "k1 1 " * 13000, "Epoch 3: 50%|" + "█" * 30000,
        " ".join(f"name{i} {i}" for i in range(6000)), "ab ab ab ab 1 " * 4600,
    ]
    path = tmp_path / "train.log"
    with open(path, "wb") as handle:
        handle.write(b"".join(f"step {s} loss {1 / (s + 1):.3f}\n".encode() for s in range(5)))
        for _ in range(14):
            for line in hostile:
                handle.write(line[:65000].encode() + b"\n")
        handle.write(b"z" * (90 << 20) + b"\n")
        handle.write(b"step 9 loss 0.1\n")
        size = handle.tell()
    assert size > 90 << 20
    run = read(path)
    assert steps(run, "loss")[-1] == 9


def test_the_names_of_one_line_and_of_one_log_are_bounded(tmp_path):
    line = " ".join(f"m{i} {i}" for i in range(textlog.MAX_PAIRS_PER_LINE + 500))
    run = read(write(tmp_path / "train.log", "".join(f"step {s} {line}\n" for s in range(3))))
    assert len(run.tags) == textlog.MAX_PAIRS_PER_LINE - 1  # the step is the first pair of each line


def test_the_values_kept_for_a_session_that_may_start_over_are_bounded(tmp_path):
    """Values printed between lines with a step that are taken as no points wait for a restart that may follow
    them; a log whose steps go on drops them as it reads, and one whose positions cannot be compared (epoch-only
    lines between step-only ones) keeps only the latest MAX_LATE_SETTINGS."""
    lines = "".join(f"epoch {i} loss 0.5\nseed: {i}\nstep {i} loss 0.4\nseed: {i}\n" for i in range(1, 12_001))
    parsed = textlog.parse(write(tmp_path / "train.log", lines))
    assert 0 < len(parsed.late_settings) <= textlog.MAX_LATE_SETTINGS
    going_on = "".join(f"step {i} loss 0.5\nseed: {i}\n" for i in range(1, 12_001))
    assert len(textlog.parse(write(tmp_path / "on.log", going_on)).late_settings) <= 1


# ---------------------------------------------------------------------------------------------- discovery

def test_notes_in_a_folder_are_passed_over_and_named_ones_are_an_error(tmp_path):
    write(tmp_path / "README.txt", "Trained on 4 GPUs for 3 days.\nSee the paper, table 2 and figure 3.\n")
    write(tmp_path / "requirements.txt", "torch==2.1.0\nnumpy>=1.24\n")
    write(tmp_path / "train.log", "".join(f"epoch {e} loss {1 / e}\n" for e in range(1, 4)))
    runs = curvedoc.load(tmp_path)
    assert [run.name for run in runs] == ["train.log"] and runs.problems == []
    with pytest.raises(NotALog) as error:
        curvedoc.load(tmp_path / "README.txt")
    assert str(error.value).startswith(f"{tmp_path / 'README.txt'}: no training log in it")
    assert "\n" not in str(error.value)


def test_a_folder_of_notes_only_holds_no_training_log(tmp_path):
    write(tmp_path / "notes.txt", "nothing to see\n")
    with pytest.raises(CurvedocError, match="no training logs found"):
        curvedoc.load(tmp_path)


@pytest.mark.parametrize("name", ["train.log", "nohup.out", "slurm-1234.out", "stdout.txt",
                                  "SSD_train.o45696", "SSD_train.e45696"])
def test_captured_output_names(tmp_path, name):
    write(tmp_path / name, "".join(f"epoch {e} loss {1 / e}\n" for e in range(1, 4)))
    (source,) = discover(tmp_path).sources
    assert source.family == "text"
    assert load_one(tmp_path / name).tags == ["loss"]


def test_a_compiled_object_file_is_no_job_output(tmp_path):
    (tmp_path / "kernel.o").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(64))
    write(tmp_path / "train.o12", "".join(f"epoch {e} loss {1 / e}\n" for e in range(1, 4)))
    assert [source.path.name for source in discover(tmp_path).sources] == ["train.o12"]


def test_tables_saved_as_log_or_txt_are_still_tables(tmp_path):
    write(tmp_path / "training.log", "epoch,accuracy,loss\n0,0.5,1.2\n1,0.6,1.0\n")
    write(tmp_path / "metrics.txt", "step loss acc\n0 1.0 0.1\n1 0.8 0.3\n")
    assert sorted((s.family, s.path.name) for s in discover(tmp_path).sources) == [
        ("csv", "metrics.txt"), ("csv", "training.log"),
    ]


def test_unreadable_text_log_is_a_problem_not_a_silent_skip(tmp_path, monkeypatch):
    path = write(tmp_path / "train.log", "epoch 1 loss 0.5\n")
    write(tmp_path / "other.log", "".join(f"epoch {e} loss {1 / e}\n" for e in range(1, 4)))
    real_open = open

    def deny(file, *args, **kwargs):
        if str(file) == str(path) and args[:1] == ("rb",):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    runs = curvedoc.load(tmp_path)
    assert [run.name for run in runs] == ["other.log"]
    assert runs.problems == [f"{path}: permission denied"]


def test_add_text_log_leaves_a_builder_alone_when_the_file_holds_no_log(tmp_path):
    builder = RunBuilder(tmp_path, "wandb")
    with pytest.raises(NotALog):
        textlog.add_text_log(builder, write(tmp_path / "output.log", "Using cpu device\nDone.\n"))
    assert not builder.has_points and builder.meta.files == [] and builder.warnings == []


def test_a_run_killed_in_its_first_epoch_says_so(tmp_path):
    bars = "".join(f"\r{n:2d}/43 ━━━━━━━━━━ 1s 2ms/step - accuracy: 0.5 - loss: 1.2" for n in range(1, 20))
    with pytest.raises(NotALog, match="only the progress bar of an unfinished epoch"):
        curvedoc.load(write(tmp_path / "train.log", f"Epoch 1/10\n{bars}\n"))


# ---------------------------------------------------------------------------------------------- public logs

WILD_TEXT_LOGS = {
    # its "📊 Evaluation Results:" blocks ("   Loss: 0.5301", "   Perplexity: 1.70") are the evaluation's
    "textlog/AnshDhalla1__PyTorch_finetune_GPT2/train.log": {"Loss", "PPL", "LR", "Grad", "Avg_Loss", "evaluation_Loss",
                                                              "evaluation_Perplexity", "evaluation_PPL"},
    "textlog/Barber0__LLM-pretrain/train.log": {"loss", "time", "ntokens"},
    "textlog/arose26__napkin-100k/out/train.log": {"loss", "eps", "buf", "vs-random", "vs-greedy"},
    "textlog/chandler-scott__proximal-policy-optimization/out/train.log": {"Cumulative_Reward"},
    "textlog/ethellight565__nanogpt-seis/checkpoints/train.log": {"loss", "train_loss", "val_loss", "eval_lr"},
}


@pytest.mark.skipif(not WILD.is_dir(), reason="the public logs in ../shared/wild are not here")
@pytest.mark.parametrize("relative, tags", sorted(WILD_TEXT_LOGS.items()))
def test_public_text_logs(relative, tags):
    run = load_one(WILD / relative)
    assert set(run.tags) == tags
    assert len(run.scalars) >= 10 or relative.startswith("textlog/arose26")


@pytest.mark.skipif(not WILD.is_dir(), reason="the public logs in ../shared/wild are not here")
def test_public_logs_with_a_step_restarting_each_epoch_and_an_evaluation_block():
    run = load_one(WILD / "textlog/AnshDhalla1__PyTorch_finetune_GPT2/train.log")
    assert steps(run, "Loss")[-1] == 13001 and run.series("Loss")["step"].is_monotonic_increasing
    assert run.meta.n_classes == 50257 and "vocab_size" in run.meta.n_classes_source


@pytest.mark.skipif(not WILD.is_dir(), reason="the public logs in ../shared/wild are not here")
def test_a_public_file_that_is_no_training_log_is_refused_when_named():
    with pytest.raises(NotALog):
        curvedoc.load(WILD / "textlog/chandler-scott__proximal-policy-optimization/out/trained_walker.log")


YOLOV5_EPOCH = (
    "     Epoch   gpu_mem       box       obj       cls     total    labels  img_size\n"
    "       {e}/2     2.62G   0.09784   0.02412   0.03929    0.1613         5       640:   0% 0/3692 [00:02]\n"
    "  warnings.warn(\n"
    "       {e}/2     2.63G   {box:.4f}   0.01211   0.02063   {total:.4f}         2       640: 100% 3692/3692\n"
    "               Class      Images      Labels           P           R      mAP@.5  mAP@.5:.95: 100% 1846/1846\n"
    "                 all        1846        2345       {p:.2f}       0.83       0.781       0.492\n"
)


def test_ultralytics_yolov5_epoch_tables(tmp_path):
    """YOLOv3/v5 print a table a line under its header: the epoch of the total, losses named only by their term."""
    text = "Starting training for 3 epochs...\n" + "".join(
        YOLOV5_EPOCH.format(e=e, box=0.05 - e / 100, total=0.08 - e / 100, p=0.6 + e / 10) for e in range(3))
    run = read(write(tmp_path / "output.log", text))
    assert steps(run, "total_loss") == [0, 1, 2] and values(run, "total_loss") == [0.08, 0.07, 0.06]
    assert values(run, "box_loss") == [0.05, 0.04, 0.03]  # the row of the finished epoch, not the 0% one
    assert values(run, "val_precision") == [0.6, 0.7, 0.8] and steps(run, "val_precision") == [0, 1, 2]
    assert {"labels", "img_size", "gpu_mem", "val_Images", "val_Labels"}.isdisjoint(run.tags)
    assert not run.warnings
    # a row drawn over another bar with \r is read as last drawn
    header = YOLOV5_EPOCH.splitlines()[0] + "\n"
    redrawn = "".join(f"Epoch {e}: 100%|#####| 5/5\r     {e}/299  2.62G  0.05{e}  0.0241  0.0392  0.16{e}  5  640\n"
                      for e in range(5))
    run = read(write(tmp_path / "redrawn.log", "Starting\n" + header + redrawn))
    assert len(run.series("total_loss")) == 5
    # a console that cut every line at 80 columns leaves "640: 1" of "640: 100%|███…": the row is whole before it
    cut = "".join(f"{f'     {e}/3999      7.51G    0.0{9 - e}818    0.02902     0.0386        151        640: 100%':.80}\n"
                  for e in range(4))
    run = read(write(tmp_path / "kaggle.log", "Starting\n" + header.replace("total", "") + cut))
    assert values(run, "box_loss") == [0.09818, 0.08818, 0.07818, 0.06818]


DETECTRON2_ITERATION = (
    "[01/05 10:00:{i:02d} d2.utils.events]:  eta: 0:10:00  iter: {i}  total_loss: {loss:.3f}  loss_cls: 0.7912  "
    "loss_box_reg: 0.6011  time: 0.4012  data_time: 0.0121  lr: 0.00039962  max_mem: 2711M\n"
)
DETECTRON2_EVALUATION = (
    "[01/05 10:01:20 d2.evaluation.coco_evaluation]: Evaluation results for bbox: \n"
    "|   AP   |  AP50  |  AP75  |  APs  |  APm  |  APl  |\n"
    "|:------:|:------:|:------:|:-----:|:-----:|:-----:|\n"
    "| {ap:.3f} | 30.123 | 8.765  |  nan  | 5.432 | 20.11 |\n"
    "[01/05 10:01:20 d2.evaluation.testing]: copypaste: Task: bbox\n"
    "[01/05 10:01:20 d2.evaluation.testing]: copypaste: AP,AP50,AP75,APs,APm,APl\n"
    "[01/05 10:01:20 d2.evaluation.testing]: copypaste: {ap:.4f},30.1230,8.7650,nan,5.4320,20.1100\n"
)


def test_bare_split_names_after_an_accuracy_are_accuracies_and_durations_are_no_values(tmp_path):
    """"R Sign Acc: Train=0.50, Val=0.51" names the splits' accuracy, not their loss; "Total time elapsed for training
    = 20120.7 seconds" is a duration, no curve."""
    text = "".join(f"Epoch {e} Summary - Train Loss: {1 - e / 10:.4f}, Val Loss: {1.1 - e / 10:.4f}\n"
                   f"  R Sign Acc: Train={0.5 + e / 100:.4f}, Val={0.5 + e / 200:.4f}\n" for e in range(1, 6))
    text += "Total time elapsed for training = 20120.73760533333 seconds\n"
    run = read(write(tmp_path / "training.log", text))
    assert run.roles["Train_acc"] == Role.TRAIN_ACC and run.roles["Val_acc"] == Role.VAL_ACC
    assert sorted(run.tags) == ["Train_Loss", "Train_acc", "Val_Loss", "Val_acc"]


def test_a_value_in_decibels_is_read(tmp_path):
    """KAIR/USRNet: "<epoch: 10, Average PSNR : 18.33dB" after the training lines, every 10 epochs."""
    text = "".join(f"<epoch: {e:2d}, lr:1.000e-04> loss: {0.3 - e / 100:.3e} \n" for e in range(1, 31))
    text += "".join(f"<epoch: {e:2d}, Average PSNR : {15 + e / 4:.2f}dB\n\n" for e in (10, 20, 30))
    run = read(write(tmp_path / "train_log.txt", text))
    assert values(run, "Average_PSNR") == [17.5, 20.0, 22.5] and run.roles["Average_PSNR"] == Role.SCORE


def test_a_name_and_its_value_joined_by_a_spaced_hyphen(tmp_path):
    """"Epoch 1 - train: avg_loss - 3.65": a hyphen between spaces joins a name to its value, as a colon does; the
    lines sit between thousands of blank ones (a W&B output.log)."""
    text = "".join(f"Epoch {e} - train: avg_loss - {3.6 - e / 10:.2f}\n" + "\n" * 500
                   + f"Epoch {e} - eval: avg_loss - {5.1 - e / 20:.2f}\n" for e in range(1, 7))
    run = read(write(tmp_path / "output.log", text))
    assert values(run, "avg_loss") == pytest.approx([3.5, 3.4, 3.3, 3.2, 3.1, 3.0])
    assert run.roles["eval_avg_loss"] == Role.VAL_LOSS and steps(run, "eval_avg_loss") == [1, 2, 3, 4, 5, 6]


def test_the_early_stopping_helpers_change_report_restates_the_validation_loss(tmp_path):
    """The widely copied EarlyStopping helper prints "Validation loss decreased (inf --> 0.000003). Saving model":
    the validation loss of the line before, no curve of its own (and its first inf is no blow-up)."""
    lines = []
    previous = "inf"
    for epoch, val in enumerate([3.1e-6, 2.4e-6, 2.0e-6, 1.6e-6], start=1):
        lines.append(f"Epoch: {epoch} \tTraining Loss: {val / 2:.10f} \tValidation Loss: {val:.10f}\n")
        lines.append(f"Validation loss decreased ({previous} --> {val:.6f}).    Model Saved......\n")
        previous = f"{val:.6f}"
    run = read(write(tmp_path / "output.log", "".join(lines)))
    assert sorted(run.tags) == ["Training_Loss", "Validation_Loss"]


def test_detectron2_copypaste_summaries_are_the_evaluations_scores(tmp_path):
    """Detectron2's log.txt: iteration lines, and after each evaluation a summary for pasting, whose APs are the
    evaluation's at the iteration before it; an AP of a size the set has no example of (nan) is none."""
    text = "".join(DETECTRON2_ITERATION.format(i=i, loss=2 - i / 100) for i in (19, 39))
    text += DETECTRON2_EVALUATION.format(ap=12.345)
    text += "".join(DETECTRON2_ITERATION.format(i=i, loss=2 - i / 100) for i in (59, 79))
    text += DETECTRON2_EVALUATION.format(ap=22.345)
    run = read(write(tmp_path / "log.txt", text))
    assert steps(run, "eval/bbox/AP") == [39, 79] and values(run, "eval/bbox/AP") == [12.345, 22.345]
    assert run.roles["eval/bbox/AP50"] == Role.SCORE and "eval/bbox/APs" not in run.tags
    assert values(run, "total_loss") == [1.81, 1.61, 1.41, 1.21]


def test_yolov8_and_fastai_tables_keep_the_aggregate_row_and_skip_counts(tmp_path):
    epoch = (
        "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
        "        {e}/3      2.51G      {loss:.2f}      2.345      1.456         12        640: 100%|█| 47/47\n"
        "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|█████| 4/4\n"
        "                   all        100        250      0.654      0.543      {map:.2f}      0.412\n"
        "                person        100        150      0.804      0.663      0.999      0.552\n"
    )
    text = "".join(epoch.format(e=e, loss=1.5 - e / 10, map=0.5 + e / 10) for e in range(1, 4))
    run = read(write(tmp_path / "yolov8.log", text))
    assert values(run, "box_loss") == [1.4, 1.3, 1.2] and values(run, "val_mAP50") == [0.6, 0.7, 0.8]
    assert "Instances" not in run.tags and "val_Instances" not in run.tags
    fastai = ("Downloading data...\n" "epoch     train_loss  valid_loss  accuracy  time\n"
              + "".join(f"{e}         {1 - e / 10:.6f}    {1.1 - e / 20:.6f}    0.{70 + e}0000  00:12\n"
                        for e in range(4))
              + "Saved the model to export.pkl\n")
    run = read(write(tmp_path / "fastai.log", fastai))
    assert steps(run, "valid_loss") == [0, 1, 2, 3] and values(run, "accuracy") == [0.7, 0.71, 0.72, 0.73]
    assert "time" not in run.tags


def test_a_line_of_names_over_unrelated_numbers_is_no_table(tmp_path):
    text = ("Model layers summary below\n" "  12  3.5  7  9\n"
            + "".join(f"epoch {e} loss {1 / e:.3f}\n" for e in range(1, 5)))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"loss"}


def test_a_batch_index_printed_as_the_step_is_counted_on_when_the_loss_takes_up_where_it_left(tmp_path):
    """``print(f"step {i} loss {loss}")`` over ``enumerate(loader)``, epoch after epoch, no epoch printed: each
    epoch's loss goes on where the one before ended, so the stretches are one run's epochs (the last cut short
    by a stop), counted on; runs one after another each begin again near the first run's start."""
    losses = 2.0 * 0.99 ** np.arange(100)
    text = "".join(f"step {10 * (i % 30)} loss {loss:.4f}\n" for i, loss in enumerate(losses))
    runs = textlog.read(Source("text", (path := write(tmp_path / "train.log", text)), ((None, path),), explicit=True))
    assert len(runs) == 1 and steps(runs[0], "loss")[29:31] == [290, 300] and len(steps(runs[0], "loss")) == 100
    assert any("counted on across them" in warning for warning in runs[0].warnings)
    sweep = "".join(f"step {10 * (i % 30)} loss {2.0 * 0.99 ** (i % 30):.4f}\n" for i in range(90))
    runs = textlog.read(Source("text", (path := write(tmp_path / "sweep.log", sweep)), ((None, path),), explicit=True))
    assert len(runs) == 3
    # a stretch that restarts within itself holds sessions one after another, whatever its ends say (a search of
    # 25 sessions and their folds, Kaggle phrase matching): no epochs to count on
    restarted = [10 * (i % 30) for i in range(30)] * 3
    restarted[40:50] = restarted[20:30]
    text = "".join(f"step {step} loss {loss:.4f}\n" for step, loss in zip(restarted, losses[:90], strict=True))
    path = write(tmp_path / "restarts.log", text)
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert not any("counted on across them" in warning for run in runs for warning in run.warnings)


def test_keras_early_stopping_ends_its_fit_and_heads_no_epoch(tmp_path):
    """Three fit() calls printed by Keras (verbose=2), the second stopped early: EarlyStopping's "Epoch 00008: early
    stopping", on stderr, lands before epoch 9's summary on stdout. It ends that fit, which is a run of its own
    though it never reached epoch 10, and the summary after it stays epoch 9's (KyotoSunshine's kanji CNN)."""
    def fit(epochs: int, first: float, stopped: int | None = None) -> str:
        text = "Train on 400000 samples, validate on 10000 samples\n"
        for epoch in range(1, epochs + 1):
            text += f"Epoch {epoch}/10\n"
            if epoch == stopped:
                text += f"Epoch {epoch - 1:05d}: early stopping\n"
            text += f"3099s - loss: {first / epoch:.4f} - acc: 0.98 - val_loss: {first / epoch + 0.02:.4f}\n"
        return text
    path = write(tmp_path / "training_log.txt", fit(10, 0.9) + fit(9, 0.1, stopped=9) + fit(6, 0.05))
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert [len(steps(run, "loss")) for run in runs] == [10, 9, 6]
    assert steps(runs[1], "loss")[-2:] == [8, 9] and values(runs[1], "loss")[-2:] == [0.0125, 0.0111]


def test_a_last_session_that_stops_as_it_begins_is_not_read_as_a_run(tmp_path):
    finished = "".join(f"Epoch {e}/5 - loss: {1.0 / e:.3f}\n" for e in range(1, 6))
    aborted = "lr: 0.01\nEpoch 1/5 - loss: 2.300\n"
    runs = textlog.read(Source("text", (path := write(tmp_path / "train.log", finished + aborted)),
                               ((None, path),), explicit=True))
    assert len(runs) == 1 and values(runs[0], "loss") == [1.0, 0.5, 0.333, 0.25, 0.2]
    assert any("stopped as it began" in warning for warning in runs[0].warnings)


def test_values_in_a_progress_bars_label_are_read(tmp_path):
    """``set_description(f"Train Epoch {e} Iters {i} Train loss {loss}")``: the bar's label holds the metrics; the
    bar drawn once more at its close is one point, and ``Iters`` is the step."""
    bar = "{label}: 100%|██████████| 352/352 [01:24<00:00,  3.24it/s]\n"
    text = "".join(
        bar.format(label=f"Train Epoch {e} Iters {352 * e - 51} Train loss {1 / e:.4f}") * 2
        + bar.format(label=f"Val Epoch {e} Iters {352 * e} val loss {1.2 / e:.4f} top-1 accuracy 0.{40 + e}")
        for e in range(1, 5))
    run = read(write(tmp_path / "output.log", text))
    assert steps(run, "Train_loss") == [301, 653, 1005, 1357] and values(run, "Train_loss")[1] == 0.5
    assert values(run, "val_loss") == [1.2, 0.6, 0.4, 0.3] and steps(run, "val_loss") == [352, 704, 1056, 1408]
    assert run.roles["val_top-1_accuracy"] == Role.VAL_ACC
    assert not run.warnings
    label_only = read(write(tmp_path / "epochs.log", "".join(
        f"Epoch {e}: 100%|███| 10/10 [00:01<00:00]\nepoch {e} loss {1 / e:.3f}\n" for e in range(1, 4))))
    assert set(label_only.tags) == {"loss"}


def test_a_keras_bar_still_running_is_no_epoch_even_when_a_console_glued_an_epoch_header_onto_it(tmp_path):
    """A W&B output.log of a Keras fit interrupted in epoch 3: its console capture overwrote old bars, leaving
    'Epoch 9/10[====>....] - ETA: 11s - loss: 0.3732 - …' lines. A line with an ETA is a running average."""
    summary = "1875/1875 [==============================] - 2s 1ms/step - loss: {} - val_loss: {}\n"
    text = ("Epoch 1/10\n" + summary.format(0.69, 0.55) + "Epoch 2/10\n" + summary.format(0.49, 0.50)
            + "Epoch 3/10\n" + " 240/1875 [==>.......] - ETA: 18s - loss: 0.4657\n"
            + "".join(f"Epoch {e}/10[=====>....] - ETA: 11s - loss: 0.3732 - val_loss: 0.4165\n" for e in (8, 9, 10)))
    run = read(write(tmp_path / "output.log", text))
    assert steps(run, "loss") == [1, 2] and values(run, "val_loss") == [0.55, 0.5]


def test_a_best_value_or_one_a_save_announces_restates_a_curve(tmp_path):
    """MuhammadAsadUllah27's train.log: '✓ New best checkpoint saved (val_acc=0.6250)' after an epoch's line and
    'Training complete. Best val_acc=1.0000' at the end had become a val_acc curve and a train_acc curve."""
    text = "".join(f"Epoch {e} | TrainLoss {1 / e:.3f} | ValAcc {0.5 + e / 20:.3f} | best_acc: {0.5 + e / 20:.3f}\n"
                   f"  ✓ New best checkpoint saved (val_acc={0.5 + e / 20:.4f})\n" for e in range(1, 5))
    text += "Training complete. Best val_acc=0.7000 | checkpoint=/tmp/best.pth\n"
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"TrainLoss", "ValAcc"}
    # OpenNMT-py's early-stopping message restates the validation perplexity, from an infinite first "best"
    onmt = "".join(f"[INFO] Step {s * 200}/1600; acc: {40 + s}; ppl: {6 - s / 2}\nValidation perplexity: {6 - s / 2}\n"
                   f"Model is improving ppl: {'inf' if s == 1 else 6.5 - s / 2} --> {6 - s / 2}.\n"
                   for s in range(1, 5))
    run = read(write(tmp_path / "onmt.log", onmt))
    assert not [tag for tag in run.tags if "improving" in tag.lower()]


def test_the_trainers_closing_summary_ends_a_run_so_the_next_one_printed_is_a_run_of_its_own(tmp_path):
    """Two Trainer runs in one stdout, the second shorter: only the first one's closing summary says it ended."""
    def trainer(scale, epochs):
        return "".join(f"{{'loss': {scale / e:.4f}, 'learning_rate': 1e-05, 'epoch': {e}.0}}\n"
                       for e in range(1, epochs + 1)) + f"{{'train_runtime': 20.5, 'epoch': {epochs}.0}}\n"

    path = write(tmp_path / "train.log", trainer(2.0, 4) + trainer(1.0, 3))
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert [values(run, "loss")[0] for run in runs] == [2.0, 1.0]
    assert [len(run.series("loss")) for run in runs] == [4, 3] and not any(run.warnings for run in runs)
    # after a closing summary nothing resumes: a second Trainer whose first log comes at a later epoch than the
    # first one's (an evaluation every epoch, a loss every 2.2: EshaUbale's language model, then its classifier)
    later = "".join(f"{{'eval_loss': {1 / e:.4f}, 'epoch': {e}.0}}\n" for e in range(2, 6))
    path = write(tmp_path / "two.log", trainer(2.0, 4) + later)
    runs = textlog.read(Source("text", path, ((None, path),), explicit=True))
    assert [run.name for run in runs] == ["two.log#1", "two.log#2"] and steps(runs[1], "eval_loss") == [2, 3, 4, 5]


def test_the_one_batch_a_log_prints_each_epoch_counts_on_across_epochs(tmp_path):
    """'Epoch 3, Batch 0/8, Loss: …' then the epoch's summaries (BelaBartok39/ML_Radio_Project): the batch counter
    holds 0 at every epoch, with its total beside it, so each epoch's batch 0 is a step of its own."""
    text = "".join(f"Epoch {e}, Batch 0/8, Loss: {2 / e:.4f}\n"
                   f"Epoch {e} Validation - Loss: {18 + e:.4f}, Mod Acc: 0.0000\n" for e in range(1, 6))
    run = read(write(tmp_path / "training.log", text))
    assert steps(run, "Loss") == [0, 8, 16, 24, 32] and len(run.series("validation_Loss")) == 5


FUZZED_LOG = (
    "Starting training for 3 epochs...\n"
    + "".join(YOLOV5_EPOCH.format(e=e, box=0.05 - e / 100, total=0.08 - e / 100, p=0.6 + e / 10) for e in range(3))
    + "".join(f"Epoch {e}/3\n10/10 [==========] - 1s - loss: {1 / e:.4f} - val_loss: {1.1 / e:.4f}\n"
              for e in (1, 2, 3)) * 2
    + "".join(f"Train Epoch {e} Iters {e * 100} Train loss {0.5 / e:.4f}: 100%|███| 352/352 [01:24<00:00]\n"
              for e in (1, 2, 3))
    + "{'loss': 0.5, 'epoch': 1.0}\n{'loss': 0.4, 'epoch': 2.0}\n{'train_runtime': 20.5, 'epoch': 2.0}\n"
    + "Model is improving ppl: inf --> 5.45.\n  ✓ New best checkpoint saved (val_acc=0.6250)\n"
).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_log_of_every_new_kind_of_line_reads_or_refuses_in_one_line(tmp_path, data):
    """Column tables, runs one after another, tqdm labels, Keras bars, closing summaries, restatements: cut and
    overwritten anywhere, the log is read (runs with points) or refused in one line, never another exception."""
    path = tmp_path / "train.log"
    path.write_bytes(damaged(data, FUZZED_LOG))
    assert_reads_or_refuses_in_one_line(textlog, path)


def test_a_configuration_printed_as_a_tree_is_settings_even_its_iter(tmp_path):
    """BRLEON-EV/Peptide_autoencoder prints its config as a tree before training: '|-   |- iter\\t250000' and
    '|- val\\t2.0' had become a step far beyond the run and a one-point val_loss."""
    tree = "full:\n  |- beta:\n  |-   |- end:\n  |-   |-   |- iter\t250000\n  |-   |-   |- val\t2.0\n  |- lrC\t0.0003\n"
    steps_text = "".join(f"ITER {i * 500} TRAINING (phase 1). loss_vae: {3 / (i + 1):.4f}; Grad_norm: 0.5\n"
                         for i in range(6))
    run = read(write(tmp_path / "train.log", tree + steps_text + "├── lr: 0.001\n"))
    assert "val_loss" not in run.tags and steps(run, "loss_vae") == [0, 500, 1000, 1500, 2000, 2500]
    assert not run.warnings and run.meta.hparams.get("lrC") == 0.0003


def test_one_name_two_splits_two_values_is_each_split_its_value(tmp_path):
    """`Loss (train/val): 0.9226/0.6834`: the splits named in brackets, their values in the same order."""
    lines = [f"Epoch [{e}/50] | Loss (train/val): {0.9 - 0.05 * e:.4f}/{0.7 - 0.01 * e:.4f}  | "
             f"Acc (train/val): {0.13 + 0.01 * e:.4f}/{0.15 + 0.005 * e:.4f}\n" for e in range(1, 6)]
    run = load_one(write(tmp_path / "training.log", "\n".join(lines)))
    assert run.roles == {"train_Loss": Role.TRAIN_LOSS, "val_Loss": Role.VAL_LOSS, "train_Acc": Role.TRAIN_ACC,
                         "val_Acc": Role.VAL_ACC}
    assert values(run, "val_Loss") == pytest.approx([0.69, 0.68, 0.67, 0.66, 0.65]) and steps(run, "val_Loss") == [
        1, 2, 3, 4, 5]


def test_a_ratio_under_a_name_in_brackets_is_no_pair_of_splits(tmp_path):
    lines = [f"Epoch {e}: loss {1.0 - 0.1 * e:.2f} | correct (right/total): {20 + e}/100\n" for e in range(1, 6)]
    run = load_one(write(tmp_path / "training.log", "".join(lines)))
    assert "val_correct" not in run.tags and "right_correct" not in run.tags


def test_a_tab_separated_logger_table_without_an_x_is_read_one_row_an_epoch(tmp_path):
    """pytorch-classification's Logger: the arguments, then a tab-separated header naming measurements in words
    (each name and value followed by a tab), one row appended per epoch, no epoch column."""
    rows = [f"{0.1:.6f}\t{2.4 - 0.1 * e:.6f}\t{2.3 - 0.12 * e:.6f}\t{18 + 5 * e:.6f}\t{19 + 6 * e:.6f}\t"
            for e in range(8)]
    text = ("==>Arguments:\narch:resnet50\nepochs:8\nlr:0.1\n==>Training log:\n"
            "Learning Rate\tTrain Loss\tValid Loss\tTrain Acc\tValid Acc\t\n" + "\n".join(rows) + "\n")
    run = load_one(write(tmp_path / "log.txt", text))
    assert run.roles == {"Learning_Rate": Role.LR, "Train_Loss": Role.TRAIN_LOSS, "Valid_Loss": Role.VAL_LOSS,
                         "Train_Acc": Role.TRAIN_ACC, "Valid_Acc": Role.VAL_ACC}
    assert steps(run, "Valid_Loss") == list(range(1, 9)) and values(run, "Train_Loss")[0] == pytest.approx(2.4)
    assert run.meta.hparams["lr"] == 0.1


def test_tab_separated_words_that_name_no_measurement_are_no_table(tmp_path):
    lines = ["Name\tCity\tCountry\n", "alice\tparis\tfrance\n"] + [f"epoch {e}: loss {1 - 0.1 * e:.2f}\n"
                                                                   for e in range(1, 6)]
    run = load_one(write(tmp_path / "train.log", "".join(lines)))
    assert set(run.tags) == {"loss"}


def test_metric_names_written_in_spanish_or_russian_are_read(tmp_path):
    """A script that prints its epochs in Spanish (Época 3/10 - pérdida … - val_pérdida …) or in Russian (Эпоха 3,
    потеря …): the epoch is the x axis and the losses are the train and validation loss."""
    spanish = "".join(f"Época {epoch}/6 - pérdida: {1.0 / epoch:.3f} - exactitud: {0.5 + 0.05 * epoch:.3f} - "
                      f"val_pérdida: {1.1 / epoch:.3f}\n" for epoch in range(1, 7))
    run = load_one(write(tmp_path / "entrenamiento.log", spanish))
    assert {run.roles[tag] for tag in run.tags} == {Role.TRAIN_LOSS, Role.TRAIN_ACC, Role.VAL_LOSS}
    assert steps(run, run.primary("val_loss")) == list(range(1, 7)) and not run.warnings
    russian = "".join(f"Эпоха {epoch}: потеря = {1.0 / epoch:.3f}\n" for epoch in range(1, 7))
    run = load_one(write(tmp_path / "obuchenie.log", russian))
    assert steps(run, run.primary("train_loss")) == list(range(1, 7))


def test_metric_names_written_in_chinese_are_read(tmp_path):
    """Python logging lines of a run logged in Chinese: 训练损失 (train loss), 训练准确率 (train accuracy),
    验证损失 (val loss), 验证准确率 (val accuracy) after an 'Epoch k/100' line; 第 k 轮 (round k) is an epoch, and
    训练集大小 (the training set's size) before training a setting."""
    lines = ["2026-01-28 18:20:30,366 - train_face - INFO - 训练集大小: 32204\n"]
    for epoch in range(1, 7):
        lines += [f"2026-01-28 18:20:30,589 - train_face - INFO - \nEpoch {epoch}/100\n",
                  f"2026-01-28 18:28:20,294 - train_face - INFO - 训练损失: {1.5 - 0.1 * epoch:.4f}, "
                  f"训练准确率: {36 + 4 * epoch:.2f}%\n",
                  f"2026-01-28 18:28:24,560 - train_face - INFO - 验证损失: {1.4 - 0.05 * epoch:.4f}，"
                  f"验证准确率: {43 + 2 * epoch:.2f}%\n"]
    run = load_one(write(tmp_path / "train_face.log", "".join(lines)))
    assert {run.roles[tag] for tag in run.tags} == {Role.TRAIN_LOSS, Role.TRAIN_ACC, Role.VAL_LOSS, Role.VAL_ACC}
    val_loss = next(tag for tag in run.tags if run.roles[tag] == Role.VAL_LOSS)
    assert steps(run, val_loss) == list(range(1, 7)) and values(run, val_loss)[0] == pytest.approx(1.35)
    rounds = "".join(f"第 {epoch} 轮 训练损失：{1.0 / epoch:.3f}\n" for epoch in range(1, 6))
    run = load_one(write(tmp_path / "rounds.log", rounds))
    assert steps(run, run.primary("train_loss")) == [1, 2, 3, 4, 5]


def test_skorch_epoch_table_reads_the_values_printed_in_colour():
    """skorch's PrintLog wraps each new best value of a column in ANSI colour codes: those cells are values too,
    not text beside them (a public EEG run lost its first two train losses, 2.725 and 1.437, and 79 more)."""
    run = load_one(FIXTURES / "skorch" / "train.log")
    assert run.point_counts() == {"train_loss": 15, "valid_acc": 15, "valid_loss": 15, "dur": 15}
    assert values(run, "train_loss")[0] == pytest.approx(1.678)  # in colour: every train loss here is a new best
    assert values(run, "valid_loss")[11:13] == pytest.approx([0.0984, 0.0910])  # plain, then in colour
    assert run.roles["valid_loss"] == Role.VAL_LOSS


def test_a_history_printed_whole_is_the_logs_curves():
    """print(history.history) after fit(verbose=0): the curves are only in that printed dict of lists (a real
    Keras run, fixtures/generate/text_logs.py), read over the epochs 1, 2, … as a saved history is."""
    run = load_one(FIXTURES / "keras_history_printed" / "train.log")
    assert run.point_counts() == {"accuracy": 8, "loss": 8, "val_accuracy": 8, "val_loss": 8}
    assert steps(run, "val_loss") == list(range(1, 9)) and run.roles["val_loss"] == Role.VAL_LOSS


def test_a_trainers_dumped_attributes_give_its_lists_not_its_architecture(tmp_path):
    """A trainer object dumped attribute by attribute (a public segmentation repository's trainer_properties.txt):
    the printed model, a layer a line, is no values (kernel_size=(3, 3, 3) no curve), and a dict of one list per
    split under a name (losses:{'train': [...], 'val': [...]}, numpy 2's np.float64(...) around numbers) is that
    measurement's curve per split."""
    model = ("Sequential(\n  (0): Conv3d(4, 24, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))\n"
             "  (1): GroupNorm(8, 24, eps=1e-05, affine=True)\n  (2): ReLU()\n)")  # as torch prints it
    train = ", ".join(f"np.float64({1.37 - epoch / 10})" for epoch in range(6))
    text = (f"device:cpu\nnet:{model}\nnum_epochs:6\nbest_loss:0.9\n"
            f"losses:{{'train': [{train}], 'val': [1.29, 1.17, 1.06, 0.97, 0.86, nan]}}\n"
            "dice_scores:{'train': [0.36, 0.60, 0.63, 0.63, 0.67, 0.70], 'val': [0.3, 0.5, 0.6, 0.6, 0.6, 0.6]}\n")
    run = load_one(write(tmp_path / "trainer_properties.txt", text))
    assert set(run.tags) == {"train_losses", "val_losses", "train_dice_scores", "val_dice_scores"}
    assert run.roles["val_losses"] == Role.VAL_LOSS and math.isnan(values(run, "val_losses")[-1])
    assert values(run, "train_losses")[0] == pytest.approx(1.37)


def test_a_printed_dict_of_scalars_with_a_list_among_them_is_read_as_a_line(tmp_path):
    lines = "".join(f"{{'eval_loss': {1 / epoch:.3f}, 'eval_f1_per_class': [0.5, 0.6], 'epoch': {epoch}.0}}\n"
                    for epoch in range(1, 6))
    run = load_one(write(tmp_path / "train.log", lines))
    assert values(run, "eval_loss") == pytest.approx([1 / epoch for epoch in range(1, 6)], abs=1e-3)


@pytest.mark.parametrize("second_model, runs_read", [(8970836, 2), (8970324, 1)])
def test_a_log_that_starts_over_with_another_parameter_count_holds_another_model(tmp_path, second_model, runs_read):
    """DETR's ``log.txt`` appended by a second training of a changed model: its first 4 epochs of the first run's 6
    planned are no run cut short and restarted but a run of their own; the same count started over is a restart."""
    def record(epoch: int, n_params: int, loss: float) -> str:
        return f'{{"epoch": {epoch}, "n_params": {n_params}, "train_loss": {loss:.4f}, "test_loss": {loss:.4f}}}\n'
    text = "".join(record(e, 8970324, 12 / (e + 1)) for e in range(4)) + "".join(
        record(e, second_model, 11 / (e + 1)) for e in range(8))
    runs = curvedoc.load(write(tmp_path / "log.txt", text))
    assert len(runs) == runs_read
    assert [run.point_counts()["train_loss"] for run in runs] == ([4, 8] if runs_read == 2 else [8])


def test_detr_records_longer_than_the_peek_are_read_as_its_log_not_refused_as_a_history(tmp_path):
    """facebookresearch/detr (and Deformable DETR, DINO …) write one JSON record an epoch to ``log.txt``, each over
    4 KiB with the auxiliary decoder losses and the COCO metrics: the first line fills the whole peek, and the file
    was taken for a JSON document (a history) and refused as "not valid JSON at line 2"."""
    def record(epoch: int) -> str:
        terms = {f"{split}_loss_{kind}_{layer}": 1.0 / (epoch + 1) for split in ("train", "test")
                 for kind in ("ce", "bbox", "giou") for layer in range(5)}
        return json.dumps({"train_lr": 1e-4, "train_loss": 20.0 / (epoch + 1), **terms, "test_loss": 15.0 + epoch,
                           "test_coco_eval_bbox": [0.1 * epoch] * 12, "epoch": epoch, "n_parameters": 41_302_368,
                           "padding": "x" * 4096}) + "\n"
    (tmp_path / "outputs").mkdir()
    path = write(tmp_path / "outputs" / "log.txt", "".join(record(epoch) for epoch in range(6)))
    for run in (load_one(path), load_one(tmp_path / "outputs")):
        assert run.roles["train_loss"] == Role.TRAIN_LOSS and run.roles["test_loss"] == Role.TEST_LOSS
        assert values(run, "test_loss") == pytest.approx([15.0 + epoch for epoch in range(6)])


@pytest.mark.parametrize("prefix", ["2017-08-18 02:43:53,914 - INFO - ", "2017-08-18 02:43:53,914 | INFO | ",
                                    "2017-08-18 02:43:53,914:\t", "[2017-08-18 02:43:53] "])
def test_a_metric_named_before_its_step_is_read_behind_a_logging_prefix(tmp_path, prefix):
    """A public question-generation run logs ``%(asctime)s:\t%(message)s``: "Loss at step 1: 8.499695". The
    timestamp is when the line was written, whether a level follows it or not, and the dash after the level
    (logging's common ``%(asctime)s - %(levelname)s - %(message)s``) is the prefix's, not the message's."""
    text = "".join(f"{prefix}Loss at step {step}: {8.5 - step / 4:.6f}\n" for step in range(1, 6))
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"Loss"} and steps(run, "Loss") == [1, 2, 3, 4, 5]
    assert values(run, "Loss") == pytest.approx([8.5 - step / 4 for step in range(1, 6)])


def test_a_count_opening_a_line_is_a_batch_counter_that_starts_again_with_every_epoch(tmp_path):
    """A public image-captioning run logs "train epoch: 0", then "count: 0, loss:187.667145:" every 50 batches:
    ``count`` is its step within the epoch, counted on across epochs; read as a metric, every epoch's hundreds of
    losses collapsed to one point. After other values it counts something else (darknet's objects: see above)."""
    text = ""
    for epoch in range(3):
        text += f"INFO:root:train epoch: {epoch}\n"
        text += "".join(f"INFO:root:count: {count}, loss:{200 - epoch * 10 - count / 100:.6f}: \n"
                        for count in range(0, 300, 50))
    run = read(write(tmp_path / "train5.log", text))
    assert set(run.tags) == {"loss"} and len(values(run, "loss")) == 18
    assert values(run, "loss")[:2] == pytest.approx([200.0, 199.5])


def test_a_logging_prefix_names_who_wrote_the_line_not_what_it_measures(tmp_path):
    """OLMo's train.log: a timestamp, the host and its rank, ``%(name)s:%(lineno)d`` and the level, then the step;
    the metrics follow on indented lines. ``host:0`` and ``olmo.train:990`` are no values, so the step line heads
    the block and every metric in it is read at that step, the gradient norm among them."""
    text = ""
    for step in (10, 20, 30, 40):
        text += (f"2025-12-27 22:12:{step}.867\tfine-work-echoes-fin-03:0\tolmo.train:990\tINFO\t"
                 f"[step={step}/10000,epoch=0]\n    optim/total_grad_norm={2 - step / 40:.3f}\n"
                 f"    train/CrossEntropyLoss={9 - step / 10:.3f}\n    train/Perplexity={int(9000 / step):,}\n")
    text += "2025-12-27 22:13:07.302\tfine-work-echoes-fin-03:0\tpy.warnings:110\tWARNING\tsys:1: UserWarning: hook\n"
    run = read(write(tmp_path / "train.log", text))
    assert set(run.tags) == {"optim/total_grad_norm", "train/CrossEntropyLoss", "train/Perplexity"}
    assert steps(run, "optim/total_grad_norm") == [10, 20, 30, 40]
    assert values(run, "train/CrossEntropyLoss") == [8.0, 7.0, 6.0, 5.0]


def test_the_values_finished_bars_show_are_read_when_the_log_has_no_others(tmp_path):
    """A GAN's stdout holds nothing but one tqdm bar per epoch, its losses in the postfix (``set_postfix``): those
    are the run's record, at the epoch the bar's description names. The bar of an epoch cut off mid-way is not."""
    bar = "Epoch {e}: {pct}%|█████| {n}/28 [00:23<00:00,  1.20it/s, D={d:.3f}, G={g:.3f}, FID=-]\n"
    text = "python main.py --mode train\nBatch size: 256\nEpochs: 600\n" + "".join(
        bar.format(e=e, pct=100, n=28, d=2.3 - e / 10, g=0.01 + e / 1000) for e in range(6))
    text += bar.format(e=6, pct=57, n=16, d=9.0, g=9.0)
    run = read(write(tmp_path / "log.txt", text))
    assert set(run.tags) == {"D", "G"} and steps(run, "D") == [0, 1, 2, 3, 4, 5]
    assert values(run, "D") == [2.3, 2.2, 2.1, 2.0, 1.9, 1.8]


def test_the_values_a_bar_shows_as_it_runs_are_read_when_its_finished_drawings_are_too_few(tmp_path):
    """The diffusers training scripts (and kohya's, with avr_loss) draw one bar over the whole training, its loss in
    the postfix: captured with nohup, every drawing sits on one line after a \r, and only the last shows when the
    log is read as a terminal shows it. Read at their counts, the drawings are the run's loss curve, however many
    the bar drew (past the cap on one line's length). A bar drawn while its epoch runs shows the last evaluation's
    values (Lightning's val_loss) beside the running ones: those are not read from it."""
    drawings = "\r".join(f"Steps: {step // 30:3d}%|█         | {step}/3000 [00:10<09:00,  1.67it/s, lr=1e-05, "
                         f"step_loss={0.5 - step / 10_000:.4f}]" for step in range(1, 3001))
    run = read(write(tmp_path / "nohup.out", "Loading pipeline components...\n" + drawings + "\n"))
    assert steps(run, "step_loss") == list(range(1, 3001)) and values(run, "step_loss")[-1] == 0.2
    lightning = "".join("\r".join(f"Epoch {epoch}:  {b}%|█  | {b}/100 [00:10<00:10, 5.00it/s, loss={1 - b / 400:.3f}, "
                                  f"v_num=0{', val_loss=0.9' if epoch else ''}]" for b in range(1, 101)) + "\n"
                        for epoch in range(2))
    run = read(write(tmp_path / "lightning.log", lightning))
    assert run.tags == ["loss"] and steps(run, "loss") == list(range(1, 201))


def test_a_bars_postfix_is_not_read_beside_the_values_the_log_prints(tmp_path):
    bar = "Epoch {e}: 100%|█████| 28/28 [00:23<00:00,  1.20it/s, loss={stale:.3f}]\n"
    text = "".join(bar.format(e=e, stale=9.0) + f"Epoch {e}: train_loss={1 / (e + 1):.3f}\n" for e in range(5))
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["train_loss"]


def test_a_distributed_process_prefix_and_an_epochs_duration_are_no_values(tmp_path):
    """The CycleGAN Visualizer run under torchrun: "[Rank 0] (epoch: 1, iters: 100, time: 1.294, data: 0.907) , D_A:
    …" is its loss_log line behind the process's label, and "End of epoch 1 / 200 	 Time Taken: 210 sec" a
    duration: the losses are the curves, not a constant Rank nor the epoch's seconds."""
    lines = []
    for epoch in range(1, 4):
        for iters in (100, 200):
            lines.append(f"[Rank 0] (epoch: {epoch}, iters: {iters}, time: 1.294, data: 0.907) , D_A: "
                         f"{1 / (epoch + iters / 100):.3f}, G_A: 0.6, cycle_A: {2 / epoch:.3f}, idt_A: 0.5")
        lines.append(f"End of epoch {epoch} / 200 \t Time Taken: {200 + epoch} sec")
    run = read(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert sorted(run.tags) == ["D_A", "G_A", "cycle_A", "idt_A"]
    assert len(steps(run, "cycle_A")) == 6


def test_trainer_dicts_that_share_a_rounded_epoch_are_each_a_point(tmp_path):
    """The Trainer prints round(epoch, 2): logged every 10 of 8,264 steps an epoch, four dicts fall on each 0.01.
    Read at the epoch alone three of every four would be lost; they are placed one after another, and the
    evaluation dict printed after a train dict stays at that dict's place."""
    lines, losses = [], []
    for record in range(12):
        losses.append(round(1.0 / (record + 1), 4))
        lines.append(f"{{'loss': {losses[-1]}, 'grad_norm': 1.5, 'learning_rate': 7e-05, 'epoch': {record // 4 / 100}}}")
        if record % 4 == 3:
            lines.append(f"{{'eval_loss': {losses[-1] + 0.1:.4f}, 'eval_runtime': 3.1, 'epoch': {record // 4 / 100}}}")
    run = read(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert values(run, "loss") == losses
    assert steps(run, "loss") == list(range(12)) and steps(run, "eval_loss") == [3, 7, 11]
    assert any("epoch × 400" in warning for warning in run.warnings)


def test_a_name_joining_terms_with_a_plus_is_one_name(tmp_path):
    """DeblurGAN's Visualizer prints the discriminator's real and fake terms summed as ``D_real+fake``: one name,
    the discriminator's, not a curve called ``fake``."""
    text = "".join(f"(epoch: 1, iters: {i}, time: 0.77) G_GAN: {20 + i / 50:.3f} G_L1: {900 - i:.3f} "
                   f"D_real+fake: {-50 - i / 20:.3f} \n" for i in range(100, 600, 100))
    run = read(write(tmp_path / "loss_log.txt", text))
    assert sorted(run.tags) == ["D_real+fake", "G_GAN", "G_L1"]
    assert run.roles["D_real+fake"] == Role.ADVERSARIAL and values(run, "D_real+fake")[0] == -55.0


def test_a_bare_split_name_with_a_percentage_is_that_split_s_accuracy(tmp_path):
    """"Starting hybrid phase from Val: 50.48%, Test: 51.69%": a bare split name reads as that split's loss
    (nanoGPT's "train 2.01 val 2.05"), but a value in percent is an accuracy, which a loss never is."""
    text = "".join(f"Epoch {e}/4 loss: {1.2 - e / 10:.2f}\nfrom Val: {50 + e:.2f}%, Test: {49 + e:.2f}%\n"
                   for e in range(1, 5))
    run = read(write(tmp_path / "train.log", text))
    assert run.roles["Val_acc"] == Role.VAL_ACC and run.roles["Test_acc"] == Role.TEST_ACC
    assert values(run, "Val_acc") == [51.0, 52.0, 53.0, 54.0]
    nanogpt = "".join(f"iter {i}: train {3 - i / 100:.2f} val {3.1 - i / 100:.2f}\n" for i in range(10, 50, 10))
    run = read(write(tmp_path / "nanogpt.log", nanogpt))
    assert run.roles["train_loss"] == Role.TRAIN_LOSS and run.roles["val_loss"] == Role.VAL_LOSS


def test_a_sentence_s_full_stop_ends_a_value_but_a_version_s_next_group_does_not(tmp_path):
    text = "".join(f"Epoch: {epoch}.   Avg.loss: {1.5 / epoch}.   Accuracy: {40 + epoch}.22%.\n" for epoch in (1, 2, 3))
    text += "torch version 2.13.0 cuda 12.4.1\n"
    run = read(write(tmp_path / "output.txt", text))
    assert values(run, "Avg.loss") == [1.5, 0.75, 0.5] and values(run, "Accuracy") == [41.22, 42.22, 43.22]
    assert sorted(run.tags) == ["Accuracy", "Avg.loss"]


def test_a_duration_a_full_stop_ends_is_no_value(tmp_path):
    # ssd.pytorch's train.py: the time of the batch, then the loss
    text = "".join(f"timer: 0.{2500 + i} sec.\niter {10 * i} || Loss: {3 - i / 10:.4f} ||\n" for i in range(5))
    run = read(write(tmp_path / "train.log", text))
    assert run.tags == ["Loss"] and steps(run, "Loss") == [0, 10, 20, 30, 40]


def sectioned_log(epochs: int) -> str:
    """A loop that prints its train and its validation results in one format, each under a heading naming its
    split (a date, then the training section, then the validation section, every epoch)."""
    lines = []
    for epoch in range(epochs):
        lines += [f"2022-03-06 10:5{epoch}:37", f"{'=' * 22}training epoch {epoch + 1}{'=' * 22}",
                  f"Epoch {epoch} | loss = {0.9 - epoch / 20:.3f} | current = {0.6 + epoch / 50:.3f}",
                  "Training consumes 53.71 second", "", f"{'=' * 22}validate epoch {epoch + 1}{'=' * 22}",
                  f"Epoch {epoch} | loss = {1.0 - epoch / 40:.3f} | current = {0.5 + epoch / 60:.3f}",
                  "Validation consumes 3.77 second"]
    return "\n".join(lines) + "\n"


def test_results_printed_alike_under_headings_naming_their_splits_are_each_split_s(tmp_path):
    run = read(write(tmp_path / "log.txt", sectioned_log(6)))
    assert sorted(run.tags) == ["current", "loss", "validate_current", "validate_loss"]
    assert values(run, "loss") == [0.9, 0.85, 0.8, 0.75, 0.7, 0.65]
    assert values(run, "validate_loss") == [1.0, 0.975, 0.95, 0.925, 0.9, 0.875]
    assert run.roles["validate_loss"] == Role.VAL_LOSS and not run.warnings


def test_a_heading_naming_a_split_renames_nothing_that_does_not_repeat_the_point_before(tmp_path):
    # "Validation:" heads a block whose lines name their split themselves; the training lines after it are train's
    text = "".join(f"Epoch {epoch} | loss = {1 / (epoch + 1):.3f}\nValidation:\nEpoch {epoch} | val_loss = "
                   f"{1.2 / (epoch + 1):.3f}\n" for epoch in range(5))
    run = read(write(tmp_path / "log.txt", text))
    assert sorted(run.tags) == ["loss", "val_loss"] and len(values(run, "loss")) == 5


def test_a_count_out_of_a_total_is_a_loop_s_progress_not_a_value(tmp_path):
    text = "".join(f"epoch {epoch} i={92 + epoch}/530 loss={1 / epoch:.3f} Accuracy: {900 + epoch}/1000\n"
                   for epoch in range(1, 6))
    run = read(write(tmp_path / "overnight.log", text))
    assert sorted(run.tags) == ["Accuracy", "loss"] and values(run, "Accuracy")[0] == 0.901


def test_cyclegan_lines_printed_once_an_epoch_or_less_place_by_their_epoch(tmp_path):
    # print_freq reached once an epoch, at its last batch: "iters" is the same on every line
    once = "".join(f"(epoch: {epoch}, iters: 3648, time: 1188.849) D_A: {0.2 + epoch / 100:.3f} G_A: 0.191 \n"
                   for epoch in range(1, 21))
    run = read(write(tmp_path / "loss_log.txt", once))
    assert steps(run, "D_A") == list(range(1, 21))
    # a tiny data set: every few epochs, at an epoch_iter that wraps (4, 8 … 24, 4 …)
    rarely = "".join(f"(epoch: {1 + 4 * line}, iters: {4 + 4 * (line % 6)}, time: 0.095, data: 0.200) G_GAN: 0.353 \n"
                     for line in range(30))
    run = read(write(tmp_path / "pix2pix_loss_log.txt", rarely))
    assert steps(run, "G_GAN") == [1 + 4 * line for line in range(30)]


def test_a_batch_size_among_the_settings_is_no_step_for_the_epochs_after_it(tmp_path):
    text = "[run] image_size=224  epochs=20  batch=32  margin=0.5\n" + "".join(
        f"[run] ep {epoch}/20  loss={0.5 - epoch / 100:.4f}(diag)  lr=1.95e-05  acc=0.745\n" for epoch in range(1, 21))
    run = read(write(tmp_path / "finetune.log", text))
    assert steps(run, "loss") == list(range(1, 21)) and run.roles["acc"] == Role.TRAIN_ACC


def test_folds_announced_on_lines_of_their_own_are_runs_however_early_they_stop(tmp_path):
    # a k-fold script's "========== FOLD 2/5 ==========", each fold early-stopped at its own epoch
    text = "".join(f"========== FOLD {fold}/3 ==========\n" + "".join(
        f"Epoch {epoch:3d}: train_loss={1 / epoch:.4f} val_loss={1.2 / epoch:.4f}\n" for epoch in range(1, last + 1))
        for fold, last in ((1, 30), (2, 12), (3, 20)))
    runs = curvedoc.load(write(tmp_path / "train_log.txt", text))
    assert [len(run.series("val_loss")) for run in runs] == [30, 12, 20]


def test_one_line_whose_epoch_goes_back_alone_is_no_restart(tmp_path):
    # a CycleGAN loss_log.txt with one line of epoch 11 printed as epoch 1 (iters counted within each epoch)
    lines = [f"(epoch: {epoch}, iters: {iters}, time: 0.060, data: 0.002) D_A: {1 / epoch:.3f} G_A: 0.5 "
             for epoch in range(1, 16) for iters in range(100, 500, 100)]
    lines[41] = lines[41].replace("(epoch: 11,", "(epoch: 1,")
    run = read(write(tmp_path / "loss_log.txt", "\n".join(lines) + "\n"))
    assert len(values(run, "D_A")) == 59 and steps(run, "D_A")[:5] == [100, 200, 300, 400, 500]
    assert any("goes back for that line alone" in warning for warning in run.warnings)


YOLOV5_RESULTS_TXT = "".join(
    f"{epoch:>10}/299{'4.69G':>10}{0.12 - epoch / 500:>10.4g}{0.0346:>10.4g}{0.0309:>10.4g}{0.185 - epoch / 500:>10.4g}"
    f"{60:>10}{640:>10}{0.1 + epoch / 50:>10.4g}{0.2 + epoch / 50:>10.4g}{0.05 + epoch / 60:>10.4g}"
    f"{0.02 + epoch / 80:>10.4g}{0.115 - epoch / 600:>10.4g}{0.0275:>10.4g}{0.0305:>10.4g}\n" for epoch in range(6))


def test_yolov5_results_txt_rows_are_its_epochs(tmp_path):
    """YOLOv5 up to v5.0 (and YOLOv3) writes results.txt without a header: the epoch of the last, GPU memory, the
    mean box, objectness, class and total losses, labels and image size of the last batch, precision, recall, the
    two mAPs and the validation losses, named as its later results.csv names them."""
    run = read(write(tmp_path / "results.txt", YOLOV5_RESULTS_TXT))
    assert sorted(run.tags) == sorted(["train/box_loss", "train/obj_loss", "train/cls_loss", "train/total_loss",
                                       "metrics/precision", "metrics/recall", "metrics/mAP_0.5",
                                       "metrics/mAP_0.5:0.95", "val/box_loss", "val/obj_loss", "val/cls_loss"])
    assert steps(run, "train/total_loss") == [0, 1, 2, 3, 4, 5] and values(run, "val/obj_loss")[0] == 0.0275
    assert run.roles["val/box_loss"] == Role.VAL_LOSS and run.roles["metrics/mAP_0.5"] == Role.SCORE


def test_a_yolov5_results_txt_and_its_event_file_are_one_run(tmp_path):
    from event_files import write_scalars

    exp = tmp_path / "runs" / "train" / "exp"
    exp.mkdir(parents=True)
    write(exp / "results.txt", YOLOV5_RESULTS_TXT)
    write_scalars(exp, {"train/box_loss": [0.12 - epoch / 500 for epoch in range(6)]})
    assert [source.path.name for source in discover(tmp_path).sources] == ["results.txt"]


def test_a_number_qualifying_a_name_and_an_argparse_namespace_are_no_values(tmp_path):
    text = "Namespace(Gamma=0.9, batch_size=64, lr=0.001, test=False)\n" + "".join(
        f"Episode {episode} | Reward: {episode / 10:.2f} | Avg Reward (100): {episode / 20:.2f}\n"
        for episode in range(1, 6))
    run = read(write(tmp_path / "training.log", text))
    assert sorted(run.tags) == ["Avg_Reward", "Reward"] and values(run, "Avg_Reward")[:2] == [0.05, 0.1]
    assert run.meta.hparams["lr"] == 0.001 and run.meta.hparams["batch_size"] == 64


def test_a_counter_glued_to_its_number_is_that_counter(tmp_path):
    """One script prints f"Batch{i},TrainLoss:{loss}" where another writes "Batch {i}, …", and Facebook research's
    logger prefixes "Epoch[3] - Iter: [0/13]" with its level, date and elapsed time: the same counters."""
    glued = "".join(f"Epoch {e}/2\n" + "".join(f"Batch{b},TrainLoss:{0.69 - e / 10 - b / 10_000:.4f},"
                                               f"TrainAcc:{50 + e + b / 100:.4f}\n" for b in (500, 1000, 1500))
                    for e in range(3))
    run = load_one(write(tmp_path / "vgg.txt", glued))
    assert run.point_counts()["TrainLoss"] == 9 and run.series("TrainLoss")["step"].is_monotonic_increasing
    swav = "".join(f"INFO - 09/04/20 07:56:{10 + e:02d} - 0:00:{27 + e:02d} - Epoch[{e}] - Iter: [0/13]\tTime 4.1 (4.1)"
                   f"\tLoss {6.7 - e / 2:.4f} ({6.7 - e / 2:.4f})\tPrec {40 + e}.1 ({40 + e}.1)\tLR 0.3\n"
                   f"INFO - 09/04/20 07:56:{40 + e:02d} - 0:01:{2 + e:02d} - Test:\tTime 4.7\tLoss {5 - e / 3:.4f}"
                   f"\tAcc@1 {27 + e}.240\tBest Acc@1 so far {27 + e}.2\n" for e in range(6))
    run = load_one(write(tmp_path / "train.log", swav))
    assert run.series("Loss")["step"].tolist() == [0, 13, 26, 39, 52, 65] and run.point_counts()["test_Loss"] == 6
    assert not run.warnings
    named = "".join(f"epoch10_loss: {0.5 - e / 20:.3f} step 2.pth\n" for e in range(4))  # names, not counters
    assert "epoch10_loss" in load_one(write(tmp_path / "named.log", named)).tags


def test_an_epoch_glued_to_its_count_of_samples_counts_them_within_it_though_a_line_was_cut_out(tmp_path):
    """CSRA-Paddle's "Epoch 1[1616/5011]: loss:0.20306, lr:0.00159", four lines an epoch and an evaluation after each:
    the bracket counts the epoch's samples, which start again every epoch, so the run is one, counted on, even
    where lines were cut out of the log and one epoch start is skipped ("Epoch 3[1616/5011]", "Epoch 4[4816/…]")."""
    lines = []
    for epoch in range(1, 13):
        for seen in (16, 1616, 3216, 4816):
            if not (epoch == 3 and seen > 1616) and not (epoch == 4 and seen < 4816):
                lines.append(f"Epoch {epoch}[{seen}/5011]: loss:{0.7 / (epoch + seen / 5011):.5f}, lr:0.01000")
        lines += [f"Test on Epoch {epoch}", f"mAP: {0.86 + epoch / 100:.6f}"]
    run = load_one(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert run.point_counts()["loss"] == 43 and run.point_counts()["mAP"] == 12
    assert run.series("loss")["step"].tolist()[:5] == [16, 1616, 3216, 4816, 5027]


CAFFE_LAYERS = """layer {
  name: "score"
  type: "InnerProduct"
  bottom: "pool7"
  top: "score"
  inner_product_param {
    num_output: %d
  }
}
layer {
  name: "loss"
  type: "SoftmaxWithLoss"
  bottom: "score"
  bottom: "label"
  top: "loss"
}
"""


def test_caffes_net_definition_gives_the_class_count_of_its_one_loss_head(tmp_path):
    """Caffe prints the prototxt it trains before its "Iteration N, loss = x" lines: the SoftmaxWithLoss layer's
    input is the InnerProduct layer with num_output 10. Two such heads (coarse and fine labels) sum two losses,
    whose chance level no one count gives."""
    iterations = "".join(f"I1020 04:37:58.920188 10450 solver.cpp:228] Iteration {i}, loss = {9.98 / (1 + i / 50):.4f}"
                         "\n" for i in range(0, 1000, 50))
    net = "I1020 net.cpp:58] Initializing net from parameters:\nname: \"poolcnn\"\n" + CAFFE_LAYERS % 10
    run = load_one(write(tmp_path / "one_head.log", net + net + iterations))
    assert run.meta.hparams["num_classes"] == 10 and run.meta.n_classes == 10
    heads = net + (CAFFE_LAYERS % 100).replace('"score"', '"fine"').replace('"loss"', '"fine_loss"')
    run = load_one(write(tmp_path / "two_heads.log", heads + iterations))
    assert "num_classes" not in run.meta.hparams


def test_what_a_data_loader_found_is_the_class_count_or_the_vocabulary(tmp_path):
    """Keras's flow_from_directory prints "Found 4575 images belonging to 62 classes." for the training data, then
    for the validation data (a real public log's opening); Karpathy's minGPT prints "data has 26724 characters, 17
    unique." before its character-level model trains."""
    epochs = "".join(f"Epoch {e}/5\n143/143 - 30s - loss: {4.1 / e:.4f} - accuracy: {0.2 * e:.4f}\n"
                     for e in range(1, 6))
    text = "Found 4575 images belonging to 62 classes.\nFound 2520 images belonging to 61 classes.\n" + epochs
    run = load_one(write(tmp_path / "training_log.txt", text))
    assert run.meta.n_classes == 62 and run.meta.n_classes_kind == "classes"
    lines = "".join(f"iter {i}: train loss {2.8 / (1 + i / 100):.5f}\n" for i in range(0, 1000, 100))
    run = load_one(write(tmp_path / "chargpt.log", "data has 26724 characters, 17 unique.\n" + lines))
    assert run.meta.n_classes == 17 and run.meta.n_classes_kind == "vocabulary"


@pytest.mark.parametrize("printed", [
    "Namespace(arch='resnet18', dataset='cifar100', lr=0.1)",
    "2023-03-19 09:54:17,227 - INFO:   --dataset CIFAR100",  # a real public log's argument list
    "{'data': './data/cifar100', 'epochs': 9}",
])
def test_printed_arguments_naming_a_benchmark_give_its_class_count(tmp_path, printed):
    epochs = "".join(f"Epoch {e}: loss={4.6 / (1 + e / 5):.3f}\n" for e in range(9))
    run = load_one(write(tmp_path / "train.log", "Loading data from disk\n" + printed + "\n" + epochs))
    assert run.meta.benchmark_classes[1] == 100


def test_words_after_data_that_name_no_benchmark_are_no_setting(tmp_path):
    epochs = "".join(f"Epoch {e}: loss={2.3 / (1 + e / 5):.3f} data_time: 0.01\n" for e in range(9))
    run = load_one(write(tmp_path / "train.log", "data loading took 3 s\n" + epochs))
    assert run.meta.benchmark_classes is None and "dataset" not in run.meta.hparams


def test_deepspeeds_reports_place_the_pipeline_loss_at_its_step(tmp_path):
    """DeepSpeed's logger names where each message came from ("[INFO] [logging.py:96:log_dist] [Rank 0] step=10, …"),
    and its pipeline engine prints "steps: 10 loss: 2.3456 iter time (s): …": the loss at that step, no "Rank" curve.
    A script's own "steps: 10315, episodes: 100, …" counts environment steps: values, as before."""
    lines = "".join(
        f"[2023-08-02 00:41:{i:02d},123] [INFO] [logging.py:96:log_dist] [Rank 0] step={10 * i}, skipped=0, "
        f"lr=[0.0001], mom=[(0.9, 0.999)]\n"
        f"steps: {10 * i} loss: {10.3 / (1 + i / 5):.4f} iter time (s): 0.397 samples/sec: 40.3\n"
        for i in range(1, 21))
    run = load_one(write(tmp_path / "train.log", lines))
    assert run.roles["loss"] == Role.TRAIN_LOSS and "Rank" not in run.tags
    assert run.series("loss")["step"].tolist() == list(range(10, 210, 10))
    agent = "".join(f"steps: {10315 * i}, episodes: {100 * i}, mean episode reward: {500 + i}\n" for i in range(1, 12))
    assert "steps" in load_one(write(tmp_path / "agent.txt", agent)).tags


def test_names_under_a_losses_heading_are_losses_but_for_measures_of_their_own(tmp_path):
    """PyTorch-YOLOv3's "[Epoch 0/30, Batch 5/7329] [Losses: x 0.27, y 0.25, w 3.3, h 2.9, conf 3.8, cls 0.81, total
    11.3, recall: 0.06, precision: 0.001]": x … total are the loss and its terms; recall and precision stay scores."""
    text = "".join(f"[Epoch 0/30, Batch {b}/7329] [Losses: x 0.27, y 0.25, w {4 - b / 40:.3f}, h 2.9, conf 3.8, "
                   f"cls 0.81, total {12 - b / 40:.3f}, recall: {b / 100:.5f}, precision: 0.001]\n" for b in range(30))
    run = load_one(write(tmp_path / "log_train.txt", text))
    assert run.roles["total"] == run.roles["x"] == Role.TRAIN_LOSS and run.roles["recall"] == Role.SCORE
    assert len(run.series("total")) == 30


def test_the_time_each_split_took_is_no_heading_of_the_line(tmp_path):
    """"Epoch 1/50 | Loss: 1.7193 | R@1: 0.9868 | Time: 2008.1s (train=2007.6s, val=0.6s)" (Neural-Spectral-Codec): the
    split keyed by a number is that split's time, and the line's Loss stays the train loss."""
    text = "".join(f"[2026-01-26 12:31:01] INFO: Epoch {e}/50 | Loss: {1.7 / e:.4f} | R@1: 0.98{e} | Time: 2008.1s "
                   f"(train=2007.6s, val=0.6s)\n" for e in range(1, 6))
    run = load_one(write(tmp_path / "training.log", text))
    assert run.roles["Loss"] == Role.TRAIN_LOSS and "val_Loss" not in run.tags


def test_a_split_timed_in_brackets_heads_the_names_after_it(tmp_path):
    """DeepSleepNet's "epoch 1 : train (517.15 sec): n=215300, loss=1.609 (0.000), acc=0.198 | valid (3.22 sec):
    n=5400, loss=1.610 (0.000), acc=0.319": the names after "valid (… sec)" are the validation's, not a repeat of the
    train names to drop."""
    text = "".join(f"INFO:root:\nepoch {e} : train (517.15 sec): n=215300, loss={1.61 - e / 50:.3f} (0.000), "
                   f"acc={0.2 + e / 50:.3f} | valid (3.22 sec): n=5400, loss={1.62 - e / 60:.3f} (0.000), "
                   f"acc={0.19 + e / 60:.3f}\n" for e in range(1, 6))
    run = load_one(write(tmp_path / "train.log", text))
    assert values(run, "train_loss")[0] == 1.59 and values(run, "valid_loss")[0] == 1.603
    assert run.roles["valid_loss"] == Role.VAL_LOSS and run.roles["valid_acc"] == Role.VAL_ACC


def test_a_line_opening_with_its_epoch_of_the_total_in_brackets_counts_batches_within_it(tmp_path):
    """ "[1/100] batch 50/5305 loss=…" under a logging prefix and DCGAN's "[0/5][50/1583]\tLoss_D: …": the bracket
    is the epoch of the total, so the batch counter that starts again every epoch is counted on across epochs, one
    run, not a run per epoch."""
    lines = []
    for epoch in range(1, 4):
        lines += [f"12:34:13 [INFO]   [{epoch}/100] batch {b}/300 loss={-100 + epoch * 3 + b / 100:.4f} lr=1.00e-05"
                  for b in range(50, 301, 50)]
        lines.append(f"12:36:36 [INFO] Epoch {epoch}/100 (127.7s) | train_loss={-90 + epoch:.4f} | "
                     f"val_loss={-76 + epoch:.4f}")
    run = load_one(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert run.point_counts()["loss"] == 18 and run.point_counts()["val_loss"] == 3
    assert run.series("loss")["step"].is_monotonic_increasing
    dcgan = "".join(f"[{e}/5][{b}/300]\tLoss_D: {1.5 - e / 10:.4f}\tLoss_G: {2 - e / 10:.4f}\tD(x): 0.5\n"
                    for e in range(3) for b in range(0, 300, 50))
    run = load_one(write(tmp_path / "dcgan.log", dcgan))
    assert run.series("Loss_D")["step"].tolist()[:8] == [0, 50, 100, 150, 200, 250, 300, 350]
    # a script's stages, no batch after them: "[5/7] Phase 1" is no epoch 5
    staged = "[ 5/7 ] Phase 1 - top layers\n" + "".join(f"Epoch {e}/3\nloss: {1 - e / 10:.2f} - accuracy: 0.{e}\n"
                                                         for e in range(1, 4)) + "[6/6] Saving model...\n"
    run = load_one(write(tmp_path / "staged.log", staged))
    assert sorted(run.tags) == ["accuracy", "loss"] and run.series("loss")["step"].tolist() == [1, 2, 3]


def test_the_swin_transformer_log_counts_batches_within_its_epochs_and_holds_its_evaluations(tmp_path):
    """The Swin Transformer's main.py (copied by SimMIM, CSWin and many more) logs "Train: [3/300][1000/1251]\t…"
    under the prefix "[2021-03-25 10:00:00 swin_tiny] (main.py 225): INFO ": epoch 3 of 300, batch 1000 of the
    epoch's 1251. Its evaluation is a pass printed batch by batch, a summary and the best accuracy so far."""
    prefix = "[2021-03-25 10:00:00 swin_tiny_patch4_window7_224] (main.py 225): INFO "
    lines = [prefix + "Start training"]
    for epoch in range(4):
        lines += [f"{prefix}Train: [{epoch}/300][{b}/1251]\teta 0:03:45 lr 0.000020\ttime 0.4123 (0.5123)\t"
                  f"loss {6.9 - epoch / 10 - b / 10_000:.4f} (6.8821)\tgrad_norm 2.2100 (2.7100)\tmem 8000MB"
                  for b in (0, 500, 1000)]
        lines += [f"{prefix}EPOCH {epoch} training takes 0:10:00",
                  (f"{prefix}Test: [0/98]\tTime 2.123 (2.123)\tLoss 6.8000 ({6.8 - epoch / 10:.4f})\tAcc@1 0.391 "
                   f"({epoch + 0.5:.3f})\tAcc@5 1.953 (1.953)\tMem 8000MB"),
                  f"{prefix} * Acc@1 {epoch + 0.5:.3f} Acc@5 2.100",
                  f"{prefix}Accuracy of the network on the 50000 test images: {epoch + 0.5:.1f}%",
                  f"{prefix}Max accuracy: {epoch + 0.5:.2f}%"]
    run = load_one(write(tmp_path / "log_rank0.txt", "\n".join(lines) + "\n"))
    assert run.series("loss")["step"].tolist() == [0, 500, 1000, 1251, 1751, 2251, 2502, 3002, 3502, 3753, 4253, 4753]
    assert run.primary("test_acc") == "test_Acc@1" and values(run, "test_Acc@1") == [0.5, 1.5, 2.5, 3.5]
    assert run.series("test_Loss")["step"].tolist() == [1000, 2251, 3502, 4753]
    assert not [tag for tag in run.tags if "Max" in tag]  # the best so far restates test_Acc@1


def test_paddleclas_evaluation_printed_batch_by_batch_is_one_pass_after_its_epoch(tmp_path):
    """PaddleClas logs its evaluation's running averages batch by batch ("[Eval][Epoch 2][Iter: 10/25]CELoss: …"),
    then the pass's ("[Eval][Epoch 2][Avg]CELoss: …"): one validation point per epoch, after its training, at the
    pass's average, not the evaluation's batches as steps within the epoch. The learning rate carries its
    schedule's kind glued to its name ("lr(LinearWarmup): 0.00002245"), a word of its name; its config prints the
    class count."""
    prefix = "[2022/10/07 21:47:28] ppcls INFO: "
    lines = [f"{prefix}Arch : ", f"{prefix}    class_num : 1000", f"{prefix}    name : cait_xxs_24"]
    for epoch in range(1, 5):
        lines += [f"{prefix}[Train][Epoch {epoch}/400][Iter: {b}/98]lr(LinearWarmup): 0.00002245, CELoss: "
                  f"{6.93 - epoch / 10 - b / 1000:.5f}, loss: {6.93 - epoch / 10 - b / 1000:.5f}, batch_cost: 0.49343s, "
                  f"reader_cost: 0.00027, ips: 259.40864 samples/s, eta: 5:22:17" for b in (0, 45, 90)]
        lines.append(f"{prefix}[Train][Epoch {epoch}/400][Avg]CELoss: 6.92425, loss: 6.92425")
        lines += [f"{prefix}[Eval][Epoch {epoch}][Iter: {b}/25]CELoss: 6.9{b:02d}, loss: 6.9{b:02d}, top1: 0.00071, "
                  f"top5: 0.00732, batch_cost: 0.71648s, reader_cost: 0.39282, ips: 357.30297 images/sec"
                  for b in (0, 10, 20)]
        lines += [(f"{prefix}[Eval][Epoch {epoch}][Avg]CELoss: {6.9 - epoch / 10:.5f}, loss: {6.9 - epoch / 10:.5f}, "
                   f"top1: 0.0{epoch}, top5: 0.00606"), f"{prefix}[Eval][Epoch {epoch}][best metric: 0.0{epoch}]"]
    run = load_one(write(tmp_path / "train.log", "\n".join(lines) + "\n"))
    assert run.meta.n_classes == 1000
    assert run.series("eval_CELoss")["step"].tolist() == [90, 188, 286, 384]
    assert values(run, "eval_CELoss") == [6.8, 6.7, 6.6, 6.5] and values(run, "eval_top1") == [0.01, 0.02, 0.03, 0.04]
    assert run.primary("lr") == "lr_LinearWarmup" and run.point_counts()["lr_LinearWarmup"] == 12


def test_mmdetection_2_evaluation_line_with_its_copypaste_restatement_is_read(tmp_path):
    """MMDetection 2's evaluation line ends with "bbox_mAP_copypaste: 0.374 0.581 …", the line's numbers again: the
    line is the evaluation's mAP, not Detectron2's "copypaste: " summary (which dropped it), and the restatement is
    no curve."""
    prefix = "2021-03-25 10:00:00,000 - mmdet - INFO - "
    lines = []
    for epoch in range(1, 4):
        lines += [f"{prefix}Epoch [{epoch}][{b}/7330]\tlr: 1.990e-03, eta: 1 day, 2:00:00, time: 0.500, "
                  f"loss_cls: 1.2000, acc: 91.0, loss: {2.9 - epoch / 10 - b / 1000:.4f}" for b in (50, 100)]
        lines.append(f"{prefix}Epoch(val) [{epoch}][625]\tbbox_mAP: 0.{epoch}000, bbox_mAP_50: 0.4000, bbox_mAP_75: "
                     f"0.2000, bbox_mAP_copypaste: 0.{epoch}00 0.400 0.200 -1.000 0.200 0.300")
    run = load_one(write(tmp_path / "20210325_100000.log", "\n".join(lines) + "\n"))
    assert values(run, "val_bbox_mAP") == [0.1, 0.2, 0.3] and not [tag for tag in run.tags if "copypaste" in tag]
    assert run.series("val_bbox_mAP")["step"].tolist() == [100, 7430, 14760]


def test_a_step_said_finished_is_the_lines_step(tmp_path):
    """Stanza's trainers log "Finished STEP 20/50000, loss = 3.8 (0.1 sec/batch), lr: 0.003" and, at each
    evaluation, "step 40: train_loss = 2.7, dev_score = 0.2": the first kind's loss was lost (read by line number,
    then as lines without a step once the second kind gave steps)."""
    lines = []
    for step in range(20, 220, 20):
        lines.append(f"2021-01-01 10:00:00 INFO: Finished STEP {step}/50000, loss = {4 - step / 100:.3f} (0.1 sec/batch)"
                     f", lr: 0.003000")
        if step % 40 == 0:
            lines.append(f"2021-01-01 10:00:00 INFO: step {step}: train_loss = {3 - step / 100:.3f}, dev_score = 0.5")
    run = load_one(write(tmp_path / "log.txt", "\n".join(lines) + "\n"))
    assert run.series("loss")["step"].tolist() == list(range(20, 220, 20))
    assert run.series("dev_score")["step"].tolist() == [40, 80, 120, 160, 200]


def test_a_name_glued_to_the_counter_before_it_is_a_pair_of_its_own(tmp_path):
    """A public PPO script prints print(f"idx: {i}" + f"loss: {loss}"): "idx: 12loss: tensor(8.4650, grad_fn=…)",
    the counter's number and the loss's name glued. The file was refused: nothing named a metric."""
    text = "".join(f"idx: {i}loss: tensor({8.5 + (i % 7) / 3:.4f}, grad_fn=<NegBackward>)\n" for i in range(40))
    run = load_one(write(tmp_path / "loss.txt", text))
    assert run.roles["loss"] == Role.TRAIN_LOSS and run.point_counts()["loss"] == 40
    epochs = "".join(f"epoch: {e}lr: 0.01 loss: {1 - e / 10:.2f}\n" for e in range(1, 5))
    assert load_one(write(tmp_path / "train.log", epochs)).series("loss")["step"].tolist() == [1, 2, 3, 4]


def test_a_names_abbreviation_in_brackets_before_its_value_is_its_last_word(tmp_path):
    """VideoPose3D-style evaluation lines: "Protocol #1 Error (MPJPE): 164.3 mm" names the error by its
    abbreviation, which tells it from "Protocol #2 Error (P-MPJPE)" printed beside it."""
    text = "".join(f"Epoch {e}\nProtocol #1 Error (MPJPE): {160 - 10 * e:.3f} mm\nAcceleration error: {3 - e / 5:.3f}"
                   f" mm/s^2\nProtocol #2 Error (P-MPJPE): {110 - 5 * e:.3f} mm\n" for e in range(1, 5))
    run = load_one(write(tmp_path / "output.log", text))
    assert sorted(run.tags) == ["Acceleration_error", "Error_MPJPE", "Error_P-MPJPE"]
    assert run.series("Error_P-MPJPE")["value"].tolist() == [105, 100, 95, 90]


def test_an_evaluations_own_progress_on_its_line_counts_its_batches_not_training(tmp_path):
    """Demucs' LogProgress: "Train | Epoch 1 | 143/573 | … | Loss 0.23" counts training's batches within the epoch,
    "Valid | Epoch 1 | 2/3 | … | Loss 0.22" the evaluation's: one run whose validation sits at its epoch's end, not
    a run per epoch cut where the evaluation's counter went back."""
    lines = []
    for epoch in range(1, 5):
        lines += [f"- Train | Epoch {epoch} | {b}/573 | 1.45 it/sec | Loss {0.3 - epoch / 50 - b / 10_000:.4f} | "
                  f"Reco {0.29 - epoch / 50:.4f}" for b in (143, 286, 429, 572)]
        lines += [f"- Valid | Epoch {epoch} | {b}/3 | 0.31 it/sec | Loss {0.25 - epoch / 40:.4f} | Nsdr {3 + epoch}.1"
                  for _ in range(3) for b in (1, 2)]
    run = load_one(write(tmp_path / "train_log.txt", "\n".join(lines) + "\n"))
    assert run.point_counts()["Loss"] == 16 and run.point_counts()["valid_Loss"] == 4
    assert run.series("valid_Loss")["step"].tolist() == [572, 1145, 1718, 2291]


def test_words_and_a_number_in_brackets_before_a_value_qualify_its_name(tmp_path):
    text = "".join(f"Epoch 1, Global Batch {25 * b}, Training Loss: {8 - b / 10:.4f}, Validation Accuracy: {b}.00%, "
                   f"Average Validation Accuracy (last 25): {b / 100:.4f}\n" for b in range(1, 6))
    run = load_one(write(tmp_path / "training.log", text))
    assert sorted(run.tags) == ["Average_Validation_Accuracy", "Training_Loss", "Validation_Accuracy"]


def test_a_counters_count_of_its_total_in_brackets_after_its_name_places_the_line(tmp_path):
    """A k-fold script's "fold[1/5] epoch[3/100] loss: 3.01": each fold trained to its last epoch, then the next
    fold starts over, a run of its own (not a restart whose epochs replace the fold before). An index in brackets
    ("weights[0]: 0.5") counts no total and stays a name's."""
    lines = [f"2022-04-21 13:25:23,878 train_log INFO: fold[{fold}/2] epoch[{e}/6] loss: {3.6 - e / 3:.6f} "
             f"train accuracy: {0.04 * e:.6f}" for fold in (1, 2) for e in range(1, 7)]
    runs = curvedoc.load(write(tmp_path / "train_log.txt", "\n".join(lines) + "\n"))
    assert [run.name for run in runs] == ["train_log.txt#1", "train_log.txt#2"]
    assert runs[0].series("loss")["step"].tolist() == [1, 2, 3, 4, 5, 6] and not runs[0].warnings
    indexed = "".join(f"step {s}: loss {1 / s:.3f} weights[0]: 0.5\n" for s in range(1, 5))
    assert "weights" not in load_one(write(tmp_path / "indexed.log", indexed)).tags


def test_a_table_of_grouped_columns_names_each_column_by_its_group(tmp_path):
    """A Kaggle training template prints a line naming groups of columns between bars over its header, then one
    row per evaluation: the columns before the first bar place the row (the epoch; the iteration, in thousands and
    starred at a saved checkpoint, only without one) and hold the learning rate as ``rate``; a group's columns are
    named by its first word. A group whose row is not one number a column (a best-so-far under two words, a time
    in hours and minutes) is not read."""
    head = ("** start training here! **\n"
            "                      |----- VALID ---|---- TRAIN/BATCH --------------|------Accuracy------|\n"
            "rate     iter   epoch | loss  top-1   | loss0  loss1  | Current Best | time          |\n"
            "--------------------------------------------------------------------------------------\n")
    rows = "".join(f"0.00040   {e / 2:4.2f}{'*' if e % 2 else ' '} {e:4.2f}  | {1.2 - e / 10:.3f}  {60 + e:.3f}  | "
                   f"{1.0 - e / 10:.3f}  0.010  |   {60 + e:.3f}  |  0 hr {e:02d} min\n" for e in range(6))
    run = read(write(tmp_path / "log.train.txt", head + rows))
    assert steps(run, "valid_loss") == steps(run, "train_loss0") == [0, 1, 2, 3, 4, 5]
    assert values(run, "valid_top-1")[-1] == pytest.approx(65.0) and values(run, "lr")[0] == pytest.approx(4e-4)
    assert run.roles["valid_loss"] == Role.VAL_LOSS and run.roles["valid_top-1"] == Role.VAL_ACC
    assert not {"iter", "time", "accuracy_Current", "accuracy_Best", "epoch"} & set(run.tags)


def test_an_ellipsis_ends_the_number_before_it(tmp_path):
    """A heading that names the step of the evaluation printed under it ("Evaluating at step 5000...", robustqa's
    log) ends its number with an ellipsis, as a sentence's full stop may: the step is read, and the scores under it
    are placed at it. A version's next group (1.2.3) still ends no number."""
    text = "".join(f"Evaluating at step {5000 * k}...\nEval F1: {60 + k:.2f}, EM: {40 + k:.2f}\n" for k in range(5))
    run = read(write(tmp_path / "log_train.txt", "version 1.2.3 of the trainer\n" + text))
    assert steps(run, "Eval_F1") == [0, 5000, 10000, 15000, 20000]
    assert "version" not in run.tags


def test_a_summary_restating_the_best_epoch_is_no_restart(tmp_path):
    """A table of every epoch, then a summary naming the best one ("best model: epoch: 490, test_loss: -7.03599"):
    the summary goes back to the epoch of the curve's lowest value and restates it, and is no session restarted
    there, whose values would replace the epochs after it."""
    table = "epoch  test_loss    filename\n" + "".join(f"{e:<6d} {-5 - e / 100 - (e == 7) / 10:.6f}    net_{e}.pth\n"
                                                     for e in range(12))
    summary = "\nbest model (lowest loss):\nepoch: 7\ntest_loss: -5.170000\nfilename: net_7.pth\n"
    run = read(write(tmp_path / "log0.txt", table + summary))
    assert steps(run, "test_loss") == list(range(12))


def test_lightning_bars_give_each_epoch_its_own_validation_scores(tmp_path):
    """Lightning's bar, captured to a file with nothing else printed: "Epoch 0: 100%" shows last epoch's scores when
    the batches are done, is drawn again with the epoch's own once validation has run, then "Epoch 1: 0%" starts on
    the same line. Each epoch's values are those of the bar drawn last for it, not those the next line ends on."""
    def bar(epoch, done, val_loss):
        return (f"Epoch {epoch}: {100 * done // 28:3d}%|#####| {done}/28 [00:01<00:00, 25.63it/s, v_num=47, "
                f"val_loss={val_loss:.3f}, train_loss={val_loss + 0.1:.3f}]")
    lines, shown, redrawn = [], 0.9, []
    for epoch in range(5):
        own = 0.8 - epoch / 10
        lines.append("\r".join(["", *redrawn, *(bar(epoch, done, shown) for done in (0, 14, 28))]) + "\n")
        lines.append("\rValidation DataLoader 0: 100%|#####| 4/4 [00:00<00:00, 50.00it/s]\n")
        redrawn, shown = [bar(epoch, 28, own)], own
    run = read(write(tmp_path / "fc_mlp.log", "".join(lines) + "\r" + redrawn[0] + "\n"))
    assert values(run, "val_loss") == pytest.approx([0.8, 0.7, 0.6, 0.5, 0.4]) and "v_num" not in run.tags


def test_the_pytorch_tutorial_counter_gives_the_epoch_and_the_batch(tmp_path):
    """PyTorch's CIFAR-10 tutorial prints "[1,  2000] loss: 2.187", the epoch and the batch in brackets, and the
    scripts grown from it print a test accuracy after each epoch: the loss is read at its batch within its epoch,
    counted on across the epochs, and the accuracy at the end of its epoch, not dropped as a value without a step."""
    text = "".join(f"[{epoch}, {batch:5d}] loss: {2.2 - epoch / 5 - batch / 20000:.3f}\n" for epoch in (1, 2, 3)
                   for batch in (2000, 4000, 6000))
    run = read(write(tmp_path / "tutorial.log", text + "Finished Training\n"))
    assert steps(run, "loss") == [2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000, 18000]
    with_tests = "".join(f"[{epoch}, {batch}] loss: {2.2 - epoch / 5:.3f}\n" for epoch in (1, 2, 3) for batch in (1, 101))
    with_tests = with_tests.replace("[2, 1]", "Epoch 1: Test Accuracy: 52.80%\n[2, 1]").replace(
        "[3, 1]", "Epoch 2: Test Accuracy: 56.93%\n[3, 1]") + "Epoch 3: Test Accuracy: 58.00%\n"
    run = read(write(tmp_path / "training_log.txt", with_tests))
    assert len(steps(run, "loss")) == 6 and values(run, "Test_Accuracy") == pytest.approx([52.8, 56.93, 58.0])


def test_trainer_dicts_of_two_trainings_each_keep_every_point_on_a_rounded_epoch(tmp_path):
    """Two Trainer runs printed one after the other, each a dict a step with round(epoch, 2) and no step: the epoch
    goes back where the second begins, and the dicts that share a rounded epoch are still placed one after another
    in each, so neither run keeps only one dict of every few."""
    def training(scale):
        return "".join(f"{{'loss': {scale / (record + 1):.4f}, 'learning_rate': 7e-05, 'epoch': {record // 4 / 100}}}\n"
                       for record in range(12))
    header = "{'config_name': 'run', 'lr': 0.0003}\n"
    runs = textlog.read(Source("text", write(tmp_path / "out.txt", header + training(1.0) + header + training(2.0)),
                               ((None, tmp_path / "out.txt"),), True))
    assert [len(values(run, "loss")) for run in runs] == [12, 12]


def test_a_bare_average_on_an_episodes_line_is_the_agents_score(tmp_path):
    """A public DQN's printout (angela's results/*.md): "Episode 300  Avg: -997.00  BestAvg: -997.00 …": the
    average return of the episodes so far, the agent's score. The same average on an epoch's line says nothing of
    what it averages."""
    lines = "".join(f"Episode {100 * n:5d}   Avg: {-1000 + 3 * n:.2f}   BestAvg: {-1000 + 3 * n:.2f}   |   "
                    f"Steps: {99814 * n:8d}  Secs: {160 * n}\n" for n in range(1, 21))
    run = load_one(write(tmp_path / "mountaincar.log", lines))
    assert run.roles["Avg"] is Role.SCORE
    run = load_one(write(tmp_path / "epochs.log", lines.replace("Episode", "Epoch")))
    assert run.roles["Avg"] is Role.OTHER
