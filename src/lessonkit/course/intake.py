"""Graded files (journal entries, `grade.batches.journal`) become gradebook attempts.

A file's student comes from the roster (`Roster.match`); without one the file's path is the
student. A file no id matches, two ids match, or that could not be read is listed, never
made into a student. Its submission time is its modification time at intake, or
`submitted_at` from a submission system: then a file the system's list does not name was
never handed in (a stray `ana_old.py` beside `ana.py`), so it is listed and never counted.
One student's files with the same time and other bytes are a `Tie` and none is kept: which
is newer cannot be known, and settling by name would let `ana_old.py` count over `ana.py`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lessonkit.course.attempts import Attempt, Graded, attempt_of, utc_stamp
from lessonkit.course.csv_input import read_csv
from lessonkit.course.roster import Roster, student_without_roster
from lessonkit.errors import UsageError, shown
from lessonkit.grade.batches import JournalEntry
from lessonkit.grade.judging import GradeReport, Scoring
from lessonkit.lesson.model import Lesson


@dataclass(frozen=True)
class Tie:
    """Submissions of one student at one time with other bytes: which counts is a question."""

    student: str
    submitted: float
    files: tuple[str, ...]
    """The relative paths handed in now at that time, in path order: none is kept."""
    held: tuple[str, ...] = ()
    """Files the gradebook already holds of the student at that time (kept before)."""


@dataclass(frozen=True)
class Intake:
    attempts: tuple[Graded, ...]
    """In the order the files were submitted."""
    unmatched: tuple[str, ...]
    """Relative paths no roster id matches, or more than one does."""
    unreadable: tuple[str, ...]
    """Relative paths whose bytes could not be read, so nothing was graded to keep."""
    tied: tuple[Tie, ...] = ()
    """Files of one student at one time with other bytes: none of them is kept."""
    unlisted: tuple[str, ...] = ()
    """Relative paths the submission system's list (`submitted_at`) does not name: not
    submissions, so not kept."""


def student_of(relative: str, roster: Roster | None) -> str | None:
    """The student a file is from: a roster id, or without a roster its path; None when
    the roster has no id for it, or two.

    A file in the batch folder itself is matched by its name (`alice_v2.py`); a file in a
    subfolder by the subfolder it lies in at the top (`alice/state-02.py`, a folder per
    student), never by its own name, so `bob/alice.py` is never alice's.
    """
    if roster is None:
        return student_without_roster(relative)
    return roster.match(PurePosixPath(relative).parts[0])


def intake(
    lesson: Lesson,
    records: Sequence[JournalEntry[GradeReport]],
    *,
    roster: Roster | None,
    toolkit: str,
    fingerprint: str,
    submitted_at: Mapping[str, float] | None = None,
    now: dt.datetime | None = None,
    held: Sequence[Attempt] = (),
) -> Intake:
    """The attempts `records` make, ordered by each file's submission time; `toolkit` and
    `fingerprint` name what graded them (`grade.provenance.fingerprint`). `held`: the
    submissions of this lesson the gradebook keeps, which a file at the same time ties.
    `submitted_at`, the submission system's times by relative path, also says which files
    it received: any other is `unlisted`, never an attempt."""
    graded_utc = utc_stamp(now)
    scoring = Scoring.of(lesson)
    made, unmatched, unreadable, unlisted = [], [], [], []
    for record in records:
        relative = record.path
        if submitted_at is not None and relative not in submitted_at:
            unlisted.append(relative)
            continue
        if record.data is None:
            unreadable.append(relative)
            continue
        student = student_of(relative, roster)
        if student is None:
            unmatched.append(relative)
            continue
        submitted = submitted_at[relative] if submitted_at is not None else record.mtime
        made.append(
            (
                submitted,
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
                    submitted=submitted,
                    graded_utc=graded_utc,
                    fingerprint=fingerprint,
                ),
            )
        )
    made.sort(key=lambda item: (item[0], item[1]))
    tied = _ties([g for _, _, g in made], held)
    out = {file for tie in tied for file in tie.files}
    attempts = tuple(g for _, relative, g in made if relative not in out)
    return Intake(attempts, tuple(unmatched), tuple(unreadable), tied, tuple(unlisted))


def _ties(made: Sequence[Graded], held: Sequence[Attempt]) -> tuple[Tie, ...]:
    """Each student's submissions at one time whose bytes differ, among those made now (at
    least one) and those `held`: never settled by their names."""
    now: dict[tuple[str, float], list[Attempt]] = {}
    for graded in made:
        now.setdefault((graded.attempt.student, graded.attempt.submitted), []).append(
            graded.attempt
        )
    before: dict[tuple[str, float], list[Attempt]] = {}
    for attempt in held:
        if (attempt.student, attempt.submitted) in now:
            before.setdefault((attempt.student, attempt.submitted), []).append(attempt)
    ties = []
    for (student, submitted), group in now.items():
        kept = before.get((student, submitted), [])
        if len({a.sha256 for a in (*group, *kept)}) > 1:
            files = tuple(sorted(a.file for a in group))
            ties.append(Tie(student, submitted, files, tuple(sorted({a.file for a in kept}))))
    return tuple(sorted(ties, key=lambda t: t.files))


def read_submission_times(path: Path) -> dict[str, float]:
    """`--submitted-at-from FILE`: a CSV `file,submitted_at` (the path below the batch
    folder, and an ISO 8601 time with a zone, e.g. `2026-12-02T09:30:00Z`), as a
    submission system exports them; each time in seconds since the epoch."""
    rows = read_csv(
        path,
        "the submission times",
        ("file", "submitted_at"),
        fix="its first line must be file,submitted_at (a path in the batch folder, and an ISO "
        "8601 time such as 2026-12-02T09:30:00Z)",
    )
    times: dict[str, float] = {}
    for line, row in rows:
        name, when = (row.get("file") or "").strip(), (row.get("submitted_at") or "").strip()
        try:
            moment = dt.datetime.fromisoformat(when)
        except ValueError:
            moment = None
        if not name or moment is None or moment.tzinfo is None:
            raise UsageError(
                f"{shown(path)}:{line}: {when!r} is not an ISO 8601 time with a zone",
                fix="write it as 2026-12-02T09:30:00Z or 2026-12-02T10:30:00+01:00",
            )
        if name in times:
            raise UsageError(f"{shown(path)}:{line}: {name!r} appears twice")
        times[name] = moment.timestamp()
    return times
