"""The audit's index in every format, built from the corpus's real diagnosed runs: worst-first order, counts,
links to each run's own report relative to where the index is written, the JSON contract, CSV for spreadsheets,
the comment limit of the Markdown and the width of the terminal."""

import csv
import io
import json
import re
from collections import Counter
from dataclasses import fields, replace
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

import curvedoc
from curvedoc.audit.summary import AuditResult, CrossRunFinding, RunSummary, Unreadable, summarize
from curvedoc.report import FAILING, HEALTHY, INSUFFICIENT, WARNINGS, verdict
from curvedoc.report.index import (INDEX_RENDERERS, INDEX_SUFFIXES, Index, IndexOptions, cut_apart, render_index,
                                   shown_path)
from curvedoc.report.index.csv import COLUMNS
from curvedoc.report.index.json import INDEX_SCHEMA_VERSION, schema
from curvedoc.report.index.markdown import ROWS_KEPT
from curvedoc.report.index.terminal import cells
from curvedoc.report.json import schema as run_schema
from curvedoc.report.markdown import COMMENT_LIMIT, comment_length

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
ROOT = str(CORPUS)
RANK = {FAILING: 0, WARNINGS: 1, HEALTHY: 2}


@pytest.fixture(scope="module")
def summaries():
    """Every corpus run diagnosed and reduced as the audit reduces it, each with its own reports as ``-o`` writes."""
    result = []
    for number, run in enumerate(curvedoc.diagnose(CORPUS)):
        summary = summarize(run)
        summary.reports = {"html": f"runs/run {number}.html", "markdown": f"runs/run {number}.md"}
        result.append(summary)
    return sorted(result, key=lambda summary: summary.path)


def sweep(summaries, name):
    return [summary for summary in summaries if f"/{name}" in summary.path]


@pytest.fixture(scope="module")
def result(summaries):
    """The corpus as an audit result, with cross-run findings naming real runs and their real hyperparameters."""
    exploding = sweep(summaries, "exploding_grad/")
    frozen = sweep(summaries, "predictions_frozen/")
    cross_run = [
        CrossRunFinding("CD902", "iron_law", "error", "Three hyperparameter changes, one failure: a bug",
                        [run.path for run in exploding], ["lr", "optimizer"],
                        evidence=[f"{len(exploding)} runs all show exploding_grad"],
                        causes=["a bug in the training code"], cheapest_check="overfit one batch"),
        CrossRunFinding("CD901", "does_not_reproduce", "warning", "Seeds disagree beyond a run's noise",
                        [run.path for run in frozen[:2]], ["seed"], evidence=["val_loss 0.09 vs 0.19"]),
    ]
    unreadable = [Unreadable(f"{ROOT}/broken/events.out.tfevents.1", "record 3: CRC mismatch"),
                  Unreadable(f"{ROOT}/broken/history.csv", "not a table: no header")]
    return AuditResult([ROOT], summaries, cross_run, unreadable, n_cached=40, n_analysed=len(summaries) - 40)


def render(fmt, result, **options):
    return render_index(fmt, result, IndexOptions(**options))


def replicated(summaries, count):
    """``count`` summaries from the corpus's, each at its own path (a wide archive of the same kinds of runs)."""
    return [replace(summaries[number % len(summaries)],
                    path=f"{ROOT}/archive/{number:05d}/{Path(summaries[number % len(summaries)].path).name}")
            for number in range(count)]


def rank_key(summary):
    errors = sum(f.severity == "error" for f in summary.findings)
    warnings = sum(f.severity == "warning" for f in summary.findings)
    return RANK[verdict(summary)], -errors, -warnings, summary.path


def test_the_registry_and_suffixes_name_every_format():
    assert set(INDEX_RENDERERS) == {"text", "markdown", "html", "json", "csv"}
    assert set(INDEX_SUFFIXES.values()) == set(INDEX_RENDERERS)
    assert {".txt", ".md", ".html", ".json", ".csv"} <= set(INDEX_SUFFIXES)


def test_the_corpus_has_every_verdict(result):
    assert {verdict(run) for run in result.runs} == {FAILING, WARNINGS, HEALTHY}


