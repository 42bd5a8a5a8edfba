"""The frame walk against a plain record-by-record reader: same records, same damage found, for any chunk size."""

from __future__ import annotations

import re
import struct

import google_crc32c
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curvedoc.readers import tfrecord
from curvedoc.readers.tfrecord import PAD, FrameWalk, data_crcs, masked_crc


def frame(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc(header)) + data + struct.pack("<I", masked_crc(data))


def reference(blob: bytes, start: int) -> dict:
    """One record at a time, as TensorBoard's reader goes (but skipping a record whose data fails its CRC)."""
    records, bad, offset = [], [], start
    while offset + 12 <= len(blob):
        (length,) = struct.unpack_from("<Q", blob, offset)
        if masked_crc(blob[offset:offset + 8]) != struct.unpack_from("<I", blob, offset + 8)[0]:
            return {"records": records, "bad": bad, "corrupt_at": offset, "cut_at": None, "end": offset}
        end = offset + 16 + length
        if end > len(blob):
            break
        data = blob[offset + 12:end - 4]
        if masked_crc(data) == struct.unpack_from("<I", blob, end - 4)[0]:
            records.append((offset + 12, data))
        else:
            bad.append(offset)
        offset = end
    return {"records": records, "bad": bad, "corrupt_at": None, "cut_at": offset if offset < len(blob) else None,
            "end": offset}


def walked(path, start: int, chunk_bytes: int | None) -> tuple[FrameWalk, list]:
    records = []
    with open(path, "rb") as handle:
        walk = FrameWalk(handle, chunk_bytes=chunk_bytes, start=start)
        for chunk in walk:
            ends = chunk.starts + chunk.lengths
            # the decoders read a little past a record: every chunk has PAD's worth of bytes after its last one
            assert len(chunk.data) >= int(ends.max()) + 4 + len(PAD)
            records += [(chunk.base + s, chunk.data[s:s + n])
                        for s, n in zip(chunk.starts.tolist(), chunk.lengths.tolist(), strict=True)]
    return walk, records


def bad_records(problems: list[str]) -> int:
    found = 0
    for problem in problems:
        if match := re.search(r"(\d+) records fail their CRC check", problem):
            found += int(match.group(1))
        elif "fails its CRC check" in problem:
            found += 1
    return found


record = st.one_of(st.binary(max_size=40), st.binary(min_size=200, max_size=600))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.tuples(record, st.integers(1, 6)), max_size=25),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)), max_size=3),
    keep=st.floats(0, 1),
    first=st.floats(0, 1),
    chunk_bytes=st.sampled_from([None, 1, 13, 64, 300, 1000]),
)
def test_walk_matches_a_record_by_record_read(tmp_path, records, flips, keep, first, chunk_bytes):
    # each record repeated: runs of one length are what the walk follows in bulk
    frames = [frame(data) for data, times in records for _ in range(times)]
    blob = bytearray(b"".join(frames))
    for where, bit in flips if blob else ():
        blob[int(where * len(blob))] ^= 1 << bit
    blob = bytes(blob[:round(keep * len(blob))] if keep < 0.7 else blob)
    boundaries = np.cumsum([0] + [len(f) for f in frames])
    start = int(boundaries[min(int(first * len(boundaries)), len(boundaries) - 1)]) if first > 0.5 else 0
    start = min(start, len(blob))
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(blob)

    walk, found = walked(path, start, chunk_bytes)
    expected = reference(blob, start)
    assert found == expected["records"]
    assert walk.records == len(found) == len(expected["records"])
    assert bad_records(walk.problems) == len(expected["bad"])
    assert walk.corrupt == (expected["corrupt_at"] is not None)
    if expected["corrupt_at"] is not None:
        assert walk.stopped_at == expected["corrupt_at"] and walk.cut_off is None
    elif expected["cut_at"] is not None:
        assert walk.stopped_at == expected["cut_at"] and f"cut off at byte {expected['cut_at']} " in walk.cut_off
    else:
        assert walk.stopped_at is None and walk.cut_off is None
    assert walk.end == expected["end"] or walk.corrupt
    assert walk.empty == (len(blob) == 0)
    if chunk_bytes is None and expected["bad"]:  # one chunk: one message, naming the first
        assert f"at byte {expected['bad'][0]}" in " ".join(walk.problems)


def test_long_runs_of_one_length_among_short_ones(tmp_path):
    """Scalar logs (thousands of frames of one length, steps changing width) and media logs (an image, four
    histograms of one length, a scalar) in one file, damaged in a few places, read in chunks of several sizes."""
    rng = np.random.default_rng(0)
    frames = [frame(bytes([7]) * 21) for _ in range(5000)] + [frame(bytes([8]) * 22) for _ in range(3000)]
    for step in range(300):
        frames += [frame(rng.bytes(3000 + step % 3)), *[frame(rng.bytes(1031))] * 4, frame(rng.bytes(30))]
    frames += [frame(bytes([9]) * 21) for _ in range(2000)]
    blob = bytearray(b"".join(frames))
    for at in (50_000, 400_000, 900_000):  # data bytes (all three land inside a record's data)
        blob[at] ^= 0x10
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(blob)
    expected = reference(bytes(blob), 0)
    assert len(expected["bad"]) == 3 and expected["corrupt_at"] is None
    for chunk_bytes in (None, 4096, 100_000):
        walk, found = walked(path, 0, chunk_bytes)
        assert found == expected["records"] and walk.end == len(blob)
        assert bad_records(walk.problems) == 3 and walk.cut_off is None and not walk.corrupt


def test_data_crcs_agree_with_google_crc32c_on_both_sides_of_the_vector_limit():
    rng = np.random.default_rng(1)
    lengths = np.array([0, 1, 3, 4, 5, 31, 255, 256, 257, 1000, 48_000, 7, 256, 0], np.int64)
    starts = np.concatenate([[3], 3 + np.cumsum(lengths[:-1] + 5)])
    buffer = rng.bytes(int(starts[-1] + lengths[-1]) + len(PAD))
    expected = [google_crc32c.value(buffer[s:s + n]) for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)]
    assert data_crcs(buffer, starts, lengths).tolist() == expected
    assert tfrecord.VECTOR_CRC_MAX_LENGTH == 256  # the lengths above straddle it
