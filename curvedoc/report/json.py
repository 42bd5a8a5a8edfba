"""JSON for machines: one object with a ``runs`` list."""

from __future__ import annotations

import json

from curvedoc.diagnose import first_response
from curvedoc.report import json_safe, series_summary


def run_to_dict(run) -> dict:
    return {
        "path": run.path,
        "name": run.name,
        "format": run.format,
        "meta": {
            "n_classes": run.meta.n_classes,
            "n_classes_source": run.meta.n_classes_source,
            "hparams": json_safe(run.meta.hparams),
            "files": run.meta.files,
        },
        "series": series_summary(run),
        "warnings": run.warnings,
        "findings": [finding.to_dict() for finding in run.findings],
        "first_response": first_response(run) if run.findings else [],
    }


def render(runs, problems=(), options=None) -> str:
    return json.dumps({"runs": [run_to_dict(run) for run in runs], "problems": list(problems)}, indent=2)