def test_runs_come_worst_first_in_every_format(result):
    expected = [run.path for run in sorted(result.runs, key=rank_key)]
    assert [row.summary.path for row in Index(result, IndexOptions()).rows] == expected
    assert [run["path"] for run in json.loads(render("json", result))["runs"]] == expected
    assert [row["path"] for row in csv.DictReader(io.StringIO(render("csv", result)))] == expected
    labels = {run.path: shown_path(run.path, result.roots) for run in result.runs}
    table = [line for line in render("markdown", result).splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(table) == len(expected)
    for line, path in zip(table, expected, strict=True):
        assert labels[path].replace("_", r"\_") in line
    html_order = [match for match in re.findall(r'<a href="runs/run%20\d+\.html">([^<]*)</a>', render("html", result))]
    assert html_order[:len(expected)] == [labels[path] for path in expected], "the runs table opens the page"


def test_totals_and_symptom_counts_agree_across_formats(result):
    verdicts = Counter(verdict(run) for run in result.runs)
    document = json.loads(render("json", result))
    assert document["totals"] == {"runs": len(result.runs), "failing": verdicts[FAILING],
                                  "warnings": verdicts[WARNINGS], "insufficient": verdicts[INSUFFICIENT],
                                  "healthy": verdicts[HEALTHY], "unreadable": 2,
                                  "cached": 40, "analysed": len(result.runs) - 40}
    assert document["by_symptom"] == result.symptom_counts()
    assert list(document["by_symptom"].values()) == sorted(document["by_symptom"].values(), reverse=True)
    total = (f"{len(result.runs)} runs: {verdicts[FAILING]} failing, {verdicts[WARNINGS]} with warnings, "
             f"{verdicts[HEALTHY]} healthy, 2 unreadable; 40 from cache")
    for fmt in ("text", "markdown", "html"):
        assert total in render(fmt, result), fmt
    assert render("text", result, quiet=True).splitlines()[-1] == total
    for symptom, count in result.symptom_counts().items():
        assert f"{symptom} {count}" in render("text", result, width=200)
        assert f"| {symptom.replace('_', chr(92) + '_')} | {count} |" in render("markdown", result)


def test_cross_run_findings_name_their_runs_and_hyperparameters(result):
    iron_law = result.cross_run[0]
    text = render("text", result, width=300)
    assert "ERROR   CD902 iron_law" in text and "hyperparameters: lr, optimizer" in text
    assert shown_path(iron_law.runs[0], result.roots) in text
    markdown = render("markdown", result)
    assert markdown.index("CD902") < markdown.index("CD901"), "most severe cross-run finding first"
    assert "hyperparameters: lr, optimizer" in markdown
    page = render("html", result)
    assert "<code>optimizer</code>" in page and "overfit one batch" in page
    assert json.loads(render("json", result))["cross_run"][0] == iron_law.to_dict()


def test_unreadable_runs_are_listed_with_their_reason(result):
    for fmt in ("text", "markdown", "html"):
        assert "record 3: CRC mismatch" in render(fmt, result, width=200), fmt
    assert json.loads(render("json", result))["unreadable"][1] == {"path": f"{ROOT}/broken/history.csv",
                                                                   "reason": "not a table: no header"}


def test_links_are_relative_to_where_the_index_is_written(result, tmp_path):
    run = next(run for run in Index(result, IndexOptions()).rows)
    own = run.summary.reports["markdown"].replace(" ", "%20")
    assert f"]({own})" in render("markdown", result)  # -o DIR: the index sits beside runs/
    elsewhere = render("markdown", result, output=tmp_path / "ci" / "comment.md", report_dir=tmp_path / "out")
    assert f"](../out/{own})" in elsewhere
    page = render("html", result, output=tmp_path / "index.html", report_dir=tmp_path / "out")
    assert f'href="out/{run.summary.reports["html"].replace(" ", "%20")}"' in page
    row = next(csv.DictReader(io.StringIO(render("csv", result, output=tmp_path / "a" / "runs.csv",
                                                 report_dir=tmp_path / "out"))))
    assert row["report"] == f"../out/{run.summary.reports['html'].replace(' ', '%20')}"
    document = json.loads(render("json", result, output=tmp_path / "out" / "index.json", report_dir=tmp_path / "out"))
    assert document["runs"][0]["reports"] == {"html": run.summary.reports["html"].replace(" ", "%20"),
                                              "markdown": own}


def test_a_run_without_its_own_report_is_named_but_not_linked(summaries):
    bare = [replace(summary, reports={}) for summary in summaries[:5]]
    result = AuditResult([ROOT], bare)
    assert "](" not in render("markdown", result)
    assert "<a href" not in render("html", result)
    assert {row["report"] for row in csv.DictReader(io.StringIO(render("csv", result)))} == {""}


@pytest.fixture(scope="module")
def validator():
    index_schema = schema()
    jsonschema.Draft202012Validator.check_schema(index_schema)
    return jsonschema.Draft202012Validator(index_schema)


def strict_loads(text):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_the_json_index_validates_against_its_schema(result, validator):
    document = strict_loads(render("json", result))
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    assert document["schema_version"] == INDEX_SCHEMA_VERSION and document["curvedoc_version"] == curvedoc.__version__
    assert document["roots"] == [ROOT]
    first = document["runs"][0]
    original = next(run for run in result.runs if run.path == first["path"])
    assert RunSummary.from_dict({**first, "reports": original.reports}) == original


def test_non_finite_values_stay_strict_json(summaries, validator):
    odd = replace(summaries[0], hparams={"lr": float("nan"), "decay": float("inf")},
                  metrics={role: replace(end, noise=float("nan")) for role, end in summaries[0].metrics.items()})
    document = strict_loads(render("json", AuditResult([ROOT], [odd])))
    assert not list(validator.iter_errors(document))
    assert document["runs"][0]["hparams"] == {"lr": "nan", "decay": "inf"}
    assert {end["noise"] for end in document["runs"][0]["metrics"].values()} == {None}


def test_the_schema_ships_inside_the_package():
    pyproject = (CORPUS.parent.parent / "pyproject.toml").read_text()
    assert '"report/index/*.json"' in pyproject.split("[tool.setuptools.package-data]")[1].split("\n[")[0]
    assert (Path(curvedoc.__file__).parent / "report" / "index" / "audit.schema.json").is_file()


def test_the_schema_shares_the_run_report_definitions_and_every_summary_field():
    index_defs, run_defs = schema()["$defs"], run_schema()["$defs"]
    for name in ("symptom", "severity", "verdict", "role", "finding"):
        assert index_defs[name] == run_defs[name], f"{name} drifted from report.schema.json"
    assert set(index_defs["run"]["properties"]) == {field.name for field in fields(RunSummary)}
    assert set(index_defs["cross_run_finding"]["properties"]) == {field.name for field in fields(CrossRunFinding)}


def test_csv_round_trips_one_row_per_run(result):
    rows = list(csv.DictReader(io.StringIO(render("csv", result))))
    assert list(rows[0]) == COLUMNS and len(rows) == len(result.runs)
    by_path = {run.path: run for run in result.runs}
    for row in rows:
        run = by_path[row["path"]]
        assert row["run"] == shown_path(run.path, result.roots) and not row["run"].startswith(ROOT)
        assert row["verdict"] == verdict(run) and row["name"] == run.name
        assert int(row["n_errors"]) == sum(f.severity == "error" for f in run.findings)
        assert set(filter(None, row["symptoms"].split(";"))) == run.symptoms
        for role in ("val_loss", "val_acc", "train_loss"):
            expected = run.metrics[role].final if role in run.metrics else None
            assert (float(row[f"final_{role}"]) if row[f"final_{role}"] else None) == expected
        assert int(row["n_points"]) == run.n_points
        if run.start_time is not None:
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["start_time_utc"])
    negative = [row for row in rows if row["final_val_loss"].startswith("-")]
    assert negative, "the corpus's train_negative runs end with a negative loss: a number, never guarded"
    assert all(float(row["final_val_loss"]) < 0 for row in negative)


