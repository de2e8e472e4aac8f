"""Write a report to ``--output`` without ever destroying what is read: never over an input, never half.

An output is refused when it is one of the inputs (the same path, or the same file by device and inode:
through a symbolic or hard link) or lies inside an input folder (a report there would be read as a log the
next time, and a log there could be overwritten). A report is written to a temporary file in the target's
folder, flushed to disk, then renamed over the target, so an interruption or a crash leaves the old file or
the new one, never a mix. The rename replaces a symbolic link at the output itself, never the file it
points to. A file that is replaced keeps its permission bits; a new one gets the umask's. A device or a
pipe (``/dev/stdout``, a named pipe) is written to as it is: it cannot be renamed over.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import IO


class OutputError(Exception):
    """The output cannot be written there; the message says why, in one line."""


def _identity(st: os.stat_result) -> tuple[int, int] | None:
    """A file's device and inode, when the file system gives one (some report 0 for every file)."""
    return (st.st_dev, st.st_ino) if st.st_ino else None


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _written_path(output: str) -> str:
    """Where the rename puts the report: the output's own name (not what a link there points to) in its
    folder with every link resolved."""
    absolute = os.path.abspath(output)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def _folders_above(path: str) -> Iterable[tuple[str, os.stat_result]]:
    """The existing folders that hold ``path``, nearest first."""
    folder = os.path.dirname(path)
    while True:
        st = _stat(folder)
        if st is not None:
            yield folder, st
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def check_output(output: str, inputs: Iterable[str], label: str = "--output") -> None:
    """Raise :class:`OutputError` when writing ``output`` could overwrite or land among ``inputs`` (files
    and folders; ``-`` is stdin and is skipped, as are paths that do not exist)."""
    written = _written_path(output)
    pointed = os.path.realpath(output)  # what a link at the output points to
    out_st = _stat(output)
    if out_st is not None and stat.S_ISDIR(out_st.st_mode):
        raise OutputError(f"{label} {output}: is a folder, expected a file")
    out_id = _identity(out_st) if out_st is not None and stat.S_ISREG(out_st.st_mode) else None
    above = list(_folders_above(written)) + list(_folders_above(pointed))
    for raw in inputs:
        if raw == "-":
            continue
        in_st = _stat(raw)
        if in_st is None:
            continue
        real = os.path.realpath(raw)
        if stat.S_ISDIR(in_st.st_mode):
            in_id = _identity(in_st)
            inside = any(_is_within(path, real) for path in (written, pointed)) or (
                in_id is not None and any(_identity(st) == in_id for _folder, st in above))
            if inside:
                raise OutputError(f"{label} {output}: is inside the input folder {raw}, whose files are read "
                                  "as logs; write the report outside it")
        elif real in (written, pointed) or (out_id is not None and _identity(in_st) == out_id):
            raise OutputError(f"{label} {output}: is the input {raw}; refusing to overwrite it")


def _is_within(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives (Windows)
        return False


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_report(output: str, text: str) -> None:
    """Write ``text`` as UTF-8 to ``output``: atomically for a file (new or replaced), straight to a device or
    a pipe. Raises ``OSError`` (the target is then as it was, and no temporary file is left)."""
    data = text.encode("utf-8", errors="surrogateescape")
    target = Path(output)
    try:
        existing = os.lstat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISLNK(existing.st_mode):
        followed = _stat(output)
        if followed is not None and not stat.S_ISREG(followed.st_mode) and not stat.S_ISDIR(followed.st_mode):
            existing = followed  # /dev/stdout and the like: written through, below
        else:
            existing = None  # the link itself is replaced by the report, as a new file
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with open(target, "wb") as stream:  # a device or a pipe: nothing to rename over
            stream.write(data)
        return
    if existing is not None and not os.access(target, os.W_OK):
        raise PermissionError(13, "Permission denied", output)  # as writing it in place would have failed
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
    import tempfile  # imported only for an --output: a few milliseconds of start-up

    folder = target.parent
    temporary = tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".partial",  # noqa: SIM115
                                            delete=False)
    try:
        with temporary:
            if hasattr(os, "fchmod"):  # NamedTemporaryFile makes it 0600
                os.fchmod(temporary.fileno(), mode)
            temporary.write(data)
            _to_disk(temporary)
        os.replace(temporary.name, target)
    except BaseException:  # ^C included: the old file stays, the partial one goes
        with contextlib.suppress(OSError):
            os.unlink(temporary.name)
        raise
    _sync_folder(folder)


def _to_disk(stream: IO[bytes]) -> None:
    """The report's bytes on the disk before the rename makes them the target."""
    stream.flush()
    os.fsync(stream.fileno())


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); best effort."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
