"""curvedoc reads every committed fixture without writing anything into the folders it reads."""

import os
from pathlib import Path

import pytest

import curvedoc
from curvedoc.errors import CurvedocError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    state = {}
    for folder, _, files in os.walk(root):
        for name in files:
            info = os.stat(os.path.join(folder, name))
            state[os.path.join(folder, name)] = (info.st_size, info.st_mtime_ns)
    return state


@pytest.mark.parametrize("family", sorted(p.name for p in FIXTURES.iterdir()
                                           if p.is_dir() and p.name not in {"generate", "public"}))
def test_reading_a_fixture_family_writes_nothing_and_raises_only_curvedoc_errors(family):
    root = FIXTURES / family
    before = snapshot(root)
    try:
        runs = curvedoc.load(root)
    except CurvedocError:
        runs = []
    for run in runs:
        assert run.scalars["value"].dtype == "float64"
        assert run.scalars["step"].dtype == "int64"
    assert snapshot(root) == before
