"""A synthetic archive of old experiments for the audit benchmark, written in the formats' real on-disk layouts.

    python benchmarks/archive.py [--runs 2000]      # prints where it wrote; skipped when already there

Runs are grouped as a team's archive is: projects (one logging tool each, as teams stick to one), each holding
sweeps (a learning-rate grid over seeds, a hand-tuned series, repeated seeds, a sweep over a bug), each sweep a
folder of runs that started one after the other. A run logs about 5,000 points over five tags: train loss and
learning rate at every step, gradient norm every other step and validation loss/accuracy fifty times.

What goes wrong is what goes wrong in real archives: too high a learning rate diverges to Inf/NaN (and sometimes
crashes the run), an unregularised run overfits, a sweep over a bug stays at chance whatever its learning rate,
some configurations are seed-sensitive, and now and then one run is too good to be true (leakage). The
hyperparameters each format keeps (TensorBoard's hparams plugin, Lightning's hparams.yaml, MLflow params, the W&B
config, the HF model config) carry lr, batch size, weight decay and seed, so the cross-run checks have work.

Formats and their layouts (every byte as the real writer lays it out; no ML framework needed):

- TensorBoard: ``<project>/runs/<sweep>/<run>/events.out.tfevents.<time>.<host>.<pid>.0`` with PyTorch
  SummaryWriter's ``simple_value`` events and the hparams plugin's session-start summary;
- Lightning CSVLogger: ``<project>/lightning_logs/<sweep>/version_<k>/metrics.csv`` (sparse rows: the
  LearningRateMonitor's own rows, train rows, validation rows) beside ``hparams.yaml``;
- Keras CSVLogger: ``<project>/<sweep>/<run>/training.log``, one row per epoch (so ~250 points, as Keras logs);
- Hugging Face Trainer: ``<project>/outputs/<sweep>/<run>/trainer_state.json`` + ``config.json``, a third also
  keeping the last ``checkpoint-<step>/`` copy (``save_total_limit=1``);
- MLflow file store: ``<project>/mlruns/<experiment id>/<run id>/`` with ``meta.yaml``, ``metrics/<key>``
  (``<ms timestamp> <value> <step>`` lines), ``params/<key>`` and ``tags/``;
- W&B offline runs: ``<project>/wandb/offline-run-<date>_<time>-<id>/run-<id>.wandb`` (LevelDB log framing in
  32 KiB blocks, CRC-32 per chunk, protobuf Records: run record with config and start time, one history record
  per step, an exit record), as offline wandb leaves a run;
- JSON Lines: ``<project>/<sweep>/<run>.jsonl``, one object per logged row.

Deterministic for a given ``--runs`` (numpy seeded per run).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import struct
import sys
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import yaml

from bench_tensorboard import write_records

DATA = Path(__file__).resolve().parent / "data" / "audit_archive"
# raised whenever the archive written for a given --runs changes, so an older one is written again
GENERATOR_VERSION = 2
# share of projects per logging tool, roughly what a mixed archive holds
FORMAT_SHARES = {"tensorboard": 0.28, "lightning": 0.18, "mlflow": 0.15, "wandb": 0.14, "hf": 0.12,
                 "jsonl": 0.08, "keras": 0.05}
TOPICS = ("cifar10-resnet", "imagenet-subset", "sst2-distilbert", "speech-cmds", "tabular-mlp", "mnist-cnn",
          "agnews-bert", "cifar100-vit", "fashion-mnist", "food101-effnet", "emotion-roberta", "retina-unet")
CLASSES = {"cifar10": 10, "imagenet": 100, "sst2": 2, "speech": 35, "tabular": 2, "mnist": 10, "agnews": 4,
           "cifar100": 100, "fashion": 10, "food101": 101, "emotion": 6, "retina": 5}
SWEEP_KINDS = {"grid": 0.55, "manual": 0.2, "seeds": 0.17, "bug": 0.08}
LR_GRID = (0.1, 0.3, 1.0, 3.0, 30.0)  # multiples of the project's good lr; the last one diverges
TRAIN, LR, GRAD, VAL_LOSS, VAL_ACC = "train_loss", "lr", "grad_norm", "val_loss", "val_acc"


@dataclass
class RunSpec:
    index: int
    project: str
    format: str
    sweep: str
    name: str
    hparams: dict
    n_classes: int
    start: float
    steps: int
    failure: str = "none"  # none / diverge / overfit / chance / leak
    seed_spread: float = 0.01  # how far seeds move the final accuracy
    quality: float = 1.0  # 1 at the project's good lr, less away from it
    crashed: bool = False


@dataclass
class Curves:
    """Canonical curves of one run: tag → (steps, values), and the wall time of every step."""

    series: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    wall: np.ndarray = field(default_factory=lambda: np.zeros(0))


def plan(n_runs: int) -> list[RunSpec]:
    """The archive's runs, in the order their folders are laid out, start times increasing within a sweep."""
    rng = np.random.default_rng(20261203)
    formats = list(FORMAT_SHARES)
    specs: list[RunSpec] = []
    project_count = max(len(formats), n_runs // 100)
    projects = []
    for number in range(project_count):
        topic = TOPICS[number % len(TOPICS)]
        fmt = formats[rng.choice(len(formats), p=list(FORMAT_SHARES.values()))] if number >= len(formats) \
            else formats[number]  # every format at least once, even in a small archive
        started = datetime(2024, 1, 8, tzinfo=timezone.utc).timestamp() + rng.uniform(0, 2.8 * 365 * 86400)
        projects.append((f"{topic}-{number:02d}", fmt, CLASSES[topic.split("-")[0]], started))
    sweep_number = 0
    while len(specs) < n_runs:
        project, fmt, n_classes, project_start = projects[sweep_number % project_count]
        kind = list(SWEEP_KINDS)[rng.choice(len(SWEEP_KINDS), p=list(SWEEP_KINDS.values()))]
        start = project_start + sweep_number / project_count * 7 * 86400 + rng.uniform(0, 86400)
        base = {"lr": float(rng.choice([1e-4, 3e-4, 1e-3, 3e-3])), "batch_size": int(rng.choice([32, 64, 128, 256])),
                "weight_decay": float(rng.choice([0.0, 1e-4, 0.01])), "optimizer": str(rng.choice(["adamw", "sgd"])),
                "num_classes": n_classes, "seed": 0}
        steps = 1600 if fmt == "hf" else int(rng.choice([1800, 2000, 2200]))
        seed_spread = 0.08 if rng.random() < 0.25 else 0.01
        configs = _sweep_configs(kind, base, rng)
        sweep = f"{kind}-{sweep_number:04d}"
        for position, (hparams, lr_factor) in enumerate(configs[: n_runs - len(specs)]):
            quality = math.exp(-math.log10(lr_factor) ** 2) if lr_factor < 10 else 0.0
            failure = "none"
            if kind == "bug":
                failure = "chance"
            elif lr_factor >= 10 and rng.random() < 0.85:
                failure = "diverge"
            elif hparams["weight_decay"] == 0.0 and _overfits(sweep, hparams):
                failure = "overfit"
            elif rng.random() < 0.01:
                failure = "leak"
            name = _run_name(fmt, hparams, position, rng)
            specs.append(RunSpec(len(specs), project, fmt, sweep, name, hparams, n_classes, start, steps, failure,
                                 seed_spread, quality, crashed=failure == "diverge" and rng.random() < 0.4))
            start += steps * step_seconds(hparams) + rng.uniform(30, 3600)
        sweep_number += 1
    return specs


def step_seconds(hparams: dict) -> float:
    """A GPU's time per optimizer step, growing with the batch."""
    return 0.08 * hparams["batch_size"] / 32


def _overfits(sweep: str, hparams: dict) -> bool:
    """Half of the unregularised configurations overfit, whatever their seed: overfitting is the config's."""
    config = sorted((key, value) for key, value in hparams.items() if key != "seed")
    return zlib.crc32(repr((sweep, config)).encode()) % 2 == 0


def _sweep_configs(kind: str, base: dict, rng: np.random.Generator) -> list[tuple[dict, float]]:
    """(hyperparameters, lr as a multiple of the project's good lr) of each run of a sweep, in running order."""
    good_lr = base["lr"]
    if kind == "grid":
        return [({**base, "lr": _typed(good_lr * factor), "seed": seed}, factor) for factor in LR_GRID
                for seed in range(3)]
    if kind == "seeds":
        return [({**base, "seed": seed}, 1.0) for seed in range(5)]
    if kind == "bug":
        return [({**base, "lr": _typed(good_lr * factor)}, factor) for factor in LR_GRID[:4]]
    configs, current, factor = [], dict(base), 1.0
    for _ in range(int(rng.integers(6, 11))):
        configs.append((dict(current), factor))
        # hand tuning: one knob at a time, sometimes two at once
        for knob in rng.choice(["lr", "batch_size", "weight_decay", "optimizer"], int(rng.choice([1, 2], p=[0.6, 0.4])),
                               replace=False):
            if knob == "lr":
                factor = float(rng.choice([0.3, 1.0, 3.0]))
                current["lr"] = _typed(good_lr * factor)
            elif knob == "batch_size":
                current["batch_size"] = int(rng.choice([32, 64, 128, 256]))
            elif knob == "weight_decay":
                current["weight_decay"] = float(rng.choice([0.0, 1e-4, 0.01]))
            else:
                current["optimizer"] = "sgd" if current["optimizer"] == "adamw" else "adamw"
    return configs


def _typed(lr: float) -> float:
    """A learning rate as someone types it (3e-05, not 2.9999999999999997e-05)."""
    return float(f"{lr:.2g}")


ADJECTIVES = ("dashing", "brisk", "quiet", "sunny", "wild", "misty", "polar", "lucid", "amber", "cosmic")
NOUNS = ("sun", "river", "forest", "wave", "dream", "comet", "field", "night", "glade", "pine")


def _run_name(fmt: str, hparams: dict, position: int, rng: np.random.Generator) -> str:
    if fmt == "wandb":
        return f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}-{position + 1}"
    if fmt == "lightning":
        return f"version_{position}"
    settings = f"lr{hparams['lr']:.0e}_bs{hparams['batch_size']}_wd{hparams['weight_decay']:g}_s{hparams['seed']}"
    return f"{position:02d}-{settings}"


