"""The audit's index for machines, described by ``audit.schema.json`` (draft 2020-12).

Strict JSON like the per-run report (no NaN/Infinity tokens, no lone surrogates): hyperparameters that are not
finite become strings, a metric's non-finite noise becomes null. One run a line. Runs come worst first, as in every
index format;
each keeps every field of its :class:`~curvedoc.audit.summary.RunSummary`, with ``reports`` made relative to where
the index is written. ``INDEX_SCHEMA_VERSION`` changes its major number only when a key is removed or changes
meaning; new keys raise the minor number.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from importlib import resources
from typing import Any

from curvedoc import __version__
from curvedoc.audit.summary import RunSummary
from curvedoc.report import json_safe
from curvedoc.report.index import Index, Row
from curvedoc.report.json import valid_text

INDEX_SCHEMA_VERSION = "1.2"
SCHEMA_RESOURCE = "audit.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema every audit index of this version validates against."""
    return json.loads(resources.files("curvedoc.report.index").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))


def document(index: Index) -> dict[str, Any]:
    totals = index.totals
    result = index.result
    return {
        "schema_version": INDEX_SCHEMA_VERSION,
        "curvedoc_version": __version__,
        "roots": [str(root) for root in result.roots],
        "totals": {
            "runs": totals.runs, "failing": totals.failing, "warnings": totals.warnings,
            "insufficient": totals.insufficient, "healthy": totals.healthy,
            "unreadable": totals.unreadable, "cached": totals.cached, "analysed": totals.analysed,
        },
        "by_symptom": {item.symptom: item.runs for item in index.symptoms},
        "runs": [_run(index, row) for row in index.rows],
        "cross_run": [finding.to_dict() for finding in index.cross_run],
        "unreadable": [{"path": item.path, "reason": item.reason} for item in result.unreadable],
    }


def render(index: Index) -> str:
    data = document(index)
    try:
        return _one_item_a_line(data)
    except (ValueError, UnicodeEncodeError):  # a NaN or an undecodable file name the summaries should not hold
        return _one_item_a_line(valid_text(data))


def _one_item_a_line(data: dict[str, Any]) -> str:
    """The document with one run (one cross-run finding, one unreadable source) a line: a 10,000-run index stays
    greppable and diffable, and each line is written by the json module's C encoder (``indent`` would make it
    fall back to the pure-Python one, ~10× slower)."""
    def dump(value) -> str:
        # allow_nan=False: a non-finite number raises rather than writing a NaN token no strict parser reads.
        return json.dumps(value, allow_nan=False, ensure_ascii=False, default=json_safe)

    members = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            value_text = "[\n" + ",\n".join(f"  {dump(item)}" for item in value) + "\n ]"
        else:
            value_text = dump(value)
        members.append(f" {dump(key)}: {value_text}")
    text = "{\n" + ",\n".join(members) + "\n}"
    text.encode("utf-8")  # a lone surrogate (undecodable bytes of a file name) raises here
    return text


def _run(index: Index, row: Row) -> dict[str, Any]:
    """The run's summary, every field (as :meth:`RunSummary.to_dict`, built without ``asdict``'s deep copies,
    which took most of the time of a large index), its verdict, and its reports' links."""
    summary = row.summary
    data = {field.name: getattr(summary, field.name) for field in fields(RunSummary)}
    data["verdict"] = row.verdict
    data["findings"] = [finding.to_dict() for finding in summary.findings]
    data["metrics"] = {role: {key: None if isinstance(value, float) and not math.isfinite(value) else value
                              for key, value in vars(end).items()} for role, end in summary.metrics.items()}
    data["reports"] = {fmt: link for fmt in summary.reports if (link := index.link(summary, fmt))}
    return data
