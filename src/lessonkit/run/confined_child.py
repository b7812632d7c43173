"""Start one child under an `Isolation` and `Limits`: the one way a confined child is made.

The grading child (`grade/channel/child_handle.py`, the trusted reference and each learner child)
and a learner's whole script (`run/whole_script.py`) are started here alike, in this order:

1. remove what killed parents left (`run/leftovers.py`);
2. choose who the child becomes: a user id of its own wherever the grader is root (in a
   privileged sandbox, or without one, where it also makes its own namespaces and root
   when the kernel allows: `own-root`), else the caller; a trusted reference child started
   here (where there is no starter to fork it) is never sandboxed and stays the caller;
3. give it a folder of the parent's where it needs one (its scratch folder without the
   sandbox, or a working folder the caller reads back afterwards), owned by that identity;
4. wrap the command in `run/confine.py`, given a `Confinement` record (memory, file size,
   tasks, CPU time, the identity),
   then in the sandbox and, as root, in a cgroup of its own (`run/sandbox.py`);
5. start it with the allow-listed environment, stderr to a file.

`ConfinedChild.stop` kills everything it started (its process group, its PID namespace, its
cgroup, whatever its own user id still runs); `close` also removes its scratch folder and its
error output, and is safe twice.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from lessonkit.defaults import STOP_WAIT_S
from lessonkit.grading_child.confinement import Confinement, Mode
from lessonkit.run.isolation import Isolation
from lessonkit.run.leftovers import detach_mounts, scratch_folder
from lessonkit.run.limits import Limits
from lessonkit.run.process import Process, Stream, child_environment, start_child
from lessonkit.run.sandbox import (
    CONFINE_SCRIPT,
    FORKING_CAPABILITIES,
    RECORD_FOLDER,
    SYSTEM_PATHS,
    WORKING,
    ChildCgroup,
    Sandbox,
    end_user,
    fresh_identity,
    process_limit,
    python_paths,
    remove_leftovers,
    sandboxed_argv,
)

STDERR_TAIL = 4_000  # bytes of a child's error output kept for a message

WRITE_ALL = {
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}
"""The trusted reference's compile cache settings: it keeps every program it compiles."""
NEVER_WRITE = {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "inf"}
"""A learner child's (and the starter's, for its forks): no compile is slow enough to be
kept, so its JAX only reads the cache (`Isolation.cache`); the reference fork writes
(`run/starter_main.py`)."""


@dataclass
class ConfinedChild:
    """A started confined child and what to clean up once it has ended."""

    process: Process
    stderr: IO[bytes]
    cgroup: ChildCgroup | None
    scratch: tempfile.TemporaryDirectory[str] | None
    """The folder made for it here (None: the sandbox's own /tmp, or the caller's folder)."""
    stage: tempfile.TemporaryDirectory[str] | None = None
    """The empty folder on which an own-root child built its root (`run/isolate.py`)."""
    user: int | None = None
    """The fresh user id it runs as (a root grader's learner child): whatever still runs
    under it once the child is stopped is killed (`end_user`)."""
    closed: bool = False

    def error_tail(self) -> str:
        """The end of what the child wrote to stderr (for a message, never for a verdict)."""
        try:
            self.stderr.seek(0, os.SEEK_END)
            self.stderr.seek(max(0, self.stderr.tell() - STDERR_TAIL))
            return self.stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def stop(self) -> None:
        """Kill the child and everything it started; safe to call twice."""
        self.process.stop(wait_s=STOP_WAIT_S)  # the group: learner code may have started its own
        if self.cgroup is not None:
            self.cgroup.remove()  # processes that left the group with setsid()
            self.cgroup = None  # removed: a second remove would wait for folders long gone
        if self.user is not None:
            end_user(self.user)  # and, without namespaces, those that left it by double fork

    def close(self) -> None:
        """Stop the child, then remove its error output and its scratch folder."""
        if self.closed:
            return
        self.closed = True
        self.stop()
        self.stderr.close()
        if self.stage is not None:
            detach_mounts(self.stage.name)
        for folder in (self.scratch, self.stage):
            if folder is not None:
                folder.cleanup()


def seen_from_child(isolation: Isolation, working: Path) -> str:
    """The path a working folder of the parent's has inside the child."""
    return WORKING if isolation.sandbox is not None else str(working)


