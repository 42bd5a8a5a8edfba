"""The audit's index as GitHub-flavoured Markdown, ready to post as a pull-request comment.

A table of every run, worst first, each linked to its own Markdown report when the audit wrote one; the runs per
symptom; what only a comparison of runs shows; what could not be read. Log text is escaped as in the per-run
report (:func:`curvedoc.report.markdown.md`: no markup, links, code spans, table cells, list markers or ``@``
mentions from logs). The comment must stay under GitHub's 65,536-character limit, so a long index drops, in this
order: the table rows of the healthiest runs (healthy, then warnings, down to the worst ``ROWS_KEPT`` failing
runs), the cross-run findings beyond the most severe ``CROSS_RUN_KEPT``, the remaining cross-run findings, then
the rest of the rows; a note at the top says what was left out.
"""

from __future__ import annotations

from curvedoc.report import VERDICT_PHRASES, VERDICTS
from curvedoc.report.index import Index, Row, cut_apart, listed
from curvedoc.report.markdown import (BUDGET, COMMENT_LIMIT, LONGEST_TEXT, VERDICT_WORDS, capped, comment_length,
                                      longest_fitting, md)

ROWS_KEPT = 50  # failing rows kept before any cross-run finding is dropped
CROSS_RUN_LISTED = 20
CROSS_RUN_KEPT = 5
RUNS_NAMED = 10  # runs a cross-run finding names before counting the rest


def render(index: Index) -> str:
    return _IndexMarkdown(index).fitted()


class _IndexMarkdown:
    def __init__(self, index: Index):
        self.index = index
        # md() keeps only the start of a text longer than it allows; runs of a sweep may differ only near the end.
        self.labels = dict(zip((row.summary.path for row in index.rows),
                               cut_apart([row.label for row in index.rows], LONGEST_TEXT), strict=True))
        self.rows = [self.row(number, row) for number, row in enumerate(index.rows, start=1)]
        self.cross_run = [self.cross_run_block(finding) for finding in index.cross_run[:CROSS_RUN_LISTED]]

    def fitted(self) -> str:
        whole = self.document(len(self.rows), len(self.cross_run))
        if comment_length(whole) <= BUDGET:
            return whole
        floor = min(self.index.totals.failing, ROWS_KEPT)
        for crossed in dict.fromkeys((len(self.cross_run), min(CROSS_RUN_KEPT, len(self.cross_run)), 0)):
            text = longest_fitting(lambda kept, crossed=crossed: self.document(kept, crossed), floor, len(self.rows) - 1)
            if text is not None:
                return text
        return longest_fitting(lambda kept: self.document(kept, 0), 0, floor - 1) or self.document(0, 0)

    def document(self, rows: int, crossed: int) -> str:
        parts = [self.title(), self.note(rows, crossed), self.table(rows), self.symptoms(),
                 self.cross_run_section(crossed), self.unreadable()]
        text = "\n".join(part for part in parts if part).rstrip() + "\n"
        # A file name's undecodable bytes reach Python as lone surrogates, which cannot be written as UTF-8.
        return text.encode("utf-8", "replace").decode("utf-8")

    def title(self) -> str:
        roots = ", ".join(md(root) for root in self.index.result.roots)
        return (f"## curvedoc audit: {self.index.totals.line()}\n\n"
                f"Audited {roots} · {self.index.totals.analysed:,} runs read and diagnosed in this audit\n")

    def note(self, rows: int, crossed: int) -> str:
        left_out = []
        if rows < len(self.rows):
            dropped = self.index.rows[rows:]
            counts = [f"{count:,} {VERDICT_PHRASES[name]}" for name in reversed(VERDICTS)
                      if (count := sum(row.verdict == name for row in dropped))]
            left_out.append(f"the table rows of {len(dropped):,} runs ({', '.join(counts)})")
        if crossed < len(self.cross_run):
            left_out.append(f"{len(self.cross_run) - crossed} of the cross-run findings")
        if not left_out:
            return ""
        return (f"> **Shortened to fit GitHub's {COMMENT_LIMIT:,}-character comment limit:** left out "
                f"{' and '.join(left_out)}. The HTML, JSON and CSV index list every run.\n")

    def row(self, number: int, row: Row) -> str:
        name = md(self.labels[row.summary.path])
        link = self.index.link(row.summary, "markdown")
        if link:
            name = f"[{name}]({link})"
        return (f"| {number} | {name} | {VERDICT_WORDS[row.verdict]} | {md(row.findings_text())} | "
                f"{md(row.key_metric_text())} | {md(row.summary.format)} |")

    def table(self, rows: int) -> str:
        if not self.rows:
            return "No runs were found.\n"
        header = ["| # | run | verdict | findings | final | format |", "|---:|---|---|---|---|---|"]
        return "\n".join(header + self.rows[:rows]) + "\n" if rows else ""

    def symptoms(self) -> str:
        if not self.index.symptoms:
            return ""
        lines = ["**Runs per symptom**", "", "| symptom | runs | severity |", "|---|---:|---|"]
        lines += [f"| {md(item.symptom)} | {item.runs:,} | {md(item.severity)} |" for item in self.index.symptoms]
        return "\n".join(lines) + "\n"

    def cross_run_section(self, crossed: int) -> str:
        if not self.index.cross_run:
            return ""
        more = len(self.index.cross_run) - crossed
        lines = [f"### Across runs ({len(self.index.cross_run)})", ""] + self.cross_run[:crossed]
        if more:
            lines.append(f"_… {more} more cross-run finding{'s' if more != 1 else ''} not shown._\n")
        return "\n".join(lines)

    def cross_run_block(self, finding) -> str:
        runs = []
        for path in finding.runs:
            row = self.index.row_of(path)
            link = self.index.link(row.summary, "markdown") if row else None
            name = md(self.labels[path] if row else path)
            runs.append(f"[{name}]({link})" if link else name)
        lines = [f"**{md(finding.severity.upper())} {md(finding.code)}** · {md(finding.symptom)} — "
                 f"{md(finding.title)}", "", f"- runs: {listed(runs, RUNS_NAMED)}"]
        if finding.hparams:
            lines.append(f"- hyperparameters: {', '.join(md(name) for name in finding.hparams)}")
        lines += [f"- {md(item)}" for item in self.index.evidence(finding)] + [""]
        if finding.cheapest_check:
            lines += [f"Cheapest check: {md(finding.cheapest_check)}", ""]
        if finding.causes:
            lines += ["<details><summary>Likely causes</summary>", ""]
            lines += [f"- {md(cause)}" for cause in finding.causes] + ["", "</details>", ""]
        return "\n".join(lines)

    def unreadable(self) -> str:
        unreadable = self.index.result.unreadable
        if not unreadable:
            return ""
        lines = capped(unreadable, lambda item: f"- {md(self.index.shown(item.path))}: {md(item.reason)}")
        return f"**Could not be read ({len(unreadable):,}):**\n\n" + "\n".join(lines) + "\n"
