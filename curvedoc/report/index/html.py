"""The audit's index as one self-contained HTML page: totals, then every run in one table worst first (each
linked to its own report when the audit wrote one), sortable by a click on a column's header and filtered by
verdict or symptom; then the runs per symptom, the cross-run findings and what could not be read.

Styles and escaping are the per-run page's (:data:`curvedoc.report.html.STYLE`, :func:`curvedoc.report.html.text`):
no external resources, log text escaped with its quotes and never in an attribute other than an ``href`` built
from a percent-encoded relative path or a ``data-`` attribute. The one script is inline and holds no log text: it
reads the rows' ``data-`` attributes and text and only hides and reorders rows that are on the page, so without
it the page shows the whole table (the filters, useless then, stay hidden) and log text never becomes markup.
No plots: the page of an archive of thousands of runs stays a few hundred bytes a run and renders at once.
"""

from __future__ import annotations

from curvedoc import __version__
from curvedoc.report import INSUFFICIENT, VERDICT_PHRASES, VERDICTS
from curvedoc.report.html import STYLE, finding_article, html_list, rule_notes, severity_class, text
from curvedoc.report.index import Index, Row

INDEX_STYLE = """
.counts { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.8rem 0; }
.counts .badge { font-size: 0.95rem; padding: 0.2rem 0.7rem; }
td.number { text-align: right; white-space: nowrap; }
td:last-child { white-space: nowrap; }
table.symptoms { width: auto; }
.filters:not([hidden]) { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin: 0.5rem 0;
                         font-size: 0.9rem; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; }
table.sortable th::after { content: " ↕"; color: #aaa; }
table.sortable th[aria-sort="ascending"]::after { content: " ▲"; color: #333; }
table.sortable th[aria-sort="descending"]::after { content: " ▼"; color: #333; }
"""

# (header, sorted by number): Verdict sorts by the rows' worst-first rank, Final by the metric's value.
COLUMNS = (("Run", False), ("Format", False), ("Verdict", True), ("Findings", False), ("Final", True))

# Sorts and filters the runs table. It reads data- attributes and cell text, sets `hidden` and moves rows, and
# never writes markup: no log text can become HTML through it.
SCRIPT = """
(() => {
  const table = document.getElementById("runs");
  const form = document.getElementById("run-filters");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const headers = Array.from(table.tHead.rows[0].cells);
  const shown = document.getElementById("runs-shown");

  function filter() {
    const verdict = form.elements.verdict.value;
    const symptom = form.elements.symptom.value;
    let count = 0;
    for (const row of rows) {
      const keep = (!verdict || row.dataset.verdict === verdict) &&
        (!symptom || row.dataset.symptoms.split(" ").includes(symptom));
      row.hidden = !keep;
      count += keep ? 1 : 0;
    }
    shown.textContent = count === rows.length ? "" : count + " of " + rows.length + " runs shown";
  }

  function sortBy(header) {
    const column = headers.indexOf(header);
    const numeric = header.dataset.type === "number";
    const direction = header.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    const key = (row) => {
      const cell = row.cells[column];
      if (!numeric) return cell.textContent.trim();
      return cell.dataset.sort ? Number(cell.dataset.sort) : NaN;
    };
    const keyed = rows.map((row) => [key(row), row]);
    keyed.sort(([a], [b]) => {
      if (!numeric) return a.localeCompare(b, undefined, {numeric: true}) * direction;
      // a run without the value (no metric to compare) stays at the bottom whichever way the column is sorted
      if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) - Number.isNaN(b);
      return (a - b) * direction;
    });
    for (const other of headers) other.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    const reordered = document.createDocumentFragment();
    for (const [, row] of keyed) reordered.appendChild(row);
    body.appendChild(reordered);
  }

  for (const header of headers) {
    header.tabIndex = 0;
    header.title = "sort by this column";
    header.addEventListener("click", () => sortBy(header));
    header.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sortBy(header);
      }
    });
  }
  form.addEventListener("change", filter);
  form.addEventListener("submit", (event) => event.preventDefault());
  table.classList.add("sortable");
  form.hidden = false;
  filter();  // a reloaded page may come back with the filters it had
})();
"""


def render(index: Index) -> str:
    totals = index.totals
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
        _runs(index),
        _symptoms(index),
        _cross_run(index),
        _unreadable(index),
        rule_notes(finding.code for finding in index.cross_run),
        f"<script>{SCRIPT}</script>" if index.rows else "",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part)


def _runs(index: Index) -> str:
    if not index.rows:
        return "<p>No runs were found.</p>"
    return f"<h2>Runs ({len(index.rows):,})</h2>{_filters(index)}{_table(index)}"


def _filters(index: Index) -> str:
    """The filter controls, hidden until the script that makes them work shows them."""
    verdicts = "".join(f'<option value="{name}">{VERDICT_PHRASES[name]} ({count:,})</option>'
                       for name in VERDICTS if (count := getattr(index.totals, name)))
    symptoms = "".join(f'<option value="{text(item.symptom)}">{text(item.symptom)} ({item.runs:,})</option>'
                       for item in index.symptoms)
    return ('<form id="run-filters" class="filters" hidden>'
            f'<label>Verdict <select name="verdict"><option value="">all</option>{verdicts}</select></label>'
            f'<label>Symptom <select name="symptom"><option value="">any</option>{symptoms}</select></label>'
            '<output id="runs-shown"></output></form>')


def _run_name(index: Index, row: Row) -> str:
    link = index.link(row.summary, "html")
    name = text(row.label)
    return f'<a href="{text(link)}">{name}</a>' if link else name


def _table(index: Index) -> str:
    header = "".join(f'<th scope="col" data-type="{"number" if numeric else "text"}">{name}</th>'
                     for name, numeric in COLUMNS)
    body = "".join(_row(index, rank, row) for rank, row in enumerate(index.rows))
    return f'<table id="runs"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _row(index: Index, rank: int, row: Row) -> str:
    symptoms = " ".join(dict.fromkeys(finding.symptom for finding in row.failures))
    key = row.key_metric
    final = f' data-sort="{key[1].final!r}"' if key else ""
    return (f'<tr data-verdict="{row.verdict}" data-symptoms="{text(symptoms)}">'
            f"<td>{_run_name(index, row)}</td><td>{text(row.summary.format)}</td>"
            f'<td data-sort="{rank}"><span class="badge {row.verdict}">{row.verdict}</span></td>'
            f"<td>{text(row.findings_text()) or '—'}</td><td{final}>{text(row.key_metric_text())}</td></tr>")


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
