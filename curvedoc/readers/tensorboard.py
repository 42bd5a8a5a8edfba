"""TensorBoard event files: every scalar point, fast, from whole or half-written files.

Scalars come as ``simple_value`` (PyTorch ``SummaryWriter``, tensorboardX, TF1) or as rank-0 ``tensor`` values
whose tag's first metadata names the ``scalars`` plugin (TF2, Keras, PyTorch ``new_style``). Records are decoded
a chunk at a time by a vectorised protobuf field walker (numpy reads at byte offsets, no per-record Python), so
images, histograms and graphs are skipped by their length prefix without being parsed. Records the fast path does
not handle (varints over 8 bytes, unusual wire types, malformed bytes) go through the real protobuf classes.

Restarts follow TensorBoard's event accumulator: a ``SessionLog.START`` at step s drops every point logged
before it at a step >= s; a tag whose step goes back to s without such a marker drops its own points at steps
>= s (TensorBoard applies that second rule only to pre-``brain.Event:2`` files; here it applies always, because
otherwise two sessions' points would be spliced into one curve), except that a tag's last stretch too short to
stand for a run (an aborted restart of a few steps, a final ``evaluate()`` a new Trainer logs at step 0) is not
read rather than replacing the run before it. Each drop is reported in a warning.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2

from curvedoc.errors import CurvedocError, describe_os_error
from curvedoc.features import listed
from curvedoc.model import Generation, Run, RunBuilder, blocked_bincount
from curvedoc.readers import Source, limits
from curvedoc.readers.companions import (
    MAX_BYTES,
    keras_model_facts,
    parse_config_text,
    parse_json,
)
from curvedoc.readers.generations import MAX_SAMPLES, is_generations_tag
from curvedoc.readers.records import MIN_RUN_RECORDS, SHORT_LAST_SHARE
from curvedoc.readers.tfrecord import Chunk, FrameWalk

FORMAT = "tensorboard"
SCALARS_PLUGIN = "scalars"
HPARAMS_PLUGIN = "hparams"
# Configs are logged as text (the HF Trainer's args/ and model_config/text_summary): each text tag's first value is
# read for a class count, within these bounds; later values of a tag (generated samples, every N steps) never are.
TEXT_PLUGIN = "text"
# Keras' TensorBoard callback logs the model's JSON under the tag "keras": its output layer gives the class count
KERAS_MODEL_PLUGIN = "graph_keras_model"
CONFIG_PLUGINS = (TEXT_PLUGIN, KERAS_MODEL_PLUGIN)  # the plugins whose string values are read (see _note_text)
MOST_TEXT_TAGS = 64
SESSION_START_INFO_TAG = "_hparams_/session_start_info"

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5
# Event fields
WALL_TIME, STEP, FILE_VERSION, SUMMARY, SESSION_LOG = 1, 2, 3, 5, 7
# Summary.Value fields; the ones in VALUE_ONEOF are its ``value`` oneof
TAG, SIMPLE_VALUE, TENSOR, METADATA = 1, 2, 8, 9
VALUE_ONEOF = (2, 3, 4, 5, 6, 8)
# TensorProto fields and dtypes
DTYPE, TENSOR_CONTENT, FLOAT_VAL, DOUBLE_VAL, HALF_VAL = 1, 4, 5, 6, 13
ELEMENT_FIELDS = (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)
DT_FLOAT, DT_DOUBLE, DT_HALF = 1, 2, 19
EXPECTED_WIRE = {
    0: {WALL_TIME: FIXED64, STEP: VARINT, FILE_VERSION: LENGTH_DELIMITED, SUMMARY: LENGTH_DELIMITED,
        SESSION_LOG: LENGTH_DELIMITED},
    1: {1: LENGTH_DELIMITED},
    2: {TAG: LENGTH_DELIMITED, SIMPLE_VALUE: FIXED32, 3: LENGTH_DELIMITED, 4: LENGTH_DELIMITED,
        5: LENGTH_DELIMITED, 6: LENGTH_DELIMITED, TENSOR: LENGTH_DELIMITED, METADATA: LENGTH_DELIMITED},
}
HASH_PRIME = 0x100000001B3
HASH_SEED = 0x9E3779B97F4A7C15
WORD_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def read(source: Source) -> list[Run]:
    return Follower(source.path, keep=False).read(source)


@dataclass
class _FileState:
    """How far one event file has been read, for a run that is still being written."""

    identity: tuple[int, int]  # (device, inode): a file replaced under the same name starts afresh
    end: int = 0  # offset after its last complete record: where the next read starts
    records: int = 0
    problems: list[str] = field(default_factory=list)  # what was wrong in the part read, kept
    undecodable: int = 0  # records with a valid frame that are no Event proto, over every read of the file
    cut_off: str | None = None  # a last record still being written, as of the latest read
    failure: str | None = None  # why nothing of it could be read yet
    stuck: bool = False  # framing lost: nothing after it can ever be read


class Follower:
    """One run's event files read again and again as they grow, each time only what was appended since the last
    read (from the end of the last complete record): the watch's reader, and, read once, the ordinary one.

    A file that shrank or was replaced, a file that disappeared, a new file that does not sort after the files
    already read, or an earlier file that grew while a later one exists (record order, on which restarts are
    judged, would no longer be file order) make the next read start afresh, so the result is always the one a
    fresh read of the files as they are gives.
    """

    def __init__(self, path: str | Path, keep: bool = True):
        """``keep``: hold the points read, to read on at the next call (False: read once, hold nothing)."""
        self.path = path
        self.keep = keep
        self._start_afresh()

    def _start_afresh(self) -> None:
        self.notes = RunBuilder(self.path, FORMAT)  # what the files say besides their points
        self.groups: dict[str | None, _Folder] = {}
        self.files: dict[Path, _FileState] = {}
        self.order: list[tuple[str | None, Path]] = []

    def read(self, source: Source) -> list[Run]:
        files = list(source.files or ((None, path) for path in sorted(Path(source.path).glob("*tfevents*"))))
        # only a run read again needs to know whether its files are still the ones read before
        on_disk = {path: _stat(path) for _, path in files} if self.keep else {}
        if self.keep and not self._continues(files, on_disk):
            self._start_afresh()
        for split, path in files:
            state = self.files.get(path)
            if state is None:
                state = self.files[path] = _FileState(on_disk.get(path, UNKNOWN)[0])
                self.order.append((split, path))
            if not state.stuck:
                self.groups.setdefault(split, _Folder(split, self.notes)).read_file(path, state)
        return [self._build(source.path)]

    def _continues(self, files: list[tuple[str | None, Path]], on_disk: dict) -> bool:
        if files[:len(self.order)] != self.order:
            return False
        last_of_folder = {split: path for split, path in self.order}
        for split, path in self.order:
            state, (identity, size) = self.files[path], on_disk[path]
            if identity != state.identity or size < state.end:
                return False
            if path != last_of_folder[split] and size > state.end and not state.stuck:
                return False
        return True

    def _build(self, path: Path) -> Run:
        states = [self.files[path] for _, path in self.order]
        if not any(state.records for state in states):
            failures = [(file, state.failure) for (_, file), state in zip(self.order, states) if state.failure]
            if len(failures) == 1:
                raise CurvedocError(*failures[0])
            problems = "; ".join(f"{file.name}: {problem}" for file, problem in failures) or "no event files"
            raise CurvedocError(path, f"nothing readable in its event files ({problems})")
        # a followed run builds each look from a copy of its notes, since building completes the meta; a run read
        # once builds from them directly
        builder = self.notes.without_points() if self.keep else self.notes
        for (_, file), state in zip(self.order, states):
            if state.records:
                builder.add_file(file)
            # one line for the file's undecodable records however many reads found them: a followed run warns as a
            # fresh read of the same file does
            undecodable = (f"{state.undecodable} record(s) are not valid Event protos; skipped them"
                           if state.undecodable else None)
            for problem in [*state.problems, undecodable, state.cut_off] if state.records else ():
                if problem:
                    builder.warn(f"{file}: {problem}")
        for (_, file), state in zip(self.order, states):
            if state.failure and not state.records:
                builder.warn(f"{file}: {state.failure}")
        for folder in self.groups.values():
            folder.finish(builder, self.keep)
        if not builder.has_points:
            builder.warn(f"{path}: no scalar summaries in its event files (only images, histograms, graphs or text)")
        return builder.build()


UNKNOWN = ((0, 0), -1)  # a file gone since it was listed: reading it reports why


def _stat(path: Path) -> tuple[tuple[int, int], int]:
    """A file's (device, inode) and size."""
    try:
        info = os.stat(path)
    except OSError:
        return UNKNOWN
    return (info.st_dev, info.st_ino), info.st_size


