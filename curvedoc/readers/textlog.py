"""Free-text training logs: the captured stdout of a training script (``python train.py > train.log``, ``nohup.out``,
a Slurm ``.out`` file, W&B's ``files/output.log``).

Each line is cleaned first:
- ANSI colour and cursor codes are dropped, and of a line redrawn in place with ``\\r`` or backspaces (Keras' and
  tqdm's progress bars) only the last text drawn counts: what the terminal showed in the end, except a printed dict
  that a bar redrew over on its line (the Trainer's print and tqdm's stderr interleaved by ``2>&1``): a record;
- a Keras progress line (``469/469 ━━━━ 5s 10ms/step - loss: 0.2345 - val_loss: …``; Keras 2's ``[=====]`` bars
  and ``verbose=2`` lines alike) is an epoch's summary only when its batch count is complete; the per-batch lines
  before it are skipped. A tqdm bar is skipped whole, its postfix too (``loss=0.23`` there is one batch's or a
  running value, redrawn with stale ones, as Lightning's bar shows last epoch's val_loss); only its description
  (``Epoch 3:``) may say which epoch the lines after it report. In a log with no other values, the postfix each
  bar shows when it finished (``… 28/28 [00:23<00:00, 1.20it/s, D=2.236, G=0.009]``) is read, at that epoch, the
  last one drawn for the epoch counting (Lightning draws it again with the epoch's validation scores); and when
  too few bars finished for a curve (one bar over the whole training, as the diffusers scripts draw it), the
  training's values of every drawing, at the bar's count;
- a number counts only right after a name, and not when ``:``, ``-`` or ``,`` and a digit follow it, so dates, clock
  times, glog prefixes (``I0704 22:39:25.550000 123 trainer.cc:10]``), logging's ``train.py:88`` and the first
  groups of ``134,305,611`` never become values; nor when a word for things counted follows it: ``Train=115
  batches``, ``AKIEC: 303 images`` count batches and images (``samples/s 300`` and ``steps: 500`` name numbers);
- git's merge-conflict markers (``<<<<<<< HEAD``, ``=======``, ``>>>>>>> 437352c``, a log committed mid-merge) are
  no lines of the log: both versions between them are what two copies of the log appended, read one after the
  other as its sessions (with a warning), and a diff3 base section (``|||||||`` up to ``=======``), which both
  replaced, is not read;
- Lightning's checkpoint message (``Epoch 3, global step 88: 'val_loss' reached 0.12844 (best 0.12844), saving model
  to … as top 1``) is read as the monitored metric at that step, and ``… was not in top 1`` as no value;
- a printed PyTorch module (``(0): Conv3d(4, 24, kernel_size=(3, 3, 3), …)``, a layer a line) holds no values, and a
  history printed whole on one line (``print(history.history)``: a dict of metric lists, or one list per split under
  a name, ``losses:{'train': […], 'val': […]}``) is kept aside: it is the log's curves, over the epochs 1, 2, …,
  when no line places values at a step or an epoch.

Then every named number is taken: ``loss: 0.23``, ``loss=0.23``, ``train loss 2.01`` (tag ``train_loss``),
``'loss': 0.41`` and ``'loss': '0.41'`` in a printed dict, ``np.float64(0.9)`` or ``tensor(0.9)`` around a value,
``Step 6470/6501`` (a step and its total), ``acc: 91.2%`` (kept as logged: 91.2), ``1,234`` (1234), a list of
per-class overlap scores (nnU-Net's ``Pseudo dice [np.float32(0.91), …]``) as their mean, another list as its first
value. ``nan``, ``inf``, ``-inf``, ``NaN``, ``Inf`` and ``Infinity`` are values; an all-capitals ``INF`` (a class
label) or a log level ``INFO`` is not. A correct/total count named as an accuracy (``Accuracy: 9887/10000``) is the
fraction. Prose is not read: words, then a number after a space, name it only when they say what it measures (``train
loss 2.01``, ``Val acc is 86.0%``), for a sentence states numbers that way too (``Archibald eats 1 apple``, ``There are
12 months``: the prompts and answers an LLM's training prints), and never its step (``It is 400 feet``); a quoted
text (a prompt, a completion, ``device='mps:0'``) holds no values, while a quoted number (``'loss': '0.41'``) is one.
Tags keep the log's own names, so role inference sees ``val_loss``, ``eval_loss``, ``Loss``. A line that says it
reports a validation or test split outside its pairs (``[eval]``, ``Test set:``, fairseq's ``valid on 'valid'
subset``) prefixes its other names with that word (``test_Average_loss``), and so does a line whose first names
all name one (``Test Average loss: 0.000, Accuracy: …`` → ``test_Accuracy``); a bare split name (nanoGPT's
``train 2.01 val 2.05``) is that split's loss when the line names no loss otherwise, and with a whole number
(``[Split] Train=3667 | Val=786``) the split's size, no value. The key/value tables of the
reinforcement-learning loggers (OpenAI Baselines', Stable-Baselines3's ``| rollout/ep_rew_mean | 22 |`` rows
between dashed rules) are one record each, at the environment step their ``total_timesteps`` (or ``total/steps``)
row counts. The CycleGAN/pix2pix repository's ``loss_log.txt`` (``(epoch: 1, iters: 100, time: 0.857, data:
2.929) D_A: 0.111 G_A: 0.660 cycle_A: 1.700 …``) prints nothing but losses after its parenthesis, whatever their
names, and only the epoch and the iteration within it (its x) among timings inside it; its ``Training Loss``
header opens each appended session, which the restart rule below sorts out.

The x axis, in this order:
1. the step, when lines carry one (``step``, ``global_step``, ``iter``, ``iteration``, ``it``, ``num_updates``,
   ``batch``), or in brackets before a line's first pair (clu's ``[100] accuracy_test=0.65, lr=0.0075``); a step
   spelled with a word or sign saying it is a number (``Epoch no. = 3``, ``epoch_num``, ``batch_index``, ``Step #500``;
   before the counter such a word counts them: ``num_epochs: 20`` is a setting) and, in a sentence, after the metric
   measured at it (``loss in step 1000 is 1.91``, ``Loss at epoch 3: 0.52``); a step
   that starts again with every epoch (``Epoch 1 | Step 0/6501``, timm's ``Train: 3 [  50/1251 (4%)]``, MMEngine's
   ``Epoch(train) [3][  50/1251]``) is counted on across epochs. The words before a step's name may say the split
   (Megatron's ``validation loss at iteration 300 | lm loss value:``).
   A metric printed line after line with only its epoch (``Epoch 1 - Batch loss: 12.13``, hundreds an epoch, no
   line of another epoch between them) has its lines numbered within the epoch as that step; the epoch's other
   lines then sit at its last batch;
2. else the epoch (``Epoch 3/10``: 3, an ``Epoch 3/10`` line applying to the lines after it that name a metric, as
   Keras prints; ``[ Valid | 012/100 ] loss = …``: a split, then its epoch of the total); epochs logged as fractions
   (the Hugging Face Trainer's ``'epoch': 0.25``) are scaled by the power of ten that makes them whole, with a
   warning;
3. else the order of the lines that hold values, with a warning; then only names logged at least ``MIN_POINTS``
   times are curves (a value printed once is a setting).
Values printed before the first step or epoch are the run's settings (``lr: 0.001``, ``num_classes: 10``) and go to
``meta.hparams``, as does a configuration printed as a tree (``|- lr\t0.001``, ``├── lr: 0.001``) and a dict of settings
printed anywhere (``Hyperparameters: {'batch': 512, 'pp': {'test': 'test'}, …}``), whatever its names say; an ``epoch:
20`` among them (followed by ``gamma: 0.7``, naming no metric) is the number of epochs to run, no epoch the lines after
it report, and a configuration printed again by a restarted session is settings again (up to the next line with a step
or epoch), not points: that session's own, which replace the earlier ones for the run it starts (each of several runs
printed one after another has its own). A value named after a checkpoint's save (``New best model saved with BLEU-2:
65.76``, ``✓ New best checkpoint saved (val_acc=0.6250)``) or a best so far (``Best val_acc=1.0000``, ``best_acc``)
restates a metric and is no curve. A line without a step or epoch of its own, printed during training (an evaluation
block, another program's output), sits at the x of the line before it and gives only metrics that name their split
(``test_Average_loss``, ``val_acc``; a bare ``accuracy`` there is an evaluation's, read as training's it would mislead),
or, on a line with a score only an evaluation computes (mIoU, mAP, BLEU: HRNet's ``Loss: 3.124, MeanIU: 0.0649``), every
metric as the evaluation's (``val_Loss``), and on a line whose first name says the training split (``Train. Total Loss:
1.60, KL: 0.14``) every bare name as training's; it never overrides a value logged there with a step of its own; but a
kind of line printed before the line of every step (a dict of the step's statistics, then ``Step: 12 | Loss: …``), its
first before the first such line, is that step's: all its values, at that step (see ``_printed_each_step``). A
held-out pass printed batch by batch (``Test: [100/196]  Loss 2.2271e+00 (1.6076e+00)``: pytorch/examples'
ProgressMeter, timm's) gives the running averages in brackets, each batch's line replacing the one before, and the
summary after it (`` * Acc@1 62.624 Acc@5 85.638``) the pass's result, named for its split. The Trainer's closing
``{'train_runtime': …}`` summary is not a point. A line printed again as it was (``… loss = 1.65 -> best``) is one
point, and a curve that restates another under the same words in another order, at the same steps with
the same values (``Test accuracy: 0.65273`` and ``[100] accuracy_test=0.6527344``), is not kept. A resumed run that logs
steps again keeps what it logged last (TensorBoard's restart rule, as for every other format), with a warning; but a log
that starts over after a run that went to the end holds several runs one after another (a sweep or cross-validation
printed to one stdout), each read as a run of its own (see ``records.runs_one_after_another``), and so does one whose
program printed its opening line of words again (a new process: ``Using TensorFlow backend.``), however the run
before it stopped. ``Batch 10/165 | …`` lines under an ``Epoch 2/20`` heading count batches within that epoch. A tqdm
bar's label that names a metric (``Train Epoch 3 Iters 1005 Train loss 0.965: 100%|…``) is read like any line; otherwise
only its epoch or step is. Columns named by a header line, a row a line under it (YOLOv3/v5/v8's epoch and evaluation
tables, fastai's), are read as :class:`_ColumnTable` says; Detectron2's ``copypaste:`` evaluation summaries as
:class:`_CopyPaste` says, and pycocotools' summary lines (``Average Precision  (AP) @[ IoU=0.50      | area=   all |
maxDets=100 ] = 0.237``) as the measures Detectron2 names (``AP50``) of the evaluation. Darknet's
training line (``105: 229.96, 485.90 avg loss, 0.001 rate, 2.35 seconds, 6720 images``) gives the iteration, that
batch's ``loss``, its running average ``avg_loss`` and the rate, its ``-map`` evaluation ``val_mAP50`` (the per-class
lines before it no curve); DeepXDE's table rows (``1000  [1.58e-04, 1.02e-07]  [1.65e-04, 1.02e-07]  [2.60e-04]``) the
step, ``train_loss`` and ``test_loss`` (the sums of the terms listed, each term as ``train_loss_1`` … when there are
several) and ``test_metric``, its ``Best model at step N:`` summary no point. YOLOv5's (to v5.0) and YOLOv3's
headerless ``results.txt`` rows are read as :data:`YOLO_RESULTS_ROW` says. A last line
without its line end is kept when it is whole (see ``_Reading.completes_its_pattern``), else dropped with a warning.

A file is a training log when at least ``MIN_POINTS`` values carry a step or epoch of their own, or one metric is
logged that often; anything else read because of its name raises :class:`~curvedoc.errors.NotALog`.

Bounded cost: lines are read in chunks of ``CHUNK_BYTES``; a line longer than ``MAX_LINE_BYTES`` keeps only its
last ``MAX_LINE_BYTES`` (where a redrawn progress line ends up); at most ``MAX_FILE_BYTES`` of a file are read, and
reading stops after ``GIVE_UP_BYTES`` without a single value (a corpus or a dump, not a log). Every pattern is
linear in the line's length (bounded repetitions, no nested quantifiers), so no line can make it backtrack.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import collections
import io
import itertools
import math
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from curvedoc.datasets import benchmark_classes
from curvedoc.errors import CurvedocError, NotALog, describe_os_error
from curvedoc.model import PrintedReports, Run, RunBuilder, report_facts
from curvedoc.readers import LFS_POINTER, Source, file_run_name
from curvedoc.readers.history import (
    find_history, history_curves, is_history, names_a_measurement, printed_literal,
)
from curvedoc.readers.huggingface import SUMMARY_KEYS
from curvedoc.readers.records import (
    MIN_RUN_RECORDS, ORDINAL_WORDS, STEP_LIMIT, counted_on_note, counts_within_epoch, epochs_counted_on,
    primary_train_loss, restart_drops, run_of_each_record, steps_across_epochs, warn_restarts, whole_at_line_end,
)
from curvedoc.readers.text import wide_encoding
from curvedoc.roles import (
    AVERAGE_WORDS, OVERLAP_WORDS, RUNNING_BEST, Role, in_english, infer_role, is_evaluation_score, split_of, tokens,
)

FORMAT = "text-log"
MIN_POINTS = 3
CHUNK_BYTES = 8 << 20
# A progress line redrawn with \r for a whole epoch is one "line" of up to megabytes; its final text is at its end.
MAX_LINE_BYTES = 64 << 10
MAX_FILE_BYTES = 512 << 20  # ~1 minute of parsing; the rest of a longer log is left with a warning
GIVE_UP_BYTES = 32 << 20

EPOCH_KEYS = {"epoch", "ep"}
# Finest first: a line with ``epoch 3 … num_updates 500`` is placed by its update count; an agent's episode late.
# A bare ``count`` opening a line is a script's own batch counter ("count: 50, loss: 228.9" under "train epoch: 0"),
# the coarsest; after other values it counts something else (darknet's region line: "…, count: 8, …" objects).
STEP_KEYS = ("global_step", "num_updates", "num_timesteps", "step", "iteration", "iter", "iters", "it", "update", "batch",
             "episode", "count")
BATCH_RANK = STEP_KEYS.index("batch")
EPISODE_RANK = STEP_KEYS.index("episode")
SPLIT_WORDS = {
    "train", "training", "val", "valid", "validation", "validate", "validating", "eval", "evaluation", "evaluate",
    "evaluating", "test", "testing", "dev",
}
# A split's name as a word of its own in a line (see _split_named)
SPLIT_WORD = re.compile(rf"(?<![\w.\-/])(?:{'|'.join(sorted(SPLIT_WORDS, key=len, reverse=True))})(?![\w.\-/])",
                        re.IGNORECASE)
# Words a line uses to say that what it reports is not the training split (outside its name/value pairs).
EVALUATION_WORDS = SPLIT_WORDS - {"train", "training"}
TEST_WORDS = {"test", "testing"}
HELD_OUT_WORDS = EVALUATION_WORDS - TEST_WORDS  # the split a validation pass's names say: val_loss, eval_loss
# Qualifiers that leave an x key what it is: "Train Epoch: 1", "global step 500".
# words that may stand before a step's or an epoch's name without changing what it counts (Stanza's "Finished STEP
# 20/50000, loss = 3.8")
X_QUALIFIERS = SPLIT_WORDS | {"global", "current", "cur", "finished", "completed"}
# Names of what training logs measure beyond the roles (which cover loss, accuracy, lr, grad norm): a name
# without a step of its own is only read when it says it is a measurement.
METRIC_WORDS = {
    "loss", "acc", "accuracy", "reward", "rewards", "return", "returns", "score", "ppl", "perplexity", "f1", "bleu",
    "rouge", "map", "iou", "miou", "dice", "auc", "error", "err", "mse", "mae", "rmse", "precision", "recall",
    "psnr", "ssim", "wer", "cer",
}
# A phrase before a number names it from its last function word on: "saving model at epoch 3" → epoch.
FUNCTION_WORDS = {
    "a", "an", "the", "at", "in", "of", "for", "with", "and", "or", "to", "on", "is", "was", "are", "by", "from",
    "after", "as", "into", "than", "vs", "info", "warning", "warn", "debug", "critical", "fatal", "notice",
}
COPULAS = {"is", "was", "are", "were"}
# A value named after a checkpoint's save ("New best model saved with BLEU-2: 65.76") restates a metric of its line
# or the one before: not a point of a curve of its own.
SAVE_WORDS = {"save", "saved", "saving", "saves"}
# a line of a configuration printed as a tree ("  |-   |- iter\t250000", "├── lr: 0.001")
CONFIG_TREE = re.compile(r"\s{0,40}(?:\|-|[├└]─)")
IMPROVEMENT_WORDS = frozenset({"improved", "improving"})
# a name that reports a change of a metric ("Validation loss decreased (inf --> 0.69)") restates its step
CHANGE_WORDS = IMPROVEMENT_WORDS | {"decreased", "increased"}
# a line that announces a save, a new best or an improvement before its values ("✓ New best checkpoint saved
# (val_acc=0.6250)", OpenNMT's "Model is improving ppl: inf --> 5.45281") restates them too
SAVE_ANNOUNCED = re.compile(rf"\b(?:{'|'.join(sorted(SAVE_WORDS | {RUNNING_BEST} | IMPROVEMENT_WORDS))})\b",
                            re.IGNORECASE)
ACCURACY_WORDS = {"acc", "accuracy", "correct"}
# An accuracy's maximum is the best so far: no window of a log's episodes has one, as it has a maximum reward
MAXIMUM_WORDS = {"max", "maximum", "highest"}
CONFLICT_MARKER = re.compile(r"(?:<{7}|\|{7}|>{7})(?:\s|$)|={7}\s*$")  # git's, in a log committed mid-merge
CONFLICT_STARTS = ("<", "|", "=", ">")
COPYPASTE = "copypaste: "  # Detectron2's evaluation summary lines (see _CopyPaste) …
DETECTRON2_COPYPASTE = re.compile(r"(?<![\w.])copypaste: ")
# … which MMDetection 2 restates on its evaluation's line as one name's value ("bbox_mAP: 0.3740, …,
# bbox_mAP_copypaste: 0.374 0.581 0.404 0.212 0.410 0.481"): the numbers before it, no value of its own
MMDETECTION_COPYPASTE = re.compile(r",?\s{0,4}[\w.]{1,60}_copypaste:(?:\s{1,4}(?:-?\d{1,9}(?:\.\d{1,12})?|nan)){1,30}")
# ``train.py:88`` in a logging prefix is a source line, not a value named train.py
SOURCE_SUFFIX = r"\.(?:py|pyx|ipynb|cc|cpp|cu|c|h|hpp|rs|go|java|js|ts|sh|lua)"
SOURCE_FILE = re.compile(SOURCE_SUFFIX + "$", re.IGNORECASE)
# a source file named on a line (a logging format's %(filename)s, "eval.py:88"): where the line was written
SOURCE_FILE_WORD = re.compile(r"(?<![\w\-/])[\w\-/]+" + SOURCE_SUFFIX + r"(?![\w.])", re.IGNORECASE)

ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)|[@-Z\\-_])")
VALUE_HINT = re.compile(r"[0-9]|nan|NaN|inf|Inf")
TQDM_BAR = re.compile(
    r"\d{1,3}%\|[^|\n]{0,400}\|\s{0,10}(?P<n>[\d.]{1,20}[kMGT]?)/(?P<total>[\d.]{1,20}[kMGT]?)\s{0,10}"
    r"\[(?P<inside>[^\]\n]{0,2000})\]"
    r"|(?<![\d.])\d[\d.]{0,20}[kMGT]?it\s\[[^\]\n]{0,400}\]"
)
# which bars' values a log whose only values are its bars' is read from (see _read_log)
FINISHED_BARS, RUNNING_BARS = "finished", "running"
# what tqdm's set_postfix adds inside a bar's brackets, after its rate: "[00:31<00:00,  1.13s/it, D=2.289, G=0.014]"
TQDM_POSTFIX = re.compile(r"(?:/s|/it|\?it/s)\s{0,4},\s{0,4}(?P<postfix>.+)$")
# Lightning's bar shows its logger's version number among the values (v_num=47): bookkeeping, not a curve
LOGGER_VERSION = re.compile(r"\bv_num=[^,\]]{0,40}(?:,\s{0,4}|$)")
KERAS_ETA = " - ETA: "
KERAS_BAR = re.compile(
    r"^\s{0,40}(?P<n>\d{1,12})/(?P<total>\d{1,12}|Unknown)\s{1,10}(?:\[[=>.]{0,200}\]|━{1,200}|(?=-\s))"
)
WORD = r"[A-Za-z_][\w.\-/@+]{0,63}"
NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,4})?"
NONFINITE = r"[-+]?(?:nan|NaN|Infinity|inf|Inf)"
# A number followed by one of these words counts things (``Train=115 batches``, ``AKIEC: 303 images``): no value,
# though still a pair, whose name says nothing about the line (``Val=25 batches`` makes no ``val_`` of the rest).
# Only as a word of its own that names no number itself: ``samples/s``, ``steps_per_second`` and ``steps: 500`` do.
# ... and durations: "Total time elapsed for training = 20120.7 seconds" measures no model, nor ssd.pytorch's
# "timer: 0.2510 sec." (a full stop may end the word)
COUNTED_THINGS = (
    "batches", "samples", "images", "examples", "steps", "files", "params", "parameters", "tokens", "sequences",
    "sentences", "documents", "records", "seconds", "secs", "sec", "ms", "minutes", "mins", "min", "hours", "hrs",
)
COUNT_OF_THINGS = (
    rf"\s{{1,3}}(?:{'|'.join(COUNTED_THINGS)})(?![\w\-/]|\.\w|\s{{0,10}}[:=]|\s{{1,10}}[-+]?\.?\d)"
)
# How numpy 2 and torch print a number: np.float64(0.9), tensor(0.9) (the opening; its bracket closes after it)
WRAPPER_OPENING = r"(?:(?:np|numpy)\.float\d\d\(|tensor\()"
# A name, then a number, which a sentence's full stop or an ellipsis may end ("Avg.loss: 1.4685.   Accuracy: 49.22%.",
# "Evaluating at step 5000...") but not a version's or an address's next group (1.2.3): the pattern holds the name's
# last word only (the words before it are found by KEY_WORDS in the text since the previous pair), so a line of words
# without numbers costs one short attempt per word.
PAIR = re.compile(
    rf"(?=[A-Za-z_])(?<![\w.\-/@+])(?P<key>{WORD})"
    rf"['\"]?(?P<separator>\s{{0,10}}[:=]\s{{0,10}}|\s{{1,10}}-\s{{1,10}}|\s{{1,40}})[\[(]?['\"]?"
    rf"{WRAPPER_OPENING}?(?P<value>{NUMBER}|{NONFINITE})"
    rf"(?:\s?/\s?(?P<total>\d{{1,15}}))?(?:%|dB)?(?!\w|\.(?!\.\.(?:\s|$))[\w.]|[:\-,]\d)(?P<counted>{COUNT_OF_THINGS})?"
)
# "第 3 轮" (round, i.e. epoch 3), "第 100 步" (step 100)
CJK_COUNTERS = {"轮": "epoch", "步": "step", "次迭代": "iteration"}
# A number alone between fences of one character on a line of its own ("-----3------", "**** 3 ****") heads the lines
# of that epoch, as "Epoch 3" would, in a log that names its epochs no other way
FENCED_NUMBER = re.compile(r"\s*(?P<fence>[-=*#~])(?P=fence){2,}\s*(?P<n>\d{1,9})\s*(?P=fence){3,}\s*")
FENCES = {character * 3 for character in "-=*#~"}
CJK_COUNTER = re.compile(r"第\s{0,3}(?P<n>\d{1,12})\s{0,3}(?P<unit>轮|步|次迭代)")
# How a line may open with its counter, each read as the words the rest of the reader knows:
# - a counter glued to its number ("Batch500,TrainLoss:0.6933", "Epoch[3] - Iter: [0/13]"), which a script printed
#   with f"Batch{i}," where another writes "Batch {i},": the same counter, never a name's part ("epoch10_loss");
# - its epoch of the total in brackets, then its batch of the epoch ("[1/100] batch 50/5305 loss=…", DCGAN's
#   "[0/5][50/1583]\tLoss_D: 1.2"), the training split's heading before them in the Swin Transformer's log and the
#   many that copied its main.py ("Train: [0/300][50/1251]\teta 1:23:45 lr 0.000020\t…"). Without a batch after it
#   the bracket may count a script's stages ("[5/7] Phase 1 - training top layers", "[6/6] Saving model...");
# - its epoch and its batch, as PyTorch's CIFAR-10 tutorial prints them and the many scripts that grew from it do
#   ("[1,  2000] loss: 2.187"), a name right after the bracket;
# - the training split's step out of the run's steps in brackets, as JAX trainers log through absl ("[Train 10/1882]
#   {'train_loss': 0.0077}"): read as that split's step. An evaluation's count in brackets may count its batches
#   ("[Val 5/20]"), so only the training split's is taken;
# - the batch out of the epoch's batches and a comma, as MONAI's tutorials print each step under "epoch 3/600"
#   ("1/16, train_loss: 0.6531").
# One pattern, matched once at the line's start, case spelled out: this runs on every line.
OPENING_COUNTER = re.compile(
    r"[ \t]{0,20}(?:(?P<word>[Ee]poch|EPOCH|[Bb]atch|BATCH|[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER(?:ATION)?|[Ee]pisode"
    r"|EPISODE)(?:(?P<n>\d{1,12})|\[\s{0,3}(?P<bracketed>\d{1,12})\s{0,3}\])(?=[\s,;:|\-]|$)"
    r"|\[\s{0,3}(?P<epoch>\d{1,9})\s?/\s?(?P<total>\d{1,9})\s{0,3}\]\s{0,3}(?:\[\s{0,3}(?P<batch>\d{1,12})\s?/\s?"
    r"(?P<batches>\d{1,12})\s{0,3}\]|(?=(?i:batch|iter|iteration|step)\s{0,3}[:=]?\s{0,3}\d))"
    r"|(?:[Tt]rain(?:ing)?|TRAIN(?:ING)?):?\s{1,4}\[\s{0,3}(?P<swin_epoch>\d{1,9})\s?/\s?(?P<swin_total>\d{1,9})\s{0,3}\]"
    r"\[\s{0,3}(?P<swin_batch>\d{1,12})\s?/\s?(?P<swin_batches>\d{1,12})\s{0,3}\]"
    r"|\[\s{0,3}(?P<tutorial_epoch>\d{1,9})\s{0,3},\s{0,6}(?P<tutorial_batch>\d{1,12})\s{0,3}\]\s{1,10}(?=[A-Za-z])"
    r"|\[\s{0,3}(?P<train>[Tt]rain(?:ing)?|TRAIN(?:ING)?)\s{1,3}(?P<train_step>\d{1,12})\s?/\s?"
    r"(?P<train_steps>\d{1,12})\s{0,3}\]"
    r"|(?P<monai_batch>\d{1,9})/(?P<monai_batches>\d{1,9}),\s)")
# A metric named before the counter it was measured at, as a sentence prints it ("loss in step 1000 is 1.91", "Average
# loss at epoch 3: 0.52", "Average loss for epoch 3: 0.52", "Loss at epoch 0 and iteration 500 is 0.219": the batch
# within the epoch after it), matched at the line's start only: read as the counter(s), then the name and its value.
NAME_AT_COUNTER = re.compile(
    rf"[ \t]{{0,20}}(?P<name>(?:{WORD} ){{0,3}}{WORD}) (?:at|in|after|for|@) (?P<counter>(?i:epoch|step|iter|iteration"
    rf"|batch|episode|update)) (?P<n>\d{{1,12}})"
    rf"(?:,?\s{{1,3}}(?:and\s{{1,3}})?(?P<inner>(?i:step|iter|iteration|batch)) (?P<inner_n>\d{{1,12}}))?"
    rf"(?:\s{{0,3}}[:=]\s{{0,10}}|\s(?:is|was|=)\s{{1,10}})(?=[-+]?(?:\d|\.\d|nan|NaN|inf|Inf))")
# pycocotools' evaluation summary, printed by most detection and segmentation code (YOLOX, MMDetection, DETR,
# torchvision's references): `` Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.237``. Its
# brackets qualify the measure, they hold no values. Each precision line is read as the name Detectron2 gives it (AP,
# AP50, AP75, APs, APm, APl), -1 being pycocotools' "no objects of that size", no value; the recall lines (AR at 1, 10
# and 100 detections) hold no curve of their own: a detector's progress is its AP.
COCO_SUMMARY = re.compile(
    r"\s{0,10}Average (?:Precision|Recall)\s{1,10}\((?P<measure>AP|AR)\) @\[ IoU=(?P<iou>[\d.:]{1,12})\s{0,10}\| "
    r"area=\s{0,10}(?P<area>all|small|medium|large) \| maxDets=\s{0,10}\d{1,6} \] = (?P<value>-?\d+(?:\.\d+)?)\s*$")
COCO_AREAS = {"small": "s", "medium": "m", "large": "l"}
# The CoNLL shared task's conlleval summary (conlleval.pl, and its Python ports that NER repositories vendor):
# "processed 74542 tokens with 5600 phrases; found: 16018 phrases; correct: 0.", the totals ("accuracy:  7.92%;
# precision:   0.00%; recall:   0.00%; FB1:   0.00") and a line for each entity type ("FOREST: precision: …  2873")
CONLLEVAL_COUNTS = re.compile(r"\s{0,10}processed \d{1,12} tokens with \d{1,12} phrases; found: \d{1,12} phrases; "
                              r"correct: \d{1,12}\.?\s*$")
CONLLEVAL_OVERALL = re.compile(
    r"\s{0,10}accuracy:\s{0,10}(?P<accuracy>\d{1,3}(?:\.\d{1,6})?%);\s{0,4}precision:\s{0,10}(?P<precision>\d{1,3}"
    r"(?:\.\d{1,6})?%);\s{0,4}recall:\s{0,10}(?P<recall>\d{1,3}(?:\.\d{1,6})?%);\s{0,4}FB1:\s{0,10}"
    r"(?P<FB1>\d{1,3}(?:\.\d{1,6})?)\s*$")
CONLLEVAL_TYPE = re.compile(r"\s{0,40}\S{1,100}: precision:\s{0,10}[\d.]{1,12}%;\s{0,4}recall:\s{0,10}[\d.]{1,12}%;"
                            r"\s{0,4}FB1:\s{0,10}[\d.]{1,12}\s{1,10}\d{1,12}\s*$")
# AllenNLP's metrics table at the end of each epoch: a header of two splits ("Training |  Validation"), then a row a
# metric, its value in each ("accuracy        |     0.534  |     0.612"; N/A where a split has none)
SPLIT_COLUMNS = re.compile(rf"(?<![\w.\-/])(?P<first>{WORD})\s{{1,10}}\|\s{{1,10}}(?P<second>{WORD})\s*$")
SPLIT_COLUMN_ROW = re.compile(rf"(?<![\w.\-/])(?P<name>{WORD})\s{{1,40}}\|\s{{1,20}}(?P<first>{NUMBER}|N/A)\s{{1,20}}\|"
                              rf"\s{{1,20}}(?P<second>{NUMBER}|N/A)\s*$")
# Gradient-boosting libraries' evaluation lines: LightGBM names each metric for its dataset with a possessive
# ("[10]\tvalid_0's binary_logloss: 0.52\ttraining's auc: 0.81": valid_0_binary_logloss), CatBoost numbers its
# iteration and prints the loss on its learn and test sets ("0:\tlearn: 0.6851\ttest: 0.6859\tbest: 0.6859 (0)\t…")
POSSESSIVE_NAME = re.compile(r"(?<=[\w])'s (?=[A-Za-z_])")
CATBOOST_ROW = re.compile(rf"(?P<n>\d{{1,9}}):\tlearn: (?P<learn>{NUMBER})(?:\ttest: (?P<test>{NUMBER}))?")
# What a TensorFlow Estimator's evaluate() logs of its results, then the step and the metrics ("… global step 1000:
# accuracy = 0.97, global_step = 1000, loss = 0.06"): the evaluation's, its loss the held-out loss
ESTIMATOR_EVALUATION = "Saving dict for global step "
# A top-k accuracy or error written in words ("top 1 acc: 0.0354", "Top 5 Error"): one name, top1_acc, whose k is no
# value of a name "top"
TOP_K_SPACED = re.compile(r"(?<![\w.])(?P<top>[Tt]op|TOP) (?P<k>\d{1,2}) (?P<measure>(?i:acc(?:uracy)?|err(?:or)?))\b")
# A number sign between a counter and its number ("Epoch #3", "step # 500")
COUNTER_NUMBER_SIGN = re.compile(r"(?i)(?<![\w.\-/])(epoch|step|iter|iteration|batch|episode)\s{0,3}#\s{0,3}(?=\d)")
# A line opening with its counter and the next name glued to the counter's number, printed with no separator
# between (print(f"idx: {i}" + f"loss: {loss}") gives "idx: 12loss: tensor(8.46, …)"): two pairs, not a name "12loss"
GLUED_AFTER_COUNTER = re.compile(r"\s{0,20}(?P<counter>(?i:idx|index|step|iter|iteration|epoch|batch|it)\s{0,3}[:=]\s{0,3}"
                                 r"\d{1,12})(?=[A-Za-z_][\w.]{0,63}\s{0,3}[:=])")
# A counter's count of its total in brackets right after its name ("fold[1/5] epoch[3/100] loss: 3.01"), which an
# index never has: read as the name and its count ("epoch 3/100")
BRACKETED_COUNT = re.compile(r"(?<=[A-Za-z_])\[\s{0,3}(\d{1,15})\s?/\s?(\d{1,15})\s{0,3}\]")
FULL_WIDTH = str.maketrans({"：": ":", "，": ",", "（": "(", "）": ")", "％": "%", "｜": "|"})
# One name, two splits, two values: "Loss (train/val): 0.9226/0.6834" says train loss 0.9226 and val loss 0.6834
SPLIT_PAIRED = re.compile(
    rf"(?P<name>(?:{WORD} ){{0,2}}{WORD})\s{{0,4}}\(\s{{0,4}}(?P<first>[A-Za-z]{{1,12}})\s{{0,4}}/\s{{0,4}}"
    rf"(?P<second>[A-Za-z]{{1,12}})\s{{0,4}}\)\s{{0,4}}[:=]\s{{0,10}}(?P<x>{NUMBER}|{NONFINITE})\s{{0,4}}/\s{{0,4}}"
    rf"(?P<y>{NUMBER}|{NONFINITE})(?![\w./])"
)
KEY_WORDS = re.compile(rf"(?<![\w.\-/@])(?:{WORD} ){{1,3}}$")  # up to three words right before a name's last word
KEY_WORDS_REACH = 3 * 65
# A quoted string (a prompt, a completion, a message, ``device='mps:0'``) is text, whose numbers are no values; a quoted
# number (``'loss': '0.41'``) is a value. An apostrophe within a word (``Gerald's``) opens none.
QUOTED = re.compile(r"""(?<![\w'"])(?:'[^'\n]{1,4096}'|"[^"\n]{1,4096}")""")
QUOTED_NUMBER = re.compile(rf"\s{{0,10}}(?:{NUMBER}|{NONFINITE})%?\s{{0,10}}")
UNNAMED_FRACTION = re.compile(r"(?<![\w./])(?P<n>\d{1,15})\s?/\s?(?P<total>\d{1,15})(?![\w./])")
TRAINING_LOOP = re.compile(
    r"\b(?P<kind>Epoch|Iter)\(train\)\s{0,10}\[\s{0,12}(?P<n>\d{1,12})(?:\s?/\s?(?P<total>\d{1,12}))?\]"
    r"(?:\[\s{0,12}(?P<within>\d{1,12})\s?/\s?(?P<of>\d{1,12})\])?"
)
# The CycleGAN/pix2pix repository's Visualizer.print_current_losses: "(epoch: 1, iters: 100, time: 0.857, data: 2.929)
# D_A: 0.111 G_A: 0.660 …" (forks: "iters: 100/2975", "lr: …, t_data: …", "(Epoch: 1, Iters: 100)", a comma after
# the parenthesis). It prints only the model's losses after the parenthesis; in it, timings besides the x.
LOSS_LOG_PREFIX = re.compile(
    r"\(epoch: (?P<epoch>\d{1,12}), iters: (?P<iters>\d{1,15})(?:/(?P<total>\d{1,15}))?[^()\n]{0,200}\)\s{0,10},?",
    re.IGNORECASE,
)
# PaddleOCR prints each evaluation's metrics so ("cur metric, acc: 0.51, norm_edit_dis: 0.62, fps: 100"), at the
# training step before it, then the best so far ("best metric, acc: …", which a best announced leaves unread)
PADDLE_EVALUATION = "cur metric, "
TRAINER_RESULT = "TrainOutput("  # what the Hugging Face Trainer's train() returns: TrainOutput(global_step=…, …)
# PaddleClas prints its evaluation batch by batch ("[Eval][Epoch 3][Iter: 10/25]CELoss: 6.90, loss: 6.90, top1: …",
# running averages) and then the pass's ("[Eval][Epoch 3][Avg]CELoss: 6.77, …"): one held-out pass (EVALUATION_PASS)
# after the epoch's training, its batches no steps of the epoch
PADDLECLAS_EVALUATION = re.compile(r"\[(?P<split>Eval|Val|Test)\]\[Epoch \d{1,9}\]\[(?:Iter: (?P<batch>\d{1,12}/\d{1,12})"
                                   r"|Avg)\]")
# A qualifier glued to a name in brackets (PaddleClas' "lr(LinearWarmup): 0.00002245", "Class(Aux): 2.52"): the name's
# last word, as NAMING_ABBREVIATION reads one after a space
GLUED_QUALIFIER = re.compile(r"(?<=[A-Za-z_])\((?P<qualifier>[A-Z][A-Za-z]{2,40})\)(?=\s{0,3}[:=])")
# Lightning's ModelCheckpoint(verbose=True): "Epoch 3, global step 4: 'val_loss' reached 0.15583 (best 0.15583),
# saving model to '…/epoch=3-step=4-val_loss=0.1558.ckpt' as top 4", or "… 'val_loss' was not in top 8": the
# monitored metric at that step, then the best so far and the number of checkpoints kept, which are no curves
CHECKPOINT_MESSAGE = re.compile(
    rf"'(?P<name>[^'\n]{{1,200}})' (?:reached (?P<value>{NUMBER}|{NONFINITE}) \(best [^)\n]{{0,100}}\).*|"
    r"was not in top \d+.*)")
# Darknet's training line (detector.c's "%d: %f, %f avg loss, %f rate, %lf seconds, %d images, %f hours left", and
# classifier.c's "%ld, %.3f: %f, %f avg, %f rate, …": the batch, the epochs seen, then the numbers): the iteration,
# that batch's loss and its running average (0.9 of the last average), each before its name or with none
DARKNET_ITERATION = re.compile(
    rf"\s{{0,10}}(?P<iteration>\d{{1,12}})(?:,\s{{1,4}}{NUMBER})?:\s{{1,4}}(?P<loss>{NUMBER}|{NONFINITE}),\s{{1,4}}"
    rf"(?P<average>{NUMBER}|{NONFINITE}) avg(?: loss)?,\s{{1,4}}(?P<rate>{NUMBER}) rate,"
)
# and its evaluation with -map: "mean average precision (mAP@0.50) = 0.593164, or 59.32 %"
DARKNET_MAP = re.compile(rf"\s{{0,10}}mean average precision \(mAP@0?\.(?P<iou>\d{{1,2}})\) = (?P<map>{NUMBER})")
# A row of DeepXDE's training table (display.TrainingDisplay: "Step  Train loss  Test loss  Test metric" over rows
# "1000      [1.58e-04, 1.02e-07]    [1.65e-04, 1.02e-07]    [2.60e-04]"): the step, then a list of the loss terms on
# the training points, the same terms on the test points, and the test metrics
DEEPXDE_ROW = re.compile(
    r"\s{0,10}(?P<step>\d{1,12})\s{1,40}\[(?P<train>[^\[\]\n]{0,4000})\]\s{1,40}\[(?P<test>[^\[\]\n]{0,4000})\]"
    r"\s{1,40}\[(?P<metric>[^\[\]\n]{0,4000})\]\s{0,40}$"
)
# A row of the results.txt YOLOv5 (to v5.0) and YOLOv3 write, one an epoch, no header: "0/499  4.69G  0.12
# 0.03458 0.03086 0.1854 60 640 0.0007451 0.06832 0.0001041 1.791e-05 0.1153 0.0275 0.03046": the epoch of the last,
# the GPU memory, the epoch's mean box, objectness, class and total loss, the last batch's labels and image size,
# then precision, recall, mAP@0.5, mAP@0.5:0.95 (YOLOv3: F1) and the validation box, objectness and class losses
YOLO_RESULTS_ROW = re.compile(r"\s{0,20}(?P<epoch>\d{1,9})/(?P<last>\d{1,9})\s{1,20}(?:\d{1,9}(?:\.\d{1,9})?[GM]?|-)\s")
YOLO_RESULTS_COLUMNS = {2: "train/box_loss", 3: "train/obj_loss", 4: "train/cls_loss", 5: "train/total_loss",
                        8: "metrics/precision", 9: "metrics/recall", 10: "metrics/mAP_0.5", 11: "metrics/mAP_0.5:0.95",
                        12: "val/box_loss", 13: "val/obj_loss", 14: "val/cls_loss"}
YOLO_RESULTS_CELLS = 15  # the epoch of the last, the GPU memory, and thirteen numbers
# The process a distributed job's line came from: the Visualizer's "[Rank 0] (epoch: 1, …", torchrun's "[rank0]:" and
# "[default0]:" tees. It names a process, not a value
RANK_PREFIX = re.compile(r"\[(?:rank|default)\s?\d{1,5}\]:?\s*", re.IGNORECASE)
# Where a logging prefix says the message came from, after its level: DeepSpeed's "[INFO] [logging.py:96:log_dist]
# [Rank 0] step=10, …" (``[%(filename)s:%(lineno)d:%(funcName)s]``)
SOURCE_LOCATION = re.compile(r"\s*\[[\w.\-]{1,200}\.py:\d{1,7}(?::[\w<>]{1,200})?\]\s*")
# DeepSpeed's pipeline engine prints each report as "steps: 10 loss: 2.3456 iter time (s): 0.397 samples/sec: 40.3":
# the optimiser's step. A script's own "steps: 10315, episodes: 100, …" counts environment steps, whose count goes
# back when the next run is appended: a value
DEEPSPEED_STEPS = re.compile(r"steps: (?=\d{1,12} loss: )")
# The line the Visualizer appends to loss_log.txt when a session starts: its date is no value
LOSS_LOG_HEADER = re.compile(r"={3,} Training Loss \(")
# loguru's default prefix names where the message came from: "autotrain.trainers.common:on_log:226 - {'loss': …}";
# YOLOX's format leaves the function out: "yolox.core.trainer:261 - epoch: 1/300, …", a dotted module then (no
# "epoch:3 - loss: …" of a metric line)
LOGURU_LOCATION = re.compile(
    r"(?<![\w.])[A-Za-z_](?:[\w.]{0,200}:[A-Za-z_<][\w<>]{0,100}|\w{0,60}(?:\.\w{1,60}){1,8}):\d{1,7} - ")
# A logging prefix: a timestamp, fields the format chose (the host and its rank, ``%(name)s:%(lineno)d``:
# "olmo.train:990") and the level, then the message. What precedes the level says who wrote the line and when
LOGGING_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL")  # WARN also begins WARNING
GLOG_LEVELS = "IWEF"
LEVEL_NAME = "(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)"
LOGGING_PREFIX = re.compile(rf"\[?\d{{2,4}}[-/:.]\d{{1,2}}[^\n]{{0,200}}?[\s\[|\-]{LEVEL_NAME}(?:\]|\s?[-|]\s|:\s|\s)")
# A date and a time alone before the message, a format with no level ("%(asctime)s:\t%(message)s": "2017-08-18
# 02:43:53,914:\tLoss at step 1: 8.49"); its numbers are when the line was written, no values
TIMESTAMP_PREFIX = re.compile(r"\[?\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[ T]\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,6})?\]?"
                              r"(?:\s?[-|:]\s|\s)\s*")
# Python logging's default format, "%(levelname)s:%(name)s:%(message)s" (logging.basicConfig() as it comes, and
# TensorFlow 1's tf.logging): "INFO:root:", "INFO:__main__:", "INFO:tensorflow:" before the message
DEFAULT_LOGGING_PREFIX = re.compile(rf"{LEVEL_NAME}:[\w.\-<>]{{1,200}}:")
# glog's prefix, which absl (JAX, TensorFlow research code) and Caffe write too: the level's letter, the month and day,
# the time, the thread and the source line ("I1216 14:22:57.913980 139628846601088 train.py:577] "); taken off so that
# what opens the message is read as a line's opening
GLOG_PREFIX = re.compile(r"[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{6}\s{1,8}\d{1,20} [\w.\-<>]{1,200}:\d{1,7}\] ")
# The level first, then the date and the time since the start: "INFO - 09/04/20 07:56:14 - 0:00:27 - " (the
# LogFormatter of Facebook research code: SwAV, XLM, DINO's kin)
LEVEL_FIRST_PREFIX = re.compile(rf"{LEVEL_NAME} - \d{{1,4}}[-/.]\d{{1,2}}[-/.]\d{{1,4}} \d{{1,2}}:\d{{2}}:\d{{2}} - "
                                r"(?:\d{1,6} days?, )?\d{1,9}:\d{2}:\d{2} - ")
CONFIG_KEY_BEFORE = re.compile(r"(?<![\w.])[a-z][a-z0-9_.]{0,63}\s{0,4}[:=]\s{0,10}$")  # "phase: " before "val"
# A printed list of the classes (print("Classes:", dataset.classes); Russian "Классы: […]"): its length is the class
# count, the run's own record of it
CLASS_LIST = re.compile(r"\s*(?:classes|class[ _]names|label[ _]names|классы)\s*[:=]\s*(?P<names>\[.{3,20000}\])\s*",
                        re.IGNORECASE)
# A printed dict of metric lists, a history printed whole (``print(history.history)``, a trainer's dumped
# ``losses:{'train': [1.37, 1.23, …], 'val': […]}``): a quoted name, then a list that starts with a number
PRINTED_LIST = re.compile(r"""['"][^'"\n]{1,200}['"]\s*:\s*\[\s*(?:[-+]?(?:\d|\.\d|nan|inf)|np\.|tensor\()""",
                          re.IGNORECASE)
# The name a printed dict is given before its brace (``losses:{``, ``history = {``)
NAME_BEFORE_BRACE = re.compile(r"([A-Za-z_]\w*)\s*[:=]?\s*$")
# How a number prints inside a list: Python's nan and inf, numpy 2's np.float64(0.5), torch's tensor(0.5)
# A printed PyTorch module, a layer a line (``(0): Conv3d(4, 24, kernel_size=(3, 3, 3), stride=(1, 1, 1))``): its
# numbers are the architecture's, never values
MODULE_LINE = re.compile(r"\s*\(\w+\): [A-Za-z_][\w.]*\(")
# What a data loader prints of the data it found: Keras's ``flow_from_directory`` and ``image_dataset_from_directory``
# ("Found 4575 images belonging to 62 classes."), one class a folder; a character-level language model's corpus
# (Karpathy's min-char-rnn and minGPT: "data has 26724 characters, 17 unique."), its vocabulary
PRINTED_COUNT = re.compile(r"(?:Found \d+ (?:images|files) belonging to (?P<classes>\d+) classes"
                           r"|data has \d+ characters, (?P<vocabulary>\d+) unique)\b")
PRINTED_COUNT_STARTS = ("Found ", "data has ")
# The data a run's printed arguments name (``Namespace(dataset='cifar100', …)``, ``--dataset CIFAR100``, ``data:
# ./data/mnist``): a public benchmark's name gives its class count, as a config's does (curvedoc.datasets)
DATASET_NAMED = re.compile(r"""(?<![\w.])['"]?(dataset|dataset_name|dataset_id|data_set|data_name|data|task_name)"""
                           r"""['"]?(?!\w)\s*(?:[=:]\s*|\s+)['"]?([\w./\\~][\w./\\-]{0,200})""", re.IGNORECASE)
# A field of the net definition Caffe prints at the top of its log (``    num_output: 10``, ``  bottom: "score"``)
CAFFE_FIELD = re.compile(r'\s{1,12}(top|bottom|num_output|type):\s{0,3}"?([\w./\-]{1,200})"?\s*$')
# A heading that says the names after it are losses ("[Losses: x 0.27, y 0.25, …, total 15.1]"), followed by a name
LOSSES_GROUP = re.compile(r"\bLosses\s{0,3}:\s{0,3}(?=[A-Za-z_])")
# A name ending a line's text between two pairs, as the heading of the pairs after it ("| Acc: train=0.81")
MEASURE_HEADING = re.compile(r"(?<![\w.\-/])(?P<word>[A-Za-z][\w\-]{0,40})\s{0,4}[:=]\s{0,4}[\[({]?\s{0,4}$")
# A number right after a split's name, which is then no heading over other names but a value ("train 2.01",
# "Train=3667")
SPLIT_HEADING_VALUE = re.compile(r"\s{0,4}[=:]?\s{0,4}[-+]?\.?\d")
# A split named as a key of a number no pair reads (``(train=2007.6s, val=0.6s)``: each split's time): a value of
# that split, not the line's
SPLIT_KEYED_NUMBER = re.compile(r"\s{0,2}[=:]\s{0,2}[-+]?\d")
# Keras' EarlyStopping ("Epoch 00008: early stopping", "Epoch 8: early stopping") and its weights restored after it:
# the fit is over, whatever epoch the line names
EARLY_STOPPED = re.compile(r"\s{0,8}(?:Epoch\s{1,4}\d{1,12}:\s{1,4}early stopping"
                           r"|Restoring model weights from the end of the best epoch)", re.IGNORECASE)
TRACEBACK_FRAME = re.compile(r'\s{0,8}File "[^"]{1,4096}", line \d')  # a crash's stack, not a metric named "line"
SPLIT_EPOCH = re.compile(r"\s{0,10}\[\s{0,10}\d{1,12}\s?/\s?\d{1,12}")  # "[  50/1251" right after "Train: 3"
# "[ Valid | 012/100 ] loss = …" opening a line: the split, then the epoch and the number of epochs
SPLIT_COUNTER = re.compile(
    r"\[\s{0,10}(?P<split>[A-Za-z]{1,12})\s{0,10}\|\s{0,10}(?P<n>\d{1,12})\s?/\s?(?P<total>\d{1,12})\s{0,10}\]"
)
# clu's LoggingWriter: "[100] accuracy_test=0.65, lr=0.0075", the step in brackets right before the line's first pair,
# at the start of the message (after a log prefix such as glog's "logging_writer.py:35] "), padded in its brackets and
# a bar after them too ("[  5000] | gnorm 0.18 lr 0.0005 | loss 5.55", Transformer-XL's kin); "Created artifact [10]
# Profile" names no step
BRACKETED_STEP = re.compile(r"(?:^|[\]:]\s{1,4})\[\s{0,8}(?P<n>\d{1,12})\]\s{0,4}(?:\|\s{0,4})?$")
# A printed dict of the run's settings ("Hyperparameters: {'accum_steps': 8, 'batch': 512, …}"): its pairs are
# settings, whatever they name, and its "'test': 'test'" no evaluation split
SETTINGS_DICT = re.compile(
    r"(?<![\w.])(?:hyper-?parameters|hparams|config|configuration|args|arguments|settings|options|flags|cfg)"
    r"\s{0,3}[:=]?\s{0,3}\{",
    re.IGNORECASE,
)
# print(args) of an argparse parser: "Namespace(batch_size=64, lr=0.001, test=False, …)", the run's settings
ARGPARSE_NAMESPACE = re.compile(r"(?<![\w.])Namespace\(\w{1,64}=")
# A held-out pass printed batch by batch (pytorch/examples' ImageNet ProgressMeter: "Test: [100/196]\tLoss 2.2271e+00
# (1.6076e+00)\tAcc@1  50.00 ( 65.00)"; timm's "Test: [  48/48]  Loss:  6.9000 (6.8012)"): the split, then the batch
# out of the pass's batches
EVALUATION_PASS = re.compile(r"\s{0,8}(?P<split>[A-Za-z]{3,10}):?\s{1,4}\[\s{0,10}\d{1,12}\s?/\s?\d{1,12}\s{0,10}\]")
# a value, then its running average in brackets ("Loss 2.2271e+00 (1.6076e+00)", "Acc@1  50.00 ( 65.00)")
WITH_RUNNING_AVERAGE = re.compile(
    rf"(?<![\w.])(?:{NUMBER}|{NONFINITE})\s{{1,4}}\(\s{{0,4}}(?P<average>{NUMBER}|{NONFINITE})\s{{0,4}}\)"
)
# A line of two or more words and nothing else, bar their punctuation (a program's opening line: "Using TensorFlow
# backend."; not a rule of asterisks, a date or a line with values)
WORDS_ALONE = re.compile(r"[A-Za-z][A-Za-z'\-]*(?:[,:;]? {1,3}[A-Za-z][A-Za-z'\-]*){1,15}[.!:]{0,3}")
# A number in brackets between a name and its value qualifies the name ("Avg Reward (100): 1.19", a mean over the
# last 100 episodes; "Average Validation Accuracy (last 25): 0.41"): the value is the one after it
QUALIFIER_NUMBER = re.compile(rf"\s{{0,3}}\(\s{{0,3}}(?:[A-Za-z]{{1,12}}\s{{1,3}}){{0,2}}{NUMBER}"
                              rf"(?:\s{{1,3}}[A-Za-z]{{1,12}}){{0,2}}\s{{0,3}}\)(?=\s{{0,10}}[:=]\s{{0,10}}[-+]?\.?\d)")
# A name's abbreviation in brackets right before its value ("Protocol #1 Error (MPJPE): 164.3 mm", "Loss (CE): 0.4")
# is the name's last word, which says what was measured; a word in brackets is a part of the line's text
# ("time (data): 2.06 (0.52)", "500 (iteration) = 30000")
NAMING_ABBREVIATION = re.compile(r"(?<=[A-Za-z]) \((?P<abbreviation>[A-Z][\w\-@.]{0,30}[A-Z][\w\-@.]{0,30})\)"
                                 r"(?=\s{0,10}[:=]\s{0,10}[-+]?\.?\d)")
# A measure's name, then words in brackets that say which of its kind, then its value after a space (Flair's "DEV :
# loss 0.91 - f1-score (micro avg)  0.8436"): one name, the measure's qualified (see _qualified_measure)
QUALIFIED_MEASURE = re.compile(r"(?<![\w.\-/])(?P<name>[A-Za-z][\w\-]{0,40}) "
                               r"\((?P<words>[a-z]{1,12}(?: [a-z]{1,12}){0,2})\)(?=\s{1,10}[-+]?\.?\d)")
# A line without values that names the next fold, trial or run of a sweep (``========== FOLD 2/5 ==========``,
# ``Trial 3``): what trained before it was a run of its own, however early it stopped
NEXT_RUN_HEADING = re.compile(r"\b(?:fold|trial|run)\s{0,3}[#:]?\s{0,3}\d+(?:\s{0,3}/\s{0,3}\d+)?\b", re.IGNORECASE)
# A Markdown heading (``#### DQN``): a log kept in a Markdown file that heads a section of its own for each experiment
MARKDOWN_HEADING = re.compile(r"#{1,6}[ \t]+\S")
EVALUATION_CONTEXT = re.compile(  # the lookahead skips most positions at once: this runs on every line
    r"(?<![A-Za-z])(?=[vVeEtTdD])(?:" + "|".join(sorted(EVALUATION_WORDS, key=len, reverse=True)) + r")(?![A-Za-z])",
    re.IGNORECASE,
)

# A table's rows that count its step or epoch: SB3's time/total_timesteps, Baselines' total/steps, misc/total_timesteps
# and TimestepsSoFar (environment steps, the x both plot against), else its updates or epochs.
TABLE_X_KEYS = {
    "total_timesteps": "step", "timestepssofar": "step", "steps": "step", "total_steps": "step", "step": "step",
    "timesteps": "step", "epochs": "epoch", "epoch": "epoch",
}
VALUE_CELL = re.compile(rf"{NUMBER}|{NONFINITE}")
# A cell of a list printed after a name, bare or as numpy and torch print it ("np.float32(0.91)", "tensor(0.91)")
LISTED_CELL = re.compile(
    rf"\s{{0,3}}{WRAPPER_OPENING}?(?P<value>{NUMBER}|{NONFINITE})\)?\s{{0,3}}"
)
# A table of columns under a header line (see _ColumnTable): a header cell, and a progress bar a row may end with
HEADER_CELL = re.compile(r"[A-Za-z_][\w@.:\-/()%]{0,63}")
# A tab-separated header may name a column in words ("Learning Rate\tTrain Loss\t…", the Logger of
# pytorch-classification and the many repositories that copied it)
SPACED_HEADER_CELL = re.compile(r"[A-Za-z_][\w@.:\-/()% ]{0,63}")
# ... but not a name and its value ("epoch:1\tAccuracy:71.05\tAverage precision:74.84", print(..., sep="\t"))
KEYED_CELL = re.compile(r".{0,64}[:=]\s{0,10}[-+]?\.?\d[\d.eE+\-]{0,30}%?")
# what a header's first three cells and a row's first cell look like: a line that starts otherwise is neither, which
# settles nearly every line of a log at the cost of one anchored match
HEADER_START = re.compile(r"\s*[A-Za-z_][\w@.:\-/()%]{0,63}\s+[A-Za-z_(][\w@.:\-/()%]{0,63}\s+[A-Za-z_(]")
ROW_START = re.compile(r"\s*(?:[-+]?\.?\d|(?:all|overall|total|mean|avg|average)\s)", re.IGNORECASE)
COLUMN_BAR = re.compile(r"\s\d{1,3}%(?:\|[^|]{0,200}\|)?\s{0,4}(?:(?P<n>\d{1,12})/(?P<total>\d{1,12}))?")
# ... cut before its percent sign where the console cut every line at its width (80 columns: "640: 1" of "640:
# 100%|███…"), the last cell's colon still there
CUT_BAR = re.compile(r"(?<=\d:)\s{1,4}\d{1,3}\s*$")
EPOCH_OF_TOTAL = re.compile(r"(?P<n>\d{1,12})/(?P<total>\d{1,12})")
NON_BLANK = re.compile(r"\S+")
# columns that count or time things, not measure the model: images, labels per batch, memory, seconds
COUNT_COLUMNS = {"images", "labels", "instances", "targets", "img_size", "size", "gpu_mem", "mem", "time", "eta"}
AGGREGATE_ROWS = {"all", "overall", "total", "mean", "avg", "average"}
# A group line of a grouped table (see _GroupedColumns): a bar-framed rule that names its group (``----- VALID ---``)
GROUP_SEGMENT = re.compile(r"[\s-]*(?:[A-Za-z][\w/]{0,30}(?: [A-Za-z][\w/]{0,30}){0,3})?[\s-]*")
GROUP_WORD = re.compile(r"[A-Za-z][\w/]*")
BEFORE_THE_BAR_NO_DIGIT = re.compile(r"[^|\d]*\|")  # a line whose text before its first bar holds no digit
GROUPED_SETTINGS = {"rate": "lr"}  # the learning rate, in the columns that place a grouped table's row
SHORT_SCORE_NAMES = {"P": "precision", "R": "recall"}  # YOLO's evaluation columns
# A rule of dashes under a header, a group of dashes per column as wide as it (tabulate's "simple" tables, spaCy's
# training table): the groups say where each column's name is, however many words it has ("train loss")
DASH_RULE = re.compile(r"\s{0,20}-{2,}(?:\s{1,8}-{2,}){1,63}\s*")
DASH_GROUP = re.compile(r"-{2,}")
# spaCy's training table names its epoch E and its step #, and its scores by the letters of F-score, precision and
# recall after what they score (ENTS_F, ENTS_P, ENTS_R)
RULED_X_NAMES = {"e": "epoch", "#": "step"}
RULED_SCORE_LETTER = re.compile(r"(?<=_)[FPR]$")
RULED_SCORE_NAMES = {"F": "f1", "P": "precision", "R": "recall"}

# Where a record's step or epoch came from: the line itself, a header line before it, neither (printed during
# training), or neither and before training started (a setting, unless the log never names a step or epoch).
OWN, HEADER, LOOSE, PREAMBLE = 0, 1, 2, 3
MAX_SETTINGS = 1000
# Values printed after training began and taken as no points, kept for a session that may start over after them
MAX_LATE_SETTINGS = 10 * MAX_SETTINGS
MAX_CACHED = 10_000  # names remembered per process; a log of ever-new names must not grow memory
# Lines kept to compare a file's unterminated last line with: an epoch's summary line has up to a few thousand batch
# lines between it and the summary of the epoch before
RECENT_LINES = 8192
# A line naming more values is a dump, not a log line: its first ones are read. A log naming more curves is
# no longer read for new names. Both bound the time and memory a hostile or garbled file can cost.
MAX_PAIRS_PER_LINE = 1000
MAX_TAGS = 10_000


@dataclass
class Line:
    """What one cleaned line says: its step and epoch (None when it names none) and its other values."""

    epoch: float | None = None
    step: float | None = None
    step_total: float | None = None
    epoch_total: float | None = None  # "Epoch 3/10": the epochs the run was to train
    step_rank: int = len(STEP_KEYS)  # the rank of the key the step came from; a finer one replaces it
    epoch_as_setting: bool = False  # written as a setting is ("epoch: 20"), not as a position ("Epoch 3", "Epoch 3/10")
    values: dict[str, float] = field(default_factory=dict)
    last_number: str = ""  # the line's last named number as printed: how a line cut mid-write would show
    settings: bool = False  # a printed dict of settings (see SETTINGS_DICT): its values are no points
    section: str | None = None  # the split a heading with an epoch or step but no values names ("validate epoch 1")
    running: bool = False  # a batch of a held-out pass (EVALUATION_PASS): averages so far, which later lines replace


@dataclass
class Parsed:
    """A whole log: one record per line with values (columns), the values per tag, and what the reading noticed."""

    path: Path
    epoch: array = field(default_factory=lambda: array("d"))
    step: array = field(default_factory=lambda: array("d"))
    step_total: array = field(default_factory=lambda: array("d"))
    epoch_total: array = field(default_factory=lambda: array("d"))
    placed: array = field(default_factory=lambda: array("b"))
    # the names a record holds, as an index of ``kinds``: the kinds of line printed before the first line with a step
    # or epoch of its own (-1: a kind first printed after it), which may be lines printed at every step
    kind: array = field(default_factory=lambda: array("q"))
    kinds: dict[tuple[str, ...], int] = field(default_factory=dict)
    own_lines: int = 0
    tags: dict[str, tuple[array, array]] = field(default_factory=dict)  # tag → (record indexes, values)
    settings: dict[str, float | str] = field(default_factory=dict)
    # (index of the record printed next, tag, value): values printed after training began that are no points, a
    # later session's configuration among them; kept only where the step or epoch went back after them (see
    # ``add``), since only a run started over is preceded by a configuration of its own
    late_settings: list[tuple[int, str, float]] = field(default_factory=list)
    # the settings of each run the log holds (see ``_settings_of_each_run``)
    run_settings: list[dict[str, float | str]] = field(default_factory=list)
    # the last record with a step or epoch of its own: its (epoch, step) and index
    last_own_position: tuple[float | None, float | None] | None = None
    last_own_index: int = -1
    warnings: list[str] = field(default_factory=list)
    evidence: bool = False  # a step, an epoch or a metric's name seen: worth reading on
    # per run the log holds: values a restarted run logged again, dropped for the later ones
    superseded: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)  # records after which a run said it ended (a closing summary)
    untaken_names: int = 0  # values under new names once MAX_TAGS names were taken
    episode_tags: set[str] = field(default_factory=set)  # names printed on lines an episode's count places
    per_batch_lines: int = 0  # Keras progress lines of an unfinished epoch (n/total with n < total)
    bar_postfixes: int = 0  # finished tqdm bars with values after their rate (set_postfix), not read
    running_bar_postfixes: int = 0  # bars drawn with such values, finished or not, not read
    bar_values: str | None = None  # the bars whose values are read (FINISHED_BARS, RUNNING_BARS; see _read_log)
    loss_tags: set[str] = field(default_factory=set)  # names the format prints only losses under (see LOSS_LOG_PREFIX)
    unterminated: bool = False  # the line being read is the file's last and has no line end
    # metric lists printed whole (see PRINTED_LIST), by name: a history the lines with values may not hold
    printed_lists: dict[str, list] = field(default_factory=dict)
    reported_classes: int | None = None  # the classes its classification reports list (see PrintedReports)

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.path}: {message}")

    def add(self, line: Line, placed: int, kind: int | None = None) -> None:
        index = len(self.placed)
        if placed == OWN:
            self._forget_settings_unless_started_over(line)
            self.last_own_index = index
        self.epoch.append(math.nan if line.epoch is None else line.epoch)
        self.step.append(math.nan if line.step is None else line.step)
        self.step_total.append(math.nan if line.step_total is None else line.step_total)
        self.epoch_total.append(math.nan if line.epoch_total is None else line.epoch_total)
        self.placed.append(placed)
        if placed == OWN:
            self.kind.append(-1)  # a line with a step of its own is no line printed before one
            self.own_lines += 1
            if line.step_rank == EPISODE_RANK:
                self.episode_tags.update(line.values)
        else:
            self.kind.append(self.kind_index(line) if kind is None else kind)
        for tag, value in line.values.items():
            column = self.tags.get(tag)
            if column is None:
                if len(self.tags) >= MAX_TAGS:
                    self.untaken_names += 1
                    continue
                column = self.tags[tag] = (array("q"), array("d"))
            column[0].append(index)
            column[1].append(value)

    def retract(self, index: int, tags: Iterable[str]) -> None:
        """Takes back the values of ``tags`` that the record at ``index``, the last one, holds."""
        for tag in tags:
            column = self.tags.get(tag)
            if column is not None and column[0] and column[0][-1] == index:
                column[0].pop()
                column[1].pop()

    def note_late_settings(self, values: dict[str, float]) -> None:
        self.late_settings.extend((len(self.placed), tag, value) for tag, value in values.items())
        if len(self.late_settings) > MAX_LATE_SETTINGS:
            # lines whose steps cannot be compared keep what they print: only the latest can precede a restart
            del self.late_settings[:len(self.late_settings) - MAX_LATE_SETTINGS]

    def _forget_settings_unless_started_over(self, line: Line) -> None:
        """Drops the late settings printed since the last line with a step or epoch of its own when this line goes
        on from it: they precede no run started over, and a long log would otherwise keep them all."""
        previous = self.last_own_position
        position = self.last_own_position = (line.epoch, line.step)
        if not self.late_settings or previous is None:
            return
        compared = [(now, before) for now, before in zip(position, previous, strict=True)
                    if now is not None or before is not None]
        if compared and all(None not in pair for pair in compared) and tuple(
                now for now, _ in compared) > tuple(before for _, before in compared):
            while self.late_settings and self.late_settings[-1][0] > self.last_own_index:
                self.late_settings.pop()

    def kind_index(self, line: Line) -> int:
        names = tuple(line.values)
        kind = self.kinds.get(names, -1)
        if kind < 0 and not self.own_lines and len(self.kinds) < MAX_CACHED:
            kind = self.kinds[names] = len(self.kinds)
        return kind

    def place_at_epoch(self, index: int, epoch: float, epoch_total: float | None) -> None:
        """Makes the record at ``index``, taken as printed before training, a point of ``epoch``."""
        self.placed[index] = HEADER
        self.epoch[index] = epoch
        self.epoch_total[index] = math.nan if epoch_total is None else epoch_total

    def unplace(self, start: int) -> None:
        """Makes the records from ``start`` on settings: printed before training, at no step or epoch."""
        for index in range(start, len(self.placed)):
            self.placed[index] = PREAMBLE
            self.epoch[index] = self.step[index] = self.step_total[index] = self.epoch_total[index] = math.nan


