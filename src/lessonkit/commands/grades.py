"""`lessonkit grades`: a course gradebook's grades, printed, as JSON, or exported for an LMS.

Without `--student` it prints the course table (students by lessons, each lesson's points
from the attempt the policy picks, and the total); with `--student ID`, that student's
attempts task by task. `--export canvas|moodle|csv --output FILE` writes what a
learning-management system imports (`lessonkit.course.exports`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lessonkit.commands._common import console, write_output
from lessonkit.commands._course import add_policy_argument
from lessonkit.course.batch_gradebook import existing_gradebook
from lessonkit.course.exports import (
    EXPORTS,
    export,
    export_format,
    read_canvas_assignments,
)
from lessonkit.course.gradebook import (
    Attempt,
    CourseTable,
    attempt_numbers,
    counting,
    course_table,
    older_gradings,
    utc_stamp,
)
from lessonkit.course.grades_json import attempt_json, table_json
from lessonkit.course.roster import read_roster
from lessonkit.errors import LessonkitError, UsageError, shown
from lessonkit.grade.batches import grading_fingerprint, short
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.text import safe_name


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gradebook", required=True, metavar="FILE", help="the course gradebook")
    add_policy_argument(
        parser,
        "which attempt counts: the latest, i.e. the newest submission by submission time "
        "(default), or the best (ties: the newest of the best)",
    )
    parser.add_argument("--student", metavar="ID", help="print this student's attempts")
    parser.add_argument("--json", action="store_true", help="print the grades as JSON for tools")
    parser.add_argument("--export", choices=EXPORTS, help="write grades in an LMS's layout")
    parser.add_argument("--output", metavar="FILE", help="the file --export writes")
    parser.add_argument(
        "--roster", metavar="FILE", help="a class list to keep in the gradebook first"
    )
    parser.add_argument(
        "--canvas-assignments",
        metavar="FILE",
        help="--export canvas: a CSV lesson,assignment_id naming the existing Canvas "
        "assignment each lesson's grades go to (the column becomes 'Title (ID)')",
    )


def with_extra(points: float | None, extra: float) -> str:
    """`9 (+1 extra)`: points over the maximum are always called extra credit."""
    if points is None:
        return "-"
    return f"{points:g} (+{extra:g} extra)" if extra else f"{points:g}"


def _course_view(table: CourseTable) -> Table:
    policy = "newest submission" if table.policy == "latest" else "best attempt"
    view = Table(
        title=f"Course grades (each student's {policy} counts; optional tasks are extra)",
        title_justify="left",
    )
    view.add_column("student")
    for column in table.lessons:
        view.add_column(f"{column.title} (/{column.max_points:g})", justify="right")
    view.add_column(f"total (/{table.max_total:g})", justify="right")
    for row in table.rows:
        view.add_row(
            Text(safe_name(row.student.id)),
            *(Text(with_extra(p, e)) for p, e in zip(row.points, row.extra, strict=True)),
            Text(with_extra(row.total, row.extra_total)),
        )
    return view


def _show_student(
    out: Console,
    student: str,
    attempts: tuple[Attempt, ...],
    numbers: dict[int | None, int],
    chosen: set,
) -> None:
    """Each attempt on a line of its own, then its tasks: narrow enough for any terminal."""
    out.print(Text(f"Attempts of {safe_name(student)}, oldest submission first", style="bold"))
    for attempt in attempts:
        mark = " (counts)" if attempt.id in chosen else ""
        extra = f" (+{attempt.extra_points:g} extra)" if attempt.extra_points else ""
        out.print(
            Text(
                f"\n{attempt.lesson} attempt {numbers[attempt.id]}{mark} · "
                f"{safe_name(attempt.file)} · "
                f"submitted {utc_stamp(attempt.submitted)} · graded {attempt.graded_utc} · "
                f"{attempt.points:g}/{attempt.max_points:g} points{extra} · seed {attempt.seed}"
            )
        )
        view = Table(show_header=True, box=None, padding=(0, 2))
        for name in ("task", "status", "points"):
            view.add_column(name)
        for task in attempt.tasks:
            points = f"{task.points:g}/{task.max_points:g}" + (" extra" if task.optional else "")
            view.add_row(Text(task.task), Text(task.status), Text(points))
        out.print(view)


def _say_older(chosen: Iterable[Attempt], gradebook: str) -> None:
    """How many counting attempts were graded under an older grading fingerprint than their
    lesson's in this repository (lessons it does not have are not judged)."""
    chosen = tuple(chosen)
    now = {}
    for lesson in sorted({a.lesson for a in chosen}):
        with contextlib.suppress(LessonkitError):
            now[lesson] = grading_fingerprint(find_lesson(lesson))
    older = older_gradings(chosen, now)
    for lesson in sorted({a.lesson for a in older}):
        count = sum(a.lesson == lesson for a in older)
        console(stderr=True).print(
            Text(
                f"{count} counting attempt(s) of {safe_name(lesson)} were graded under an older "
                f"grading fingerprint than the lesson's now ({short(now[lesson])}): the lesson's "
                "grading or the grader changed since. Grade them again with: lessonkit regrade "
                f"{safe_name(lesson)} --gradebook {safe_name(gradebook)}",
                style="yellow",
            )
        )