def curves(spec: RunSpec, grad_every: int = 2) -> Curves:
    rng = np.random.default_rng([20261203, spec.index])
    steps = np.arange(spec.steps)
    total = spec.steps
    chance = math.log(spec.n_classes)
    batch = spec.hparams["batch_size"]
    # larger batches: smoother curves; seeds move where a run ends
    noise = 0.06 * math.sqrt(32 / batch)
    seed_shift = rng.normal(0, spec.seed_spread)
    floor = chance * (0.05 + 0.5 * (1 - spec.quality)) * (1 + seed_shift)
    tau = total / (2 + 6 * spec.quality)
    train = floor + (chance - floor) * np.exp(-steps / tau)
    if spec.failure == "overfit":
        train = floor * 0.2 + (chance - floor * 0.2) * np.exp(-steps / tau)
    if spec.failure == "chance":
        train = np.full(total, chance)
    train = train * np.exp(rng.normal(0, noise, total))
    warmup = min(100, total // 10)
    lr_values = spec.hparams["lr"] * np.where(steps < warmup, (steps + 1) / warmup,
                                              0.5 * (1 + np.cos(np.pi * (steps - warmup) / (total - warmup))))
    grad = 0.5 * (0.3 + train / chance) * np.exp(rng.normal(0, 0.3, total))
    val_steps = np.linspace(total / 50, total, 50).astype(int) - 1
    generalisation = floor * 0.15 * (1 + (spec.failure == "overfit"))
    val_loss = floor + generalisation + (chance - floor) * np.exp(-val_steps / tau)
    if spec.failure == "overfit":
        turn = total * rng.uniform(0.25, 0.45)
        val_loss = val_loss + chance * 0.6 * np.clip((val_steps - turn) / total, 0, None) ** 1.3
    acc_ceiling = min(0.985, 1 - 0.45 * floor / chance + seed_shift)
    val_acc = 1 / spec.n_classes + (acc_ceiling - 1 / spec.n_classes) * (1 - np.exp(-val_steps / tau))
    if spec.failure == "overfit":
        val_acc = val_acc - 0.3 * (val_loss - val_loss.min()) / chance
    if spec.failure == "chance":
        val_loss = np.full(len(val_steps), chance)
        val_acc = np.full(len(val_steps), 1 / spec.n_classes)
    if spec.failure == "leak":
        val_loss, val_acc = val_loss * 0.05, 1 - (1 - val_acc) * 0.02
    val_loss = val_loss * np.exp(rng.normal(0, 0.02, len(val_steps)))
    val_acc = np.clip(val_acc + rng.normal(0, 0.004, len(val_steps)), 0, 1)
    if spec.failure == "diverge":
        blowup = int(total * rng.uniform(0.03, 0.5))
        growth = np.exp(np.clip(steps - blowup, 0, None) / 6.0)
        train = np.where(steps >= blowup, train * growth, train)
        grad = np.where(steps >= blowup, grad * growth ** 2, grad)
        train[train > 1e30] = np.inf
        broken = steps > blowup + 40 + rng.integers(0, 10)
        train[broken], grad[broken] = np.nan, np.nan
        val_loss[val_steps > blowup], val_acc[val_steps > blowup] = np.nan, 1 / spec.n_classes
        if spec.crashed:  # the process died a little after the first NaN
            total = blowup + 60
    wall = spec.start + np.cumsum(np.full(spec.steps, step_seconds(spec.hparams)) * rng.uniform(0.9, 1.1, spec.steps))
    kept = steps < total
    grad_steps = steps[kept][::grad_every]
    val_kept = val_steps < total
    return Curves({
        TRAIN: (steps[kept], train[kept].astype(np.float32).astype(float)),
        LR: (steps[kept], lr_values[kept]),
        GRAD: (grad_steps, grad[grad_steps].astype(np.float32).astype(float)),
        VAL_LOSS: (val_steps[val_kept], val_loss[val_kept].astype(np.float32).astype(float)),
        VAL_ACC: (val_steps[val_kept], val_acc[val_kept].astype(np.float32).astype(float)),
    }, wall)


def rows(data: Curves, names: dict[str, str]) -> dict[int, dict[str, float]]:
    """step → {format's tag: value}, steps in order: what one logging call per step hands the writer."""
    by_step: dict[int, dict[str, float]] = {}
    for canonical, (steps, values) in data.series.items():
        tag = names[canonical]
        for step, value in zip(steps.tolist(), values.tolist()):
            by_step.setdefault(step, {})[tag] = value
    return dict(sorted(by_step.items()))


# ---- TensorBoard (PyTorch SummaryWriter) -------------------------------------------------------------------

TB_TAGS = {TRAIN: "train/loss", LR: "lr", GRAD: "train/grad_norm", VAL_LOSS: "val/loss", VAL_ACC: "val/acc"}


def write_tensorboard(spec: RunSpec, folder: Path) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.plugins.hparams import plugin_data_pb2

    data = curves(spec)
    folder.mkdir(parents=True)
    session = plugin_data_pb2.HParamsPluginData(version=0, session_start_info=plugin_data_pb2.SessionStartInfo(
        start_time_secs=spec.start))
    for key, value in spec.hparams.items():
        session.session_start_info.hparams[key].CopyFrom(hparam_value(value))
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
        plugin_name="hparams", content=session.SerializeToString()))

    def events():
        yield event_pb2.Event(wall_time=spec.start, file_version="brain.Event:2").SerializeToString()
        yield event_pb2.Event(wall_time=spec.start, summary=summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag="_hparams_/session_start_info", metadata=metadata)])).SerializeToString()
        wall = data.wall.tolist()
        for step, values in rows(data, TB_TAGS).items():
            for tag, value in values.items():
                yield event_pb2.Event(wall_time=wall[step], step=step, summary=summary_pb2.Summary(
                    value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])).SerializeToString()

    write_records(folder / f"events.out.tfevents.{int(spec.start)}.gpu-node-{spec.index % 7}.{4000 + spec.index}.0",
                  events())


