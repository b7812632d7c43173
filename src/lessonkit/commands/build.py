"""`lessonkit build`: render every generated file of each lesson from its lesson.md, then the site.

The site comes last because it shows what the first part writes (the figure, the practice
files) and the execution records of the lesson's scripts, each of which must still match
lesson.md and its script: a stale record stops the site build with the command that renews it.
Before anything is written, the declared numbers must agree with the prose and the code: a
broken one stops the build at its lesson.md line, never at a generated file's.
A generated file edited since the last build is never replaced unless `--force` says so.
`--record` brings a lesson up to date in one command: build, record every script of each
lesson whose records are not current (`lessonkit run ID --script all --record`), build again.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from lessonkit.commands._common import add_lesson_argument, console, quoted
from lessonkit.lesson.catalog import all_lessons, find_lesson
from lessonkit.lesson.files import ALL
from lessonkit.receipts import RecordError, load_records
from lessonkit.receipts.lesson_runs import RunOptions
from lessonkit.site.build import INDEX, build


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
    if args.record:
        try:
            build(args.lesson, force=args.force)
        except RecordError:
            if not _record_stale(out, args.lesson):
                return 1
            out.print()
    done = build(args.lesson, force=args.force)
    for built in done.lessons:
        for path in built.written:
            out.print(f"wrote {quoted(path)}")
        changed = len(built.written)
        out.print(f"{built.lesson}: {changed} file(s) changed, the rest already up to date")
    report = done.site
    out.print(
        f"site: wrote {quoted(report.target)} ({len(report.pages)} lesson page(s), "
        f"{report.file_count} files, {report.total_bytes / 1024:.0f} KiB); open "
        f"{quoted(report.target / INDEX)} or run `lessonkit serve`"
    )
    return 0


def _record_stale(out: Console, lesson_id: str | None) -> bool:
    """`lessonkit run ID --script all --record` for each lesson whose records are not current."""
    from lessonkit.commands.run import run_lesson

    lessons = [find_lesson(lesson_id)] if lesson_id else all_lessons()
    for lesson in lessons:
        try:
            load_records(lesson)
        except RecordError:
            out.print(
                f"recording {lesson.meta.id}: lessonkit run {lesson.meta.id} --script all --record"
            )
            if not run_lesson(out, lesson, RunOptions(script=ALL, record=True)):
                return False
    return True
