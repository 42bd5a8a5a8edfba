"""Walking the TFRecord frames of an event file, checking both CRCs, in chunks of bounded size.

A frame is ``uint64 length``, ``uint32 masked_crc32c(length bytes)``, ``data``, ``uint32 masked_crc32c(data)``,
all little-endian. The file is read in chunks (never mapped or read whole) so memory stays proportional to one
chunk. The only per-record Python work is following the length fields: both CRCs are checked for a whole chunk
at once, and everything else about the records is left to vectorised code too.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import google_crc32c
import numpy as np

# Memory stays proportional to the scalars kept, not to the file: 2 MB chunks leave the allocator less free heap
# from decoding than 8 MB ones (a 10 M-point run's read and diagnosis peak 43 -> 41 bytes a point) and keep scalar
# records in cache (2.6 -> 3.0 M points/s), at a cost to image files (1,380 -> 1,010 MB/s: more chunks, as many
# records)
CHUNK_BYTES = 2 << 20
# This many bytes after each chunk's last record (the file's next bytes, or these zeros at its end) so vectorised
# reads a little past a record (8-byte words; a fast-path layout check that may follow a bogus one-byte length up
# to 127 bytes ahead) stay inside the buffer.
PAD = bytes(256)
LENGTH = struct.Struct("<Q")
LENGTH_CRC = struct.Struct("<I")
MASK_DELTA = 0xA282EAD8
# Up to this length a record's CRC is computed by the vectorised table code, above it by one C call.
VECTOR_CRC_MAX_LENGTH = 256


def masked_crc(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def masked_crcs(crcs: np.ndarray) -> np.ndarray:
    crcs = crcs.astype(np.uint64)
    return (((crcs >> 15) | (crcs << 17)) + MASK_DELTA) & 0xFFFFFFFF


@dataclass
class Chunk:
    """Complete, CRC-checked records: ``starts``/``lengths`` locate each record's data inside ``data``."""

    data: bytes  # at least len(PAD) bytes go on after its walked part
    base: int  # file offset of data[0]
    starts: np.ndarray
    lengths: np.ndarray


