"""What a child that runs learner code becomes before it runs any: its limits, its user
and, for a fork of the starter, its namespaces and folders; one record for both sides.

The parent builds a `Confinement` (`run/starter.py` for a fork, `run/confined_child.py`
for a child started from scratch) and sends it as JSON; the starter's fork
(`run/starter_main.py`, `run/isolate.py`) and `run/confine.py` read it back with
`Confinement.from_line`, strictly. Standard library only: both load it by path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .codec import decode, encode, from_line, to_line

Mode = Literal["privileged", "userns", "own-root", "none"]
"""How a fork isolates itself: a privileged sandbox (the grader is root), a sandbox in a
user namespace (an ordinary user), its own namespaces and view of the files where no
sandbox could start but the grader is root (`run/isolate.py`), or no namespaces of its own
(a child started inside bubblewrap, or a host that allows no namespaces at all)."""


@dataclass(frozen=True)
class Confinement:
    """What one child becomes; sent by the parent with each fork request, or given to
    `run/confine.py` before the program it starts."""

    mode: Mode
    memory: int
    file_bytes: int
    processes: int
    """RLIMIT_NPROC, 0 for none (the trusted reference, the starter)."""
    scratch_bytes: int
    uid: int | None = None
    """The user the child becomes (a fresh id wherever the grader is root); None keeps the
    starter's user."""
    gid: int | None = None
    keep: tuple[str, ...] = ()
    """In a sandbox, the paths under /tmp it binds (the Python installation, the child's
    program, the compile cache), bound again on top of the fork's own /tmp, read-only (a
    path inside another comes with its bind: `outermost`); in `own-root` mode, every path
    the child's own root holds."""
    stage: str | None = None
    """In `own-root` mode, the empty folder of the parent's on which the child builds its
    own root; None elsewhere."""
    cache: str | None = None
    """The compile cache, which the starter's sandbox binds writable: the reference fork
    (`trusted`) writes it; every other fork makes it read-only for itself first."""
    trusted: bool = False
    """The reference fork: it runs the lesson's own code only, keeps the starter's user and
    may write `cache`."""
    home: str = "/tmp"
    """The child's working folder: the sandbox's private /tmp, or a scratch folder the
    parent made for it."""
    cpu_seconds: int = 0
    """RLIMIT_CPU for a child started from scratch, 0 for none (a fork's CPU time is the
    grading child's to limit, per request)."""

    def to_line(self) -> bytes:
        """The record as one JSON line: `run/confine.py`'s first argument."""
        return to_line(self)

    @classmethod
    def from_line(cls, line: str | bytes) -> Confinement:
        """A confinement line read back, or `codec.ShapeError`."""
        return from_line(cls, line)

    def to_message(self) -> dict:
        """The record as a JSON object, for a fork request."""
        return encode(self)

    @classmethod
    def from_message(cls, data: object) -> Confinement:
        """A fork request's confinement read back, or `codec.ShapeError`."""
        return decode(cls, data)

    @property
    def writable(self) -> tuple[str, ...]:
        """What this fork may write besides its own /tmp."""
        return (self.cache,) if self.trusted and self.cache else ()
