"""The audit engine: every run found once, in parallel or not, cached, never writing into the audited tree."""

import json
import os
import shutil
import time
from pathlib import Path

import pytest

import curvedoc
from curvedoc.audit import audit
from curvedoc.audit.cache import CACHE_FORMAT, default_cache_dir
from curvedoc.config import Config
from curvedoc.errors import CurvedocError
from curvedoc.readers import discover

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        os.path.join(folder, name): (os.stat(os.path.join(folder, name)).st_size,
                                     os.stat(os.path.join(folder, name)).st_mtime_ns)
        for folder, _, names in os.walk(root) for name in names
    }


def as_data(result):
    return {
        "runs": [summary.to_dict() for summary in result.runs],
        "cross_run": [finding.to_dict() for finding in result.cross_run],
        "unreadable": [(item.path, item.reason) for item in result.unreadable],
    }


@pytest.fixture
def archive(tmp_path):
    """A small archive of real runs in several formats, copied so tests may change it."""
    root = tmp_path / "archive"
    shutil.copytree(FIXTURES / "tensorboard" / "pytorch", root / "tb")
    shutil.copytree(FIXTURES / "mlflow", root / "mlflow")
    shutil.copytree(FIXTURES / "csv" / "lightning", root / "lightning")
    shutil.copytree(FIXTURES / "csv" / "broken", root / "broken")
    return root


def test_the_audit_finds_every_run_load_finds_and_lists_the_unreadable(archive, tmp_path):
    loaded = curvedoc.load(archive)
    result = audit([archive], jobs=1, cache=False)
    assert sorted(summary.path for summary in result.runs) == sorted(run.path for run in loaded)
    assert result.n_analysed == len(loaded) and result.n_cached == 0
    unreadable = {Path(item.path).name: item.reason for item in result.unreadable}
    assert unreadable["empty.csv"] == "empty file"
    assert "Git LFS pointer" in unreadable["lfs_pointer.csv"]
    diagnosed = {run.path: [f.code for f in run.findings] for run in curvedoc.diagnose(archive)}
    assert {s.path: [f.code for f in s.findings] for s in result.runs} == diagnosed


def test_parallel_and_serial_audits_give_the_same_result(archive):
    assert as_data(audit([archive], jobs=2, cache=False)) == as_data(audit([archive], jobs=1, cache=False))


def test_overlapping_roots_and_symlinked_folders_are_read_once(archive, tmp_path):
    plain = audit([archive], jobs=1, cache=False)
    (archive / "alias").symlink_to(archive / "tb", target_is_directory=True)
    (archive / "tb" / "healthy" / "loop").symlink_to(archive, target_is_directory=True)
    both = audit([archive, archive / "tb"], jobs=1, cache=False)
    assert [s.path for s in both.runs] == [s.path for s in plain.runs]
    assert any("symlink loop" in item.reason for item in both.unreadable)


def test_a_reader_crash_becomes_an_unreadable_run_and_the_audit_goes_on(archive, monkeypatch):
    import curvedoc.audit.engine as engine

    real = engine.read_source

    def flaky(source):
        if source.family == "mlflow":
            raise ZeroDivisionError("boom")
        return real(source)

    monkeypatch.setattr(engine, "read_source", flaky)
    result = audit([archive], jobs=1, cache=False)
    assert any("ZeroDivisionError: boom" in item.reason and "please report it" in item.reason
               for item in result.unreadable)
    assert any("/tb/" in summary.path for summary in result.runs)


def test_text_logs_are_audited_notes_passed_over_and_an_unreadable_one_listed(archive, tmp_path):
    shutil.copytree(FIXTURES / "textlog" / "nanogpt", archive / "nanogpt")
    (archive / "nanogpt" / "README.txt").write_text("Trained on one GPU; see the notes.\n")
    (archive / "nanogpt" / "crashed.log").write_bytes(b"\xff\xfe")  # a UTF-16 byte order mark and nothing else
    result = audit([archive], jobs=1, cache=tmp_path / "cache")
    assert any(summary.path.endswith("nanogpt/train.log") for summary in result.runs)
    unreadable = {Path(item.path).name: item.reason for item in result.unreadable}
    assert "README.txt" not in unreadable and unreadable["crashed.log"] == "empty file"
    again = audit([archive], jobs=1, cache=tmp_path / "cache")  # the same from the cache
    assert as_data(again) == as_data(result)


def test_a_named_text_file_that_is_no_log_is_listed_and_a_root_of_notes_is_an_error(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "README.txt").write_text("nothing here\n")
    with pytest.raises(CurvedocError, match="no training logs found"):
        audit([notes], jobs=1, cache=False)
    result = audit([notes / "README.txt", FIXTURES / "textlog" / "nanogpt"], jobs=1, cache=False)
    assert [Path(summary.path).name for summary in result.runs] == ["train.log"]
    assert [(Path(item.path).name, item.reason.split(":")[0]) for item in result.unreadable] == [
        ("README.txt", "no training log in it"),
    ]


def test_a_source_that_yields_no_run_is_listed_not_dropped(archive, monkeypatch):
    from curvedoc.readers import csvlog

    real = csvlog.read
    monkeypatch.setattr(csvlog, "read", lambda source: [] if "lightning" in str(source.path) else real(source))
    result = audit([archive], jobs=1, cache=False)
    reasons = {item.path: item.reason for item in result.unreadable}
    assert sum(reason == "holds no run (nothing in it could be read as one)" for reason in reasons.values()) == 2
    assert not any("lightning" in summary.path for summary in result.runs)
    loaded = curvedoc.load(archive)
    assert sum("holds no run" in problem for problem in loaded.problems) == 2


