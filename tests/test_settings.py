"""Settings that cannot misfire: every mistake is one line naming what is wrong (exit 2), the API reads the
configuration the command line reads, and a verdict says what it could not check."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import curvedoc
from curvedoc.cli import main
from curvedoc.config import Config
from curvedoc.errors import CurvedocError

NAN_RUN = "fixtures/corpus/nan_inf/div_by_count_digits"  # CD101 nan_inf and CD201 start_high
HEALTHY_TB = "fixtures/tensorboard/pytorch/healthy"
NO_VALIDATION = "fixtures/corpus/healthy/cancer_no_val"
REPOSITORY = Path(__file__).resolve().parent.parent


def codes(capsys, *argv):
    status = main([*argv, "--format", "json", "--fail-on", "never"])
    document = json.loads(capsys.readouterr().out)
    return status, {f["code"] for run in document["runs"] for f in run["findings"]}


def error_line(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    return err


def test_a_role_naming_a_tag_no_run_has_is_an_error_with_the_closest_tag(capsys):
    err = error_line(capsys, [HEALTHY_TB, "--role", "val_loss=val/losss"])
    assert "--role" in err and "'val/losss'" in err and "did you mean 'val/loss'" in err


def test_a_role_tag_some_runs_lack_is_a_warning_on_those(tmp_path):
    shutil.copytree(HEALTHY_TB, tmp_path / "a")
    shutil.copytree(NO_VALIDATION, tmp_path / "b")
    runs = curvedoc.load(tmp_path, roles={"val_loss": "val/loss"}, config=Config())
    lacking = [run for run in runs if any("no such tag" in warning for warning in run.warnings)]
    assert [run.name for run in lacking] == ["metrics.jsonl"]
    with pytest.raises(CurvedocError, match="no run has that tag"):
        curvedoc.load(tmp_path, roles={"val_loss": "Loss/typo"}, config=Config())


@pytest.mark.parametrize("toml, message", [
    ("disabled = ['CD101']", "unknown key 'disabled'; did you mean 'disable'?"),
    ("num_clases = 10", "unknown key 'num_clases'; did you mean 'num_classes'?"),
    ("fail_on = 'error'", "unknown key 'fail_on'"),
    ("[thresholds.CD302]\ntolerance = -0.1", "thresholds.CD302.tolerance = -0.1 must be a finite number of at least 0"),
    ("[thresholds.CD501]\nrise_share = 1.5", "thresholds.CD501.rise_share = 1.5 is a share: between 0 and 1"),
    ("[thresholds.CD402]\nmin_points = 2.5", "thresholds.CD402.min_points = 2.5 is a count"),
    ("[thresholds.CD402]\nmin_point = 2", "no threshold 'min_point'; did you mean 'min_points'?"),
    ("select = ['CD9999']", "select: no rule, code prefix or symptom named 'CD9999'"),
    ("disable = ['spikes']", "did you mean 'spike'?"),
    ("[per-run-ignores]\n'runs/*' = ['nan']", "per-run-ignores 'runs/*': no rule"),
])
def test_config_mistakes_are_one_line_errors_naming_the_file(tmp_path, monkeypatch, capsys, toml, message):
    (tmp_path / "curvedoc.toml").write_text(toml + "\n")
    monkeypatch.chdir(tmp_path)
    err = error_line(capsys, [str(REPOSITORY / HEALTHY_TB)])
    assert "curvedoc.toml" in err and message in err


def test_the_api_reads_the_configuration_the_command_line_reads(tmp_path, monkeypatch):
    run = shutil.copytree(NAN_RUN, tmp_path / "run")
    (tmp_path / "curvedoc.toml").write_text("disable = ['nan_inf']\n")
    monkeypatch.chdir(tmp_path)
    assert "CD101" not in {f.code for f in curvedoc.diagnose(run)[0].findings}
    assert "CD101" in {f.code for f in curvedoc.diagnose(run, config=Config())[0].findings}
    (tmp_path / "other.toml").write_text("disable = ['CD2']\n")
    found = {f.code for f in curvedoc.diagnose(run, config=tmp_path / "other.toml")[0].findings}
    assert "CD101" in found and "CD201" not in found


def test_select_and_ignore_take_codes_prefixes_and_symptoms(capsys):
    assert codes(capsys, NAN_RUN)[1] >= {"CD101", "CD201"}
    assert codes(capsys, NAN_RUN, "--select", "CD1")[1] == {"CD101"}
    assert codes(capsys, NAN_RUN, "--select", "start_high")[1] == {"CD201"}
    assert "CD101" not in codes(capsys, NAN_RUN, "--ignore", "nan_inf,CD7")[1]
    assert "spikes" in error_line(capsys, [NAN_RUN, "--ignore", "spikes"])


def test_per_run_ignores_drop_rules_for_matching_paths(tmp_path, monkeypatch):
    shutil.copytree(NAN_RUN, tmp_path / "sweep_a" / "run")
    shutil.copytree(NAN_RUN, tmp_path / "other")
    (tmp_path / "curvedoc.toml").write_text("[per-run-ignores]\n'sweep_*/**' = ['CD101']\n")
    monkeypatch.chdir(tmp_path)
    found = {run.path.split("/")[0]: {f.code for f in run.findings} for run in curvedoc.diagnose(".")}
    assert "CD101" not in found["sweep_a"] and "CD101" in found["other"]


def test_a_healthy_verdict_says_what_it_could_not_check_in_every_format(capsys):
    assert main([NO_VALIDATION]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "healthy" in text and "not checked:" in text and "no validation or test loss logged" in text
    assert main([NO_VALIDATION, "--format", "json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert any("CD501 overfitting" in line for line in run["not_checked"])
    assert main([NO_VALIDATION, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "not checked:" in markdown and "CD501 overfitting" in markdown
    assert main([NO_VALIDATION, "--format", "html"]) == 0
    assert "CD501 overfitting" in capsys.readouterr().out


def test_verbose_shows_the_notes_and_read_warnings_of_healthy_runs(tmp_path, capsys):
    run = shutil.copytree(HEALTHY_TB, tmp_path / "run")
    (event_file,) = run.glob("*tfevents*")
    event_file.write_bytes(event_file.read_bytes() + b"\x10\x00\x00")  # a record cut off by a crash
    assert main([str(run)]) == 0
    assert "1 read warning" in (quiet := capsys.readouterr().out) and "cut off" not in quiet
    assert main([str(run), "-v"]) == 0
    assert "read warning: " in capsys.readouterr().out


def test_markdown_keeps_read_warnings_of_runs_without_findings(tmp_path, capsys):
    run = shutil.copytree(HEALTHY_TB, tmp_path / "run")
    (event_file,) = run.glob("*tfevents*")
    event_file.write_bytes(event_file.read_bytes() + b"\x10\x00\x00")
    assert main([str(run), "--format", "markdown"]) == 0
    assert "read warning: " in (out := capsys.readouterr().out) and "last record cut off" in out


def test_plots_work_with_text_and_json_and_are_refused_where_the_page_draws_its_own(tmp_path, capsys):
    assert main([NAN_RUN, "--plots", str(tmp_path / "a"), "--fail-on", "never"]) == 0
    assert "plot: " in capsys.readouterr().out and list((tmp_path / "a").glob("*.png"))
    assert main([NAN_RUN, "--plots", str(tmp_path / "b"), "--format", "json", "--fail-on", "never"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["plot"].endswith(".png") and (tmp_path / "b").is_dir()
    err = error_line(capsys, [NAN_RUN, "--plots", str(tmp_path / "c"), "--format", "html"])
    assert "--plots" in err and not (tmp_path / "c").exists()


def test_color_follows_the_option_then_force_color_then_no_color(monkeypatch, capsys):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    main([NAN_RUN, "--fail-on", "never"])
    assert "\x1b[" not in capsys.readouterr().out  # not a terminal
    main([NAN_RUN, "--fail-on", "never", "--color", "always"])
    assert "\x1b[" in capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")
    main([NAN_RUN, "--fail-on", "never"])
    assert "\x1b[" in capsys.readouterr().out
    main([NAN_RUN, "--fail-on", "never", "--color", "never"])
    assert "\x1b[" not in capsys.readouterr().out


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
def test_bash_completion_offers_commands_options_choices_and_rule_codes(tmp_path):
    script = subprocess.run([sys.executable, "-m", "curvedoc.cli", "completion", "bash"], capture_output=True,
                            text=True, check=True).stdout
    (tmp_path / "completion.sh").write_text(script)
    probe = """source "$1"
t() { COMP_WORDS=("${@:2}"); COMP_CWORD=$(( $# - 2 )); COMPREPLY=(); _curvedoc; echo "${COMPREPLY[*]}"; }
t x curvedoc --fail; t x curvedoc wat; t x curvedoc r --format ''; t x curvedoc audit r --format ''; t x curvedoc rules CD10
"""
    lines = subprocess.run(["bash", "-c", probe, "probe", str(tmp_path / "completion.sh")], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    assert lines[0] == "--fail-on" and lines[1] == "watch"
    assert "markdown" in lines[2].split() and "csv" not in lines[2].split() and "csv" in lines[3].split()
    assert lines[4].split() == ["CD101", "CD102"]
