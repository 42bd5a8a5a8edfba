"""Property tests: real event files cut or corrupted anywhere give warnings or CurvedocError, never a crash,
and every complete record before the damage is still read."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import curvedoc
from curvedoc.errors import CurvedocError
from curvedoc.readers.tensorboard import event_file_points

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tensorboard"
SOURCES = [
    next((FIXTURES / "tensorboardx" / "healthy").glob("events*")),  # simple_value
    next((FIXTURES / "pytorch" / "lr_too_high").glob("events*")),  # NaN values, hparams
    sorted((FIXTURES / "tensorboard_api").glob("events*"))[1],  # tensor scalars, several values per event
    next((FIXTURES / "pytorch" / "media").glob("events*")),  # images, histograms, text
]


def frame_ends(data: bytes) -> list[int]:
    ends, offset = [], 0
    while offset + 12 <= len(data):
        offset += int.from_bytes(data[offset:offset + 8], "little") + 16
        ends.append(offset)
    return ends


SOURCE_DATA = [(path, path.read_bytes()) for path in SOURCES]


def points_before(source: int, damage_at: int) -> set:
    """The points of every record that ends before byte ``damage_at``."""
    data = SOURCE_DATA[source][1]
    whole_records = sum(1 for end in frame_ends(data) if end <= damage_at)
    prefix = data[: frame_ends(data)[whole_records - 1]] if whole_records else b""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / SOURCE_DATA[source][0].name
        path.write_bytes(prefix)
        if not prefix:
            return set()
        return as_set(event_file_points(path))


def as_set(points) -> set:
    return {(tag, int(step), np.float64(value).tobytes()) for tag, step, value in
            zip(points["tag"], points["step"], points["value"])}


def read_damaged(name: str, data: bytes):
    """Loads the damaged bytes; returns the points read, or None when curvedoc said nothing was readable."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            [run] = curvedoc.load(path)
        except CurvedocError as error:
            assert "\n" not in str(error) and str(path) in str(error)
            return None
        assert all("\n" not in warning for warning in run.warnings)
        return as_set(run.scalars)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.integers(0, len(SOURCES) - 1), fraction=st.floats(0, 1))
def test_cut_anywhere_keeps_every_complete_record(source, fraction):
    path, data = SOURCE_DATA[source]
    cut = int(len(data) * fraction)
    found = read_damaged(path.name, data[:cut])
    expected = points_before(source, cut)
    if found is None:
        assert not expected
    else:
        assert found == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.integers(0, len(SOURCES) - 1), fraction=st.floats(0, 1), garbage=st.binary(min_size=1, max_size=16))
def test_corrupt_bytes_anywhere_lose_nothing_before_them(source, fraction, garbage):
    path, data = SOURCE_DATA[source]
    at = min(int(len(data) * fraction), len(data) - 1)
    damaged = bytearray(data)
    damaged[at:at + len(garbage)] = bytes(b ^ 0xA5 for b in garbage)
    found = read_damaged(path.name, bytes(damaged[: len(data)]))
    expected = points_before(source, at)
    if found is None:
        assert not expected
    else:
        assert expected <= found
