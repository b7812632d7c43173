"""Which attempt counts: policies read over the submissions, in the order they were made.

The gradebook keeps every submission; these functions decide when reading which counts
(`counting`), how many there were (`attempt_counts`) and what the course table shows. They
depend only on the submissions and their gradings, never on the order kept, so a late file,
a second batch, a merge or a regrade counts as grading everything at once would.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from lessonkit.course.attempts import Attempt, Policy
from lessonkit.course.roster import Student


def _in_order(attempts: Iterable[Attempt]) -> Iterator[tuple[Attempt, bool]]:
    """Every attempt in submission order (time, then file and sha256, so the order kept never
    matters: `course.intake` keeps no tied submissions), each with whether it is a new
    submission: the very bytes the same student submitted last are the same work handed in
    again (a folder downloaded twice), not a new one.
    """
    ordered = sorted(attempts, key=lambda a: (a.submitted, a.file, a.sha256, a.id or 0))
    last: dict[tuple[str, str], str] = {}
    for attempt in ordered:
        key = (attempt.student, attempt.lesson)
        yield attempt, last.get(key) != attempt.sha256
        last[key] = attempt.sha256


def current(attempts: Iterable[Attempt]) -> tuple[Attempt, ...]:
    """The submissions that count as submissions, in the order they were made; of the same
    work handed in again (`_in_order`), the first stands for the run. Going back to earlier
    bytes after submitting others is a new submission."""
    return tuple(attempt for attempt, new in _in_order(attempts) if new)


def attempt_numbers(attempts: Iterable[Attempt]) -> dict[int | None, int]:
    """Each attempt's number (by its gradebook id) among its student's submissions of its
    lesson, 1 for the first: Ana's second attempt at state-02 is 2, whatever the gradebook's
    row ids. The same work handed in again keeps the number of the submission it repeats."""
    numbers: dict[int | None, int] = {}
    made: dict[tuple[str, str], int] = {}
    for attempt, new in _in_order(attempts):
        key = (attempt.student, attempt.lesson)
        made[key] = made.get(key, 0) + new
        numbers[attempt.id] = made[key]
    return numbers


def counting(attempts: Iterable[Attempt], policy: Policy) -> dict[tuple[str, str], Attempt]:
    """Per (student, lesson), the attempt that counts among those no regrade replaced: the
    newest submission, or the best (ties: the newest of the best)."""
    chosen: dict[tuple[str, str], Attempt] = {}
    for attempt in current(attempts):
        key = (attempt.student, attempt.lesson)
        held = chosen.get(key)
        if held is None or policy == "latest" or attempt.points >= held.points:
            chosen[key] = attempt
    return chosen


def older_gradings(chosen: Iterable[Attempt], fingerprints: dict[str, str]) -> tuple[Attempt, ...]:
    """The attempts among `chosen` graded under another fingerprint than their lesson's
    now (`fingerprints`: lesson id -> its fingerprint; a lesson not in it is not judged)."""
    return tuple(
        a for a in chosen if a.lesson in fingerprints and a.fingerprint != fingerprints[a.lesson]
    )


def attempt_counts(attempts: Iterable[Attempt]) -> dict[tuple[str, str], int]:
    """Per (student, lesson), how many submissions (a regrade is not one)."""
    counts: dict[tuple[str, str], int] = {}
    for attempt in current(attempts):
        key = (attempt.student, attempt.lesson)
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(frozen=True)
class LessonColumn:
    lesson: str
    title: str
    max_points: float


@dataclass(frozen=True)
class CourseRow:
    student: Student
    points: tuple[float | None, ...]
    """Per lesson column, the counting attempt's points (extra included); None where none
    was graded."""
    extra: tuple[float, ...]
    """Per lesson column, how many of those points are extra credit (optional tasks)."""

    @property
    def total(self) -> float:
        return sum(p for p in self.points if p is not None)

    @property
    def extra_total(self) -> float:
        return sum(self.extra)


@dataclass(frozen=True)
class CourseTable:
    """Students by lessons: what `grades` prints and the exports write."""

    policy: Policy
    lessons: tuple[LessonColumn, ...]
    rows: tuple[CourseRow, ...]
    unrostered: tuple[str, ...] = ()
    """Students with attempts whom the gradebook's roster does not list: not in `rows`."""

    @property
    def max_total(self) -> float:
        return sum(c.max_points for c in self.lessons)


def course_table(
    attempts: Sequence[Attempt], students: dict[str, Student], policy: Policy
) -> CourseTable:
    """One row per roster student; without a roster, one per student with an attempt.

    With a roster, attempts kept under another name (graded before the roster was given, or
    of a student since removed from it) are named in `unrostered`, never given a row: an
    export row no learning-management system can match would be a grade posted nowhere.
    """
    lessons: dict[str, LessonColumn] = {}
    for attempt in sorted(attempts, key=lambda a: a.id or 0):  # the latest title and maximum
        lessons[attempt.lesson] = LessonColumn(
            attempt.lesson, attempt.lesson_title, attempt.max_points
        )
    columns = tuple(lessons[k] for k in sorted(lessons))
    chosen = counting(attempts, policy)
    graded = {a.student for a in attempts}
    ids = sorted(students) if students else sorted(graded)
    rows = tuple(
        CourseRow(
            students.get(sid, Student(sid)),
            tuple(
                chosen[(sid, c.lesson)].points if (sid, c.lesson) in chosen else None
                for c in columns
            ),
            tuple(
                chosen[(sid, c.lesson)].extra_points if (sid, c.lesson) in chosen else 0.0
                for c in columns
            ),
        )
        for sid in ids
    )
    unrostered = tuple(sorted(graded - set(students))) if students else ()
    return CourseTable(policy, columns, rows, unrostered)
