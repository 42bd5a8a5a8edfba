"""The rule registry: each rule recognises one symptom of a silently failing training run.

A rule is one decorated function in one module of this package (one module per symptom family)::

    @rule("CD101", "loss-nan", symptom="nan_inf", severity=ERROR,
          causes=("learning rate too high", ...), check="print the loss per step up to the first NaN ...",
          thresholds={"min_points": Threshold(3, "fewest points a curve needs before it is judged")},
          needs=(Role.TRAIN_LOSS,))
    def detect(run: RunCurves, limits: Limits) -> Iterable[Found] | Found | None:
        '''What the rule looks for, in a sentence or two (shown by `curvedoc rules CD101`).'''
        ...
        return Found("Loss becomes NaN at step 68", ["train/loss"], ["train/loss = nan at step 68"], step=68)

The decorator records everything `curvedoc rules` documents, so the docs are generated from the registry and
never drift from the code. ``detect`` gets the run wrapped in :class:`~curvedoc.features.RunCurves` (shared,
cached features: smoothed curves, trends, chance level) and the rule's thresholds after user overrides; it
returns what it found, and the engine stamps each :class:`Found` with the rule's code, causes and check.
``needs`` names what a rule cannot judge without (any one of these roles, or ``GENERATIONS``): a run lacking all of
them is told which checks were not made, and why, beside its verdict. ``live`` says when `curvedoc watch` may report
the finding on a run still training (a NaN at once, a whole-curve shape once it has held while the run doubled).

A threshold's kind follows from what it says it is: a "share" (or a p-value, a confidence) lies in [0, 1], a
"fewest …" count is a whole number of at least 1, and no threshold is negative; a user's override that breaks
its kind is refused where it is read.

A rule of archive scope (``@archive_rule``, codes CD8xx) compares runs instead: its ``detect`` gets one family
of comparable runs (:class:`curvedoc.audit.crossrun.Family`) and returns :class:`FoundAcross` items, which
``curvedoc audit`` turns into cross-run findings. Per-run diagnosis skips these rules; `curvedoc rules`
documents both kinds, and ``disable``/``thresholds`` apply to both.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)

# The symptom ids are part of the JSON contract: rules may be added or renamed, these may not change meaning.
SYMPTOMS = {
    "nan_inf": "loss (or a metric) becomes NaN/Inf",
    "start_high": "step-0 loss far above -log(1/n_classes)",
    "start_low": "step-0 loss far below chance",
    "flat_from_start": "loss does not move from step 0",
    "flat_at_chance": "loss stays at about -log(1/n) (accuracy at about 1/n): the input carries no signal",
    "plateau_high": "fast drop, then flat well above what the task allows",
    "oscillation": "wild swings that do not settle",
    "spike": "loss decreasing, then a sudden jump",
    "overfitting": "train loss falls, validation loss falls then rises",
    "memorizing": "train loss falls to about 0 while validation stays flat",
    "underfitting": "train and validation loss both stay high",
    "val_below_train": "validation loss persistently well below train loss",
    "train_negative": "a loss that should be >= 0 goes below 0",
    "accuracy_suspicious": "accuracy near-perfect, or reached implausibly early",
    "accuracy_majority": "accuracy sits at the majority-class rate",
    "predictions_frozen": "loss keeps falling while accuracy does not change at all",
    "exploding_grad": "gradient norm spikes by orders of magnitude",
    "vanishing_grad": "gradient norm near zero while the loss is high",
    "finetune_start_high": "a fine-tune's first loss far above its base model's (or near ln(vocabulary))",
    "loss_masked_out": "loss exactly 0 from the first step, with no gradient: no token is supervised",
    "eval_scores_clustered": "an evaluation score takes one value at every evaluation while the loss moves",
    "prompt_echoed": "generations repeat their prompt back",
    "generations_cut_off": "generations stop at the length limit, mid-sentence",
    "template_leaked": "generations contain chat-template markers",
    "needs_n_classes": "a check needs the number of classes and the run does not record it",
}

# What only a comparison of runs shows (``curvedoc audit``); kept apart from SYMPTOMS, the per-run report's ids.
ARCHIVE_SYMPTOMS = {
    "does_not_reproduce": "runs whose configs differ only in the seed end further apart than their noise explains",
    "iron_law": "three or more hyperparameter settings of one sweep all fail the same way: a bug, not a hyperparameter",
    "two_changes_at_once": "a run started after the previous one ended changed two or more hyperparameters",
    "too_good_to_be_true": "one run beats the rest of its group by a wide margin: check for leakage",
}

RUN, ARCHIVE = "run", "archive"

# When `curvedoc watch` and the framework callbacks may report a finding of a run that is still training (see
# curvedoc.watch): each rule says which kind of evidence its finding is, so a new rule is live-ready where it is
# declared.
AT_ONCE = "at once"
CONFIRMED = "confirmed"
WHOLE_RUN = "whole run"
JUMP = "jump"
LIVE = {
    AT_ONCE: "at once (no later point can take it back)",
    CONFIRMED: "once it has held at the same step over a few looks in a row",
    # more training can always change a shape (a flat start that falls after a slow warmup, a plateau that breaks)
    WHOLE_RUN: "once this shape of the whole curve has held while the run doubled (and, where a framework callback "
               "knows the planned steps, past a quarter of them)",
    # one jump at step 9 of a noisy minibatch loss, judged against 9 points, is often the first of many as large
    JUMP: "once the curve it jumps on has enough points for its noise to be known",
}
GENERATIONS = "generations"  # a rule's need: the outputs a generative run logged

@dataclass(frozen=True)
class Threshold:
    default: float
    meaning: str

    @property
    def is_share(self) -> bool:
        return not self.meaning.startswith("fewest") and (
            "share" in self.meaning or self.meaning.startswith(("chance that", "confidence")))

    @property
    def is_count(self) -> bool:
        return self.meaning.startswith("fewest") and float(self.default).is_integer()

    def problem_with(self, value: float) -> str | None:
        """Why ``value`` cannot be this threshold, or None."""
        if not math.isfinite(value) or value < 0:
            return "must be a finite number of at least 0"
        if self.is_share and value > 1:
            return "is a share: between 0 and 1"
        if self.is_count and (value < 1 or not float(value).is_integer()):
            return "is a count: a whole number of at least 1"
        return None


@dataclass
class Found:
    """What a rule's ``detect`` returns: the specifics of one occurrence. ``severity`` overrides the rule's."""

    title: str
    tags: list[str]
    evidence: list[str]
    step: int | None = None
    step_range: tuple[int, int] | None = None
    severity: str | None = None
    assumes_class_count: bool = False  # judged against chance −log(1/n) (always so for rules that need n)
    # the likely causes and the cheapest check of this occurrence, where they differ from the rule's (an agent's
    # reward collapsing has other causes than a loss jumping on one batch)
    causes: tuple[str, ...] = ()
    check: str = ""


@dataclass
class FoundAcross:
    """What an archive rule's ``detect`` returns: runs (paths, in the order that tells the story) and the
    hyperparameters involved."""

    title: str
    runs: list[str]
    hparams: list[str]
    evidence: list[str]
    severity: str | None = None


@dataclass
class Finding:
    code: str
    symptom: str
    severity: str
    title: str
    tags: list[str]
    step: int | None = None
    step_range: tuple[int, int] | None = None
    evidence: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)
    cheapest_check: str = ""

    def where(self, dash: str = "..") -> str:
        """Where the finding shows: "step 60", "steps 1..20" (``dash`` between the two), or "" for no step."""
        if self.step is not None:
            return f"step {self.step}"
        return f"steps {self.step_range[0]}{dash}{self.step_range[1]}" if self.step_range else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code, "symptom": self.symptom, "severity": self.severity, "title": self.title,
            "tags": self.tags, "step": self.step,
            "step_range": list(self.step_range) if self.step_range else None,
            "evidence": self.evidence, "causes": self.causes, "cheapest_check": self.cheapest_check,
        }


class Limits(Mapping[str, float]):
    """A rule's thresholds after the user's overrides; reading an undeclared one is a bug in the rule."""

    def __init__(self, declared: Mapping[str, Threshold], overrides: Mapping[str, float]):
        self._values = {name: float(overrides.get(name, threshold.default)) for name, threshold in declared.items()}

    def __getitem__(self, name: str) -> float:
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def shipped_limits(code: str) -> Limits:
    """Rule ``code``'s thresholds as shipped: what another rule asks of its notion, whatever a user configured for
    that rule's own findings."""
    return Limits(REGISTRY[code].thresholds, {})


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    symptom: str
    severity: str
    causes: tuple[str, ...]
    check: str
    thresholds: Mapping[str, Threshold]
    detect: Callable[..., Any]
    needs_n_classes: bool = False
    scope: str = RUN  # RUN: detect(RunCurves, Limits); ARCHIVE: detect(Family, Limits) -> FoundAcross items
    needs: tuple[str, ...] = ()  # roles (any one of them) or GENERATIONS: without any, the rule had nothing to judge
    live: str = CONFIRMED  # when a live watch may report its finding (LIVE)
    # a finding that a curve stopped moving speaks of this share of it (a flat start: all; a plateau: its latest
    # half): while that part still trends, the finding is not yet certain
    settled_share: float | None = None

    @property
    def description(self) -> str:
        return " ".join((self.detect.__doc__ or "").split())

    def finding(self, found: Found) -> Finding:
        """A finding of this rule: the specifics ``detect`` found, with the rule's causes and cheapest check."""
        return Finding(
            code=self.code, symptom=self.symptom, severity=found.severity or self.severity, title=found.title,
            tags=list(found.tags), step=None if found.step is None else int(found.step),
            step_range=None if found.step_range is None else (int(found.step_range[0]), int(found.step_range[1])),
            evidence=list(found.evidence), causes=list(found.causes or self.causes),
            cheapest_check=found.check or self.check,
        )


