"""Grades in the files learning-management systems import.

- `canvas`: the layout of Canvas's gradebook export, which its import reads: `Student, ID,
  SIS User ID, SIS Login ID, Section`, then one column per lesson, named by its title.
- `moodle`: `Email address` (the identifier Moodle's CSV grade import maps), then one column
  per lesson title.
- `csv`: one row per student and task, for a spreadsheet or another tool.

Every cell goes through `csv_cell`, so a name or message that starts with `=` reaches a
spreadsheet as text, never as a formula.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Literal

from lessonkit.course.gradebook import (
    Attempt,
    CourseTable,
    Policy,
    attempt_counts,
    counting,
)
from lessonkit.errors import UsageError
from lessonkit.lesson.text import csv_cell

Export = Literal["canvas", "moodle", "csv"]
EXPORTS: tuple[Export, ...] = ("canvas", "moodle", "csv")


def _points(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _write(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([[csv_cell(cell) for cell in row] for row in rows])
    return buffer.getvalue()


def canvas_csv(table: CourseTable) -> str:
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    rows = [header + [c.title for c in table.lessons]]
    for row in table.rows:
        s = row.student
        who = [s.name or s.id, s.lms_id, s.sis_user_id or s.id, s.sis_login_id or s.email]
        rows.append(who + [s.section] + [_points(p) for p in row.points])
    return _write(rows)


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
    rows += [[row.student.email] + [_points(p) for p in row.points] for row in table.rows]
    return _write(rows)


def tasks_csv(attempts: Sequence[Attempt], policy: Policy) -> str:
    """`student,lesson,task,status,points,max_points,attempts`, from each counting attempt."""
    counts = attempt_counts(attempts)
    rows = [["student", "lesson", "task", "status", "points", "max_points", "attempts"]]
    chosen = counting(attempts, policy)
    for key in sorted(chosen):
        attempt = chosen[key]
        for task in attempt.tasks:
            rows.append(
                [
                    attempt.student,
                    attempt.lesson,
                    task.task,
                    task.status,
                    _points(task.points),
                    _points(task.max_points),
                    str(counts[key]),
                ]
            )
    return _write(rows)


def export(kind: Export, table: CourseTable, attempts: Sequence[Attempt]) -> str:
    """The text of one export; `table` is made from `attempts`."""
    if kind == "canvas":
        return canvas_csv(table)
    if kind == "moodle":
        return moodle_csv(table)
    return tasks_csv(attempts, table.policy)