@pytest.mark.parametrize("name", ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1:A2)", "=1,\n\"2\""])
def test_csv_cells_from_logs_never_start_a_formula(summaries, name):
    run = replace(summaries[0], name=name, path=f"{name}/run", format=name)
    run.findings = [replace(finding, title=name) for finding in run.findings]
    row = next(csv.DictReader(io.StringIO(render("csv", AuditResult([], [run])))))
    for column in ("run", "name", "path", "format") + (("first_finding",) if run.findings else ()):
        assert row[column].startswith("'"), column
        assert row[column][1:] == name.replace("\n", "?") or row[column][1:].startswith(name[:3]), column


def test_markdown_of_thousands_of_runs_fits_a_comment_and_cuts_healthy_rows_first(summaries):
    runs = replicated(summaries, 3_000)
    wide = AuditResult([ROOT], runs, unreadable=[Unreadable(f"{ROOT}/x{n}.csv", "empty") for n in range(40)])
    text = render("markdown", wide)
    assert comment_length(text) <= COMMENT_LIMIT
    assert "Shortened to fit GitHub's 65,536-character comment limit" in text and "healthy" in text
    verdicts = [verdict(run) for run in sorted(runs, key=rank_key)]
    listed = len(re.findall(r"^\| \d+ \|", text, flags=re.M))
    assert listed >= min(ROWS_KEPT, verdicts.count(FAILING))
    assert HEALTHY not in verdicts[:listed] or listed == len(runs)
    assert "… 20 more" in text, "unreadable sources listed at most 20"