@dataclass
class FrameWalk:
    """Walks one open event file from byte ``start`` (0, or where an earlier walk of a growing file ended); after
    iterating, ``problems`` says what was wrong with its framing and ``cut_off`` whether it ends inside a record.

    ``stopped_at`` is the file offset where reading ended early: framing lost (``corrupt``) or the file cut.
    ``end`` is the offset after the last complete record: where the next walk of a file still being written starts.
    """

    handle: BinaryIO
    chunk_bytes: int | None = None  # None: CHUNK_BYTES
    start: int = 0
    problems: list[str] = field(default_factory=list)
    cut_off: str | None = None
    records: int = 0
    stopped_at: int | None = None
    corrupt: bool = False
    empty: bool = False
    end: int = 0

    def __iter__(self) -> Iterator[Chunk]:
        size = os.fstat(self.handle.fileno()).st_size
        self.end = self.start
        if size == 0:
            self.empty = True
            return
        # ``base``: file offset of the first byte not yet walked past; ``read``: how far the file has been read.
        # [base, read) is the unfinished record a chunk ended in: it is read again at the head of the next chunk,
        # and the next len(PAD) bytes of the file with it, as the padding, so that a chunk is one read() with no
        # copy (joining it with the previous chunk's tail and a zero pad cost more than reading it).
        base = read = self.start
        want = self.chunk_bytes or CHUNK_BYTES
        while True:
            fresh = min(want, max(size - read, 0) + 1)
            self.handle.seek(base)
            buffer = self.handle.read(read - base + fresh + len(PAD))
            limit = min(len(buffer), read - base + fresh)
            fresh = max(limit - (read - base), 0)
            read += fresh
            if len(buffer) < limit + len(PAD):  # the end of the file: no bytes after it to pad with
                buffer = buffer[:limit] + PAD
            offset, frames = _walk(buffer, limit)
            if len(frames):
                chunk, corrupt_at = self._checked(buffer, base, frames)
                if len(chunk.starts):
                    yield chunk
                if corrupt_at is not None:
                    self._lost_framing(corrupt_at)
                    return
            base += offset
            self.end = base
            if not fresh:
                if limit > offset:
                    self.stopped_at = base
                    self.cut_off = (
                        f"last record cut off at byte {base} ({limit - offset} bytes of an unfinished write, the usual "
                        f"state of a crashed or running job); kept the {self.records} complete record(s) before it"
                    )
                return
            want = self.chunk_bytes or CHUNK_BYTES
            if limit - offset >= 12:
                if masked_crc(buffer[offset:offset + 8]) != LENGTH_CRC.unpack_from(buffer, offset + 8)[0]:
                    self._lost_framing(base)
                    return
                # a record larger than a chunk: read all of it at once
                want = max(want, LENGTH.unpack_from(buffer, offset)[0] + 16 - (limit - offset))

    def _lost_framing(self, offset: int) -> None:
        self.stopped_at, self.corrupt = offset, True
        self.problems.append(
            f"corrupt record length at byte {offset} (CRC mismatch); framing is lost there, so the rest of the "
            f"file was not read (kept the {self.records} record(s) before it)"
        )

    def _checked(self, buffer: bytes, base: int, frames: np.ndarray) -> tuple[Chunk, int | None]:
        """The chunk's records whose length and data CRCs hold, and where framing was lost, if it was.

        The walk trusted every length; the first length whose CRC fails ends the file, as in TensorBoard.
        A record whose data fails its CRC is only skipped, unlike TensorBoard, which stops reading there: its
        length passed its own CRC, so the next frame boundary is still trustworthy, and one damaged record (a
        flipped bit on disk) should cost one point, not the rest of the run.
        """
        starts = frames + 12
        lengths = np.ndarray((len(buffer) - 7,), "<u8", buffer, 0, (1,))[starts - 12].astype(np.int64)
        stored = np.ndarray((len(buffer) - 3,), "<u4", buffer, 0, (1,))
        distinct, which = np.unique(lengths, return_inverse=True)
        expected = np.array([masked_crc(LENGTH.pack(int(n))) for n in distinct], np.uint32)[which]
        corrupt_at = None
        framing = np.flatnonzero(stored[starts - 4] != expected)
        if len(framing):
            corrupt_at = base + int(starts[framing[0]]) - 12
            starts, lengths = starts[:framing[0]], lengths[:framing[0]]
        bad = np.flatnonzero(stored[starts + lengths] != masked_crcs(data_crcs(buffer, starts, lengths)))
        self.records += len(starts) - len(bad)
        if len(bad):
            first = base + int(starts[bad[0]]) - 12
            self.problems.append(
                f"record at byte {first} fails its CRC check (corrupt data); skipped it" if len(bad) == 1 else
                f"{len(bad)} records fail their CRC check (corrupt data, first at byte {first}); skipped them"
            )
            keep = np.ones(len(starts), bool)
            keep[bad] = False
            starts, lengths = starts[keep], lengths[keep]
        return Chunk(buffer, base, starts, lengths), corrupt_at


# Frames of one length are followed in bulk, up to this many at a time, once REPEATS in a row had one length:
# scalar logs repeat one record layout for thousands of records (the same tags, steps of the same varint width),
# so most frames are found without a Python step each; logs whose lengths vary (images, histograms) never pay for
# a probe that finds no run.
RUN_PROBE = 4096
REPEATS = 3
# ... and the frame this many strides ahead has that length too (one unpack): a media log's histograms come a few
# of one length at a time (one per layer), and a probe that finds such a short run costs as much as walking a few
# hundred frames one by one (it was half the read of an image/histogram file).
LOOK_AHEAD = 8


