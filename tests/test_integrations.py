"""The framework callbacks on real (tiny) training: the Hugging Face Trainer stopped at the step of the first NaN,
an injected spike flagged within a few logged steps, a healthy run left alone; and the shared live run's cost."""

import math
import sys

import numpy as np
import pytest

from curvedoc.integrations import LiveRun


def test_importing_curvedoc_and_its_integrations_imports_no_framework():
    import subprocess

    code = ("import sys, curvedoc, curvedoc.integrations; "
            "print(sorted(m for m in ('torch', 'transformers', 'lightning', 'keras') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_live_run_reports_a_nan_at_its_step_and_a_confirmed_spike_once():
    live = LiveRun("live", overhead=None)  # judged at every log event
    rng = np.random.default_rng(0)
    found = []
    for step in range(1, 400):
        loss = 2.0 * math.exp(-step / 80) + 0.2 + 0.01 * rng.standard_normal()
        if step in (250, 251):
            loss *= 8
        found += [(step, f.symptom, f.step) for f in live.log(step, {"loss": loss})]
    spikes = [item for item in found if item[1] == "spike"]
    assert len(spikes) == 1 and spikes[0][2] == 250 and spikes[0][0] <= 255
    assert [f.symptom for f in live.log(400, {"loss": math.nan})] == ["nan_inf"]


def test_diagnosis_keeps_within_its_share_of_the_training_time(monkeypatch):
    """Each step takes 1 ms and each diagnosis 100 ms: at 1% of the wall time, about one diagnosis per 10,000
    steps, after the first (which also pays for imports, and is not counted)."""
    import curvedoc.integrations as integrations

    now = [0.0]
    calls = []

    def diagnose(run, rules):
        calls.append(1)
        now[0] += 0.1
        return []

    monkeypatch.setattr(integrations, "diagnose_run", diagnose)
    live = LiveRun("live", clock=lambda: now[0])
    for step in range(100_000):
        now[0] += 0.001
        live.log(step, {"loss": 1.0})
    assert 10 <= len(calls) <= 12
    judged = len(calls)
    assert len(live.log(100_000, {"loss": math.nan})) == 0 and len(calls) == judged + 1  # a NaN at once


def tiny_trainer(tmp_path, callback, lr_jump_at=None, factor=1e12, steps=80):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import GPT2Config, GPT2ForSequenceClassification, Trainer, TrainerCallback, TrainingArguments

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=32, n_positions=8, n_embd=16, n_layer=1, n_head=2, num_labels=4, pad_token_id=0)
    model = GPT2ForSequenceClassification(config)
    ids = torch.randint(1, 32, (512, 8))
    data = [{"input_ids": row, "labels": int(row[0] % 4)} for row in ids]

    class Jump(TrainerCallback):
        def on_step_begin(self, args, state, control, optimizer=None, **kwargs):
            if lr_jump_at is not None and state.global_step >= lr_jump_at:
                for group in optimizer.param_groups:
                    group["lr"] *= factor

    arguments = TrainingArguments(output_dir=str(tmp_path), max_steps=steps, per_device_train_batch_size=16,
                                  learning_rate=3e-3, logging_steps=1, save_strategy="no", report_to=[],
                                  use_cpu=True, disable_tqdm=True, seed=0, max_grad_norm=1e9)
    trainer = Trainer(model=model, args=arguments, train_dataset=data, callbacks=[Jump(), callback])
    trainer.train()
    return trainer


def every_log_judged(monkeypatch, framework: str) -> None:
    """The framework callback's run judged at every log event, as on an idle machine: which events the time budget
    skips depends on the machine's load, and a tiny model at chance for its first 40 steps can look flat at two
    looks far apart where the looks between would have seen it move."""
    import functools
    import importlib

    module = importlib.import_module(f"curvedoc.integrations.{framework}")
    monkeypatch.setattr(module, "LiveRun", functools.partial(LiveRun, overhead=None))


def test_the_trainer_callback_stops_at_the_first_nan(tmp_path, caplog, monkeypatch):
    pytest.importorskip("transformers")
    from curvedoc.integrations.huggingface import CurvedocCallback

    every_log_judged(monkeypatch, "huggingface")
    callback = CurvedocCallback(stop_on="error")
    trainer = tiny_trainer(tmp_path, callback, lr_jump_at=30)
    nan_steps = [entry["step"] for entry in trainer.state.log_history
                 if "grad_norm" in entry and not math.isfinite(entry["grad_norm"])]
    # the Trainer's NaN filter keeps the logged loss finite: the grad norm shows it, and one non-finite norm may
    # be a mixed-precision step the loss scaler skipped, so the second in a row settles it
    assert trainer.state.global_step == nan_steps[1] == nan_steps[0] + 1
    assert [(f.symptom, f.step) for f in callback.findings][:1] == [("nan_inf", nan_steps[0])]
    assert "curvedoc CD101 nan_inf" in caplog.text


