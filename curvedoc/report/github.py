"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation a finding, shown on the
job's summary and, for a log file inside the checkout, beside that file in the pull request.

Tag names and titles come from the logs, so everything is escaped as the runner parses it: a newline in a tag must
never start a line of its own, or a log could issue workflow commands (``::add-mask::``, ``::stop-commands::``).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from curvedoc.report import printable, verdict, verdict_tally
from curvedoc.rules import all_rules

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def render(runs, problems=(), options=None) -> str:
    runs = list(runs)
    names = {rule.code: rule.name for rule in all_rules()}
    lines = []
    for run in runs:
        location = log_file(run)
        for finding in run.findings:
            title = f"{finding.code} {names.get(finding.code, finding.symptom)}"
            lines.append(f"::{LEVELS[finding.severity]} file={escape_property(location)},"
                         f"title={escape_property(title)}::{escape_data(message(finding))}")
    # An unreadable source has no run to attach to: a plain annotation still puts it on the job's summary.
    lines.extend(f"::warning title=curvedoc could not read::{escape_data(str(problem))}" for problem in problems)
    if runs:
        lines.append(f"curvedoc: {len(runs):,} run{'s' if len(runs) != 1 else ''}: "
                     f"{verdict_tally(Counter(verdict(run) for run in runs))}")
    return "\n".join(lines)


def log_file(run) -> str:
    """The file a run's findings belong to: its first log file (the run's folder when it has none)."""
    return relative(run.meta.files[0] if run.meta.files else run.path)


def relative(path: str) -> str:
    """A path as GitHub and SARIF want it: relative to the current directory (a workflow's checkout) when under
    it, with forward slashes; a run read from a remote URL keeps its URL."""
    if "://" in path:
        return path
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def message(finding) -> str:
    """Title, step and cheapest check on one line; most titles already name their step, and say it only once."""
    where = finding.where(dash="–")
    if where and not re.search(rf"{re.escape(where)}(?!\d)", finding.title):
        return f"{finding.title} ({where}). Cheapest check: {finding.cheapest_check}"
    return f"{finding.title}. Cheapest check: {finding.cheapest_check}"


def escape_data(text: str) -> str:
    # '%' first, or the escapes just written would be escaped again; printable() then turns what the runner passes
    # through raw (ANSI escapes, tabs, NUL) into '?', so a log cannot colour or garble the job's output.
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
