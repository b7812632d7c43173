"""`lessonkit build`: render every generated file of each lesson from its lesson.md, then the site.

The site comes last because it shows what the first part writes (the figure, the practice
files) and the execution records of the lesson's scripts, each of which must still match
lesson.md and its script: a stale record stops the site build with the command that renews it.
Before anything is written, the declared numbers must agree with the prose and the code: a
broken one stops the build at its lesson.md line, never at a generated file's.
A generated file edited since the last build is never replaced unless `--force` says so.
"""

from __future__ import annotations

import argparse

from lessonkit.commands._common import add_lesson_argument, console, quoted
from lessonkit.site.build import INDEX, build


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser, optional=True)
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace generated files even when they were edited by hand (the edits are lost)",
    )


def run(args: argparse.Namespace) -> int:
    out = console()
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