def run(args: argparse.Namespace) -> int:
    if bool(args.export) != bool(args.output):
        raise UsageError("--export and --output go together", fix="give both, or neither")
    if args.export and (args.student or args.json):
        raise UsageError("--export writes the whole course; it takes no --student or --json")
    takes_assignments = args.export and "canvas assignments" in export_format(args.export).needs
    if args.canvas_assignments and not takes_assignments:
        raise UsageError("--canvas-assignments names Canvas assignments", fix="add --export canvas")
    assignments = (
        read_canvas_assignments(Path(args.canvas_assignments)) if args.canvas_assignments else None
    )
    path = Path(args.gradebook)
    roster = read_roster(Path(args.roster)) if args.roster else None
    with existing_gradebook(args.gradebook) as book:
        if roster is not None:
            book.store_roster(roster, utc_stamp())
        attempts = book.attempts()
        students = book.students()
    chosen = {a.id for a in counting(attempts, args.policy).values()}
    _say_older(counting(attempts, args.policy).values(), args.gradebook)
    if args.student:
        mine = tuple(
            sorted(
                (a for a in attempts if a.student == args.student),
                key=lambda a: (a.submitted, a.id or 0),
            )
        )
        if not mine:
            raise UsageError(f"{shown(path)} has no attempt by {args.student!r}")
        numbers = attempt_numbers(attempts)
        if args.json:
            shown_json = [attempt_json(a, numbers[a.id], a.id in chosen) for a in mine]
            print(json.dumps(shown_json, indent=2))
        else:
            _show_student(console(), args.student, mine, numbers, chosen)
        return 0
    table = course_table(attempts, students, args.policy)
    if assignments:
        unknown = sorted(set(assignments) - {c.lesson for c in table.lessons})
        if unknown:
            raise UsageError(
                f"--canvas-assignments names lesson(s) the gradebook has no grades of: "
                f"{', '.join(safe_name(u) for u in unknown)}",
                fix="use the lesson ids `lessonkit grades` shows (a typo would make Canvas "
                "create a new assignment)",
            )
    for sid in table.unrostered:
        console(stderr=True).print(
            Text(
                f"{safe_name(sid)}: has attempts but is not on the roster the gradebook keeps; "
                "left out of the table and the exports",
                style="yellow",
            )
        )
    if args.export:
        content = export(args.export, table, attempts, assignments)
        write_output(args.output, content, f" ({args.export}, {len(table.rows)} students).")
        return 0
    if args.json:
        print(json.dumps(table_json(table), indent=2))
    else:
        console().print(_course_view(table))
    return 0
