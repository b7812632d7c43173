"""Grades in the files learning-management systems import: one row of `FORMATS` per format.

- `canvas`: Canvas's gradebook export layout (`Student, ID, SIS User ID, SIS Login ID,
  Section`, a column per lesson, a "Points Possible" row of the required tasks' maximum);
  roster columns left empty stay empty, so Canvas matches the student by another.
- `moodle`: `Email address`, then a column per lesson title.
- `csv`: one row per student and task.

A name without a row is an error. Every file is written by `csv_text` (no formulas, no bidi
controls), and `canvas_student` keeps a student's cell from matching /Points Possible/,
which Canvas would read as the maximums row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lessonkit.course.csv_input import read_csv
from lessonkit.course.gradebook import (
    Attempt,
    CourseTable,
    Policy,
    attempt_counts,
    counting,
)
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.text import csv_text, number_cell

Export = Literal["canvas", "moodle", "csv"]
Need = Literal["course table", "attempts", "canvas assignments"]
"""What an export is made from: the course table (one row per student, one column per
lesson), the counting attempts task by task, the Canvas assignments of
`--canvas-assignments`."""


CANVAS_POINTS_POSSIBLE = "    Points Possible"
"""The Student cell of the second row of Canvas's export (with its four leading spaces)."""
_POINTS_POSSIBLE = re.compile(r"(points\s*)(possible)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def canvas_student(name: str) -> str:
    """`name` as a Student cell Canvas reads as a student's: where it holds the words
    "Points Possible" (in any case and spacing, to be safe), an invisible word joiner goes
    before "Possible", so that Canvas's /Points Possible/ does not match it and the name
    still shows as it is. Canvas matches the row's student by its ID and SIS columns."""
    return _POINTS_POSSIBLE.sub(lambda found: found[1] + WORD_JOINER + found[2], name)


def canvas_csv(table: CourseTable, assignments: Mapping[str, str] | None = None) -> str:
    """`assignments` maps a lesson id to an existing Canvas assignment's id, so that the
    import updates that assignment instead of creating one."""
    mapped = assignments or {}
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    titles = [
        f"{c.title} ({mapped[c.lesson]})" if c.lesson in mapped else c.title for c in table.lessons
    ]
    rows = [header + titles]
    rows.append(
        [CANVAS_POINTS_POSSIBLE, "", "", "", ""]
        + [number_cell(c.max_points) for c in table.lessons]
    )
    for row in table.rows:
        s = row.student
        who = [canvas_student(s.name or s.id), s.lms_id, s.sis_user_id, s.sis_login_id, s.section]
        rows.append(who + [number_cell(p) for p in row.points])
    return csv_text(rows)


def read_canvas_assignments(path: Path) -> dict[str, str]:
    """`--canvas-assignments FILE`: a CSV `lesson,assignment_id` (Canvas's number for the
    assignment, the digits in its address)."""
    rows = read_csv(
        path,
        "the Canvas assignments",
        ("lesson", "assignment_id"),
        fix="its first line must be lesson,assignment_id; then a lesson id and a number",
    )
    mapped: dict[str, str] = {}
    for line, row in rows:
        lesson = (row.get("lesson") or "").strip()
        number = (row.get("assignment_id") or "").strip()
        if not lesson or not (number.isascii() and number.isdigit()):
            raise UsageError(
                f"{shown(path)}:{line}: an assignment id is Canvas's number for it, got {number!r}"
            )
        if lesson in mapped:
            raise UsageError(f"{shown(path)}:{line}: the lesson {lesson!r} appears twice")
        mapped[lesson] = number
    return mapped


def moodle_csv(table: CourseTable) -> str:
    missing = [row.student.id for row in table.rows if not row.student.email]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise UsageError(
            f"Moodle matches students by email address, and {len(missing)} student(s) have "
            f"none: {shown}",
            fix="give --roster a roster (id,name,email) that names every student",
        )
    rows = [["Email address"] + [c.title for c in table.lessons]]
    rows += [[row.student.email] + [number_cell(p) for p in row.points] for row in table.rows]
    return csv_text(rows)


def tasks_csv(attempts: Sequence[Attempt], policy: Policy) -> str:
    """`student,lesson,task,optional,status,points,max_points,attempts`, from each counting
    attempt; an optional task's row has its own maximum (its points are extra credit)."""
    counts = attempt_counts(attempts)
    rows = [["student", "lesson", "task", "optional", "status", "points", "max_points", "attempts"]]
    chosen = counting(attempts, policy)
    for key in sorted(chosen):
        attempt = chosen[key]
        for task in attempt.tasks:
            rows.append(
                [
                    attempt.student,
                    attempt.lesson,
                    task.task,
                    "yes" if task.optional else "no",
                    task.status,
                    number_cell(task.points),
                    number_cell(task.max_points),
                    str(counts[key]),
                ]
            )
    return csv_text(rows)


@dataclass(frozen=True)
class ExportData:
    """Everything an export may be made from; each reads what its row `needs`."""

    table: CourseTable
    attempts: Sequence[Attempt]
    canvas_assignments: Mapping[str, str] | None = None


@dataclass(frozen=True)
class ExportFormat:
    """One export: its name (`--export NAME`), what it needs, and its function."""

    name: Export
    needs: frozenset[Need]
    write: Callable[[ExportData], str]


FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat(
        "canvas",
        frozenset({"course table", "canvas assignments"}),
        lambda data: canvas_csv(data.table, data.canvas_assignments),
    ),
    ExportFormat("moodle", frozenset({"course table"}), lambda data: moodle_csv(data.table)),
    ExportFormat(
        "csv",
        frozenset({"attempts", "course table"}),  # the table's policy picks the attempts
        lambda data: tasks_csv(data.attempts, data.table.policy),
    ),
)
EXPORTS: tuple[Export, ...] = tuple(f.name for f in FORMATS)


def export_format(name: str) -> ExportFormat:
    """The row of the export `name`.

    Raises:
        UsageError: no export is named so.
    """
    for row in FORMATS:
        if row.name == name:
            return row
    raise UsageError(
        f"there is no export named {name!r}", fix=f"choose one of: {', '.join(EXPORTS)}"
    )


def export(
    kind: Export,
    table: CourseTable,
    attempts: Sequence[Attempt],
    canvas_assignments: Mapping[str, str] | None = None,
) -> str:
    """The text of one export; `table` is made from `attempts`."""
    return export_format(kind).write(ExportData(table, attempts, canvas_assignments))