def read(source: Source, content: bytes | None = None, fmt: str = FORMAT) -> list[Run]:
    """The runs the log holds: one, or several printed one after another (see
    ``records.runs_one_after_another``), each named after the file and "#" and its number, as a table's runs are.
    ``content``: the output to read in place of the file's bytes (a notebook's, which the file holds as JSON)."""
    path = source.files[0][1] if source.files else source.path
    parsed, runs = _read_log(path, split_runs=True, content=content)
    if len(runs) == 1:
        builders = [RunBuilder(path, fmt, name=file_run_name(path))]
    else:
        builders = [RunBuilder(f"{path}#{number}", fmt, name=f"{file_run_name(path)}#{number}")
                    for number in range(1, len(runs) + 1)]
    for builder, curves, superseded, settings in zip(builders, runs, parsed.superseded, parsed.run_settings,
                                                     strict=True):
        _add_curves(builder, path, parsed, curves, superseded, settings)
    return [builder.build() for builder in builders]


def _episode_averages(parsed: Parsed) -> set[str]:
    """The bare averages on the lines an episode's count places ("Episode 300  Avg: -997.00  BestAvg: -997.00
    σ: 29.85 | ε: 0.4060"): the average return of the episodes so far, the agent's score, whatever else it leaves
    unsaid."""
    return {tag for tag in parsed.episode_tags
            if (words := [word for word in tokens(tag) if not word.isdigit()]) and set(words) <= AVERAGE_WORDS}


