"""Grade practice files: a trusted reference child, and a fresh sandboxed child per file.

A file is graded in one line (`run_submission`): prepare the lesson, or reuse it
(`prepare_lesson`, once per grader: input sets drawn from the command's seed, the reference
request, and the reference run's report when the reference store keeps this very run, else
the reference child is sent its request); plan the file (`plan_cells`); run it in a learner
child of its own while the reference report is awaited; judge what it reported against the
reference's (`judge`); report. A learner child is used for one file and then killed; with
`prestart`, the next one is started (never used before) while the current file runs.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from lessonkit.grade.channel.child_handle import ChildHandle, GradingError
from lessonkit.grade.channel.child_pool import ChildPool
from lessonkit.grade.channel.child_report import RETRIED, ChildReport, settled, unstarted
from lessonkit.grade.channel.protocol import Request
from lessonkit.grade.channel.reference_store import reference_store
from lessonkit.grade.judging.judge import judge
from lessonkit.grade.judging.results import GradeReport
from lessonkit.grade.preparation.inputs import new_seed
from lessonkit.grade.preparation.mistakes import MistakeRun
from lessonkit.grade.preparation.mistakes_pending import pending_mistakes
from lessonkit.grade.preparation.prepared import (
    PreparedLesson,
    learner_request,
    prepare_lesson,
    warm_up_request,
)
from lessonkit.grade.preparation.reference_checks import check_reference, kept_report
from lessonkit.grade.submission.plan import Plan, plan_cells
from lessonkit.grade.submission.sources import Submission, read_submission
from lessonkit.lesson.model import Lesson
from lessonkit.settings import DEFAULT_SETTINGS, GradingSettings


@dataclass(frozen=True)
class GradedRun:
    """One file's verdicts, with the plan its learner child ran and what that child reported.

    The report is data from an untrusted process, already parsed strictly; when
    `child_report.interfered` is set, nothing in it may be shown as the learner's results.
    """

    report: GradeReport
    plan: Plan
    child_report: ChildReport


class Grader:
    """Grades files, each in a learner child of its own, against one trusted reference.

    Thread-safe: `--batch` grades from several threads with one `Grader`, so each lesson is
    prepared once, the reference runs once and every file sees the same input sets (one
    seed per command). `_lock` guards the prepared lessons; `_reference_lock` makes one
    thread collect a reference report while the others wait for it. The children and their
    threads are the pool's (`grade.channel.child_pool`).
    """

    def __init__(
        self, settings: GradingSettings = DEFAULT_SETTINGS, *, lesson: Lesson | None = None
    ):
        """`settings.limits` hold for every child (the time limit is each file's);
        `settings.isolation` keeps the learner children apart (the reference child is
        trusted, never sandboxed); `settings.jobs` children are started ahead. `lesson`,
        where the caller knows it already, is prepared now, and the starter imports the
        lesson's own modules once, ahead of every child it forks."""
        self.settings = settings
        self.limits = settings.limits
        self.isolation = settings.isolation
        self.seed = new_seed() if settings.seed is None else settings.seed
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._reference_lock = threading.Lock()
        self._prepared: dict[str, PreparedLesson] = {}
        # The declared mistakes' requests, built, sent to the reference child one by one and
        # collected the first time a file fails a task (after the reference run), then kept.
        self._mistakes: dict[str, tuple[MistakeRun, ...]] = {}
        prepared = None if lesson is None else self._prepare_new(lesson)
        preload = () if prepared is None else prepared.preload
        self.pool = ChildPool(self.limits, self.isolation, preload, settings.jobs)
        if prepared is not None:  # the reference child starts while learner children do
            try:
                self._prepared[lesson.meta.id] = self._sent(prepared)
            except BaseException:
                self.pool.close()
                raise

    @property
    def children(self) -> int:
        """Learner children started, for tests and benchmarks."""
        return self.pool.children

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.pool.close()

    def warm_up(self, lesson: Lesson) -> None:
        """Have every learner child started from now on run the lesson's practice file as
        given (no task solved, the lesson's own inputs) before its learner's file arrives.

        For `--watch` and `check()`, whose next child waits while the learner edits: the
        learner's run then finds most of JAX's programs compiled in its process. Only
        trusted code runs ahead, and only what the learner's own file holds: no solution
        and no reference value is ever in a learner child.
        """
        self.pool.warm_with(warm_up_request(self.prepare(lesson), self.limits.timeout))

    def prepare(self, lesson: Lesson) -> PreparedLesson:
        """The lesson prepared for grading, once per grader: the reference run is queued
        without waiting for it, or none when the reference store keeps its report
        (`grade/channel/reference_store.py`), so no trusted child starts at all."""
        with self._lock:
            key = lesson.meta.id
            if key not in self._prepared:
                self._prepared[key] = self._sent(self._prepare_new(lesson))
            return self._prepared[key]

    def _prepare_new(self, lesson: Lesson) -> PreparedLesson:
        store = reference_store(self.isolation, enabled=self.settings.reference_store)
        prepared = prepare_lesson(lesson, self.seed, store, f"reference-{next(self._ids)}")
        return prepared.with_child_report(kept_report(prepared))

    def _sent(self, prepared: PreparedLesson) -> PreparedLesson:
        """`prepared`, its reference request sent unless the store kept the report."""
        if prepared.child_report is None:
            self.pool.send_reference(prepared.reference_run.request)
        return prepared

    def reference(self, lesson: Lesson) -> ChildReport:
        """The reference run's report for this lesson (waits for it the first time)."""
        return self._reference_report(self.prepare(lesson))

    def _reference_report(self, prepared: PreparedLesson) -> ChildReport:
        if prepared.child_report is not None:
            return prepared.child_report
        key = prepared.lesson.meta.id
        with self._reference_lock:
            with self._lock:
                prepared = self._prepared.get(key) or prepared
            if prepared.child_report is None:
                try:
                    prepared = prepared.with_child_report(self._collect_reference(prepared))
                except BaseException:
                    with self._lock:  # the next file prepares the lesson again
                        self._prepared.pop(key, None)
                        self._mistakes.pop(key, None)
                    raise
                with self._lock:
                    self._prepared[key] = prepared
            assert prepared.child_report is not None
            return prepared.child_report

    def _mistake_runs(self, prepared: PreparedLesson) -> tuple[MistakeRun, ...]:
        """The lesson's declared mistakes, each with its run on the reference's scenarios
        (waits for them the first time)."""
        self._reference_report(prepared)  # the reference child answers its requests in order
        key = prepared.lesson.meta.id
        with self._reference_lock:
            with self._lock:
                runs = self._mistakes.get(key)
            if runs is None:  # the first time a file fails: most files never do
                pending = pending_mistakes(prepared, f"mistakes-{next(self._ids)}")
                runs = pending.collect(self._ask_reference, self.limits.reference_timeout)
                with self._lock:
                    self._mistakes[key] = runs
            return runs

    def _ask_reference(self, request: Request) -> ChildHandle:
        """The reference child, sent `request` (started again first if it ended)."""
        self.pool.send_reference(request)
        return self.pool.reference_child()

    def _collect_reference(self, prepared: PreparedLesson) -> ChildReport:
        """The reference child's report of the request it was sent, checked; then kept in
        the reference store (written here, on the trusted side, after the checks)."""
        run = prepared.reference_run
        child = self.pool.reference_child()  # a child that cannot start raises here
        limit = self.limits.reference_timeout
        deadline = time.monotonic() + limit
        child_report = child.collect(run.request, deadline, timeout=limit, names=run.names)
        try:
            check_reference(child_report, prepared, child.diagnostics())
        except GradingError:
            child.close()
            raise
        if run.store is not None:
            run.store.save(*run.stored_as, child_report)
        return child_report

    def grade(self, lesson: Lesson, path: str | Path) -> GradeReport:
        """Grade one practice file (.py or .ipynb); unreadable files raise SubmissionError."""
        started = time.perf_counter()
        return self.grade_submission(lesson, read_submission(path), started)

    def grade_submission(
        self, lesson: Lesson, submission: Submission, started: float | None = None
    ) -> GradeReport:
        return self.run_submission(lesson, submission, started).report

    def run_submission(
        self, lesson: Lesson, submission: Submission, started: float | None = None
    ) -> GradedRun:
        """Grade one file and keep what its learner child reported, for the evidence report."""
        started = time.perf_counter() if started is None else started
        prepared = self.prepare(lesson)
        plan = plan_cells(submission, prepared.layout)
        child_report, expected = self._run(prepared, plan, submission)
        mistakes = functools.partial(self._mistake_runs, prepared)
        path = str(submission.path)
        report = judge(prepared, plan, child_report, expected, self.limits, mistakes, path, started)
        return GradedRun(report, plan, child_report)

    def _run(
        self, prepared: PreparedLesson, plan: Plan, submission: Submission
    ) -> tuple[ChildReport, ChildReport]:
        """The learner child's report of `plan`, and the reference report (awaited while the
        learner child runs). One child per file, never reused; a run that ended in a way
        that may be the grader's (`RETRIED`) is run once more in a fresh child, and the two
        `settled`."""
        child_report = self._run_once(prepared, plan, submission)
        expected = self._reference_report(prepared)
        if child_report.ending in RETRIED:
            child_report = settled(child_report, self._run_once(prepared, plan, submission))
        return child_report, expected

    def _run_once(
        self, prepared: PreparedLesson, plan: Plan, submission: Submission
    ) -> ChildReport:
        """One run of `plan` in a learner child of its own; a child that cannot start is a
        report too (`unstarted`)."""
        timeout = self.limits.timeout
        try:
            child = self.pool.take()
        except GradingError as exc:
            return unstarted(exc.message)
        request_id = f"learner-{next(self._ids)}"
        replay = self.settings.scenario_order
        try:
            request, names = learner_request(
                prepared, plan, submission, request_id, timeout, replay
            )
            child.send(request)
            self._reference_report(prepared)  # the reference's, while the learner child runs
            deadline = time.monotonic() + timeout + self.limits.grace
            return child.collect(request, deadline, timeout=timeout, names=names)
        finally:
            child.close()
