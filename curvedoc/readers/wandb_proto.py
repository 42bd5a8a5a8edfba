"""The few protobuf messages of W&B's ``.wandb`` log that curvedoc needs, decoded from the wire format.

wandb is not a runtime dependency, so its generated ``wandb_internal_pb2`` is not available. Field numbers come
from wandb 0.31's ``wandb/proto/wandb_internal.proto`` (read from the generated descriptors); protobuf keeps
field numbers stable across versions, and fields we do not know are skipped.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

# Record
RECORD_HISTORY = 2
RECORD_CONFIG = 5
RECORD_RUN = 17
# HistoryRecord
HISTORY_ITEM = 1
HISTORY_STEP = 2  # HistoryStep { int64 num = 1 }
# HistoryItem (ConfigItem shares key, nested_key and value_json)
ITEM_KEY = 1
ITEM_NESTED_KEY = 2
ITEM_BOOLEAN = 4
ITEM_INTEGER = 5  # sint64
ITEM_NUMBER = 6  # double
ITEM_JSON = 8
ITEM_VALUE_JSON = 16
# ConfigRecord
CONFIG_UPDATE = 1
CONFIG_REMOVE = 2
# RunRecord
RUN_CONFIG = 4
RUN_DISPLAY_NAME = 8
RUN_START_TIME = 17  # google.protobuf.Timestamp { int64 seconds = 1; int32 nanos = 2 }

WIRE_VARINT, WIRE_FIXED64, WIRE_BYTES, WIRE_FIXED32 = 0, 1, 2, 5
DOUBLE = struct.Struct("<d")


class DecodeError(ValueError):
    """Bytes that are not a well-formed protobuf message."""


@dataclass
class RunInfo:
    display_name: str = ""
    start_time: float | None = None
    config: dict[str, Any] = field(default_factory=dict)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    try:
        byte = buf[pos]
        if byte < 0x80:
            return byte, pos + 1
        result, shift = byte & 0x7F, 7
        while True:
            pos += 1
            byte = buf[pos]
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos + 1
            shift += 7
            if shift > 63:
                raise DecodeError("varint longer than 10 bytes")
    except IndexError:
        raise DecodeError("message ends inside a varint") from None


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varint and fixed fields, bytes for length-delimited ones."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        value, pos = _skip(buf, pos, key & 7)
        if pos > end:
            raise DecodeError("field runs past the end of its message")
        yield key >> 3, value


def _skip(buf: bytes, pos: int, wire: int) -> tuple[int | bytes, int]:
    """The value of a field whose tag ended at ``pos``, and where the next field starts."""
    if wire == WIRE_BYTES:
        length, pos = _varint(buf, pos)
        return buf[pos:pos + length], pos + length
    if wire == WIRE_VARINT:
        return _varint(buf, pos)
    if wire == WIRE_FIXED64:
        return int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
    if wire == WIRE_FIXED32:
        return int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
    raise DecodeError(f"unsupported wire type {wire}")  # groups: no W&B message uses them


def history_row(history: bytes) -> dict[str, Any]:
    """One ``HistoryRecord`` as ``{key: value}``; ``_step`` falls back to the record's own step number.

    History is nearly all of a long run's log. wandb writes a scalar item as one key and one value_json, each
    shorter than 128 bytes; those are read in place, anything else goes through the general decoder.
    """
    key_name, parse_json = _key_name, parse_json_value  # local names: this loop runs once per logged value
    row: dict[str, Any] = {}
    step = None
    pos, end = 0, len(history)
    while pos < end:
        if history[pos] == ITEM_TAG and pos + 4 < end:
            item_length = history[pos + 1]
            item_end = pos + 2 + item_length
            key_end = pos + 4 + history[pos + 3]
            # an item under 128 bytes has one-byte lengths throughout; the sum check rules out anything else
            if (
                item_length < 0x80 and item_end <= end and history[pos + 2] in KEY_TAGS
                and history[key_end] == VALUE_JSON_TAG_0 and history[key_end + 1] == VALUE_JSON_TAG_1
                and key_end + 3 + history[key_end + 2] == item_end
            ):
                key = key_name(history[pos + 4:key_end])
                value = parse_json(history[key_end + 3:item_end])
                pos = item_end
            else:
                length, start = _varint(history, pos + 1)
                pos = start + length
                key, value = _item(history[start:pos])
            if key and not key.startswith("_wandb"):  # W&B's own bookkeeping
                row[key] = value
            continue
        key_varint, pos = _varint(history, pos)
        number, wire = key_varint >> 3, key_varint & 7
        value, pos = _skip(history, pos, wire)
        if number == HISTORY_STEP and wire == WIRE_BYTES:
            step = dict(fields(value)).get(1)
    if pos != end:
        raise DecodeError("history record runs past its end")
    if "_step" not in row and step is not None:
        row["_step"] = step
    return row


ITEM_TAG = HISTORY_ITEM << 3 | WIRE_BYTES
KEY_TAGS = (ITEM_KEY << 3 | WIRE_BYTES, ITEM_NESTED_KEY << 3 | WIRE_BYTES)
# field 16 needs a two-byte tag varint
VALUE_JSON_TAG_0, VALUE_JSON_TAG_1 = (ITEM_VALUE_JSON << 3 | WIRE_BYTES) & 0x7F | 0x80, ITEM_VALUE_JSON >> 4


@lru_cache(maxsize=4096)  # the same few keys come back in every row
def _key_name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _item(item: bytes) -> tuple[str, Any]:
    """A HistoryItem: its key (nested keys joined with "/") and decoded value."""
    key = ""
    nested: list[str] = []
    value: Any = None
    for number, raw in fields(item):
        if number == ITEM_VALUE_JSON or number == ITEM_JSON:
            value = parse_json_value(raw)
        elif number == ITEM_NESTED_KEY:
            nested.append(_key_name(raw))
        elif number == ITEM_KEY:
            key = _key_name(raw)
        elif number == ITEM_NUMBER:
            value = DOUBLE.unpack(raw.to_bytes(8, "little"))[0]
        elif number == ITEM_INTEGER:
            value = (raw >> 1) ^ -(raw & 1)  # zigzag-encoded sint64
        elif number == ITEM_BOOLEAN:
            value = bool(raw)
    return key or "/".join(nested), value


def parse_json_value(raw: bytes) -> Any:
    """A ``value_json`` string; the float fast path covers plain numbers and the NaN/Infinity tokens."""
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        return json.loads(raw)
    except ValueError:  # includes JSONDecodeError and bad UTF-8
        return None


def run_info(run: bytes, info: RunInfo) -> None:
    for number, value in fields(run):
        if number == RUN_DISPLAY_NAME:
            info.display_name = value.decode("utf-8", "replace")
        elif number == RUN_CONFIG:
            apply_config(value, info.config)
        elif number == RUN_START_TIME:
            timestamp = dict(fields(value))
            seconds = _signed(timestamp.get(1, 0)) + _signed(timestamp.get(2, 0)) / 1e9
            info.start_time = seconds if math.isfinite(seconds) and seconds > 0 else None


def apply_config(config: bytes, into: dict[str, Any]) -> None:
    """Applies a ``ConfigRecord``'s updates and removals, in order, to ``into``."""
    for number, value in fields(config):
        if number not in (CONFIG_UPDATE, CONFIG_REMOVE):
            continue
        key = ""
        nested: list[str] = []
        raw = None
        for item_field, item_value in fields(value):
            if item_field == ITEM_KEY:
                key = item_value.decode("utf-8", "replace")
            elif item_field == ITEM_NESTED_KEY:
                nested.append(item_value.decode("utf-8", "replace"))
            elif item_field == ITEM_VALUE_JSON:
                raw = item_value
        path = [key] if key else nested
        if not path:
            continue
        parent = into
        for part in path[:-1]:
            if not isinstance(parent.get(part), dict):
                parent[part] = {}
            parent = parent[part]
        if number == CONFIG_REMOVE:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = _json_or_none(raw)


def _json_or_none(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _signed(value: int) -> int:
    """A varint that holds a negative int64 arrives as its two's complement."""
    return value - (1 << 64) if value >= 1 << 63 else value
