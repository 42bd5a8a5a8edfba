"""What only a comparison of runs shows: the shared machinery of the archive rules (CD8xx, curvedoc.rules.crossrun).

Runs are compared through the hyperparameters their readers found. Each format hands them over differently
(MLflow params are strings, W&B and Lightning configs nest, TensorBoard hparams store every number as a double),
so they are first brought to one form: nested dicts flattened to dotted names, numbers parsed from strings and
rounded to float32 precision, lists compared as values, and bookkeeping dropped — keys that differ between runs
by construction without being a change anyone made to the experiment (output and logging folders, run names and
ids, timestamps, host names, W&B internals, outcomes a trainer state records). A code version or git commit is
kept: a new commit is a change.

Runs are then split into families of comparable runs: the same set of hyperparameter names (the same script and
config layout), the same class count and the same data (the string values of keys naming the data set or task).
A family is what a sweep, a set of seeds or a person's iterations on one problem look like; comparing a metric
across data sets or tasks, or across scripts whose configs do not even share their names, would compare
different quantities. Runs without hyperparameters cannot be compared and are left out.
"""

from __future__ import annotations

import ast
import bisect
import json
import math
import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from curvedoc.audit.summary import CrossRunFinding, MetricEnd, RunSummary
from curvedoc.diagnose import SEVERITY_ORDER, RuleSettings
from curvedoc.rules import ARCHIVE, FoundAcross, Limits, Rule, all_rules, found_items

# The last part of a name a seed goes by (seed, random_seed, manual_seed, data_seed, seed_everything, ...).
SEED_NAME = re.compile(r"(^|[_\-.])(seed|seed_everything|random_state|rng)$|^seed[_\-]", re.IGNORECASE)

# Keys that differ per run by construction: where it writes, what it is called, when and where it ran, and what a
# trainer state records as outcome. Matched on the last part of a dotted name, lower-cased.
BOOKKEEPING_NAMES = {
    # run identity
    "run_name", "run_id", "runid", "run", "trial_name", "trial_id", "job_id", "job_name", "slurm_job_id", "uuid",
    "experiment_id", "exp_name", "experiment_name", "wandb_version",
    # when and where
    "timestamp", "time_stamp", "datetime", "date", "start_time", "end_time", "created_at", "started_at",
    "host", "hostname", "host_name", "node", "nodename", "machine", "pid", "user", "username",
    "local_rank", "rank", "process_index", "world_process_zero",
    # outcomes a Hugging Face trainer_state.json holds next to its arguments
    "best_metric", "best_model_checkpoint", "global_step", "total_flos", "num_input_tokens_seen",
    "is_local_process_zero", "is_world_process_zero", "is_hyper_param_search",
}
# Folders and files a run writes to (its output, logs, checkpoints): per-run paths, not settings.
OUTPUT_PATH = re.compile(
    r"^(output|outputs|out|logdir|outdir|savedir|dirpath|default_root_dir)$|"
    r"^(output|outputs|out|log|logs|logging|save|checkpoint|checkpoints|ckpt|cache|result|results|artifact|"
    r"artifacts|run|runs|exp|experiment|tensorboard|tb|wandb|mlflow|default_root)[_\-]?"
    r"(dir|path|folder|root|location|uri|file|prefix)$", re.IGNORECASE)
# Top-level keys a tracker or trainer state adds: a run's own name, and the metrics summary a trainer state keeps.
TOP_LEVEL_BOOKKEEPING = {"name", "id", "summary", "epoch", "resume_from_checkpoint"}
# A key naming the data or the task: its string value (a data set name, a data path) decides what is measured.
DATA_NAME = re.compile(r"(^|_)(data|dataset|datasets|task|benchmark|corpus)(_|$)", re.IGNORECASE)


def normalized_hparams(hparams: dict[str, Any]) -> dict[str, Hashable]:
    """The hyperparameters as comparable values under dotted names, bookkeeping dropped (see the module doc)."""
    flat: dict[str, Hashable] = {}
    for name, value in _flatten(hparams, ()):
        if not _is_bookkeeping(name):
            flat[".".join(name)] = value
    return dict(sorted(flat.items()))


def _flatten(value: Any, prefix: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], Hashable]]:
    if isinstance(value, str):
        value = _parsed(value)
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(item, (*prefix, str(key)))
    elif prefix:
        yield prefix, _comparable(value)


