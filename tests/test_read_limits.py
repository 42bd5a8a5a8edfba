"""Bounded work on any input: what one file may cost is capped, a file over a cap is refused in one line naming
it and the limit, the caps are settable in the config; a cut last line and BOM-less wide text are read right."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc.cli import main
from curvedoc.config import Config, parse_config
from curvedoc.errors import CurvedocError
from curvedoc.readers import limits
from curvedoc.readers.limits import ReadLimits
from event_files import write_scalars


def config_with(**caps) -> Config:
    return parse_config({"limits": caps}, "curvedoc.toml")


def refused(path, config=None) -> str:
    with pytest.raises(CurvedocError) as error:
        curvedoc.load(path, config=config or Config())
    message = str(error.value)
    assert "\n" not in message and str(path) in message
    return message


def test_a_csv_with_a_million_columns_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("step," + ",".join(f"m{index}" for index in range(1_000_000)) + "\n0," + "1," * 10 + "1\n")
    message = refused(path)
    assert "1,000,001 columns" in message and "limits.max_columns" in message


def test_a_line_of_tens_of_megabytes_is_refused(tmp_path):
    path = tmp_path / "long.csv"
    path.write_bytes(b"step,loss\n0," + b"1" * (20 << 20) + b"\n")
    assert "limits.max_line_bytes" in refused(path)
    jsonl = tmp_path / "long.jsonl"
    jsonl.write_text('{"step": 0, "note": "' + "x" * (20 << 20) + '"}\n')
    assert "limits.max_line_bytes" in refused(jsonl)


def test_json_nested_too_deep_is_refused(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"step": 0, "loss": 1.0, "x": ' + "[" * 1000 + "]" * 1000 + "}\n")
    assert "nested 1,001 levels deep" in refused(path)
    state = tmp_path / "trainer_state.json"
    state.write_text('{"log_history": [{"step": 1, "loss": 1.0, "x": ' + "{\"a\": " * 200 + "1" + "}" * 200 + "}]}")
    assert "limits.max_json_depth" in refused(state)


def test_json_lines_are_each_their_own_document_for_the_depth_cap(tmp_path):
    """A logged note with an unclosed bracket on every line ("cfg {") leaves no line nested more than twice."""
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": step, "loss": 1 / (step + 1), "note": "cfg {"}) + "\n"
                            for step in range(200)))
    (run,) = curvedoc.load(path)
    assert run.point_counts() == {"loss": 200}


def test_the_caps_are_settable_in_the_config(tmp_path, monkeypatch, capsys):
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss,acc\n" + "".join(f"{step},{1 / (step + 1)},0.5\n" for step in range(50)))
    assert "3 columns" in refused(path, config_with(max_columns=2))
    assert "51 lines" in refused(path, config_with(max_records=20))
    write_scalars(tmp_path / "tb", {"loss": [1.0] * 100})
    assert "limits.max_records" in refused(tmp_path / "tb", config_with(max_records=50))
    (tmp_path / "curvedoc.toml").write_text("[limits]\nmax_columns = 2\n")
    monkeypatch.chdir(tmp_path)
    assert main([str(path)]) == 2
    assert "limits.max_columns" in capsys.readouterr().err


@pytest.mark.parametrize("table, message", [
    ({"max_colums": 5}, "unknown limit 'max_colums'; did you mean 'max_columns'?"),
    ({"max_columns": 0}, "limits.max_columns must be a whole number of at least 1"),
    ({"max_records": 2.5}, "limits.max_records must be a whole number"),
])
def test_limit_settings_are_checked(table, message):
    with pytest.raises(CurvedocError, match=message):
        parse_config({"limits": table}, "curvedoc.toml")


def test_a_csv_cut_inside_a_number_drops_its_last_line_with_a_warning(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss\n0,0.75\n1,0.5\n2,0.")  # 2,0.25 was being written
    (run,) = curvedoc.load(path, config=Config())
    assert run.series("loss")["step"].tolist() == [0, 1]
    assert any("last record cut off" in warning and "kept the 2 complete row(s)" in warning
               for warning in run.warnings)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-32"])
def test_wide_text_without_a_bom_is_recognised(tmp_path, encoding):
    text = "step,loss\n" + "".join(f"{step},{1 / (step + 1)}\n" for step in range(20))
    (tmp_path / "metrics.csv").write_bytes(text.encode(encoding))
    (run,) = curvedoc.load(tmp_path / "metrics.csv", config=Config())
    assert len(run.series("loss")) == 20
    (tmp_path / "train.log").write_bytes("".join(f"step {step} loss {1 / (step + 1):.4f}\n"
                                                 for step in range(20)).encode(encoding))
    runs = curvedoc.load(tmp_path / "train.log", config=Config())
    assert len(runs[0].series(runs[0].primary("train_loss"))) == 20


@settings(max_examples=40, deadline=None)
@given(width=st.integers(1, 40), rows=st.integers(1, 30), line=st.integers(1, 400), depth=st.integers(0, 30),
       caps=st.fixed_dictionaries({"max_columns": st.integers(1, 50), "max_line_bytes": st.integers(8, 500),
                                   "max_json_depth": st.integers(1, 20), "max_records": st.integers(1, 40)}))
def test_any_table_under_any_caps_is_read_or_refused_in_one_line(tmp_path_factory, width, rows, line, depth, caps):
    folder = tmp_path_factory.mktemp("capped")
    csv = folder / "metrics.csv"
    header = ",".join(["step", *(f"m{index}" for index in range(width))])
    csv.write_text(header + "\n" + "".join(f"{step}," + ",".join(["0.5"] * width) + "\n" for step in range(rows)))
    nested = []
    for _ in range(depth):
        nested = [nested]
    jsonl = folder / "history.jsonl"
    jsonl.write_text("".join(json.dumps({"step": step, "loss": 0.5, "note": "x" * line, "nested": nested}) + "\n"
                             for step in range(rows)))
    for path in (csv, jsonl):
        try:
            curvedoc.load(path, config=config_with(**caps))
        except CurvedocError as exc:
            assert "\n" not in str(exc) and ("limits." in str(exc) or "no numeric" in str(exc))


def test_reading_returns_to_the_default_caps_afterwards(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss,acc\n0,1.0,0.5\n1,0.5,0.6\n")
    refused(path, config_with(max_columns=1))
    assert limits.current() == ReadLimits()
    assert len(curvedoc.load(path, config=Config())) == 1