def add_text_log(builder: RunBuilder, path: Path) -> None:
    """Adds the curves of the text log at ``path`` to ``builder``.

    Raises :class:`NotALog` (nothing added) when the file holds no training log and :class:`CurvedocError` when it
    cannot be read at all. Settings printed before training become ``builder.meta.hparams`` unless the builder
    already has some (a W&B run's config).
    """
    parsed, (curves,) = _read_log(path, split_runs=False)
    _add_curves(builder, path, parsed, curves, *parsed.superseded, *parsed.run_settings)


def _read_log(path: Path, split_runs: bool, content: bytes | None = None,
              ) -> tuple[Parsed, list[dict[str, tuple[np.ndarray, np.ndarray]]]]:
    parsed = parse(path, content=content)
    history = find_history(parsed.printed_lists)
    if history is not None and not _places_values(parsed):
        # the history printed whole is the log's curves: its other lines place nothing at a step or an epoch
        parsed.superseded, parsed.run_settings = [0], [{}]
        return parsed, [dict(history_curves(history, {}, parsed.warn))]
    runs = log_curves(parsed, split_runs)
    # A log whose only values are those its progress bars show (set_postfix: the last batch's, or a running average):
    # read them, as the only record there is. Those each bar shows when it finished, a point an epoch; failing
    # that, those a bar showed each time it was drawn, at its count: one bar over the whole training (the diffusers
    # scripts' "Steps: 10%|█ | 100/1000 [01:00<09:00, 1.67it/s, lr=1e-05, step_loss=0.123]", kohya's avr_loss)
    # (of a bar redrawn with \r on one line, only its last drawing was looked at: one is enough to look again)
    for bars, drawn in ((FINISHED_BARS, parsed.bar_postfixes >= MIN_POINTS), (RUNNING_BARS, parsed.running_bar_postfixes)):
        if runs is None and drawn:
            parsed = parse(path, bar_values=bars, content=content)
            runs = log_curves(parsed, split_runs)
    if runs is None:
        if parsed.per_batch_lines and not len(parsed.placed):
            raise NotALog(path, "only the progress bar of an unfinished epoch, no epoch's summary: the run stopped "
                                "before its first epoch ended?")
        raise NotALog(path, "no training log in it: no line gives a step or epoch with values, and no metric "
                            f"(loss, accuracy …) is printed {MIN_POINTS} times")
    return parsed, runs


