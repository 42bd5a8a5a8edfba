"""The command line as a user meets it: what was read, as text or JSON, and one-line errors with exit 2."""

import json
from pathlib import Path

import pytest

from curvedoc.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
README_EXAMPLE = FIXTURES / "tensorboard" / "pytorch" / "healthy"


def run_cli(capsys, *args):
    code = main([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_readme_example_reads_cleanly(capsys, monkeypatch):
    # exactly as the README runs it: from the checkout, with the relative path
    monkeypatch.chdir(FIXTURES.parent)
    code, out, err = run_cli(capsys, README_EXAMPLE.relative_to(FIXTURES.parent))
    assert code == 0 and err == ""
    # A healthy run is one line: verdict, path, format, points, class count.
    assert out.count("\n") == 1 and "healthy" in out and "tensorboard" in out and "10 classes" in out
    assert "warning" not in out


def test_json_contract(capsys):
    code, out, _ = run_cli(capsys, README_EXAMPLE, "--format", "json")
    document = json.loads(out)
    (run,) = document["runs"]
    assert {"path", "format", "meta", "series", "warnings"} <= set(run)
    assert run["meta"]["n_classes"] == 10 and isinstance(run["meta"]["hparams"], dict)
    assert {"tag", "role", "n_points", "first_step", "last_step", "n_nonfinite"} == set(run["series"][0])
    roles = {series["role"] for series in run["series"]}
    assert {"train_loss", "val_loss", "train_acc", "val_acc", "lr", "grad_norm"} <= roles


def test_nonfinite_values_are_counted(capsys):
    _, out, _ = run_cli(capsys, FIXTURES / "tensorboard" / "pytorch" / "lr_too_high", "--format", "json")
    (run,) = json.loads(out)["runs"]
    loss = next(series for series in run["series"] if series["role"] == "train_loss")
    assert 0 < loss["n_nonfinite"] < loss["n_points"]


def test_role_and_class_count_overrides(capsys):
    keras_log = FIXTURES / "csv" / "keras" / "training.log"
    _, out, _ = run_cli(capsys, keras_log, "--format", "json", "--role", "test_loss=val_loss", "--num-classes", "7")
    (run,) = json.loads(out)["runs"]
    assert {s["tag"]: s["role"] for s in run["series"]}["val_loss"] == "test_loss"
    assert run["meta"]["n_classes"] == 7 and run["meta"]["n_classes_source"] == "--num-classes"


def test_config_file_overrides_roles(capsys, tmp_path, monkeypatch):
    (tmp_path / "curvedoc.toml").write_text('num_classes = 4\n[roles]\ntest_loss = "val_loss"\n')
    monkeypatch.chdir(tmp_path)
    _, out, _ = run_cli(capsys, FIXTURES / "csv" / "keras" / "training.log", "--format", "json")
    (run,) = json.loads(out)["runs"]
    assert {s["tag"]: s["role"] for s in run["series"]}["val_loss"] == "test_loss"
    assert run["meta"]["n_classes"] == 4


def test_a_runs_own_class_count_wins_over_the_option(capsys):
    _, out, _ = run_cli(capsys, README_EXAMPLE, "--format", "json", "--num-classes", "3")
    assert json.loads(out)["runs"][0]["meta"]["n_classes"] == 10


def test_folder_of_mixed_formats_lists_every_run_and_every_problem(capsys):
    code, out, _ = run_cli(capsys, FIXTURES, "--format", "json")
    document = json.loads(out)
    formats = {run["format"] for run in document["runs"]}
    assert {"tensorboard", "lightning-csv", "keras-csv", "hf-trainer-state", "wandb", "mlflow", "mlflow-sqlite",
            "jsonl", "wandb-export"} <= formats
    assert code == 1 and any("Git LFS pointer" in problem for problem in document["problems"])


@pytest.mark.parametrize("path,problem", [
    ("does/not/exist", "no such file or directory"),
    ("tensorboard/broken/random/events.out.tfevents.x", "not a TensorBoard event file"),
    ("csv/broken/empty.csv", "empty file"),
    ("csv/broken/header_only.csv", "header only"),
])
def test_bad_input_is_one_line_naming_the_file_and_exit_2(capsys, path, problem):
    code, out, err = run_cli(capsys, FIXTURES / path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and problem in err and path in err and "Traceback" not in err


def test_one_bad_path_does_not_hide_the_others(capsys):
    code, out, err = run_cli(capsys, README_EXAMPLE, FIXTURES / "missing")
    assert code == 2 and "tensorboard" in out and "missing: no such file or directory" in err


def test_a_report_kept_as_a_file_or_read_by_a_program_lists_the_paths_it_could_not_read(capsys, tmp_path):
    code, out, err = run_cli(capsys, README_EXAMPLE, FIXTURES / "missing", "--format", "json")
    assert code == 2 and "missing: no such file or directory" in err
    assert json.loads(out)["problems"] == [f"{FIXTURES / 'missing'}: no such file or directory"]
    report = tmp_path / "report.md"
    code, _, _ = run_cli(capsys, README_EXAMPLE, FIXTURES / "missing", "-o", report)
    assert code == 2 and "missing: no such file or directory" in report.read_text()


def test_terminal_never_receives_escape_sequences_from_logs(capsys, tmp_path):
    # The loss turns NaN so the run has a finding and its tag is shown.
    (tmp_path / "log.csv").write_text("step,\x1b[31mloss\x1b[0m\n0,1.0\n1,0.5\n2,0.4\n3,nan\n4,nan\n")
    _, out, _ = run_cli(capsys, tmp_path / "log.csv")
    assert "\x1b" not in out and "?[31mloss" in out


def test_all_runs_as_one_tidy_table():
    import curvedoc

    runs = curvedoc.load(FIXTURES / "csv" / "lightning")
    table = runs.frame()
    assert list(table.columns) == ["run", "tag", "role", "step", "wall_time", "value"]
    assert table["run"].nunique() == 2 and len(table) == sum(len(run.scalars) for run in runs)
    assert set(table.loc[table["tag"] == "val_loss", "role"]) == {"val_loss"}


@pytest.mark.parametrize("path,fail_on,code", [
    (README_EXAMPLE, "error", 0),
    (FIXTURES / "tensorboard" / "pytorch" / "lr_too_high", "error", 1),
    (FIXTURES / "tensorboard" / "pytorch" / "lr_too_high", "never", 0),
])
def test_exit_status_gates_on_the_worst_finding(capsys, path, fail_on, code):
    assert run_cli(capsys, path, "--fail-on", fail_on)[0] == code


def test_report_written_to_a_file_in_the_format_its_extension_names(capsys, tmp_path):
    code, out, _ = run_cli(capsys, README_EXAMPLE, "-o", tmp_path / "report.json")
    assert code == 0 and out == ""
    assert json.loads((tmp_path / "report.json").read_text())["runs"][0]["format"] == "tensorboard"
    code, _, err = run_cli(capsys, README_EXAMPLE, "-o", tmp_path / "report.pdf")
    assert code == 2 and "cannot tell the report format" in err


def test_diagnose_api_returns_runs_with_findings():
    import curvedoc

    (run,) = curvedoc.diagnose(FIXTURES / "tensorboard" / "pytorch" / "lr_too_high")
    assert run.findings[0].symptom == "nan_inf"
