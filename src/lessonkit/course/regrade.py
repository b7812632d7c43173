"""Grade the kept bytes of a lesson's attempts again, with the lesson as it is today.

After a rubric fix, every kept attempt of the lesson (or one student) is graded again, as a
batch of kept bytes (`grade.batches.lifecycle.grade_kept`), each distinct bytes once, and kept
as a new grading under the lesson's current fingerprint. The result lists whose counting
points changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lessonkit.course.gradebook import (
    Attempt,
    Gradebook,
    Policy,
    attempt_of,
    counting,
    current,
    older_gradings,
)
from lessonkit.errors import UsageError, shown
from lessonkit.grade.batches import BatchEntry, BatchItem
from lessonkit.grade.judging import GradeReport, Scoring
from lessonkit.lesson.model import Lesson


@dataclass(frozen=True)
class Change:
    student: str
    before: float | None
    after: float | None


@dataclass(frozen=True)
class Regrade:
    regraded: int
    seed: int | None
    changes: tuple[Change, ...]
    older_before: int = 0
    """Counting attempts graded under another fingerprint than the lesson's now, before."""
    older_after: int = 0
    """And after (attempts of students not regraded)."""
    not_graded: tuple[str, ...] = ()
    """Attempts the grader failed on: their old grading stays; regrade them again."""


def older_counting(book: Gradebook, lesson: Lesson, fingerprint: str, policy: Policy) -> int:
    """How many of `lesson`'s counting attempts were graded under another fingerprint."""
    chosen = counting(book.attempts(lesson=lesson.meta.id), policy).values()
    return len(older_gradings(chosen, {lesson.meta.id: fingerprint}))


def _points(attempts: tuple[Attempt, ...], lesson: str, policy: Policy) -> dict[str, float]:
    return {s: a.points for (s, lid), a in counting(attempts, policy).items() if lid == lesson}


def regrade_targets(book: Gradebook, lesson: Lesson, student: str | None) -> tuple[Attempt, ...]:
    """The current attempts of `lesson` (of `student`, if given), one per bytes: what a
    regrade grades."""
    todo = tuple(
        a
        for a in current(book.attempts(lesson=lesson.meta.id))
        if student is None or a.student == student
    )
    todo = tuple({a.sha256: a for a in reversed(todo)}.values())[::-1]
    if not todo:
        who = f" by {student!r}" if student else ""
        raise UsageError(f"{shown(book.path)} has no attempt of {lesson.meta.id}{who}")
    return todo


def regrade_items(book: Gradebook, todo: tuple[Attempt, ...]) -> tuple[BatchItem, ...]:
    """The kept bytes of `todo` (`regrade_targets`), each named by its attempt's number, to
    be graded again (`grade.batches.lifecycle.KeptBytes`).

    Kept bytes that no longer hash to their attempt's sha256 are refused before anything is
    graded: a gradebook changed by hand cannot pass other bytes off as a student's.
    """
    items = []
    for attempt in todo:
        data = book.content(attempt.sha256)
        if hashlib.sha256(data).hexdigest() != attempt.sha256:
            raise UsageError(
                f"{shown(book.path)}: the bytes kept for gradebook row {attempt.id} "
                f"({attempt.student}, {attempt.file}) do not hash to its sha256, so they "
                "are not the bytes that student submitted",
                fix="restore the gradebook from a backup; nothing was regraded",
            )
        # Each under its attempt's number: two students' alice.py never meet.
        name = Path(str(attempt.id)) / PurePosixPath(attempt.file).name
        items.append(BatchItem(name, data))
    return tuple(items)


def keep_regrades(
    book: Gradebook,
    lesson: Lesson,
    todo: tuple[Attempt, ...],
    entries: Sequence[BatchEntry[GradeReport]],
    *,
    policy: Policy,
    toolkit: str,
    fingerprint: str,
    graded_utc: str,
) -> Regrade:
    """Keep each entry (the regrade of `todo`'s attempt in its place) as a new grading that
    takes the old one's place; whose counting points changed, before and after."""
    before = _points(book.attempts(lesson=lesson.meta.id), lesson.meta.id, policy)
    older_before = older_counting(book, lesson, fingerprint, policy)
    scoring = Scoring.of(lesson)
    made = [
        attempt_of(
            entry.report,
            scoring,
            student=attempt.student,
            lesson_title=lesson.meta.title,
            revision=lesson.meta.revision,
            toolkit=toolkit,
            file=attempt.file,
            data=entry.data if entry.data is not None else book.content(attempt.sha256),
            submitted=attempt.submitted,
            graded_utc=graded_utc,
            fingerprint=fingerprint,
            regrade_of=attempt.id,
        )
        for attempt, entry in zip(todo, entries, strict=True)
        if entry.report.not_graded is None  # the grader failed: the old grading stays
    ]
    book.add_attempts(made)
    after = _points(book.attempts(lesson=lesson.meta.id), lesson.meta.id, policy)
    changes = tuple(
        Change(s, before.get(s), after.get(s))
        for s in sorted(set(before) | set(after))
        if before.get(s) != after.get(s)
    )
    return Regrade(
        len(made),
        entries[0].report.seed if entries else None,
        changes,
        older_before,
        older_counting(book, lesson, fingerprint, policy),
        tuple(e.report.file for e in entries if e.report.not_graded is not None),
    )
