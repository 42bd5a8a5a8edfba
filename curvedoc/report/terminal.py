"""The plain-text view: each run, its format, per tag its role, points and step range, then its findings."""

from __future__ import annotations

from curvedoc.diagnose import first_response
from curvedoc.report import printable, series_summary
from curvedoc.rules import all_rules


def render(runs, problems=(), options=None) -> str:
    lines: list[str] = []
    for run in runs:
        n_classes = (
            f"{run.meta.n_classes} classes ({run.meta.n_classes_source})" if run.meta.n_classes else "classes unknown"
        )
        # A store holding many runs names each by its path plus an id; the run's own name says which it is.
        named = "" if run.name in run.path else f"  ({printable(run.name)})"
        lines.append(f"{printable(run.path)}{named}  [{run.format}]  {n_classes}")
        rows = series_summary(run)
        if not rows:
            lines.append("  (no scalar points)")
        width = max((len(printable(row["tag"])) for row in rows), default=0)
        for row in rows:
            nonfinite = f"  {row['n_nonfinite']} non-finite" if row["n_nonfinite"] else ""
            lines.append(
                f"  {printable(row['tag']).ljust(width)}  {row['role']:<10}  {row['n_points']:>8} pts"
                f"  steps {row['first_step']}..{row['last_step']}{nonfinite}"
            )
        for warning in run.warnings:
            lines.append(f"  warning: {printable(warning)}")
        if run.findings:
            lines.extend(_findings(run.findings))
        else:
            lines.append(f"  no findings: none of the {len(all_rules())} rules (`curvedoc rules`) sees a symptom")
    for problem in problems:
        lines.append(f"warning: {printable(problem)}")
    diagnosed = [run for run in runs if run.findings]
    if diagnosed:
        lines += ["", "First response, for any run with findings:"]
        lines.extend(f"  {number}. {step}" for number, step in enumerate(first_response(diagnosed[0]), start=1))
    return "\n".join(lines)


def _findings(findings) -> list[str]:
    lines = []
    for finding in findings:
        where = f" at step {finding.step}" if finding.step is not None else ""
        lines.append(f"  {finding.severity.upper()} {finding.code} {finding.symptom}{where}: {printable(finding.title)}")
        lines.extend(f"      {printable(item)}" for item in finding.evidence)
        lines.append(f"      check: {finding.cheapest_check}")
    return lines
