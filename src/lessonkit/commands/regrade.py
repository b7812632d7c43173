"""`lessonkit regrade`: grade a lesson's kept attempts again with today's lesson.

Each regrade is a new grading in the gradebook, never an overwrite (`lessonkit.course.regrade`),
graded as a batch of the gradebook's kept bytes (`grade.batches.lifecycle.grade_kept`);
the command prints how many counting attempts were graded under an older grading fingerprint,
before and after, and whose counting points changed.
"""

from __future__ import annotations

import argparse
import os

from rich.text import Text

from lessonkit import __version__
from lessonkit.commands._batch import BatchProgress
from lessonkit.commands._common import (
    add_lesson_argument,
    add_run_as_me_argument,
    add_timeout_argument,
    console,
    limits_from,
    seed_number,
    whole_number,
)
from lessonkit.commands._course import add_policy_argument
from lessonkit.course.batch_gradebook import existing_gradebook
from lessonkit.course.gradebook import utc_stamp
from lessonkit.course.regrade import keep_regrades, regrade_items, regrade_targets
from lessonkit.grade.batches import KeptBytes, grade_kept, grading_fingerprint, lesson_kind, short
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.text import safe_name
from lessonkit.run.limits import DEFAULT_LIMITS
from lessonkit.settings import grading_settings


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("--gradebook", required=True, metavar="FILE", help="the course gradebook")
    parser.add_argument("--student", metavar="ID", help="regrade only this student's attempts")
    add_policy_argument(parser, "which attempt's points to compare")
    parser.add_argument("--jobs", type=whole_number, metavar="N", help="files graded at once")
    parser.add_argument("--seed", type=seed_number, metavar="N", help="the input sets' seed")
    add_timeout_argument(parser, DEFAULT_LIMITS.timeout, "time limit per file")
    add_run_as_me_argument(parser)


def run(args: argparse.Namespace) -> int:
    lesson = find_lesson(args.lesson)
    settings = grading_settings(
        os.environ,
        limits=limits_from(args),
        batch=True,
        allow_unsandboxed=args.run_submissions_as_me,
    )
    # the gradebook holds every student's bytes: no sandbox is shown it (run/import_binds.py)
    settings = settings.guarding([args.gradebook])
    out = console()
    progress = console(stderr=True)
    if settings.isolation.note:
        progress.print(Text(settings.isolation.note, style="yellow"))
    fingerprint = grading_fingerprint(lesson)
    kind = lesson_kind(lesson, jobs=args.jobs or os.cpu_count(), settings=settings)
    with existing_gradebook(args.gradebook) as book:
        book.check_writable()  # before anything is graded
        todo = regrade_targets(book, lesson, args.student)
        batch = KeptBytes(regrade_items(book, todo), seed=args.seed)
        with BatchProgress(progress) as bar:
            graded = grade_kept(kind, batch, bar.finished, on_start=bar.started)
        result = keep_regrades(
            book,
            lesson,
            todo,
            graded.entries,
            policy=args.policy,
            toolkit=__version__,
            fingerprint=fingerprint,
            graded_utc=utc_stamp(),
        )
    out.print(
        Text(
            f"Regraded {result.regraded} attempt(s) of {lesson.meta.id} with revision "
            f"{lesson.meta.revision}, grading fingerprint {short(fingerprint)} (input seed "
            f"{result.seed}). Counting attempts graded under an older fingerprint: "
            f"{result.older_before} before, {result.older_after} now."
        )
    )
    if not result.changes:
        out.print(Text(f"No student's points changed ({args.policy} attempt counts)."))
    for change in result.changes:
        before = "-" if change.before is None else f"{change.before:g}"
        after = "-" if change.after is None else f"{change.after:g}"
        out.print(Text(f"  {safe_name(change.student)}: {before} -> {after}"))
    if result.not_graded:
        names = ", ".join(safe_name(name) for name in result.not_graded)
        out.print(
            Text(
                f"Not graded: grader failure on {names}; their earlier gradings stay. "
                "Run the same regrade again.",
                style="yellow",
            )
        )
        return 1
    return 0
