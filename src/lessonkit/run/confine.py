"""Limits for a process about to run learner code, and a launcher that applies them.

Run by path, never imported from lessonkit (it may run inside the sandbox, which sees only
the files bound into it): `python -I confine.py MEMORY FILE_BYTES NPROC CPU_S [UID GID] --
PROGRAM ARG...` applies them to itself and then becomes PROGRAM, so every child that runs
learner code (the grading worker, a learner's whole script) starts already confined. The
numbers come from the parent's `run/limits.py` (`run/confined_child.py` writes this argv).
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys


def limit_resources(memory_bytes: int, file_bytes: int, processes: int, cpu_seconds: int) -> None:
    """Memory, process, file-size, core-dump and (when given) CPU-time limits.

    RLIMIT_DATA rather than RLIMIT_AS: JAX reserves large ranges of address space that it
    never touches, while RLIMIT_DATA counts memory that is actually made writable.
    RLIMIT_NPROC counts every task of the user (threads included) and is ignored for root,
    which is why a learner child runs as a user id of its own (see `drop_privileges`).
    """
    limits = [
        (resource.RLIMIT_DATA, memory_bytes),
        (resource.RLIMIT_FSIZE, file_bytes),
        (resource.RLIMIT_CORE, 0),
    ]
    if processes > 0:
        limits.append((resource.RLIMIT_NPROC, processes))
    if cpu_seconds > 0:
        limits.append((resource.RLIMIT_CPU, cpu_seconds))
    for limit, value in limits:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(limit, (value, value))


def drop_privileges(uid: int, gid: int) -> None:
    """Become an unprivileged user when started as root: a user id of our own inside the
    sandbox, or the autograder's learner account where there is no sandbox."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("lessonkit confine: could not drop privileges")


def main(argv: list[str]) -> None:
    """Apply the limits that `argv` names, then exec the program after `--`."""
    split = argv.index("--")
    settings, program = [int(a) for a in argv[:split]], argv[split + 1 :]
    memory, file_bytes, processes, cpu_seconds = settings[:4]
    limit_resources(memory, file_bytes, processes, cpu_seconds)
    os.umask(0o022)  # what the trusted child writes (the compile cache) stays readable by
    # the learner children, which run as user ids of their own (`run/cache_access.py`)
    if len(settings) == 6:
        drop_privileges(settings[4], settings[5])
    os.execv(program[0], program)


if __name__ == "__main__":
    main(sys.argv[1:])