def hparam_value(value):
    from google.protobuf import struct_pb2

    if isinstance(value, str):
        return struct_pb2.Value(string_value=value)
    return struct_pb2.Value(number_value=float(value))


# ---- Lightning CSVLogger ---------------------------------------------------------------------------------------

def write_lightning(spec: RunSpec, folder: Path) -> None:
    data = curves(spec)
    folder.mkdir(parents=True)
    steps_per_epoch = 100
    lr_column = f"lr-{'AdamW' if spec.hparams['optimizer'] == 'adamw' else 'SGD'}"
    header = ["epoch", "grad_2.0_norm_total", lr_column, "step", "train_loss_step", "val_acc", "val_loss"]
    grad = dict(zip(*(array.tolist() for array in data.series[GRAD])))
    val = {step: (acc, loss) for step, acc, loss in zip(data.series[VAL_ACC][0].tolist(),
                                                         data.series[VAL_ACC][1].tolist(),
                                                         data.series[VAL_LOSS][1].tolist())}
    lines = [",".join(header)]
    for step, loss, lr in zip(data.series[TRAIN][0].tolist(), data.series[TRAIN][1].tolist(),
                              data.series[LR][1].tolist()):
        epoch = step // steps_per_epoch
        # LearningRateMonitor logs on its own row, without an epoch
        lines.append(f",,{lr},{step},,,")
        lines.append(f"{epoch},{grad.get(step, '')},,{step},{loss},,")
        if step in val:
            lines.append(f"{epoch},,,{step},,{val[step][0]},{val[step][1]}")
    (folder / "metrics.csv").write_text("\n".join(lines) + "\n")
    (folder / "hparams.yaml").write_text(yaml.safe_dump(spec.hparams))


