"""`lessonkit verify`: every generated file matches lesson.md, and every record is current."""

from __future__ import annotations

import argparse

from lessonkit.artifacts import find_drift
from lessonkit.catalog import all_lessons, find_lesson
from lessonkit.commands._common import add_lesson_argument, console, marked, quoted
from lessonkit.model import Lesson
from lessonkit.receipts import RecordError, load_record
from lessonkit.scripts import lesson_scripts


def _drift_problems(lesson: Lesson) -> list[str]:
    return [
        f"{quoted(d.path)} is {'missing' if d.reason == 'missing' else 'out of date'}: "
        f"run `lessonkit build {lesson.meta.id}`"
        for d in find_drift(lesson)
    ]


def _record_problems(lesson: Lesson) -> list[str]:
    """Every script's record must exist, be valid, and match lesson.md and the script."""
    problems = []
    for script in lesson_scripts(lesson):
        try:
            load_record(lesson, script)
        except RecordError as exc:
            problems.append(f"{exc.where}: {exc.message}: {exc.fix}")
    return problems


CHECKS = (_drift_problems, _record_problems)


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser, optional=True)


def run(args: argparse.Namespace) -> int:
    out = console()
    lessons = [find_lesson(args.lesson)] if args.lesson else all_lessons()
    problems = [p for lesson in lessons for check in CHECKS for p in check(lesson)]
    for problem in problems:
        out.print(marked("bad", problem))
    if problems:
        out.print(f"verify: {len(problems)} problem(s)")
        return 1
    names = ", ".join(lesson.meta.id for lesson in lessons)
    out.print(marked("ok", f"verify: {names} up to date (generated files and records)"))
    return 0
