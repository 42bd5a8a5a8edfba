"""Running the rule registry over runs: which rules apply, with which thresholds, and what they found."""

from __future__ import annotations

import difflib
import fnmatch
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from curvedoc.classcount import READ_OFF_CURVES
from curvedoc.errors import CurvedocError
from curvedoc.features import ACCURACY_ROLES, LOSS_ROLES, RunCurves, listed, trains_a_detector, trains_an_agent
from curvedoc.model import VOCABULARY, Run
from curvedoc.roles import Role, is_perplexity, measures_generations
from curvedoc.rules import GENERATIONS, INFO, RUN, SEVERITIES, Finding, Limits, Rule, all_rules, found_items

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
NEEDS_N_CLASSES_CODE = "CD000"
# A loss with fewer finite points than this has no shape (no trend, no noise, no "after"): nothing but its NaNs
# and its first value can be judged, which is too little to call the run healthy.
MIN_SHAPE_POINTS = 3


@dataclass
class RuleSettings:
    """Which rules run, and with which thresholds. Rules are named as ruff names its checks: by code (CD402), code
    prefix (CD4: every stability rule) or symptom id (spike). ``select`` (when given) keeps only the rules it
    names; ``disabled`` (``disable``/``--ignore``) drops rules; ``per_run`` drops rules for the runs whose path
    matches a glob; ``thresholds`` overrides a rule's thresholds."""

    disabled: set[str] = field(default_factory=set)
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    select: set[str] = field(default_factory=set)
    per_run: dict[str, set[str]] = field(default_factory=dict)  # path glob → names of the rules dropped there

    def as_dict(self) -> dict[str, Any]:
        """Every setting, in a stable JSON-able form (the audit cache keys on it: a setting left out here would
        serve findings made under another)."""
        return {
            "disabled": sorted(self.disabled),
            "select": sorted(self.select),
            "per_run": {pattern: sorted(names) for pattern, names in sorted(self.per_run.items())},
            "thresholds": {code: sorted(values.items()) for code, values in sorted(self.thresholds.items())},
        }

    def validate(self, where: str | None, disable: str = "disable", select: str = "select") -> None:
        """Raises CurvedocError at the first name or threshold that names nothing; ``disable`` and ``select``:
        what to call those lists in the message (the command line's --ignore and --select)."""
        rules = {rule.code: rule for rule in all_rules()}
        for option, names in ((disable, self.disabled), (select, self.select),
                              *((f"per-run-ignores {pattern!r}", names) for pattern, names in self.per_run.items())):
            for name in names:
                if not any(names_rule(name, rule) for rule in rules.values()):
                    raise CurvedocError(where, f"{option}: no rule, code prefix or symptom named {name!r}"
                                               f"{closest(name, [*rules, *(r.symptom for r in rules.values())])}"
                                               " (see `curvedoc rules`)")
        for code, values in self.thresholds.items():
            if code not in rules:
                raise CurvedocError(where, f"thresholds: no rule {code!r}{closest(code, rules)} (see `curvedoc rules`)")
            for name, value in values.items():
                declared = rules[code].thresholds
                if name not in declared:
                    names = ", ".join(declared) or "none"
                    raise CurvedocError(where, f"thresholds.{code}: no threshold {name!r}{closest(name, declared)} "
                                               f"(it has: {names})")
                problem = declared[name].problem_with(value)
                if problem:
                    raise CurvedocError(where, f"thresholds.{code}.{name} = {value:g} {problem} "
                                               f"({declared[name].meaning})")

    def enabled(self, rule: Rule) -> bool:
        """Whether ``rule`` runs at all (an archive rule: no run's path globs apply)."""
        return self.filter_for()(rule)

    def filter_for(self, run_path: str | None = None) -> Callable[[Rule], bool]:
        """Whether a rule runs on the run at ``run_path`` (its path globs matched once, not once per rule)."""
        dropped = set(self.disabled)
        if run_path is not None:
            dropped.update(name for pattern, names in self.per_run.items() if path_matches(run_path, pattern)
                           for name in names)

        def enabled(rule: Rule) -> bool:
            if self.select and not any(names_rule(name, rule) for name in self.select):
                return False
            return not any(names_rule(name, rule) for name in dropped)

        return enabled

    def merged(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> RuleSettings:
        """These settings with a command line's ``--select`` (replacing the file's) and ``--ignore`` (adding)."""
        return RuleSettings(self.disabled | set(ignore), self.thresholds, set(select) or self.select, self.per_run)


def names_rule(name: str, rule: Rule) -> bool:
    """Whether ``name`` (a code, a code prefix such as CD4, or a symptom id) names ``rule``."""
    return name == rule.symptom or (name[:2].upper() == "CD" and rule.code.startswith(name.upper()))


def path_matches(run_path: str, pattern: str) -> bool:
    """A run's path (as given, and relative to the current folder when under it) against a glob; ``**`` spans
    folders."""
    candidates = {run_path.replace(os.sep, "/")}
    try:
        candidates.add(os.path.relpath(run_path).replace(os.sep, "/"))
    except ValueError:
        pass  # another drive (Windows): only the path as given
    return any(fnmatch.fnmatchcase(candidate, pattern) or fnmatch.fnmatchcase(candidate, pattern.rstrip("/") + "/*")
               for candidate in candidates)


def closest(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` when one of ``choices`` is close to ``name``, else ""."""
    match = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def diagnose_run(run: Run, settings: RuleSettings | None = None, curves: RunCurves | None = None) -> list[Finding]:
    """Every finding of every enabled rule on ``run``, most severe first; also stored on ``run.findings``.
    ``curves``: the run's features when the caller wants them afterwards too (an audit's summary)."""
    settings = settings or RuleSettings()
    curves = curves or RunCurves(run)
    findings: list[Finding] = []
    waiting_for_n_classes: list[Rule] = []
    lacking: dict[str, list[Rule]] = {}  # why → the rules that had nothing to judge for it
    enabled = settings.filter_for(run.path)
    logged_roles = {str(role) for role in run.roles.values()}
    for rule in all_rules(RUN):
        if not enabled(rule):
            continue
        if rule.needs_n_classes and curves.n_classes is None:
            waiting_for_n_classes.append(rule)
            continue
        limits = Limits(rule.thresholds, settings.thresholds.get(rule.code, {}))
        try:
            found = found_items(rule.detect(curves, limits))
        except Exception as exc:  # noqa: BLE001 — one faulty rule must not cost the user the other findings
            run.warnings.append(f"rule {rule.code} ({rule.name}) failed on this run: {type(exc).__name__}: {exc}")
            continue
        findings.extend(_with_assumptions(rule, item, curves) for item in found)
        if not found and (missing := _missing(rule, run, logged_roles)):
            lacking.setdefault(missing, []).append(rule)
    # an agent's losses are a policy's and a value function's objectives: no class count would judge them
    if waiting_for_n_classes and _has_classification_curves(run) and not curves.reinforcement_learning:
        findings.append(_needs_n_classes(waiting_for_n_classes, run.meta.language_model))
        lacking["no vocabulary size" if run.meta.language_model else "no class count"] = waiting_for_n_classes
    findings.sort(key=lambda finding: (SEVERITY_ORDER[finding.severity], finding.code))
    run.findings = findings
    count = curves.class_count
    if count is not None and count.inferred and findings:
        run.meta.assumed_n_classes = count.n
    run.insufficient = too_little_to_judge(curves)
    run.not_checked = [f"{', '.join(f'{rule.code} {rule.symptom}' for rule in rules)} ({why})"
                       for why, rules in lacking.items()]
    return findings


# each need as the words that name it: the split it is measured on (if any) and what is measured
NEED_WORDS = {"train_acc": ("train", "accuracy"), "val_loss": ("validation", "loss"), "test_loss": ("test", "loss"),
              "val_acc": ("validation", "accuracy"), "test_acc": ("test", "accuracy"),
              "score": ("", "evaluation score"), "grad_norm": ("", "gradient norm"), GENERATIONS: ("", "generations")}


def _missing(rule: Rule, run: Run, logged_roles: set[str]) -> str | None:
    """Why ``rule`` had nothing to judge in ``run`` ("no validation or test loss logged": none of the curves it
    needs is logged), or None. Generated outputs are looked for only in a generative run's."""
    if not rule.needs:
        return None
    if GENERATIONS in rule.needs:
        if not run.meta.language_model or run.generations or any(map(measures_generations, run.tags)):
            return None
    elif logged_roles & set(rule.needs):
        return None
    words = [NEED_WORDS[need] for need in rule.needs]
    splits = " or ".join(dict.fromkeys(split for split, _ in words if split))
    measured = " or ".join(dict.fromkeys(what for split, what in words if split))
    named = [f"{splits} {measured}"] if splits else []
    return f"no {' or '.join(named + [what for split, what in words if not split])} logged"


def _with_assumptions(rule: Rule, found, curves: RunCurves) -> Finding:
    """The finding, saying where the class count it rests on comes from (the file and key that record it; or, read
    off the curves, how: then one severity level lower when that count is uncertain, one piece of evidence, see
    curvedoc.classcount), and when it shows a perplexity as the loss it is the exponential of."""
    finding = rule.finding(found)
    logged_as_perplexity = [tag for tag in finding.tags
                            if is_perplexity(tag) and curves.run.roles.get(tag) in LOSS_ROLES]
    if logged_as_perplexity:
        finding.evidence.append(f"{', '.join(logged_as_perplexity)}: values above are ln(perplexity), the loss "
                                "the perplexity is the exponential of")
    count = curves.class_count
    if count is None or not (rule.needs_n_classes or found.assumes_class_count):
        return finding
    if not count.inferred:
        finding.evidence.append(count.provenance(curves.run.meta.n_classes_kind == VOCABULARY))
        return finding
    finding.evidence.append(count.assumption())
    if not count.certain:
        finding.severity = SEVERITIES[min(SEVERITIES.index(finding.severity) + 1, len(SEVERITIES) - 1)]
    return finding


def too_little_to_judge(curves: RunCurves) -> str | None:
    """Why the run holds too little for a verdict of healthy (no loss, score or accuracy curve, or none with a
    shape), else None. An agent's reward (a score) is judged like a loss: whether it moves, whether it collapses; an
    accuracy logged without its loss (a poisoning experiment's clean accuracy and attack success rate an epoch) is
    judged for never moving, sitting at a class share or at chance, and reaching 100%."""
    run = curves.run
    judged = [curve for role in (*LOSS_ROLES, Role.SCORE, *ACCURACY_ROLES) for curve in curves.curves(role)]
    if not judged:
        if adversarial := run.tags_with(Role.ADVERSARIAL):
            return (f"only a GAN's adversarial terms ({listed(adversarial)}), which hover by design: checked for "
                    "NaN/Inf and sudden jumps only")
        return (f"no loss, score or accuracy curve (logged: {listed(run.tags)})" if run.tags
                else "no scalar curve at all")
    longest = max(judged, key=lambda curve: len(curve.finite_values))
    points = len(longest.finite_values)
    if points >= MIN_SHAPE_POINTS:
        return None
    return f"only {points} point{'' if points == 1 else 's'} of {longest.tag} (a shape needs {MIN_SHAPE_POINTS})"


def apply_baseline(runs: Iterable[Run], baseline: str | os.PathLike[str]) -> None:
    """Gives ``runs`` the base model's loss read off the run at ``baseline`` (the run the base was trained or
    evaluated in; see curvedoc.readers.baseline)."""
    from curvedoc.readers.baseline import cached_base_loss

    try:  # read once however many paths the command names
        loss, where, _ = cached_base_loss(baseline)
    except CurvedocError as exc:
        raise CurvedocError(exc.path, f"--baseline: {exc.problem}") from None
    for run in runs:
        run.meta.base_loss = loss
        run.meta.base_loss_source = f"{where}, from --baseline"


def diagnose_runs(runs: Iterable[Run], settings: RuleSettings | None = None) -> None:
    for run in runs:
        diagnose_run(run, settings)


def _has_classification_curves(run: Run) -> bool:
    roles = set(run.roles.values())
    return bool(roles & {Role.TRAIN_LOSS, Role.VAL_LOSS, Role.TRAIN_ACC, Role.VAL_ACC})


def _needs_n_classes(rules: list[Rule], language_model: bool = False) -> Finding:
    names = ", ".join(f"{rule.code} {rule.symptom}" for rule in rules)
    if language_model:  # its chance level is ln(vocabulary size), which no curve gives away
        return Finding(
            code=NEEDS_N_CLASSES_CODE, symptom="needs_n_classes", severity=INFO,
            title="Vocabulary size unknown: chance-level checks were skipped",
            tags=[], evidence=[f"skipped: {names}", "a language model's chance level is ln(vocabulary size)"],
            causes=["the run's files do not record vocab_size (a PEFT adapter saves only its own config, not the "
                    "base model's)"],
            cheapest_check="rerun with --num-classes V, V the tokenizer's vocabulary size (len(tokenizer))",
        )
    return Finding(
        code=NEEDS_N_CLASSES_CODE, symptom="needs_n_classes", severity=INFO,
        title="Number of classes unknown: chance-level checks were skipped",
        tags=[], evidence=[f"skipped: {names}"],
        causes=["the run's config does not record num_classes / num_labels / vocab_size"],
        cheapest_check="rerun with --num-classes N (or num_classes = N in [tool.curvedoc])",
    )


# An agent's run learns from the episodes it collects, not from a fixed set of examples: its first moves ask
# whether it learned anything, whether its reward says what was meant, and what the policy did
AGENT_FIRST_MOVES = [
    "Evaluate the policy against a random one on the same seeds: if they score alike, the agent learned nothing.",
    ("Print a few steps' observations, actions, rewards and done flags: a reward that never changes, or an episode "
     "that never ends, trains nothing."),
    ("Plot the policy's entropy and approx_kl beside the reward: an entropy that collapses early, or updates far "
     "beyond a KL of ~0.02, explain most agents that stop improving."),
]


# A detector's loss sums box, objectness and class terms, none of them at −log(1/n) at the start: its first moves
# check the boxes and the class list the labels are read with, and that it can fit a handful of images
DETECTOR_FIRST_MOVES = [
    ("Draw the ground-truth boxes of one batch on its images, after augmentation: boxes off their objects mean a "
     "label format the loader misreads (xywh against xyxy, pixels against normalised, a wrong image size)."),
    ("Check the class count and names the model is built with against the label files' class ids (data.yaml nc "
     "and names): an id the model has no class for trains nothing, or is dropped."),
    "Train on 10 images for 100 epochs with augmentation off: their mAP must approach 1; if it cannot, it is a bug.",
]


def first_response(run: Run) -> list[str]:
    """The playbook's first moves for any run with findings, with −log(1/n) computed when n is known, or assumed
    from the curves as the findings say; an agent's and a detector's own first moves for their runs."""
    if trains_an_agent(run.tags):
        return list(AGENT_FIRST_MOVES)
    if trains_a_detector(run.tags):
        return list(DETECTOR_FIRST_MOVES)
    if run.meta.n_classes:
        return first_moves(run.meta.n_classes)
    return first_moves(run.meta.assumed_n_classes, assumed=True)


def first_moves(n_classes: int | None, assumed: bool = False) -> list[str]:
    """The first moves for a failure of a task with ``n_classes`` classes (also what a failed sweep points at)."""
    if n_classes:
        chance = f"−log(1/{n_classes}) = {math.log(n_classes):.3f}"
        if assumed:
            chance += f" ({n_classes} classes {READ_OFF_CURVES})"
    else:
        chance = "−log(1/n_classes) (n unknown here)"
    return [
        "Overfit one batch of 2–10 examples: the loss must reach ~0; if it cannot, it is a bug, not a hyperparameter.",
        "Print the exact tensor entering the model (after all preprocessing) and its labels, for one batch.",
        f"Compare the step-0 loss with {chance}.",
    ]


def settings_from(table: Mapping) -> RuleSettings:
    """Rule settings from a ``[tool.curvedoc]`` table: ``select``/``disable`` (or ``ignore``) lists,
    ``[per-run-ignores]`` (path glob = list) and ``[thresholds.CODE]``."""
    names = {key: _names(table, key) for key in ("select", "disable", "ignore")}
    per_run = table.get("per-run-ignores", {})
    if not isinstance(per_run, Mapping):
        raise CurvedocError(None, "per-run-ignores must be a table of \"path glob\" = [rule codes or symptom ids]")
    thresholds = table.get("thresholds", {})
    if not isinstance(thresholds, Mapping) or not all(isinstance(v, Mapping) for v in thresholds.values()):
        raise CurvedocError(None, "thresholds must be tables named by rule code, e.g. [tool.curvedoc.thresholds.CD101]")
    parsed = {}
    for code, values in thresholds.items():
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CurvedocError(None, f"thresholds.{code}.{name} must be a number")
        parsed[code] = {name: float(value) for name, value in values.items()}
    return RuleSettings(names["disable"] | names["ignore"], parsed, names["select"],
                        {pattern: _names(per_run, pattern, f"per-run-ignores {pattern!r}") for pattern in per_run})


def _names(table: Mapping, key: str, what: str | None = None) -> set[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise CurvedocError(None, f"{what or key} must be a list of rule codes, code prefixes or symptom ids")
    return set(value)
