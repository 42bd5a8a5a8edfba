"""Measures the rules on a labelled corpus: precision and recall per symptom, false alarms on healthy runs.

    python -m curvedoc.evaluate fixtures/corpus [--verbose] [--json]
    python -m curvedoc.evaluate --archive fixtures/audit [--verbose] [--json]

The corpus folder holds ``labels.json``: ``{"<run path relative to the folder>": {"symptoms": [...],
"healthy": bool, ...}}``. A symptom counts as detected when a finding with that symptom has severity error or
warning (info findings are notes, not alarms).

With ``--archive`` the cross-run rules (CD8xx) are measured instead, per group of runs: ``labels.json`` maps
each top-level folder of the archive to ``{"expect": [cross-run symptoms], "not_expect": [...], "healthy":
bool}``, and a cross-run finding (any severity: each is advice someone acts on) belongs to every group holding
one of its runs. An archive without such labels (the per-run corpus) gets its cross-run findings listed, to be
judged by eye.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import curvedoc
from curvedoc.diagnose import diagnose_runs
from curvedoc.errors import CurvedocError
from curvedoc.rules import ARCHIVE_SYMPTOMS, SYMPTOMS

ALARMS = {"error", "warning"}


@dataclass
class Outcome:
    path: str
    expected: set[str]
    detected: set[str]
    healthy: bool
    problem: str | None = None


@dataclass
class Scores:
    outcomes: list[Outcome] = field(default_factory=list)

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

    def false_alarm_rate(self) -> tuple[int, int]:
        healthy = [o for o in self.outcomes if o.healthy]
        return sum(bool(o.detected) for o in healthy), len(healthy)


def evaluate(corpus: Path) -> Scores:
    labels = json.loads((corpus / "labels.json").read_text())
    scores = Scores()
    for relative, label in sorted(labels.items()):
        expected = set(label.get("symptoms", []))
        healthy = bool(label.get("healthy", not expected))
        try:
            runs = curvedoc.load(corpus / relative)
        except CurvedocError as exc:
            scores.outcomes.append(Outcome(relative, expected, set(), healthy, str(exc)))
            continue
        diagnose_runs(runs)
        detected = {f.symptom for run in runs for f in run.findings if f.severity in ALARMS}
        scores.outcomes.append(Outcome(relative, expected, detected, healthy))
    return scores


def render(scores: Scores, verbose: bool) -> str:
    lines = ["| symptom | labelled | TP | FP | FN | precision | recall |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for symptom, row in scores.per_symptom().items():
        lines.append(f"| {symptom} | {row['labelled']} | {row['tp']} | {row['fp']} | {row['fn']} | "
                     f"{row['precision']:.2f} | {row['recall']:.2f} |")
    alarms, healthy = scores.false_alarm_rate()
    rate = alarms / healthy if healthy else float("nan")
    lines.append("")
    lines.append(f"healthy runs with an error/warning finding: {alarms} of {healthy} ({rate:.1%}); "
                 f"runs evaluated: {len(scores.outcomes)}")
    unreadable = [o for o in scores.outcomes if o.problem]
    lines.extend(f"unreadable: {o.path}: {o.problem}" for o in unreadable)
    if verbose:
        lines.append("")
        for o in scores.outcomes:
            missed, extra = o.expected - o.detected, o.detected - o.expected
            if missed or extra:
                lines.append(f"{o.path}: missed {sorted(missed) or '-'}; false {sorted(extra) or '-'}")
    return "\n".join(lines)


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
    parser.add_argument("corpus", type=Path, help="a folder holding labels.json and the runs (or groups) it names")
    parser.add_argument("--verbose", action="store_true", help="list every run whose findings differ from its labels")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--archive", action="store_true", help="measure the cross-run rules (CD8xx) per group")
    args = parser.parse_args(argv)
    if not (args.corpus / "labels.json").is_file():
        print(f"curvedoc: error: {args.corpus}: no labels.json", file=sys.stderr)
        return 2
    if args.archive:
        scores, findings = evaluate_archive(args.corpus)
        if args.json:
            alarms, healthy = scores.false_alarm_rate()
            print(json.dumps({"per_symptom": scores.per_symptom(ARCHIVE_SYMPTOMS), "healthy_false_alarms": alarms,
                              "healthy_groups": healthy, "findings": [f.to_dict() for f in findings]}, indent=2))
        else:
            print(render_archive(scores, findings, args.verbose))
        return 0
    scores = evaluate(args.corpus)
    if args.json:
        alarms, healthy = scores.false_alarm_rate()
        print(json.dumps({"per_symptom": scores.per_symptom(), "healthy_false_alarms": alarms,
                          "healthy_runs": healthy}, indent=2))
    else:
        print(render(scores, args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
