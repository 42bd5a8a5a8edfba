"""The audit's index for spreadsheets: one row per run, worst first, written by the csv module (quoting fields that
hold commas, quotes or newlines).

Text from the logs can reach a spreadsheet as a formula: a run named ``=HYPERLINK(...)`` or ``@SUM(...)`` would run
when the file is opened. As OWASP recommends for CSV injection, a text cell starting with ``=``, ``+``, ``-`` or
``@`` gets a leading apostrophe (spreadsheets then show it as text); control characters (tab, carriage return,
escape sequences) are shown as '?'. Numbers are written as numbers, a negative loss included: only text is guarded.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from curvedoc.report.index import Index, Row, plain

# run: the path under the audited root, as every other index format names the run; path: as the user would type it.
COLUMNS = [
    "run", "path", "name", "format", "verdict", "n_errors", "n_warnings", "symptoms", "first_finding",
    "first_finding_step", "final_val_loss", "final_val_acc", "final_train_loss", "final_score", "start_time_utc",
    "n_points", "report",
]
# the main score (an agent's reward, mAP) after the losses, so that columns a sheet already reads keep their places
FINAL_ROLES = ("val_loss", "val_acc", "train_loss", "score")
FORMULA_STARTS = ("=", "+", "-", "@")
# The report a spreadsheet row links: the page for people first.
LINKED_FORMATS = ("html", "markdown")


def render(index: Index) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(_row(index, row) for row in index.rows)
    return buffer.getvalue()


def guarded(value) -> str:
    """Untrusted text as a cell a spreadsheet shows and never evaluates."""
    cell = plain(value)
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell


def iso_utc(seconds: float | None) -> str:
    if seconds is None:
        return ""
    try:
        return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):  # a corrupt timestamp far outside the calendar
        return ""


def _row(index: Index, row: Row) -> list:
    summary = row.summary
    first = row.failures[0] if row.failures else None
    link = next((link for fmt in LINKED_FORMATS if (link := index.link(summary, fmt))), "")
    return [
        guarded(row.shown_path), guarded(summary.path), guarded(summary.name), guarded(summary.format), row.verdict,
        row.n_errors, row.n_warnings,
        guarded(";".join(dict.fromkeys(f.symptom for f in row.failures))),
        guarded(first.title) if first else "",
        first.step if first is not None and first.step is not None else "",
        *[summary.metrics[role].final if role in summary.metrics else "" for role in FINAL_ROLES],
        iso_utc(summary.start_time),
        summary.n_points,
        guarded(link),
    ]
