"""`curvedoc audit` on the command line: the index in every format, -o DIR, the exit code, the progress bar."""

import csv
import fcntl
import io
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from html.parser import HTMLParser
from pathlib import Path

import pytest

from curvedoc.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CURVEDOC_CACHE_DIR", str(tmp_path / "user-cache"))


@pytest.fixture
def archive(tmp_path):
    root = tmp_path / "archive"
    shutil.copytree(FIXTURES / "tensorboard" / "pytorch" / "healthy", root / "tb_healthy")
    shutil.copytree(FIXTURES / "tensorboard" / "pytorch" / "lr_too_high", root / "tb_lr_too_high")
    shutil.copytree(FIXTURES / "csv" / "lightning", root / "lightning")
    shutil.copytree(FIXTURES / "csv" / "broken", root / "broken")
    return root


def run_cli(capsys, *argv):
    code = main(["audit", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_terminal_index_lists_worst_runs_first_and_gates_the_exit_code(archive, capsys):
    code, out, err = run_cli(capsys, archive, "-j", "1")
    assert code == 1, "a failing run fails the audit, as it fails `curvedoc PATH`"
    failing = out.index("lr_too_high")
    assert failing < out.index("tb_healthy")
    assert "empty.csv" in out and "empty file" in out, "unreadable runs are listed with their reason"
    assert err == "", "no progress bar or chatter when stderr is not a terminal"
    assert run_cli(capsys, archive, "-j", "1", "--fail-on", "never")[0] == 0


def test_parallel_audits_print_the_same_bytes(archive, capsys):
    serial = run_cli(capsys, archive, "-j", "1", "--no-cache", "--format", "json")[1]
    parallel = run_cli(capsys, archive, "-j", "2", "--no-cache", "--format", "json")[1]
    cached = run_cli(capsys, archive, "-j", "2", "--format", "json")[1]
    assert parallel == serial
    data = json.loads(serial)
    assert len(data["runs"]) >= 4
    assert json.loads(cached)["runs"] == data["runs"]


def test_output_folder_holds_the_index_in_every_format_linked_to_each_runs_report(archive, tmp_path, capsys):
    out = tmp_path / "report"
    code, _, err = run_cli(capsys, archive, "-j", "2", "-o", out)
    assert code == 1 and "index.html" in err
    for name in ("index.html", "index.md", "index.json", "runs.csv"):
        assert (out / name).stat().st_size > 0
    index = json.loads((out / "index.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent.parent / "curvedoc/report/index/audit.schema.json").read_text())
    jsonschema.validate(index, schema)
    rows = list(csv.DictReader(io.StringIO((out / "runs.csv").read_text())))
    assert len(rows) == len(index["runs"])
    assert all(row["path"] == f"{archive}/{row['run']}" for row in rows), "a run is named by its path under ROOT"

    class Links(HTMLParser):
        hrefs = []

        def handle_starttag(self, tag, attrs):
            self.hrefs += [value for name, value in attrs if tag == "a" and name == "href"]

    parser = Links()
    parser.feed((out / "index.html").read_text())
    run_pages = {href for href in parser.hrefs if href.startswith("runs/")}
    assert len(run_pages) == len(index["runs"])
    assert all((out / href).is_file() for href in run_pages)
    markdown = (out / "index.md").read_text()
    assert all(f"({href.removesuffix('.html')}.md)" in markdown for href in run_pages)


def test_bad_command_lines_are_one_line_errors(archive, tmp_path, capsys):
    for argv in ([tmp_path / "missing"], [archive, "-j", "0"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("curvedoc: error:")


def test_the_progress_bar_shows_on_a_terminal_only(archive, tmp_path):
    env = {**os.environ, "CURVEDOC_CACHE_DIR": str(tmp_path / "c")}
    leader, follower = pty.openpty()
    # a real terminal has a size; tqdm draws nothing in a 0-column one
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.run(
        [sys.executable, "-m", "curvedoc.cli", "audit", str(archive), "-j", "1", "--fail-on", "never"],
        stdout=subprocess.DEVNULL, stderr=follower, env=env, timeout=120,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert process.returncode == 0
    assert b"auditing" in shown and b"log" in shown


def test_an_agents_run_is_listed_by_its_reward(tmp_path, capsys):
    """An agent's losses are a policy's and a value function's objectives: the index shows where its reward ended,
    and the CSV gives the main score a column of its own."""
    run = tmp_path / "agents" / "ppo"
    run.mkdir(parents=True)
    rows = [f"{step * 2048},{step * 3.0 - 50},{5000 - step * 30}" for step in range(1, 40)]
    (run / "progress.csv").write_text("time/total_timesteps,rollout/ep_rew_mean,train/loss\n" + "\n".join(rows) + "\n")
    out = run_cli(capsys, tmp_path / "agents", "-j", "1", "--no-cache")[1]
    assert "score 64" in out and "train_loss" not in out
    table = list(csv.DictReader(io.StringIO(run_cli(capsys, tmp_path / "agents", "-j", "1", "--format", "csv")[1])))
    assert float(table[0]["final_score"]) > 60 and table[0]["final_train_loss"] != ""
