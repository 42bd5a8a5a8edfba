"""Measures the rules on labelled runs: precision and recall per symptom, false alarms on healthy runs, verdicts
of runs too thin to judge, and how often the class count the diagnosis used was right.

    python -m curvedoc.evaluate [--verbose] [--json]              # every labelled set, tuning beside held out
    python -m curvedoc.evaluate fixtures/corpus [--verbose]        # one set (a folder holding labels.json)
    python -m curvedoc.evaluate fixtures/public/labels --data ../shared
    python -m curvedoc.evaluate --archive fixtures/audit [--verbose] [--json]

Thresholds are chosen on one part of the labelled runs and reported on parts held out by source, so a rule
that only fits its own fixtures shows as a drop between the columns:

- ``tuning``: ``fixtures/corpus``, made by ``fixtures/generate/corpus.py`` (the runs the thresholds were chosen on);
- ``held-out``: ``fixtures/holdout``, real runs made by a different generator (other models, data, frameworks
  and writers), never used to choose a threshold;
- ``public``: real logs from public repositories, labelled by reading their curves
  (``fixtures/public/labels/``, one file per log folder; the data stays outside the repository, beside the checkout
  in ``../shared`` or where ``--data`` says). Its ``_parts`` map keeps logs read while the rules were written apart
  from logs gathered afterwards.

A labels file maps a run (its path relative to the data folder) to ``{"symptoms": [...], "healthy": bool,
"insufficient": bool, "n_classes": int | null, "part": ..., ...}``; a file with a ``runs`` key holds that map
there. A run's ``part`` (else its file's ``_parts`` entry for the run's first folder, else the set's part) names
the column it is reported in: the held-out corpus keeps a part that was only ever read as numbers. The public parts
are also pooled, development apart from FINAL, and pooled again over the runs whose label's ``confidence`` is
``high`` (the curves left the labeller no doubt), and over the runs a second labeller labelled blind
(``second_labels`` beside the labels folder), judged on what the two agree on. A symptom
counts as detected when a finding with that symptom has severity error or warning (info findings are notes,
not alarms).

With ``--archive`` the cross-run rules (CD8xx) are measured instead, per group of runs: ``labels.json`` maps
each top-level folder of the archive to ``{"expect": [cross-run symptoms], "not_expect": [...], "healthy":
bool}``, and a cross-run finding (any severity: each is advice someone acts on) belongs to every group holding
one of its runs. An archive without such labels (the per-run corpus) gets its cross-run findings listed, to be
judged by eye.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import curvedoc
from curvedoc.diagnose import diagnose_run, diagnose_runs
from curvedoc.errors import CurvedocError
from curvedoc.features import RunCurves
from curvedoc.report import INSUFFICIENT, verdict
from curvedoc.rules import ARCHIVE_SYMPTOMS, SYMPTOMS

ALARMS = {"error", "warning"}
HIGH_CONFIDENCE = "high"
SECOND_LABELS = "second_labels"  # beside a public labels folder: a second labeller's blind labels of some runs
TUNING, HELD_OUT, PUBLIC, FINETUNE = "tuning", "held-out", "public", "finetune"
FINETUNE_HELD_OUT = "finetune-held-out"
PART_ORDER = (TUNING, HELD_OUT, "held-out-final", FINETUNE, FINETUNE_HELD_OUT, PUBLIC, "public-new", "public-dev2",
              "public-dev3", "public-dev4", "public-dev5", "public-dev6", "public-dev7", "public-dev8", "public-dev9",
              "public-dev10", "public-dev11", "public-dev12", "public-dev13", "public-dev14", "public-dev15",
              "public-dev16", "public-fresh", "public-s18", "public-s19", "public-s20", "public-held-out", "public-s21",
              "public-s22", "public-s23", "public-s24", "public-s25", "public-s26", "public-s27", "public-s28",
              "public-dev17", "public-dev18", "public-s29", "public-dev19", "public-s30", "public-dev20", "public-s31",
              "public-dev21", "public-s32", "public-s33", "public-dev22", "public-s34", "public-dev23", "public-s35",
              "public-s36", "public-dev24", "public-s37", "public-dev25", "public-s38", "public-dev26", "public-s39",
              "public-dev27", "public-s40", "public-dev28", "public-s41", "public-dev29", "public-s42", "public-s43",
              "public-dev30", "public-s44", "public-s45", "public-dev32", "public-dev31", "public-s46", "public-s47",
              "public-s48", "public-dev33", "public-s49", "public-s50", "public-dev34", "public-dev35", "public-s51",
              "public-s52", "public-dev36", "public-s53", "public-s54", "public-dev37", "public-s55", "public-dev38",
              "public-dev39", "public-s56", "public-dev40", "public-s57", "public-s58", "public-dev41", "public-s59",
              "public-dev42", "public-s60", "public-dev43", "public-s61", "public-s62", "public-dev45", "public-dev44",
              "public-dev46", "public-s64", "public-s63", "public-s65", "public-dev47", "public-s66", "public-dev48",
              "public-s67", "public-s68", "public-dev49", "public-s69", "public-dev50", "public-s70", "public-dev51",
              "public-s71", "public-dev52", "public-s72", "public-dev53", "public-dev54", "public-s73", "public-s74",
              "public-dev55", "public-dev56", "public-s75", "public-s76", "public-dev57", "public-s77", "public-dev58",
              "public-s78", "public-s79", "public-dev59", "public-dev60", "public-s80", "public-dev61", "public-s81",
              "public-dev62", "public-s82", "public-dev63", "public-s83", "public-dev64", "public-s84",
              "public-dev65", "public-s85", "public-dev66", "public-s86", "public-dev67", "public-s87",
              "public-dev68", "public-s88", "public-dev69", "public-dev70", "public-s89",
              "public-dev71", "public-s90", "public-s91", "public-dev72", "public-dev73",
              "public-s92", "public-dev74", "public-s93", "public-dev75", "public-s94", "public-dev76",
              "public-s95", "public-dev77", "public-s96", "public-s97", "public-dev78", "public-dev79", "public-s98",
              "public-dev80", "public-s99", "public-dev81", "public-s100", "public-dev82", "public-s101",
              "public-dev83", "public-s102", "public-dev84", "public-s103", "public-s104", "public-dev85",
              "public-dev86", "public-s105", "public-s106", "public-dev87", "public-s107", "public-dev88",
              "public-s108", "public-dev89", "public-s109", "public-dev90", "public-s110", "public-dev91",
              "public-s111", "public-s112", "public-dev92", "public-dev93", "public-s113", "public-s114",
              "public-dev94", "public-dev95", "public-s115", "public-s116", "public-dev96", "public-dev97",
              "public-s117", "public-s118", "public-dev98", "public-dev99", "public-s119", "public-s120",
              "public-dev100", "public-dev101", "public-s121", "public-s122", "public-dev102", "public-dev103",
              "public-s123", "public-s124", "public-dev104", "public-dev105", "public-dev106", "public-dev107",
              "public-s125", "public-s126", "public-dev108", "public-dev109", "public-s127", "public-s128",
              "public-dev110", "public-dev111", "public-s129", "public-s130", "public-s131", "public-s132",
              "public-dev112", "public-dev113", "public-s133", "public-s134", "public-dev114", "public-dev115",
              "public-s135", "public-s136", "public-dev116", "public-dev117", "public-s137", "public-s138",
              "public-s139", "public-s140", "public-dev118", "public-dev119", "public-dev120", "public-dev121",
              "public-s141", "public-dev122", "public-s142", "public-dev123")
# Parts kept for the final word on a change: their scores are printed, never which of their runs a rule gets
# wrong, so that no threshold is ever chosen by looking at them. A final part that has judged changes for several
# stops is retired to development once newer final parts stand in for it (public-fresh and public-s18 to s20, on
# 2026-12-05): the choices it steered have worn its blindness down.
FINAL_PARTS = {"held-out-final", FINETUNE_HELD_OUT, "public-held-out", "public-s21", "public-s22", "public-s23",
               "public-s24", "public-s25", "public-s26", "public-s27", "public-s28", "public-s29", "public-s30",
               "public-s31", "public-s32", "public-s33", "public-s34", "public-s35", "public-s36", "public-s37",
               "public-s38", "public-s39", "public-s40", "public-s41", "public-s42", "public-s43", "public-s44",
               "public-s45", "public-s46", "public-s47", "public-s48", "public-s49", "public-s50", "public-s51",
               "public-s52", "public-s53", "public-s54", "public-s55", "public-s56", "public-s57", "public-s58",
               "public-s59", "public-s60", "public-s61", "public-s62", "public-s64", "public-s63", "public-s65",
               "public-s66", "public-s67", "public-s68", "public-s69", "public-s70", "public-s71", "public-s72",
               "public-s73", "public-s74", "public-s75", "public-s76", "public-s77", "public-s78", "public-s79",
               "public-s80", "public-s81", "public-s82", "public-s83", "public-s84", "public-s85", "public-s86",
               "public-s87", "public-s88", "public-s89", "public-s90", "public-s91", "public-s92", "public-s93",
               "public-s94", "public-s95", "public-s96", "public-s97", "public-s98", "public-s99", "public-s100",
               "public-s101", "public-s102", "public-s103", "public-s104", "public-s105", "public-s106", "public-s107",
               "public-s108", "public-s109", "public-s110", "public-s111", "public-s112", "public-s113", "public-s114",
               "public-s115", "public-s116", "public-s117", "public-s118", "public-s119", "public-s120", "public-s121",
               "public-s122", "public-s123", "public-s124", "public-s125", "public-s126", "public-s127", "public-s128",
               "public-s129", "public-s130", "public-s131", "public-s132", "public-s133", "public-s134", "public-s135",
               "public-s136", "public-s137", "public-s138", "public-s139", "public-s140", "public-s141", "public-s142"}
REPOSITORY = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class LabelledSet:
    name: str
    part: str  # TUNING, HELD_OUT or PUBLIC: what the set is to the thresholds
    labels: Path  # the labels file, or a folder of them
    data: Path  # the folder its keys are relative to


def default_sets(public_data: Path | None = None) -> list[LabelledSet]:
    """The labelled sets of this checkout that exist (the public logs only where their data folder does)."""
    fixtures = REPOSITORY / "fixtures"
    sets = [
        LabelledSet("corpus", TUNING, fixtures / "corpus" / "labels.json", fixtures / "corpus"),
        LabelledSet("holdout", HELD_OUT, fixtures / "holdout" / "labels.json", fixtures / "holdout"),
        # real Trainer fine-tunes of a tiny GPT-2 (fixtures/generate/finetune_logs.py): the fine-tuning symptoms'
        # thresholds come from what the symptoms are (ln(vocabulary), the base's own loss), so this is their test
        LabelledSet("finetune", FINETUNE, fixtures / "finetune" / "labels.json", fixtures / "finetune"),
        # the same symptoms from another source: hand-written loops fine-tuning a tiny Llama
        # (fixtures/generate/finetune_loop_logs.py), never looked at run by run while the rules were written
        LabelledSet("finetune_loop", FINETUNE_HELD_OUT, fixtures / "finetune_loop" / "labels.json",
                    fixtures / "finetune_loop"),
        LabelledSet("public", PUBLIC, fixtures / "public" / "labels", public_data or REPOSITORY.parent / "shared"),
    ]
    return [item for item in sets if item.labels.exists() and item.data.is_dir()]


def read_labels(path: Path) -> tuple[dict[str, dict], dict[str, str]]:
    """The run labels of a labels file, or of every labels file in a folder (the public labels keep one file per
    log folder, each small), and the ``_parts`` map (first folder of a key → part name) they hold."""
    labels: dict[str, dict] = {}
    parts: dict[str, str] = {}
    for file in sorted(path.glob("*.json")) if path.is_dir() else [path]:
        document = json.loads(file.read_text())
        runs = document.get("runs", document) if isinstance(document.get("runs"), dict) else document
        labels.update((key, label) for key, label in runs.items() if not key.startswith("_"))
        parts.update(document.get("_parts", {}))
    return labels, parts


@dataclass
class Outcome:
    path: str
    expected: set[str]
    detected: set[str]
    healthy: bool
    problem: str | None = None
    part: str = TUNING
    insufficient_expected: bool = False
    insufficient_found: bool = False
    n_true: int | None = None  # the labelled class count
    n_used: int | None = None  # the count the diagnosis used
    n_how: str = "none"  # "recorded", "inferred (certain)", "inferred (uncertain)" or "none"
    n_inferred_alone: tuple[int, bool] | None = None  # (count, certain) read off the curves with the record hidden
    n_evidence: list[tuple[str, int]] = field(default_factory=list)  # (kind, count) of each piece of that evidence
    confidence: str | None = None  # the labeller's: "high" where the curves left no doubt, "medium" where they did
    second: tuple[set[str], bool] | None = None  # a second labeller's symptoms and healthy verdict, where there is one


@dataclass
class Scores:
    outcomes: list[Outcome] = field(default_factory=list)
    # labelled public runs whose logs are not on this machine (kept outside the repository, restored by
    # fixtures/public/restore.py): left out of every score, not counted as runs where every symptom was missed
    absent: list[Outcome] = field(default_factory=list)

    def of_part(self, part: str) -> Scores:
        return Scores([o for o in self.outcomes if o.part == part], [o for o in self.absent if o.part == part])

    def parts(self) -> list[str]:
        """The parts of these outcomes, tuning first, then the parts held out, then the public logs."""
        found = list(dict.fromkeys(o.part for o in self.outcomes))
        return sorted(found, key=lambda part: (PART_ORDER.index(part) if part in PART_ORDER else len(PART_ORDER), part))

    def per_symptom(self, symptoms=SYMPTOMS) -> dict[str, dict[str, float | int]]:
        table = {}
        for symptom in symptoms:
            true_pos = sum(symptom in o.expected and symptom in o.detected for o in self.outcomes)
            false_pos = sum(symptom not in o.expected and symptom in o.detected for o in self.outcomes)
            false_neg = sum(symptom in o.expected and symptom not in o.detected for o in self.outcomes)
            if true_pos + false_pos + false_neg == 0:
                continue
            table[symptom] = {
                "labelled": true_pos + false_neg, "tp": true_pos, "fp": false_pos, "fn": false_neg,
                "precision": true_pos / (true_pos + false_pos) if true_pos + false_pos else float("nan"),
                "recall": true_pos / (true_pos + false_neg) if true_pos + false_neg else float("nan"),
            }
        return table

    def macro(self, symptoms=SYMPTOMS) -> tuple[float, float]:
        """Mean precision over the symptoms ever reported, mean recall over the symptoms ever labelled."""
        rows = self.per_symptom(symptoms).values()
        precisions = [row["precision"] for row in rows if row["tp"] + row["fp"]]
        recalls = [row["recall"] for row in rows if row["labelled"]]
        return (sum(precisions) / len(precisions) if precisions else math.nan,
                sum(recalls) / len(recalls) if recalls else math.nan)

    def micro(self, symptoms=SYMPTOMS) -> tuple[float, float]:
        """Precision and recall over every labelled symptom of every run together: steadier than the macro means
        when a symptom is labelled on one or two runs of a part."""
        true_pos, false_pos, false_neg = self.totals(symptoms)
        return (true_pos / (true_pos + false_pos) if true_pos + false_pos else math.nan,
                true_pos / (true_pos + false_neg) if true_pos + false_neg else math.nan)

    def pooled(self) -> dict[str, Scores]:
        """The public parts taken together, development apart from FINAL: the figures a change is judged by, where
        each part alone holds a few runs of each symptom. Each again over the runs labelled with high confidence
        alone: two careful labellers disagree on many a run (a swinging validation loss called oscillation by one,
        noise by the other), and the labeller marks such a run "medium"; the runs it marks "high" show how the rules
        do where the curves leave no doubt. And again over the runs a second labeller labelled blind, judged on what
        the two agree on (see :func:`_agreed`); and on those same runs, the diagnosis and the second labeller each
        judged by the first labeller: how far one careful engineer's reading of the curves matches another's is
        the most any diagnosis can be shown to match either (see :func:`_as_read_by_the_second`)."""
        def of(outcomes: list[Outcome], final: bool, high: bool) -> list[Outcome]:
            return [o for o in outcomes if o.part.startswith(PUBLIC) and (o.part in FINAL_PARTS) == final
                    and (not high or o.confidence == HIGH_CONFIDENCE)]

        groups = {"public development (pooled)": (False, False), "public FINAL (pooled)": (True, False),
                  "public development, high-confidence labels": (False, True),
                  "public FINAL, high-confidence labels": (True, True)}
        pooled = {name: Scores(of(self.outcomes, *group), of(self.absent, *group)) for name, group in groups.items()}
        for split, final in (("development", False), ("FINAL", True)):
            doubly = [o for o in of(self.outcomes, final, False) if o.second is not None]
            pooled[f"public {split}, where two labellers agree"] = Scores([_agreed(o) for o in doubly])
            pooled[f"public {split}, labelled twice: the diagnosis judged by the first labeller"] = Scores(doubly)
            pooled[f"public {split}, labelled twice: the second labeller judged by the first"] = Scores(
                [_as_read_by_the_second(o) for o in doubly])
        return {name: group for name, group in pooled.items() if group.outcomes}

    def totals(self, symptoms=SYMPTOMS) -> tuple[int, int, int]:
        """Labelled symptoms found, findings that are false, labelled symptoms missed."""
        rows = self.per_symptom(symptoms).values()
        return tuple(sum(row[key] for row in rows) for key in ("tp", "fp", "fn"))

    def false_alarm_rate(self) -> tuple[int, int]:
        healthy = [o for o in self.outcomes if o.healthy]
        return sum(bool(o.detected) for o in healthy), len(healthy)

    def insufficient_agreement(self) -> tuple[int, int]:
        """Runs whose "not enough to judge" verdict matches the label, of those where either says so."""
        either = [o for o in self.outcomes if o.insufficient_expected or o.insufficient_found]
        return sum(o.insufficient_expected == o.insufficient_found for o in either), len(either)

    def class_counts(self) -> dict[str, int]:
        """Of the runs with a known class count: what the diagnosis used (recorded, inferred, none) and whether it
        was right; and what the curves alone tell with the recorded count hidden."""
        counts = Counter()
        for o in self.outcomes:
            if not o.n_true:
                continue
            counts["known"] += 1
            verdict = "none" if o.n_used is None else "right" if o.n_used == o.n_true else "wrong"
            counts[f"used {o.n_how}: {verdict}"] += 1
            if o.n_inferred_alone is None:
                counts["curves alone: none"] += 1
            else:
                n, certain = o.n_inferred_alone
                counts[f"curves alone ({'certain' if certain else 'uncertain'}): "
                       f"{'right' if n == o.n_true else 'wrong'}"] += 1
            for kind, n in o.n_evidence:
                counts[f"evidence '{kind}': {'right' if n == o.n_true else 'wrong'}"] += 1
        return dict(sorted(counts.items()))


def _agreed(outcome: Outcome) -> Outcome:
    """The outcome judged on what both labellers say: a symptom both list is expected, one neither lists and the
    diagnosis reports is false, and one only one of them lists counts neither way (reported or not, a careful
    engineer would back the diagnosis); the run is healthy when both call it so."""
    second, second_healthy = outcome.second
    disputed = outcome.expected ^ second
    return replace(outcome, expected=outcome.expected & second, detected=outcome.detected - disputed,
                   healthy=outcome.healthy and second_healthy)


def _as_read_by_the_second(outcome: Outcome) -> Outcome:
    """The outcome with the second labeller's symptoms in place of the diagnosis's findings, to score one labeller
    by the other as the diagnosis is scored."""
    return replace(outcome, detected=outcome.second[0])


def _second_labels(labelled: LabelledSet) -> dict[str, dict]:
    """The second labeller's labels of a public set, kept in ``second_labels`` beside its labels folder (a
    blind relabelling of some of its runs), else none."""
    folder = labelled.labels.parent / SECOND_LABELS
    return read_labels(folder)[0] if labelled.part == PUBLIC and labelled.labels.is_dir() and folder.is_dir() else {}


def evaluate(labelled: LabelledSet | Path) -> Scores:
    """Every labelled run of the set read, diagnosed and compared with its label (a public run whose logs are not on
    this machine set aside as absent)."""
    if isinstance(labelled, Path):
        labelled = LabelledSet(labelled.name, TUNING, labelled / "labels.json", labelled)
    labels, parts = read_labels(labelled.labels)
    second_labels = _second_labels(labelled)
    scores = Scores()
    for relative, label in sorted(labels.items()):
        expected = set(label.get("symptoms", []))
        outcome = Outcome(relative, expected, set(), _healthy(label),
                          part=label.get("part") or parts.get(relative.split("/")[0], labelled.part),
                          insufficient_expected=bool(label.get("insufficient")),
                          n_true=label.get("n_classes"), confidence=label.get("confidence"))
        if (second := second_labels.get(relative)) is not None:
            outcome.second = set(second.get("symptoms", [])), _healthy(second)
        if labelled.part == PUBLIC and not _file_of(labelled.data / relative).exists():
            scores.absent.append(outcome)
            continue
        scores.outcomes.append(outcome)
        try:
            runs = _runs_of(labelled.data / relative)
        except CurvedocError as exc:
            outcome.problem = str(exc)
            continue
        for run in runs:
            curves = RunCurves(run)
            diagnose_run(run, curves=curves)
            outcome.detected |= {f.symptom for f in run.findings if f.severity in ALARMS}
            outcome.insufficient_found |= verdict(run) == INSUFFICIENT
            count = curves.class_count
            if count is not None:
                outcome.n_used = count.n
                outcome.n_how = ("recorded" if not count.inferred
                                 else f"inferred ({'certain' if count.certain else 'uncertain'})")
            outcome.n_inferred_alone, outcome.n_evidence = _inferred_alone(curves)
    return scores


def _healthy(label: dict) -> bool:
    """Healthy as a label says (else when it lists no symptom), and never a run too thin to judge."""
    return bool(label.get("healthy", not label.get("symptoms"))) and not label.get("insufficient")


def _file_of(path: Path) -> Path:
    """The file or folder a label's path names: a path ending in "#" and a number names one of the runs a file holds
    one after another (``training.log#2``), as the readers name them."""
    return path if path.exists() or "#" not in path.name else path.with_name(path.name.split("#")[0])


def _runs_of(path: Path) -> list:
    """The run a label names: the run read at that path itself when the folder holds several (a run folder
    with a nested one), else every run read under it (see :func:`_file_of` for a run of a file of several)."""
    runs = curvedoc.load(_file_of(path))
    own = [run for run in runs if Path(run.path).resolve() == path.resolve()]
    return own or list(runs)


def _inferred_alone(curves: RunCurves) -> tuple[tuple[int, bool] | None, list[tuple[str, int]]]:
    """What the curves alone tell of the class count, whatever the run records: the count (and whether it is
    certain), and each piece of evidence (kind and count) on its own, a benchmark its config names among them."""
    from curvedoc.classcount import evidence_of, infer_class_count

    count = infer_class_count(curves)
    pieces = [(item.kind, item.n) for item in evidence_of(curves)]
    if curves.run.meta.benchmark_classes is not None:
        pieces.append(("benchmark", curves.run.meta.benchmark_classes[1]))
    return (None if count is None else (count.n, count.certain)), pieces


def render(scores: Scores, verbose: bool) -> str:
    """One column pair (precision, recall) per part, then each part's totals."""
    parts = scores.parts()
    by_part = {part: scores.of_part(part) for part in parts}
    tables = {part: by_part[part].per_symptom() for part in parts}
    header = "| symptom | " + " | ".join(f"{part} P | R | n" for part in parts) + " |"
    lines = [header, "| --- |" + " ---: | ---: | ---: |" * len(parts)]
    for symptom in SYMPTOMS:
        cells = []
        for part in parts:
            row = tables[part].get(symptom)
            cells.append("  |  | " if row is None else
                         f"{_number(row['precision'])} | {_number(row['recall'])} | {row['labelled']}")
        if any(symptom in tables[part] for part in parts):
            lines.append(f"| {symptom} | " + " | ".join(cells) + " |")
    macro = {part: by_part[part].macro() for part in parts}
    lines.append("| **macro** | " + " | ".join(f"**{_number(macro[part][0])}** | **{_number(macro[part][1])}** | "
                                             for part in parts) + " |")
    micro = {part: by_part[part].micro() for part in parts}
    lines.append("| micro (all labels together) | " + " | ".join(
        f"{_number(micro[part][0])} | {_number(micro[part][1])} | " for part in parts) + " |")
    lines.append("")
    for part in parts:
        part_scores = by_part[part]
        alarms, healthy = part_scores.false_alarm_rate()
        agreed, judged = part_scores.insufficient_agreement()
        rate = alarms / healthy if healthy else math.nan
        absent = f" ({len(part_scores.absent)} more labelled, not on this machine)" if part_scores.absent else ""
        lines.append(f"{part}: {len(part_scores.outcomes)} runs{absent}; healthy runs with an error/warning finding: "
                     f"{alarms} of {healthy} ({rate:.1%}); 'not enough to judge' agreeing with the labels: "
                     f"{agreed} of {judged}")
        counts = part_scores.class_counts()
        if counts:
            lines.append(f"  class count ({counts.pop('known')} runs with a known count): "
                         + "; ".join(f"{name} {number}" for name, number in counts.items()))
        lines.extend(f"  unreadable: {o.path}: {o.problem}" for o in part_scores.outcomes if o.problem)
    for name, group in scores.pooled().items():
        alarms, healthy = group.false_alarm_rate()
        found, false, missed = group.totals()
        (precision, recall), (micro_precision, micro_recall) = group.macro(), group.micro()
        lines.append(f"{name}: {len(group.outcomes)} runs; {found} found, {false} false, {missed} missed; macro "
                     f"{_number(precision)} / {_number(recall)}, micro {_number(micro_precision)} / "
                     f"{_number(micro_recall)}; healthy runs alarmed {alarms} of {healthy}")
    if scores.absent:
        wholly = sorted({o.part for o in scores.absent} - set(parts))
        lines.append(f"left out: {len(scores.absent)} labelled public runs whose logs are not on this machine"
                     + (f" (none of {', '.join(wholly)})" if wholly else "")
                     + "; python fixtures/public/restore.py brings them back")
    if TUNING in macro and len(parts) > 1:
        for part in parts[1:]:
            lines.append(f"macro drop from {TUNING} to {part}: precision "
                         f"{_number(macro[TUNING][0] - macro[part][0])}, recall "
                         f"{_number(macro[TUNING][1] - macro[part][1])}")
    if verbose:
        lines.append("")
        hidden = sorted({o.part for o in scores.outcomes} & FINAL_PARTS)
        if hidden:
            lines.append(f"(runs of {', '.join(hidden)} are not listed: those parts judge a change, they do not "
                         "guide it)")
        for o in scores.outcomes:
            if o.part in FINAL_PARTS:
                continue
            missed, extra = o.expected - o.detected, o.detected - o.expected
            verdicts = "" if o.insufficient_expected == o.insufficient_found else (
                "; labelled 'not enough to judge'" if o.insufficient_expected else "; judged 'not enough'")
            if missed or extra or verdicts:
                lines.append(f"[{o.part}] {o.path}: missed {sorted(missed) or '-'}; false {sorted(extra) or '-'}"
                             f"{verdicts}")
    return "\n".join(lines)


def _number(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2f}"


def scores_json(scores: Scores) -> dict:
    document = {}
    for part, part_scores in [(part, scores.of_part(part)) for part in scores.parts()] + list(scores.pooled().items()):
        alarms, healthy = part_scores.false_alarm_rate()
        precision, recall = part_scores.macro()
        micro_precision, micro_recall = part_scores.micro()
        document[part] = {
            "runs": len(part_scores.outcomes), "per_symptom": part_scores.per_symptom(),
            "macro_precision": precision, "macro_recall": recall,
            "micro_precision": micro_precision, "micro_recall": micro_recall,
            "healthy_false_alarms": alarms, "healthy_runs": healthy,
            "insufficient_agreement": part_scores.insufficient_agreement(),
            "class_counts": part_scores.class_counts(),
            "absent": len(part_scores.absent),
        }
    return document


def evaluate_archive(root: Path) -> tuple[Scores, list]:
    """Cross-run findings over every run under ``root`` and, when labelled, one outcome per group of runs."""
    from curvedoc.audit.crossrun import cross_run_findings
    from curvedoc.audit.summary import summarize

    runs = curvedoc.load(root)
    diagnose_runs(runs)
    findings = cross_run_findings([summarize(run) for run in runs])
    labels = json.loads((root / "labels.json").read_text())
    scores = Scores()
    for group, label in sorted(labels.items()):
        if "expect" not in label:
            continue
        folder = root / group
        detected = {f.symptom for f in findings if any(Path(path).is_relative_to(folder) for path in f.runs)}
        scores.outcomes.append(Outcome(group, set(label["expect"]), detected, bool(label.get("healthy"))))
    return scores, findings


def render_archive(scores: Scores, findings: list, verbose: bool) -> str:
    lines = ["| cross-run symptom | labelled | TP | FP | FN | precision | recall |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for symptom, row in scores.per_symptom(ARCHIVE_SYMPTOMS).items():
        lines.append(f"| {symptom} | {row['labelled']} | {row['tp']} | {row['fp']} | {row['fn']} | "
                     f"{row['precision']:.2f} | {row['recall']:.2f} |")
    alarms, healthy = scores.false_alarm_rate()
    lines += ["", f"healthy groups with a cross-run finding: {alarms} of {healthy}; groups evaluated: "
              f"{len(scores.outcomes)}; cross-run findings: {len(findings)}"]
    if verbose or not scores.outcomes:
        lines.append("")
        lines.extend(f"{f.code} {f.severity}: {f.title} [{', '.join(f.runs)}]" for f in findings)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m curvedoc.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument("labelled", type=Path, nargs="?",
                        help="a folder holding labels.json and the runs it names, or a labels file or a folder of "
                             "them (with --data); "
                             "default: every labelled set of this checkout")
    parser.add_argument("--data", type=Path, help="the folder a labels file's keys are relative to (public logs)")
    parser.add_argument("--verbose", action="store_true", help="list every run whose findings differ from its labels")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--archive", action="store_true", help="measure the cross-run rules (CD8xx) per group")
    args = parser.parse_args(argv)
    if args.archive:
        if args.labelled is None or not (args.labelled / "labels.json").is_file():
            print(f"curvedoc: error: {args.labelled}: no labels.json", file=sys.stderr)
            return 2
        scores, findings = evaluate_archive(args.labelled)
        if args.json:
            alarms, healthy = scores.false_alarm_rate()
            print(json.dumps({"per_symptom": scores.per_symptom(ARCHIVE_SYMPTOMS), "healthy_false_alarms": alarms,
                              "healthy_groups": healthy, "findings": [f.to_dict() for f in findings]}, indent=2))
        else:
            print(render_archive(scores, findings, args.verbose))
        return 0
    try:
        sets = chosen_sets(args.labelled, args.data)
    except CurvedocError as exc:
        print(f"curvedoc: error: {exc}", file=sys.stderr)
        return 2
    evaluated = [evaluate(labelled) for labelled in sets]
    scores = Scores([o for each in evaluated for o in each.outcomes], [o for each in evaluated for o in each.absent])
    print(json.dumps(scores_json(scores), indent=2) if args.json else render(scores, args.verbose))
    return 0


def chosen_sets(labelled: Path | None, data: Path | None) -> list[LabelledSet]:
    if labelled is None:
        sets = default_sets(data)
        if not sets:
            raise CurvedocError(REPOSITORY / "fixtures", "no labelled sets found")
        return sets
    if labelled.is_dir() and (labelled / "labels.json").is_file():
        return [LabelledSet(labelled.name, TUNING, labelled / "labels.json", data or labelled)]
    if not labelled.exists():
        raise CurvedocError(labelled, "no such labels file or folder")
    if labelled.is_dir() and not any(labelled.glob("*.json")):
        raise CurvedocError(labelled, "no labels.json, and no labels files in it")
    if data is None or not data.is_dir():
        raise CurvedocError(labelled, "a labels file needs --data: the folder its keys are relative to")
    return [LabelledSet(labelled.stem, PUBLIC, labelled, data)]


if __name__ == "__main__":
    sys.exit(main())
