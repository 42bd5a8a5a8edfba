"""The tidy model every reader fills and every rule reads: runs of scalar curves with roles and metadata.

A run's scalars are one long DataFrame (``tag, step, wall_time, value``). NaN and ±Inf that the training
logged stay in ``value``: they are the evidence. "Not logged at this step" is simply the absence of a row,
so the two can never be confused.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from copy import deepcopy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from curvedoc.datasets import named_benchmark
from curvedoc.roles import (Role, infer_role, is_total_norm, mark_abbreviated_splits, mark_errors_as_losses,
                            mark_gan_terms, mark_training_metrics, primary_tag)


CLASSES, VOCABULARY = "classes", "vocabulary"  # RunMeta.n_classes_kind
POINT_COUNT_BLOCK = 1 << 20  # codes counted at a time by Run.point_counts
# Keys under which configs of real frameworks record the number of output classes (HF: num_labels; YOLO: nc;
# PaddleClas: class_num)
CLASS_COUNT_KEYS = frozenset({
    "num_classes", "n_classes", "nb_classes", "num_class", "n_class", "nclasses", "numclasses", "number_of_classes",
    "num_labels", "n_labels", "nc", "classes", "class_num", "classes_num",
})
# ... and the vocabulary of a language model, whose output layer predicts one token of it
# (a character-level model's output is one of its characters)
VOCABULARY_KEYS = frozenset({"vocab_size", "n_vocab", "ntokens", "ntoken", "vocabulary_size", "vocab", "num_chars",
                             "n_chars"})
# A key that only ends with one of these after an underscore (``found_vocab_size``: nanoGPT's printed "found
# vocab_size = 65" as a text log's setting; ``tgt_vocab_size``) is weaker evidence: it counts only when no key
# names a count exactly, and at the lowest tier
SUFFIX_TIER = 3
# Weakest of all, a classification report of the run's evaluation: the classes its held-out split had
REPORT_TIER = 4
REPORT_AVERAGES = frozenset({"macro avg", "weighted avg", "micro avg", "samples avg"})
REPORT_ORDER = ("precision", "recall", "f1-score", "support")  # its columns, as it prints and saves them
REPORT_SCORES = frozenset(REPORT_ORDER)
MULTI_LABEL_AVERAGE = "samples avg"
REPORTED_KEY = "classification report"  # where a count came from, when a whole file or log section is the report
# The report as classification_report prints it: its header, a class's (or an average's) row, the accuracy's row
PRINTED_REPORT_HEADER = re.compile(r"\s*precision\s+recall\s+f1-score\s+support\s*")
_REPORTED = r"(?:\d+(?:\.\d*)?|\.\d+|nan)"
PRINTED_REPORT_ROW = re.compile(
    rf"\s*(?P<name>\S.*?)\s+(?P<precision>{_REPORTED})\s+(?P<recall>{_REPORTED})\s+(?P<f1>{_REPORTED})"
    rf"\s+(?P<support>\d+(?:\.\d*)?)\s*")
PRINTED_ACCURACY_ROW = re.compile(rf"\s*accuracy\s+(?P<score>{_REPORTED})\s+\d+(?:\.\d*)?\s*")
# ... unless its first word makes it a bound (max_vocab_size), not the count
CAP_WORDS = frozenset({"max", "min", "maximum", "minimum", "limit"})
# The first word of a count key that names the output side of an encoder-decoder (tgt_vocab_size beside
# src_vocab_size)
OUTPUT_SIDE = frozenset({"tgt", "trg", "target", "dec", "decoder", "output"})
# A map between the classes and their indices, one entry a class: HF's id2label and label2id, torchvision's
# class_to_idx, a script's idx_to_class or index_to_label
LABEL_MAP_KEY = re.compile(
    r"^(?:(?P<named>class(?:es)?|labels?|categor(?:y|ies))[_\-]?(?:to|2)[_\-]?(?:idx|ids?|index)"
    r"|(?:idx|ids?|index)[_\-]?(?:to|2)[_\-]?(?:class(?:es)?|labels?|categor(?:y|ies)))$")
# Lists of the class names: their length is the count (YOLO's names, torchvision's classes)
LABEL_LISTS = frozenset({"classes", "class_names", "classnames", "label_names", "names", "labels"})
# nc and names are YOLO's only beside the rest of a YOLO data or model config (a DCGAN's nc is its channels)
YOLO_KEYS = ("nc", "names")
YOLO_CONTEXTS = ({"nc", "names"}, {"train", "val"}, {"backbone", "head"})
# In Ultralytics' args.yaml, classes is the class filter of predictions ([0, 2]), not a count
ULTRALYTICS_ARGS = {"task", "mode", "data"}
# HF's default labels, LABEL_0 and LABEL_1, in every config that never set its classes (an LM's config too); more
# of them mean num_labels was set
PLACEHOLDER_LABEL = re.compile(r"^LABEL_\d+$")
HF_DEFAULT_NUM_LABELS = 2
# An LR group whose first value is this many times its peak after its first tenth warms down to the schedule
WARM_DOWN_FACTOR = 2.0
# Heads that generate tokens (the composite VisionEncoderDecoder/SpeechEncoderDecoderModel of TrOCR and friends too):
# their output count is the (decoder's) vocabulary
LM_ARCHITECTURE = re.compile(
    r"(ForCausalLM|LMHeadModel|ForConditionalGeneration|ForSeq2SeqLM|ForSpeechSeq2Seq|EncoderDecoderModel)$")
CLASSIFIER_ARCHITECTURE = re.compile(r"For\w*Classification$")
# Detectron2's COCO evaluator logs one AP per category: bbox/AP-<class>, segm/AP-<class>
PER_CLASS_AP_TAG = re.compile(r"^(?:bbox|segm)/AP-(.+)$")
# Blocks that describe the model itself: its output count wins over a dataset's or a pretraining stage's
# Detectron2's head blocks, and the words of the meta-architectures that use each (GeneralizedRCNN and PanopticFPN
# classify their boxes in ROI_HEADS; a RetinaNet, or a project's RelationRetinaNet, in RETINANET)
DETECTRON2_HEADS = {"roi_heads": ("rcnn", "panoptic"), "retinanet": ("retinanet",),
                    "sem_seg_head": ("semanticsegmentor",)}
MODEL_BLOCKS = frozenset({"model", "net", "network", "arch", "architecture", "head", "classifier", "module"})
# Keys that say the run loads a pretrained model's weights. A model config's own ``_name_or_path`` is not one: a
# model trained from scratch on a borrowed architecture (AutoConfig.from_pretrained("gpt2")) carries it too.
BASE_MODEL_KEYS = ("base_model_name_or_path", "model_name_or_path", "pretrained_model_name_or_path")


class ClassCount(NamedTuple):
    count: int
    key: str  # where in the config: "num_labels", "model.num_classes", MLflow's "model/num_classes"
    kind: str  # CLASSES, or VOCABULARY for a language model (chance loss ln of the vocabulary size)


@dataclass(frozen=True)
class _Candidate:
    count: int
    key: str
    tier: int  # 0 in a model block, 1 at the top level, 2 anywhere else
    placeholder: bool  # HF's LABEL_0, LABEL_1 …


def n_classes_from(params: Mapping[str, Any]) -> ClassCount | None:
    """The output class count a config declares (or a language model's vocabulary size), and the key it came from.

    Nested keys are searched by their last part; nesting shows as dicts or as flattened names (``model.num_classes``,
    MLflow's ``model/num_classes``). A count in the model block beats one at the top level, which beats one
    elsewhere (a dataset block); two different counts at the best level are ambiguous, and give none. A class count
    beats a vocabulary size, except in the config of a language model (its ``architectures`` name a generative LM
    head); the vocabulary of an HF config naming another architecture is an encoder's input, not an output. HF's
    default labels (``LABEL_0``, ``LABEL_1``: in every config that never set its classes) beside a vocabulary size
    say nothing either way, and give none; an HF classifier's config without labels has HF's default two.
    """
    classes: list[_Candidate] = []
    vocabulary: list[_Candidate] = []
    architectures: list[str] = []
    entries = list(_entries(params, into_lists=True))
    if any(parts[-1].lower() == "problem_type" and value == "regression" for parts, _, value, _ in entries):
        return None  # an HF model with a regression head (num_labels 1): it predicts a number, no class
    label_maps = any(LABEL_MAP_KEY.match(parts[-1].lower()) for parts, _, _, _ in entries)
    unused_heads = _unused_detectron2_heads(entries)
    for parts, name, value, siblings in entries:
        if unused_heads & {part.lower() for part in parts[:-1]}:
            continue
        last, suffixed = _count_key(parts[-1].lower())
        # a count in a list of blocks (one per input, per metric) names the run's output only when nothing else does
        tier = (SUFFIX_TIER if suffixed or "[" in name else 0 if MODEL_BLOCKS & {part.lower() for part in parts[:-1]}
                else 1 if len(parts) == 1 else 2)
        if last == "architectures" and isinstance(value, list):
            architectures += [str(item) for item in value]
        if last in YOLO_KEYS and not any(context <= siblings for context in YOLO_CONTEXTS):
            continue
        if last == "classes" and ULTRALYTICS_ARGS <= siblings:
            continue
        if last in CLASS_COUNT_KEYS and (count := _as_count(value)) is not None:
            classes.append(_Candidate(count, name, tier, False))
        elif (label_map := LABEL_MAP_KEY.match(last)) and isinstance(value, Mapping) and len(value) >= 2:
            labels = value.keys() if label_map["named"] else value.values()
            placeholder = len(value) == HF_DEFAULT_NUM_LABELS and all(
                PLACEHOLDER_LABEL.match(str(label)) for label in labels)
            classes.append(_Candidate(len(value), name, tier, placeholder))
        elif last in LABEL_LISTS and (count := _distinct_labels(value)) is not None:
            classes.append(_Candidate(count, name, tier, False))
        elif last in VOCABULARY_KEYS and (count := _as_count(value)) is not None:
            vocabulary.append(_Candidate(count, name, tier, False))
        elif isinstance(value, Mapping) and (count := classes_reported(value)) is not None:
            classes.append(_Candidate(count, name, REPORT_TIER, False))
    if (count := classes_reported(params)) is not None:  # a file that is the report (classification_report.json)
        classes.append(_Candidate(count, REPORTED_KEY, REPORT_TIER, False))
    named = [found for found in classes if not found.placeholder]
    placeholders = [found for found in classes if found.placeholder]
    generative = any(LM_ARCHITECTURE.search(name) for name in architectures)
    classifier = next((name for name in architectures if CLASSIFIER_ARCHITECTURE.search(name)), None)
    if architectures and not generative:
        vocabulary = []  # an encoder's config (BertForMaskedLM: a fine-tune's base) holds its input vocabulary
    if vocabulary and generative:
        return _agreed(vocabulary, VOCABULARY)
    if named:
        return _agreed(named, CLASSES)
    # HF's default labels (LABEL_0, LABEL_1) are in every model config's dict: a class count only beside a
    # classifier's head, or where nothing names a model at all (a bare settings dump of a classifier's run)
    if placeholders and (classifier or not (vocabulary or architectures)):
        return _agreed(placeholders, CLASSES)
    if classifier and not classes and not label_maps:
        # HF saves id2label only when it differs from the default: a classifier's config without it has 2 labels
        return ClassCount(HF_DEFAULT_NUM_LABELS, f"architectures ({classifier}, default num_labels)", CLASSES)
    if vocabulary and not placeholders:
        return _agreed(vocabulary, VOCABULARY)
    return None


def _unused_detectron2_heads(entries: list) -> set[str]:
    """The head blocks of a Detectron2 config that its ``MODEL.META_ARCHITECTURE`` does not use: the config holds
    every head's block with its default count (ROI_HEADS 80, RETINANET 80, SEM_SEG_HEAD 54) beside the one the
    model has. None for an architecture that names none of the heads (a project's own)."""
    architecture = next((str(value).lower() for parts, _, value, _ in entries
                         if parts[-1].lower() == "meta_architecture" and isinstance(value, str)), None)
    if architecture is None:
        return set()
    used = {head for head, names in DETECTRON2_HEADS.items() if any(name in architecture for name in names)}
    return set(DETECTRON2_HEADS) - used if used else set()


def _count_key(key: str) -> tuple[str, bool]:
    """The count key ``key`` names: itself, or the longest count or vocabulary key it ends with after an underscore
    (True then), else itself."""
    if key in CLASS_COUNT_KEYS or key in VOCABULARY_KEYS or "_" not in key:
        return key, False
    words = key.split("_")
    if words[0] in CAP_WORDS:
        return key, False  # max_vocab_size: a cap a tokenizer may stay far below, not the vocabulary
    for start in range(1, len(words)):
        ending = "_".join(words[start:])
        if ending in CLASS_COUNT_KEYS or ending in VOCABULARY_KEYS:
            return ending, True
    return key, False


def classes_reported(report: Mapping[str, Any]) -> int | None:
    """The class count of scikit-learn's ``classification_report(..., output_dict=True)`` saved with a run's
    results: one entry of scores per class beside the averages over them. A multi-label report (its ``samples
    avg``) counts labels, each a yes-or-no task of its own, whose chance is no uniform guess over them."""
    if not REPORT_AVERAGES & set(report) or MULTI_LABEL_AVERAGE in report:
        return None
    per_class = [key for key, value in report.items()
                 if key not in REPORT_AVERAGES and isinstance(value, Mapping) and REPORT_SCORES <= set(value)]
    return len(per_class) if len(per_class) >= 2 else None


class PrintedReports:
    """scikit-learn's ``classification_report`` as it prints, fed a text's lines one at a time: a header of its
    four scores, a row per class (its name, then precision, recall, f1-score and support), then the accuracy and
    the averages over the classes. ``classes`` is the most classes one whole report lists: each lists only those
    its split holds or its model predicts."""

    def __init__(self) -> None:
        self.report: dict[str, Any] | None = None  # the report being read
        self.averaged = False  # its averages have begun: a class row now belongs to the text after it
        self.classes: int | None = None

    def take(self, text: str) -> bool:
        """Whether ``text`` is a line of a report (and so no line of the text's own values)."""
        if self.report is None:
            if "f1-score" in text and PRINTED_REPORT_HEADER.fullmatch(text):
                self.report, self.averaged = {}, False
                return True
            return False
        if not text.strip():
            return True  # the blank lines around its class rows
        if (accuracy := PRINTED_ACCURACY_ROW.fullmatch(text)) is not None:
            self.report["accuracy"], self.averaged = float(accuracy["score"]), True
            return True
        row = PRINTED_REPORT_ROW.fullmatch(text)
        if row is None or (self.averaged and row["name"] not in REPORT_AVERAGES):
            self.close()
            return self.take(text)  # the next report's header, or a line of the text
        scores = row.group("precision", "recall", "f1", "support")
        self.report[row["name"]] = dict(zip(REPORT_ORDER, map(float, scores), strict=True))
        self.averaged = self.averaged or row["name"] in REPORT_AVERAGES
        return True

    def close(self) -> None:
        """Ends the report being read (the text went on to other lines, or ended)."""
        if self.report is not None and (count := classes_reported(self.report)) is not None:
            self.classes = max(self.classes or 0, count)
        self.report = None


def report_facts(count: int | None) -> ConfigFacts:
    """What a classification report (printed in a log or saved beside it) says of the run: its class count."""
    return ConfigFacts(count=count and ClassCount(count, REPORTED_KEY, CLASSES))


def classes_in_printed_reports(text: str) -> int | None:
    """The class count of the classification reports ``text`` prints (see PrintedReports), or None."""
    reports = PrintedReports()
    for line in text.splitlines():
        reports.take(line)
    reports.close()
    return reports.classes


def _agreed(candidates: list[_Candidate], kind: str) -> ClassCount | None:
    best = min(found.tier for found in candidates)
    chosen = [found for found in candidates if found.tier == best]
    if len({found.count for found in chosen}) > 1:
        # a translation model's source and target vocabularies: its output predicts the target's
        chosen = [found for found in chosen
                  if re.split(r"[./]", found.key)[-1].split("_")[0].lower() in OUTPUT_SIDE]
        if len({found.count for found in chosen}) != 1:
            return None
    return ClassCount(chosen[0].count, chosen[0].key, kind)


def base_model_from(params: Mapping[str, Any]) -> str | None:
    """The pretrained model a config says the run starts from (a PEFT adapter's base, --model_name_or_path)."""
    found = {parts[-1].lower(): value for parts, _, value, _ in _entries(params) if len(parts) <= 2}
    for key in BASE_MODEL_KEYS:
        value = found.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# The base model's own loss on the task, where a run's config records it (measured before fine-tuning)
BASE_LOSS_KEYS = ("base_loss", "base_model_loss", "baseline_loss", "base_eval_loss", "pretrained_loss",
                  "reference_loss")


def base_loss_from(params: Mapping[str, Any]) -> tuple[str, float] | None:
    """(key, value) of the base model's loss a config records, or None."""
    found = {parts[-1].lower(): (name, value) for parts, name, value, _ in _entries(params) if len(parts) <= 2}
    for key in BASE_LOSS_KEYS:
        name, value = found.get(key, (None, None))
        number = _as_number(value)
        if number is not None and math.isfinite(number) and number > 0:
            return name, number
    return None


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


LANGUAGE_MODEL_TASKS = {"CAUSAL_LM", "SEQ_2_SEQ_LM"}  # a PEFT adapter's task_type
LANGUAGE_MODEL_HEADS = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration", "ForMaskedLM")


def language_model_from(config: Mapping[str, Any]) -> bool:
    """Whether a config says the model predicts tokens (a PEFT adapter's task_type, an HF model's architecture):
    its chance level is ln(vocabulary), never ln(k) of a few classes."""
    architectures = config.get("architectures")
    return config.get("task_type") in LANGUAGE_MODEL_TASKS or (
        isinstance(architectures, list)
        and any(isinstance(name, str) and name.endswith(LANGUAGE_MODEL_HEADS) for name in architectures))


class ConfigFacts(NamedTuple):
    """What a configuration says of a run: its class count, the pretrained base it fine-tunes, whether it is a
    language model, the base model's loss ((key, value))."""

    count: ClassCount | None = None
    base_model: str | None = None
    language_model: bool = False
    base_loss: tuple[str, float] | None = None
    benchmark: tuple[str, int] | None = None  # (where the config names a public benchmark, its class count)
    checkpoint: str | None = None  # the checkpoint a model config was loaded from (its own ``_name_or_path``)


def facts_from(config: Mapping[str, Any]) -> ConfigFacts:
    return ConfigFacts(n_classes_from(config), base_model_from(config), language_model_from(config),
                       base_loss_from(config), named_benchmark(_entries(config)), _loaded_from(config))


def _loaded_from(config: Mapping[str, Any]) -> str | None:
    """A model config's own ``_name_or_path``: the checkpoint ``from_pretrained`` read it from. The weights came
    from there too unless the run only borrowed the architecture (``AutoConfig.from_pretrained`` then
    ``from_config``), so it is no base model a finding may accuse the run of not starting from, but it explains a
    loss that starts where a pretrained model's does."""
    named = config.get("_name_or_path")
    return named.strip() if isinstance(named, str) and named.strip() else None


def complete_meta(meta: RunMeta, source: str, facts: ConfigFacts) -> None:
    """Gives ``meta`` what ``facts`` (read from ``source``) say where it does not know it yet: the first config to
    state a fact wins (the run's own hyperparameters, then configs it logged, then companion files)."""
    if meta.n_classes is None and facts.count:
        meta.n_classes, meta.n_classes_kind = facts.count.count, facts.count.kind
        meta.n_classes_source = f"{source}: {facts.count.key}"
    if meta.base_model is None and facts.base_model:
        meta.base_model, meta.base_model_source = facts.base_model, source
    meta.language_model = meta.language_model or facts.language_model
    if meta.base_loss is None and facts.base_loss:
        meta.base_loss, meta.base_loss_source = facts.base_loss[1], f"{source}: {facts.base_loss[0]}"
    if meta.benchmark_classes is None and facts.benchmark:
        meta.benchmark_classes = (f"{source}: {facts.benchmark[0]}", facts.benchmark[1])
    if meta.checkpoint is None and facts.checkpoint:
        meta.checkpoint, meta.checkpoint_source = facts.checkpoint, f"{source}: _name_or_path"


def _as_count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return int(number) if number.is_integer() and number >= 2 else None


def _distinct_labels(value: Any) -> int | None:
    """The length of a list of class names, an index → name mapping, or a name → index mapping numbering them 0, 1,
    … (a config's ``labels: {fresh: 0, rotten: 1}``, Keras' ``class_indices``). Numbers alone are class indices (a
    filter of some classes), and a list with repeats is data: neither counts the classes."""
    if isinstance(value, Mapping):
        numbered = sorted(index for index in value.values() if isinstance(index, int) and not isinstance(index, bool))
        value = list(map(str, value)) if numbered == list(range(len(value))) else list(value.values())
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(item, str) for item in value):
        return None
    return len(value) if len(set(value)) == len(value) else None


def _entries(params: Mapping[str, Any], prefix: tuple[str, ...] = (), name_prefix: str = "",
             into_lists: bool = False):
    """Every (key parts, dotted name, value, last parts of the keys beside it) of a nested config; ``into_lists``: the
    settings in a list of blocks too, under the list's key and named with their index (pytorch_tabular's
    ``metrics_params[0].num_classes``). Only a class count is looked for there: a long list of blocks is more often
    data (per-example records in a report) than settings, and walked once, not by every fact read off a config."""
    siblings = {re.split(r"[./]", str(key))[-1].lower() for key in params}
    for key, value in params.items():
        parts = (*prefix, *([part for part in re.split(r"[./]", str(key)) if part] or [str(key)]))
        name = f"{name_prefix}{key}"
        if isinstance(value, Mapping) and not LABEL_MAP_KEY.match(str(key).lower()):
            yield from _entries(value, parts, name + ".", into_lists)
        elif into_lists and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    yield from _entries(item, parts, f"{name}[{index}].", into_lists)
        yield parts, name, value, siblings


@dataclass
class RunMeta:
    n_classes: int | None = None
    # where n_classes came from: "config: num_classes", "config.json: num_labels", "--num-classes"
    n_classes_source: str | None = None
    # what n_classes counts: "classes", or "vocabulary" for a language model, whose chance loss is ln(vocabulary)
    n_classes_kind: str | None = None
    # the pretrained model the run fine-tunes, when a config or a PEFT adapter_config.json names it
    base_model: str | None = None
    base_model_source: str | None = None  # the file or config that names it: "adapter_config.json"
    # a config says the model predicts tokens: its chance level is ln(vocabulary), known or not
    language_model: bool = False
    # the base model's own loss on the task, and where it was read (--baseline RUN: that run's last loss)
    base_loss: float | None = None
    base_loss_source: str | None = None
    # a public benchmark the config names instead of a class count: (where, its class count); see curvedoc.datasets
    benchmark_classes: tuple[str, int] | None = None
    # the checkpoint the model's config was loaded from (weights, or only the architecture), and where it was read
    checkpoint: str | None = None
    checkpoint_source: str | None = None
    # the class count the diagnosis read off the curves where the run records none (curvedoc.classcount), when a
    # finding rests on it
    assumed_n_classes: int | None = None
    hparams: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    start_time: float | None = None  # unix seconds, when the format records it


@dataclass
class Generation:
    """One output the model generated on an evaluation prompt, as the run logged it (untrusted text)."""

    text: str
    prompt: str | None = None
    finish_reason: str | None = None  # "length" when it hit the token limit, where the generator said so
    tokens: int | None = None  # its length in tokens, where logged
    step: int | None = None
    source: str = ""  # the file it was read from


@dataclass
class Run:
    path: str
    format: str
    scalars: pd.DataFrame
    roles: dict[str, Role]
    meta: RunMeta = field(default_factory=RunMeta)
    warnings: list[str] = field(default_factory=list)
    name: str = ""
    findings: list = field(default_factory=list)  # filled by curvedoc.diagnose
    insufficient: str | None = None  # filled by curvedoc.diagnose: why the run holds too little to judge
    not_checked: list[str] = field(default_factory=list)  # filled by curvedoc.diagnose: checks without their curves
    generations: list[Generation] = field(default_factory=list)  # read by curvedoc.readers.generations

    def __post_init__(self) -> None:
        if not self.name:
            self.name = os.path.basename(os.path.normpath(self.path)) or self.path

    @property
    def tags(self) -> list[str]:
        return list(self.roles)

    def series(self, tag: str) -> pd.DataFrame:
        """One tag's curve, sorted by step: columns ``step, wall_time, value``."""
        rows = self.scalars[self.scalars["tag"] == tag]
        return rows[["step", "wall_time", "value"]].reset_index(drop=True)

    def tags_with(self, role: Role | str) -> list[str]:
        role = Role(role)
        return [tag for tag, tag_role in self.roles.items() if tag_role == role]

    def primary(self, role: Role | str) -> str | None:
        """The tag a person would plot for ``role`` (the total loss, not one of its components; never a loss term that
        is exactly 0 throughout beside one that is not). For gradient norms only a total norm qualifies: None when the
        run logs per-layer norms alone (see ``roles.is_total_norm``)."""
        tags = self.tags_with(role)
        if Role(role) is Role.GRAD_NORM:
            tags = [tag for tag in tags if is_total_norm(tag)]
        if Role(role) is Role.LR and len(tags) > 1:
            # Ultralytics' bias group warms down from warmup_bias_lr (0.1) to lr0 (0.01) while its other groups warm
            # up: a group that starts far above where it later peaks is not the schedule the run follows
            tags = [tag for tag in tags if not self._warms_down(tag)] or tags
        if Role(role) in (Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TEST_LOSS) and len(tags) > 1:
            # a term logged as exactly 0 at every point (YOLO's unused sem_loss) is no curve a person plots
            nonzero = self._ever_nonzero(tags)
            tags = [tag for tag in tags if tag in nonzero] or tags
        return primary_tag(tags, self.point_counts())

    def _ever_nonzero(self, tags: list[str]) -> set[str]:
        """Those of ``tags`` with a value other than 0 (NaN counts), in one pass over the table."""
        rows = self.scalars
        return set(rows.loc[rows["tag"].isin(tags) & (rows["value"] != 0), "tag"].unique())

    def _warms_down(self, tag: str) -> bool:
        values = self.series(tag)["value"].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        later = values[max(1, len(values) // 10):]
        return len(later) > 0 and values[0] > WARM_DOWN_FACTOR * later.max() > 0

    def point_counts(self) -> dict[str, int]:
        # numpy over the categorical codes: rules ask for this per role, and pandas' value_counts cost ~1 ms a call
        import pandas as pd

        tags = self.scalars["tag"]
        if not isinstance(tags.dtype, pd.CategoricalDtype):
            tags = tags.astype("category")
        names = tags.cat.categories.tolist()
        counts = blocked_bincount(tags.cat.codes.to_numpy(), len(names), POINT_COUNT_BLOCK)
        return dict(zip(names, counts.tolist(), strict=True))

    def set_roles(self, overrides: Mapping[str, str]) -> None:
        """Apply user overrides ``{role: tag}``; a tag named for a role takes it, other tags keep theirs."""
        for role, tag in overrides.items():
            if tag in self.roles:
                self.roles[tag] = Role(role)

    def set_n_classes(self, n_classes: int, source: str, kind: str = CLASSES) -> None:
        self.meta.n_classes = n_classes
        self.meta.n_classes_source = source
        self.meta.n_classes_kind = kind

    def _repr_html_(self) -> str:
        """The run as a notebook shows it: its verdict, findings and plots, as in the HTML report."""
        # imported here: the report pulls in matplotlib, which `import curvedoc` must not
        from curvedoc.report.html import notebook_html

        return notebook_html([self])


class RunBuilder:
    """Collects one run's points as numpy chunks and turns them into a :class:`Run` once.

    Readers hand over whole arrays per tag, never rows, so building stays linear in the number of points.
    ``split_hint`` records that a tag came from a folder naming its split (Keras's ``validation/``).
    ``loss_hint`` records that the log's format prints the tag as a loss whatever its name (see ``infer_role``);
    ``score_hint`` that it prints the tag as the run's score when its name says nothing else (a bare average on an
    agent's episode lines).
    ``hparams_source`` names the run's hyperparameters in ``n_classes_source`` ("config", "MLflow param").
    """

    def __init__(self, path: str | os.PathLike[str], fmt: str, name: str = ""):
        self.path = os.fspath(path)
        self.format = fmt
        self.name = name
        self.meta = RunMeta()
        self.warnings: list[str] = []
        self.hparams_source = "config"
        self._chunks: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self._split_hint: dict[str, str] = {}
        self._loss_hint: set[str] = set()
        self._score_hint: set[str] = set()
        # configurations the run logged (searched at build), or the facts already read from one
        self._configs: list[tuple[str, Mapping[str, Any] | ConfigFacts]] = []
        self.generations: list[Generation] = []  # outputs the log itself holds (TensorBoard text)

    def add(self, tag: str, steps, values, wall_times=None, split_hint: str | None = None,
            loss_hint: bool = False, score_hint: bool = False) -> None:
        steps = np.asarray(steps, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if wall_times is None:
            wall_times = np.full(len(steps), np.nan)
        wall_times = np.asarray(wall_times, dtype=np.float64).reshape(-1)
        if not (len(steps) == len(values) == len(wall_times)):
            raise ValueError(f"tag {tag!r}: steps, values and wall times differ in length")
        self._chunks.setdefault(tag, []).append((steps, values, wall_times))
        if split_hint:
            self._split_hint[tag] = split_hint
        if loss_hint:
            self._loss_hint.add(tag)
        if score_hint:
            self._score_hint.add(tag)

    def warn(self, message: str) -> None:
        """Notes a problem once: the rows of each split of one table meet the same one."""
        message = " ".join(message.split())
        if message not in self.warnings:
            self.warnings.append(message)

    def add_file(self, path: str | os.PathLike[str]) -> None:
        self.meta.files.append(os.fspath(path))

    def add_config(self, source: str, config: Mapping[str, Any] | ConfigFacts) -> None:
        """A configuration the run logged besides its hyperparameters (a TensorBoard text summary of the model
        config), or the facts a reader read from one (a Keras model's graph): searched for the class count after
        the hyperparameters, in the order added."""
        self._configs.append((source, config))

    def without_points(self) -> RunBuilder:
        """A builder that knows what this one knows of the run but holds none of its points: a reader of a growing
        run keeps one such of its notes and builds each look's run from a copy, since building completes the meta."""
        copy = RunBuilder(self.path, self.format, self.name)
        copy.meta = deepcopy(self.meta)
        copy.warnings = list(self.warnings)
        copy.hparams_source = self.hparams_source
        copy._configs = list(self._configs)
        copy.generations = list(self.generations)
        return copy

    @property
    def has_points(self) -> bool:
        return any(len(c[0]) for chunks in self._chunks.values() for c in chunks)

    def build(self) -> Run:
        frames = []
        roles: dict[str, Role] = {}
        repeated_by_tag: dict[str, int] = {}
        # each tag's chunks are let go as its curve is built, so the points are not held twice
        while self._chunks:
            tag, chunks = next(iter(self._chunks.items()))
            del self._chunks[tag]
            steps, values, walls = (chunks[0] if len(chunks) == 1 else
                                    tuple(np.concatenate([c[i] for c in chunks]) for i in range(3)))
            del chunks
            if len(steps) == 0:
                continue
            if len(steps) > 1 and not (steps[1:] >= steps[:-1]).all():
                # Stable sort keeps logging order among equal steps, so the last value logged wins below.
                order = np.argsort(steps, kind="stable")
                steps, values, walls = steps[order], values[order], walls[order]
            keep = np.ones(len(steps), dtype=bool)
            keep[:-1] = steps[1:] != steps[:-1]
            repeated = int(len(steps) - np.count_nonzero(keep))
            if repeated:
                repeated_by_tag[tag] = repeated
                steps, walls, values = steps[keep], walls[keep], values[keep]
            frames.append([tag, steps, walls, values])
            # the table lets each curve's column go once it holds it; a name left here would keep the last curve,
            # and with it whatever array its columns are slices of (a reader's every curve), alive beside the table
            del steps, values, walls
            roles[tag] = infer_role(tag, self._split_hint.get(tag), loss=tag in self._loss_hint)
            if roles[tag] is Role.OTHER and tag in self._score_hint:
                roles[tag] = Role.SCORE
        mark_gan_terms(roles)
        mark_training_metrics(roles)
        mark_abbreviated_splits(roles)
        mark_errors_as_losses(roles)
        if repeated_by_tag:
            named = ", ".join(list(repeated_by_tag)[:3]) + (" and more" if len(repeated_by_tag) > 3 else "")
            self.warn(
                f"{self.path}: {sum(repeated_by_tag.values())} point(s) logged again at a step that already had "
                f"a value (in {named}); each curve keeps the last value logged per step"
            )
        scalars = _frame(frames)
        for source, config in [(self.hparams_source, self.meta.hparams), *self._configs]:
            complete_meta(self.meta, source, config if isinstance(config, ConfigFacts) else facts_from(config))
        per_class = {match.group(1) for tag in roles if (match := PER_CLASS_AP_TAG.match(tag))}
        if self.meta.n_classes is None and len(per_class) >= 2:
            self.meta.n_classes, self.meta.n_classes_kind = len(per_class), CLASSES
            self.meta.n_classes_source = "per-class AP tags: bbox/AP-<class>"
        return Run(self.path, self.format, scalars, roles, self.meta, self.warnings, self.name,
                   generations=self.generations)


def blocked_bincount(codes: np.ndarray, count: int, block: int) -> np.ndarray:
    """np.bincount of ``codes`` (0 … count − 1) a ``block`` at a time: bincount widens narrow codes to 64 bits,
    8 bytes a point of the whole column at once."""
    counts = np.zeros(count, np.int64)
    for start in range(0, len(codes), block):
        counts += np.bincount(codes[start:start + block], minlength=count)
    return counts


def _frame(parts: list[list]) -> pd.DataFrame:
    """The tidy table of the curves ``[tag, steps, wall times, values]``; each curve's column is let go once the
    table's column holds it."""
    # pandas is imported where a frame is built, not with the model: an audit served from its cache builds none,
    # and importing pandas was a third of its time.
    import pandas as pd

    if not parts:
        return empty_scalars()
    tags = [p[0] for p in parts]
    lengths = [len(p[1]) for p in parts]
    # in the narrowest type that holds them, which the categorical mostly keeps as is: 1 byte a point, not 4
    codes = np.repeat(np.arange(len(tags), dtype=np.min_scalar_type(-len(tags))), lengths)
    columns = {"tag": pd.Categorical.from_codes(codes, categories=tags)}
    del codes
    for index, name in ((1, "step"), (2, "wall_time"), (3, "value")):
        columns[name] = parts[0][index] if len(parts) == 1 else np.concatenate([p[index] for p in parts])
        for part in parts:
            part[index] = None
    return pd.DataFrame(columns, copy=False)


def empty_scalars() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({
        "tag": pd.Categorical([]),
        "step": np.array([], dtype=np.int64),
        "wall_time": np.array([], dtype=np.float64),
        "value": np.array([], dtype=np.float64),
    })
