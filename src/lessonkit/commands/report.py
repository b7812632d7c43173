"""`lessonkit report`: what the class got wrong in one lesson, as a static HTML page.

The page (`lessonkit.course.class_report`) has, per task, the pass rate, the failures
grouped by the check that found them and the key path they are about, with one message
each, how many submissions students needed, and two plots as inline SVG; and the pairs of
students whose work is alike (`lessonkit.course.similarity`), the most alike shown side by
side with their shared lines marked (`lessonkit.course.pair_view`). It needs no network and
no script.
"""

from __future__ import annotations

import argparse

from lessonkit.commands._common import add_lesson_argument, write_output
from lessonkit.commands._course import (
    add_policy_argument,
    add_similarity_threshold,
    similarity_threshold,
)
from lessonkit.course.batch_gradebook import existing_gradebook
from lessonkit.course.class_report import class_report, render_class_report
from lessonkit.course.pair_view import pair_views
from lessonkit.course.similarity import class_similarity
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.mistakes import declared_mistakes


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("--gradebook", required=True, metavar="FILE", help="the course gradebook")
    parser.add_argument("--output", required=True, metavar="FILE", help="the page to write")
    add_policy_argument(
        parser, "which attempt of each student the pass rates count (default: latest)"
    )
    add_similarity_threshold(
        parser,
        "--similar-threshold",
        "list the pairs of students whose work scores at least X, 0 to 1",
    )
    parser.add_argument(
        "--similar-pairs",
        type=int,
        default=10,
        metavar="N",
        help="show at most N of those pairs side by side (default: 10)",
    )


def run(args: argparse.Namespace) -> int:
    similarity_threshold(args.similar_threshold, "--similar-threshold")
    lesson = find_lesson(args.lesson)
    with existing_gradebook(args.gradebook) as book:
        attempts = book.attempts(lesson=lesson.meta.id)
        similar = class_similarity(lesson, book, args.policy, args.similar_threshold)
        views = pair_views(lesson, similar, book.content, max(args.similar_pairs, 0))
    declared: dict[str, list[str]] = {}
    for mistake in declared_mistakes(lesson):
        declared.setdefault(mistake.task, []).append(mistake.name)
    report = class_report(attempts, lesson.meta.id, args.policy, declared)
    write_output(
        args.output,
        render_class_report(report, similar, views, args.similar_threshold),
        f": {len(report.tasks)} tasks, {report.students} students, "
        f"{report.submissions} submissions, {len(similar.pairs)} pair(s) alike.",
    )
    return 0
