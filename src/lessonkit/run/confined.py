"""Run a learner's whole program confined, and hand back the files it was asked to write.

The grading worker runs cells; a phase project is a script with arguments that writes files.
Both run under the same confinement: the sandbox (bubblewrap where it works), the limits of
`confine.py` (memory, file size, tasks, CPU time; a user id of its own as root), an
allow-listed environment, a deadline, and a scratch folder of its own that is removed in
`finally`. Here the scratch folder is the program's working folder, bound writable into the
sandbox, so the parent can read what the program left there once it has ended. Each file is
capped by RLIMIT_FSIZE and the folder's total size is watched while the program runs, so a
program that fills the disk is stopped.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lessonkit.run.leftovers import scratch_folder
from lessonkit.run.process import Child, child_environment, describe_end, start_child
from lessonkit.run.sandbox import (
    CONFINE_SCRIPT,
    WORKING,
    ChildCgroup,
    Sandbox,
    fresh_identity,
    process_limit,
    python_paths,
    remove_leftovers,
    sandboxed_argv,
)

DEFAULT_MEMORY = 2 * 2**30
MAX_FOLDER_BYTES = 256 * 2**20
MAX_FOLDER_ENTRIES = 1_000
STDERR_TAIL = 4_000
POLL_S = 0.1
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
    sandbox: Sandbox | None,
    timeout_s: float,
    inputs: Mapping[str, bytes] | None = None,
    settings: Mapping[str, str] | None = None,
    memory: int = DEFAULT_MEMORY,
    max_file_bytes: int = 16 * 2**20,
    should_stop: Callable[[], bool] = lambda: False,
) -> ConfinedRun:
    """Run `python PROGRAM_NAME ARGS...` confined, in a fresh folder holding the program and
    `inputs`; return how it ended and the files named in `collect` (at most
    `max_file_bytes` each), read once it has ended and everything it started is gone.

    `settings` are grading-child settings (`run.process.CHILD_SETTINGS`, such as XLA_FLAGS);
    `should_stop` is polled while the program runs (Ctrl-C stops every run at once).
    """
    names = [program_name, *(inputs or {}), *collect]
    if not all(plain_name(n) for n in names):
        raise ValueError(f"not plain file names: {names}")
    remove_leftovers()
    folder = scratch_folder()
    work = Path(folder.name)
    cgroup: ChildCgroup | None = None
    try:
        become = fresh_identity(sandbox)
        for name, data in {program_name: program, **(inputs or {})}.items():
            (work / name).write_bytes(data)
            if become is not None:
                os.chown(work / name, *become)
        if become is not None:
            os.chown(work, *become)
        uid = become[0] if become else os.getuid()
        where = WORKING if sandbox is not None else str(work)
        argv = [sys.executable, "-I", str(CONFINE_SCRIPT), str(memory), str(process_limit(uid))]
        argv += [str(int(timeout_s * 2 + 10)), *(str(i) for i in become or ())]
        argv += ["--", sys.executable, f"{where}/{program_name}", *args]
        home = "/tmp" if sandbox is not None else str(work)
        extra = {**(settings or {}), "MPLCONFIGDIR": f"{home}/.matplotlib"}
        readable = (*python_paths(), CONFINE_SCRIPT)
        argv, cgroup = sandboxed_argv(
            argv, sandbox, readable=readable, memory=memory, uid=uid, working=work
        )
        with tempfile.TemporaryFile() as stderr:
            started = time.monotonic()
            child = start_child(
                argv,
                env=child_environment("allow-list", extra, scratch=home),
                cwd=None if sandbox is not None else work,
                stderr=stderr,
                stdout="discard",
            )
            try:
                ended = _watch(child, work, started + timeout_s, timeout_s, should_stop)
            finally:
                child.stop(wait_s=10)
                if cgroup is not None:
                    cgroup.remove()  # processes that left the group with setsid()
            seconds = time.monotonic() - started
            code = None if ended else child.returncode
            if code is not None and code < 0:  # a signal: a limit, a crash
                ended = describe_end(code)
            stderr.seek(0, os.SEEK_END)
            stderr.seek(max(0, stderr.tell() - STDERR_TAIL))
            tail = stderr.read().decode("utf-8", "replace")
        files = tuple(_read_left(work, name, max_file_bytes) for name in collect)
        return ConfinedRun(code, ended, tail, seconds, files)
    finally:
        folder.cleanup()


def _watch(
    child: Child, work: Path, deadline: float, timeout_s: float, should_stop: Callable[[], bool]
) -> str | None:
    """Wait for the child; stop it at the deadline, when asked, or when its folder grows
    too big."""
    while child.wait(POLL_S) is None:
        if should_stop():
            return "the grader was stopped"
        if time.monotonic() > deadline:
            return f"it did not finish in {timeout_s:g} s"
        if not _folder_fits(work):
            return (
                f"it wrote more than {MAX_FOLDER_BYTES // 2**20} MB or "
                f"{MAX_FOLDER_ENTRIES} files in its folder"
            )
    return None


def _folder_fits(work: Path) -> bool:
    """Whether the folder holds at most MAX_FOLDER_BYTES in MAX_FOLDER_ENTRIES entries."""
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
                if count > MAX_FOLDER_ENTRIES or total > MAX_FOLDER_BYTES:
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