# ---- Keras CSVLogger -----------------------------------------------------------------------------------------

def write_keras(spec: RunSpec, folder: Path) -> None:
    data = curves(spec)
    folder.mkdir(parents=True)
    steps_per_epoch = 20
    train_steps, train = data.series[TRAIN]
    lr = data.series[LR][1]
    val_steps = set(data.series[VAL_LOSS][0].tolist())
    val = dict(zip(data.series[VAL_LOSS][0].tolist(), zip(data.series[VAL_ACC][1].tolist(),
                                                         data.series[VAL_LOSS][1].tolist())))
    chance = math.log(spec.n_classes)
    lines = ["epoch,accuracy,learning_rate,loss,val_accuracy,val_loss"]
    for epoch in range(len(train_steps) // steps_per_epoch):
        window = slice(epoch * steps_per_epoch, (epoch + 1) * steps_per_epoch)
        loss = float(np.mean(train[window]))  # Keras logs the epoch's running mean
        accuracy = float(np.clip(1 - loss / chance * (1 - 1 / spec.n_classes), 0, 1)) if math.isfinite(loss) \
            else 1 / spec.n_classes
        last = (epoch + 1) * steps_per_epoch - 1
        nearest = min(val_steps, key=lambda step: abs(step - last))
        lines.append(f"{epoch},{accuracy},{lr[last]},{loss},{val[nearest][0]},{val[nearest][1]}")
    (folder / "training.log").write_text("\n".join(lines) + "\n")


# ---- Hugging Face Trainer -------------------------------------------------------------------------------------

def write_hf(spec: RunSpec, folder: Path) -> None:
    data = curves(spec, grad_every=1)  # the Trainer logs grad_norm with every loss
    folder.mkdir(parents=True)
    steps_per_epoch = 400
    wall = data.wall
    history = []
    val = dict(zip(data.series[VAL_LOSS][0].tolist(), zip(data.series[VAL_LOSS][1].tolist(),
                                                         data.series[VAL_ACC][1].tolist())))
    for step, loss, lr, grad in zip(data.series[TRAIN][0].tolist(), data.series[TRAIN][1].tolist(),
                                    data.series[LR][1].tolist(), data.series[GRAD][1].tolist()):
        logged = step + 1  # the Trainer counts optimizer steps from 1
        epoch = round(logged / steps_per_epoch, 4)
        history.append({"epoch": epoch, "grad_norm": grad, "learning_rate": lr, "loss": round(loss, 4),
                        "step": logged})
        if step in val:
            history.append({"epoch": epoch, "eval_accuracy": val[step][1], "eval_loss": val[step][0],
                            "eval_runtime": 3.21, "eval_samples_per_second": 311.5, "eval_steps_per_second": 9.7,
                            "step": logged})
    last = int(data.series[TRAIN][0][-1]) + 1
    finite = [entry["loss"] for entry in history if "loss" in entry and math.isfinite(entry["loss"])]
    history.append({"epoch": round(last / steps_per_epoch, 4), "step": last, "total_flos": 1.2e15,
                    "train_loss": float(np.mean(finite)) if finite else float("nan"),
                    "train_runtime": float(wall[last - 1] - spec.start), "train_samples_per_second": 410.2,
                    "train_steps_per_second": 12.8})
    state = {"best_global_step": None, "best_metric": None, "best_model_checkpoint": None,
             "epoch": round(last / steps_per_epoch, 4), "eval_steps": spec.steps // 50, "global_step": last,
             "is_hyper_param_search": False, "is_local_process_zero": True, "is_world_process_zero": True,
             "log_history": history, "logging_steps": 1, "max_steps": spec.steps, "num_input_tokens_seen": 0,
             "num_train_epochs": math.ceil(spec.steps / steps_per_epoch), "save_steps": 500,
             "stateful_callbacks": {"TrainerControl": {"args": {"should_epoch_stop": False, "should_evaluate": False,
                                                                "should_log": False, "should_save": True,
                                                                "should_training_stop": True}, "attributes": {}}},
             "total_flos": 1.2e15, "train_batch_size": spec.hparams["batch_size"], "trial_name": None,
             "trial_params": None}
    labels = [str(label) for label in range(spec.n_classes)]
    config = {"architectures": ["DistilBertForSequenceClassification"], "dropout": 0.1, "dim": 768,
              "id2label": dict(enumerate(labels)), "label2id": {label: int(label) for label in labels},
              "model_type": "distilbert", "n_layers": 6, "seq_classif_dropout": 0.2, "transformers_version": "4.46.3"}
    state_text, config_text = json.dumps(state, indent=2, sort_keys=True) + "\n", json.dumps(config, indent=2) + "\n"
    (folder / "trainer_state.json").write_text(state_text)
    (folder / "config.json").write_text(config_text)
    if spec.index % 3 == 0:  # save_total_limit=1 keeps the last checkpoint beside the final state
        checkpoint = folder / f"checkpoint-{last}"
        checkpoint.mkdir()
        (checkpoint / "trainer_state.json").write_text(state_text)
        (checkpoint / "config.json").write_text(config_text)


# ---- MLflow file store ----------------------------------------------------------------------------------------

ML_TAGS = {TRAIN: "train_loss", LR: "lr", GRAD: "grad_norm", VAL_LOSS: "val/loss", VAL_ACC: "val/acc"}


def mlflow_experiment(project_folder: Path, sweep: str) -> Path:
    """The experiment folder of a sweep; created with its meta.yaml (and the Default experiment) on first use."""
    mlruns = project_folder / "mlruns"
    experiment_id = str(zlib.crc32(f"{project_folder.name}/{sweep}".encode()) * 104729 % 10**18)
    experiment = mlruns / experiment_id
    if not experiment.exists():
        created = 1735689600000  # 2025-01-01, in ms as MLflow stores it
        default = mlruns / "0"
        if not default.exists():
            default.mkdir(parents=True)
            _write_yaml(default / "meta.yaml", {"artifact_location": f"file://{default}", "creation_time": created,
                                                "experiment_id": "0", "last_update_time": created,
                                                "lifecycle_stage": "active", "name": "Default"})
        experiment.mkdir()
        _write_yaml(experiment / "meta.yaml", {"artifact_location": f"file://{experiment}", "creation_time": created,
                                               "experiment_id": experiment_id, "last_update_time": created,
                                               "lifecycle_stage": "active", "name": sweep})
    return experiment


def write_mlflow(spec: RunSpec, project_folder: Path) -> Path:
    data = curves(spec)
    experiment = mlflow_experiment(project_folder, spec.sweep)
    run_id = np.random.default_rng([7, spec.index]).bytes(16).hex()
    folder = experiment / run_id
    milliseconds = (data.wall * 1000).astype(np.int64).tolist()
    for canonical, (steps, values) in data.series.items():
        metric = folder / "metrics" / ML_TAGS[canonical]
        metric.parent.mkdir(parents=True, exist_ok=True)
        metric.write_text("".join(f"{milliseconds[step]} {value} {step}\n"
                                  for step, value in zip(steps.tolist(), values.tolist())))
    (folder / "params").mkdir()
    for key, value in spec.hparams.items():
        (folder / "params" / key).write_text(str(value))
    (folder / "tags").mkdir()
    for key, value in {"mlflow.runName": spec.name, "mlflow.source.name": "train.py", "mlflow.source.type": "LOCAL",
                       "mlflow.user": "ml"}.items():
        (folder / "tags" / key).write_text(value)
    last_step = int(data.series[TRAIN][0][-1])
    _write_yaml(folder / "meta.yaml", {
        "artifact_uri": f"file://{folder}/artifacts", "end_time": milliseconds[last_step], "entry_point_name": "",
        "experiment_id": experiment.name, "lifecycle_stage": "active", "run_id": run_id, "run_name": spec.name,
        "source_name": "", "source_type": 4, "source_version": "", "start_time": int(spec.start * 1000),
        "status": 4 if spec.crashed else 3, "tags": [], "user_id": "ml"})
    return folder


def _write_yaml(path: Path, content: dict) -> None:
    path.write_text(yaml.safe_dump(content, sort_keys=True))


# ---- W&B offline run ------------------------------------------------------------------------------------------

WB_TAGS = {TRAIN: "train/loss", LR: "lr", GRAD: "grad_norm", VAL_LOSS: "val/loss", VAL_ACC: "val/acc"}
WB_BLOCK, WB_CHUNK_HEADER = 32768, 7
# wandb_internal.proto field numbers: Record.history 2, Record.run 17, Record.exit 18; HistoryRecord.item 1,
# .step 2; HistoryItem.key 1, .value_json 16; RunRecord.run_id 1, .project 3, .config 4, .display_name 8,
# .start_time 17; ConfigRecord.update 1; RunExitRecord.exit_code 1, .runtime 2


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        low = number & 0x7F
        number >>= 7
        if number:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _message(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _item(key: str, value_json: str) -> bytes:
    return _message(1, key.encode()) + _message(16, value_json.encode())


def _json_number(value: float) -> str:
    return json.dumps(value)  # NaN and Infinity as wandb writes them


def write_wandb(spec: RunSpec, project_folder: Path) -> Path:
    data = curves(spec)
    run_id = "".join(np.random.default_rng([11, spec.index]).choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), 8))
    started = datetime.fromtimestamp(spec.start, timezone.utc).strftime("%Y%m%d_%H%M%S")
    folder = project_folder / "wandb" / f"offline-run-{started}-{run_id}"
    folder.mkdir(parents=True)
    config = b"".join(_message(1, _item(key, json.dumps(value))) for key, value in spec.hparams.items())
    config += _message(1, _item("_wandb", json.dumps({"cli_version": "0.19.1", "python_version": "3.11.9"})))
    seconds = int(spec.start)
    timestamp = _varint(1 << 3) + _varint(seconds) + _varint(2 << 3) + _varint(int((spec.start - seconds) * 1e9))
    run = (_message(1, run_id.encode()) + _message(3, project_folder.name.encode()) + _message(4, config)
           + _message(8, spec.name.encode()) + _message(17, timestamp))
    records = [_message(17, run)]
    wall = data.wall.tolist()
    for step, values in rows(data, WB_TAGS).items():
        items = b"".join(_message(1, _item(tag, _json_number(value))) for tag, value in values.items())
        items += (_message(1, _item("_step", str(step))) + _message(1, _item("_runtime", repr(wall[step] - spec.start)))
                  + _message(1, _item("_timestamp", repr(wall[step]))))
        records.append(_message(2, items + _message(2, _varint(1 << 3) + _varint(step))))
    if not spec.crashed:
        runtime = int(wall[int(data.series[TRAIN][0][-1])] - spec.start)
        records.append(_message(18, _varint(1 << 3) + _varint(0) + _varint(2 << 3) + _varint(runtime)))
    (folder / f"run-{run_id}.wandb").write_bytes(leveldb_log(records))
    return folder


