"""What the gradebook holds of one attempt: a submission and the grading of its bytes.

A submission is an event (a student handed in these bytes at this time); a grading is what
the grader made of them under one fingerprint (`grade.provenance.fingerprint`). An `Attempt` is
the submission read with the grading that counts. No SQL here: `course.gradebook` keeps them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Literal

from lessonkit.grade.judging import CheckName, GradeReport, Scoring, Status, counts_as_passed

Policy = Literal["latest", "best"]
POLICIES: tuple[Policy, ...] = ("latest", "best")

GradingKey = tuple[str, str, str]
"""(lesson, sha256 of the bytes, grading fingerprint): one grading, whoever submitted them."""


@dataclass(frozen=True)
class TaskGrade:
    """One task's verdict in one attempt."""

    task: str
    title: str
    status: Status
    points: float
    max_points: float
    optional: bool
    message: str
    check: CheckName | None = None
    """The check that found the problem (None when the task passed)."""
    path: str | None = None
    """The key path of the value the problem is about, if any."""
    mistake: str | None = None
    """The title of the lesson's declared mistake the answer makes, if one was matched."""

    @property
    def counts_as_passed(self) -> bool:
        """Passed, or an optional task left out."""
        return counts_as_passed(self.status, self.optional)


def utc_stamp(moment: dt.datetime | float | None = None) -> str:
    """A time as the gradebook writes it (`2026-12-05T09:30:00Z`): now, a datetime, or
    seconds since the epoch."""
    if moment is None:
        moment = dt.datetime.now(dt.UTC)
    elif isinstance(moment, float | int):
        moment = dt.datetime.fromtimestamp(moment, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Attempt:
    """One submission with the grading of its bytes that counts; `id` is the submission's,
    in the order submissions were kept (None until it is kept)."""

    id: int | None
    student: str
    lesson: str
    lesson_title: str
    file: str
    sha256: str
    seed: int | None
    graded_utc: str
    submitted: float
    """When the file was submitted (seconds since the epoch): its modification time at
    intake, or the time a submission system gave (`--submitted-at-from`). "Latest" is the
    newest by this time, whatever order the files were graded in."""
    toolkit: str
    revision: str
    points: float
    """Every point earned, optional tasks' included (`extra_points` says how many of them)."""
    max_points: float
    """The required tasks' points: optional ones are extra credit, never in the maximum."""
    regrade_of: int | None
    """On a grading about to be kept by `lessonkit regrade`: the submission whose bytes it
    graded again (no new submission is kept for it). None on every attempt read back."""
    tasks: tuple[TaskGrade, ...]
    fingerprint: str = ""
    """The grading fingerprint of what graded it ("" for gradings kept before there were
    fingerprints)."""
    grading: int | None = None
    """The id of the grading read with this submission (None until it is kept)."""

    @property
    def grading_key(self) -> GradingKey:
        return (self.lesson, self.sha256, self.fingerprint)

    @property
    def extra_points(self) -> float:
        """The points earned on optional tasks, over and above `max_points`."""
        return sum(t.points for t in self.tasks if t.optional)


@dataclass(frozen=True)
class Graded:
    """An attempt about to be kept: with the bytes it graded and the grader's whole report
    (kept so that a batch handed the same bytes again can show it without grading)."""

    attempt: Attempt
    data: bytes
    report: GradeReport


@dataclass(frozen=True)
class Added:
    """What `Gradebook.add_attempts` did."""

    ids: tuple[int, ...]
    """The new submissions' ids, in the order given."""
    unchanged: tuple[Attempt, ...]
    """Items whose grading was not kept: the gradebook already holds a grading of the same
    bytes under the same fingerprint (their submission is kept all the same)."""
    regraded: tuple[Attempt, ...] = ()
    """Gradings kept for bytes the gradebook had graded under another fingerprint, or whose
    kept grading stopped at a limit: they take that grading's place."""
    held: int = 0
    """Submissions the gradebook already held (the same student, bytes and time)."""
    kept_old: tuple[Attempt, ...] = ()
    """With `keep_old`: items whose bytes keep a grading of another fingerprint."""


def attempt_of(
    report: GradeReport,
    scoring: Scoring,
    *,
    student: str,
    lesson_title: str,
    revision: str,
    toolkit: str,
    file: str,
    data: bytes,
    submitted: float,
    graded_utc: str,
    fingerprint: str,
    regrade_of: int | None = None,
) -> Graded:
    """The attempt a grade report makes, with the bytes it graded."""
    points = scoring.available
    earned = scoring.earned(report)
    tasks = tuple(
        TaskGrade(
            t.id,
            t.title,
            t.status,
            earned.get(t.id, 0.0),
            points.get(t.id, 0.0),
            t.optional,
            t.message,
            t.check,
            t.path,
            t.mistake,
        )
        for t in report.tasks
    )
    attempt = Attempt(
        id=None,
        student=student,
        lesson=report.lesson,
        lesson_title=lesson_title,
        file=file,
        sha256=hashlib.sha256(data).hexdigest(),
        seed=report.seed,
        graded_utc=graded_utc,
        submitted=submitted,
        toolkit=toolkit,
        revision=revision,
        points=sum(earned.values()),
        max_points=scoring.maximum,
        regrade_of=regrade_of,
        tasks=tasks,
        fingerprint=fingerprint,
    )
    return Graded(attempt, data, report)