def _walk(buffer: bytes, limit: int) -> tuple[int, np.ndarray]:
    """Offsets of the frames lying wholly inside ``buffer[:limit]``, trusting each length (checked afterwards).

    Following lengths is sequential, but a frame of the length of the one before it is usually followed by many
    more: their offsets are predicted as a stride, and the length field at each predicted offset read at once.
    Every prediction up to the first frame of another length is a real frame start (each one's length says
    where the next begins), so the walk goes on from there, one frame at a time until lengths repeat again.
    """
    unpack = LENGTH.unpack_from
    lengths = np.ndarray((max(len(buffer) - 7, 0),), "<u8", buffer, 0, (1,))
    pieces: list[np.ndarray] = []
    frames: list[int] = []
    add = frames.append
    offset, previous, repeats = 0, -1, 0
    while True:  # PAD keeps the 8-byte read in bounds; a header running past limit makes end > limit too
        length = unpack(buffer, offset)[0]
        end = offset + 16 + length
        if end > limit:
            break
        repeats = repeats + 1 if length == previous else 0
        if (
            repeats >= REPEATS and (count := min((limit - offset) // (16 + length), RUN_PROBE)) > LOOK_AHEAD
            and unpack(buffer, offset + LOOK_AHEAD * (16 + length))[0] == length
        ):
            predicted = offset + (16 + length) * np.arange(count, dtype=np.int64)
            same = lengths[predicted] == length
            run = count if same.all() else int(np.argmin(same))
            if frames:
                pieces.append(np.array(frames, np.int64))
                frames = []
                add = frames.append
            pieces.append(predicted[:run])
            offset += run * (16 + length)
            repeats = 0 if run < count else repeats
            continue
        add(offset)
        previous, offset = length, end
    pieces.append(np.array(frames, np.int64))
    return offset, np.concatenate(pieces)


def _crc_tables() -> np.ndarray:
    """Slice-by-4 tables of CRC-32C (Castagnoli, reflected)."""
    table = np.zeros(256, np.uint32)
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table[byte] = crc
    tables = [table]
    for _ in range(3):
        tables.append((tables[-1] >> 8) ^ table[tables[-1] & 0xFF])
    return np.stack(tables)


CRC_TABLES = _crc_tables()


def data_crcs(buffer: bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """CRC-32C of each record's data.

    Scalar records are tiny and many, so a C call per record costs more in call overhead than in hashing: equal
    lengths are hashed together, four bytes a step, with numpy table lookups across all of them. Long records
    (images, graphs) go to the C implementation one by one.
    """
    crcs = np.zeros(len(starts), np.uint32)
    long_records = np.flatnonzero(lengths > VECTOR_CRC_MAX_LENGTH)
    # numpy slices, not bytes slices: google_crc32c reads them in place, where slicing bytes would copy each record
    data = np.frombuffer(buffer, np.uint8)
    crcs[long_records] = [
        google_crc32c.value(data[start:start + length])
        for start, length in zip(starts[long_records].tolist(), lengths[long_records].tolist(), strict=True)
    ]
    short = np.flatnonzero(lengths <= VECTOR_CRC_MAX_LENGTH)
    if not len(short):
        return crcs
    words = np.ndarray((len(buffer) - 3,), "<u4", buffer, 0, (1,))
    t0, t1, t2, t3 = CRC_TABLES
    distinct, which = np.unique(lengths[short], return_inverse=True)
    groups = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[groups], np.arange(len(distinct) + 1))
    for group, length in enumerate(distinct.tolist()):
        rows = short[groups[bounds[group]:bounds[group + 1]]]
        position = starts[rows]
        crc = np.full(len(rows), 0xFFFFFFFF, np.uint32)
        for _ in range(length // 4):
            crc ^= words[position]
            crc = t3[crc & 0xFF] ^ t2[(crc >> 8) & 0xFF] ^ t1[(crc >> 16) & 0xFF] ^ t0[crc >> 24]
            position = position + 4
        for _ in range(length % 4):
            crc = t0[(crc ^ data[position]) & 0xFF] ^ (crc >> 8)
            position = position + 1
        crcs[rows] = crc ^ np.uint32(0xFFFFFFFF)
    return crcs