def found_items(found) -> list:
    """What a ``detect`` returned (nothing, one item, or an iterable of items) as a list."""
    if found is None:
        return []
    if isinstance(found, (Found, FoundAcross)):
        return [found]
    return list(found)


REGISTRY: dict[str, Rule] = {}


def rule(code: str, name: str, *, symptom: str, severity: str, causes: Iterable[str], check: str,
         thresholds: Mapping[str, Threshold] | None = None, needs_n_classes: bool = False, scope: str = RUN,
         needs: Iterable[str] = (), live: str = CONFIRMED, settled_share: float | None = None):
    """Registers ``detect`` as rule ``code``; see the module docstring. ``live``, ``settled_share``: when a live
    watch may report the rule's finding (LIVE; Rule.settled_share)."""
    if symptom not in (SYMPTOMS if scope == RUN else ARCHIVE_SYMPTOMS):
        raise ValueError(f"{code}: unknown {scope} symptom {symptom!r}")
    if severity not in SEVERITIES:
        raise ValueError(f"{code}: unknown severity {severity!r}")
    if live not in LIVE or (settled_share is not None and not (0 < settled_share <= 1 and live == WHOLE_RUN)):
        raise ValueError(f"{code}: live={live!r}, settled_share={settled_share!r} (a share of a whole-run shape)")

    def register(detect: Callable[..., Any]) -> Callable[..., Any]:
        if code in REGISTRY:
            raise ValueError(f"rule code {code} registered twice")
        REGISTRY[code] = Rule(code, name, symptom, severity, tuple(causes), check, dict(thresholds or {}),
                              detect, needs_n_classes, scope, tuple(str(need) for need in needs), live,
                              settled_share)
        return detect

    return register


def archive_rule(code: str, name: str, *, symptom: str, severity: str, causes: Iterable[str], check: str,
                 thresholds: Mapping[str, Threshold] | None = None):
    """Registers ``detect`` as a rule comparing runs (see the module docstring)."""
    return rule(code, name, symptom=symptom, severity=severity, causes=causes, check=check, thresholds=thresholds,
                scope=ARCHIVE)


def symptom_meaning(symptom: str) -> str:
    return SYMPTOMS.get(symptom) or ARCHIVE_SYMPTOMS[symptom]


def all_rules(scope: str | None = None) -> list[Rule]:
    """Every registered rule of ``scope`` (both scopes when None), by code. Each module of this package is a
    symptom family and registers on import."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return sorted((registered for registered in REGISTRY.values() if scope in (None, registered.scope)),
                  key=lambda registered: registered.code)