def _add_curves(builder: RunBuilder, path: Path, parsed: Parsed, curves: dict[str, tuple[np.ndarray, np.ndarray]],
                superseded: int, settings: dict[str, float | str]) -> None:
    builder.add_file(path)
    for message in parsed.warnings:
        builder.warn(message)
    warn_restarts(builder, path, superseded, "value(s)")
    if not builder.meta.hparams:
        builder.meta.hparams = settings
    if parsed.reported_classes:
        # the classes an evaluation met: a count the log's settings state wins
        builder.add_config("the log", report_facts(parsed.reported_classes))
    scores = _episode_averages(parsed)
    for tag, (steps, values) in curves.items():
        builder.add(tag, steps, values, loss_hint=tag in parsed.loss_tags, score_hint=tag in scores)


# ----------------------------------------------------------------------------------------------- reading lines

def parse(path: Path, bar_values: str | None = None, content: bytes | None = None) -> Parsed:
    parsed = Parsed(path, bar_values=bar_values)
    state = _Reading(parsed)
    net = _CaffeNet(parsed)
    table = _Table()
    columns = _ColumnTable(state.names_a_metric)
    grouped = _GroupedColumns()
    conflict = _Conflict()
    copypaste = _CopyPaste()
    reports = PrintedReports()
    banner = None  # the log's first line when it is words alone ("Using TensorFlow backend."), else ""
    lines = _with_records_drawn_over(_split_lines(io.BytesIO(content), parsed) if content is not None
                                     else _lines(path, parsed))
    line_before = ""
    for text in _with_bars_finished_before_redrawn(lines) if bar_values == FINISHED_BARS else lines:
        if "\x1b" in text:  # colour codes around a value (skorch marks each new best) hide it from every reading
            text = ANSI.sub("", text)
        if banner is None:
            opening = text.strip()
            if opening:
                banner = opening if WORDS_ALONE.fullmatch(opening) else ""
        elif banner and banner in text and text.strip() == banner:
            # the program printed its opening line again: a new process, so the run before it is over, however
            # it stopped (an early-stopped fit is no crash that the next session resumes)
            state.end_run()
        if (conflict.base or text[:1] in CONFLICT_STARTS) and conflict.skips(text):
            continue
        if (reports.report is not None or "f1-score" in text) and reports.take(text):
            continue
        # a header's or a row's start, one anchored match, settles nearly every line here, without a call
        drawn = _last_drawn(text) if "\r" in text else text
        above, line_before = line_before, drawn
        if drawn.find("--", 0, 24) >= 0 and DASH_RULE.fullmatch(drawn) and columns.ruled(above, drawn):
            continue
        if "|" in drawn and (row := grouped.take(drawn)) is not None:
            if row != "header":
                state.take(row)
            continue
        starts_table = HEADER_START.match(drawn) or (columns.header is not None and ROW_START.match(drawn))
        row = columns.take(drawn) if starts_table else None
        if row is not None:
            if row != "header":
                state.take(row)
            continue
        if COPYPASTE in text and (found := DETECTRON2_COPYPASTE.search(text)) is not None:
            summary = copypaste.take(text[found.end():])
            if summary is not None:
                state.take(summary)
            continue
        part = table.take(text)
        if table.rows and part != "row":
            state.take(table.record())  # a rule or any other line ends the table
        if part or TRACEBACK_FRAME.match(text) or MODULE_LINE.match(text):
            continue
        if "{" in text and "[" in text and PRINTED_LIST.search(text) and _take_printed_lists(text, parsed):
            continue
        if "[" in text and (listed := CLASS_LIST.match(text)) is not None:
            _take_class_list(listed["names"], parsed)
            continue
        # the data a run names is printed before it trains: no cost on the lines of its training
        if not state.started and ("data" in text or "task_name" in text) and "dataset" not in parsed.settings:
            _take_dataset_name(text, parsed)
        if text.startswith(PRINTED_COUNT_STARTS) and (count := PRINTED_COUNT.match(text)) is not None:
            _take_printed_count(count, parsed)
            continue
        if ("stopping" in text or "Restoring" in text) and EARLY_STOPPED.match(text):
            state.end_run()
            continue
        if text.startswith("layer"):
            net.printed = True
        elif net.printed and text[:1] == " ":
            net.take(text)
        line = read_line(text, state) if VALUE_HINT.search(text) else None
        # a printed dict whose closing brace made it to the file is whole whatever came before it
        if (parsed.unterminated and line is not None and not text.rstrip().endswith("}")
                and not state.completes_its_pattern(line)):
            parsed.warn("last record cut off (a line without its line end, shorter than the lines of its kind "
                        "before it: the usual state of a crashed or running job); dropped it, kept the lines before it")
            break
        if line is not None:
            state.take(line)
        else:
            state.announce(text)
    if table.rows:
        state.take(table.record())
    reports.close()
    parsed.reported_classes = reports.classes
    net.settle()
    if parsed.untaken_names:
        parsed.warn(f"more than {MAX_TAGS} names; {parsed.untaken_names} value(s) under further names not read")
    if conflict.seen:
        parsed.warn("git merge-conflict markers (<<<<<<<, =======, >>>>>>>) in it: the two versions of the lines "
                    "between them were read one after the other, as sessions of one log")
    return parsed


def _take_class_list(names: str, parsed: Parsed) -> None:
    """A printed class list's length as the log's ``num_classes`` setting, when it is a list of two or more distinct
    names (a list of numbers or repeats is some other list)."""
    try:
        listed = ast.literal_eval(names)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return
    if (isinstance(listed, list) and len(listed) >= 2 and all(isinstance(name, str) for name in listed)
            and len(set(listed)) == len(listed)):
        parsed.settings.setdefault("num_classes", float(len(listed)))


class _Conflict:
    """Git's merge-conflict markers in a committed log (``<<<<<<< HEAD``, ``=======``, ``>>>>>>> 437352c``): both
    versions of the lines between them are what two copies of the log appended, each read as it comes; a diff3
    base section (from ``||||||| base`` to ``=======``) is what both replaced, and is not read."""

    def __init__(self) -> None:
        self.seen = self.inside = self.base = False

    def skips(self, text: str) -> bool:
        """Whether ``text`` is a marker or a line of a base section: no line of the log."""
        marker = text[:7] if CONFLICT_MARKER.match(text) else None
        if marker == "<<<<<<<":
            self.seen = self.inside = True
        elif marker is None or not self.inside:
            return self.base
        elif marker == "|||||||":
            self.base = True
        elif marker == "=======":
            self.base = False
        else:
            self.inside = self.base = False
        return True


class _CopyPaste:
    """Detectron2's evaluation summary, printed after each evaluation for pasting into a spreadsheet:
    ``copypaste: Task: bbox``, then ``copypaste: AP,AP50,AP75,APs,APm,APl``, then ``copypaste: 40.2,61.0,…,nan,…``.
    A task's values are one record of ``eval/<task>/<metric>`` (Detectron2's metrics.json names them
    ``<task>/<metric>``; the prefix says that these lines, which carry no iteration, are an evaluation's), at the
    iteration of the training line before them. A ``nan`` is a metric the set had no example for (APs without small
    objects): not read."""

    def __init__(self) -> None:
        self.task: str | None = None
        self.names: list[str] | None = None

    def take(self, content: str) -> Line | None:
        """The record a line's text after its "copypaste: " completes, if any."""
        content = content.strip()
        if content.startswith("Task:"):
            self.task, self.names = content[len("Task:"):].strip() or None, None
            return None
        cells = [cell.strip() for cell in content.split(",")]
        if self.task is None:
            return None
        if self.names is None:
            self.names = cells if all(HEADER_CELL.fullmatch(cell) for cell in cells) else None
            return None
        names, self.names = self.names, None
        if len(cells) != len(names) or not all(VALUE_CELL.fullmatch(cell) for cell in cells):
            return None
        values = {f"eval/{self.task}/{name}": value for name, cell in zip(names, cells, strict=True)
                  if math.isfinite(value := _number(cell))}
        return Line(values=values) if values else None


