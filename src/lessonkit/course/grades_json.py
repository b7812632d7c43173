"""A gradebook's grades as JSON for tools (`lessonkit grades --json`): the course table, or
one student's attempts task by task. The keys are the command's output format: tools read
them, so a key is added, never renamed."""

from __future__ import annotations

from lessonkit.course.gradebook import Attempt, CourseTable, utc_stamp


def table_json(table: CourseTable) -> dict:
    """The course table: each rostered student's points per lesson (by `table.policy`)."""
    return {
        "policy": table.policy,
        "lessons": [
            {"lesson": c.lesson, "title": c.title, "max_points": c.max_points}
            for c in table.lessons
        ],
        "max_total": table.max_total,
        "not_on_roster": list(table.unrostered),
        "students": [
            {
                "id": row.student.id,
                "name": row.student.name,
                "points": {c.lesson: p for c, p in zip(table.lessons, row.points, strict=True)},
                "extra": {c.lesson: e for c, e in zip(table.lessons, row.extra, strict=True)},
                "total": row.total,
                "extra_total": row.extra_total,
            }
            for row in table.rows
        ],
    }


def attempt_json(attempt: Attempt, number: int, counts: bool) -> dict:
    """One attempt for tools: `attempt` is its number among the student's attempts at the
    lesson (1, 2, ...), `id` its row in the gradebook."""
    return {
        "attempt": number,
        "id": attempt.id,
        "lesson": attempt.lesson,
        "file": attempt.file,
        "sha256": attempt.sha256,
        "seed": attempt.seed,
        "graded_utc": attempt.graded_utc,
        "toolkit": attempt.toolkit,
        "revision": attempt.revision,
        "points": attempt.points,
        "extra_points": attempt.extra_points,
        "max_points": attempt.max_points,
        "submitted_utc": utc_stamp(attempt.submitted),
        "counts": counts,
        "fingerprint": attempt.fingerprint,
        "tasks": [
            {
                "task": t.task,
                "optional": t.optional,
                "status": t.status,
                "points": t.points,
                "max_points": t.max_points,
                "mistake": t.mistake,
            }
            for t in attempt.tasks
        ],
    }
