"""One self-contained HTML page to read or send a colleague: no scripts, no external fonts, styles or images.

The page has a summary table of every run, then per failing or warning run its findings, each with a plot where
its evidence is drawn (inline SVG, curvedoc.report.svg, so the file needs no network and no neighbour files),
then the healthy runs collapsed in ``<details>``, the first-response checklist once, and a note on each rule
found, which each finding links to (``curvedoc rules CODE``). Everything read from a
log (names, paths, tags, evidence that quotes tags) is HTML-escaped, quotes included, and never lands in an
attribute that could run code; the page carries no JavaScript at all.
"""

from __future__ import annotations

import html
import re

from curvedoc import __version__
from curvedoc.diagnose import first_response
from curvedoc.report import (HEALTHY, INSUFFICIENT, VERDICT_PHRASES, VERDICTS, WITHOUT_FINDINGS, ReportOptions,
                             markup_text, series_summary, verdict, verdict_tally)
from curvedoc.report.rules_doc import anchor, explain
from curvedoc.report.svg import svg_for_run
from curvedoc.rules import REGISTRY

# a badge shows its verdict by name, but for the one whose name is no phrase
VERDICT_LABELS = {INSUFFICIENT: VERDICT_PHRASES[INSUFFICIENT]}

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1100px;
       padding: 1rem 1.5rem 3rem; color: #1b1b1b; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.3rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem;
     overflow-wrap: anywhere; }
