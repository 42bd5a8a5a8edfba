"""What the readers' fuzz tests share: a file cut and overwritten at a drawn place, and the one promise a reader
makes about it (every complete record read, or a one-line CurvedocError; never another exception)."""

from hypothesis import strategies as st

from curvedoc import CurvedocError
from curvedoc.readers import Source


def damaged(data: st.DataObject, content: bytes) -> bytes:
    """``content`` cut at a drawn place, with up to 8 drawn bytes written over it there."""
    cut = data.draw(st.integers(0, len(content)))
    noise = data.draw(st.binary(max_size=8))
    return content[:cut] + noise + content[cut + len(noise):]


def assert_reads_or_refuses_in_one_line(reader, path) -> None:
    """``reader`` reads the file at ``path`` into runs that hold points, or refuses it in one line."""
    try:
        runs = reader.read(Source("x", path, ((None, path),), True))
    except CurvedocError as error:
        assert "\n" not in str(error)
    else:
        assert all(len(run.scalars) for run in runs)