def _parsed(text: str) -> Any:
    """A string as the value it spells: MLflow logs str(value), so "0.001", "True", "[64, 64]" and "{'a': 1}"
    mean the number, the boolean, the list and the dict they came from."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in {"true", "false"}:
        return lowered == "true"
    if lowered in {"none", "null"}:
        return None
    try:
        return float(stripped)
    except ValueError:
        pass
    if stripped[:1] and stripped[0] in "[({":
        for parse in (json.loads, ast.literal_eval):
            try:
                return parse(stripped)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return text


def _comparable(value: Any) -> Hashable:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        if not math.isfinite(number):
            return repr(number)
        # float32 precision: a value logged as a double by one writer and as a float32 or a string by another
        rounded = float(f"{number:.7g}")
        return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded
    if isinstance(value, (list, tuple)):
        return tuple(_comparable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(key), _comparable(item)) for key, item in value.items()))
    if isinstance(value, str):
        parsed = _parsed(value)
        return value if isinstance(parsed, str) else _comparable(parsed)
    return str(value)


def _is_bookkeeping(name: tuple[str, ...]) -> bool:
    last = name[-1].lower()
    if any(part.lower() == "_wandb" or part.lower().startswith("_wandb") for part in name):
        return True
    if len(name) == 1 and last in TOP_LEVEL_BOOKKEEPING:
        return True
    return last in BOOKKEEPING_NAMES or bool(OUTPUT_PATH.match(last))


def is_seed(name: str) -> bool:
    return bool(SEED_NAME.search(name.rsplit(".", 1)[-1]))


def show(value: Hashable) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return "[" + ", ".join(show(item) for item in value) + "]"
    return str(value)


@dataclass
class Family:
    """Runs that can be compared (see the module doc), in the order they started; runs without a start time
    come last, by path."""

    runs: list[RunSummary]
    params: dict[str, dict[str, Hashable]]  # run path → normalised hyperparameters
    n_classes: int | None = None
    data: dict[str, Hashable] = field(default_factory=dict)  # the data/task keys every run shares
    archive_starts: list[float] = field(default_factory=list)  # when every run of the archive started, sorted

    @property
    def names(self) -> list[str]:
        return list(self.params[self.runs[0].path])

    @property
    def seed_names(self) -> list[str]:
        return [name for name in self.names if is_seed(name)]

    def config(self, run: RunSummary) -> tuple:
        """The run's settings apart from its seeds: equal configs are repeats of one experiment."""
        return tuple((name, value) for name, value in self.params[run.path].items() if not is_seed(name))

    def changed(self, before: RunSummary, after: RunSummary) -> list[str]:
        """Non-seed hyperparameters whose values differ between two runs."""
        old, new = self.params[before.path], self.params[after.path]
        return [name for name in old if not is_seed(name) and old[name] != new[name]]

    def varied(self, runs: list[RunSummary]) -> list[str]:
        """Non-seed hyperparameters that take more than one value over ``runs``."""
        return [name for name in self.names
                if not is_seed(name) and len({self.params[run.path][name] for run in runs}) > 1]

    def value(self, run: RunSummary, name: str) -> str:
        return show(self.params[run.path][name])

    def settings(self, run: RunSummary, names: Iterable[str]) -> str:
        return ", ".join(f"{name}={self.value(run, name)}" for name in names)

    def seed_groups(self) -> list[list[RunSummary]]:
        """Runs of equal configs (repeats that differ at most in their seeds), two or more, in run order."""
        groups: dict[tuple, list[RunSummary]] = {}
        for run in self.runs:
            groups.setdefault(self.config(run), []).append(run)
        return [group for group in groups.values() if len(group) > 1]

    def started_between(self, begin: float, end: float) -> bool:
        """Whether any run of the archive started strictly between ``begin`` and ``end``."""
        index = bisect.bisect_right(self.archive_starts, begin)
        return index < len(self.archive_starts) and self.archive_starts[index] < end

    @property
    def timed(self) -> bool:
        """Whether every run knows when it started, so that "consecutive" means something."""
        return all(run.start_time is not None for run in self.runs)


def comparable_metric(runs: list[RunSummary], roles: Iterable[str]) -> tuple[str, list[tuple[RunSummary, MetricEnd]]]:
    """The first of ``roles`` that at least two of ``runs`` end with a finite value, logged under one tag (the
    most common one), with those runs; ("", []) when none is."""
    for role in roles:
        ends = [(run, run.metrics[role]) for run in runs if role in run.metrics
                and math.isfinite(run.metrics[role].final)]
        tags = [end.tag for _, end in ends]
        if tags:
            tag = max(sorted(set(tags)), key=tags.count)
            ends = [(run, end) for run, end in ends if end.tag == tag]
            if len(ends) >= 2:
                return role, ends
    return "", []


def families(summaries: Iterable[RunSummary]) -> list[Family]:
    """The archive's families of comparable runs, in a deterministic order (by their first run's path)."""
    grouped: dict[tuple, list[tuple[RunSummary, dict[str, Hashable]]]] = {}
    summaries = list(summaries)
    starts = sorted(run.start_time for run in summaries if run.start_time is not None)
    for run in summaries:
        params = normalized_hparams(run.hparams)
        if not params:
            continue
        data = tuple((name, value) for name, value in params.items()
                     if isinstance(value, str) and any(DATA_NAME.search(part) for part in name.split(".")))
        grouped.setdefault((tuple(params), run.n_classes, data), []).append((run, params))
    found = []
    for (_, n_classes, data), members in grouped.items():
        members.sort(key=lambda item: (item[0].start_time is None, item[0].start_time or 0.0, item[0].path))
        found.append(Family([run for run, _ in members], {run.path: params for run, params in members},
                            n_classes, dict(data), starts))
    return sorted(found, key=lambda family: min(run.path for run in family.runs))


def cross_run_findings(summaries: list[RunSummary], settings: RuleSettings | None = None) -> list[CrossRunFinding]:
    """Every finding of every enabled archive rule over ``summaries``, most severe first, then by code and runs."""
    settings = settings or RuleSettings()
    rules = [rule for rule in all_rules(ARCHIVE) if settings.enabled(rule)]
    findings = []
    for family in families(summaries):
        for rule in rules:
            limits = Limits(rule.thresholds, settings.thresholds.get(rule.code, {}))
            findings.extend(_finding(rule, item) for item in found_items(rule.detect(family, limits)))
    findings.sort(key=lambda finding: (SEVERITY_ORDER[finding.severity], finding.code, finding.runs))
    return findings


def _finding(rule: Rule, found: FoundAcross) -> CrossRunFinding:
    return CrossRunFinding(
        code=rule.code, symptom=rule.symptom, severity=found.severity or rule.severity, title=found.title,
        runs=list(found.runs), hparams=list(found.hparams), evidence=list(found.evidence), causes=list(rule.causes),
        cheapest_check=rule.check,
    )
