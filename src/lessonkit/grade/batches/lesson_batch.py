"""A lesson's batch: its grade-one function (a fresh child per file) and its `BatchKind`.

A crash, a timeout or a hostile file costs that file's own child and nothing else: no child
ever runs a second file. A file that cannot be read still gets a row: every task is `error`,
with the reason. The lifecycle around it (journal, resume, outputs) is `grade.batches.batch`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from lessonkit import __version__
from lessonkit.errors import LessonkitError, grader_failed
from lessonkit.grade.batches.batch import BatchEntry, BatchKind, grade_each
from lessonkit.grade.batches.fingerprint import grading_fingerprint
from lessonkit.grade.batches.folder import BatchItem
from lessonkit.grade.batches.journal import Shard
from lessonkit.grade.channel.worker_handle import GradingError
from lessonkit.grade.grader import Grader
from lessonkit.grade.judging.inputs import new_seed
from lessonkit.grade.judging.report import Scoring, summary_csv, summary_json
from lessonkit.grade.judging.results import GradeReport, run_failed
from lessonkit.grade.submission.sources import SubmissionError, read_submission
from lessonkit.lesson.model import Lesson
from lessonkit.run.isolation import Isolation, sandbox_if_any
from lessonkit.run.limits import DEFAULT_LIMITS, Limits


def unreadable(lesson: Lesson, path: Path, message: str, seconds: float) -> GradeReport:
    """A report for a file that could not be graded at all."""
    tasks = run_failed(lesson, message)
    return GradeReport(lesson.meta.id, str(path), tasks, (), seconds)


def grade_item(grader: Grader, lesson: Lesson, item: BatchItem) -> BatchEntry[GradeReport]:
    """One file's entry: graded in a child of its own, or the row saying why it was not.

    Raises:
        GradingError: the lesson itself cannot be graded (its reference fails): no file can.
    """
    started = time.perf_counter()
    path, data = item.path, item.data
    try:
        if data is None:
            raise SubmissionError(item.problem or "")
        report = grader.grade_submission(lesson, read_submission(path, data), started)
    except GradingError:
        raise
    except LessonkitError as exc:
        report = unreadable(lesson, path, exc.message, time.perf_counter() - started)
    except Exception as exc:  # a grader bug must not cost the other files their grades
        report = unreadable(lesson, path, grader_failed(exc), time.perf_counter() - started)
    return BatchEntry(path, replace(report, seed=grader.seed), item.sha256, data)


def grade_many(
    lesson: Lesson,
    items: Iterable[BatchItem],
    jobs: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    on_report: Callable[[BatchEntry[GradeReport]], None] | None = None,
    *,
    isolation: Isolation | None = None,
    seed: int | None = None,
) -> tuple[BatchEntry[GradeReport], ...]:
    """Grade every item, each in a child of its own; results come back in item order.

    One `Grader` serves every job thread, so the reference runs once and every file is
    graded on the same input sets; the next learner child starts while a file runs.
    Without `isolation`, the sandbox where it works (and no compile cache).
    """
    items = list(items)
    if not items:
        return ()
    isolation = sandbox_if_any() if isolation is None else isolation
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(items)))
    with Grader(limits, isolation=isolation, seed=seed, prestart=jobs, lesson=lesson) as grader:
        return grade_each(
            items,
            lambda item: grade_item(grader, lesson, item),
            jobs=jobs,
            on_done=on_report,
            on_take=partial(grader.ahead_for, jobs),
        )


def lesson_kind(
    lesson: Lesson,
    *,
    jobs: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    isolation: Isolation | None = None,
    dask: str | None = None,
    allow_unsandboxed: bool = False,
    shard: Shard | None = None,
) -> BatchKind[GradeReport]:
    """`check --batch` of `lesson`: graded here, or on the Dask cluster at `dask`
    (`grade.batches.distributed`); the outputs are the CSV, the JSON and the feedback."""
    scoring = Scoring.of(lesson)

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
                limits=limits,
                on_report=on_report,
                isolation=isolation,
                seed=seed,
            )
        from lessonkit.grade.batches.distributed import grade_on_dask

        return grade_on_dask(
            lesson,
            items,
            address=dask,
            seed=new_seed() if seed is None else seed,
            limits=limits,
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
