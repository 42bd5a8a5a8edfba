"""HTML report: one self-contained page, log text inert, a plot per finding, checked in a real headless browser."""

import base64
import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import curvedoc
from curvedoc.cli import main
from curvedoc.diagnose import diagnose_run
from curvedoc.model import RunBuilder
from curvedoc.report import render

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
HEALTHY = FIXTURES / "tensorboard" / "pytorch" / "healthy"
NAN_RUNS = [FIXTURES / "corpus" / "nan_inf" / name for name in ("fp16_overflow", "div_by_count", "warmup_too_high_nan")]
HOSTILE_TAGS = ["<script>alert(1)</script> loss", "x](javascript:alert(1)) val_loss", "```\nfence acc", "a\nb|c lr",
                "\x1b[31mred grad_norm"]


class Page(HTMLParser):
    """Every element with its attributes, and the text, as a browser's parser sees them."""

    def __init__(self, document: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.open_details: list[bool] = []
        self.text: list[str] = []
        self.feed(document)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data):
        self.text.append(data)

    def of(self, tag: str) -> list[dict[str, str]]:
        return [attrs for name, attrs in self.elements if name == tag]


def png_size(data_uri: str) -> tuple[int, int]:
    prefix = "data:image/png;base64,"
    assert data_uri.startswith(prefix)
    data = base64.b64decode(data_uri[len(prefix):])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def hostile_run():
    builder = RunBuilder("/tmp/<img src=x onerror=alert(1)>/run", "csv", name='<script>alert("name")</script>')
    loss = np.linspace(2, 0.5, 40)
    loss[25:] = np.nan
    for tag in HOSTILE_TAGS:
        builder.add(tag, np.arange(40), loss.copy() if "loss" in tag else np.linspace(0.1, 0.9, 40))
    run = builder.build()
    diagnose_run(run)
    return run


@pytest.fixture(scope="module")
def hostile_page() -> str:
    return render("html", [hostile_run()], ["<b>unreadable</b> file", "\x1b[31mred\nline|pipe ```"])


@pytest.fixture(scope="module")
def fixture_page() -> str:
    runs = [run for path in (*NAN_RUNS, HEALTHY) for run in curvedoc.diagnose(path)]
    return render("html", runs)


def test_log_text_renders_as_text(hostile_page):
    page = Page(hostile_page)
    assert not page.of("script"), "a tag name became a script element"
    assert [attrs["src"][:5] for attrs in page.of("img")] == ["data:"] * len(page.of("img"))
    for tag, attrs in page.elements:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert all(value.startswith("#") for name, value in attrs.items() if name == "href"), attrs
    shown = "".join(page.text)
    for tag in HOSTILE_TAGS[:2]:
        assert tag in shown  # escaped in the file, readable on the page
    assert '<script>alert("name")</script>' in shown and "<b>unreadable</b> file" in shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile_page
    assert "\x1b" not in hostile_page and "?[31mred?line|pipe ```" in shown  # no escape sequence, no line break


def test_page_is_self_contained(fixture_page):
    lowered = fixture_page.lower()
    for external in ('src="http', "src='http", 'href="http', "@import", "url(", "<link", "<script", "<iframe"):
        assert external not in lowered, external
    assert not Page(fixture_page).of("img")  # plots are inline SVG: nothing to load, not even a data: URI
    charts = [attrs for attrs in Page(fixture_page).of("svg") if attrs.get("class") == "plot"]
    assert charts
    for attrs in charts:
        assert int(attrs["width"]) > 100 and int(attrs["height"]) > 100
        assert attrs["viewbox"] == f"0 0 {attrs['width']} {attrs['height']}"


def test_a_plot_per_finding_and_healthy_runs_collapsed(fixture_page):
    runs = [run for path in NAN_RUNS for run in curvedoc.diagnose(path)]
    plotted = sum(bool(finding.tags or finding.step is not None or finding.step_range) for run in runs
                  for finding in run.findings)
    failing_part, _, healthy_part = fixture_page.partition("<h2>Healthy runs")
    assert failing_part.count('<svg class="plot"') == plotted
    healthy_part = healthy_part.partition("<h2>The rules found")[0]
    assert healthy_part.count("<details") == len(curvedoc.diagnose(HEALTHY))
    assert fixture_page.count("First response, for any run with findings") == 1
    assert "<table>" in failing_part and "CD101 nan_inf" in failing_part


def test_cli_writes_html_by_extension(tmp_path):
    output = tmp_path / "report.html"
    assert main([str(FIXTURES / "tensorboard" / "pytorch" / "lr_too_high"), "-o", str(output)]) == 1
    written = output.read_text(encoding="utf-8")
    assert written.startswith("<!DOCTYPE html>") and "CD101" in written
    assert '<svg class="plot"' in written and '<a href="#rule-cd101">CD101</a>' in written
    assert '<details class="rule-note" id="rule-cd101">' in written  # the rule's documentation, linked


# --- a real browser ---------------------------------------------------------------------------------------------

def chromium() -> str:
    found = shutil.which("chromium")
    if found is None and os.environ.get("CI") and shutil.which("apt-get") and os.geteuid() == 0:
        # CI images run as root with apt access: install Debian's chromium once (a minute or two).
        subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True, timeout=300)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=False, capture_output=True, timeout=600)
        found = shutil.which("chromium")
    if found is None:
        pytest.skip("no chromium to load the page in (apt-get install chromium; installed automatically when CI is "
                    "set and running as root)")
    return found


def browse(browser: str, page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", "--window-size=1200,2000",
         "--enable-logging=stderr", "--v=0", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )


# The page itself has no script; this probe is added to a copy only, to read what the browser laid out.
PROBE = """<script>
window.addEventListener("load", () => {
  for (const chart of document.querySelectorAll("svg.plot")) {
    const closed = chart.closest("details:not([open])") !== null;
    const box = chart.getBoundingClientRect();
    const drawn = chart.querySelectorAll("polyline").length > 0 || chart.querySelectorAll("text").length > 1;
    chart.setAttribute("data-seen", `${drawn} ${closed || (box.width > 0 && box.height > 0)}`);
  }
  document.body.setAttribute("data-scripts", String(document.scripts.length));
});
</script>"""


def test_page_loads_in_a_headless_browser(tmp_path, hostile_page, fixture_page):
    browser = chromium()
    page = tmp_path / "report.html"
    page.write_text(fixture_page + hostile_page, encoding="utf-8")
    screenshot = tmp_path / "shot.png"
    shot = browse(browser, page, tmp_path / "profile", f"--screenshot={screenshot}")
    assert shot.returncode == 0, shot.stderr[-2000:]
    console = [line for line in shot.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    width, height = png_size("data:image/png;base64," + base64.b64encode(screenshot.read_bytes()).decode())
    assert (width, height) == (1200, 2000) and screenshot.stat().st_size > 50_000  # a blank page is a few kB

    probed = tmp_path / "probed.html"
    probed.write_text(fixture_page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = browse(browser, probed, tmp_path / "profile", "--dump-dom", "--virtual-time-budget=5000")
    assert dom.returncode == 0, dom.stderr[-2000:]
    seen = re.findall(r'data-seen="([^"]*)"', dom.stdout)
    assert seen and set(seen) == {"true true"}, seen
    assert len(seen) == fixture_page.count('<svg class="plot"')
    assert 'data-scripts="1"' in dom.stdout  # only the probe: the report brought no script of its own