def test_a_missing_root_is_one_line_error(tmp_path):
    with pytest.raises(CurvedocError, match="no such file"):
        audit([tmp_path / "nope"], cache=False)


def test_the_second_audit_of_an_unchanged_archive_comes_from_the_cache(archive, tmp_path):
    cache = tmp_path / "cache"
    first = audit([archive], jobs=1, cache=cache)
    second = audit([archive], jobs=1, cache=cache)
    assert second.n_analysed == 0 and second.n_cached == first.n_analysed
    assert as_data(second) == as_data(first)
    assert not list(cache.rglob("*.tmp")), "entries are renamed into place"


def test_a_changed_or_added_file_invalidates_only_its_run(archive, tmp_path):
    cache = tmp_path / "cache"
    audit([archive], jobs=1, cache=cache)
    metrics = next((archive / "lightning").rglob("metrics.csv"))
    with open(metrics, "a") as handle:
        handle.write("")  # same size: only the mtime says it changed
    os.utime(metrics, ns=(time.time_ns(), time.time_ns() + 10**9))
    mlflow_metric_folder = next(p for p in (archive / "mlflow").rglob("metrics") if p.is_dir() and any(p.iterdir()))
    (mlflow_metric_folder / "new_metric").write_text("1700000000000 0.5 0\n")
    again = audit([archive], jobs=1, cache=cache)
    assert again.n_analysed == 2
    assert again.n_cached == len(again.runs) - 2


def test_cache_entries_are_keyed_on_configuration_and_version(archive, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    audit([archive], jobs=1, cache=cache)
    assert audit([archive], jobs=1, cache=cache, config=Config(num_classes=7)).n_cached == 0
    monkeypatch.setattr(curvedoc, "__version__", "999")
    assert audit([archive], jobs=1, cache=cache).n_cached == 0


def test_a_damaged_or_deleted_cache_is_a_miss_never_an_error(archive, tmp_path):
    cache = tmp_path / "cache"
    first = audit([archive], jobs=1, cache=cache)
    entries = sorted((cache / f"v{CACHE_FORMAT}").rglob("*.json"))
    entries[0].write_text("{ half an entr")
    entries[1].write_text(json.dumps({"files": {}, "summaries": [{"nonsense": 1}]}))
    shutil.rmtree(entries[2].parent)
    again = audit([archive], jobs=1, cache=cache)
    assert as_data(again) == as_data(first)
    assert again.n_cached < first.n_analysed
    shutil.rmtree(cache)
    assert as_data(audit([archive], jobs=1, cache=cache)) == as_data(first)


def test_the_default_cache_lives_in_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("CURVEDOC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "curvedoc"
    monkeypatch.setenv("CURVEDOC_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


def test_an_audit_writes_nothing_into_the_audited_tree(archive, tmp_path, monkeypatch):
    monkeypatch.setenv("CURVEDOC_CACHE_DIR", str(tmp_path / "cache"))
    before = snapshot(archive)
    audit([archive], jobs=2)
    audit([archive / "lightning"], jobs=2, report_dir=tmp_path / "out")
    assert snapshot(archive) == before
    assert list((tmp_path / "cache").rglob("*.json"))


def test_output_and_cache_inside_the_tree_are_not_audited_as_runs(archive):
    archive = archive / "lightning"
    first = audit([archive], jobs=1, cache=archive / "cache-inside", report_dir=archive / "report")
    again = audit([archive], jobs=1, cache=archive / "cache-inside", report_dir=archive / "report")
    assert [s.path for s in again.runs] == [s.path for s in first.runs]
    assert not any("report" in s.path or "cache-inside" in s.path for s in again.runs)


def test_each_run_gets_its_own_reports_under_the_output_folder(archive, tmp_path):
    out = tmp_path / "out"
    cache = tmp_path / "cache"
    archive = archive / "tb"
    result = audit([archive], jobs=1, cache=cache, report_dir=out)
    for summary in result.runs:
        assert set(summary.reports) == {"html", "markdown"}
        html = (out / summary.reports["html"]).read_text()
        assert "<html" in html and summary.name in html
        assert (out / summary.reports["markdown"]).read_text().startswith("#")
    assert len({s.reports["html"] for s in result.runs}) == len(result.runs)
    shutil.rmtree(out)
    cached = audit([archive], jobs=1, cache=cache, report_dir=out)
    assert cached.n_analysed == 0
    assert all((out / s.reports["html"]).is_file() for s in cached.runs)


def test_discovery_skips_excluded_folders(archive):
    everything = discover(archive).sources
    without_tb = discover(archive, exclude=(archive / "tb",)).sources
    assert len(without_tb) < len(everything)
    assert not any("/tb" in str(source.path) for source in without_tb)


def test_a_worker_that_dies_costs_only_its_own_source(archive):
    from curvedoc.audit.engine import Task, _on_process_pool
    from worker_that_dies import audit_or_die

    shutil.copytree(archive / "lightning" / "healthy", archive / "kill_me")
    sources = discover(archive).sources
    results = list(_on_process_pool([Task(source, Config()) for source in sources], 2, work=audit_or_die))
    assert len(results) == len(sources), "every source answered once, the survivors after a retry"
    died = [r for r in results if r.problem and "died" in r.problem]
    assert [r.source.path.relative_to(archive).parts[0] for r in died] == ["kill_me"]
    assert sum(len(r.summaries) for r in results) == len(curvedoc.load(archive)) - 1


def test_an_unwritable_cache_costs_speed_not_the_audit(archive, tmp_path):
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("")
    assert as_data(audit([archive], jobs=1, cache=blocked)) == as_data(audit([archive], jobs=1, cache=False))
