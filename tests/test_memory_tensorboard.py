"""Memory of reading a large TensorBoard run: the points are never held twice between decoding and the table.

What read + diagnose costs end to end is measured by ``benchmarks/bench_scaling.py --read-diagnose``; these tests
pin the parts of it that a change could quietly undo (a 64-bit sort order of every point, a second copy of the
curves' rows, a column or a curve held on to after it was handed over), and that narrowing the columns while a file
is read loses nothing.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from curvedoc import model
from curvedoc.model import RunBuilder
from curvedoc.readers import tensorboard
from curvedoc.readers.tensorboard import _by_tag, _Folder, _Points

TAGS = ["train/loss", "train/acc", "lr", "train/grad_norm"]


@pytest.mark.parametrize("block", [1, 7, 1 << 18])
@pytest.mark.parametrize("count", [1, 5, 70_000])
def test_rows_by_tag_are_a_stable_sort_by_tag(monkeypatch, block, count):
    monkeypatch.setattr(tensorboard, "BY_TAG_BLOCK", block)
    tags = np.random.default_rng(count).integers(0, count, 2_000).astype(np.int32)
    rows, bounds = _by_tag(tags, count)
    assert rows.dtype == np.int32
    assert rows.tolist() == np.argsort(tags, kind="stable").tolist()
    assert bounds == [0, *np.cumsum(np.bincount(tags, minlength=count)).tolist()]


def test_points_grow_in_place_and_widen_when_a_chunk_needs_it():
    points = _Points()
    chunks = [np.arange(start, start + size) for start, size in ((0, 3), (3, 1), (4, 10))]
    for chunk in chunks:
        points.append(chunk.astype(np.int32), chunk.astype(np.int32) % 2, chunk, chunk / 2, -chunk / 2)
    points.append(np.array([1 << 40]), np.array([0], np.int32), np.array([14]), np.array([7.0]), np.array([-7.0]))
    position, tag, step, wall_time, value = points.columns()
    assert position.dtype == np.int64 and tag.dtype == np.int32
    assert position.tolist() == [*range(14), 1 << 40]
    assert step.tolist() == list(range(15)) and wall_time.tolist() == [n / 2 for n in range(15)]
    assert value.tolist() == [-n / 2 for n in range(15)] and tag.tolist() == [n % 2 for n in range(15)]


def _handed_over(chunks) -> tuple[np.ndarray, np.ndarray]:
    """The steps and values a builder gets from a folder that read ``chunks`` of (steps, values) of one tag."""
    folder = _Folder(None, RunBuilder("run", "tensorboard"))
    folder.tags = ["loss"]
    for steps, values in chunks:
        records = folder.position + np.arange(len(steps))
        folder.position += len(steps)
        folder._add(records, np.zeros(len(steps), np.int64), np.asarray(steps, np.int64), np.zeros(len(steps)),
                    np.asarray(values, np.float64))
    builder = RunBuilder("run", "tensorboard")
    folder.finish(builder, keep=False)
    (steps, values, _), = builder._chunks["loss"]
    return steps, values


def test_32_bit_steps_and_values_are_kept_narrow_while_read_and_handed_over_exactly():
    payload = np.array([0x7FF8_0000_2000_0000], np.uint64).view(np.float64)  # a NaN a float32 holds, bit for bit
    values = np.concatenate([np.float32([0.1, -3e38, np.inf, -0.0]).astype(np.float64), payload])
    folder = _Folder(None, RunBuilder("run", "tensorboard"))
    folder.tags = ["loss"]
    count = len(values)
    folder._add(np.arange(count), np.zeros(count, np.int64), np.arange(count), np.zeros(count), values)
    assert folder.points.step.dtype == np.int32 and folder.points.value.dtype == np.float32
    steps, handed = _handed_over([(np.arange(count), values)])
    assert steps.dtype == np.int64 and handed.dtype == np.float64
    assert handed.view(np.uint64).tolist() == values.view(np.uint64).tolist()


@pytest.mark.parametrize("wide", [
    [0.1],  # a float64 no float32 holds
    np.array([0x7FF8_0000_0000_0001], np.uint64).view(np.float64),  # a NaN whose payload a float32 would drop
])
def test_a_value_no_float32_holds_widens_its_column_and_loses_nothing(wide):
    narrow = np.float32([1.5, np.nan]).astype(np.float64)
    chunks = [([0, 1], narrow), ([2], wide), ([3, 4], narrow)]
    _, handed = _handed_over(chunks)
    expected = np.concatenate([values for _, values in chunks])
    assert handed.view(np.uint64).tolist() == expected.view(np.uint64).tolist()


def test_steps_beyond_32_bits_widen_their_column():
    steps, _ = _handed_over([([0, 1], [1.0, 2.0]), ([1 << 40], [3.0]), ([(1 << 40) + 1], [4.0])])
    assert steps.tolist() == [0, 1, 1 << 40, (1 << 40) + 1]


def test_point_counts_are_counted_a_block_at_a_time(monkeypatch):
    builder = RunBuilder("run", "test")
    for length, tag in ((5, "a"), (1, "b"), (7, "c")):
        builder.add(tag, np.arange(length), np.zeros(length))
    run = builder.build()
    monkeypatch.setattr(model, "POINT_COUNT_BLOCK", 3)
    assert run.point_counts() == {"a": 5, "b": 1, "c": 7}


def test_a_run_read_once_is_handed_over_and_built_without_holding_its_points_twice(monkeypatch):
    count = 2_000_000
    monkeypatch.setattr(tensorboard, "BY_TAG_BLOCK", 1 << 16)
    tracemalloc.start()
    try:
        folder = _Folder(None, RunBuilder("run", "tensorboard"))
        folder.tags = list(TAGS)
        record = np.arange(count)
        folder.position = count
        folder._add(record, record % len(TAGS), record // len(TAGS), 1.7e9 + record / 100,
                    np.cos(record).astype(np.float32).astype(np.float64))
        del record
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        builder = RunBuilder("run", "tensorboard")
        folder.finish(builder, keep=False)
        handing_over = tracemalloc.get_traced_memory()[1] - before
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run = builder.build()
        building = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(run.scalars) == count
    assert run.scalars["step"].to_numpy()[:3].tolist() == [0, 1, 2]
    scratch = 4 << 20  # a block's sort by tag, a curve's checks in the build
    # beside the points read (24 bytes a point): the curves' rows (4 bytes) and, while a column is gathered, its
    # 8-byte copy; record positions and tag ids (8 bytes) are let go before the first, each source as it is gathered
    assert handing_over <= 10 * count + scratch
    # beside the curves handed over: the tag codes (1 byte a point) and one joined column at a time (8 bytes), each
    # curve's column let go once joined
    assert building <= 9 * count + scratch
