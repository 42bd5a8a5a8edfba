"""JSON for machines: the contract a CI job or a dashboard reads, described by ``report.schema.json``.

The document is strict JSON (no NaN/Infinity tokens, no lone surrogates) so any parser accepts it:
hyperparameter values that are not finite become strings, a non-finite start time becomes null, and text
from the logs is passed through as data (JSON string escaping is all it needs). ``SCHEMA_VERSION`` changes
its major number only when a key is removed or changes meaning; new keys raise the minor number.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

from curvedoc import __version__
from curvedoc.diagnose import first_response
from curvedoc.report import VERDICTS, json_safe, plot_files, series_summary, verdict

SCHEMA_VERSION = "1.3"
SCHEMA_RESOURCE = "report.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every report of this version validates against."""
    return json.loads(resources.files("curvedoc.report").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))


def run_to_dict(run) -> dict[str, Any]:
    start_time = run.meta.start_time
    return {
        "path": run.path,
        "name": run.name,
        "format": run.format,
        "verdict": verdict(run),
        "insufficient": run.insufficient,
        "not_checked": run.not_checked,
        "meta": {
            "n_classes": run.meta.n_classes,
            "n_classes_source": run.meta.n_classes_source,
            "n_classes_kind": run.meta.n_classes_kind,
            "n_classes_assumed": run.meta.assumed_n_classes,
            "base_model": run.meta.base_model,
            "hparams": json_safe(run.meta.hparams),
            "files": run.meta.files,
            "start_time": float(start_time) if start_time is not None and math.isfinite(start_time) else None,
        },
        "series": series_summary(run),
        "warnings": run.warnings,
        "findings": [finding.to_dict() for finding in run.findings],
        "first_response": first_response(run) if run.findings else [],
    }


def summary(runs) -> dict[str, Any]:
    """Counts of runs per verdict, and per symptom the number of runs showing it at least once."""
    verdicts = Counter(verdict(run) for run in runs)
    by_symptom = Counter(symptom for run in runs for symptom in {finding.symptom for finding in run.findings})
    return {
        "runs": len(runs),
        **{name: verdicts[name] for name in VERDICTS},
        "by_symptom": dict(sorted(by_symptom.items())),
    }


def document(runs, problems=(), plots: dict[int, Path] | None = None) -> dict[str, Any]:
    """``plots``: the PNG written for each run (``--plots DIR``), by ``id(run)``."""
    runs = list(runs)
    plots = plots or {}
    return valid_text({
        "schema_version": SCHEMA_VERSION,
        "curvedoc_version": __version__,
        "summary": summary(runs),
        "runs": [{**run_to_dict(run), "plot": str(plots[id(run)]) if id(run) in plots else None} for run in runs],
        "problems": [str(problem) for problem in problems],
    })


def render(runs, problems=(), options=None) -> str:
    plots = plot_files(runs, options)
    # allow_nan=False turns any non-finite number that slipped past sanitising into an error, not invalid JSON.
    return json.dumps(document(runs, problems, plots), indent=2, allow_nan=False)


def valid_text(value: Any) -> Any:
    """Strings as valid Unicode: file names that were not UTF-8 reach Python as lone surrogates, which strict
    JSON parsers reject; they become U+FFFD. Numpy scalars (a rule's step) become plain numbers."""
    if isinstance(value, dict):
        return {valid_text(key): valid_text(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_text(item) for item in value]
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    return json_safe(value)
