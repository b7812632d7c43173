"""`lessonkit build`: render every generated file of each lesson from its lesson.md."""

from __future__ import annotations

import argparse

from lessonkit.artifacts import write_all
from lessonkit.catalog import all_lessons, find_lesson
from lessonkit.commands._common import add_lesson_argument, console, shown


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser, optional=True)


def run(args: argparse.Namespace) -> int:
    out = console()
    lessons = [find_lesson(args.lesson)] if args.lesson else all_lessons()
    for lesson in lessons:
        written = write_all(lesson)
        for path in written:
            out.print(f"wrote {shown(path)}")
        out.print(f"{lesson.meta.id}: {len(written)} file(s) changed, the rest already up to date")
    return 0
