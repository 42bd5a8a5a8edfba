"""The one error type curvedoc raises for bad input; its text is a single line naming the file."""

from __future__ import annotations

import os


class CurvedocError(Exception):
    """Bad input: a path that cannot be read, or a file that is not what it claims to be."""

    def __init__(self, path: str | os.PathLike[str] | None, problem: str):
        self.path = None if path is None else os.fspath(path)
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.path}: {self.problem}" if self.path else self.problem)


class NotALog(CurvedocError):
    """A file read because of its name (a ``.txt``, ``.log``) that holds no training log at all.

    Found while walking a folder it is passed over quietly, as any other file that is not a log; named by the user
    it is an error like any other.
    """


def describe_os_error(exc: OSError) -> str:
    """A short human phrase for an OS error, without the path (the caller names the file)."""
    return exc.strerror.lower() if exc.strerror else type(exc).__name__
