"""`lessonkit autograder`: a Gradescope autograder bundle for a lesson, and its run there.

`--output autograder.zip` writes the bundle (`lessonkit.course.autograder`); `--run`, which
the bundle's `run_autograder` calls, grades the file in `submission/` under `--root`
(default `$AUTOGRADER_ROOT`, else `/autograder`) and writes `results/results.json`.
"""

from __future__ import annotations

import argparse
import os
from functools import partial
from pathlib import Path

from rich.text import Text

from lessonkit.commands._common import (
    add_lesson_argument,
    add_timeout_argument,
    console,
    limits_from,
    write_output,
)
from lessonkit.course.autograder import bundle_zip, run_autograder
from lessonkit.errors import UsageError
from lessonkit.lesson.catalog import find_lesson, repo_root
from lessonkit.run.limits import DEFAULT_LIMITS
from lessonkit.settings import grading_settings


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("--output", metavar="FILE", help="the bundle to write (autograder.zip)")
    parser.add_argument(
        "--run",
        action="store_true",
        help="grade the submission in Gradescope's layout and write results/results.json",
    )
    parser.add_argument(
        "--root", metavar="DIR", help="with --run: the autograder folder (default: /autograder)"
    )
    add_timeout_argument(
        parser, DEFAULT_LIMITS.timeout, "with --run: time limit for the submission"
    )


def run(args: argparse.Namespace) -> int:
    if args.run == bool(args.output):
        raise UsageError(
            "give either --output FILE (write the bundle) or --run (grade inside it)",
            fix="lessonkit autograder LESSON --output autograder.zip",
        )
    if args.root and not args.run:
        raise UsageError("--root only applies to --run", fix="add --run, or leave out --root")
    lesson = find_lesson(args.lesson)
    if args.run:
        root = Path(args.root or os.environ.get("AUTOGRADER_ROOT") or "/autograder")
        settings = partial(  # chosen inside, where a refusal becomes the results
            grading_settings,
            os.environ,
            limits=limits_from(args),
            compile_cache=False,
        )
        results = run_autograder(lesson, root, settings)
        console().print(Text(f"Score {results['score']:g}. {results['output']}"))
        return 0
    data = bundle_zip(lesson, repo_root())
    write_output(args.output, data, f" ({len(data) // 1024} KiB): upload it to Gradescope.")
    return 0
