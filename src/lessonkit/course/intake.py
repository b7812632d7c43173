"""Graded files become gradebook attempts: whose each file is, in the order they were made.

The files come as journal entries (`grade.journal`), from a batch just graded or from the
shards `lessonkit merge` joins.

A file's student comes from the roster (`Roster.match`) or, without one, from its path; a
file no roster id matches, or one that could not be read (so there are no bytes to keep),
is listed, never guessed. One student's files in one batch (`alice.py`, `alice.ipynb`) are
kept in the order of their modification times, so the latest attempt is the newest file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from lessonkit.course.gradebook import Attempt, attempt_of
from lessonkit.course.roster import Roster, student_without_roster
from lessonkit.grade.journal import JournalEntry
from lessonkit.grade.report import Scoring
from lessonkit.lesson.model import Lesson


@dataclass(frozen=True)
class Intake:
    attempts: tuple[tuple[Attempt, bytes], ...]
    unmatched: tuple[str, ...]
    """Relative paths no roster id matches."""
    unreadable: tuple[str, ...]
    """Relative paths whose bytes could not be read, so nothing was graded to keep."""


def intake(
    lesson: Lesson,
    records: Sequence[JournalEntry],
    *,
    roster: Roster | None,
    toolkit: str,
    now: dt.datetime | None = None,
) -> Intake:
    """The attempts `records` make, ordered by each file's modification time."""
    graded_utc = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    scoring = Scoring.of(lesson)
    made, unmatched, unreadable = [], [], []
    for record in records:
        relative = record.path
        if record.data is None:
            unreadable.append(relative)
            continue
        if roster is None:
            student = student_without_roster(relative)
        else:
            found = roster.match(PurePosixPath(relative).name)
            if found is None:
                unmatched.append(relative)
                continue
            student = found
        made.append(
            (
                record.mtime,
                relative,
                attempt_of(
                    record.report,
                    scoring,
                    student=student,
                    lesson_title=lesson.meta.title,
                    revision=lesson.meta.revision,
                    toolkit=toolkit,
                    file=relative,
                    data=record.data,
                    mtime=record.mtime,
                    graded_utc=graded_utc,
                ),
            )
        )
    made.sort(key=lambda item: (item[0], item[1]))
    return Intake(tuple(a for _, _, a in made), tuple(unmatched), tuple(unreadable))
