"""A graded batch becomes gradebook attempts: whose each file is, in the order they were made.

A file's student comes from the roster (`Roster.match`) or, without one, from its path; a
file no roster id matches, or one that could not be read (so there are no bytes to keep),
is listed, never guessed. One student's files in one batch (`alice.py`, `alice.ipynb`) are
kept in the order of their modification times, so the latest attempt is the newest file.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lessonkit.course.gradebook import Attempt, attempt_of
from lessonkit.course.roster import Roster, student_without_roster
from lessonkit.grade.batch import BatchEntry
from lessonkit.grade.report import Scoring
from lessonkit.lesson.model import Lesson


@dataclass(frozen=True)
class Intake:
    attempts: tuple[tuple[Attempt, bytes], ...]
    unmatched: tuple[str, ...]
    """Relative paths no roster id matches."""
    unreadable: tuple[str, ...]
    """Relative paths whose bytes could not be read, so nothing was graded to keep."""


def _mtime(path: Path) -> float:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def intake(
    lesson: Lesson,
    folder: Path,
    entries: Sequence[BatchEntry],
    *,
    roster: Roster | None,
    toolkit: str,
    now: dt.datetime | None = None,
) -> Intake:
    """The attempts `entries` make, ordered by each file's modification time."""
    graded_utc = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    scoring = Scoring.of(lesson)
    made, unmatched, unreadable = [], [], []
    for entry in entries:
        relative = entry.path.relative_to(folder).as_posix()
        if entry.data is None:
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
        mtime = _mtime(entry.path)
        made.append(
            (
                mtime,
                relative,
                attempt_of(
                    entry.report,
                    scoring,
                    student=student,
                    lesson_title=lesson.meta.title,
                    revision=lesson.meta.revision,
                    toolkit=toolkit,
                    file=relative,
                    data=entry.data,
                    mtime=mtime,
                    graded_utc=graded_utc,
                ),
            )
        )
    made.sort(key=lambda item: (item[0], item[1]))
    return Intake(tuple(a for _, _, a in made), tuple(unmatched), tuple(unreadable))
