"""What lies below a batch folder, and each file in it read as a batch item (its bytes, or
why it has none).

The batch folder is data, perhaps unpacked from students' archives: submissions are found
and opened without following a symbolic link anywhere below the folder (`O_NOFOLLOW`, one
folder at a time), so a link to a file outside it is that row's error, never read. A
folder below it that cannot be listed is a row of its own, never the end of the batch.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import LessonkitError
from lessonkit.grade.submission.sources import (
    Submission,
    SubmissionError,
    read_bytes,
    read_open_file,
    read_submission,
)
from lessonkit.lesson.text import safe_name

SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Listing:
    """What lies below a batch folder: the files to grade, and the folders that could not be
    listed (unreadable, or named past the system's path limit), each with why."""

    files: tuple[Path, ...]
    unlisted: tuple[tuple[Path, str], ...] = ()

    @property
    def entries(self) -> list[Path]:
        """Every row the batch has, in path order: each file, and each folder not listed."""
        return sorted([*self.files, *(folder for folder, _ in self.unlisted)])


def submissions_in(folder: Path) -> Listing:
    """Every .py and .ipynb entry below `folder` that is not a folder, in path order.

    Hidden folders (checkpoints) are skipped and no link is followed, to a folder or a file;
    links and other non-regular entries are kept, so that each gets a row saying why it was
    not graded. A folder below `folder` that cannot be listed (no permission, a path longer
    than the system allows) is a row of its own too, never the end of the batch: whoever
    unpacked it, the other submissions are still graded. Only `folder` itself must list.
    """
    found: list[Path] = []
    unlisted: list[tuple[Path, str]] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif Path(entry.name).suffix in SUFFIXES:
                        found.append(Path(entry.path))
        except OSError as exc:
            if current == folder:
                raise LessonkitError(
                    f"cannot list the folder {safe_name(str(current))} ({exc.strerror or exc})",
                    fix="make the submissions folder readable",
                ) from None
            unlisted.append((current, unlisted_message(folder, current, exc)))
    return Listing(tuple(sorted(found)), tuple(sorted(unlisted)))


def unlisted_message(folder: Path, below: Path, exc: OSError) -> str:
    """Why a folder below the batch folder has no submissions graded: its row's message."""
    name = short_name(below.relative_to(folder).as_posix())
    return (
        f"the folder {name} cannot be listed ({exc.strerror or exc}), so no file in it was "
        "graded; make it readable, or unpack it with shorter names"
    )


def short_name(relative: str, keep: int = 80) -> str:
    """A path fit for a message: whole when short, else its start and end around `...`."""
    name = safe_name(relative)
    return name if len(name) <= 2 * keep + 5 else f"{name[:keep]} ... {name[-keep:]}"


_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NO_LINK = getattr(os, "O_NOFOLLOW", 0)


def read_in_folder(folder: Path, path: Path) -> tuple[Submission, str]:
    """`path`'s cells and the sha256 of its bytes, opened below `folder` without links."""
    data = read_bytes_in_folder(folder, path)
    return read_submission(path, data), hashlib.sha256(data).hexdigest()


def read_bytes_in_folder(folder: Path, path: Path) -> bytes:
    """`path`'s bytes, opened below `folder` without following a link.

    Each folder on the way and the file itself are opened relative to the one before with
    O_NOFOLLOW, so no link, planted before or during the batch, leads outside `folder`.
    """
    name = safe_name(str(path))
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        parts = ()
    if not parts or any(p in ("", ".", "..") for p in parts):
        raise SubmissionError(f"{name} lies outside the batch folder; it was not read")
    try:
        fd = os.open(folder, _DIRECTORY)
    except OSError as exc:
        raise SubmissionError(f"the batch folder cannot be opened ({exc.strerror})") from None
    try:
        for part in parts[:-1]:
            step = _open_below(fd, part, _DIRECTORY | _NO_LINK, name)
            os.close(fd)
            fd = step
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | _NO_LINK
        file = _open_below(fd, parts[-1], flags, name)
    finally:
        os.close(fd)
    return read_open_file(file, path)


def _open_below(folder_fd: int, part: str, flags: int, name: str) -> int:
    try:
        info = os.stat(part, dir_fd=folder_fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "a symbolic link")
        return os.open(part, flags, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise SubmissionError(
                f"{name} is a symbolic link, or lies below one; a batch grades only regular "
                "files inside its folder, so it was not read",
                fix="copy the file itself into the batch folder",
            ) from None
        if exc.errno == errno.EISDIR:
            raise SubmissionError(f"{name} is a folder, not a practice file") from None
        raise SubmissionError(f"{name} cannot be opened ({exc.strerror or exc})") from None


@dataclass(frozen=True)
class BatchItem:
    """One file of a batch as the grader takes it: the path its report names, and its bytes
    or why they could not be read.

    The grader takes bytes, not a path to open: a regrade's kept bytes and a Dask worker's
    chunk are graded as they are, never written to a temporary folder to be read back. An
    item with a `problem` is still a row (every task `error`, with the reason).
    """

    path: Path
    data: bytes | None = None
    problem: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.problem is None):
            raise ValueError("a batch item holds either its bytes or why it has none")

    @property
    def sha256(self) -> str | None:
        """The sha256 of the bytes graded, which the journal and the gradebook bind the
        verdict to; None where there are none."""
        return None if self.data is None else hashlib.sha256(self.data).hexdigest()


def read_item(path: Path, folder: Path | None = None) -> BatchItem:
    """`path` as a batch item: its bytes (below `folder` without following a link, when
    given), or the message saying why they could not be read."""
    try:
        data = read_bytes(path) if folder is None else read_bytes_in_folder(folder, path)
    except LessonkitError as exc:
        return BatchItem(path, problem=exc.message)
    return BatchItem(path, data)


def read_items(paths: Iterable[Path], folder: Path | None = None) -> tuple[BatchItem, ...]:
    """Each path as a batch item (`read_item`), in the order given."""
    return tuple(read_item(path, folder) for path in paths)
