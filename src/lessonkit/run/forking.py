"""Whether learner children can be forks of a starter here (`run/starter.py`), or must each
start from scratch.

A fork needs, besides Linux, `SO_PASSCRED`, to learn a fork's id from the kernel; where it
is missing every child starts from scratch (`run/confined_child.py`, the way macOS grades)
and the command says so once (`Isolation.note`). Process descriptors (`pidfd_open`,
`pidfd_send_signal`) let the parent stop a fork itself, never reaching a reused id; where
they are missing (gVisor, a TPU VM's sandbox, answers ENOSYS; a seccomp filter may answer
EPERM) the starter stops its own forks instead (`pidfds`), which is as safe: a process id
cannot be reused before its parent reaps it. Each call is tried once per process.
"""

from __future__ import annotations

import functools
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence

FORKING = sys.platform.startswith("linux") and hasattr(os, "pidfd_open")
"""Whether learner children may be forks of a starter at all: Linux only (namespaces,
process descriptors, SO_PASSCRED); elsewhere each child is started from scratch."""


def missing_call(calls: Sequence[tuple[str, Callable[[], object]]]) -> str:
    """The first of `calls` (name, a trial of it) that fails here, with the kernel's words,
    e.g. ``pidfd_open ([Errno 38] Function not implemented)``; empty when all work."""
    for name, trial in calls:
        try:
            trial()
        except OSError as exc:
            return f"{name} ({exc})"
    return ""


def _pidfd_signal() -> None:
    """pidfd_open and pidfd_send_signal (signal 0) on this process."""
    handle = os.pidfd_open(os.getpid())
    try:
        signal.pidfd_send_signal(handle, 0)
    finally:
        os.close(handle)


def _pass_credentials() -> None:
    """A SEQPACKET socket pair whose receiver gets the sender's credentials."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with mine, theirs:
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)


PIDFD_CALLS: tuple[tuple[str, Callable[[], object]], ...] = (
    ("pidfd_open", lambda: os.close(os.pidfd_open(os.getpid()))),
    ("pidfd_send_signal", _pidfd_signal),
)
FORK_CALLS: tuple[tuple[str, Callable[[], object]], ...] = (("SO_PASSCRED", _pass_credentials),)


@functools.cache
def pidfds() -> bool:
    """Whether the parent can stop a fork through process descriptors (else the starter
    stops it, `run/starter.py`)."""
    return FORKING and not missing_call(PIDFD_CALLS)


@functools.cache
def fork_problem() -> str:
    """Why children are started from scratch although this is Linux, in one sentence (empty:
    they are forks of a starter, or this is not Linux, where they never are)."""
    if not FORKING:
        return ""
    missing = missing_call(FORK_CALLS)
    if not missing:
        return ""
    return (
        f"Each grading child starts Python and JAX afresh, more slowly: the system call "
        f"{missing} that forking children from one started process needs is not available here."
    )


def forks_children() -> bool:
    """Whether learner children are forks of a starter here (else each starts afresh)."""
    return FORKING and not fork_problem()
