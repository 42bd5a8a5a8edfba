"""Reading a log file's text: UTF-8 with or without a BOM, UTF-16/32 (by BOM or by where the NUL bytes fall), else
Latin-1 with a warning; within the read limits (curvedoc.readers.limits)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import numpy as np

from curvedoc.errors import CurvedocError, describe_os_error
from curvedoc.readers import limits


def read_json(path: Path) -> tuple[object, str | None]:
    """The JSON document of a file, and the decoding problem to warn of (or None); a document that is not JSON is
    an error naming the line, within the read limits (nesting depth too)."""
    text, decoding_problem = read_text(path)
    limits.check_json_depth(text, path)
    try:
        return json.loads(text), decoding_problem
    except ValueError as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise CurvedocError(path, f"not valid JSON{where} (cut off or corrupted?)") from None


def read_bytes(path: Path) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CurvedocError(path, describe_os_error(exc)) from None
    if not data.strip():
        raise CurvedocError(path, "empty file")
    limits.check_lines(data, path)
    return data


def encoding_of(data: bytes, path: Path) -> tuple[str, str | None]:
    """UTF-8 (a BOM is dropped), UTF-16/UTF-32 when a BOM says so (what Windows PowerShell 5 writes by default)
    or, without one, when the NUL bytes fall where ASCII text in that encoding puts them, else Latin-1 (it maps
    every byte, so nothing is lost) with a warning saying so."""
    if wide := wide_encoding(data):
        return wide, None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "latin-1", f"{path}: not UTF-8 (byte {exc.start}); read as Latin-1"
    return "utf-8-sig", None


def wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 when a BOM says so or, without one, when the NUL bytes fall where ASCII text in that
    encoding puts them; None for text of one-byte line ends."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return wide_encoding_by_nul_bytes(data)


# ASCII text in each wide encoding has its NUL bytes at these positions of every code unit
NUL_PATTERNS = (("utf-32-le", 4, (1, 2, 3)), ("utf-32-be", 4, (0, 1, 2)), ("utf-16-le", 2, (1,)),
                ("utf-16-be", 2, (0,)))


def wide_encoding_by_nul_bytes(data: bytes) -> str | None:
    """The UTF-16/32 byte order of BOM-less text whose sample is mostly ASCII: the code units' NUL bytes all
    sit at the same positions (nearly every unit for ASCII logs), and never the others."""
    head = data[:4096]
    sample = np.frombuffer(head[:len(head) - len(head) % 4], np.uint8)
    if len(sample) < 4 or not (sample == 0).any():
        return None
    for encoding, unit, nul_positions in NUL_PATTERNS:
        units = sample.reshape(-1, unit)
        zero = units == 0
        others = [position for position in range(unit) if position not in nul_positions]
        if zero[:, list(nul_positions)].all(axis=1).mean() >= 0.9 and not zero[:, others].any():
            return encoding
    return None


def read_text(path: Path) -> tuple[str, str | None]:
    """A log file's text, and a warning when it was not UTF-8."""
    data = read_bytes(path)
    encoding, problem = encoding_of(data, path)
    return data.decode(encoding, errors="replace"), problem  # a UTF-16 file cut mid-character
