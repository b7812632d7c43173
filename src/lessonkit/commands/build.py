"""`lessonkit build`: render every generated file of each lesson from its lesson.md, then the site.

The site comes last because it shows what the first part writes (the figure, the practice
files) and the execution records of the lesson's scripts, each of which must still match
lesson.md and its script. After a code change they do not yet: the build writes the lesson's
files, leaves the previous site as it was and names the next step docs/authoring.md gives
(record, then build again), exiting 0, since that is the order of work, not a mistake.
Before anything is written, the declared numbers must agree with the prose and the code: a
broken one stops the build at its lesson.md line, never at a generated file's.
A generated file edited since the last build is never replaced unless `--force` says so.
`--record` brings a lesson up to date in one command: build, record every script of each
lesson whose records are not current (`lessonkit run ID --script all --record`), build again.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from lessonkit.commands._common import add_lesson_argument, console, show_build, show_lessons
from lessonkit.commands._lesson_run import run_lesson
from lessonkit.lesson.catalog import all_lessons, find_lesson
from lessonkit.lesson.files import ALL
from lessonkit.receipts import RecordError, load_records, record_command
from lessonkit.receipts.lesson_runs import RunOptions
from lessonkit.site.build import Build, build


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser, optional=True)
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace generated files even when they were edited by hand (the edits are lost)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="then record every script of a lesson whose records are not current, and build "
        "again: one command after a code edit",
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    try:
        done: Build | None = build(args.lesson, force=args.force)
    except RecordError:
        if not args.record:
            raise
        done = None  # a record that cannot be read: recording replaces it
    if args.record and (done is None or done.waiting is not None):
        if done is not None:
            show_lessons(out, done)
        if not _record_stale(out, args.lesson):
            return 1
        out.print()
        done = build(args.lesson, force=args.force)
    assert done is not None
    show_build(out, done)
    return 0


def _record_stale(out: Console, lesson_id: str | None) -> bool:
    """`lessonkit run ID --script all --record` for each lesson whose records are not current."""
    lessons = [find_lesson(lesson_id)] if lesson_id else all_lessons()
    for lesson in lessons:
        try:
            load_records(lesson)
        except RecordError:
            out.print(f"\nrecording {lesson.meta.id}: {record_command(lesson)}")
            options = RunOptions(script=ALL, record=True)
            if not run_lesson(out, lesson, options, builds_next=True):
                return False
    return True
