"""`curvedoc watch` on runs that real training writes while it watches, each in its own process: PyTorch's
SummaryWriter (killed mid-run), Lightning's CSVLogger and the Hugging Face Trainer's TensorBoard logging. What the
watch printed must be what the finished logs show, and its last view of each run the one `curvedoc PATH` gives."""

import subprocess
import sys
import time

import pytest

import curvedoc
from curvedoc.config import Config
from curvedoc.watch import Watch, follow

pytest.importorskip("torch")
pytest.importorskip("sklearn")

DIGITS = """
import sys, time
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.manual_seed(0)
features, labels = load_digits(return_X_y=True)
features = torch.tensor(features / 16, dtype=torch.float32)
labels = torch.tensor(labels)
"""

SUMMARY_WRITER = DIGITS + """
from torch.utils.tensorboard import SummaryWriter

folder, steps, blow_up_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
writer = SummaryWriter(folder)
for step in range(steps):
    if step == blow_up_at:
        optimizer.param_groups[0]["lr"] = 1e30  # the LR typo that overflows the weights
    batch = torch.randint(0, len(labels), (64,))
    loss = F.cross_entropy(model(features[batch]), labels[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    writer.add_scalar("train/loss", loss.item(), step)
    writer.add_scalar("lr", optimizer.param_groups[0]["lr"], step)
    writer.flush()
    time.sleep(0.005)
writer.close()
"""

CSV_LOGGER = DIGITS + """
import lightning as L
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, TensorDataset

class Digits(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))

    def training_step(self, batch, index):
        if self.global_step == 150:
            self.optimizers().param_groups[0]["lr"] = 1e30
        loss = F.cross_entropy(self.net(batch[0]), batch[1])
        self.log("train_loss", loss)
        time.sleep(0.01)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

data = DataLoader(TensorDataset(features, labels), batch_size=32, shuffle=True)
trainer = L.Trainer(max_steps=250, log_every_n_steps=1, logger=CSVLogger(sys.argv[1], flush_logs_every_n_steps=10),
                    accelerator="cpu", enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False)
trainer.fit(Digits(), data)
"""

TRAINER = """
import sys, time
import torch
from transformers import GPT2Config, GPT2ForSequenceClassification, Trainer, TrainerCallback, TrainingArguments

class Slowly(TrainerCallback):  # a step of a real model takes a while: give the watch looks during training
    def on_step_end(self, args, state, control, **kwargs):
        time.sleep(0.02)

torch.manual_seed(0)
config = GPT2Config(vocab_size=32, n_positions=8, n_embd=16, n_layer=1, n_head=2, num_labels=4, pad_token_id=0,
                    bos_token_id=0, eos_token_id=0)
ids = torch.randint(1, 32, (512, 8))
data = [{"input_ids": row, "labels": int(row[0] % 4)} for row in ids]
arguments = TrainingArguments(output_dir=sys.argv[1], max_steps=200,
                              per_device_train_batch_size=16, learning_rate=3e-3, logging_steps=5,
                              save_strategy="no", report_to=["tensorboard"], use_cpu=True, disable_tqdm=True, seed=0)
Trainer(model=GPT2ForSequenceClassification(config), args=arguments, train_dataset=data,
        callbacks=[Slowly()]).train()
"""


def watch_process(script, folder, *args, stop_when=None, timeout=240):
    """Runs ``script`` in its own process while a watch follows ``folder``; ``stop_when(printed)`` kills it."""
    process = subprocess.Popen([sys.executable, "-c", script, str(folder), *map(str, args)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    printed = []
    watch = Watch([str(folder)], Config(), lambda run, finding: printed.append(finding))
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None and time.monotonic() < deadline:
            watch.look()
            if stop_when is not None and stop_when(printed):
                process.kill()
            time.sleep(0.05)
    finally:
        process.kill()
        _, errors = process.communicate()
    assert process.returncode in (0, -9), errors.decode()[-2000:]
    assert follow(watch, interval=0.05, idle=0.3) == "idle"
    return watch, printed


def offline(folder):
    return {(f.code, f.step, f.title) for run in curvedoc.diagnose(folder) for f in run.findings}


def the_same_as_offline(watch, printed, folder):
    findings = offline(folder)
    assert {(f.code, f.step, f.title) for run in watch.runs for f in run.findings} == findings
    assert {(f.code, f.step, f.title) for f in printed} <= findings  # nothing printed that the logs retract
    assert len(printed) == len({(f.code, f.step) for f in printed})  # each printed once


def nan_steps(findings):
    return [f.step for f in findings if f.symptom == "nan_inf"]


def test_pytorch_summary_writer_killed_after_its_nan(tmp_path):
    watch, printed = watch_process(SUMMARY_WRITER, tmp_path / "run", 20_000, 120, stop_when=nan_steps)
    steps = nan_steps(printed)
    assert len(steps) == 1 and steps[0] >= 120
    assert nan_steps(f for run in curvedoc.diagnose(tmp_path) for f in run.findings) == steps
    the_same_as_offline(watch, printed, tmp_path)


def test_lightning_csv_logger_rows_as_they_are_flushed(tmp_path):
    pytest.importorskip("lightning")
    watch, printed = watch_process(CSV_LOGGER, tmp_path)
    steps = nan_steps(printed)
    assert len(steps) == 1 and steps[0] >= 150
    the_same_as_offline(watch, printed, tmp_path)


def test_trainer_tensorboard_logging_of_a_healthy_run(tmp_path):
    pytest.importorskip("transformers")
    watch, printed = watch_process(TRAINER, tmp_path)
    assert not [f for f in printed if f.severity == "error"]
    assert any(run.scalars["step"].max() >= 195 for run in watch.runs)
    the_same_as_offline(watch, printed, tmp_path)