def test_markdown_escapes_at_mentions_and_fits_when_small(result):
    run = replace(result.runs[0], path=f"{ROOT}/@octocat/run")
    text = render("markdown", AuditResult([ROOT], [run]))
    assert r"\@octocat" in text and not re.search(r"(?<!\\)@", text)
    assert "Shortened" not in render("markdown", result)


class _TagBalance(HTMLParser):
    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.open, self.errors, self.seen = [], [], Counter()

    def handle_starttag(self, tag, attrs):
        self.seen[tag] += 1
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def test_html_is_one_well_formed_page_with_one_inline_script(result):
    page = render("html", result)
    parser = _TagBalance()
    parser.feed(page)
    parser.close()
    assert not parser.errors and parser.open == [], parser.errors[:3] or parser.open
    assert parser.seen["script"] == 1 and parser.seen["link"] == 0 and parser.seen["img"] == 0
    assert parser.seen["tr"] == len(result.runs) + 1 + len(result.symptom_counts()) + 1  # runs and symptoms
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "the page must not load anything"
    assert "<script src" not in page


class _RunsTable(HTMLParser):
    """The runs table's rows as the filters see them, and where the table and the filters stand in the page."""

    def __init__(self):
        super().__init__()
        self.rows, self.first, self.form = [], {}, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.first.setdefault(attrs.get("id") or attrs.get("class") or tag, self.getpos())
        if tag == "tr" and "data-verdict" in attrs:
            self.rows.append(attrs)
        if tag == "form":
            self.form = attrs


def test_html_opens_with_every_run_in_one_table_the_filters_can_select(result):
    page = render("html", result)
    parser = _RunsTable()
    parser.feed(page)
    assert parser.first["runs"] < parser.first["finding sev-error"], "the runs table comes before the cross-run cards"
    assert parser.first["run-filters"] < parser.first["runs"]
    assert "hidden" in parser.form, "without the script the filters do nothing, so they are not shown"
    ranked = Index(result, IndexOptions()).rows
    assert [attrs["data-verdict"] for attrs in parser.rows] == [row.verdict for row in ranked]
    assert [set(attrs["data-symptoms"].split()) for attrs in parser.rows] == [row.summary.symptoms for row in ranked]
    for symptom, count in result.symptom_counts().items():
        assert f'<option value="{symptom}">{symptom} ({count})</option>' in page


def test_cut_apart_keeps_both_ends_and_never_shows_two_runs_alike():
    sweep = [f"sweep/lr_0.{n}/seed_1/version_0/metrics.csv" for n in (1, 2)] + ["short/run"]
    shown = cut_apart(sweep, 24)
    assert len(set(shown)) == 3, shown
    assert cells(shown[0]) > 24, "the two runs of the sweep got the room that tells them apart"
    for whole, text in zip(sweep, shown, strict=True):
        if text != whole:
            head, tail = text.split("…")
            assert whole.startswith(head) and whole.endswith(tail) and head and tail
    assert shown[2] == "short/run"
    alone = cut_apart([sweep[0]], 24)[0]
    assert cells(alone) == 24 and alone.startswith("sweep/") and alone.endswith("metrics.csv")
    assert cut_apart([sweep[0], sweep[0]], 24) == [alone, alone], "one label twice is one run twice: no growing"


