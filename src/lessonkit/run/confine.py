"""Limits for a process about to run learner code, and a launcher that applies them.

Run by path, never imported from lessonkit (it may run inside the sandbox, which sees only
the files bound into it): `python -I confine.py CONFINEMENT -- PROGRAM ARG...` applies the
limits and the user of CONFINEMENT (a `Confinement` record as one JSON line, from
`lessonkit/grading_child/confinement.py`, which it loads by path with its folder) to itself and then
becomes PROGRAM, so every child that runs learner code (the grading child, a learner's
whole script) starts already confined. The parent writes the record
(`run/confined_child.py`), its numbers from `run/limits.py`.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import resource
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD_FOLDER = os.path.join(os.path.dirname(HERE), "grading_child")
"""`lessonkit/grading_child/`: where the `Confinement` record and its codec are declared."""


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
    """Become an unprivileged user when started as root: a user id of our own, inside the
    sandbox or without one."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("lessonkit confine: could not drop privileges")


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None) -> None:
    """Be killed (SIGKILL) when the thread that started this process ends, on Linux; exit at
    once when `parent` (None: not checked) has ended already.

    A grader killed with SIGKILL cannot stop its children, and a child outside the sandbox
    (whose --die-with-parent does this) ran on for its whole file: on a gVisor host a
    resumed batch's first children then found the user's task limit taken by the killed
    run's threads and aborted (`LLVM ERROR: pthread_create failed: Resource temporarily
    unavailable`), issue 51. The kernel clears this on a change of user, so it is set after
    `drop_privileges`.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent ended before the signal was set


def limit_to(confinement) -> None:
    """The limits of a `Confinement` record (`limit_resources`)."""
    limit_resources(
        confinement.memory, confinement.file_bytes, confinement.processes, confinement.cpu_seconds
    )


def read_confinement(line: str):
    """The parent's `Confinement` record, read strictly by its own codec: the child's folder
    loaded by path as the package `lessonkit_child`, as the grading child loads it."""
    if "lessonkit_child" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "lessonkit_child_main", os.path.join(CHILD_FOLDER, "main.py")
        )
        main = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(main)
        main.load_child_package()
    from lessonkit_child.confinement import Confinement

    return Confinement.from_line(line)


def main(argv: list[str]) -> None:
    """Apply the confinement `argv` starts with, then exec the program after `--`."""
    parent = os.getppid()  # the grader (or the sandbox's first process) that started us
    split = argv.index("--")
    (line,), program = argv[:split], argv[split + 1 :]
    confinement = read_confinement(line)
    limit_to(confinement)
    os.umask(0o022)  # what the trusted child writes (the compile cache) stays readable by
    # the learner children, which run as user ids of their own (`run/cache_access.py`)
    isolate = None
    if confinement.mode == "own-root":
        isolate = _load_isolate()
        isolate.enter_namespaces(confinement)
        _wait_as_parent_of_pid_one(parent)
        parent = None  # PID 1 of its namespace: its parent's id is not visible
        isolate.private_mounts(confinement)
        os.chdir(confinement.home)
    if confinement.uid is not None:
        drop_privileges(confinement.uid, confinement.gid)
    die_with_parent(parent)  # kept across exec (the program is not set-user-id)
    if isolate is not None:
        isolate.no_way_back()
    os.execv(program[0], program)


def _load_isolate():
    """`isolate.py`, beside this script, loaded by path."""
    spec = importlib.util.spec_from_file_location(
        "lessonkit_isolate", os.path.join(HERE, "isolate.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wait_as_parent_of_pid_one(parent: int) -> None:
    """Fork: the child returns as PID 1 of the new PID namespace (when it ends, the kernel
    ends all it started); this process waits for it and leaves as it left."""
    pid = os.fork()
    if pid == 0:
        return
    die_with_parent(parent)
    _, status = os.waitpid(pid, 0)
    end_like(status)


def end_like(status: int) -> None:
    """Leave with the status a waited-for process ended with, a signal as that signal (the
    process that waits for PID 1 of a namespace: here, and in a fork of the starter)."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        with contextlib.suppress(OSError):  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main(sys.argv[1:])
