"""The plain-text view of what was read: each run, its format, and per tag its role, points and step range."""

from __future__ import annotations

from curvedoc.report import printable, series_summary


def render(runs, problems=()) -> str:
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
    for problem in problems:
        lines.append(f"warning: {printable(problem)}")
    return "\n".join(lines)
