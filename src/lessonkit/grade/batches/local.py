"""A lesson's files graded on this machine: each in a fresh child of its own, one grader for all.

A crash, a timeout or a hostile file costs that file's own child and nothing else: no child
ever runs a second file. A file that cannot be read still gets a row: every task is `error`,
with the reason. A lesson's batch (`grade.batches.lesson_kind`), a Dask worker
(`grade.batches.distributed`) and a regrade grade through `grade_many`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path

from lessonkit.errors import LessonkitError, grader_failed
from lessonkit.grade.batches.folder import BatchItem
from lessonkit.grade.batches.kind import BatchEntry
from lessonkit.grade.batches.pool import grade_each
from lessonkit.grade.channel.child_handle import GradingError
from lessonkit.grade.grader import Grader
from lessonkit.grade.judging.results import GradeReport, run_failed
from lessonkit.grade.submission.sources import SubmissionError, read_submission
from lessonkit.lesson.model import Lesson
from lessonkit.run.isolation import sandbox_if_any
from lessonkit.settings import GradingSettings


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
    on_report: Callable[[BatchEntry[GradeReport]], None] | None = None,
    *,
    settings: GradingSettings | None = None,
    seed: int | None = None,
) -> tuple[BatchEntry[GradeReport], ...]:
    """Grade every item, each in a child of its own; results come back in item order.

    One `Grader` serves every job thread, so the reference runs once and every file is
    graded on the same input sets; the next learner child starts while a file runs.
    Without `settings`, the default ones in the sandbox where it works (no compile cache).
    """
    items = list(items)
    if not items:
        return ()
    if settings is None:
        settings = GradingSettings(isolation=sandbox_if_any())
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(items)))
    with Grader(replace(settings, seed=seed, jobs=jobs), lesson=lesson) as grader:
        return grade_each(
            items,
            lambda item: grade_item(grader, lesson, item),
            jobs=jobs,
            on_done=on_report,
            on_take=partial(grader.pool.ahead_for, jobs),
        )