def leveldb_log(records: list[bytes]) -> bytes:
    """wandb's datastore framing: ':W&B' header, then each record in chunks that never cross a 32 KiB block."""
    out = bytearray(b":W&B" + struct.pack("<H", 0xBEE1) + bytes([0]))
    for record in records:
        first, rest = True, memoryview(record)
        while True:
            room = WB_BLOCK - len(out) % WB_BLOCK
            if room < WB_CHUNK_HEADER:
                out += bytes(room)
                continue
            piece, rest = rest[: room - WB_CHUNK_HEADER], rest[room - WB_CHUNK_HEADER:]
            last = not len(rest)
            kind = (1 if last else 2) if first else (4 if last else 3)  # FULL, FIRST, MIDDLE, LAST
            out += struct.pack("<IHB", zlib.crc32(piece, zlib.crc32(bytes([kind]))), len(piece), kind) + piece
            first = False
            if last:
                break
    return bytes(out)


# ---- JSON Lines ---------------------------------------------------------------------------------------------

JSONL_TAGS = {TRAIN: "train_loss", LR: "lr", GRAD: "grad_norm", VAL_LOSS: "val_loss", VAL_ACC: "val_acc"}


def write_jsonl(spec: RunSpec, path: Path) -> None:
    data = curves(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    wall = data.wall.tolist()
    with open(path, "w") as handle:
        for step, values in rows(data, JSONL_TAGS).items():
            handle.write(json.dumps({"step": step, "epoch": step // 100, "wall_time": wall[step], **values}) + "\n")


# ---- the archive -----------------------------------------------------------------------------------------------

def write_run(spec: RunSpec, root: Path) -> Path:
    """Writes one run under ``root``; returns the path curvedoc should call the run."""
    project = root / spec.project
    if spec.format == "tensorboard":
        folder = project / "runs" / spec.sweep / spec.name
        write_tensorboard(spec, folder)
        return folder
    if spec.format == "lightning":
        folder = project / "lightning_logs" / spec.sweep / spec.name
        write_lightning(spec, folder)
        return folder / "metrics.csv"
    if spec.format == "keras":
        folder = project / spec.sweep / spec.name
        write_keras(spec, folder)
        return folder / "training.log"
    if spec.format == "hf":
        folder = project / "outputs" / spec.sweep / spec.name
        write_hf(spec, folder)
        return folder / "trainer_state.json"
    if spec.format == "mlflow":
        return write_mlflow(spec, project)
    if spec.format == "wandb":
        return write_wandb(spec, project)
    path = project / spec.sweep / f"{spec.name}.jsonl"
    write_jsonl(spec, path)
    return path


def archive(n_runs: int) -> Path:
    """The archive of ``n_runs`` runs, written once (a finished archive leaves a manifest beside it)."""
    root = DATA / f"{n_runs}_runs"
    manifest = DATA / f"{n_runs}_runs.json"
    if root.exists() and manifest.exists() and json.loads(manifest.read_text()).get("version") == GENERATOR_VERSION:
        return root
    if root.exists():
        shutil.rmtree(root)  # an interrupted generation, or an older generator's
    root.mkdir(parents=True)
    started = time.perf_counter()
    runs = []
    for spec in plan(n_runs):
        path = write_run(spec, root)
        runs.append({"path": str(path.relative_to(root)), "format": spec.format, "failure": spec.failure,
                     "crashed": spec.crashed, "sweep": spec.sweep, "seed_spread": spec.seed_spread,
                     "hparams": spec.hparams})
        if len(runs) % 200 == 0:
            print(f"  {len(runs)}/{n_runs} runs ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    manifest.write_text(json.dumps({"version": GENERATOR_VERSION, "seconds": time.perf_counter() - started,
                                    "runs": runs}, indent=1))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    root = archive(parser.parse_args().runs)
    print(root)


if __name__ == "__main__":
    main()