def test_terminal_and_markdown_tell_apart_runs_that_differ_only_in_the_middle(summaries):
    base = next(summary for summary in summaries if verdict(summary) == FAILING)
    runs = [replace(base, path=f"{ROOT}/sweep-{'x' * 60}/lr_0.{n}/seed_1/version_0/metrics.csv") for n in (1, 2)]
    text = render("text", AuditResult([ROOT], runs), width=80, cut_to_width=True)
    lines = [line for line in text.splitlines() if "metrics.csv" in line]
    assert len(lines) == 2 and lines[0] != lines[1] and all("…" in line for line in lines)
    assert all(cells(line) <= 80 for line in text.splitlines())
    quiet = render("text", AuditResult([ROOT], runs), width=60, cut_to_width=True, quiet=True).splitlines()[:-1]
    assert len(quiet) == 2 and quiet[0] != quiet[1]
    deep = [replace(base, path=f"{ROOT}/{'deep/' * 100}run_{n}/metrics.csv") for n in (1, 2)]
    table = [line for line in render("markdown", AuditResult([ROOT], deep)).splitlines()
             if line.startswith(("| 1 |", "| 2 |"))]
    assert len(table) == 2 and "run\\_1" in table[0] + table[1] and "run\\_2" in table[0] + table[1]


def test_html_of_thousands_of_runs_stays_light(summaries):
    page = render("html", AuditResult([ROOT], replicated(summaries, 5_000)))
    assert len(page) / 5_000 < 600, "a few hundred bytes a run"


@pytest.mark.parametrize("width", [40, 80, 120])
def test_terminal_lines_fit_the_width(result, width):
    for quiet in (False, True):
        text = render("text", result, width=width, cut_to_width=True, quiet=quiet)
        assert max(cells(line) for line in text.splitlines()) <= width


def test_terminal_in_a_file_keeps_paths_whole(result):
    text = render("text", result, width=60, cut_to_width=False)
    failing = [run for run in result.runs if verdict(run) == FAILING]
    assert all(shown_path(run.path, result.roots) in text for run in failing)


def test_terminal_folds_healthy_runs_of_a_wide_archive_into_a_count(summaries):
    runs = replicated(summaries, 2_000)
    healthy = sum(verdict(run) == HEALTHY for run in runs)
    text = render("text", AuditResult([ROOT], runs), width=100)
    assert f"… and {healthy:,} healthy runs" in text
    assert len(text.splitlines()) < len(runs) - healthy + 60
    limited = render("text", AuditResult([ROOT], runs), width=100, rows=25)
    assert f"… and {len(runs) - healthy - 25:,} more with findings and {healthy:,} healthy runs" in limited


def test_terminal_colour_only_when_asked_and_quiet_lists_failing_runs_only(result):
    assert "\x1b[" not in render("text", result)
    assert "\x1b[1;31m" in render("text", result, color=True)
    quiet = render("text", result, quiet=True, width=300).splitlines()
    failing = [run for run in result.runs if verdict(run) == FAILING]
    assert len(quiet) == len(failing) + 1
    assert all(line.startswith("FAILING") for line in quiet[:-1])


def test_a_small_archive_lists_its_healthy_runs_too(summaries):
    few = [summary for summary in summaries if verdict(summary) == HEALTHY][:3] + summaries[:2]
    text = render("text", AuditResult([ROOT], few), width=200)
    assert "healthy runs" not in text and text.count("✓ healthy") == sum(verdict(run) == HEALTHY for run in few)


@pytest.mark.parametrize("fmt", sorted(INDEX_RENDERERS))
def test_an_empty_audit_renders(fmt):
    text = render(fmt, AuditResult(["/nowhere"], [], unreadable=[Unreadable("/nowhere/a", "permission denied")]))
    assert "permission denied" in text or fmt == "csv"


def test_paths_are_shown_under_their_root():
    assert shown_path("/a/runs/x/y.csv", ["/a/runs"]) == "x/y.csv"
    assert shown_path("/a/runs/x/y.csv", ["/a/runs/"]) == "x/y.csv"
    assert shown_path("/a/runsx/y.csv", ["/a/runs"]) == "/a/runsx/y.csv"
    assert shown_path("/a/runs/x/y.csv", ["/b", "/a/runs"]) == "runs/x/y.csv"
    assert shown_path("/a/runs/y.csv", ["/a/runs/y.csv"]) == "y.csv"
    assert shown_path("s3://bucket/exp/run1", ["s3://bucket/exp"]) == "run1"
