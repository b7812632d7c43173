"""Limits for a process about to run learner code, and a launcher that applies them.

Run by path, never imported from lessonkit (it may run inside the sandbox, which sees only
the files bound into it): the grading worker loads `limit_resources` and `drop_privileges`
from here, and `python -I confine.py MEMORY NPROC CPU_S [UID GID] -- PROGRAM ARG...` applies
them to itself and then becomes PROGRAM, so a learner's script starts already confined.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys

FILE_BYTES = 64 * 2**20


def limit_resources(memory_bytes: int, processes: int, cpu_seconds: int = 0) -> None:
    """Memory, process, file-size, core-dump and (when given) CPU-time limits.

    RLIMIT_DATA rather than RLIMIT_AS: JAX reserves large ranges of address space that it
    never touches, while RLIMIT_DATA counts memory that is actually made writable.
    RLIMIT_NPROC counts every task of the user (threads included) and is ignored for root,
    which is why a learner child runs as a user id of its own (see `drop_privileges`).
    """
    limits = [
        (resource.RLIMIT_DATA, memory_bytes),
        (resource.RLIMIT_FSIZE, FILE_BYTES),
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
    memory, processes, cpu_seconds = settings[:3]
    limit_resources(memory, processes, cpu_seconds)
    if len(settings) == 5:
        drop_privileges(settings[3], settings[4])
    os.execv(program[0], program)


if __name__ == "__main__":
    main(sys.argv[1:])
