"""The audit's index as one self-contained HTML page: totals, runs per symptom, every run in a table worst first
(each linked to its own report when the audit wrote one), the healthy runs folded, the cross-run findings and what
could not be read.

Styles and escaping are the per-run page's (:data:`curvedoc.report.html.STYLE`, :func:`curvedoc.report.html.text`):
no scripts, no external resources, log text escaped with its quotes and never in an attribute other than an
``href`` built from a percent-encoded relative path. No plots: the page of an archive of thousands of runs stays a
few hundred bytes a run and renders at once.
"""

from __future__ import annotations

from curvedoc import __version__
from curvedoc.report import HEALTHY, INSUFFICIENT, VERDICT_PHRASES, VERDICTS, WITHOUT_FINDINGS
from curvedoc.report.html import STYLE, finding_article, html_list, severity_class, text
from curvedoc.report.index import Index, Row

INDEX_STYLE = """
.counts { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.8rem 0; }
.counts .badge { font-size: 0.95rem; padding: 0.2rem 0.7rem; }
td.number { text-align: right; white-space: nowrap; }
td:last-child { white-space: nowrap; }
table.symptoms { width: auto; }
"""


def render(index: Index) -> str:
    totals = index.totals
    unhealthy = [row for row in index.rows if row.verdict not in WITHOUT_FINDINGS]
    quiet = [row for row in index.rows if row.verdict in WITHOUT_FINDINGS]
    counts = "".join(f'<span class="badge {name}">{getattr(totals, name):,} {VERDICT_PHRASES[name]}</span>'
                     for name in VERDICTS if name != INSUFFICIENT or totals.insufficient)
    if totals.unreadable:
        counts += f'<span class="badge info">{totals.unreadable:,} unreadable</span>'
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>curvedoc audit</title>",
        f"<style>{STYLE}{INDEX_STYLE}</style></head><body>",
        "<h1>curvedoc audit</h1>",
        f'<p class="muted">{", ".join(text(root) for root in index.result.roots)} · curvedoc {text(__version__)}</p>',
        f'<div class="counts">{counts}</div>',
        f"<p>{text(totals.line())}; {totals.analysed:,} read and diagnosed in this audit</p>",
        _symptoms(index),
        _cross_run(index),
    ]
    if unhealthy:
        parts += [f"<h2>Runs with findings ({len(unhealthy):,})</h2>", _table(index, unhealthy)]
    if quiet:
        heading = "Healthy runs" if all(row.verdict == HEALTHY for row in quiet) else "Runs without findings"
        parts.append(f"<details><summary>{heading} ({len(quiet):,})</summary>{_table(index, quiet)}</details>")
    if not index.rows:
        parts.append("<p>No runs were found.</p>")
    parts += [_unreadable(index), "</body></html>"]
    return "\n".join(part for part in parts if part)


def _run_name(index: Index, row: Row) -> str:
    link = index.link(row.summary, "html")
    name = text(row.label)
    return f'<a href="{text(link)}">{name}</a>' if link else name


def _table(index: Index, rows: list[Row]) -> str:
    body = "".join(
        f"<tr><td>{_run_name(index, row)}</td><td>{text(row.summary.format)}</td>"
        f'<td><span class="badge {row.verdict}">{row.verdict}</span></td>'
        f"<td>{text(row.findings_text()) or '—'}</td><td>{text(row.key_metric_text())}</td></tr>"
        for row in rows
    )
    return ("<table><thead><tr><th>Run</th><th>Format</th><th>Verdict</th><th>Findings</th><th>Final</th></tr>"
            f"</thead><tbody>{body}</tbody></table>")


def _symptoms(index: Index) -> str:
    if not index.symptoms:
        return ""
    body = "".join(f'<tr><td><code>{text(item.symptom)}</code></td><td class="number">{item.runs:,}</td>'
                   f'<td><span class="badge {severity_class(item.severity)}">{text(item.severity)}</span></td></tr>'
                   for item in index.symptoms)
    return ('<h2>Runs per symptom</h2><table class="symptoms"><thead><tr><th>Symptom</th><th>Runs</th>'
            f"<th>Severity</th></tr></thead><tbody>{body}</tbody></table>")


def _cross_run(index: Index) -> str:
    if not index.cross_run:
        return ""
    articles = []
    for finding in index.cross_run:
        runs = [_run_name(index, row) if (row := index.row_of(path)) else text(path) for path in finding.runs]
        details = [("symptom", f"<code>{text(finding.symptom)}</code>"), ("runs", html_list(runs))]
        if finding.hparams:
            details.append(("hyperparameters", ", ".join(f"<code>{text(name)}</code>" for name in finding.hparams)))
        articles.append(finding_article(finding, details, index.evidence(finding)))
    return f"<h2>Across runs ({len(index.cross_run)})</h2>" + "".join(articles)


def _unreadable(index: Index) -> str:
    unreadable = index.result.unreadable
    if not unreadable:
        return ""
    items = "".join(f"<li>{text(index.shown(item.path))}: {text(item.reason)}</li>" for item in unreadable)
    return f'<h2>Could not be read ({len(unreadable):,})</h2><ul class="warnings-list">{items}</ul>'
