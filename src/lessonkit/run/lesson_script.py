"""Run a lesson's own script in a child process, as ``python SCRIPT`` would, and keep its facts.

The trusted side of running lesson code (worked examples, going-further scripts, the cells
a notebook's record replays); learner code runs in grading children (`grading_child/`).
Parent side: :func:`run_lesson_script` starts the child (`run.process.start_child`: its own
process group), captures stdout and stderr, stops the whole group when the time runs out,
and reads the JSON report the child left in a private temporary folder (whose path it
passes in ``$LESSONKIT_REPORT``).

Child side: ``python -m lessonkit.run.lesson_script SCRIPT`` runs a script exactly as
``python SCRIPT`` would (as ``__main__``, same stdout, its own traceback on failure) and
reports the environment it ran in to ``$LESSONKIT_REPORT``, adding nothing to the script's
stdout. Without that variable it simply runs the script, so a receipt's command can be
copied and run by hand.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import runpy
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonkit.run.process import start_child

REPORT_ENV = "LESSONKIT_REPORT"
"""Names the file where a child writes its JSON report; never printed, never on stdout."""

BACKEND_UNAVAILABLE = "backend_unavailable"
"""Report key a child sets when JAX has no backend for the requested platform."""


@dataclass(frozen=True)
class ScriptProcess:
    """What happened to one child process."""

    argv: tuple[str, ...]
    started_utc: dt.datetime
    duration_s: float
    exit_code: int | None  # None when it was stopped at the timeout
    timed_out: bool
    stdout: str
    stderr: str
    report: Any  # the JSON the child wrote to $LESSONKIT_REPORT, or None


def _read_report(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_lesson_script(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float
) -> ScriptProcess:
    """Run `argv` to completion or until `timeout_s` passes; never leaves a process behind."""
    with tempfile.TemporaryDirectory(prefix="lessonkit-") as folder:
        report_path = Path(folder) / "report.json"
        started = dt.datetime.now(dt.UTC)
        clock = time.perf_counter()
        process = start_child(argv, cwd=cwd, env={**env, REPORT_ENV: str(report_path)})
        timed_out = False
        try:
            printed = process.communicate(timeout=timeout_s)
            if printed is None:
                timed_out = True
                process.stop(wait_s=None)
                printed = process.communicate()
            stdout, stderr = printed or (b"", b"")
        finally:
            process.stop(wait_s=None)
        duration = time.perf_counter() - clock
        report = _read_report(report_path)
    return ScriptProcess(
        argv=tuple(argv),
        started_utc=started,
        duration_s=duration,
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        stdout=stdout.decode("utf-8", errors="replace"),
        stderr=stderr.decode("utf-8", errors="replace"),
        report=report,
    )


# --------------------------------------------------------------------------- child side


def write_report(data: Any) -> None:
    """Child side: hand JSON to the parent through $LESSONKIT_REPORT (no-op without it)."""
    target = os.environ.get(REPORT_ENV)
    if target:
        Path(target).write_text(json.dumps(data), encoding="utf-8")


def print_user_traceback(exc: BaseException, filename: str) -> None:
    """Print a traceback that starts at the user's own code, as plain ``python FILE`` would."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__)


def _run_script(script: str, args: list[str]) -> int:
    from lessonkit.run.environment import read_environment

    path = Path(script).resolve()
    if not path.is_file():
        print(f"{script}: no such file", file=sys.stderr)
        return 2
    try:
        environment = read_environment()
    except RuntimeError:  # JAX has no backend for the platform in $JAX_PLATFORMS
        platform = os.environ.get("JAX_PLATFORMS") or "default"
        write_report({BACKEND_UNAVAILABLE: platform})
        print(f"JAX found no {platform} backend on this machine", file=sys.stderr)
        return 3
    write_report({"environment": environment.to_dict()})
    sys.argv = [script, *args]
    sys.path[0] = str(path.parent)  # what `python SCRIPT` puts first on the import path
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:  # the script's own failure: show it, as python would
        print_user_traceback(exc, str(path))
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m lessonkit.run.lesson_script SCRIPT [ARG ...]", file=sys.stderr)
        return 2
    return _run_script(argv[0], argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
