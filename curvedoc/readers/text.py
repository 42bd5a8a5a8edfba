"""Reading a log file's text: UTF-8 with or without a BOM, UTF-16 when its BOM says so, else Latin-1 with a warning."""

from __future__ import annotations

import codecs
from pathlib import Path

from curvedoc.errors import CurvedocError, describe_os_error


def read_bytes(path: Path) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CurvedocError(path, describe_os_error(exc)) from None
    if not data.strip():
        raise CurvedocError(path, "empty file")
    return data


def encoding_of(data: bytes, path: Path) -> tuple[str, str | None]:
    """UTF-8 (a BOM is dropped), UTF-16 when its BOM says so (what Windows PowerShell 5 writes by default),
    else Latin-1 (it maps every byte, so nothing is lost) with a warning saying so."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "latin-1", f"{path}: not UTF-8 (byte {exc.start}); read as Latin-1"
    return "utf-8-sig", None


def read_text(path: Path) -> tuple[str, str | None]:
    """A log file's text, and a warning when it was not UTF-8."""
    data = read_bytes(path)
    encoding, problem = encoding_of(data, path)
    return data.decode(encoding, errors="replace"), problem  # a UTF-16 file cut mid-character