def test_the_trainer_callback_is_silent_on_a_healthy_run(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from curvedoc.integrations.huggingface import CurvedocCallback

    every_log_judged(monkeypatch, "huggingface")
    callback = CurvedocCallback(stop_on="error")
    trainer = tiny_trainer(tmp_path, callback, steps=200)  # at chance for ~40 steps, then it learns
    assert trainer.state.global_step == 200 and not [f for f in callback.findings if f.severity != "info"]


def test_the_lightning_callback_stops_at_the_first_nan_and_is_silent_when_healthy(tmp_path):
    torch = pytest.importorskip("torch")
    lightning = pytest.importorskip("lightning")
    from lightning.pytorch.loggers import TensorBoardLogger
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    from curvedoc.integrations.lightning import CurvedocCallback

    class Classifier(lightning.LightningModule):
        def __init__(self, blow_up_at=None):
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def on_train_batch_start(self, batch, batch_idx):
            if self.hparams.blow_up_at is not None and self.global_step >= self.hparams.blow_up_at:
                for group in self.optimizers().optimizer.param_groups:
                    group["lr"] = 1e12  # a schedule bug: the LR overflows the weights

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    torch.manual_seed(0)
    x = torch.randn(2048, 8)
    data = torch.utils.data.TensorDataset(x, (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long())
    for blow_up_at in (30, None):
        callback = CurvedocCallback(stop_on="error")
        logger = TensorBoardLogger(tmp_path / f"tb_{blow_up_at}") if blow_up_at is not None else False
        trainer = lightning.Trainer(max_steps=200, log_every_n_steps=1, callbacks=[callback], logger=logger,
                                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                                    default_root_dir=str(tmp_path), accelerator="cpu")
        trainer.fit(Classifier(blow_up_at), torch.utils.data.DataLoader(data, batch_size=16, shuffle=True))
        alarms = [f for f in callback.findings if f.severity != "info"]
        if blow_up_at is None:
            assert trainer.global_step == 200 and not alarms
        else:
            assert alarms[0].symptom == "nan_inf" and trainer.global_step <= alarms[0].step + 1 < 200
            logger.experiment.flush()
            texts = [(value.tag, event.step) for event_file in (tmp_path / "tb_30").rglob("*tfevents*")
                     for event in EventFileLoader(str(event_file)).Load() for value in event.summary.value
                     if value.tag.startswith("curvedoc/")]
            assert texts == [("curvedoc/CD101/text_summary", alarms[0].step)]  # the alert, in the run's own TensorBoard


def test_the_keras_callback_stops_at_the_first_nan(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    keras = pytest.importorskip("keras")
    from curvedoc.integrations.keras import CurvedocCallback

    class BlowUp(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if self.model.optimizer.iterations >= 30:
                self.model.optimizer.learning_rate = 1e12

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 8)).astype("float32")
    y = ((x[:, 0] > 0) + 2 * (x[:, 1] > 0)).astype("int64")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    callback = CurvedocCallback(stop_on="error", num_classes=4)
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0, callbacks=[BlowUp(), callback])
    assert callback.findings and callback.findings[0].symptom == "nan_inf"
    assert callback.step <= callback.findings[0].step + 1 < 3 * 128 and len(history.epoch) == 1


def test_a_flat_start_is_certain_only_after_enough_points_and_notes_stay_out_of_live_alerts():
    rng = np.random.default_rng(0)
    live = LiveRun("flat", overhead=None)
    reported = {}
    for step in range(1, 100):
        for finding in live.log(step, {"loss": 2.3 + 0.01 * rng.standard_normal()}):
            reported.setdefault(finding.symptom, step)
    assert reported["flat_from_start"] == 20 and "needs_n_classes" not in reported


def test_a_certain_finding_is_logged_and_sent_as_a_wandb_alert_when_the_run_uses_wandb(monkeypatch, caplog):
    import enum
    import types

    from curvedoc.integrations import announce

    sent = []
    fake = types.SimpleNamespace(AlertLevel=enum.Enum("AlertLevel", "INFO WARN ERROR"),
                                 run=types.SimpleNamespace(alert=lambda **alert: sent.append(alert)))
    monkeypatch.setitem(sys.modules, "wandb", fake)
    live = LiveRun("live", overhead=None)
    for step in range(10):
        findings = live.log(step, {"loss": math.nan if step == 9 else 1.0 / (step + 1)})
    (finding,) = findings
    announce(finding)
    assert "curvedoc CD101 nan_inf at step 9" in caplog.text
    assert sent[0]["title"] == "curvedoc CD101 nan_inf" and sent[0]["level"] is fake.AlertLevel.ERROR
    fake.run = types.SimpleNamespace(alert=lambda **alert: (_ for _ in ()).throw(RuntimeError("offline")))
    announce(finding)  # an alert that cannot be sent does not stop training
