"""Run a learner's whole program confined, and hand back the files it was asked to write.

The grading child runs cells; a phase project is a script with arguments that writes files.
Both are started by `run/confined_child.py` under the same confinement: the sandbox
(bubblewrap where it works), the `Limits` (memory, file size, tasks, CPU time; a user id of
its own as root), an allow-listed environment, a deadline, and a scratch folder of its own
that is removed in `finally`. Here the scratch folder is the program's working folder, bound
writable into the sandbox, so the parent can read what the program left there once it has
ended. Each file is capped by RLIMIT_FSIZE and the folder's total size is watched while the
program runs, so a program that fills the disk is stopped.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lessonkit.defaults import SCRIPT_POLL_S
from lessonkit.run.confined_child import seen_from_child, start_confined
from lessonkit.run.import_paths import import_paths
from lessonkit.run.isolation import Isolation
from lessonkit.run.leftovers import scratch_folder
from lessonkit.run.limits import DEFAULT_LIMITS, Limits
from lessonkit.run.process import Child, describe_end

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class LeftFile:
    """A file the program was asked to write: its bytes, or why they cannot be read."""

    name: str
    data: bytes | None
    problem: str | None = None


@dataclass(frozen=True)
class ConfinedRun:
    """How one confined program ended, its error output's tail and the files it left."""

    exit_code: int | None  # None when the parent stopped it
    ended: str | None  # why it did not end by itself with status 0, in words
    stderr: str
    seconds: float
    files: tuple[LeftFile, ...]

    def file(self, name: str) -> LeftFile:
        return next(f for f in self.files if f.name == name)


def plain_name(name: str) -> bool:
    """A file name with no folder, no leading dot and no surprising character."""
    return bool(_PLAIN_NAME.fullmatch(name))


def run_confined(
    program_name: str,
    program: bytes,
    args: Sequence[str],
    *,
    collect: Sequence[str],
    isolation: Isolation,
    limits: Limits = DEFAULT_LIMITS,
    inputs: Mapping[str, bytes] | None = None,
    settings: Mapping[str, str] | None = None,
    max_file_bytes: int = 16 * 2**20,
    should_stop: Callable[[], bool] = lambda: False,
) -> ConfinedRun:
    """Run `python PROGRAM_NAME ARGS...` confined, in a fresh folder holding the program and
    `inputs`; return how it ended and the files named in `collect` (at most
    `max_file_bytes` each), read once it has ended and everything it started is gone.

    `limits.timeout` is the run's deadline; `settings` are grading-child settings
    (`run.process.CHILD_SETTINGS`, such as XLA_FLAGS); `should_stop` is polled while the
    program runs (Ctrl-C stops every run at once).
    """
    names = [program_name, *(inputs or {}), *collect]
    if not all(plain_name(n) for n in names):
        raise ValueError(f"not plain file names: {names}")
    folder = scratch_folder()
    work = Path(folder.name)
    try:
        for name, data in {program_name: program, **(inputs or {})}.items():
            (work / name).write_bytes(data)
        where = seen_from_child(isolation, work)
        started = time.monotonic()
        child = start_confined(
            [sys.executable, f"{where}/{program_name}", *args],
            isolation=isolation,
            limits=limits,
            working=work,
            settings={**(settings or {}), **_import_folders()},
            cpu_seconds=limits.cpu_seconds,
        )
        try:
            ended = _watch(child.process, work, started, limits, should_stop)
            child.stop()  # whatever it started, before its files are read
            seconds = time.monotonic() - started
            code = None if ended else child.process.returncode
            if code is not None and code < 0:  # a signal: a limit, a crash
                ended = describe_end(code)
            tail = child.error_tail()
        finally:
            child.close()
        files = tuple(_read_left(work, name, max_file_bytes) for name in collect)
        return ConfinedRun(code, ended, tail, seconds, files)
    finally:
        folder.cleanup()


def _import_folders() -> dict[str, str]:
    """The folders this process imports packages from beyond its installation (JAX through
    PYTHONPATH on a TPU image, the user site), as the PYTHONPATH of the learner's script,
    which the sandbox binds read-only (`sandbox.python_paths`)."""
    paths = import_paths()
    return {"PYTHONPATH": os.pathsep.join(paths)} if paths else {}


def _watch(
    child: Child, work: Path, started: float, limits: Limits, should_stop: Callable[[], bool]
) -> str | None:
    """Wait for the child; stop it at the deadline, when asked, or when its folder grows
    too big."""
    while child.wait(SCRIPT_POLL_S) is None:
        if should_stop():
            return "the grader was stopped"
        if time.monotonic() > started + limits.timeout:
            return f"it did not finish in {limits.timeout:g} s"
        if not _folder_fits(work, limits):
            return (
                f"it wrote more than {limits.folder_bytes // 2**20} MB or "
                f"{limits.folder_entries} files in its folder"
            )
    return None


def _folder_fits(work: Path, limits: Limits) -> bool:
    """Whether the folder holds at most `folder_bytes` in `folder_entries` entries."""
    total, count, pending = 0, 0, [work]
    while pending:
        with contextlib.suppress(OSError), os.scandir(pending.pop()) as entries:
            for entry in entries:
                count += 1
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    total += info.st_size
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(Path(entry.path))
                if count > limits.folder_entries or total > limits.folder_bytes:
                    return False
    return True


def _read_left(work: Path, name: str, limit: int) -> LeftFile:
    """A regular file the program left, never through a link, at most `limit` bytes."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(work / name, flags)
    except FileNotFoundError:
        return LeftFile(name, None, f"it wrote no {name}")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return LeftFile(name, None, f"{name} is a symbolic link, not a file")
        return LeftFile(name, None, f"{name} cannot be opened ({exc.strerror or exc})")
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            return LeftFile(name, None, f"{name} is not a regular file")
        if info.st_size > limit:
            return LeftFile(name, None, f"{name} is larger than {limit // 2**20} MB")
        data = file.read(limit + 1)
    if len(data) > limit:
        return LeftFile(name, None, f"{name} is larger than {limit // 2**20} MB")
    return LeftFile(name, data)
