"""`lessonkit run`: run a lesson script in a child process, compare it, keep a receipt.

`--script` picks which of the lesson's scripts (`lessonkit.lesson.files`) runs; every script is
run, compared with its own record and recorded (`--record`) by the same code. What runs, what
may be recorded and where each run is kept is `receipts.lesson_runs`; `_lesson_run` shows it.
"""

from __future__ import annotations

import argparse
import time

from lessonkit.commands._common import add_timeout_argument, console, marked, whole_number
from lessonkit.commands._lesson_run import run_lesson
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.files import ALL, DEFAULT, GOING_FURTHER, SCRIPTS
from lessonkit.receipts import DEFAULT_TIMEOUT_S, PLATFORMS
from lessonkit.receipts.lesson_runs import RunOptions


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lesson",
        nargs="+",
        help="lesson id, from `lessonkit list`; several run one after another in one command "
        "(how an accelerator's receipts are recorded for a whole course)",
    )
    names = ", ".join(s.name for s in SCRIPTS)
    parser.add_argument(
        "--script",
        default=DEFAULT.name,
        metavar="NAME",
        help=f"which script to run: {names}, or {ALL} for each in turn "
        f"(default: {DEFAULT.name}; {GOING_FURTHER.name} runs the optional experiments)",
    )
    parser.add_argument(
        "--devices",
        type=whole_number,
        metavar="N",
        help="number of logical CPU devices (sets XLA_FLAGS before JAX starts; cpu only)",
    )
    parser.add_argument(
        "--platform",
        choices=PLATFORMS,
        default="cpu",
        help="the JAX platform to run on, through JAX_PLATFORMS (default: cpu)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="replace the script's record (outputs/execution.json for main) with this run "
        "(authors)",
    )
    add_timeout_argument(parser, DEFAULT_TIMEOUT_S, "stop the run after S seconds", metavar="S")


def _options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(args.script, args.record, args.platform, args.devices, args.timeout)


def run(args: argparse.Namespace) -> int:
    lessons = [find_lesson(lesson_id) for lesson_id in dict.fromkeys(args.lesson)]
    out, options = console(), _options(args)
    if len(lessons) == 1:
        return 0 if run_lesson(out, lessons[0], options) else 1
    timings = []
    for index, lesson in enumerate(lessons):
        if index:
            out.print()
        out.rule(lesson.meta.id, align="left")
        started = time.monotonic()
        passed = run_lesson(out, lesson, options)
        timings.append((lesson.meta.id, passed, time.monotonic() - started))
    out.print()
    for lesson_id, passed, seconds in timings:
        out.print(marked("ok" if passed else "bad", f"{lesson_id}: {seconds:.1f} s wall"))
    passed = sum(p for _, p, _ in timings)
    out.print(f"{passed} of {len(lessons)} lessons passed")
    return 0 if passed == len(lessons) else 1
