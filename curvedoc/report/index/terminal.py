"""The audit's index on a terminal: the runs with findings in a table, worst first, the healthy ones folded into a
count; runs per symptom; what only a comparison of runs shows; what could not be read; one line of totals.

Lines and styling come from the per-run terminal report's :class:`~curvedoc.report.terminal.Output`, so the same
rules hold: log text passes through ``printable``, colour only when ``options.color``, lines cut to
``options.width`` only on a terminal. A path too long for its column keeps its start and its end (the run's own
folder and file say which run it is) and loses its middle, never so much that two runs read the same
(:func:`~curvedoc.report.index.cut_apart`).
"""

from __future__ import annotations

from curvedoc.diagnose import SEVERITY_ORDER
from curvedoc.report import FAILING, INSUFFICIENT, VERDICT_PHRASES, WITHOUT_FINDINGS
from curvedoc.report.index import Index, Row, cut_apart, listed, plain
from curvedoc.report.terminal import VERDICT_MARK, VERDICT_STYLE, Output, cells, cut

GAP = "  "
VERDICT_CELLS = 15  # "? insufficient" and a space
FORMAT_CELLS = 18
SHORTEST_PATH = 16
ROOMY_PATH = 40  # below this the format column goes, so a run's path keeps its room
# The findings column keeps this much (cells, and share of what verdict and metric leave) before paths are cut.
FINDINGS_ROOM, FINDINGS_SHARE = 20, 0.3
LONGEST_UNCUT_PATH = 80  # in a file, paths stay whole but align only up to here
# An archive this small lists its healthy runs too; a larger one counts them.
LISTS_HEALTHY_UP_TO = 20
RUNS_NAMED = 6  # runs a cross-run finding names on a terminal before counting the rest
LISTED_AT_MOST = 20  # unreadable sources


def render(index: Index) -> str:
    out = Output(index.options)
    if index.options.quiet:
        failing = index.of_verdict(FAILING)
        paths = [plain(row.shown_path) for row in failing]
        if out.cut_to_width:
            paths = cut_apart(paths, out.width - VERDICT_CELLS)
        for row, path in zip(failing, paths, strict=True):
            out.line((f"{FAILING.upper():<{VERDICT_CELLS}}", VERDICT_STYLE[FAILING]), (path, None),
                     (f"{GAP}{plain(row.findings_text())}", "dim"))
        out.line((index.totals.line(), "bold"))
        return out.text()
    out.line(("curvedoc audit of ", "bold"), (", ".join(plain(root) for root in index.result.roots), None))
    out.blank()
    _table(out, index)
    _symptoms(out, index)
    _cross_run(out, index)
    _unreadable(out, index)
    out.blank()
    out.line((index.totals.line(), "bold"))
    return out.text()


def _listed_rows(index: Index) -> tuple[list[Row], str]:
    """The rows the table shows, and a line counting the rest."""
    unhealthy = [row for row in index.rows if row.verdict not in WITHOUT_FINDINGS]
    healthy, too_little = index.totals.healthy, index.totals.insufficient
    shown = unhealthy if index.options.rows is None else unhealthy[:max(index.options.rows, 0)]
    if len(index.rows) <= LISTS_HEALTHY_UP_TO and index.options.rows is None:
        return index.rows, ""
    rest = []
    if len(unhealthy) > len(shown):
        rest.append(f"{len(unhealthy) - len(shown):,} more with findings")
    if healthy:
        rest.append(f"{healthy:,} healthy run{'s' if healthy != 1 else ''}")
    if too_little:
        rest.append(f"{too_little:,} with {VERDICT_PHRASES[INSUFFICIENT]}")
    return shown, f"… and {' and '.join(rest)}" if rest else ""


