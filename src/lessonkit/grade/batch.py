"""Grade many files at once for an instructor: a fresh child per file, no file stops the rest.

A crash, a timeout or a hostile file costs that file's own child and nothing else: no child
ever runs a second file. A file that cannot be read still gets a row: every task is `error`,
with the reason.

The batch folder is data, perhaps unpacked from students' archives: submissions are found
and opened without following a symbolic link anywhere below the folder (`O_NOFOLLOW`, one
folder at a time), so a link to a file outside it is that row's error, never read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from lessonkit.errors import LessonkitError, grader_failed
from lessonkit.grade.grader import Grader
from lessonkit.grade.results import GradeReport, run_failed
from lessonkit.grade.sources import (
    Submission,
    SubmissionError,
    read_bytes,
    read_open_file,
    read_submission,
)
from lessonkit.grade.worker_handle import GradingError
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_name
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import DEFAULT_LIMITS, Limits
from lessonkit.run.sandbox import find_sandbox

SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class BatchEntry:
    path: Path
    report: GradeReport
    sha256: str | None = None  # of the bytes graded; None when the file could not be read
    data: bytes | None = None  # the bytes graded, kept for a gradebook


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


def unreadable(lesson: Lesson, path: Path, message: str, seconds: float) -> GradeReport:
    """A report for a file that could not be graded at all."""
    tasks = run_failed(lesson, message)
    return GradeReport(lesson.meta.id, str(path), tasks, (), seconds)


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


def grade_many(
    lesson: Lesson,
    items: Iterable[BatchItem],
    jobs: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    on_report: Callable[[BatchEntry], None] | None = None,
    *,
    isolation: Isolation | None = None,
    seed: int | None = None,
) -> tuple[BatchEntry, ...]:
    """Grade every item, each in a child of its own; results come back in item order.

    One `Grader` serves every job thread, so the reference runs once and every file is
    graded on the same input sets; the next learner child starts while a file runs.
    Without `isolation`, the sandbox where it works (and no compile cache).
    """
    items = list(items)
    if not items:
        return ()
    if isolation is None:
        sandbox, reason = find_sandbox()
        isolation = Isolation(sandbox, reason=reason)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(items)))
    results: list[BatchEntry | None] = [None] * len(items)
    next_index = iter(range(len(items)))
    lock = threading.Lock()
    failures: list[GradingError] = []

    with Grader(limits, isolation=isolation, seed=seed, prestart=jobs) as grader:

        def work() -> None:
            while not failures:
                with lock:
                    index = next(next_index, None)
                    if index is not None:
                        grader.prestart = min(jobs, len(items) - index - 1)
                if index is None:
                    return
                entry = _grade_one(grader, lesson, items[index])
                if entry is None:
                    return
                results[index] = entry
                if on_report is not None:
                    with lock:
                        on_report(entry)

        def _grade_one(grader: Grader, lesson: Lesson, item: BatchItem) -> BatchEntry | None:
            started = time.perf_counter()
            path, data = item.path, item.data
            digest = None if data is None else hashlib.sha256(data).hexdigest()
            try:
                if data is None:
                    raise SubmissionError(item.problem or "")
                submission = read_submission(path, data)
                report = grader.grade_submission(lesson, submission, started)
            except GradingError as exc:  # the lesson itself cannot be graded: stop everything
                failures.append(exc)
                return None
            except LessonkitError as exc:
                report = unreadable(lesson, path, exc.message, time.perf_counter() - started)
            except Exception as exc:  # a grader bug must not cost the other files their grades
                message = grader_failed(exc)
                report = unreadable(lesson, path, message, time.perf_counter() - started)
            return BatchEntry(path, replace(report, seed=grader.seed), digest, data)

        threads = [threading.Thread(target=work, daemon=True) for _ in range(jobs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failures:
        raise failures[0]
    return tuple(r for r in results if r is not None)
