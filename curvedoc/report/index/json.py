"""The audit's index for machines, described by ``audit.schema.json`` (draft 2020-12).

Strict JSON like the per-run report (no NaN/Infinity tokens, no lone surrogates): hyperparameters that are not
finite become strings, a metric's non-finite noise becomes null. Runs come worst first, as in every index format;
each keeps every field of its :class:`~curvedoc.audit.summary.RunSummary`, with ``reports`` made relative to where
the index is written. ``INDEX_SCHEMA_VERSION`` changes its major number only when a key is removed or changes
meaning; new keys raise the minor number.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

from curvedoc import __version__
from curvedoc.report.index import Index, Row
from curvedoc.report.json import _valid_text

INDEX_SCHEMA_VERSION = "1.0"
SCHEMA_RESOURCE = "audit.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema every audit index of this version validates against."""
    return json.loads(resources.files("curvedoc.report.index").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))


def document(index: Index) -> dict[str, Any]:
    totals = index.totals
    result = index.result
    return _valid_text({
        "schema_version": INDEX_SCHEMA_VERSION,
        "curvedoc_version": __version__,
        "roots": [str(root) for root in result.roots],
        "totals": {
            "runs": totals.runs, "failing": totals.failing, "warnings": totals.warnings, "healthy": totals.healthy,
            "unreadable": totals.unreadable, "cached": totals.cached, "analysed": totals.analysed,
        },
        "by_symptom": {item.symptom: item.runs for item in index.symptoms},
        "runs": [_run(index, row) for row in index.rows],
        "cross_run": [finding.to_dict() for finding in index.cross_run],
        "unreadable": [{"path": item.path, "reason": item.reason} for item in result.unreadable],
    })


def render(index: Index) -> str:
    # allow_nan=False turns any non-finite number that slipped past sanitising into an error, not invalid JSON.
    return json.dumps(document(index), indent=2, allow_nan=False)


def _run(index: Index, row: Row) -> dict[str, Any]:
    data = row.summary.to_dict()
    data["verdict"] = row.verdict
    data["metrics"] = {role: {key: None if isinstance(value, float) and not math.isfinite(value) else value
                              for key, value in end.items()} for role, end in data["metrics"].items()}
    data["reports"] = {fmt: index.link(row.summary, fmt) for fmt in row.summary.reports
                       if index.link(row.summary, fmt)}
    return data
