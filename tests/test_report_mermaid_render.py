"""The Markdown report's charts drawn by a real Mermaid in headless Chromium (tests/mermaid_render.mjs), as GitHub
draws a comment: each must render without a Mermaid error and with a readable number of step labels.

Needs node, Chromium (/usr/bin/chromium or CURVEDOC_CHROMIUM) and a node_modules folder holding ``mermaid`` and
``playwright-core`` named by CURVEDOC_MERMAID_MODULES (``npm install mermaid playwright-core`` in a folder outside
the repository); skipped where any is missing, as in CI."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import curvedoc
from curvedoc.report import ReportOptions, render

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RENDERER = Path(__file__).resolve().parent / "mermaid_render.mjs"
# One real run per kind of chart the issue asked to be readable: NaN, spike (and exploding gradient on a log axis),
# flat at chance, overfitting.
RUNS = ["nan_inf/div_by_count", "exploding_grad/sgd_diverging", "flat_at_chance/input_zeroed",
        "memorizing/random_labels_iris"]
MOST_STEP_LABELS = 16  # Mermaid labels a numeric axis with d3's ~10 round ticks: 6 to 16 of them


def browser_tools() -> tuple[str, Path, Path] | None:
    node = shutil.which("node")
    chromium = Path(os.environ.get("CURVEDOC_CHROMIUM", "/usr/bin/chromium"))
    modules = os.environ.get("CURVEDOC_MERMAID_MODULES")
    if not node or not chromium.exists() or not modules:
        return None
    modules = Path(modules)
    if not (modules / "mermaid" / "dist" / "mermaid.min.js").exists() or not (modules / "playwright-core").is_dir():
        return None
    return node, chromium, modules


pytestmark = pytest.mark.skipif(browser_tools() is None, reason="needs node, Chromium and CURVEDOC_MERMAID_MODULES "
                                                                "with mermaid and playwright-core")


def test_the_charts_of_real_runs_render_in_chromium(tmp_path):
    node, chromium, modules = browser_tools()
    runs = [curvedoc.diagnose(FIXTURES / "corpus" / name)[0] for name in RUNS]
    report = tmp_path / "report.md"
    report.write_text(render("markdown", runs, [], ReportOptions()), encoding="utf-8")
    blocks = report.read_text(encoding="utf-8").count("```mermaid\n")
    assert blocks >= len(RUNS)
    done = subprocess.run(
        [node, str(RENDERER), str(report), str(tmp_path / "png")], capture_output=True, text=True, timeout=300,
        env={**os.environ, "CURVEDOC_MERMAID_MODULES": str(modules), "CURVEDOC_CHROMIUM": str(chromium)})
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(results) == blocks
    for result in results:
        assert result["svg"] and result["error"] is None, result
        assert Path(result["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 2 <= result["x_labels"] <= MOST_STEP_LABELS, result