def event_file_points(path: str | Path) -> pd.DataFrame:
    """One file's scalar points in file order, before restarts are judged (for tests and inspection)."""
    folder = _Folder(None, RunBuilder(path, FORMAT))
    folder.read_file(Path(path), _FileState(UNKNOWN[0]))
    if not folder.points.count:
        return pd.DataFrame({"tag": [], "step": [], "wall_time": [], "value": []})
    folder.points.sort_by_position()
    _, tag, step, wall_time, value = folder.points.columns()
    return pd.DataFrame({"tag": np.array(folder.tags, dtype=object)[tag], "step": step.astype(np.int64),
                         "wall_time": wall_time, "value": value.astype(np.float64)})


class _Points:
    """A folder's points in columns that grow as chunks are decoded. Each chunk's points are copied in rather than
    kept as parts to join at the end: joining held every point twice, and small parts left the allocator's heap
    (which it seldom gives back) as large as the points themselves. Steps that fit 32 bits and values that are
    32-bit floats (TensorBoard's scalars) are kept so while they are read, 8 bytes a point less; a chunk that holds
    wider ones widens its column."""

    NAMES = ("position", "tag", "step", "wall_time", "value")

    def __init__(self):
        self.count = 0
        self.position = np.zeros(0, np.int32)  # ordinal of the record in the folder's reading order
        self.tag = np.zeros(0, np.int32)  # index into _Folder.tags
        self.step = np.zeros(0, np.int32)
        self.wall_time = np.zeros(0)
        self.value = np.zeros(0, np.float32)

    def append(self, *columns: np.ndarray) -> None:
        end = self.count + len(columns[0])
        for name, added in zip(self.NAMES, columns, strict=True):
            column = getattr(self, name)
            if end > len(column) or not np.can_cast(added.dtype, column.dtype):
                # room for half as many again: the copying stays linear overall, and the room not yet written is
                # never touched, so it costs no resident memory
                grown = np.empty(max(end, len(column) * 3 // 2), np.promote_types(column.dtype, added.dtype))
                grown[:self.count] = column[:self.count]
                setattr(self, name, grown)
                column = grown
            column[self.count:end] = added
        self.count = end

    def columns(self) -> tuple[np.ndarray, ...]:
        return tuple(getattr(self, name)[:self.count] for name in self.NAMES)

    def sort_by_position(self) -> None:
        """Puts the points of records the protobuf fallback decoded (added as it decodes them, ahead of the rest of
        their chunk's) in record order."""
        position = self.position[:self.count]
        if (position[1:] < position[:-1]).any():
            order = np.argsort(position, kind="stable")
            for name in self.NAMES:
                setattr(self, name, getattr(self, name)[:self.count][order])


@dataclass
class _Folder:
    """One folder of event files as TensorBoard sees it (one run; Keras's splits are two): files read in order,
    restarts judged across all of them."""

    split: str | None
    builder: RunBuilder
    tags: list[str] = field(default_factory=list)
    tag_ids: dict[str, int] = field(default_factory=dict)
    plugins: dict[str, str] = field(default_factory=dict)  # plugin of each tag's first metadata
    points: _Points = field(default_factory=_Points)
    session_starts: list[tuple[int, int, Path]] = field(default_factory=list)  # (position, step, file)
    file_starts: list[tuple[int, Path]] = field(default_factory=list)
    position: int = 0
    undecodable: int = 0
    texts_read: set[int] = field(default_factory=set)  # text tags whose first value was looked at

    def read_file(self, path: Path, state: _FileState) -> None:
        """Reads one event file on from where ``state`` says the last read ended, and notes in it how far."""
        self.file_starts.append((self.position, path))
        self.undecodable = 0
        walk = None
        try:
            with open(path, "rb") as handle:
                walk = FrameWalk(handle, start=state.end, records=state.records)
                for chunk in walk:
                    if walk.records > limits.current().max_records:
                        raise limits.refuse(path, f"more than {walk.records:,} records", "max_records")
                    # added once the decoding has returned: the columns' growth (old and new side by side) never
                    # comes on top of its scratch arrays
                    self._add(*self._decode(chunk, path))
        except OSError as exc:
            if walk is None or walk.records == 0:
                state.failure = describe_os_error(exc)
                return
            walk.problems.append(f"{describe_os_error(exc)} while reading; kept the {walk.records} record(s) before it")
        state.end, state.records, state.cut_off = walk.end, walk.records, walk.cut_off
        state.stuck = walk.corrupt
        state.problems.extend(walk.problems)
        state.undecodable += self.undecodable
        if walk.records:
            state.failure = None
        elif walk.empty:
            state.failure = "empty file"
        elif walk.corrupt and walk.stopped_at == 0:
            state.failure = "not a TensorBoard event file (its first bytes are not a valid TFRecord frame)"
        elif walk.stopped_at == 0:
            state.failure = "no complete record: the file ends inside its first record"
        else:
            state.failure = walk.problems[0] if walk.problems else "no readable record"

    # ---- decoding ------------------------------------------------------------------------------------------

    def _decode(self, chunk: Chunk, path: Path) -> tuple[np.ndarray, ...]:
        """The chunk's scalar points (record position, tag id, step, wall time, value), except those of records
        only protobuf could decode: the fallback adds those itself."""
        words = _Words(chunk.data)
        n = len(chunk.starts)
        positions = self.position + np.arange(n, dtype=np.int64)
        self.position += n
        wall = np.zeros(n)
        step = np.zeros(n, np.int64)
        simple = _simple_scalar_records(words, chunk.starts, chunk.lengths)
        wall[simple.record], step[simple.record] = simple.wall_time, simple.step
        tag_index, tag_bytes = _intern(chunk.data, words, simple.tag_start, simple.tag_length)
        tags = self._tag_ids(tag_bytes, path)[tag_index]
        rest = np.ones(n, bool)
        rest[simple.record] = False
        rest = np.flatnonzero(rest)
        parts = [self._decode_general(chunk, words, rest, wall, step, positions, path)] if len(rest) else []
        # after the general walker, which has met the metadata (usually on the tag's first value, a record the
        # fast path leaves to it), the plugin says whether a tensor is a scalar
        scalar = ~simple.tensor | self._scalar_tags()[tags]
        parts.insert(0, (simple.record[scalar], tags[scalar], simple.value[scalar]))
        records, tags, values = (np.concatenate(column) for column in zip(*parts))
        if len(parts) > 1:
            order = np.argsort(records, kind="stable")
            records, tags, values = records[order], tags[order], values[order]
        return positions[records], tags, step[records], wall[records], values

    def _decode_general(self, chunk, words, rows, wall, step, positions, path):
        """Any Event, field by field; records it cannot handle go one by one through protobuf."""
        events = _scan(words, chunk.starts[rows], chunk.starts[rows] + chunk.lengths[rows])
        n = len(rows)
        odd = events.odd | _wrong_wire(events, 0, n)
        pick = events.select(WALL_TIME, FIXED64)
        wall[rows[events.owner[pick]]] = words.f64[events.start[pick]]
        pick = events.select(STEP, VARINT)
        step[rows[events.owner[pick]]] = events.value[pick].view(np.int64)
        for event, _, _ in events.spans(FILE_VERSION):
            if not odd[event]:
                self._note_file_version(float(wall[rows[event]]))
        for event, start, length in events.spans(SESSION_LOG):
            if not odd[event]:
                record = rows[event]
                self._note_session_log(chunk.data[start:start + length], positions[record], step[record], path)

        pick = events.select(SUMMARY, LENGTH_DELIMITED)
        summary_event = events.owner[pick]
        summaries = _scan(words, events.start[pick], events.start[pick] + events.length[pick])
        odd[summary_event[summaries.odd | _wrong_wire(summaries, 1, len(summary_event))]] = True
        pick = summaries.select(1, LENGTH_DELIMITED)
        value_event = summary_event[summaries.owner[pick]]
        values = _scan(words, summaries.start[pick], summaries.start[pick] + summaries.length[pick])
        odd[value_event[values.odd | _wrong_wire(values, 2, len(value_event))]] = True

        keep = ~odd[value_event]
        count = len(value_event)
        tag_start, tag_length = np.zeros(count, np.int64), np.zeros(count, np.int64)
        pick = values.select(TAG, LENGTH_DELIMITED)
        tag_start[values.owner[pick]], tag_length[values.owner[pick]] = values.start[pick], values.length[pick]
        kind = np.zeros(count, np.int64)
        pick = np.isin(values.number, VALUE_ONEOF)
        kind[values.owner[pick]] = values.number[pick]
        payload = np.zeros(count, np.int64)
        payload_length = np.zeros(count, np.int64)
        pick = values.select(SIMPLE_VALUE, FIXED32) | values.select(TENSOR, LENGTH_DELIMITED)
        payload[values.owner[pick]], payload_length[values.owner[pick]] = values.start[pick], values.length[pick]
        tag_of_value = np.full(count, -1, np.int64)
        tag_index, tag_bytes = _intern(chunk.data, words, tag_start[keep], tag_length[keep])
        tag_of_value[keep] = self._tag_ids(tag_bytes, path)[tag_index]

        pick = values.select(METADATA, LENGTH_DELIMITED) & keep[values.owner]
        self._note_metadata(chunk.data, words, tag_of_value[values.owner[pick]], values.start[pick], values.length[pick])

        simple = keep & (kind == SIMPLE_VALUE)
        tensor = keep & (kind == TENSOR) & self._scalar_tags()[tag_of_value]
        for row in np.flatnonzero(keep & (kind == TENSOR) & self._unread_text_tags()[tag_of_value]).tolist():
            self._note_text(int(tag_of_value[row]), chunk.data[payload[row]:payload[row] + payload_length[row]],
                            int(step[rows[value_event[row]]]))
        tensor_rows = np.flatnonzero(tensor)
        tensor_values, decoded = _tensor_scalars(words, payload[tensor_rows], payload_length[tensor_rows])
        for index in np.flatnonzero(~decoded):
            start, length = payload[tensor_rows[index]], payload_length[tensor_rows[index]]
            number = _tensor_scalar(chunk.data[start:start + length])
            if number is not None:
                tensor_values[index], decoded[index] = number, True

        chosen = np.concatenate([np.flatnonzero(simple), tensor_rows[decoded]])
        chosen_values = np.concatenate([words.f32[payload[simple]].astype(np.float64), tensor_values[decoded]])
        # values were scanned field position by field position; put them back in record (file) order
        order = np.lexsort((chosen, value_event[chosen]))
        chosen, chosen_values = chosen[order], chosen_values[order]
        for event in np.flatnonzero(odd):
            record = rows[event]
            start, length = chunk.starts[record], chunk.lengths[record]
            self._decode_with_protobuf(chunk.data[start:start + length], positions[record], path)
        return rows[value_event[chosen]], tag_of_value[chosen], chosen_values

    def _decode_with_protobuf(self, data: bytes, position: int, path: Path) -> None:
        """The slow, general path for records the vectorised walker leaves alone."""
        try:
            event = event_pb2.Event.FromString(data)
        except DecodeError:
            self.undecodable += 1
            return
        if event.HasField("file_version"):
            self._note_file_version(event.wall_time)
        if event.HasField("session_log"):
            self._note_session_log(event.session_log.SerializeToString(), position, event.step, path)
        for value in event.summary.value:
            tag = self._tag_id(value.tag.encode("utf-8", "surrogateescape"), path)
            if value.HasField("metadata"):
                self._note_plugin(tag, value.metadata)
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                number = value.simple_value
            elif kind == "tensor" and self.plugins.get(self.tags[tag]) == SCALARS_PLUGIN:
                number = _tensor_scalar(value.tensor.SerializeToString())
                if number is None:
                    continue
            else:
                if kind == "tensor" and self.plugins.get(self.tags[tag]) in CONFIG_PLUGINS:
                    self._note_text(tag, value.tensor.SerializeToString(), event.step)
                continue
            self._add(np.array([position]), np.array([tag]), np.array([event.step]), np.array([event.wall_time]),
                      np.array([number], np.float64))

    def _add(self, position, tag, step, wall_time, value) -> None:
        if len(position):
            # positions and tag ids fit 32 bits (max_records caps the records far below 2**31): 8 bytes a point less
            narrow = np.int32 if self.position < 1 << 31 and len(self.tags) < 1 << 31 else np.int64
            self.points.append(position.astype(narrow), tag.astype(narrow), _narrowed(step, np.int32), wall_time,
                               _narrowed(value, np.float32))

    def _scalar_tags(self) -> np.ndarray:
        """Per tag id, whether its plugin is "scalars"; one extra False entry answers for id -1 (no tag)."""
        return np.array([self.plugins.get(tag) == SCALARS_PLUGIN for tag in self.tags] + [False])

    def _unread_text_tags(self) -> np.ndarray:
        """Per tag id, whether it is a text tag with a value still to be read (one extra entry for -1): the first
        value of each, and every value of a tag of generated samples until MAX_SAMPLES are kept."""
        unread = [False] * (len(self.tags) + 1)
        more_samples = len(self.builder.generations) < MAX_SAMPLES
        for tag, name in enumerate(self.tags):
            if self.plugins.get(name) in CONFIG_PLUGINS:
                unread[tag] = (more_samples and is_generations_tag(name)) or (
                    tag not in self.texts_read and len(self.texts_read) < MOST_TEXT_TAGS)
        return np.array(unread)

    def _note_text(self, tag: int, tensor: bytes, step: int) -> None:
        """A text tag's value: generated samples are kept as the run's generations; a first value that holds a
        configuration is searched for a class count."""
        if is_generations_tag(self.tags[tag]):
            self._note_samples(tag, tensor, step)
            return
        if tag in self.texts_read or len(self.texts_read) >= MOST_TEXT_TAGS:
            return
        self.texts_read.add(tag)
        if len(tensor) > MAX_BYTES:
            return
        try:
            strings = tensor_pb2.TensorProto.FromString(tensor).string_val
        except DecodeError:
            return
        if not strings:
            return
        text = strings[0].decode("utf-8", "replace")
        if self.plugins.get(self.tags[tag]) == KERAS_MODEL_PLUGIN:
            keras = keras_model_facts(parse_json(text) or {})
            if keras is not None:
                self.builder.add_config(f"TensorBoard Keras model graph ({self.tags[tag]})", keras)
        elif config := parse_config_text(text):
            self.builder.add_config(f"TensorBoard text {self.tags[tag]}", config)

    def _note_samples(self, tag: int, tensor: bytes, step: int) -> None:
        kept = self.builder.generations
        if len(kept) >= MAX_SAMPLES or len(tensor) > MAX_BYTES:
            return
        try:
            strings = tensor_pb2.TensorProto.FromString(tensor).string_val
        except DecodeError:
            return
        source = f"TensorBoard text {self.tags[tag]}"
        kept.extend(Generation(text.decode("utf-8", "replace"), step=step, source=source)
                    for text in strings[:MAX_SAMPLES - len(kept)])

    def _tag_ids(self, raws: list[bytes], path: Path) -> np.ndarray:
        return np.array([self._tag_id(raw, path) for raw in raws], np.int64)

    def _tag_id(self, raw: bytes, path: Path) -> int:
        try:
            tag = raw.decode("utf-8")
        except UnicodeDecodeError:
            tag = raw.decode("utf-8", "replace")
            if tag not in self.tag_ids:
                self.builder.warn(f"{path}: tag {tag!r} is not valid UTF-8; undecodable bytes shown as \ufffd")
        known = self.tag_ids.get(tag)
        if known is None:
            known = self.tag_ids[tag] = len(self.tags)
            self.tags.append(tag)
        return known

    def _note_metadata(self, data: bytes, words: _Words, tags: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
        """Records each tag's plugin from its first metadata; decodes each distinct metadata blob only once."""
        if not len(tags):
            return
        blob_index, blobs = _intern(data, words, starts, lengths)
        parsed: dict[int, summary_pb2.SummaryMetadata | None] = {}

        def metadata(blob: int) -> summary_pb2.SummaryMetadata | None:
            if blob not in parsed:
                try:
                    parsed[blob] = summary_pb2.SummaryMetadata.FromString(blobs[blob])
                except DecodeError:
                    parsed[blob] = None
            return parsed[blob]

        _, first = np.unique(tags, return_index=True)
        for index in first.tolist():
            found = metadata(int(blob_index[index]))
            if found is not None:
                self._note_plugin(int(tags[index]), found)
        hparams_tag = self.tag_ids.get(SESSION_START_INFO_TAG, -1)
        for blob in np.unique(blob_index[tags == hparams_tag]).tolist():
            found = metadata(blob)
            if found is not None:
                self._note_plugin(hparams_tag, found)

    def _note_plugin(self, tag: int, metadata: summary_pb2.SummaryMetadata) -> None:
        """TensorBoard keeps the first metadata seen per tag; a resumed session's hparams update the earlier ones."""
        name = self.tags[tag]
        self.plugins.setdefault(name, metadata.plugin_data.plugin_name)
        if name == SESSION_START_INFO_TAG and metadata.plugin_data.plugin_name == HPARAMS_PLUGIN:
            self.builder.meta.hparams.update(_hparams(metadata.plugin_data.content))

    def _note_file_version(self, wall_time: float) -> None:
        meta = self.builder.meta
        if wall_time > 0 and (meta.start_time is None or wall_time < meta.start_time):
            meta.start_time = wall_time

    def _note_session_log(self, data: bytes, position: int, step: int, path: Path) -> None:
        try:
            status = event_pb2.SessionLog.FromString(data).status
        except DecodeError:
            return
        if status == event_pb2.SessionLog.START:
            self.session_starts.append((int(position), int(step), path))

    # ---- restarts and hand-over ----------------------------------------------------------------------------

    def finish(self, builder: RunBuilder, keep: bool = True) -> None:
        """Hands the points read so far to ``builder``, restarts judged. ``keep``: the folder can read on
        afterwards (a followed run); else its points are let go as they are handed over, so a large file is not
        held twice."""
        points = self.points
        if not points.count:
            return
        if not keep:
            self.points = _Points()
        points.sort_by_position()
        # unless kept, the points are held by these columns alone from here: each is let go once used
        columns = dict(zip(_Points.NAMES, points.columns(), strict=True))
        del points
        alive = self._alive(columns, builder)
        steps_back: dict[tuple[Path, int], list] = {}
        short_last: dict[tuple[Path, int], list] = {}
        taken, curves = self._curves(columns, alive, steps_back, short_last)
        del alive
        self._hand_over(builder, columns, taken, curves)
        for (path, step), drops in steps_back.items():
            tags, dropped = _dropped(drops)
            builder.warn(
                f"{path}: steps went back to {step} without a restart marker in {tags}; dropped {len(dropped)} "
                f"earlier point(s) at steps {min(dropped)}-{max(dropped)}, as TensorBoard does for out-of-order steps"
            )
        for (path, step), drops in short_last.items():
            tags, dropped = _dropped(drops)
            builder.warn(
                f"{path}: steps went back to {step} in {tags} for a last {len(dropped)} point(s) only (a session that "
                "stopped as it began, or an evaluation logged at step 0); kept the run they would have replaced, not "
                "read those"
            )

    def _alive(self, columns: dict[str, np.ndarray], builder: RunBuilder) -> np.ndarray | None:
        """Which points a restart (SessionLog.START) leaves; None when it leaves all of them."""
        alive = None
        for position, step, path in self.session_starts:
            before = np.searchsorted(columns["position"], position)
            steps = columns["step"][:before]
            hit = steps >= step if alive is None else alive[:before] & (steps >= step)
            if hit.any():
                if alive is None:
                    alive = np.ones(len(columns["step"]), bool)
                alive[:before] &= ~hit
                dropped = steps[hit]
                builder.warn(
                    f"{path}: training restarted at step {step} (SessionLog.START); dropped {len(dropped)} point(s) "
                    f"logged before it at steps {dropped.min()}-{dropped.max()}, as TensorBoard does"
                )
        return alive

    def _curves(self, columns: dict[str, np.ndarray], alive: np.ndarray | None,
                steps_back: dict, short_last: dict) -> tuple[np.ndarray, list[tuple[str, int]]]:
        """The rows of every tag's curve, one curve after another (record order within each), and each curve's
        label and length: the rows that restarts and steps going back leave."""
        rows_by_tag, bounds = _by_tag(columns["tag"], len(self.tags))
        curves = []
        kept = 0
        for tag, name in enumerate(self.tags):
            rows = rows_by_tag[bounds[tag]:bounds[tag + 1]]
            if alive is not None:
                rows = rows[alive[rows]]
            if len(rows):
                rows = self._drop_steps_going_back(rows, columns, tag, steps_back, short_last)
                # moved up in place over the rows dropped before them: all curves' rows end up in one array
                # without a second copy of them
                rows_by_tag[kept:kept + len(rows)] = rows
                kept += len(rows)
                curves.append((f"{self.split}/{name}" if self.split else name, len(rows)))
        return rows_by_tag[:kept], curves

    def _hand_over(self, builder: RunBuilder, columns: dict[str, np.ndarray], taken: np.ndarray,
                   curves: list[tuple[str, int]]) -> None:
        """Each curve's points to ``builder``, gathered a column at a time for all curves at once. Each of
        ``columns`` is let go once gathered, and those not handed over before any is: when they are the only hold
        on the folder's points (a run read once), the points are never held twice."""
        del columns["position"], columns["tag"]
        # the widest source first: the peak is at the last gather, beside all the columns gathered before it
        gathered = {name: _gathered(columns.pop(name), taken, HANDED_OVER[name])
                    for name in sorted(HANDED_OVER, key=lambda name: -columns[name].itemsize)}
        bounds = np.cumsum([0, *(length for _, length in curves)]).tolist()
        for (label, _), start, stop in zip(curves, bounds[:-1], bounds[1:], strict=True):
            builder.add(label, gathered["step"][start:stop], gathered["value"][start:stop],
                        gathered["wall_time"][start:stop], self.split)

    def _drop_steps_going_back(self, rows: np.ndarray, columns: dict[str, np.ndarray], tag: int,
                               report: dict, short_last: dict) -> np.ndarray:
        """TensorBoard's out-of-order rule for one tag: a step going back to s drops the tag's earlier points >= s.

        Except for a tag's last stretch that is too short to stand for a run (fewer than ``MIN_RUN_RECORDS``
        points, or under ``SHORT_LAST_SHARE`` of the points it would drop): a session that stopped as it began, or
        a final ``evaluate()`` a new Trainer logs at step 0, is not read, and the run it would replace is kept.

        What is kept is always a stack of non-decreasing steps, so each step back just pops the stack's top:
        linear overall, even for a log whose step restarts every epoch (the batch index logged as the step).
        """
        steps = columns["step"][rows]
        backs = np.flatnonzero(steps[1:] < steps[:-1]) + 1
        if not len(backs):
            return rows
        kept = list(range(backs[0]))
        kept_steps = steps[:backs[0]].tolist()
        for first, end in zip(backs.tolist(), [*backs[1:].tolist(), len(steps)]):
            step = int(steps[first])
            cut = bisect.bisect_left(kept_steps, step)
            path = self._file_of(columns["position"][rows[first]])
            replaced, stretch = len(kept_steps) - cut, end - first
            if end == len(steps) and (stretch < MIN_RUN_RECORDS or stretch < SHORT_LAST_SHARE * replaced):
                short_last.setdefault((path, step), []).append((self.tags[tag], steps[first:end].tolist()))
                break
            report.setdefault((path, step), []).append((self.tags[tag], kept_steps[cut:]))
            del kept[cut:], kept_steps[cut:]
            kept.extend(range(first, end))
            kept_steps.extend(steps[first:end].tolist())
        return rows[np.asarray(kept, dtype=np.int64)]

    def _file_of(self, position: int) -> Path:
        index = bisect.bisect_right(self.file_starts, position, key=lambda start: start[0]) - 1
        return self.file_starts[index][1]


def _dropped(drops: list[tuple[str, list]]) -> tuple[str, list]:
    """The tags a drop hit, as a warning names them, and every step it dropped."""
    return listed(sorted({tag for tag, _ in drops}), 3), [step for _, steps in drops for step in steps]


def _narrowed(values: np.ndarray, narrow: type) -> np.ndarray:
    """``values`` as ``narrow`` when each of them comes back from it bit for bit (a NaN's payload too), else as
    they are."""
    narrowed = values.astype(narrow)
    bits = np.dtype(f"u{values.itemsize}")
    return narrowed if (narrowed.astype(values.dtype).view(bits) == values.view(bits)).all() else values


BY_TAG_BLOCK = 1 << 18
HANDED_OVER = {"step": np.int64, "value": np.float64, "wall_time": np.float64}  # the types the builder takes
GATHER_BLOCK = 1 << 20


def _gathered(column: np.ndarray, rows: np.ndarray, dtype: type) -> np.ndarray:
    """``column[rows]`` as ``dtype``, a block of rows at a time when that widens it: a narrow copy of the whole
    column is never made beside the wide one."""
    if column.dtype == dtype:
        return column[rows]
    gathered = np.empty(len(rows), dtype)
    for start in range(0, len(rows), GATHER_BLOCK):
        gathered[start:start + GATHER_BLOCK] = column[rows[start:start + GATHER_BLOCK]]
    return gathered


def _by_tag(tags: np.ndarray, count: int) -> tuple[np.ndarray, list[int]]:
    """The rows of each tag id in turn (in their order within a tag), and where each tag's rows start.

    A counting sort a block of rows at a time: an argsort of all rows at once gives 64-bit indices, 8 bytes a point
    beside the points; these are 32-bit where the rows allow."""
    totals = blocked_bincount(tags, count, BY_TAG_BLOCK)
    bounds = np.concatenate([[0], np.cumsum(totals)])
    rows = np.empty(len(tags), np.int32 if len(tags) < 1 << 31 else np.int64)
    placed = bounds[:-1].copy()  # per tag: how many of its rows are placed, as a position in ``rows``
    for start in range(0, len(tags), BY_TAG_BLOCK):
        block = tags[start:start + BY_TAG_BLOCK]
        # a 16-bit key gets numpy's radix sort: linear in the rows
        order = np.argsort(block.astype(np.uint16) if count < 1 << 16 else block, kind="stable")
        counts = np.bincount(block, minlength=count)
        # each tag's rows in the block, consecutive in ``order``, go after that tag's rows placed so far
        rows[np.arange(len(block)) + np.repeat(placed - (np.cumsum(counts) - counts), counts)] = order + start
        placed += counts
    return rows, bounds.tolist()


@dataclass
class _SimpleScalars:
    record: np.ndarray
    wall_time: np.ndarray
    step: np.ndarray
    tag_start: np.ndarray
    tag_length: np.ndarray
    value: np.ndarray
    tensor: np.ndarray  # a scalar only if the tag's plugin is "scalars"


def _simple_scalar_records(words: _Words, starts: np.ndarray, lengths: np.ndarray) -> _SimpleScalars:
    """Finds the records laid out exactly as writers lay out one scalar without metadata, and reads them with a
    handful of array operations: ``09 wall_time[8] (10 step-varint)? 2a L1 0a L2 0a L3 tag[L3]`` then
    ``15 value[4]`` (simple_value) or a one-element DT_FLOAT tensor as TF2 writes it (one-byte lengths).
    Everything else (metadata, several values, other dtypes, other events) is left to the general walker."""
    data = words.u8
    position = starts + 9
    fits = data[starts] == 0x09
    has_step = data[position] == 0x10
    step, step_length = _varints(words, position + 1)
    fits &= ~has_step | (step_length > 0)
    position = np.where(has_step, position + 1 + step_length, position)
    summary_length = data[position + 1].astype(np.int64)
    value_length = data[position + 3].astype(np.int64)
    tag_length = data[position + 5].astype(np.int64)
    tag_start = position + 6
    value_at = tag_start + tag_length
    simple = (data[value_at] == 0x15) & (value_length == tag_length + 7)
    # TF2's rank-0 DT_FLOAT tensor: 42 T 08 01 (12 00)? (22 | 2a) 04 value[4]  (tensor_content or float_val)
    tensor_length = data[value_at + 1].astype(np.int64)
    with_shape = (data[value_at + 4] == 0x12) & (data[value_at + 5] == 0x00)
    field_at = value_at + 4 + 2 * with_shape
    tensor = (
        (data[value_at] == 0x42) & (data[value_at + 2] == 0x08) & (data[value_at + 3] == 0x01)
        & ((data[field_at] == 0x22) | (data[field_at] == 0x2A)) & (data[field_at + 1] == 0x04)
        & (tensor_length == 8 + 2 * with_shape) & (value_length == tag_length + 4 + tensor_length)
    )
    fits &= (
        (data[position] == 0x2A) & (data[position + 2] == 0x0A) & (data[position + 4] == 0x0A)
        & (simple | tensor) & (tag_length < 0x80) & (summary_length == value_length + 2)
        & (position + 2 + summary_length == starts + lengths)
    )
    record = np.flatnonzero(fits)
    value_at = np.where(simple, value_at + 1, field_at + 2)[record]
    return _SimpleScalars(
        record, words.f64[starts[record] + 1], np.where(has_step[record], step[record].view(np.int64), 0),
        tag_start[record], tag_length[record], words.f32[value_at].astype(np.float64), tensor[record],
    )


def _hparams(content: bytes) -> dict:
    from tensorboard.plugins.hparams import plugin_data_pb2

    try:
        info = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    except DecodeError:
        return {}
    found = {}
    # A protobuf map iterates in an order that differs between processes; reports must not.
    for key, value in sorted(info.hparams.items()):
        kind = value.WhichOneof("kind")
        if kind == "number_value":  # hparams store every number as a double; 32 was an int when logged
            found[key] = int(value.number_value) if value.number_value.is_integer() else value.number_value
        elif kind in {"string_value", "bool_value"}:
            found[key] = getattr(value, kind)
    return found


def _tensor_scalar(data: bytes) -> float | None:
    """A one-element tensor's value through TensorBoard's own conversion (other dtypes, odd encodings)."""
    from tensorboard.util import tensor_util

    try:
        array = tensor_util.make_ndarray(tensor_pb2.TensorProto.FromString(data))
        return float(array.item()) if array.size == 1 else None
    except (DecodeError, ValueError, TypeError, KeyError):
        return None


# ---- vectorised protobuf reading -----------------------------------------------------------------------------


class _Words:
    """Little-endian reads at any byte offset of a chunk, for many offsets at once (unaligned strided views)."""

    def __init__(self, data: bytes):
        self.u8 = np.frombuffer(data, np.uint8)
        self.u64 = np.ndarray((len(data) - 7,), "<u8", data, 0, (1,))
        self.f64 = np.ndarray((len(data) - 7,), "<f8", data, 0, (1,))
        self.f32 = np.ndarray((len(data) - 3,), "<f4", data, 0, (1,))
        self.f16 = np.ndarray((len(data) - 1,), "<f2", data, 0, (1,))


def _varints(words: _Words, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The varints at ``offsets`` and their byte lengths; length 0 marks one longer than 8 bytes."""
    word = words.u64[offsets]
    single = (word & np.uint64(0x80)) == 0
    if single.all():  # keys and lengths nearly always fit one byte
        return word & np.uint64(0x7F), np.ones(len(word), np.int64)
    stops = ~word & np.uint64(0x8080808080808080)
    last = stops & (~stops + np.uint64(1))
    mask = (last << np.uint64(1)) - np.uint64(1)
    kept = word & mask
    value = kept & np.uint64(0x7F)
    for index in range(1, 8):
        value |= (kept >> np.uint64(index)) & np.uint64(0x7F << (7 * index))
    length = (np.bitwise_count(mask) >> 3).astype(np.int64)
    length[stops == 0] = 0
    return value, length


@dataclass
class _Fields:
    """Every field of a batch of messages, in wire order per message."""

    owner: np.ndarray  # which message
    number: np.ndarray
    wire: np.ndarray
    value: np.ndarray  # varint value (uint64), or payload length for length-delimited fields
    start: np.ndarray  # payload offset
    odd: np.ndarray  # per message: malformed or beyond the fast path

    @property
    def length(self) -> np.ndarray:
        return self.value.astype(np.int64)

    def select(self, number: int, wire: int) -> np.ndarray:
        return (self.number == number) & (self.wire == wire)

    def spans(self, number: int):
        pick = self.select(number, LENGTH_DELIMITED)
        return zip(self.owner[pick].tolist(), self.start[pick].tolist(), self.length[pick].tolist())


def _scan(words: _Words, starts: np.ndarray, ends: np.ndarray) -> _Fields:
    """Walks the fields of many messages side by side: one numpy pass per field position, not per message."""
    odd = np.zeros(len(starts), bool)
    owner = np.flatnonzero(starts < ends)
    position, end = starts[owner], ends[owner]
    parts = []
    while len(owner):
        key, key_length = _varints(words, position)
        wire = (key & np.uint64(7)).astype(np.int64)
        number = np.minimum(key >> np.uint64(3), np.uint64(1 << 30)).astype(np.int64)
        after = position + key_length
        value, value_length = _varints(words, after)
        room = (end - after).astype(np.uint64)
        delimited = wire == LENGTH_DELIMITED
        start = np.where(delimited, after + value_length, after)
        size = np.select(
            [wire == VARINT, wire == FIXED64, delimited, wire == FIXED32],
            [value_length, 8, value_length + np.minimum(value, room).astype(np.int64), 4],
            -1,
        )
        following = after + size
        bad = (
            (key_length == 0) | (number == 0) | (size < 0) | (following > end)
            | (((wire == VARINT) | delimited) & (value_length == 0)) | (delimited & (value > room))
        )
        odd[owner[bad]] = True
        good = ~bad
        parts.append((owner[good], number[good], wire[good], value[good], start[good]))
        more = good & (following < end)
        owner, position, end = owner[more], following[more], end[more]
    if not parts:
        empty = np.zeros(0, np.int64)
        return _Fields(empty, empty, empty, np.zeros(0, np.uint64), empty, odd)
    columns = [np.concatenate(column) for column in zip(*parts)]
    return _Fields(*columns, odd)


def _wrong_wire(fields: _Fields, level: int, count: int) -> np.ndarray:
    """Messages where a field the fast path reads has an unexpected wire type: protobuf decides those."""
    odd = np.zeros(count, bool)
    for number, wire in EXPECTED_WIRE[level].items():
        odd[fields.owner[(fields.number == number) & (fields.wire != wire)]] = True
    return odd


def _tensor_scalars(words: _Words, starts: np.ndarray, lengths: np.ndarray):
    """Values of one-element float/double/half tensors; ``decoded`` is False where protobuf must decide."""
    count = len(starts)
    values = np.full(count, np.nan)
    fields = _scan(words, starts, starts + lengths)
    dtype = np.zeros(count, np.int64)
    pick = fields.select(DTYPE, VARINT)
    dtype[fields.owner[pick]] = fields.value[pick].astype(np.int64)
    elements = np.bincount(fields.owner[np.isin(fields.number, ELEMENT_FIELDS)], minlength=count)
    decoded = np.zeros(count, bool)
    owner_dtype = dtype[fields.owner]
    length = fields.value.astype(np.int64)
    readers = (
        (DT_FLOAT, TENSOR_CONTENT, LENGTH_DELIMITED, 4, words.f32),
        (DT_FLOAT, FLOAT_VAL, LENGTH_DELIMITED, 4, words.f32),
        (DT_FLOAT, FLOAT_VAL, FIXED32, 4, words.f32),
        (DT_DOUBLE, TENSOR_CONTENT, LENGTH_DELIMITED, 8, words.f64),
        (DT_DOUBLE, DOUBLE_VAL, LENGTH_DELIMITED, 8, words.f64),
        (DT_DOUBLE, DOUBLE_VAL, FIXED64, 8, words.f64),
        (DT_HALF, TENSOR_CONTENT, LENGTH_DELIMITED, 2, words.f16),
    )
    for dtype_code, number, wire, size, view in readers:
        pick = (owner_dtype == dtype_code) & fields.select(number, wire)
        if wire == LENGTH_DELIMITED:
            pick &= length == size
        values[fields.owner[pick]] = view[fields.start[pick]]
        decoded[fields.owner[pick]] = True
    # half_val holds each half's 16 bits in an int32 varint, packed or not
    pick = (owner_dtype == DT_HALF) & fields.select(HALF_VAL, VARINT)
    values[fields.owner[pick]] = _halves(fields.value[pick])
    decoded[fields.owner[pick]] = True
    pick = np.flatnonzero((owner_dtype == DT_HALF) & fields.select(HALF_VAL, LENGTH_DELIMITED))
    if len(pick):
        inner, inner_length = _varints(words, fields.start[pick])
        whole = inner_length == length[pick]
        values[fields.owner[pick[whole]]] = _halves(inner[whole])
        decoded[fields.owner[pick[whole]]] = True
    decoded &= (elements == 1) & ~fields.odd
    values[~decoded] = np.nan
    return values, decoded


def _halves(bits: np.ndarray) -> np.ndarray:
    return (bits & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)


def _intern(data: bytes, words: _Words, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """Byte strings at (start, length) as indices into a list of the distinct ones, hashing 8 bytes at a time."""
    if not len(starts):
        return np.zeros(0, np.int64), []
    hashes = lengths.astype(np.uint64) * np.uint64(HASH_SEED)
    for rows, word in _span_words(words, starts, lengths):
        mixed = (hashes[rows] ^ word) * np.uint64(HASH_PRIME)
        hashes[rows] = mixed ^ (mixed >> np.uint64(29))
    # hash-table factorisation numbers the distinct strings in order of first appearance, so tags keep the order
    # the run logged them in
    index = pd.factorize(hashes)[0]
    seen = np.maximum.accumulate(index)
    first = np.flatnonzero(np.concatenate([[True], seen[1:] > seen[:-1]]))
    representative = first[index]
    same = lengths == lengths[representative]
    for (rows, word), (_, expected) in zip(
        _span_words(words, starts, lengths), _span_words(words, starts[representative], lengths)
    ):
        same[rows] &= word == expected
    if not same.all():  # a hash collision: exact, slower interning
        distinct: dict[bytes, int] = {}
        index = np.array([distinct.setdefault(data[s:s + n], len(distinct)) for s, n in zip(starts, lengths)])
        return index, list(distinct)
    return index, [data[s:s + n] for s, n in zip(starts[first].tolist(), lengths[first].tolist())]


def _span_words(words: _Words, starts: np.ndarray, lengths: np.ndarray):
    """For k = 0, 1, ...: the spans still longer than 8k bytes and their k-th 8-byte word, bytes past the end zeroed."""
    word_counts = (lengths + 7) >> 3
    most = int(word_counts.max())
    # short strings (tags): one mask per word; long ones (metadata): spans sorted longest first, so each word's
    # rows are a prefix and the work follows the bytes, not spans x longest span
    order = np.argsort(-word_counts, kind="stable") if most > 4 else None
    for k in range(most):
        if order is not None:
            rows = order[: int(np.count_nonzero(word_counts > k))]
        else:
            rows = slice(None) if k == 0 and word_counts.min() > 0 else np.flatnonzero(word_counts > k)
        remaining = np.minimum(lengths[rows] - 8 * k, 8)
        yield rows, words.u64[starts[rows] + 8 * k] & WORD_MASKS[remaining]