.muted { color: #666; font-size: 0.85rem; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
td:first-child { overflow-wrap: anywhere; }
td:nth-child(2) { white-space: nowrap; }
th { background: #f5f5f5; }
.badge { display: inline-block; padding: 0.05rem 0.45rem; border-radius: 0.6rem; font-size: 0.8rem;
         font-weight: 600; white-space: nowrap; }
.failing, .error { background: #fde0e0; color: #a01818; }
.warnings, .warning { background: #fff0d6; color: #8a4b00; }
.healthy { background: #e0f4e4; color: #1d6b2f; }
.insufficient { background: #eeeeee; color: #444; }
.info { background: #e3ecfb; color: #1c4f9c; }
.finding { border: 1px solid #e4e4e4; border-left: 4px solid #999; border-radius: 4px; padding: 0.6rem 0.9rem;
           margin: 0.8rem 0; }
.finding.sev-error { border-left-color: #c62828; }
.finding.sev-warning { border-left-color: #ef6c00; }
.finding.sev-info { border-left-color: #1565c0; }
.finding h3 { font-size: 1rem; margin: 0 0 0.4rem; overflow-wrap: anywhere; }
.finding dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 0.8rem; margin: 0.4rem 0; }
.finding dt { font-weight: 600; color: #444; }
.finding dd { margin: 0; overflow-wrap: anywhere; }
.finding ul { margin: 0; padding-left: 1.1rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85em;
       background: #f3f3f3; padding: 0 0.2rem; border-radius: 3px; }
svg.plot { display: block; max-width: 100%; height: auto; margin-top: 0.5rem; border: 1px solid #eee; }
.rule-note pre { white-space: pre-wrap; font-size: 0.85em; background: #f7f7f7; padding: 0.5rem; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; font-weight: 600; }
.checklist { background: #f7f9fc; border: 1px solid #dde5f0; border-radius: 4px; padding: 0.6rem 1rem; }
.checklist h2 { margin-top: 0.2rem; }
.warnings-list li { color: #8a4b00; overflow-wrap: anywhere; }
"""
# the class of the block a notebook shows a report in: the report's styles apply inside it only
NOTEBOOK_SCOPE = "curvedoc-report"


def render(runs, problems=(), options: ReportOptions | None = None) -> str:
    ranked = sorted(runs, key=lambda run: VERDICTS.index(verdict(run)))
    # Runs compare by value (their DataFrames), so each is known by its place in the ranking.
    diagnosed = [(index, run) for index, run in enumerate(ranked) if verdict(run) not in WITHOUT_FINDINGS]
    quiet = [(index, run) for index, run in enumerate(ranked) if verdict(run) in WITHOUT_FINDINGS]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>curvedoc report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>curvedoc report</h1>",
        f'<p class="muted">{_counts(ranked)} · curvedoc {text(__version__)}</p>',
        _summary_table(ranked),
        _problems(problems),
    ]
    with_findings = [run for run in ranked if run.findings]
    if with_findings:
        steps = "".join(f"<li>{text(step)}</li>" for step in first_response(with_findings[0]))
        parts.append(f'<section class="checklist"><h2>First response, for any run with findings</h2>'
                     f"<ol>{steps}</ol></section>")
    parts.extend(run_html(run, index) for index, run in diagnosed)
    if quiet:
        heading = "Healthy runs" if all(verdict(run) == HEALTHY for _, run in quiet) else "Runs without findings"
        parts.append(f"<h2>{heading} ({len(quiet)})</h2>")
        parts.extend(run_html(run, index) for index, run in quiet)
    parts.append(rule_notes(finding.code for run in ranked for finding in run.findings))
    parts.append("</body></html>")
    return "\n".join(part for part in parts if part)


def notebook_html(runs, problems=()) -> str:
    """What a notebook shows for runs (``Run._repr_html_``, ``RunList._repr_html_``): each run as the report shows
    it, in the list's order, inside a block the report's styles are scoped to, so the notebook keeps its own look.
    A run without findings shows its curves, folded when it is one of several."""
    runs = list(runs)
    folded = len(runs) > 1
    counts = f'<p class="muted">{_counts(runs)}</p>' if folded else ""
    sections = "".join(run_html(run, index, folded) for index, run in enumerate(runs))
    sections += rule_notes(finding.code for run in runs for finding in run.findings)
    style = _scoped(STYLE, NOTEBOOK_SCOPE)
    return f'<div class="{NOTEBOOK_SCOPE}"><style>{style}</style>{counts}{_problems(problems)}{sections}</div>'


def run_html(run, index: int, folded: bool = True) -> str:
    """One run as the report shows it: with findings, its section with a plot per finding; without, its verdict
    and curves in a ``<details>`` (open unless ``folded``)."""
    return _quiet_run(run, index, folded) if verdict(run) in WITHOUT_FINDINGS else _run_section(run, index)


def _scoped(style: str, scope: str) -> str:
    """``style`` applied only inside the element of class ``scope``, the page's body rule to that element itself:
    a notebook is someone else's page."""
    def rule(match: re.Match) -> str:
        selectors = [selector.strip() for selector in match[1].split(",")]
        return "\n" + ", ".join(f".{scope}" if selector == "body" else f".{scope} {selector}"
                                for selector in selectors) + " {"

    return re.sub(r"([^{}]+)\{", rule, style)


text = markup_text  # untrusted text as inert HTML: the one escaping the page, its SVG charts and the index share


def _counts(runs) -> str:
    count = {name: sum(verdict(run) == name for run in runs) for name in VERDICTS}
    return f"{len(runs)} run{'s' if len(runs) != 1 else ''}: {verdict_tally(count)}"


def _badge(state: str) -> str:
    return f'<span class="badge {state}">{VERDICT_LABELS.get(state, state)}</span>'


def _anchor(index: int) -> str:
    # Anchors are numbered, never built from a run name, so log text never reaches an id or href.
    return f"run-{index}"


def _summary_table(runs) -> str:
    if not runs:
        return "<p>No runs were read.</p>"
    rows = []
    for index, run in enumerate(runs):
        state = verdict(run)
        findings = ", ".join(f"{text(finding.code)} {text(finding.symptom)}" for finding in run.findings) or "—"
        if state == INSUFFICIENT:
            findings = text(run.insufficient)
        rows.append(
            f'<tr><td><a href="#{_anchor(index)}">{text(run.name)}</a><div class="muted">{text(run.path)}</div></td>'
            f'<td>{text(run.format)}</td>'
            f'<td>{_badge(state)}</td><td>{findings}</td></tr>'
        )
    return ("<table><thead><tr><th>Run</th><th>Format</th><th>Verdict</th><th>Findings</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _problems(problems) -> str:
    if not problems:
        return ""
    items = "".join(f"<li>{text(problem)}</li>" for problem in problems)
    return f'<h2>Inputs that could not be read</h2><ul class="warnings-list">{items}</ul>'


def _run_header(run) -> str:
    classes = (f"{run.meta.n_classes} classes ({text(run.meta.n_classes_source)})" if run.meta.n_classes
               else "classes unknown")
    rows = series_summary(run)
    steps = f"steps {min(row['first_step'] for row in rows)}..{max(row['last_step'] for row in rows)}" if rows else \
        "no scalar points"
    warnings = "".join(f"<li>{text(warning)}</li>" for warning in run.warnings)
    not_checked = "".join(f"<li>{text(item)}</li>" for item in run.not_checked)
    return (f'<p class="muted">{text(run.path)} · {text(run.format)} · {len(rows)} curves · {steps} · {classes}</p>'
            + (f'<ul class="warnings-list">{warnings}</ul>' if warnings else "")
            + (f'<p class="muted">Not checked:</p><ul class="muted">{not_checked}</ul>' if not_checked else ""))


def _run_section(run, index: int) -> str:
    state = verdict(run)
    findings = "".join(_finding(run, finding) for finding in run.findings)
    return (f'<section id="{_anchor(index)}"><h2>{text(run.name)} {_badge(state)}</h2>'
            f"{_run_header(run)}{findings}</section>")


def _finding(run, finding) -> str:
    details = [("symptom", f"<code>{text(finding.symptom)}</code>")]
    if finding.step is not None:
        details.append(("step", str(int(finding.step))))
    if finding.step_range is not None:
        details.append(("steps", f"{int(finding.step_range[0])}–{int(finding.step_range[1])}"))
    if finding.tags:
        details.append(("curves", ", ".join(f"<code>{text(tag)}</code>" for tag in finding.tags)))
    plot = svg_for_run(run, [finding], focused=True, description=f"{run.name}: {finding.code} {finding.symptom}") \
        if finding.tags or finding.step is not None or finding.step_range is not None else ""
    return finding_article(finding, details, finding.evidence, plot)


def rule_notes(codes) -> str:
    """The documentation of each rule found (``curvedoc rules CODE``), which each finding's code links to."""
    known = sorted({code for code in codes if code in REGISTRY})
    if not known:
        return ""
    notes = "".join(f'<details class="rule-note" id="{anchor(code)}"><summary>{text(code)} '
                    f"{text(REGISTRY[code].name)}</summary><pre>{html.escape(explain(REGISTRY[code]))}</pre></details>"
                    for code in known)
    return f"<h2>The rules found</h2>{notes}"


def finding_article(finding, details: list[tuple[str, str]], evidence, below: str = "") -> str:
    """A finding (of a run or across runs) as an article: its badge, code and title, the ``details`` given as
    (label, HTML) pairs, then evidence, likely causes and cheapest check, then ``below`` (a plot)."""
    details = list(details)
    if evidence:
        details.append(("evidence", html_list(text(item) for item in evidence)))
    if finding.causes:
        details.append(("likely causes", html_list(text(item) for item in finding.causes)))
    if finding.cheapest_check:
        details.append(("cheapest check", text(finding.cheapest_check)))
    rows = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in details)
    severity = severity_class(finding.severity)
    return (f'<article class="finding sev-{severity}"><h3><span class="badge {severity}">{severity}</span> '
            f"{_rule_link(finding.code)} · {text(finding.title)}</h3><dl>{rows}</dl>{below}</article>")


def _rule_link(code: str) -> str:
    """The finding's code, linked to its rule's note (rule_notes) when it is a rule's."""
    return f'<a href="#{text(anchor(code))}">{text(code)}</a>' if code in REGISTRY else text(code)


def severity_class(severity: str) -> str:
    """A class name from a known set only: a severity is data, and data never names a class freely."""
    return severity if severity in ("error", "warning", "info") else "info"


def html_list(items_html) -> str:
    """A bullet list of items that are HTML already (escaped text, links)."""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items_html) + "</ul>"


def _quiet_run(run, index: int, folded: bool = True) -> str:
    """A run without findings: healthy, or too little to judge (and why)."""
    state = verdict(run)
    why = f"<p>Not enough to judge: {text(run.insufficient)}</p>" if state == INSUFFICIENT else ""
    plot = svg_for_run(run, description=f"{run.name}: curves") if not run.scalars.empty else ""
    notes = "".join(_finding(run, finding) for finding in run.findings)  # info findings: notes, not symptoms
    return (f'<details id="{_anchor(index)}"{"" if folded else " open"}><summary>{text(run.name)} {_badge(state)}'
            f"</summary>{_run_header(run)}{why}{plot}{notes}</details>")
