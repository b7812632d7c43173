"""A lesson's batch kind: its files graded here (`grade.batches.local`) or on Dask
(`grade.batches.distributed`), and its outputs the CSV, the JSON and the feedback.

The lifecycle around it (journal, resume, outputs) is `grade.batches.lifecycle`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lessonkit import __version__
from lessonkit.grade.batches.distributed import grade_on_dask
from lessonkit.grade.batches.folder import BatchItem
from lessonkit.grade.batches.journal import Shard
from lessonkit.grade.batches.kind import BatchKind
from lessonkit.grade.batches.local import grade_many, unreadable
from lessonkit.grade.judging.report import Scoring, summary_csv, summary_json
from lessonkit.grade.judging.results import GradeReport
from lessonkit.grade.model import BatchEntry
from lessonkit.grade.preparation.inputs import new_seed
from lessonkit.grade.provenance.fingerprint import grading_fingerprint
from lessonkit.lesson.model import Lesson
from lessonkit.run.limits import DEFAULT_LIMITS
from lessonkit.settings import GradingSettings


def lesson_kind(
    lesson: Lesson,
    *,
    jobs: int | None = None,
    settings: GradingSettings | None = None,
    dask: str | None = None,
    allow_unsandboxed: bool = False,
    shard: Shard | None = None,
) -> BatchKind[GradeReport]:
    """`check --batch` of `lesson`: graded here, or on the Dask cluster at `dask`
    (`grade.batches.distributed`); the outputs are the CSV, the JSON and the feedback."""
    scoring = Scoring.of(lesson)
    isolation = (settings or GradingSettings()).isolation.kind
    """What kept each learner child apart (`run.isolation.IsolationKind`), stated in the
    JSON output as the autograder's results state it."""

    def grade(
        items: Sequence[BatchItem],
        seed: int | None,
        on_report: Callable[[BatchEntry[GradeReport]], None],
    ) -> tuple[BatchEntry[GradeReport], ...]:
        if dask is None:
            return grade_many(
                lesson,
                items,
                jobs=jobs,
                on_report=on_report,
                settings=settings,
                seed=seed,
            )
        return grade_on_dask(
            lesson,
            items,
            address=dask,
            seed=new_seed() if seed is None else seed,
            limits=DEFAULT_LIMITS if settings is None else settings.limits,
            allow_unsandboxed=allow_unsandboxed,
            on_report=on_report,
        )

    def summary(entries: Sequence[BatchEntry[GradeReport]], seed: int | None) -> dict:
        data = summary_json(entries, lesson.meta.id, scoring)
        data["seed"] = data["seed"] if seed is None else seed
        return data | {
            "revision": lesson.meta.revision,
            "toolkit": __version__,
            "shard": None if shard is None else str(shard),
            "isolation": "on the Dask workers" if dask is not None else isolation,
        }

    return BatchKind(
        subject=lesson.meta.id,
        revision=lesson.meta.revision,
        stem=f"check-{lesson.meta.id}",
        from_json=GradeReport.from_json,
        unreadable=lambda path, message, seed: unreadable(lesson, path, message, 0.0),
        grade=grade,
        summary=summary,
        new_seed=new_seed,
        csv=lambda entries: summary_csv(entries, scoring),
        fingerprint=grading_fingerprint(lesson),
    )