def _table(out: Output, index: Index) -> None:
    rows, folded = _listed_rows(index)
    if not index.rows:
        out.line(("No runs were found.", None))
        return
    labels = [plain(row.label) for row in rows]
    formats = [plain(row.summary.format) for row in rows]
    metrics = [row.key_metric_text() for row in rows]
    format_cells = min(max((cells(text) for text in formats), default=0), FORMAT_CELLS)
    metric_cells = max((cells(text) for text in metrics), default=0)
    longest_label = max((cells(label) for label in labels), default=0)
    if out.cut_to_width:
        room = out.width - VERDICT_CELLS - metric_cells - 2 * len(GAP)
        room -= max(FINDINGS_ROOM, int(room * FINDINGS_SHARE))
        if room - format_cells - len(GAP) < ROOMY_PATH:  # the run matters more than its format
            format_cells = 0
        else:
            room -= format_cells + len(GAP)
        label_cells = max(min(longest_label, room), SHORTEST_PATH)
        labels = cut_apart(labels, label_cells)
        # A label that grew to tell two runs apart widens the column, so the rows below stay aligned.
        label_cells = max(label_cells, max((cells(label) for label in labels), default=0))
    else:
        label_cells = min(longest_label, LONGEST_UNCUT_PATH)
    format_column = (lambda text: GAP + pad(cut(text, format_cells), format_cells)) if format_cells else \
        (lambda text: "")
    if rows:
        out.line((f"{'VERDICT':<{VERDICT_CELLS}}{pad('RUN', label_cells)}{format_column('FORMAT')}{GAP}"
                  f"{pad('FINAL', metric_cells)}{GAP}FINDINGS", "dim"))
    for row, label, format_name, metric in zip(rows, labels, formats, metrics, strict=True):
        word = row.verdict.upper() if row.verdict not in WITHOUT_FINDINGS else row.verdict
        out.line((f"{VERDICT_MARK[row.verdict]} {word}".ljust(VERDICT_CELLS), VERDICT_STYLE[row.verdict]),
                 (pad(label, label_cells), "bold" if row.verdict == FAILING else None),
                 (format_column(format_name), "dim"),
                 (GAP + pad(metric, metric_cells), None),
                 (GAP + (plain(row.findings_text()) if row.verdict == INSUFFICIENT
                        else ", ".join(dict.fromkeys(plain(f.symptom) for f in row.failures))), None))
    if folded:
        out.line((folded, "dim"))


def pad(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal cells (wide characters count twice)."""
    return text + " " * max(width - cells(text), 0)


def _symptoms(out: Output, index: Index) -> None:
    if not index.symptoms:
        return
    out.blank()
    out.line(("Runs per symptom", "bold"))
    out.wrapped(" · ".join(f"{plain(item.symptom)} {item.runs:,}" for item in index.symptoms), indent="  ")


def _cross_run(out: Output, index: Index) -> None:
    if not index.cross_run:
        return
    out.blank()
    out.line((f"Across runs ({len(index.cross_run)})", "bold"))
    for finding in index.cross_run:
        severity = finding.severity if finding.severity in SEVERITY_ORDER else "info"
        out.line(("  ", None), (f"{severity.upper():<7}", severity),
                 (f" {plain(finding.code)} {plain(finding.symptom)}", "bold"))
        out.wrapped(plain(finding.title), indent="      ")
        runs = [plain(row.shown_path if (row := index.row_of(path)) else path) for path in finding.runs]
        out.wrapped(listed(runs, RUNS_NAMED), indent="      runs: ")
        if finding.hparams:
            out.wrapped(", ".join(plain(name) for name in finding.hparams), indent="      hyperparameters: ")
        for item in index.evidence(finding):
            out.wrapped(plain(item), indent="      · ", style="dim")
        if finding.cheapest_check:
            out.wrapped(plain(finding.cheapest_check), indent="      check: ")


def _unreadable(out: Output, index: Index) -> None:
    unreadable = index.result.unreadable
    if not unreadable:
        return
    out.blank()
    out.line((f"Could not be read ({len(unreadable):,})", "bold"))
    for item in unreadable[:LISTED_AT_MOST]:
        out.wrapped(f"{plain(index.shown(item.path))}: {plain(item.reason)}", indent="  ", style="warning")
    if len(unreadable) > LISTED_AT_MOST:
        out.line((f"  … and {len(unreadable) - LISTED_AT_MOST:,} more", "dim"))
