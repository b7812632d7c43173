"""`lessonkit report`: what the class got wrong in one lesson, as a static HTML page.

The page (`lessonkit.course.class_report`) has, per task, the pass rate, the failures
grouped by the check that found them and the key path they are about, with one message
each, how many submissions students needed, and two plots as inline SVG; it needs no
network and no script.
"""

from __future__ import annotations

import argparse

from lessonkit.commands._common import add_lesson_argument, write_output
from lessonkit.commands._course import add_policy_argument, existing_gradebook
from lessonkit.course.class_report import class_report, render_class_report
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.mistakes import declared_mistakes


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("--gradebook", required=True, metavar="FILE", help="the course gradebook")
    parser.add_argument("--output", required=True, metavar="FILE", help="the page to write")
    add_policy_argument(
        parser, "which attempt of each student the pass rates count (default: latest)"
    )


def run(args: argparse.Namespace) -> int:
    lesson = find_lesson(args.lesson)
    with existing_gradebook(args.gradebook) as book:
        attempts = book.attempts(lesson=lesson.meta.id)
    declared: dict[str, list[str]] = {}
    for mistake in declared_mistakes(lesson):
        declared.setdefault(mistake.task, []).append(mistake.name)
    report = class_report(attempts, lesson.meta.id, args.policy, declared)
    write_output(
        args.output,
        render_class_report(report),
        f": {len(report.tasks)} tasks, {report.students} students, "
        f"{report.submissions} submissions.",
    )
    return 0
