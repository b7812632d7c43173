"""What a child that runs learner code may use: the one place the grader's limits live.

Every limit of a confined child (a grading child, a whole script of a phase project) is a
field of `Limits`, and its default is the grader's: a developer who changes a default changes
it here, and an instructor who needs another changes it per command (`--memory`, `--timeout`
of `lessonkit check` and `lessonkit project`). Where each is applied:

- in the child, before any learner code runs (`run/confine.py`): `memory` (RLIMIT_DATA),
  `file_bytes` (RLIMIT_FSIZE), the task count (RLIMIT_NPROC, under a user id of the child's
  own) and, for a whole script, CPU time;
- by the sandbox (`run/sandbox.py`): `scratch_bytes` of private `/tmp`, and, as root where
  cgroup v1 is writable, one cgroup per child that caps memory (`memory` plus
  `cgroup_margin`), tasks (`pids.max`) and CPU share (`cpu.shares`) of all its processes
  together, forks included;
- by the parent: `timeout` and `grace` (the deadline it kills at), `reference_timeout`, and a
  whole script's working folder (`folder_bytes`, `folder_entries`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

MiB = 2**20
GiB = 2**30
MIN_MEMORY = 512 * MiB
"""Below this, JAX itself cannot start in a grading child (it needs about 300 MiB)."""

_SIZE = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[KMGT]?)(?:i?B)?", re.IGNORECASE)
_UNITS = {"": 1, "K": 2**10, "M": MiB, "G": GiB, "T": 2**40}


@dataclass(frozen=True)
class Limits:
    """The limits of one confined child; the defaults are what `lessonkit check` gives."""

    memory: int = 2 * GiB
    """Bytes of data memory each process of the child may make writable (RLIMIT_DATA, not
    RLIMIT_AS: JAX reserves large ranges of address space that it never touches)."""
    cgroup_margin: int = 512 * MiB
    """Added to `memory` for the cgroup that holds all the child's processes: the
    interpreter, the libraries mapped in and the page cache are charged there too."""
    file_bytes: int = 64 * MiB
    """The largest file the child may write (RLIMIT_FSIZE)."""
    scratch_bytes: int = 64 * MiB
    """The size of the sandbox's private `/tmp`, a tmpfs."""
    folder_bytes: int = 256 * MiB
    """A whole script's working folder, all files together; the run is stopped past it."""
    folder_entries: int = 1_000
    """Files and folders a whole script may leave in its working folder."""
    timeout: float = 60.0
    """Seconds a graded file's cells (or one run of a project script) may take."""
    grace: float = 3.0
    """Seconds after the child's own alarm before the parent kills it."""
    reference_timeout: float = 300.0
    """Seconds the trusted reference child has to start and run the lesson's own code."""
    tasks: int = 128
    """Processes and threads a child may have besides `tasks_per_cpu` for each CPU: room
    for JAX's threads, not for a fork bomb (RLIMIT_NPROC, and the cgroup's `pids.max`)."""
    tasks_per_cpu: int = 4
    """More tasks for each CPU of the machine: JAX starts a thread pool as wide as the CPUs."""
    children: int = 1
    """Children of one grader that may run at once. Without a user id of their own (no
    sandbox) RLIMIT_NPROC counts all their tasks together, so each gets room for them all."""
    cpu_weight: int = 100
    """The child's CPU weight in cgroup v2 units (100: as much as one ordinary process;
    cgroup v1 `cpu.shares` = weight * 1024 / 100). All its processes share it, so a file
    that starts a hundred busy processes slows itself, not the other files."""

    def with_options(self, *, memory: int | None = None, timeout: float | None = None) -> Limits:
        """These limits with the memory and time an instructor gave (None: keep)."""
        changes: dict[str, float] = {}
        if memory is not None:
            changes["memory"] = memory
        if timeout is not None:
            changes["timeout"] = timeout
        return replace(self, **changes)

    @property
    def cgroup_memory(self) -> int:
        """The memory cap of the child's cgroup: all its processes together."""
        return self.memory + self.cgroup_margin

    def task_cap(self) -> int:
        """Tasks one child may have (`pids.max` of its cgroup)."""
        return self.tasks + self.tasks_per_cpu * (os.cpu_count() or 1)

    @property
    def cpu_shares(self) -> int:
        """`cpu_weight` in cgroup v1 units (1024 per ordinary process)."""
        return max(2, self.cpu_weight * 1024 // 100)

    @property
    def cpu_seconds(self) -> int:
        """RLIMIT_CPU of a whole script (`cpu_allowance` of its time limit)."""
        return int(cpu_allowance(self.timeout))


def cpu_allowance(seconds: float) -> float:
    """CPU seconds a run of `seconds` may use: twice its time and ten seconds, so that code
    which spins in C, where no alarm reaches, still ends. The grading child gets this number
    with each request and adds it to the CPU it has used already."""
    return seconds * 2 + 10


DEFAULT_LIMITS = Limits()
"""The grader's limits when nobody chose others."""


def parse_size(text: str) -> int:
    """Bytes from `2G`, `512M`, `1.5GiB` or a plain number of bytes (powers of 1024).

    Raises ValueError, whose message says what is accepted, for anything else.
    """
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a size: give a number with K, M, G or T (e.g. 2G)")
    return int(float(match["number"]) * _UNITS[match["unit"].upper()])


def shown_size(size: int) -> str:
    """A size as an instructor would type it: `2G`, `512M`, else bytes."""
    for unit in ("T", "G", "M", "K"):
        if size >= _UNITS[unit] and size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)
