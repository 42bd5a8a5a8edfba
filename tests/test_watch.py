"""`curvedoc watch` on logs written while it watches: a TensorBoard writer and a CSV logger in a background
thread, a writer killed mid-record, runs that appear later, and the exit report equal to `curvedoc PATH`'s."""

import json
import math
import threading
import time

import curvedoc
from curvedoc.cli import main
from curvedoc.config import Config
from curvedoc.watch import Watch, follow
from event_files import EventWriter


def write_slowly(folder, losses, pause=0.01, ready=None):
    with EventWriter(folder) as writer:
        for step, loss in enumerate(losses):
            writer.scalar("train/loss", loss, step)
            writer.flush()
            if ready is not None and step == 10:
                ready.set()
            time.sleep(pause)


def diverging(nan_at=60, steps=120):
    return [2.3 * math.exp(-step / 40) + 0.1 if step < nan_at else math.nan for step in range(steps)]


def watch_while(writing: threading.Thread, watch: Watch, idle=0.5) -> str:
    writing.start()
    why = follow(watch, interval=0.05, idle=idle)
    writing.join()
    return why


def test_a_nan_is_printed_once_at_its_step_while_the_run_is_written(tmp_path):
    seen = []
    watch = Watch([str(tmp_path)], Config(), lambda run, finding: seen.append(finding))
    writing = threading.Thread(target=write_slowly, args=(tmp_path / "run", diverging()))
    assert watch_while(writing, watch) == "idle"
    nans = [f for f in seen if f.symptom == "nan_inf"]
    assert len(nans) == 1 and nans[0].step == 60
    offline = {(f.code, f.step, f.title) for run in curvedoc.diagnose(tmp_path) for f in run.findings}
    assert {(f.code, f.step, f.title) for run in watch.runs for f in run.findings} == offline


def test_a_finding_the_next_points_retract_is_never_printed(tmp_path):
    """The first points of a falling loss look flat; the next ones retract it before it is confirmed."""
    seen = []
    losses = [2.3] * 12 + [2.3 * math.exp(-step / 15) for step in range(100)]
    watch = Watch([str(tmp_path)], Config(), lambda run, finding: seen.append(finding))
    ready = threading.Event()
    writing = threading.Thread(target=write_slowly, args=(tmp_path / "run", losses, 0.01, ready))
    writing.start()
    ready.wait()
    watch.look()
    follow(watch, interval=0.05, idle=0.5)
    writing.join()
    assert not [f for f in seen if f.symptom == "flat_from_start"]


def test_an_appended_csv_and_a_run_that_appears_later_are_followed(tmp_path):
    seen = []
    watch = Watch([str(tmp_path)], Config(), lambda run, finding: seen.append((run.path, finding.symptom)))
    watch.look()  # nothing there yet: no error

    def log_rows():
        metrics = tmp_path / "lightning_logs" / "version_0" / "metrics.csv"
        metrics.parent.mkdir(parents=True)
        metrics.write_text("step,train_loss\n")
        for step in range(80):
            with metrics.open("a") as handle:
                handle.write(f"{step},{math.nan if step >= 50 else 1.0 / (step + 1)}\n")
            time.sleep(0.005)

    watch_while(threading.Thread(target=log_rows), watch)
    assert [symptom for _, symptom in seen].count("nan_inf") == 1


def test_a_writer_killed_mid_record_is_read_as_far_as_it_got(tmp_path):
    write_slowly(tmp_path / "run", diverging(nan_at=70, steps=90), pause=0)
    (event_file,) = (tmp_path / "run").glob("*tfevents*")
    data = event_file.read_bytes()
    event_file.write_bytes(data + data[-40:-5])  # the start of one more record, cut off: the process died
    seen = []
    watch = Watch([str(tmp_path)], Config(), lambda run, finding: seen.append(finding))
    watch.look()
    watch.look()
    assert [f.step for f in seen if f.symptom == "nan_inf"] == [70]


def test_the_command_prints_json_lines_exits_on_the_finding_and_once_for_cron(tmp_path, capsys):
    write_slowly(tmp_path / "run", diverging(), pause=0)
    assert main(["watch", str(tmp_path), "--once", "--format", "json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["event"], line["symptom"], line["step"]) for line in lines] == [("finding", "nan_inf", 60)]
    assert main(["watch", str(tmp_path), "--interval", "0.05", "--exit-on-finding"]) == 1
    assert "CD101 nan_inf step 60" in capsys.readouterr().out
    assert main(["watch", str(tmp_path), "--interval", "0.05", "--idle", "0.1", "--fail-on", "never"]) == 0
    out = capsys.readouterr().out
    assert "CD101 nan_inf step 60" in out and "FAILING" in out  # the finding, then curvedoc PATH's report


WRITER = """
import math, sys, time
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

writer = EventFileWriter(sys.argv[1])
for step in range(10_000):
    loss = 2.3 * math.exp(-step / 40) + 0.1 if step < 60 else math.nan
    value = summary_pb2.Summary.Value(tag="train/loss", simple_value=loss)
    writer.add_event(event_pb2.Event(step=step, wall_time=time.time(), summary=summary_pb2.Summary(value=[value])))
    writer.flush()
    time.sleep(0.01)
"""


def test_a_writer_process_killed_while_the_watch_follows_it(tmp_path):
    """TensorBoard's own event writer in another process, killed (SIGKILL) mid-run: the watch has reported the NaN
    at its step, keeps reading what the file holds, and finishes on idle."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "run")])
    seen = []
    watch = Watch([str(tmp_path)], Config(), lambda run, finding: seen.append(finding))
    try:
        deadline = time.monotonic() + 60
        while not [f for f in seen if f.symptom == "nan_inf"] and time.monotonic() < deadline:
            watch.look()
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert [f.step for f in seen if f.symptom == "nan_inf"] == [60]
    assert follow(watch, interval=0.05, idle=0.3) == "idle"
    assert [f.step for f in seen if f.symptom == "nan_inf"] == [60]  # printed once


def test_when_a_finding_is_certain_is_what_its_rule_declares(monkeypatch):
    """The watch keeps no list of symptoms of its own: a rule's `live` decides (a NaN at once, a shape later)."""
    from dataclasses import replace

    import numpy as np

    from curvedoc.diagnose import diagnose_run
    from curvedoc.rules import AT_ONCE, REGISTRY, WHOLE_RUN, all_rules
    from curvedoc.watch import Certainty
    from rule_cases import synthetic

    assert {rule.code for rule in all_rules("run") if rule.live == AT_ONCE} == {"CD101"}
    run = synthetic({"train/loss": np.r_[np.linspace(2.3, 1.0, 30), [np.nan] * 3]})
    nan = [f for f in diagnose_run(run) if f.code == "CD101"]
    assert Certainty().newly_certain(run, nan) == nan  # on the first look
    monkeypatch.setitem(REGISTRY, "CD101", replace(REGISTRY["CD101"], live=WHOLE_RUN))
    assert Certainty().newly_certain(run, nan) == []  # a whole-run shape needs more looks and a longer run