class _Table:
    """A key/value table printed one row a line, framed by dashed rules: the loggers of OpenAI Baselines
    (``| rollout/return | -1.84e+03 |``) and Stable-Baselines3, whose section rows (``| rollout/ |  |``) prefix the
    indented rows under them (``|    ep_rew_mean | 22 |`` → ``rollout/ep_rew_mean``). One table is one record, at the
    step (or epoch) one of its rows counts."""

    def __init__(self) -> None:
        self.rows: dict[str, float] = {}
        self.section = ""

    def take(self, text: str) -> str | None:
        """What ``text`` is to a table: a ``"rule"`` (a line of dashes), a ``"row"`` (its number kept), or None."""
        stripped = text.strip()
        if stripped[:1] not in ("|", "-"):
            return None  # nearly every line: decided by its first character
        if not stripped.strip("-"):
            return "rule"
        if not (stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") == 3):
            return None
        key_cell, value_cell = stripped[1:-1].split("|")
        key, value = key_cell.strip().rstrip(".").strip(), value_cell.strip()
        if not (key[:1].isalpha() or key[:1] == "_"):
            return None  # a name starts with a letter: "| 1 | 0.5 |" is a row of a printed data table
        if not value and key.endswith("/"):
            self.section = key
        elif len(self.rows) < MAX_PAIRS_PER_LINE and VALUE_CELL.fullmatch(value):
            # SB3 indents a section's rows under it; Baselines writes whole keys flush left
            self.rows[f"{self.section}{key}" if key_cell.startswith("   ") else key] = _number(value)
        return "row"

    def record(self) -> Line:
        """The table read so far as one line's values, placed by its step (or epoch) row; the table is then done."""
        line = Line(values=self.rows)
        for tag in list(self.rows):
            kind = TABLE_X_KEYS.get(tag.rsplit("/", 1)[-1].lower())
            if kind == "epoch" and line.epoch is None:
                line.epoch = line.values.pop(tag)
            elif kind == "step" and line.step is None and float(line.values[tag]).is_integer():
                line.step = line.values.pop(tag)
        self.rows, self.section = {}, ""
        return line


def _ruled_score_name(letter: re.Match) -> str:
    return RULED_SCORE_NAMES[letter[0]]


class _ColumnTable:
    """Columns named by a header line, a row of values on each line under it, as Ultralytics YOLOv3/v5 print an
    epoch (``Epoch gpu_mem box obj cls total labels img_size`` over ``0/299 2.62G 0.0525 … 640: 100% 3692/3692``,
    then ``Class Images Labels P R mAP@.5 mAP@.5:.95`` over ``all 1846 2345 0.679 0.83 0.781 0.492``), as YOLOv8 and
    fastai do (``epoch train_loss valid_loss accuracy time``).

    A header names its x (epoch, step …) first; a table without one (YOLO's evaluation) is read only after one with
    it, each of its rows at the x of that table's last row. A tab-separated table whose header names measurements in
    words and no x (``Learning Rate<TAB>Train Loss<TAB>Valid Loss<TAB>…``, pytorch-classification's Logger,
    one row appended per epoch) is read with its rows counted as the epochs 1, 2, …. A row has as many cells as its
    header and a number in the x's cell; cells that count or time things, or hold a unit (``2.62G``), are not
    read. A table whose first
    column names things (classes) gives only its row for all of them (``all``): the rest is a per-class breakdown.
    Under a header with a memory column (YOLO's), the unnamed terms (``box``, ``obj``, ``cls``, ``total``) are its
    losses; its other header's measurements are the evaluation's (``val_P``).
    """

    def __init__(self, names_a_metric: Callable[[str], bool]) -> None:
        self.names_a_metric = names_a_metric
        self.header: list[str] | None = None
        self.tags: list[str | None] = []  # what each column after the x is read as (None: not read)
        self.x_kind: str | None = None
        self.last_x: tuple[float | None, float | None] | None = None
        self.losses_unnamed = False
        self.counted_rows: int | None = None  # rows read under a header that names no x (None: it names one)
        self.starts: list[int] = []  # where each header cell starts on its line
        self.step_beside = False  # the header's second column is a step beside its first, the epoch

    def take(self, text: str) -> Line | str | None:
        """A row's :class:`Line`, ``"header"`` for a header or the row of an unfinished epoch (nothing to read), or
        None when ``text``, a line as last drawn that starts as a header or a row does (``HEADER_START``,
        ``ROW_START``), is neither."""
        if "\t" in text:
            cells = [cell.strip() for cell in text.strip().split("\t")]
            if (all(SPACED_HEADER_CELL.fullmatch(cell) and not KEYED_CELL.fullmatch(cell) for cell in cells)
                    and self._is_counted_header(cells)):
                return "header"
            if self.counted_rows is not None:
                return self._counted_row(cells)
        bar = COLUMN_BAR.search(text)
        drawn = text[:bar.start()] if bar else text[:cut.start()] if (cut := CUT_BAR.search(text)) else text
        cells = drawn.split()
        if len(cells) >= 3 and all(HEADER_CELL.fullmatch(cell) for cell in cells) and self._is_header(cells):
            self.starts = [match.start() for match in NON_BLANK.finditer(drawn)]
            return "header"
        if self.header is None:
            return None
        if len(cells) != len(self.header) and (cells := self._aligned(drawn)) is None:
            return None
        if bar is not None and bar["n"] is not None and bar["n"] != bar["total"]:
            return "header"  # a row of an epoch still running, drawn again when it ends: not read
        return self._row(cells)

    def _aligned(self, drawn: str) -> list[str] | None:
        """The cells of a row that leaves some columns blank, each under the header cell it starts at: Chainer's
        PrintReport pads every column to its header's width and leaves a value not yet reported blank (the
        validation columns between evaluations). None unless every cell starts where a header cell does."""
        found = [(match.start(), match.group()) for match in NON_BLANK.finditer(drawn)]
        if not 2 <= len(found) < len(self.header) or not {start for start, _ in found} <= set(self.starts):
            return None
        cells = [""] * len(self.header)
        for start, cell in found:
            cells[self.starts.index(start)] = cell
        return cells if cells[0] else None

    def _is_header(self, cells: list[str]) -> bool:
        names = [cell.rstrip(":").rsplit("(", 1)[-1].rstrip("):") for cell in cells]
        x_kind = _x_kind(names[0])
        if x_kind is not None:
            self.losses_unnamed = any(name.lower() in ("gpu_mem", "mem") for name in names)
            tags = [f"{name}_loss" if self.losses_unnamed and not self.names_a_metric(name) else name
                    for name in names[1:]]
        elif self.last_x is not None and (any(map(self.names_a_metric, names))
                                          or (self.losses_unnamed and names[0].lower() == "class")):
            # an evaluation table's rows sit at the last row's x: there must be one
            tags = [f"val_{SHORT_SCORE_NAMES.get(name, name)}" for name in names[1:]]
        else:
            return False
        self.header, self.x_kind, self.counted_rows = names, x_kind, None
        self.tags = [None if name.lower() in COUNT_COLUMNS else tag for name, tag in zip(names[1:], tags, strict=True)]
        # "epoch iteration lr main/loss …" (Chainer's PrintReport): the iteration beside the epoch is the step
        self.step_beside = x_kind == "epoch" and len(names) > 2 and _x_kind(names[1]) not in (None, "epoch")
        if self.step_beside:
            self.tags[0] = None
        return True

    def ruled(self, header: str, rule: str) -> bool:
        """Whether ``header``, the line above a rule of dashes, is a table's header: its column names are where the
        rule's dash groups are, words joined by "_" ("train loss" → train_loss; spaCy's "LOSS NER")."""
        groups = [group.span() for group in DASH_GROUP.finditer(rule)]
        names = ["_".join(header[start:end].split()) for start, end in groups]
        if not all(names) or len(names) < 3:
            return False
        names = [RULED_X_NAMES.get(name.lower()) or RULED_SCORE_LETTER.sub(_ruled_score_name, name) for name in names]
        if not self._is_header(names):
            return False
        self.starts = [start for start, _ in groups]
        return True

    def _is_counted_header(self, names: list[str]) -> bool:
        """A tab-separated header of two or more measurements and no x: its rows are counted as epochs."""
        if len(names) < 2 or _x_kind(names[0]) is not None or not any(map(self.names_a_metric, names)):
            return False
        self.header, self.x_kind, self.counted_rows = names, "epoch", 0
        # named as the reader names a phrase elsewhere ("Train Loss: 0.5" → Train_Loss)
        self.tags = [None if name.lower() in COUNT_COLUMNS else "_".join(name.split()) for name in names]
        return True

    def _counted_row(self, cells: list[str]) -> Line | None:
        if len(cells) != len(self.header) or not all(VALUE_CELL.fullmatch(cell) for cell in cells):
            return None
        self.counted_rows += 1
        line = Line(epoch=float(self.counted_rows))
        line.values = {tag: _number(cell) for tag, cell in zip(self.tags, cells, strict=True) if tag is not None}
        self.last_x = (line.epoch, None)
        return line if line.values else None

    def _row(self, cells: list[str]) -> Line | None:
        # a row is mostly numbers: Chainer's ProgressBar line "10 iter, 0 epoch / 120000 iterations" under its
        # PrintReport header has as many words as the header, but is none
        filled = [cell for cell in cells if cell]
        if 2 * sum(not (VALUE_CELL.fullmatch(cell.rstrip(":")) or EPOCH_OF_TOTAL.fullmatch(cell))
                   for cell in filled) > len(filled):
            return None
        line = Line()
        first = cells[0]
        if self.x_kind is not None:
            x = EPOCH_OF_TOTAL.fullmatch(first) or VALUE_CELL.fullmatch(first)
            if x is None:
                return None
            n = float(x["n"]) if x.re is EPOCH_OF_TOTAL else _number(first)
            if self.x_kind == "epoch":
                line.epoch = n
                line.epoch_total = float(x["total"]) if x.re is EPOCH_OF_TOTAL else None
                if self.step_beside and VALUE_CELL.fullmatch(cells[1]):
                    line.step = _number(cells[1])
            else:
                line.step = n
            self.last_x = (line.epoch, line.step)
        elif first.lower() in AGGREGATE_ROWS or VALUE_CELL.fullmatch(first):
            line.epoch, line.step = self.last_x
        else:
            return None
        for tag, cell in zip(self.tags, cells[1:], strict=True):
            cell = cell.rstrip(":")
            if tag is not None and VALUE_CELL.fullmatch(cell):
                line.values[tag] = _number(cell)
        return line if line.values else None


class _GroupedColumns:
    """A table whose header groups its columns between bars, under a line that names each group (a Kaggle training
    template copied into many competition solutions)::

                              |----- VALID ---|---- TRAIN/BATCH --------------
        rate     iter   epoch | loss  lb(lev) | loss0  loss1  | time
        0.00040   1.50*  0.60 | 0.412  0.851  | 0.398  0.021  |  0 hr 12 min

    The columns before the first bar place the row (its epoch, else its iteration; ``*`` marks a saved checkpoint)
    and hold the learning rate (``rate``); a group's columns are named by the group's first word (``valid_loss``,
    ``train_loss0``). A group whose row does not split into one number a column (``Current Best`` over one
    value, ``0 hr 12 min`` under ``time``) is not read."""

    def __init__(self) -> None:
        self.groups: list[str] = []
        self.names: list[list[str]] | None = None  # the header's names, bar-separated group by group
        self.places: list[tuple[str, str]] = []  # the names before the first bar that place a row, and how

    def take(self, text: str) -> Line | str | None:
        """A row's :class:`Line`, ``"header"`` for a group line or a header, or None for any other line."""
        if self.names is None and not BEFORE_THE_BAR_NO_DIGIT.match(text):
            return None  # before a header only a group line or a header can come, neither with a digit before its bar
        segments = text.rstrip().rstrip("|").split("|")
        if (not segments[0].strip() and len(segments) > 1 and "-" in text and GROUP_WORD.search(text)
                and all(GROUP_SEGMENT.fullmatch(segment) for segment in segments[1:])):
            self.groups = [(GROUP_WORD.search(segment) or [""])[0].split("/")[0].lower() for segment in segments[1:]]
            return "header"
        first = segments[0].split()
        if (len(segments) > 1 and first and all(HEADER_CELL.fullmatch(cell) for cell in first)
                and any(map(_x_kind, first))):
            groups = self.groups + [""] * len(segments)
            self.names = [[GROUPED_SETTINGS.get(name.lower(), name) for name in first]] + [
                [f"{group}_{name}" if group else name for name in segment.split()]
                for group, segment in zip(groups, segments[1:])]
            kinds = {name: _x_kind(name) for name in first}
            # the epoch places the row; the iteration (in thousands, starred at a checkpoint) only without one
            self.places = [(name, "epoch" if kind == "epoch" else "step" if "epoch" not in kinds.values() else "")
                           for name, kind in kinds.items() if kind is not None]
            self.groups = []
            return "header"
        if self.names is None or len(segments) != len(self.names) or len(first) != len(self.names[0]):
            return None
        line = Line()
        for names, segment in zip(self.names, segments):
            cells = [cell.rstrip("*") for cell in segment.split()]
            if len(cells) == len(names) and all(VALUE_CELL.fullmatch(cell) for cell in cells):
                line.values.update((name, _number(cell)) for name, cell in zip(names, cells, strict=True)
                                   if name.rsplit("_", 1)[-1].lower() not in COUNT_COLUMNS)
            elif names is self.names[0]:
                return None
        for name, place in self.places:
            x = line.values.pop(name)
            if place == "epoch":
                line.epoch = x
            elif place == "step":
                line.step = x
        return line if line.values else None


def _take_printed_count(count: re.Match, parsed: Parsed) -> None:
    """Keeps the class count or the vocabulary a data loader printed it found (see PRINTED_COUNT): the first the log
    prints, the training data's, which the validation data's follows."""
    if count["classes"]:
        parsed.settings.setdefault("num_classes", float(count["classes"]))
    else:
        parsed.settings.setdefault("vocab_size", float(count["vocabulary"]))


def _take_dataset_name(text: str, parsed: Parsed) -> None:
    """Keeps the first listed benchmark the log's printed arguments name as its ``dataset`` setting."""
    for named in DATASET_NAMED.finditer(text):
        if benchmark_classes((named[1].lower(),), named[2]) is not None:
            parsed.settings["dataset"] = named[2]
            return


class _CaffeNet:
    """Caffe prints the net it trains (its prototxt) at the top of its log: the class count is the ``num_output`` of
    the layer whose output a ``SoftmaxWithLoss`` layer takes, kept as the log's ``num_classes`` setting. A net with
    several such heads (CIFAR-100's coarse and fine labels) sums their losses, whose chance level no one count
    gives: none is kept."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.outputs: dict[str, int] = {}  # a layer's top -> its num_output
        self.top: str | None = None
        self.loss_follows = False  # a SoftmaxWithLoss layer's bottoms come next
        self.heads: dict[str, int | None] = {}  # each SoftmaxWithLoss layer's input -> its count (train and test net)
        self.printed = False  # a "layer {" line seen: only then are a line's fields the net's

    def take(self, text: str) -> None:
        field = CAFFE_FIELD.match(text)
        if field is None:
            return
        key, value = field.groups()
        if key == "top":
            self.top = value
        elif key == "num_output" and self.top is not None and value.isdigit():
            self.outputs[self.top] = int(value)
        elif key == "type":
            self.loss_follows = value == "SoftmaxWithLoss"
        elif key == "bottom" and self.loss_follows:
            self.loss_follows = False
            self.heads[value] = self.outputs.get(value)

    def settle(self) -> None:
        counts = set(self.heads.values())
        if len(self.heads) == 1 and None not in counts:
            self.parsed.settings.setdefault("num_classes", float(counts.pop()))


class _Reading:
    """What the lines read so far mean for the next one: the header it falls under, whether training started."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.header: Line | None = None
        self.header_tags: set[str] = set()
        self.header_from = 0  # the first record taken after the header line
        self.started = False  # a line has named a step or an epoch
        self.metric_names: dict[str, bool] = {}
        self.evaluation: str | None = None  # the split a header line without values announced ("Validation …")
        self.running_record: int | None = None  # the last record of a held-out pass's running averages
        self.best_summary = False  # within DeepXDE's "Best model at step N:" block: the best values restated
        self.heading = ""  # the last line without values that is not blank ("evaluate:test" before conlleval's output)
        self.conlleval_split = "val"  # the split the heading before conlleval's output names, validation if none
        self.split_columns: tuple[str, str] | None = None  # the splits a table's header names, a column each
        self.fenced_epochs: bool | None = None  # whether a number alone between fences is an epoch (see read_line)
        # the split the last heading with an epoch or step named (see take) and the last point placed: a loop that
        # prints its train and its validation results alike, each under such a heading, says which is which only there
        self.section: str | None = None
        self.last_point: Line | None = None
        # the lines taken last, where a last line without its line end finds the line of its kind (the same
        # names, an epoch and a step or not) before it: (kind, last number) of each, noted before ``take`` places
        # a line under its header or filters its values
        self.recent: collections.deque[tuple[tuple, str]] = collections.deque(maxlen=RECENT_LINES)
        # the last record printed before training started (its index and names) and, once an epoch's header came
        # right after it, that record: an epoch's report whose own header the log lost (see take)
        self.last_preamble: tuple[int, tuple[str, ...]] | None = None
        self.headless: tuple[int, tuple[str, ...]] | None = None

    def end_run(self) -> None:
        """A line saying the run is over (EARLY_STOPPED) closes the run whose record came last before it, and heads
        nothing: printed to stderr, it can come before the last epoch's summary on stdout, which stays that
        epoch's."""
        if self.started and len(self.parsed.placed):
            self.parsed.ends.append(len(self.parsed.placed) - 1)

    def announce(self, text: str) -> None:
        """A line without values that names an evaluation split ("INFO: Validation koniq10k") heads the block of
        result lines right after it; any other line without values (a blank, a status message) ends the block,
        as does a line with a step or epoch of its own. One that names the next fold or trial (NEXT_RUN_HEADING), or
        a Markdown heading (a log kept in Markdown, a section for each experiment), closes the run before it."""
        if "maxDets" in text and COCO_SUMMARY.match(text):
            return  # a recall line of pycocotools' summary, or one without objects of its size: the block goes on
        if text and not text.isspace():
            self.heading = text
        if "|" in text and text.rstrip()[-1:].isalpha() and (columns := SPLIT_COLUMNS.search(text)) is not None and all(
                column.lower() in SPLIT_WORDS for column in columns.groups()):
            self.split_columns = columns.groups()
            return
        self.evaluation = None
        if self.started and len(self.parsed.placed) and (NEXT_RUN_HEADING.search(text) or MARKDOWN_HEADING.match(text)):
            self.parsed.ends.append(len(self.parsed.placed) - 1)
        if self.started:
            context = EVALUATION_CONTEXT.search(text)
            # a printed config's "val:" section or "phase: val" entry heads no block of results; a log prefix
            # ("INFO: Validation koniq10k") does not make one a config entry
            if (context is not None and text[context.end():context.end() + 1] not in (":", "=")
                    and not CONFIG_KEY_BEFORE.search(text, 0, context.start())):
                self.evaluation = context.group().lower()

    def _split_by_section(self, line: Line) -> None:
        """A point that repeats the names of the point before it at the same x, under a heading that named an
        evaluation split since ("=====validate epoch 1=====" between two "Epoch 0 | loss = …" lines), is that
        split's: its names that say no split get the heading's word. Without the repeat nothing is renamed, so a
        heading that only announces results naming their own split, or a status line, changes no name."""
        previous, self.last_point = self.last_point, line
        if (self.section in EVALUATION_WORDS and previous is not None
                and (previous.epoch, previous.step) == (line.epoch, line.step)
                and not previous.values.keys().isdisjoint(line.values)):
            line.values = {tag if split_of(tokens(tag)) else f"{self.section}_{tag}": value
                           for tag, value in line.values.items()}

    def take(self, line: Line) -> None:
        self.recent.append((_kind_of(line), line.last_number))
        if line.settings:
            for tag, value in line.values.items():
                if len(self.parsed.settings) < MAX_SETTINGS:
                    self.parsed.settings.setdefault(tag, value)
            if self.started:
                self.parsed.note_late_settings(line.values)
            return
        if line.epoch is not None or line.step is not None:
            self.parsed.evidence = True
            if not line.values and self.evaluation is not None and self._restates_the_step(line):
                return  # BERT's "***** Eval results *****" block lists its global_step among its results
            self.evaluation = None
            if not line.values:
                if line.section is not None:
                    self.section = line.section
                if (line.epoch is None and line.step_rank == BATCH_RANK and self.header is not None
                        and self.header.epoch is not None):
                    # " ---- batch: 010 ----" under "**** EPOCH 003 ****" (PointNet's log): a batch of that epoch
                    # (a "STEP 4: EVALUATION" stage of a pipeline is none)
                    line.epoch, line.epoch_total = self.header.epoch, self.header.epoch_total
                # "Epoch 3/10" on a line of its own: the lines after it report that epoch (Keras). A callback's
                # "Epoch 00003: val_loss improved …" after that epoch's summary names it again: no second summary.
                if self.header is None or (line.epoch, line.step) != (self.header.epoch, self.header.step):
                    self.header_tags = set()
                    self.header_from = len(self.parsed.placed)
                if not self.started and self.last_preamble and self.last_preamble[0] == len(self.parsed.placed) - 1:
                    self.headless = self.last_preamble
                self.header = line
            else:
                self._split_by_section(line)
                if line.epoch is None and self.header is not None and self.header.step is None:
                    # "Batch 10/165 | loss …" lines under "Epoch 2/20" count batches within that epoch
                    line.epoch, line.epoch_total = self.header.epoch, self.header.epoch_total
                else:
                    self.header = None
                self.parsed.add(line, OWN)
            self.started = True
            return
        if self.header is not None and not any(map(self.names_a_metric, line.values)):
            # An epoch's report names what it measures; a line under a header that names nothing measured is no
            # report. After "epoch: 20" ("gamma: 0.7") it shows the header to be a line of a printed configuration,
            # the number of epochs to run: a setting, like what it seemed to head and what follows until a line
            # names a step or epoch again (a restarted session prints its configuration again). Once a loss or a
            # score stood under it, it heads an epoch: a time printed after them ("\tEval time: 0.96") is no report.
            if (self.header.epoch_as_setting and self.header.step is None
                    and not any(map(names_a_measurement, self.header_tags))):
                self.parsed.unplace(self.header_from)
                self.started, self.header = False, None
        elif self.header is not None and self.header_tags.isdisjoint(line.values):
            self.header_tags.update(line.values)
            line.epoch, line.step, line.step_total = self.header.epoch, self.header.step, self.header.step_total
            if (self.headless is not None and self.headless[1] == tuple(line.values) and line.step is None
                    and line.epoch is not None and line.epoch >= 2):
                # A log that starts with "… - loss: 0.92 - val_loss: 0.87" and then "Epoch 2/10" lost its first
                # header (copied from the second on): that report, the same names as epoch 2's, is epoch 1's
                self.parsed.place_at_epoch(self.headless[0], line.epoch - 1, self.header.epoch_total)
            self.headless = None
            line.epoch_total = self.header.epoch_total
            self.parsed.add(line, HEADER)
            return
        if self.started:
            # A line without a step or epoch of its own is mostly an evaluation block's: only the values that read as
            # one's can be taken, unless it is a kind printed at every step (see ``_printed_each_step``), decided
            # with the whole log read; a kind first printed after the first line with a step is none.
            kind = self.parsed.kind_index(line)
            if kind < 0:
                # a score only an evaluation computes (mIoU, mAP, BLEU) makes the line an evaluation's, whose
                # values are named as such: HRNet's "Loss: 3.124, MeanIU:  0.0649, Best_mIoU:  0.0649"
                evaluation = any(map(is_evaluation_score, line.values))
                taken = {tag: value for tag, value in line.values.items()
                         if _reads_as_evaluation(tag, self.names_a_metric)
                         or (evaluation and self.names_a_metric(tag))}
                self.parsed.note_late_settings({tag: value for tag, value in line.values.items() if tag not in taken})
                line.values = {(tag if split_of(tokens(tag)) else f"val_{tag}"): value for tag, value in taken.items()}
            if line.values:
                if self.running_record == len(self.parsed.placed) - 1:
                    # the pass's next batch, or its summary: the averages over more of it
                    self.parsed.retract(self.running_record, line.values)
                self.parsed.add(line, LOOSE, kind)
                self.running_record = len(self.parsed.placed) - 1 if line.running else None
        else:
            self.parsed.evidence = self.parsed.evidence or any(map(self.names_a_metric, line.values))
            self.last_preamble = (len(self.parsed.placed), tuple(line.values))
            self.parsed.add(line, PREAMBLE)

    def _restates_the_step(self, line: Line) -> bool:
        """Whether ``line`` names only the step the last line with a step of its own was at: no new step."""
        own = self.parsed.last_own_index
        return line.epoch is None and own >= 0 and self.parsed.step[own] == line.step

    def completes_its_pattern(self, line: Line) -> bool:
        """Whether a last line without its line end is whole: it names what the last line of its kind named, and
        its last number is as long (see ``records.whole_at_line_end``)."""
        kind = _kind_of(line)
        before = next((number for taken, number in reversed(self.recent) if taken == kind), None)
        return before is not None and whole_at_line_end(line.last_number, before)

    def names_a_metric(self, tag: str) -> bool:
        known = self.metric_names.get(tag)
        if known is None:
            known = names_a_metric(tag)
            if len(self.metric_names) < MAX_CACHED:
                self.metric_names[tag] = known
        return known


def _kind_of(line: Line) -> tuple:
    return tuple(line.values), line.epoch is None, line.step is None


def names_a_metric(tag: str) -> bool:
    """A name that says it is a measurement of the model (loss, accuracy, reward …), not a setting or a count."""
    return infer_role(tag) != Role.OTHER or any(
        word in METRIC_WORDS or word.endswith(("loss", "accuracy")) for word in tokens(tag)
    )


def _lines(path: Path, parsed: Parsed) -> Iterator[str]:
    """The file's lines as text, read in chunks, each cut to its last ``MAX_LINE_BYTES``; see the module's caps."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise CurvedocError(path, describe_os_error(exc)) from None
    with handle:
        try:
            yield from _split_lines(handle, parsed)
        except OSError as exc:
            raise CurvedocError(path, describe_os_error(exc)) from None


def _split_lines(handle, parsed: Parsed) -> Iterator[str]:
    head = handle.read(CHUNK_BYTES)
    if head.startswith(LFS_POINTER):
        raise CurvedocError(parsed.path, "is a Git LFS pointer, not the log itself (run `git lfs pull` to fetch it)")
    # PowerShell 5's `>` writes UTF-16 (with a BOM or not): decode wide text as it comes and go on in UTF-8, so
    # one line splitter serves all
    encoding = wide_encoding(head)
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace") if encoding else None
    chunk = head.removeprefix(codecs.BOM_UTF8)
    if not (head if decoder else chunk).strip(b" \t\r\n\x00\xff\xfe"):
        raise CurvedocError(parsed.path, "empty file")
    carry, carry_cut = b"", False  # the unfinished line, and whether its start was already cut away
    read_so_far = cut_lines = 0
    while chunk:
        read_so_far += len(chunk)
        if decoder is not None:
            chunk = decoder.decode(chunk).encode("utf-8")
        if parsed.bar_values == RUNNING_BARS:
            chunk = chunk.replace(b"\r", b"\n")  # each drawing of a bar redrawn in place, a line of its own
        lines = (carry + chunk).split(b"\n")
        carry = lines.pop()
        for index, line in enumerate(lines):
            if len(line) > MAX_LINE_BYTES or (index == 0 and carry_cut):
                line = line[-MAX_LINE_BYTES:]
                cut_lines += 1
            yield line.decode("utf-8", errors="replace")
        carry_cut = (carry_cut and not lines) or len(carry) > MAX_LINE_BYTES
        carry = carry[-MAX_LINE_BYTES:]
        if read_so_far >= GIVE_UP_BYTES and not parsed.evidence:
            return  # a corpus or a dump: nothing in it so far reads as training
        if read_so_far >= MAX_FILE_BYTES:
            parsed.warn(f"only its first {MAX_FILE_BYTES >> 20} MiB read (the cap on one text log)")
            carry = b""
            break
        chunk = handle.read(min(CHUNK_BYTES, MAX_FILE_BYTES - read_so_far))
    if cut_lines:
        parsed.warn(f"{cut_lines} line(s) longer than {MAX_LINE_BYTES >> 10} KiB; only the end of each was read")
    if carry.strip(b"\r\x00 \t"):
        # a writer killed mid-line leaves it cut, perhaps mid-number ("loss 0.4" of "loss 0.4512"): the reading
        # keeps it only when it is as long as the lines of its kind before it (see _Reading.completes_its_pattern)
        parsed.unterminated = True
        yield carry.decode("utf-8", errors="replace")


def read_line(text: str, state: _Reading) -> Line | None:
    """What one line of the log says, or None when it names no number."""
    if not text.isascii():
        text = _in_english(text)
    if "\r" in text or "\b" in text:
        text = _last_drawn(text)
    if " - " in text:
        text = LOGURU_LOCATION.sub(" - ", text, count=1)
    if text[:3] in FENCES and (fenced := FENCED_NUMBER.fullmatch(text)) is not None:
        if state.fenced_epochs is None:
            # under "**** EPOCH 003 ****" (PointNet's own log) a fenced "----0-----" numbers the epoch's data
            # files: epochs only in a log that named none before its first fenced number
            state.fenced_epochs = not state.started
        if state.fenced_epochs:
            text = f"Epoch {fenced['n']}"
    # a prefix starts with its timestamp, or with its level (LEVEL_FIRST_PREFIX): the first character decides for
    # nearly every line, at no cost
    prefix = None
    if (text[:1].isdigit() or text.startswith("[")) and any(level in text for level in LOGGING_LEVELS):
        prefix = LOGGING_PREFIX.match(text)
    elif text.startswith(LOGGING_LEVELS):
        prefix = LEVEL_FIRST_PREFIX.match(text) or DEFAULT_LOGGING_PREFIX.match(text)
    if prefix is None and (text[:1].isdigit() or text.startswith("[")):
        prefix = TIMESTAMP_PREFIX.match(text)
    if prefix is None and text[:1] in GLOG_LEVELS and text[1:2].isdigit():
        prefix = GLOG_PREFIX.match(text)
    if prefix is not None:
        text = text[prefix.end():]
        if ".py:" in text and (where := SOURCE_LOCATION.match(text)) is not None:
            text = text[where.end():]
    if "' reached " in text or "' was not in top " in text:
        text = CHECKPOINT_MESSAGE.sub(_monitored_value, text, count=1)
    if "_copypaste:" in text:
        text = MMDETECTION_COPYPASTE.sub("", text)
    if text.startswith(TRAINER_RESULT):
        # the Trainer's end-of-training summary as train() returns it, printed or shown by a notebook: totals, not
        # a point of any curve, but the end of a run
        state.parsed.ends.append(len(state.parsed.placed) - 1)
        return None
    if text.startswith(PADDLE_EVALUATION):
        text = "eval: " + text[len(PADDLE_EVALUATION):]
    elif text.startswith("[") and (paddleclas := PADDLECLAS_EVALUATION.match(text)) is not None:
        text = f"{paddleclas['split']}: [{paddleclas['batch'] or '1/1'}] {text[paddleclas.end():]}"
    if text.startswith("[") and (process := RANK_PREFIX.match(text)) is not None:
        text = text[process.end():]
    if "#" in text:
        text = COUNTER_NUMBER_SIGN.sub(r"\1 ", text)
    if (glued := GLUED_AFTER_COUNTER.match(text)) is not None:
        text = f"{glued['counter']} {text[glued.end('counter'):]}"
    if "op " in text and (" acc" in text or " err" in text):
        text = TOP_K_SPACED.sub(r"\g<top>\g<k>_\g<measure>", text)
    if (" at " in text or " in " in text or " after " in text or " for " in text or " @ " in text) and (
            named_first := NAME_AT_COUNTER.match(text)) is not None:
        inner = f"{named_first['inner']} {named_first['inner_n']} " if named_first["inner"] else ""
        text = (f"{named_first['counter']} {named_first['n']} {inner}{named_first['name']}: "
                f"{text[named_first.end():]}")
    if (opening := OPENING_COUNTER.match(text)) is not None:
        if opening["word"]:
            counter = f"{opening['word']} {opening['n'] or opening['bracketed']}"
        elif opening["tutorial_epoch"]:
            counter = f"epoch {opening['tutorial_epoch']} batch {opening['tutorial_batch']} "
        elif opening["train"]:
            counter = f"{opening['train']} step {opening['train_step']}/{opening['train_steps']} "
        elif opening["swin_epoch"]:
            counter = (f"epoch {opening['swin_epoch']}/{opening['swin_total']} "
                       f"batch {opening['swin_batch']}/{opening['swin_batches']} ")
        elif opening["monai_batch"]:
            counter = f"batch {opening['monai_batch']}/{opening['monai_batches']} "
        else:
            batch = f" batch {opening['batch']}/{opening['batches']}" if opening["batch"] else " "
            counter = f"epoch {opening['epoch']}/{opening['total']}{batch}"
        text = counter + text[opening.end():]
    batch_of_pass = EVALUATION_PASS.match(text) if "[" in text else None
    if batch_of_pass is not None and batch_of_pass["split"].lower() not in EVALUATION_WORDS:
        batch_of_pass = None  # "Train: [ 3/100]": no held-out pass
    elif batch_of_pass is not None:
        # one batch of the pass: what counts is the running average over the batches so far, as its last line and the
        # summary after it (" * Acc@1 62.624 Acc@5 85.638", names of the pass) give it, at the training step before
        state.evaluation = batch_of_pass["split"].lower()
        text = WITH_RUNNING_AVERAGE.sub(r"\g<average>", text[batch_of_pass.end():])
    if "[" in text and "/" in text:
        text = BRACKETED_COUNT.sub(r" \1/\2", text)
    writer_line = _writer_line(text, state)
    if not isinstance(writer_line, str):
        return writer_line
    text = writer_line
    if text.startswith("=") and LOSS_LOG_HEADER.match(text):
        return None
    description = ""  # a progress bar's label: it may say which epoch, its numbers are no values
    if "%|" in text or "it [" in text:
        text, description = _without_tqdm_bars(text, state.parsed)
        # the last word of a name says whether it measures something ("Train loss 0.965", "top-1 accuracy 0.54")
        if any(state.names_a_metric(match["key"])
               for match in itertools.islice(PAIR.finditer(description), MAX_PAIRS_PER_LINE)):
            # set_description(f"Train Epoch {e} Train loss {loss}"): the bar's label holds the values
            text, description = f"{description.rstrip().rstrip(':')} {text}", ""
    if KERAS_ETA in text:
        # Keras prints an ETA only while the epoch runs: running averages, even where the bar was overwritten
        # (a captured console that glued "Epoch 9/10" onto an old bar); the epoch's summary line has none
        state.parsed.per_batch_lines += 1
        return None
    keras = KERAS_BAR.match(text)
    if keras:
        if keras["n"] != keras["total"]:
            state.parsed.per_batch_lines += 1
            return None
        text = text[keras.end():]
    if "(" in text:
        if "):" in text:
            text = GLUED_QUALIFIER.sub(r"_\g<qualifier>", text)
        if "/" in text:
            text = SPLIT_PAIRED.sub(_each_split_its_value, text)
        if ")" in text:
            text = NAMING_ABBREVIATION.sub(r" \g<abbreviation>", QUALIFIER_NUMBER.sub("", text))
            if " (" in text:
                text = QUALIFIED_MEASURE.sub(_qualified_measure, text)
    line = Line(running=batch_of_pass is not None)
    losses = LOSS_LOG_PREFIX.match(text) if text.startswith("(") else None
    if losses:
        line.epoch, line.step = float(losses["epoch"]), float(losses["iters"])
        line.step_total = float(losses["total"]) if losses["total"] else None
        text = text[losses.end():]
    for match in itertools.islice(PAIR.finditer(description), MAX_PAIRS_PER_LINE):
        name = _name(_key_phrase(description, match, 0))
        if name is not None and name.x_kind:
            _place(line, name.x_kind, match)
    spans, names = [], []
    if "|" in text:
        counter = SPLIT_COUNTER.search(text)
        if counter is not None and counter["split"].lower() in SPLIT_WORDS:
            line.epoch, line.epoch_total = float(counter["n"]), float(counter["total"])
            spans.append((counter.start("n"), counter.end("total")))  # the split's name still says the line's split
    # every match ends in a "{": the search needs to go no further than the last one
    settings = SETTINGS_DICT.search(text, 0, text.rfind("{") + 1) if "{" in text else None
    if settings is None and "Namespace(" in text:
        settings = ARGPARSE_NAMESPACE.search(text)
    if settings is None and "-" in text[:40]:
        settings = CONFIG_TREE.match(text)  # a configuration printed as a tree: settings, even its "iter 250000"
    first_value = None  # where the first value's name starts
    previous_end = 0
    last_named = None
    split = None  # the split the last name that named one said: "| Val Loss: 8.7 | Token Acc: 0.07" is val's
    headings = None  # where splits head groups of names, looked for once a name comes again (see _split_headings)
    measure = None  # what the split names after a measure's heading measure (see _measure_heading)
    named_at: list[int] = []  # where each of ``names`` starts in the line
    reported = None  # the evaluation split every name so far said: "Test Average loss: 0.000, Accuracy: …" is test's
    may_quote = "'" in text or '"' in text
    # substrings first: the regex runs only on the few lines that may announce a save, a best or an improvement,
    # as logs print those words (lower case, or capitalised: "Saved", "Best"; not all in capitals)
    announced = SAVE_ANNOUNCED.search(text) if ("ave" in text or "est" in text or "mprov" in text) else None
    quoted = None  # the line's quoted texts, found where a pair may lie in one
    for match in itertools.islice(PAIR.finditer(text), MAX_PAIRS_PER_LINE):
        key = _key_phrase(text, match, previous_end)
        gap_start, previous_end = previous_end, match.end()
        name = _name(key)
        if name is None:
            continue
        if name.x_kind == "count" and last_named is not None:
            name = replace(name, x_kind=None)  # a count after values counts something else, no step of the line
        if not name.x_kind and announced is not None and announced.start() < match.start():
            continue
        if may_quote and text[match.end("key")] not in ("'", '"'):  # a dict's 'loss': 0.41 is outside its quotes
            quoted = quoted or _quoted_texts(text)
            if _within(match.start("value"), quoted):
                continue
        if " " in key and not name.x_kind and not match["separator"].strip() and not state.names_a_metric(name.tag):
            continue  # words, then a number after a space: a sentence ("Archibald eats 1 apple", "There are 12")
        last_named = match
        if name.x_kind and settings is None:
            # only the x's own word is taken: the words before it may name the split ("validation loss at
            # iteration 300 | lm loss value: 5.91", Megatron's evaluation line)
            spans.append((match.start(), match.end()))
            _place(line, name.x_kind, match)
            if name.x_kind == "epoch":
                line.epoch_as_setting = bool(match["separator"].strip()) and not match["total"]
            continue
        spans.append((match.start() - len(key) + len(match["key"]), match.end()))
        if (headings is None and name.tag in line.values and not name.names_split and reported is None
                and settings is None):
            headings = _split_headings(text)
            _name_under_headings(line, names, named_at, headings)
        if headings and not name.names_split and (heading := _heading_before(headings, spans[-1][0])):
            name = _name(f"{heading}_{name.tag}")
        if match["counted"]:
            if name.split_word and settings is None:
                # "train (517 sec): … loss=1.609 | valid (3 sec): … loss=1.610": a split timed heads the names after
                # it, which say no split of their own
                split = name.split
            continue
        if match["total"] and not name.accuracy and not name.split_word and match["value"].isdigit():
            continue  # "i=92/530", "sample 5/20": a loop's progress out of its length, no measurement
        if name.split_word and match["value"].isdigit():
            if SPLIT_EPOCH.match(text, match.end()):
                _place(line, "epoch", match)  # timm's "Train: 3 [  50/1251 (4%)]": the split's epoch, then its batch
            continue  # else "Train=3667 | Val=786": the split's size; a split's bare loss has decimals (nanoGPT)
        if name.split_word or name.names_split:
            measure = _measure_heading(text[gap_start:match.start()]) or (
                measure if name.split_word else _measure_beside_split(name))
        if name.split_word and measure is not None:
            name = _name(f"{name.tag}_{measure}")  # "Loss: train=0.52 val=0.61 Acc: train=0.81 val=0.77"
        if name.split is not None and settings is None:  # a settings dict's names say no split of the line
            split = name.split
            evaluated = name.split in EVALUATION_WORDS and not name.split_word
            reported = name.split if evaluated and (not names or reported == name.split) else None
        elif reported is not None:
            name = _name(f"{reported}_{name.tag}")
        elif name.tag in line.values and split is not None:
            name = _name(f"{split}_{name.tag}")  # a name said again after another split's: that split's
        elif split in EVALUATION_WORDS and settings is None and name.scores:
            # "Train loss: 0.43 | Val loss: 0.38 | AUROC: 0.92": a line reports its splits in turn, so a score that
            # names none, printed after the validation loss, is the validation's (train scores come before it)
            name = _name(f"{split}_{name.tag}")
        if name is not None and name.tag not in line.values:
            listed = text[match.end("separator")] == "[" and _per_class_mean(text, match, name)
            line.values[name.tag] = listed if listed is not False else _value(match, name)
            names.append(name)
            named_at.append(spans[-1][0])
            if first_value is None:
                first_value = spans[-1][0]
    if last_named is not None:
        line.last_number = last_named["value"]
    if settings is not None:
        line.settings = True
        return line if line.values else None
    if line.epoch is None and line.step is None and first_value is not None and "[" in text:
        step = BRACKETED_STEP.search(text, 0, first_value)
        if step is not None:
            line.step = float(step["n"])
    if line.epoch is None and line.step is None and "(train)" in text:
        _place_training_loop(line, text)
    if line.epoch is not None and line.step is None:
        _step_within_epoch(line, text, spans)
    if names:
        if SUMMARY_KEYS & line.values.keys():
            # the Trainer's end-of-training summary: totals, not a point of any curve, but the end of a run
            state.parsed.ends.append(len(state.parsed.placed) - 1)
            return None
        # a line without a step of its own under an evaluation heading reports that evaluation; one whose first name
        # says the training split ("Train. Total Loss: 1.60, Rec.: 1.46, KL: 0.14, AUC: 50.42%") reports training
        heading = None
        if line.epoch is None and line.step is None:
            # (not in the settings printed before training: a logger named "train" prefixes them, "train:   lr: 0.003")
            says_train = (names[0].split == "train" and not names[0].split_word) or (
                state.started and _opened_by_training(text, spans))
            heading = state.evaluation or ("train" if says_train else None)
        _name_splits(line, names, text, spans, heading)
    if not line.values and line.epoch is None and line.step is None:
        return None
    if not line.values:
        line.section = _split_named(text)
    if losses:
        state.parsed.loss_tags.update(line.values)
    elif "osses" in text and (group := LOSSES_GROUP.search(text)) is not None:
        # "[Losses: x 0.27, y 0.25, w 4.8, …, total 15.1, recall: 0.0]" (PyTorch-YOLOv3): the names the heading
        # covers are losses, but for those that name a measure of their own
        state.parsed.loss_tags.update(tag for tag in line.values
                                      if infer_role(tag) == Role.OTHER and text.find(tag, group.end()) >= 0)
    return line


def _qualified_measure(match: re.Match) -> str:
    """``f1-score (micro avg)`` as the one name ``f1-score_micro_avg`` when its first word names a loss or a score;
    the text as it was otherwise (a word in brackets is a part of the line's text: "500 (iteration) 30000")."""
    name = _name(match["name"])
    if name is None or name.x_kind or not (name.names_loss or name.scores):
        return match.group()
    return f"{match['name']}_{match['words'].replace(' ', '_')}"


def _measure_heading(gap: str) -> str | None:
    """The measure a heading right before a split's name names (``Acc:`` in ``Loss: train=0.52 val=0.61 Acc:
    train=0.81 val=0.77``): the splits' bare values after it are its values, not the loss a split's bare value
    otherwise is (nanoGPT's ``train 2.01 val 2.05``), which would read the accuracies as losses and, the names said
    again, drop one group."""
    heading = MEASURE_HEADING.search(gap) if ":" in gap or "=" in gap else None
    if heading is None:
        return None
    name = _name(heading["word"])
    measures = name is not None and not name.x_kind and not name.names_split and (name.names_loss or name.scores)
    return name.tag.lower() if measures else None


_MEASURES_BESIDE_SPLITS: dict[str, str | None] = {}


def _measure_beside_split(name: Name) -> str | None:
    """What a name that says its split as well measures, its other words (``loss train`` → loss): a split's bare
    value after it measures the same (litgpt's ``loss train: 2.29, val: 2.45``), when it is a loss or a score. Once
    per name, as most lines of most logs name a split (``train_loss``)."""
    try:
        return _MEASURES_BESIDE_SPLITS[name.tag]
    except KeyError:
        pass
    measured = "_".join(word for word in tokens(name.tag) if word not in SPLIT_WORDS)
    named = _name(measured) if measured else None
    found = measured if named is not None and not named.x_kind and (named.names_loss or named.scores) else None
    if len(_MEASURES_BESIDE_SPLITS) < MAX_CACHED:
        _MEASURES_BESIDE_SPLITS[name.tag] = found
    return found


def _split_headings(text: str) -> list[tuple[int, str]]:
    """Where the line prints a split's name as a heading over the names after it, with no number of its own
    (``Train(loss=0.61, acc=0.70) Valid(loss=0.66, acc=0.64)``, ``train: loss=… val: loss=…``, ``- Training -
    loss: …``), each with its split in lower case; empty unless two splits head groups: only then does a name
    printed again not say by itself which split it measures, and the line's one split word no longer says it for
    all of them (the first group would be read as the second's)."""
    headings = [(match.start(), match.group().lower()) for match in SPLIT_WORD.finditer(text)
                if not SPLIT_HEADING_VALUE.match(text, match.end())]
    return headings if len({heading for _, heading in headings}) >= 2 else []


def _heading_before(headings: list[tuple[int, str]], position: int) -> str | None:
    """The split of the last heading before ``position``, if any."""
    before = [heading for start, heading in headings if start < position]
    return before[-1] if before else None


def _name_under_headings(line: Line, names: list[Name], named_at: list[int], headings: list[tuple[int, str]]) -> None:
    """Renames the values read so far that say no split to the split heading them (see :func:`_split_headings`)."""
    for index, (name, start) in enumerate(zip(names, named_at)):
        heading = _heading_before(headings, start)
        if name.names_split or heading is None:
            continue
        headed = _name(f"{heading}_{name.tag}")
        if headed is not None and headed.tag not in line.values:
            line.values[headed.tag] = line.values.pop(name.tag)
            names[index] = headed


def _coco_summary(line: re.Match) -> str | None:
    """A precision line of pycocotools' summary as the name Detectron2 gives its measure and the value; no point of
    a recall line or of a -1."""
    if line["measure"] == "AR" or float(line["value"]) < 0:
        return None
    if line["area"] != "all":
        name = "AP" + COCO_AREAS[line["area"]]
    else:
        name = {"0.50:0.95": "AP", "0.50": "AP50", "0.75": "AP75"}.get(line["iou"], f"AP{line['iou']}")
    return f"{name}: {line['value']}"


def _writer_line(text: str, state: _Reading) -> Line | str | None:
    """A line of a writer whose layout name/value pairs do not read: Darknet's iteration and ``-map`` lines and
    pycocotools' average precisions, as the pairs they mean (a text); a DeepXDE or YOLOv5 ``results.txt`` table row,
    as its point (a Line); a line that holds no point (None: Darknet's per-class AP, pycocotools' recall lines and its
    -1 of no objects, DeepXDE's ``Best model at step N:`` summary and the lines under it). Any other line comes back
    as it was. Each test looks at a substring or a first character before a pattern."""
    if " avg" in text and (darknet := DARKNET_ITERATION.match(text)) is not None:
        return (f"iteration {darknet['iteration']}: loss {darknet['loss']}, avg_loss {darknet['average']}, "
                f"lr {darknet['rate']}")
    if text.startswith(("mean average", " mean average")) and (darknet := DARKNET_MAP.match(text)) is not None:
        return f"val_mAP{darknet['iou']} {darknet['map']}"
    if text.startswith("class_id = "):
        return None  # the evaluation's breakdown, a class a line: one class's AP is no score of the run
    if "; FB1:" in text or " phrases; correct: " in text:
        return _conlleval_line(text, state)
    if state.split_columns is not None and "|" in text:
        if (row := SPLIT_COLUMN_ROW.search(text)) is None:
            state.split_columns = None
        else:
            return " ".join(f"{split}_{row['name']}: {row[place]}"
                            for split, place in zip(state.split_columns, ("first", "second"), strict=True)
                            if row[place] != "N/A")
    if text.startswith("[") and "'s " in text:
        return POSSESSIVE_NAME.sub("_", text)
    if text[:1].isdigit() and ":\tlearn: " in text and (catboost := CATBOOST_ROW.match(text)) is not None:
        test = f" test_loss: {catboost['test']}" if catboost["test"] else ""
        return f"iteration {catboost['n']}: train_loss: {catboost['learn']}{test}"
    if text.startswith("steps: ") and DEEPSPEED_STEPS.match(text):
        return "step: " + text[len("steps: "):]
    if text.startswith(ESTIMATOR_EVALUATION):
        # a TF Estimator's evaluate() result: "Saving dict for global step 1000: accuracy = 0.97, loss = 0.06"
        return f"eval step {text[len(ESTIMATOR_EVALUATION):]}"
    if "maxDets" in text and (coco := COCO_SUMMARY.match(text)) is not None:
        return _coco_summary(coco)
    if text.count("[") == 3 and (table_row := DEEPXDE_ROW.match(text)) is not None:
        return _deepxde_row(table_row)
    if (text[:1].isdigit() or text[:1] == " ") and (yolo := yolo_results_row(text)) is not None:
        return yolo
    if text.startswith("Best model at step "):
        state.best_summary = True
        return None
    if state.best_summary:
        if text.startswith("  "):
            return None
        state.best_summary = False
    return text


def _conlleval_line(text: str, state: _Reading) -> str | None:
    """A line of the CoNLL shared task's ``conlleval`` summary, which named-entity taggers print after each
    evaluation: its totals as the pairs of the split the heading before it named ("evaluate:dev", else validation:
    conlleval scores a tagged evaluation file); the count of tokens and phrases and each entity type's breakdown
    are no scores of the run."""
    overall = CONLLEVAL_OVERALL.match(text)
    if overall is not None:
        return " ".join(f"{state.conlleval_split}_{name}: {overall[name]}"
                        for name in ("accuracy", "precision", "recall", "FB1"))
    if CONLLEVAL_COUNTS.match(text):
        # conlleval's output opens with its counts: the heading printed right before it says which split it scores
        named = _last_split_named(state.heading)
        state.conlleval_split = named if named in EVALUATION_WORDS else "val"
        return None
    return None if CONLLEVAL_TYPE.match(text) else text


def _opened_by_training(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the only word before the line's first name is the training split's, as a label of the line
    (``  Train — Acc: 0.6222  F1: 0.6129`` under ``Epoch 001/60 | Loss: 1.19``; its ``Test — Acc: …`` after
    it)."""
    words = re.findall(r"[A-Za-z]+", text[:min(start for start, _ in spans)]) if spans else []
    return len(words) == 1 and words[0].lower() in SPLIT_WORDS - EVALUATION_WORDS


def _last_split_named(text: str) -> str | None:
    """The split a line names last, as a word of its own: the data split after the verb ("evaluate:test")."""
    named = SPLIT_WORD.findall(text)
    return named[-1].lower() if named else None


def _split_named(text: str) -> str | None:
    """The split a heading names first ("training epoch 1", "validate epoch 1"), lower-cased as printed, if any: as a
    word of its own, not within a name (``batch_eval: 512``, a logging prefix's ``train.py:244``)."""
    named = SPLIT_WORD.search(text)
    return named.group().lower() if named is not None else None


def _deepxde_row(row: re.Match) -> Line | None:
    """A DeepXDE table row's point: the train and test losses (the sums of their terms, which the optimiser
    minimised), each term when there are several (``train_loss_1`` …, in DeepXDE's order), and the test metrics."""
    line = Line(step=float(row["step"]))
    for split in ("train", "test"):
        terms = _listed_numbers(row[split])
        if terms:
            line.values[f"{split}_loss"] = math.fsum(terms)
        if len(terms) > 1:
            line.values.update({f"{split}_loss_{index}": value for index, value in enumerate(terms, start=1)})
    metrics = _listed_numbers(row["metric"])
    line.values.update({"test_metric" if len(metrics) == 1 else f"test_metric_{index}": value
                        for index, value in enumerate(metrics, start=1)})
    return line if line.values else None


def yolo_results_row(text: str) -> Line | None:
    """A YOLOv5/YOLOv3 results.txt row's point at its epoch (see YOLO_RESULTS_ROW), or None when the line is none:
    another start, another number of columns, or a cell that is no number."""
    if (row := YOLO_RESULTS_ROW.match(text)) is None:
        return None
    cells = text.split()
    if len(cells) != YOLO_RESULTS_CELLS or not all(VALUE_CELL.fullmatch(cell) for cell in cells[2:]):
        return None
    return Line(epoch=float(row["epoch"]), epoch_total=float(row["last"]) + 1,
                values={name: _number(cells[column]) for column, name in YOLO_RESULTS_COLUMNS.items()})


def _listed_numbers(listed: str) -> list[float]:
    cells = [cell.strip() for cell in listed.split(",") if cell.strip()]
    return [_number(cell) for cell in cells] if all(VALUE_CELL.fullmatch(cell) for cell in cells) else []


def _each_split_its_value(match: re.Match) -> str:
    """``Loss (train/val): 0.92/0.68`` as the pairs it means, ``train Loss: 0.92 | val Loss: 0.68``, when both words
    name splits; else the text as it was."""
    if not {match["first"].lower(), match["second"].lower()} <= SPLIT_WORDS:
        return match[0]
    return f"{match['first']} {match['name']}: {match['x']} | {match['second']} {match['name']}: {match['y']}"


def _in_english(text: str) -> str:
    """A line whose metric names are written in Chinese (``训练损失: 1.5476, 训练准确率: 36.46%``, ``第 3 轮``) in the
    words the rest of the reader knows (``train loss: 1.5476, train acc: 36.46%``, ``epoch 3``); full-width
    punctuation as its ASCII; accented letters without their accents, and the words of other languages that name
    a measurement (``Época``, ``pérdida``) in English (see ``roles.in_english``). Other text is left as it is."""
    text = CJK_COUNTER.sub(lambda match: f" {CJK_COUNTERS[match['unit']]} {match['n']} ", text)
    return in_english(text.translate(FULL_WIDTH))


def _key_phrase(text: str, match: re.Match, previous_end: int) -> str:
    """The name of a pair: its last word with up to three words right before it (``train loss``, ``Test set`` …),
    never reaching into the pair before."""
    start = match.start()
    if start < 2 or text[start - 1] != " " or not (text[start - 2].isalnum() or text[start - 2] in "_.-/@"):
        return match["key"]  # no word right before it (", loss", ": loss"): the common case, decided without a search
    words = KEY_WORDS.search(text, max(previous_end, start - KEY_WORDS_REACH), start)
    return words.group() + match["key"] if words else match["key"]


def _quoted_texts(text: str) -> tuple[list[int], list[int]]:
    """Where the line's quoted texts start and end (see QUOTED), in order."""
    starts, ends = [], []
    for match in QUOTED.finditer(text):
        if not QUOTED_NUMBER.fullmatch(text, match.start() + 1, match.end() - 1):
            starts.append(match.start())
            ends.append(match.end())
    return starts, ends


def _within(position: int, spans: tuple[list[int], list[int]]) -> bool:
    starts, ends = spans
    index = bisect.bisect_right(starts, position) - 1
    return index >= 0 and position < ends[index]


def _with_records_drawn_over(lines: Iterator[str]) -> Iterator[str]:
    """Each line, after the whole records drawn over within it: a Hugging Face Trainer prints its log dict
    (``{'loss': 0.75, …}``) and tqdm then redraws its bar with ``\\r`` on the same line, so the dict is no longer
    what the line shows last, yet it is a record, not a step of the redrawn progress."""
    for text in lines:
        if "\r" in text and "{" in text:
            segments = [segment.strip() for segment in _drawn_segments(text)[:-1]]
            yield from (segment for segment in segments if segment[:1] == "{" and segment[-1:] == "}")
        yield text


def _monitored_value(match: re.Match) -> str:
    """A checkpoint message as the value it reports (``val_loss: 0.15583``), or nothing when it reports none."""
    return f"{match['name']}: {match['value']}" if match["value"] else ""


def _with_bars_finished_before_redrawn(lines: Iterator[str]) -> Iterator[str]:
    """Each line, after every bar that finished within it and was then drawn over by a bar of another description:
    Lightning draws "Epoch 0: 100%" again once validation is done, with the epoch's validation scores, and starts
    "Epoch 1: 0%" on the same line, which shows those values until epoch 1's own arrive. Read off each line's last
    bar alone, every epoch's values would be the epoch's before; read so, the bar drawn last for an epoch gives it
    its values."""
    for text in lines:
        if "\r" in text:
            segments = _drawn_segments(text)
            bars = [TQDM_BAR.search(segment) for segment in segments]
            described = [segment[:bar.start()] if bar else None for segment, bar in zip(segments, bars, strict=True)]
            for index in range(len(segments) - 1):
                bar = bars[index]
                if bar is not None and bar["n"] == bar["total"] and described[index + 1] != described[index]:
                    yield segments[index]
        yield text


def _last_drawn(text: str) -> str:
    """Of a line redrawn in place (``\\r``, backspaces), the last text drawn that is not blank."""
    segments = _drawn_segments(text)
    return segments[-1] if segments else ""


def _drawn_segments(text: str) -> list[str]:
    """The texts a line redrawn in place (``\\r``, backspaces) drew one over another, in drawing order, blank ones
    left out."""
    return [segment for segment in text.replace("\b", "").split("\r") if segment.strip()]


def _without_tqdm_bars(text: str, parsed: Parsed) -> tuple[str, str]:
    """What follows the line's last tqdm bar, and the text before its first bar (the bar's description). The values
    a bar shows after its rate (``set_postfix``) lead what follows when ``parsed`` reads that bar's (finished, or
    any drawn at its count n, the count placed with them), and are counted when it does not. A bar drawn while its
    epoch runs shows the last evaluation's values beside the running ones (Lightning's val_loss): not read from it."""
    bars = list(TQDM_BAR.finditer(text))
    if not bars:
        return text, ""
    after = text[bars[-1].end():]
    last = bars[-1]
    if last["inside"] and (postfix := TQDM_POSTFIX.search(last["inside"])):
        finished = last["n"] == last["total"]
        if parsed.bar_values == RUNNING_BARS and (last["n"] or "").isdigit():
            training = ", ".join(item for item in LOGGER_VERSION.sub("", postfix["postfix"]).split(",")
                                 if EVALUATION_CONTEXT.search(item) is None)
            after = f"step {last['n']}{'/' + last['total'] if last['total'].isdigit() else ''} {training} {after}"
        elif parsed.bar_values == FINISHED_BARS and finished:
            after = f"{LOGGER_VERSION.sub('', postfix['postfix'])} {after}"
        elif parsed.bar_values is None:
            parsed.running_bar_postfixes += 1
            parsed.bar_postfixes += finished
    return after, text[:bars[0].start()]


def _place(line: Line, kind: str, match: re.Match) -> None:
    """Takes ``match`` as the line's epoch, or as its step unless a finer step key already gave one."""
    if match["value"][-1:].isalpha():
        return  # "epoch nan" places nothing
    number = _number(match["value"])
    if kind == "epoch":
        # an epoch may be scaled by up to 10,000 to make it whole: beyond that it is garbage, not an epoch
        if line.epoch is None and abs(number) * 10_000 < STEP_LIMIT:
            line.epoch = number
            line.epoch_total = float(match["total"]) if match["total"] else None
        return
    rank = STEP_KEYS.index(kind)
    if rank < line.step_rank and number == round(number) and abs(number) < STEP_LIMIT:
        line.step, line.step_rank = number, rank
        line.step_total = float(match["total"]) if match["total"] else None


@dataclass(frozen=True)
class Name:
    """What a key phrase names, worked out once per phrase: the tag, or the x it places its line at."""

    tag: str
    x_kind: str | None  # "epoch" or the step key it stands for: ``Train Epoch`` → epoch, ``global step`` → global_step
    split_word: bool  # a split's name alone: ``train``, ``val``
    split: str | None  # the split the name says (``Val_Loss`` → val), if any
    names_loss: bool
    accuracy: bool

    @property
    def names_split(self) -> bool:
        return self.split is not None

    @cached_property
    def scores(self) -> bool:
        """Whether the name measures how well the model does (an accuracy, an AUROC, an F1), not a loss or a
        setting; once per phrase, as the names are kept (see :func:`_name`)."""
        return self.accuracy or infer_role(self.tag) in (Role.SCORE, Role.TRAIN_ACC)


_NAMES: dict[str, Name | None] = {}


def _name(key: str) -> Name | None:
    """The name a key phrase gives: its words after its last function word (``saving model at epoch`` → epoch),
    joined by ``_``; None when nothing is left or it names a source line (``train.py:88``)."""
    try:
        return _NAMES[key]
    except KeyError:
        pass
    words = key.split(" ")
    stated = len(words) > 1 and words[-1].lower() in COPULAS
    if stated:
        words = words[:-1]  # "Val acc is 86.0%": named by what comes before the verb
    # a source file before the name is the logging format's %(filename)s ("train.py step     0 | loss: …"), which
    # names where the line was written, not what it measures
    words = [word for word in words[:-1] if not SOURCE_FILE.search(word)] + words[-1:]
    last_function_word = max((i for i, word in enumerate(words) if word.lower() in FUNCTION_WORDS), default=-1)
    tag = "_".join(words[last_function_word + 1:]).rstrip(".-/")
    saved = not SAVE_WORDS.isdisjoint(word.lower() for word in words[:max(last_function_word, 0)])
    name = None
    if tag and not SOURCE_FILE.search(tag):
        x_kind = None if stated else _x_kind(tag)  # a sentence states no x: "It is 400 feet" is no iteration
        ordered = tokens(tag)
        words = set(ordered)
        # "saving model at epoch 3" still says where it is; a best value so far ("Best val_acc=1.0000",
        # best_loss, the Swin Transformer's "Max accuracy: 81.20%") restates a curve's extreme, and a change
        # reported ("Validation loss decreased (inf --> 0.693147). Saving model ...", the early-stopping helper's
        # line) a curve's step: they measure nothing new
        best = RUNNING_BEST in words or not (MAXIMUM_WORDS.isdisjoint(words) or ACCURACY_WORDS.isdisjoint(words))
        if x_kind or not (saved or best or not CHANGE_WORDS.isdisjoint(words)):
            name = Name(tag, x_kind, tag.lower() in SPLIT_WORDS,
                        next((w for w in ordered if w in SPLIT_WORDS), None), "loss" in words,
                        bool(words & ACCURACY_WORDS))
    if len(_NAMES) < MAX_CACHED:
        _NAMES[key] = name
    return name


def _x_kind(tag: str) -> str | None:
    """"epoch" or the step key a name stands for: ``Train Epoch`` → epoch, ``global step`` → global_step."""
    lowered = [word for word in re.split(r"[_\-/.]+", tag.lower()) if word]
    if len(lowered) > 1 and lowered[-1] in ORDINAL_WORDS:
        lowered.pop()
    core = [word for word in lowered if word not in X_QUALIFIERS]
    if "_".join(lowered) in STEP_KEYS:  # num_updates, global_step
        return "_".join(lowered)
    if "_".join(core) in STEP_KEYS:  # said with its split: fairseq's valid_num_updates, SB3's "Eval num_timesteps"
        return "_".join(core)
    if len(core) == 1 and core[0] in EPOCH_KEYS:
        return "epoch"
    if len(core) == 1 and core[0] in STEP_KEYS:
        return "global_step" if core[0] == "step" and "global" in lowered else core[0]
    if len(core) == 2 and core[1] == "step" and core[0] in ("iteration", "iter"):
        return "step"  # "Epoch: 0/50, Iteration step: 1300, loss: 5.22": the optimiser's step
    return None


def _number(text: str) -> float:
    if text[-1:].isalpha():
        if "nan" in text.lower():
            return math.nan
        return -math.inf if text.startswith("-") else math.inf
    return float(text.replace(",", ""))


def _value(match: re.Match, name: Name) -> float:
    value = _number(match["value"])
    total = match["total"]
    if total and name.accuracy and int(total) > 0:
        return value / int(total)  # "Accuracy: 9887/10000": correct out of total
    return value


def _per_class_mean(text: str, match: re.Match, name: Name) -> float | bool:
    """The mean of a list of overlap scores printed after their name, one a class (nnU-Net's ``Pseudo dice
    [np.float32(0.91), np.float32(0.87), …]``; per-class IoU): the mean Dice or mIoU such a run tracks, a class
    without a case (NaN) left out as nnU-Net does. False for any other list, whose elements mean different things
    (DETR's ``"test_coco_eval_bbox": [AP, AP50, …]``: its first is the one read)."""
    if OVERLAP_WORDS.isdisjoint(tokens(name.tag)):
        return False
    end = text.find("]", match.start("value"))
    cells = text[match.end("separator") + 1:end].split(",") if end > 0 else []
    found = [LISTED_CELL.fullmatch(cell) for cell in cells]
    if len(cells) < 2 or not all(found):
        return False
    values = np.array([_number(cell["value"]) for cell in found])
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if len(finite) else float(values[0])


def _in_source_file_name(text: str, position: int) -> bool:
    """Whether ``position`` lies in a source file's name (``test_utils.py``, ``eval.py:88``): a split word there
    names no split of the line."""
    return any(match.start() <= position < match.end() for match in SOURCE_FILE_WORD.finditer(text))


def _name_splits(line: Line, names: list[Name], text: str, spans: list[tuple[int, int]],
                 heading: str | None = None) -> None:
    """Names that do not say their split get it from the line (``[eval] … lr 0.1`` → ``eval_lr``), else from the
    evaluation heading the line sits under; a bare split name is that split's loss (nanoGPT's ``train 2.01 val
    2.05``) when the line names no loss otherwise, and its accuracy when the line's words name one instead (``R Sign
    Acc: Train=0.50, Val=0.50``)."""
    if all(name.names_split for name in names):
        _as_a_test_pass(line, names, text, spans)
    context = None
    if not all(name.names_split for name in names):
        context = next((match.group().lower() for match in EVALUATION_CONTEXT.finditer(text)
                        if not any(start <= match.start() < end for start, end in spans)
                        and not _in_source_file_name(text, match.start())
                        and not SPLIT_KEYED_NUMBER.match(text, match.end())), heading)
    bare_splits = any(name.split_word for name in names)
    if context is None and not bare_splits:
        return
    names_a_loss = any(name.names_loss for name in names)
    bare_kind = "loss"
    # a bare train split beside a loss printed by its name is not that loss: its splits' bare fractions or
    # percentages are accuracies (PyTorch Geometric's examples: "Epoch: 001, Loss: 1.9463, Train: 0.2786, Val:
    # 0.2440, Test: 0.2370"; OGB's "Train: 35.20%, Valid: 30.10%"). A held-out split's alone beside it may be the
    # loss's held-out side ("Loss: 0.169 | Val: 0.027") as well as an accuracy ("loss = 2.31  eval = 0.11"): unnamed
    bare_accuracies = names_a_loss and any(name.split_word and name.split == "train" for name in names)
    if not names_a_loss and bare_splits:
        words = set(tokens(text))
        if "loss" not in words and (not ACCURACY_WORDS.isdisjoint(words) or _all_in_percent(names, text)):
            bare_kind = "acc"
    renamed = {}
    for name in names:
        tag = name.tag
        if name.split_word and not names_a_loss:
            tag = f"{tag}_{bare_kind}"
        elif name.split_word and bare_accuracies and (0 <= line.values[tag] <= 1 or _all_in_percent([name], text)):
            tag = f"{tag}_acc"
        elif context and not name.names_split:
            tag = f"{context}_{tag}"
        renamed.setdefault(tag, line.values[name.tag])
    line.values = renamed


def _as_a_test_pass(line: Line, names: list[Name], text: str, spans: list[tuple[int, int]]) -> None:
    """A line whose names say validation while its own words say test reports the test split: the Trainer's
    ``evaluate()`` names what it scores ``eval_*`` whatever the data, and scripts print its result on the test
    split so (``Final test metrics: {'eval_loss': 0.117, …, 'epoch': 3.0}``), at the last validation's epoch."""
    if not all(name.split in HELD_OUT_WORDS for name in names):
        return  # the common case, told from the names alone: no scan of the line's words
    said = [match.group().lower() for match in EVALUATION_CONTEXT.finditer(text)
            if not any(start <= match.start() < end for start, end in spans)
            and not _in_source_file_name(text, match.start())]
    if not said or not set(said) <= TEST_WORDS:
        return
    renamed = {name.tag: re.sub(rf"(?i)(?<![a-z]){name.split}(?![a-z])", "test", name.tag, count=1)
               for name in names}
    line.values = {renamed.get(tag, tag): value for tag, value in line.values.items()}


def _all_in_percent(names: list[Name], text: str) -> bool:
    """Whether every bare split name's value is written as a percentage (``from Val: 50.48%, Test: 51.69%``): an
    accuracy, which a loss never is."""
    return all(re.search(rf"(?<![\w.]){re.escape(name.tag)}\W{{0,4}}{NUMBER}\s?%", text)
               for name in names if name.split_word)


def _place_training_loop(line: Line, text: str) -> None:
    """MMEngine's ``Epoch(train) [3][  50/1251]`` (epoch, then the step within it) and ``Iter(train) [ 50/40000]``.
    Its ``Epoch(val)`` lines count validation batches, not training: they stay at the training line before them."""
    match = TRAINING_LOOP.search(text)
    if match is None:
        return
    if match["kind"] == "Epoch":
        line.epoch = float(match["n"])
        if match["within"]:
            line.step, line.step_total = float(match["within"]), float(match["of"])
    else:
        line.step = float(match["n"])
        line.step_total = float(match["total"]) if match["total"] else None


def _step_within_epoch(line: Line, text: str, spans: list[tuple[int, int]]) -> None:
    """An unnamed ``640/60000`` on a line with an epoch is how far into the epoch it is (PyTorch's MNIST example).
    On an evaluation's line (Demucs' ``Valid | Epoch 1 | 2/3 | … | Loss 0.22``) it counts the evaluation's batches,
    not training's: the line stays at its epoch."""
    for match in UNNAMED_FRACTION.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            if _split_named(text[:match.start()]) not in EVALUATION_WORDS:
                line.step, line.step_total = float(match["n"]), float(match["total"])
            return


# ----------------------------------------------------------------------------------------------- the x axis

def _places_values(parsed: Parsed) -> bool:
    """Whether any line with values gave a step or an epoch."""
    return bool(np.isfinite(np.frombuffer(parsed.step, dtype=np.float64)).any()
                or np.isfinite(np.frombuffer(parsed.epoch, dtype=np.float64)).any())


def _take_printed_lists(text: str, parsed: Parsed) -> bool:
    """Keeps the metric lists of a history printed whole on this line (``{'loss': [0.9, …], 'val_loss': […]}``, or
    one list per split under the name printed before its brace: ``losses:{'train': […], 'val': […]}`` gives
    ``train_losses`` and ``val_losses``; see ``history.is_history``); whether the line held one."""
    start = text.find("{")
    end = _closing_brace(text, start) if start >= 0 else -1
    if end < 0:
        return False
    try:
        printed = printed_literal(text[start:end + 1])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not isinstance(printed, dict) or not all(isinstance(key, str) for key in printed):
        return False
    named = NAME_BEFORE_BRACE.search(text[:start])
    if named and all(split_of(tokens(key)) and not names_a_metric(key) for key in printed):
        printed = {f"{key}_{named.group(1)}": values for key, values in printed.items()}
    if not is_history(printed):
        return False  # a dict of scalars with a list among them (a Trainer's eval dict): its line is read as usual
    parsed.printed_lists.update(printed)
    return True


def _closing_brace(text: str, start: int) -> int:
    """Where the brace opened at ``start`` closes (braces inside quotes not counted), or -1."""
    depth, quote = 0, ""
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if not depth:
                return index
    return -1


def log_curves(parsed: Parsed, split_runs: bool = False) -> list[dict[str, tuple[np.ndarray, np.ndarray]]] | None:
    """Each tag's steps and values, for each run the log holds one after another when ``split_runs`` (else one),
    or None when the file is no training log (see the module's definition)."""
    if not len(parsed.placed):
        return None
    placed = np.frombuffer(parsed.placed, dtype=np.int8)
    x, own = _x_axis(parsed)
    line_order = own is None
    if not line_order:
        each_step = _printed_each_step(parsed, placed, x)
        own &= ~each_step
    run_of = np.zeros(len(x), dtype=np.int64)
    if split_runs and not line_order:
        run_of, x = _run_of_each_record(parsed, x, own)
    runs = [{} for _ in range(int(run_of.max()) + 1)]
    superseded = np.zeros(len(runs), dtype=np.int64)
    clashing = placed_values = 0
    for tag, (indexes, values) in parsed.tags.items():
        indexes = np.frombuffer(indexes, dtype=np.int64)
        values = np.frombuffer(values, dtype=np.float64)
        if line_order:
            if len(indexes) < MIN_POINTS:
                continue  # printed once or twice with no step: a setting, not a curve
        else:
            kept = each_step[indexes]
            preamble = (placed[indexes] == PREAMBLE) & ~kept
            if preamble.any() and len(parsed.settings) < MAX_SETTINGS:
                parsed.settings.setdefault(tag, float(values[np.argmax(preamble)]))
            dropped = preamble
            if not _reads_as_evaluation(tag):
                dropped = dropped | ((placed[indexes] == LOOSE) & ~kept)
            indexes, values = indexes[~dropped], values[~dropped]
            placed_values += int(np.count_nonzero(own[indexes]))
            # A line without an x of its own (printed after another) never overrides a value logged at that x in
            # its run: another run printed after it logs the same epochs again (a complex number pairs the two)
            carried = ~own[indexes]
            if carried.any():
                where = run_of[indexes] + 1j * x[indexes]
                clash = carried & np.isin(where, where[~carried])
                clashing += int(np.count_nonzero(clash))
                indexes, values = indexes[~clash], values[~clash]
            if not len(indexes):
                continue
        runs_of_tag = run_of[indexes]
        for number in np.unique(runs_of_tag[runs_of_tag >= 0]).tolist():
            curves, in_run = runs[number], runs_of_tag == number
            steps, run_values = x[indexes[in_run]].astype(np.int64), values[in_run]
            if _restates_the_best(steps, run_values):
                steps, run_values = steps[:-1], run_values[:-1]
            restarted = restart_drops(steps, np.ones(len(steps), dtype=bool), restart_on_repeat=False)
            superseded[number] += int(np.count_nonzero(restarted))
            steps, run_values = steps[~restarted], run_values[~restarted]
            # a line printed again as it was ("… loss = 1.65 -> best" after "… loss = 1.65") is one point, not two
            again = np.flatnonzero((steps[1:] == steps[:-1]) & (run_values[1:] == run_values[:-1])) + 1
            curves[tag] = np.delete(steps, again), np.delete(run_values, again)
    for curves in runs:
        _drop_restated(curves)
    parsed.superseded = [int(count) for curves, count in zip(runs, superseded, strict=True) if curves]
    settings = _settings_of_each_run(parsed, placed, x, own, None if line_order else each_step, run_of, len(runs))
    parsed.run_settings = [each for curves, each in zip(runs, settings, strict=True) if curves]
    runs = [curves for curves in runs if curves]
    enough = (
        any(names_a_metric(tag) for curves in runs for tag in curves) if line_order
        else placed_values >= MIN_POINTS
        or any(len(steps) >= MIN_POINTS and names_a_metric(tag)
               for curves in runs for tag, (steps, _) in curves.items())
    )
    if not runs or not enough:
        return None
    if clashing:
        parsed.warn(f"{clashing} value(s) printed without a step of their own where the same name was already "
                    "logged with one were not taken (an evaluation printed in a block of its own?)")
    return runs


def _restates_the_best(steps: np.ndarray, values: np.ndarray) -> bool:
    """Whether the curve's last point goes back to the step of the curve's best value (its only lowest or highest)
    and restates that value: a summary naming the best epoch ("best model: epoch: 490, test_loss: -7.03599" under
    the table of every epoch), not a session restarted there, which would replace the epochs after it. Anywhere
    else, or a value the curve reached more than once (a constant learning rate, a loss printed to three digits),
    a match may be a restart's by chance."""
    if len(steps) < 3 or not steps[-1] < steps[:-1].max():
        return False
    before, last = values[:-1], values[-1]
    best = [extreme for extreme in (before.min(), before.max()) if np.count_nonzero(before == extreme) == 1]
    return last in best and bool(steps[:-1][before == last][0] == steps[-1])


def _run_of_each_record(parsed: Parsed, x: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of the runs the log holds one after another each record is of (0, 1, …; -1: a last session that
    stopped as it began, with a warning), from the records with an x of their own (see
    ``records.runs_one_after_another``); a record without one is of the run of the record with one before it. With
    it, the x: counted on across the runs when they are one run's epochs (see :func:`_epochs_counted_on`)."""
    epoch, epoch_total = (np.frombuffer(column, dtype=np.float64) for column in (parsed.epoch, parsed.epoch_total))
    owned = np.flatnonzero(own)
    ended = epoch[owned] >= epoch_total[owned]  # NaN (no total): False
    # the Trainer's closing summary closes the run whose record with an x of its own came last before it
    closed = np.zeros(len(owned), dtype=bool)
    closed[[at for end in parsed.ends if (at := int(np.searchsorted(owned, end, side="right")) - 1) >= 0]] = True
    closed |= _model_changes_after(parsed, owned)
    run_of = run_of_each_record(x, own, ended=ended, closed=closed)
    if run_of[-1] < 0:
        parsed.warn(f"the last session started over and ended within {MIN_RUN_RECORDS - 1} record(s): a run "
                    "stopped as it began, not read")
    return _epochs_counted_on(parsed, x, run_of)


def _epochs_counted_on(parsed: Parsed, x: np.ndarray, run_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``run_of`` and ``x``, or, when each run's train loss takes up where the one before left it
    (``records.takes_up_where_it_left``), one run whose x is counted on across them: a batch index printed as the
    step, starting again every epoch with no epoch beside it."""
    tag = primary_train_loss({tag: len(indexes) for tag, (indexes, _) in parsed.tags.items()})
    if not (run_of > 0).any() or tag is None:
        return run_of, x
    indexes, values = (np.frombuffer(column, dtype=dtype) for column, dtype in zip(parsed.tags[tag],
                                                                                   (np.int64, np.float64)))
    loss = np.full(len(x), np.nan)
    loss[indexes] = values
    counted = epochs_counted_on(x, loss, run_of)
    if counted is None:
        return run_of, x
    parsed.warn(counted_on_note(int(run_of.max()), tag))
    return np.minimum(run_of, 0), counted


def _model_changes_after(parsed: Parsed, owned: np.ndarray) -> np.ndarray:
    """For each record with an x of its own, whether the model's parameter count (DETR's ``n_params``, any
    ``num_parameters``) printed with the next such record differs: a different architecture is a different run,
    never the same one resumed, however far the one before it went."""
    changes = np.zeros(len(owned), dtype=bool)
    for tag, (indexes, values) in parsed.tags.items():
        if not _names_a_parameter_count(tag):
            continue
        indexes, values = np.frombuffer(indexes, dtype=np.int64), np.frombuffer(values, dtype=np.float64)
        latest = np.searchsorted(indexes, owned, side="right") - 1
        count = np.where(latest >= 0, values[np.maximum(latest, 0)], np.nan)
        changes[:-1] |= np.isfinite(count[:-1]) & np.isfinite(count[1:]) & (count[1:] != count[:-1])
    return changes


def _names_a_parameter_count(tag: str) -> bool:
    words = tokens(tag)
    return bool(words) and words[-1] in ("params", "parameters") and set(words[:-1]) <= {"n", "num", "number", "of",
                                                                                         "total", "model"}


def _settings_of_each_run(parsed: Parsed, placed: np.ndarray, x: np.ndarray, own: np.ndarray | None,
                          each_step: np.ndarray | None, run_of: np.ndarray, count: int) -> list[dict[str, float | str]]:
    """The settings each run was started with: those printed before the log's first step (``parsed.settings``),
    and, where a run began by starting over (a new session of the log, a sweep's next configuration, a restart
    whose earlier values it replaces), the configuration printed again right before that, which each session
    echoes as its own (a 1,024-token vocabulary after a first session's 50,259): the values in the gap before the
    run's last start that were taken as no points."""
    settings = [dict(parsed.settings) for _ in range(count)]
    if own is None or each_step is None:
        return settings
    owned = np.flatnonzero(own)
    gaps = {}  # run -> (record index of the line with a step before its last start, that of the start)
    for where in (np.flatnonzero(x[owned][1:] < x[owned][:-1]) + 1).tolist():
        if (run := int(run_of[owned[where]])) >= 0:
            gaps[run] = int(owned[where - 1]), int(owned[where])
    if not gaps:
        return settings
    unplaced = ((placed == PREAMBLE) | (placed == LOOSE)) & ~each_step
    for run, (after, before) in gaps.items():
        for tag, (indexes, values) in parsed.tags.items():
            if _reads_as_evaluation(tag):
                continue
            indexes = np.frombuffer(indexes, dtype=np.int64)  # in the order the records were read
            inside = np.arange(np.searchsorted(indexes, after, side="right"), np.searchsorted(indexes, before))
            inside = inside[unplaced[indexes[inside]]]
            if len(inside):
                settings[run][tag] = float(np.frombuffer(values, dtype=np.float64)[inside[-1]])
        for position, tag, value in parsed.late_settings:
            if after < position <= before:
                settings[run][tag] = value
    return settings


def _drop_restated(curves: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """Drops a curve that restates another under the same words in another order, at the same steps with the same
    values as far as the shorter print of them goes (``Test accuracy: 0.65273`` for people and ``[100]
    accuracy_test=0.6527343988`` for a metric writer): one measurement, under the name logged first."""
    first: dict[tuple[str, ...], str] = {}
    for tag in list(curves):
        kept = first.setdefault(tuple(sorted(tokens(tag))), tag)
        if kept != tag:
            (steps, values), (kept_steps, kept_values) = curves[tag], curves[kept]
            if np.array_equal(steps, kept_steps) and np.allclose(values, kept_values, rtol=1e-4, equal_nan=True):
                del curves[tag]


def _reads_as_evaluation(tag: str, measures: Callable[[str], bool] = names_a_metric) -> bool:
    """Whether a value on a line without a step or epoch of its own, printed during training, is taken: such lines
    are mostly evaluation blocks, so only a metric that names its split is (``test_Average_loss``); a bare
    ``accuracy`` there is an evaluation's, and read as training's it would mislead."""
    return measures(tag) and not SPLIT_WORDS.isdisjoint(tokens(tag))


def _printed_each_step(parsed: Parsed, placed: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Which records are lines printed before the line of every step, without a step of their own (a dict of the
    step's statistics, then ``Step: 12 | Loss: …``): each is its step's, all its values taken, and goes to the x of
    the next line with one (in ``x``); one printed after the last is of a step that never ended. Such a kind of line
    (the same names) comes before the first line with a step or epoch of its own, at most once between two of them,
    between at least half of them up to its last, and names no evaluation split: an evaluation reports the training
    before it (see ``_reads_as_evaluation``)."""
    own_line = placed == OWN
    each_step = np.zeros(len(placed), dtype=bool)
    if not own_line.any():
        return each_step
    kind = np.frombuffer(parsed.kind, dtype=np.int64)
    before = np.cumsum(own_line) - own_line  # lines with a step or epoch of their own before each record
    others = np.flatnonzero(~own_line & (kind >= 0))
    others = others[np.argsort(kind[others], kind="stable")]
    starts = np.flatnonzero(np.diff(kind[others], prepend=-1))
    names = {index: kind_names for kind_names, index in parsed.kinds.items()}
    for records in np.split(others, starts[1:]):
        seen = before[records]
        if (len(records) < MIN_POINTS or seen[0] or not np.all(np.diff(seen)) or 2 * len(records) <= seen[-1]
                or any(not EVALUATION_WORDS.isdisjoint(tokens(tag)) for tag in names[kind[records[0]]])):
            continue
        each_step[records] = True
    each_step &= before < np.count_nonzero(own_line)
    if each_step.any():
        own_lines = np.flatnonzero(own_line)
        next_own = np.searchsorted(own_lines, np.flatnonzero(each_step))
        x[each_step] = x[own_lines[np.minimum(next_own, len(own_lines) - 1)]]
    return each_step


def _x_axis(parsed: Parsed) -> tuple[np.ndarray, np.ndarray | None]:
    """Every record's x, and which records have it of their own (None: the order of the lines is the x)."""
    epoch = np.frombuffer(parsed.epoch, dtype=np.float64)
    step = np.frombuffer(parsed.step, dtype=np.float64)
    stray = _out_of_order(epoch)
    if stray.any():
        # its values then sit at the x of the line before, where they override nothing (see log_curves)
        epoch, step = np.where(stray, np.nan, epoch), np.where(stray, np.nan, step)
        parsed.warn(f"{int(stray.sum())} line(s) whose epoch goes back for that line alone (epoch 1 amid epoch 11: a "
                    "line garbled or pasted in) not read as a point")
    has_step, has_epoch = ~np.isnan(step), ~np.isnan(epoch)
    if has_step.any() and has_epoch.any() and not (has_step & has_epoch).any():
        if len(np.unique(step[has_step])) < MIN_POINTS <= len(np.unique(epoch[has_epoch])):
            # a step of a value or two among many epochs is a setting (``epochs=20  batch=32``) or a section of
            # the script (``STEP 4 — Train``, its results under ``STEP 6 — Evaluation``), not the x: every epoch's
            # values would sit at it. The epoch's lines are then numbered as any log's without steps (below),
            # which replaces the step
            has_step = np.zeros(len(step), dtype=bool)
        else:
            epoch = _epochs_of_counted_stretches(step, epoch)
            has_epoch = ~np.isnan(epoch)
    if not has_step.any() and has_epoch.any():
        step = _batches_within_epochs(parsed, epoch)
        has_step = ~np.isnan(step)
    if has_step.any():
        x = step.copy()
        both = has_step & has_epoch
        totals = np.frombuffer(parsed.step_total, dtype=np.float64)[both]
        if counts_within_epoch(step[both], epoch[both], totals):
            x[both] = steps_across_epochs(step[both], epoch[both], totals)
        elif _the_epoch_orders_them(step[has_step], epoch[has_step]):
            x[has_step] = epoch[has_step]
        own = has_step
    elif has_epoch.any():
        x = epoch.copy()
        own = has_epoch
        scale = _whole_number_scale(epoch[has_epoch])
        if scale != 1:
            x, sharing = _apart_within_rounding(parsed, np.round(x * scale), own)
            parsed.warn(f"no step in the log and the epoch is fractional; the x axis is the epoch × {scale * sharing}"
                        + (f", the up to {sharing} records that print one rounded epoch placed one after another"
                           if sharing > 1 else ""))
    else:
        parsed.warn("no step or epoch in the log; the order of the lines holding values is the x axis")
        return np.arange(len(step), dtype=np.float64), None
    return _carried_forward(x, own), own


def _the_epoch_orders_them(step: np.ndarray, epoch: np.ndarray) -> bool:
    """Whether records that each print a whole epoch of their own, counting up, place by it rather than by a step
    beside it that does not count up with it: the batch within the epoch at which a log prints once an epoch or
    less (CycleGAN's ``(epoch: 2, iters: 3648, …)`` at every epoch's last batch; pix2pix printing every few epochs
    at ``iters: 4, 8 … 24, 4``). Read by that step, every epoch would pile onto one point or start a run over."""
    return (len(epoch) >= 2 and not np.isnan(epoch).any() and np.all(epoch == np.round(epoch))
            and np.all(np.diff(epoch) > 0) and np.any(np.diff(step) <= 0))


def _epochs_of_counted_stretches(step: np.ndarray, epoch: np.ndarray) -> np.ndarray:
    """``epoch`` with the epoch of each stretch of step lines filled in, when the lines printing the epoch print no
    step and stand exactly where the step starts again (``step 100 | G 3.27`` … ``step 1500``, then ``Epoch 00001 |
    G Loss: 2.56``, then ``step 100`` again), each naming another epoch: the step counts batches within an epoch
    that the log names once, at the epoch's end (or at its start, when an epoch line comes first). Read alone, every
    epoch would be a restarted run of its own; an epoch named lower than the one before is a session started over,
    which the restart rule then tells apart. A stretch after the last epoch line that closes one is the epoch in
    progress (a crashed run's last), the one after it. Unchanged in any other log."""
    with_step, with_epoch = np.flatnonzero(~np.isnan(step)), np.flatnonzero(~np.isnan(epoch))
    named = epoch[with_epoch]
    restarts = np.flatnonzero(np.diff(step[with_step]) < 0)
    if not len(restarts) or np.any(np.diff(named) == 0):
        return epoch
    # every restart has epoch lines before it, and every group of epoch lines between step lines sits at a restart
    step_lines_before = np.searchsorted(with_step, with_epoch)
    inner = step_lines_before[(step_lines_before > 0) & (step_lines_before < len(with_step))]
    if not np.array_equal(np.unique(inner) - 1, restarts):
        return epoch
    if with_epoch[0] > with_step[0]:  # the epoch line after a stretch closes it
        closing = np.searchsorted(with_epoch, with_step)
        stretch_epoch = np.where(closing < len(named), named[np.minimum(closing, len(named) - 1)], named[-1] + 1)
    else:  # the one before it opens it
        stretch_epoch = named[np.searchsorted(with_epoch, with_step) - 1]
    filled = epoch.copy()
    filled[with_step] = stretch_epoch
    return filled


def _out_of_order(positions: np.ndarray) -> np.ndarray:
    """The records whose epoch goes back for that record alone: below the one before it, while the one after it is
    back at that level or beyond, and further on than the epoch after it. A run restarted or resumed goes on from
    where it went back to (1, 2, then 1, 2, 3); one line garbled or pasted in does not (11, 1, 11), and read as a
    restart it would drop all the run logged before. (A step may go back for one line by design: an evaluation's own
    counter printed between training iterations.)"""
    placed = np.flatnonzero(~np.isnan(positions))
    values = positions[placed]
    stray = np.zeros(len(positions), dtype=bool)
    if len(values) >= 3:
        alone = (values[1:-1] < values[:-2]) & (values[2:] >= values[:-2]) & (values[2:] > values[1:-1] + 1)
        stray[placed[1:-1][alone]] = True
    return stray


def _batches_within_epochs(parsed: Parsed, epoch: np.ndarray) -> np.ndarray:
    """A step for the lines of a metric printed batch after batch with only the epoch (``Epoch 1 - Batch loss:
    12.13``, hundreds an epoch): each such line is the next batch of its epoch, numbered from 0 within it, so the
    batches do not collapse onto their epoch. A metric counts as one when some epoch holds ``MIN_POINTS`` of its
    lines in a row with no line of another epoch between them (a checkpoint's ``(epoch=20, val_loss=1.05)`` that
    each resumed session prints again is no batch of epoch 20); a fractional epoch is a position of its own, and
    repeats there are its rounding. NaN for every other line: those then sit at the batch printed before them."""
    step = np.full(len(epoch), np.nan)
    placed = np.frombuffer(parsed.placed, dtype=np.int8)
    own = placed == OWN
    dated = ~np.isnan(epoch)
    # how often the epoch changed before a line: an epoch the log comes back to is a stretch of its own, and so is
    # one a restarted session goes on with after printing its settings again
    settings_before = np.cumsum(placed == PREAMBLE)[dated]
    new_stretch = (np.diff(epoch[dated], prepend=np.nan) != 0) | (np.diff(settings_before, prepend=-1) != 0)
    stretch = np.zeros(len(epoch), dtype=np.int64)
    stretch[dated] = np.cumsum(new_stretch)
    for indexes, values in parsed.tags.values():
        indexes, values = np.frombuffer(indexes, dtype=np.int64), np.frombuffer(values, dtype=np.float64)
        indexes, values = indexes[own[indexes]], values[own[indexes]]
        epochs = epoch[indexes]
        if len(indexes) < MIN_POINTS or np.any(epochs != np.round(epochs)):
            continue
        starts = np.flatnonzero(np.diff(stretch[indexes], prepend=-1) != 0)  # where a run of one epoch's lines starts
        lengths = np.diff(starts, append=len(epochs))
        # a line drawn again as it was (a progress bar's last state, printed once more at its close) is no batch
        drawn_again = np.r_[False, values[1:] == values[:-1]]  # (no subtraction: an inf beside an inf is no NaN)
        drawn_again[starts] = False
        if np.add.reduceat(~drawn_again, starts).max() >= MIN_POINTS:
            within = np.arange(len(epochs)) - np.repeat(starts, lengths)
            step[indexes] = np.where(np.isnan(step[indexes]), within, step[indexes])
    return step


def _apart_within_rounding(parsed: Parsed, x: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, int]:
    """``x`` (a fractional epoch made whole) with the records that print the same rounded epoch placed one after
    another, in the order printed, and how many share one at most (the factor the axis grows by). The Trainer
    prints ``round(epoch, 2)``: an epoch of 8,264 steps logged every 10 puts eight records on each 0.01, which
    read at the epoch alone would keep one of every eight. A record is the next one only when it logs a metric a
    record before it on that epoch logged too; one that logs others (an evaluation's dict after the train dict of
    its step) stays at the place of the record before it. Where the epoch goes back (a restart, a second
    training printed after the first), the records after it are counted on their own epochs as well."""
    where = np.flatnonzero(own)
    xs = x[where]
    if len(xs) < 2:
        return x, 1
    starts = np.r_[True, np.diff(xs) != 0]
    epoch_of = np.cumsum(starts) - 1  # which rounded epoch each record with its own x is on
    position = np.full(len(x), -1, dtype=np.int64)
    position[where] = np.arange(len(where))
    offset = np.zeros(len(xs), dtype=np.int64)
    for indexes, _ in parsed.tags.values():
        mine = position[np.frombuffer(indexes, dtype=np.int64)]
        mine = mine[mine >= 0]
        if len(mine) < 2:
            continue
        first = np.r_[True, epoch_of[mine][1:] != epoch_of[mine][:-1]]
        nth = np.arange(len(mine)) - np.flatnonzero(first)[np.cumsum(first) - 1]  # its how-many-th on that epoch
        offset[mine] = np.maximum(offset[mine], nth)
    sharing = int(offset.max()) + 1
    if sharing == 1:
        return x, 1
    offset = _carried_forward(offset, (offset > 0) | starts)
    spread = x.copy()
    spread[where] = xs * sharing + offset
    return spread, sharing


def _whole_number_scale(values: np.ndarray) -> int:
    """The smallest power of ten up to 10,000 that makes every value whole (10,000 if none does)."""
    for scale in (1, 10, 100, 1000, 10_000):
        scaled = values * scale
        if np.all(np.abs(scaled - np.round(scaled)) < 1e-6 * scale):
            return scale
    return 10_000


def _carried_forward(x: np.ndarray, own: np.ndarray) -> np.ndarray:
    """``x`` where a record has its own, else that of the closest record before it with one (else the first's)."""
    positions = np.where(own, np.arange(len(x)), -1)
    np.maximum.accumulate(positions, out=positions)
    return np.where(positions >= 0, x[np.maximum(positions, 0)], x[np.argmax(own)])