def bound_paths(isolation: Isolation, *, readable: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """What a sandboxed child sees of the parent's files, all read-only: the Python
    installation (never the isolation's guarded paths), `run/confine.py` with the folder of
    the record it reads, `readable` and the compile cache it may read."""
    cache = isolation.cache
    confine = (CONFINE_SCRIPT, RECORD_FOLDER)
    python = python_paths(isolation.guarded)
    return (*python, *confine, *readable, *([cache] if cache else []))


def child_identity(sandbox: Sandbox | None, isolation: Isolation) -> tuple[int, int] | None:
    """The (uid, gid) a learner child drops to: one of its own wherever the grader is root
    (a privileged sandbox, or none); None where it keeps the caller's."""
    if sandbox is not None:
        return fresh_identity() if sandbox.privileged else None
    return fresh_identity() if isolation.as_root is not None else None


def fork_mode(isolation: Isolation) -> Mode:
    """What a learner child of `isolation` makes of itself (`Confinement.mode`)."""
    sandbox = isolation.sandbox
    if sandbox is not None:
        return "privileged" if sandbox.privileged else "userns"
    return "own-root" if isolation.kind == "namespaces" else "none"


def own_root_paths(isolation: Isolation, readable: tuple[Path, ...]) -> tuple[str, ...]:
    """Everything an own-root child's view of the files holds: what bubblewrap would bind
    (the system's programs and libraries, `bound_paths`)."""
    system = (Path(p) for p in SYSTEM_PATHS)
    return tuple(sorted({str(p) for p in (*system, *bound_paths(isolation, readable=readable))}))


def start_confined(
    command: Sequence[str],
    *,
    isolation: Isolation,
    limits: Limits,
    trusted: bool = False,
    forks: bool = False,
    readable: tuple[Path, ...] = (),
    working: Path | None = None,
    settings: Mapping[str, str] | None = None,
    cpu_seconds: int = 0,
    stdin: Stream = "discard",
    pass_fds: tuple[int, ...] = (),
) -> ConfinedChild:
    """Start `command` (a program and its arguments, paths as the child sees them) confined.

    `trusted`: the reference child, which runs only the lesson's own code: never sandboxed,
    no task limit, and it may write the compile cache. `forks`: the starter, sandboxed like a
    learner child but keeping its user, no task limit, and in a privileged sandbox the
    capabilities it needs to confine its forks. `readable`: files of the parent's the
    command reads (bound read-only into the sandbox). `working`: a folder of the parent's,
    holding what the program needs, that becomes its working folder (`seen_from_child`) and
    that the caller reads and removes afterwards. `settings`: grading-child settings
    (`run.process.CHILD_SETTINGS`). Raises OSError when the child cannot start.
    """
    remove_leftovers()
    sandbox = None if trusted else isolation.sandbox
    become = None if trusted or forks else child_identity(sandbox, isolation)
    scratch = scratch_folder() if working is None and sandbox is None else None
    # the sandbox, if any, is bubblewrap's; without one a root grader's learner child makes
    # its own (`run/confine.py`), its root built on a folder made here
    own = sandbox is None and become is not None and fork_mode(isolation) == "own-root"
    stage = scratch_folder() if own else None
    try:
        folder = working if working is not None else Path(scratch.name) if scratch else None
        if become is not None and folder is not None:
            for path in (*folder.iterdir(), folder):
                os.chown(path, *become)
        uid = become[0] if become else os.getuid()
        home = "/tmp" if sandbox is not None or folder is None else str(folder)
        cache = isolation.cache
        confinement = Confinement(
            mode="own-root" if own else "none",
            keep=own_root_paths(isolation, readable) if own else (),
            stage=stage.name if stage is not None else None,
            memory=limits.memory,
            file_bytes=limits.file_bytes,
            processes=0 if trusted or forks else process_limit(uid, limits),
            scratch_bytes=limits.scratch_bytes,
            uid=become[0] if become else None,
            gid=become[1] if become else None,
            cache=str(cache) if cache is not None else None,
            trusted=trusted,
            home=home,
            cpu_seconds=cpu_seconds,
        )
        line = confinement.to_line().decode().rstrip("\n")
        argv = [sys.executable, "-I", str(CONFINE_SCRIPT), line, "--", *command]
        extra = {**(settings or {}), "MPLCONFIGDIR": f"{home}/.matplotlib"}
        if cache is not None:
            extra["JAX_COMPILATION_CACHE_DIR"] = str(cache)
            extra.update(WRITE_ALL if trusted else NEVER_WRITE)
        seen = bound_paths(isolation, readable=readable)
        argv, cgroup = sandboxed_argv(
            argv,
            sandbox,
            readable=seen,
            limits=limits,
            uid=uid,
            working=working,
            capabilities=FORKING_CAPABILITIES if forks else (),
            writable=(isolation.cache,) if forks and isolation.cache is not None else (),
        )
    except BaseException:
        for folder in (scratch, stage):
            if folder is not None:
                folder.cleanup()
        raise
    user = become[0] if become is not None and sandbox is None else None
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open until close())
    try:
        process = start_child(
            argv,
            env=child_environment("allow-list", extra, scratch=home),
            cwd=None if sandbox is not None else folder,
            stdin=stdin,
            stdout="discard",
            stderr=stderr,
            pass_fds=pass_fds,
        )
    except BaseException:
        stderr.close()
        if cgroup is not None:
            cgroup.remove()
        for folder in (scratch, stage):
            if folder is not None:
                folder.cleanup()
        raise
    return ConfinedChild(process, stderr, cgroup, scratch, stage, user)
