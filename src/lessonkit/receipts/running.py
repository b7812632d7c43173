"""Running one of a lesson's scripts in a child process, described by a `Receipt`.

The child is `lessonkit.run.lesson_script` (the one way lesson code runs), started from the
repository root with the platform and logical device count the person chose, so the
receipt's command can be pasted to run the same thing again.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
from pathlib import Path

from lessonkit.defaults import DEFAULT_TIMEOUT_S
from lessonkit.errors import LessonkitError, UsageError, shown
from lessonkit.lesson.files import MAIN, Script
from lessonkit.lesson.model import Lesson
from lessonkit.receipts.machine_paths import without_machine_paths
from lessonkit.receipts.schema import SCHEMA, TIMEOUT, Receipt, code_sha256
from lessonkit.receipts.store import PLATFORMS, Platform, script_path
from lessonkit.run.environment import Environment, static_environment
from lessonkit.run.lesson_script import BACKEND_UNAVAILABLE, run_lesson_script
from lessonkit.run.process import child_environment

DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"


class BackendUnavailableError(LessonkitError):
    """JAX in the child found no backend for the requested platform."""


def with_device_count(xla_flags: str, devices: int) -> str:
    """`xla_flags` with the logical CPU device count set to `devices` (other flags kept)."""
    kept = [f for f in xla_flags.split() if not f.startswith(DEVICE_COUNT_FLAG)]
    return " ".join([*kept, f"{DEVICE_COUNT_FLAG}={devices}"])


def _program(root: Path) -> str:
    """The interpreter as a reader of the receipt would type it."""
    executable = Path(sys.executable)
    try:
        return executable.relative_to(root).as_posix()
    except ValueError:
        return executable.name or "python"


def check_options(platform: str, devices: int | None) -> None:
    """Raise UsageError unless `platform` is known and `devices` (if given) applies to it."""
    if platform not in PLATFORMS:
        raise UsageError(
            f"unknown platform {platform!r}", fix=f"choose one of: {', '.join(PLATFORMS)}"
        )
    if devices is not None and platform != "cpu":
        raise UsageError(
            f"--devices sets logical CPU devices; it does not apply to --platform {platform}",
            fix="leave out --devices, or use --platform cpu",
        )


def run_script(
    lesson: Lesson,
    root: Path,
    script: Script = MAIN,
    *,
    platform: Platform = "cpu",
    devices: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Receipt:
    """Run one of the lesson's scripts from `root` in a child process and describe the run.

    Raises:
        UsageError: the script is missing, or the options do not fit together.
        BackendUnavailableError: JAX found no backend for `platform` on this machine.
    """
    check_options(platform, devices)
    path = script_path(lesson, script)
    if not path.is_file():
        raise UsageError(f"{shown(path)} is missing", fix=f"run `lessonkit build {lesson.meta.id}`")
    data = path.read_bytes()
    source = data.decode("utf-8", errors="replace")

    settings = {"JAX_PLATFORMS": platform}
    if devices is not None:
        settings["XLA_FLAGS"] = with_device_count(os.environ.get("XLA_FLAGS", ""), devices)
    relative = Path(os.path.relpath(path, root)).as_posix()
    argv = [sys.executable, "-m", "lessonkit.run.lesson_script", relative]
    env = child_environment("inherit", settings)
    run = run_lesson_script(argv, cwd=root, env=env, timeout_s=timeout_s)

    report = run.report if isinstance(run.report, dict) else {}
    if BACKEND_UNAVAILABLE in report:
        installable = "GPU-enabled" if platform == "gpu" else f"{platform.upper()}-enabled"
        raise BackendUnavailableError(
            f"JAX found no {platform} backend on this machine "
            f"(install a {installable} jax, or use --platform cpu)"
        )
    try:
        environment = Environment.from_dict(report["environment"])
    except (KeyError, ValueError):  # stopped before JAX started: keep what the parent knows
        environment = static_environment()
    command = shlex.join([_program(root), *argv[1:]])
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in settings.items())
    return Receipt(
        schema=SCHEMA,
        lesson=lesson.meta.id,
        script=script.path,
        script_sha256=hashlib.sha256(data).hexdigest(),
        code_sha256=code_sha256(source),
        started_utc=run.started_utc.isoformat(timespec="microseconds"),
        duration_s=round(run.duration_s, 3),
        command=without_machine_paths(f"{assignments} {command}", root),
        exit_code=TIMEOUT if run.timed_out else int(run.exit_code or 0),
        stdout=without_machine_paths(run.stdout, root),
        stderr=without_machine_paths(run.stderr, root),
        environment=environment,
    )
