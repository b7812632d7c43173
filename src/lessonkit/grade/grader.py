"""Grade practice files: a trusted reference child, and a fresh sandboxed child per file.

The phases of one command: start a learner child at once, so it imports JAX while this
process reads the lesson; draw this command's input sets from the lesson's generators and
its seed; take the reference run's record from the reference store when this very run was
kept (`grade/channel/reference_store.py`), else start the reference child (it never runs learner
code) and send it its request (every scenario, on the lesson's own solutions), keeping what
it reports; send each file to a learner child of its own; compare everything here. A
learner child is used for one file and then killed; with `prestart`, the next one is
started (never used before) while the current file runs.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from lessonkit.grade.channel.protocol import Request
from lessonkit.grade.channel.reference_store import ReferenceStore, reference_key, reference_store
from lessonkit.grade.channel.requests import (
    LessonGrading,
    build_request,
    lesson_grading,
    scenario_order,
    warm_up_request,
    wire_names,
)
from lessonkit.grade.channel.run_record import RunRecord
from lessonkit.grade.channel.worker_handle import GradingError, WorkerHandle, grading_starter
from lessonkit.grade.judging.checks import LESSON, Runs, check_all
from lessonkit.grade.judging.inputs import new_seed
from lessonkit.grade.judging.probes import ProbeRun
from lessonkit.grade.judging.results import GradeReport, run_failed
from lessonkit.grade.judging.values import layout, opaque_type
from lessonkit.grade.submission.known_answers import varied_of
from lessonkit.grade.submission.plan import (
    Plan,
    imported_modules,
    plan_submission,
)
from lessonkit.grade.submission.review import review_marks
from lessonkit.grade.submission.sources import Submission, read_submission
from lessonkit.lesson.model import Lesson
from lessonkit.run.forking import forks_children
from lessonkit.run.isolation import UNSANDBOXED, Isolation
from lessonkit.run.limits import DEFAULT_LIMITS, Limits
from lessonkit.run.starter import Starter


def _send_once_started(request: Request, started: Future[WorkerHandle]) -> None:
    """Send the reference its request once it has started (one that failed to start says
    so where its record is awaited)."""
    if started.exception() is None:
        started.result().send(request)


def _check_reference(record: RunRecord, grading: LessonGrading, diagnostics: str) -> None:
    """The lesson's own code must run cleanly, or grading against it means nothing."""
    if record.stop_reason:
        raise GradingError(
            f"the grading process could not run the lesson's reference code: {record.stop_reason}",
            fix="check that JAX imports in this environment: python -c 'import jax'"
            + (f"\n{diagnostics.strip()}" if diagnostics.strip() else ""),
        )
    names = {r.task.id: r.names for r in grading.rubrics}
    drawn = {s.name for s in grading.inputs.others}
    for (scenario, index), run in record.runs.items():
        cell = grading.reference.cell(index)
        if run.error is None or scenario not in (LESSON, *drawn):
            continue  # a probe may make the lesson's own code fail anywhere, by design
        is_assert = run.error.type == "AssertionError"
        reached = all(n in run.values for n in names.get(cell.task or "", ()))
        if scenario != LESSON and is_assert and reached:
            continue  # the lesson's own checks of typed-in numbers hold on its inputs only
        line = (run.error.frames or ((index, cell.line, 1),))[-1][1]
        seed = f" (input seed {grading.inputs.seed})" if scenario in drawn else ""
        raise GradingError(
            f"the lesson's reference code fails in scenario {scenario!r}{seed}: "
            f"{run.error.type}: {run.error.message[:200]}",
            where=f"{grading.lesson.path}:{line}",
            fix="fix lesson.md so that its steps and solutions run"
            + (" on every input its {grading} generators draw" if seed else ""),
        )
    _check_reference_jit(record, grading, (LESSON, *drawn))
    _check_graded_values(record, grading)
    for run in grading.probes:
        _check_probe(record, grading, run)


def _check_reference_jit(
    record: RunRecord, grading: LessonGrading, scenarios: tuple[str, ...]
) -> None:
    """A solution that fails its own `jit:` rule would fail every learner who copies it."""
    rules = {r.task.id: r.jit for r in grading.rubrics if r.jit is not None}
    for (scenario, index), run in record.runs.items():
        task = grading.reference.cell(index).task
        rule = rules.get(task or "")
        if rule is None or scenario not in scenarios or run.error is not None:
            continue
        for outcome in run.jit:
            if outcome.status == "ok":
                continue
            said = f": {outcome.error.type}" if outcome.error is not None else ""
            raise GradingError(
                f"the solution of {task!r} fails its own 'jit' rule in scenario "
                f"{scenario!r}: `{outcome.name}` {outcome.status}{said}",
                where=f"{grading.lesson.path}:{rule.line or grading.grading.line}",
                fix="make the solution's function trace under jax.jit, or change the rule",
            )


def _check_graded_values(record: RunRecord, grading: LessonGrading) -> None:
    """A graded name whose value has no comparable meaning (a function, an optimizer's
    `GradientTransformation`, a jitted function, an object) would pass any answer of its
    type: the lesson must grade what it returns instead."""
    for rubric in grading.rubrics:
        cell = grading.reference.task_cell(rubric.task.id)
        report = record.get(LESSON, cell.index) if cell is not None else None
        values = report.values if report is not None else {}
        for name in rubric.names:
            value = values.get(name)
            opaque = opaque_type(value) if value is not None else None
            if value is not None and opaque is not None:
                what = opaque if opaque == layout(value) else f"{layout(value)} holding a {opaque}"
                raise GradingError(
                    f"task {rubric.task.id!r} grades `{name}`, a {what}: it has no value to "
                    "compare, so any answer of that type would pass",
                    where=f"{grading.lesson.path}:{rubric.task.line}",
                    fix=f"grade what `{name}` returns or holds instead (an optimizer's state or "
                    "updates, a function's result): have the scaffold leave that as todo(...)",
                )


def _check_probe(record: RunRecord, grading: LessonGrading, run: ProbeRun) -> None:
    """A probe whose messages name values the lesson's own solution never reaches is broken."""
    probe = run.probe
    cell = grading.reference.task_cell(probe.task)
    report = record.get(run.name, cell.index) if cell is not None else None
    values = report.values if report is not None else {}
    for name, _ in probe.messages:
        if name not in values:
            raise GradingError(
                f"probe {probe.name!r}: the lesson's own solution does not assign `{name}` "
                "when the probe runs, so its message can never be shown",
                where=f"{grading.lesson.path}:{probe.line}",
                fix="name only values the solution assigns before anything the probe makes "
                "fail, or vary another source",
            )


@dataclass(frozen=True)
class _ReferenceRun:
    """A reference request on its way: what the child is sent, the names it sees the
    scenarios by, and where the reference store keeps its record (None: no store)."""

    request: Request
    names: dict[str, str]
    store: ReferenceStore | None
    stored_as: tuple[str, str]  # the store's (lesson id, key): the request, hashed once


def _reference_run(
    grading: LessonGrading, request_id: str, seed: int, store: ReferenceStore | None
) -> _ReferenceRun:
    """The reference request for `grading`, its scenarios named once for the child and the
    store's key alike."""
    names = wire_names(grading)
    request = build_request(request_id, grading.reference, grading, None, names)
    meta = grading.lesson.meta
    key = reference_key(meta.id, meta.revision, seed, request, names) if store else ""
    return _ReferenceRun(request, names, store, (meta.id, key))


def _kept_reference(run: _ReferenceRun, grading: LessonGrading) -> RunRecord | None:
    """The stored record of this very reference run, if one is kept and still checks out."""
    record = None if run.store is None else run.store.load(*run.stored_as)
    if record is None:
        return None
    try:
        _check_reference(record, grading, "")
    except GradingError:
        return None  # kept by another version of the checks: run the reference again
    return record


@dataclass(frozen=True)
class GradedRun:
    """One file's verdicts, with the plan its learner child ran and what that child reported.

    The record is data from an untrusted process, already parsed strictly; when
    `record.interfered` is set, nothing in it may be shown as the learner's results.
    """

    report: GradeReport
    plan: Plan
    record: RunRecord


def interfered_report(
    lesson: Lesson, path: str, reason: str, seconds: float, seed: int | None
) -> GradeReport:
    """Every task `error`: nothing a run reported after interfering can be believed."""
    message = (
        f"The submission interfered with the grader ({reason}), so none of its results can "
        "be trusted. Remove the code that touches the grader's process, files or channel."
    )
    tasks = run_failed(lesson, message)
    return GradeReport(lesson.meta.id, path, tasks, (), seconds, seed)


class Grader:
    """Grades files, each in a learner child of its own, against one trusted reference.

    Thread-safe: `--batch` grades from several threads with one `Grader`, so the reference
    runs once and every file sees the same input sets (one seed per command).
    """

    def __init__(
        self,
        limits: Limits = DEFAULT_LIMITS,
        *,
        isolation: Isolation = UNSANDBOXED,
        seed: int | None = None,
        prestart: int = 0,
        lesson: Lesson | None = None,
    ):
        """`limits` hold for every child (the time limit is each file's); `isolation` keeps
        the learner children apart (the reference child is trusted, never sandboxed).
        `lesson`, where the caller knows it already, has the starter import the lesson's own
        modules once, ahead of every child it forks."""
        self.limits = limits
        self.isolation = isolation
        self._preload = () if lesson is None else imported_modules(lesson)
        self.seed = new_seed() if seed is None else seed
        self.prestart = prestart
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._reference_lock = threading.Lock()
        # Every child is started from this one thread, which lives as long as the grader:
        # bubblewrap's --die-with-parent follows the *thread* that started it, so a child
        # started by a batch thread that has finished would be killed mid-run.
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="lessonkit-children")
        self._forker = ThreadPoolExecutor(1, thread_name_prefix="lessonkit-forks")
        self._reference_pool = ThreadPoolExecutor(1, thread_name_prefix="lessonkit-reference")
        self._starter_lock = threading.Lock()
        self._closed = False
        # Started by `prepare`, unless the reference store keeps the record it would compute.
        self._reference: Future[WorkerHandle] | None = None
        self.children = 0  # learner children started, for tests and benchmarks
        self._warm_up: Request | None = None
        self._starter: Starter | None = None
        if forks_children():  # learner children are forks of a starter that imported JAX once
            starting = self._spawner.submit(grading_starter, isolation, limits, self._preload)
            self._starter = starting.result()
        # The first learner child is on its way while the parent reads the lesson and the file.
        self._spares: list[Future[WorkerHandle]] = [self._learner_child_soon()]
        self._gradings: dict[str, LessonGrading] = {}
        self._pending: dict[str, _ReferenceRun] = {}  # reference requests sent, not collected
        self._expected: dict[str, RunRecord] = {}

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._starter_lock:  # no fork thread starts a new starter after this
            self._closed = True
            starter = self._starter
        with self._lock:
            spares, self._spares = self._spares, []
        reference, self._reference = self._reference, None
        if starter is not None:
            starter.close()  # a spare still waiting for it gives up at once
        for pool in (self._forker, self._reference_pool, self._spawner):
            pool.shutdown(wait=False, cancel_futures=True)  # no child starts after close
        if reference is not None:
            spares.append(reference)
        for spare in spares:
            if not spare.cancel():
                with contextlib.suppress(GradingError):
                    spare.result().close()

    def _start_reference(self) -> Future[WorkerHandle]:
        """The trusted reference child on its way: the starter's reference fork (on a thread
        of its own, so it never waits behind a learner's warm-up), else started from
        scratch on the spawner thread."""
        if self._starter is not None:
            return self._reference_pool.submit(self._new_fork, True)
        return self._spawner.submit(self._new_child, True)

    def _new_child(self, trusted: bool) -> WorkerHandle:
        """A child started from scratch, on the spawner thread: the reference, or a learner
        child where there is no starter."""
        worker = WorkerHandle(trusted=trusted, isolation=self.isolation, limits=self.limits)
        if not trusted:
            self._warm(worker)
        return worker

    def _new_fork(self, trusted: bool = False) -> WorkerHandle:
        """A child forked by the starter (a fork waits for the starter to import JAX). A
        starter that ended is replaced first, from the spawner thread."""
        with self._starter_lock:
            assert self._starter is not None
            if self._closed:
                raise GradingError("the grader was closed before this child started")
            if not self._starter.alive:
                self._starter.close()
                self._starter = self._spawner.submit(
                    grading_starter, self.isolation, self.limits, self._preload
                ).result()
            starter = self._starter
        worker = WorkerHandle(
            trusted=trusted, isolation=self.isolation, limits=self.limits, starter=starter
        )
        if not trusted:
            self._warm(worker)
        return worker

    def _warm(self, worker: WorkerHandle) -> None:
        if self._warm_up is not None:
            worker.warm(self._warm_up, self.limits.timeout)

    def warm_up(self, lesson: Lesson) -> None:
        """Have every learner child started from now on run the lesson's practice file as
        given (no task solved, the lesson's own inputs) before its learner's file arrives.

        For `--watch` and `check()`, whose next child waits while the learner edits: the
        learner's run then finds most of JAX's programs compiled in its process. Only
        trusted code runs ahead, and only what the learner's own file holds: no solution
        and no reference value is ever in a learner child.
        """
        self._warm_up = warm_up_request(lesson, self.grading(lesson), self.limits.timeout)

    def _learner_child_soon(self) -> Future[WorkerHandle]:
        """A learner child on its way: a fork of the starter, else started from scratch."""
        with self._lock:
            self.children += 1
        if self._starter is not None:
            return self._forker.submit(self._new_fork)
        return self._spawner.submit(self._new_child, False)

    def _take_child(self) -> WorkerHandle:
        """A learner child that has never run anything; start the next ones ahead if asked."""
        with self._lock:
            spare = self._spares.pop(0) if self._spares else None
            missing = self.prestart - len(self._spares)
        child = spare.result() if spare is not None else None
        if child is None or not child.alive:
            if child is not None:
                child.close()
            child = self._learner_child_soon().result()
        for _ in range(missing):
            ahead = self._learner_child_soon()
            with self._lock:
                self._spares.append(ahead)
        return child

    def ahead_for(self, jobs: int, left: int) -> None:
        """Start at most `jobs` children ahead, and none beyond the `left` files still to
        come (a batch pool's `on_take`)."""
        self.prestart = min(jobs, left)

    def start_spare(self) -> None:
        """Start a learner child ahead now, unless one is waiting already.

        For a caller that knows when the machine is idle (`check()`'s server, right after it
        answers): a child started while another grades competes with it for the CPU.
        """
        with self._lock:
            if self._spares:
                return
        ahead = self._learner_child_soon()
        with self._lock:
            self._spares.append(ahead)

    def grading(self, lesson: Lesson) -> LessonGrading:
        key = lesson.meta.id
        with self._lock:
            if key not in self._gradings:
                self._gradings[key] = lesson_grading(lesson, self.seed)
            return self._gradings[key]

    def start_reference(self) -> None:
        """Start the trusted reference child ahead, for a caller that does not know its lesson
        yet (`check()`'s server): it imports JAX meanwhile. Left idle when the reference store
        keeps the record `prepare` looks for."""
        with self._reference_lock:
            self._live_reference()

    def _live_reference(self) -> Future[WorkerHandle]:
        """The reference child, started again if it ended; call with `_reference_lock`."""
        if self._reference is not None and self._reference.done():
            try:
                if not self._reference.result().alive:
                    self._reference.result().close()
                    self._reference = None
            except GradingError:
                self._reference = None
        if self._reference is None:
            self._reference = self._start_reference()
        return self._reference

    def prepare(self, lesson: Lesson) -> None:
        """Queue the reference run for this lesson, without waiting for it: none when the
        reference store keeps its record (`grade/channel/reference_store.py`), so no trusted child
        starts at all."""
        grading = self.grading(lesson)
        with self._reference_lock:
            key = lesson.meta.id
            if key in self._expected or key in self._pending:
                return
            store = reference_store(self.isolation)
            run = _reference_run(grading, f"reference-{next(self._ids)}", self.seed, store)
            kept = _kept_reference(run, grading)
            if kept is not None:
                self._expected[key] = kept
                return
            self._live_reference().add_done_callback(partial(_send_once_started, run.request))
            self._pending[key] = run

    def reference(self, lesson: Lesson) -> RunRecord:
        """The reference run's record for this lesson (waits for it the first time)."""
        grading = self.grading(lesson)
        self.prepare(lesson)
        with self._reference_lock:
            key = lesson.meta.id
            if key not in self._expected:
                assert self._reference is not None
                run = self._pending.pop(key)
                worker = self._reference.result()  # a child that cannot start raises here
                limit = self.limits.reference_timeout
                record = worker.collect(
                    run.request, time.monotonic() + limit, timeout=limit, names=run.names
                )
                try:
                    _check_reference(record, grading, worker.diagnostics())
                except GradingError:
                    worker.close()
                    raise
                if run.store is not None:  # written here, on the trusted side, after the checks
                    run.store.save(*run.stored_as, record)
                self._expected[key] = record
            return self._expected[key]

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
        grading = self.grading(lesson)
        plan = plan_submission(submission, lesson)
        self.prepare(lesson)
        worker = self._take_child()
        names = wire_names(grading, scenario_order(self.seed, submission))
        try:
            timeout = self.limits.timeout
            request = build_request(f"learner-{next(self._ids)}", plan, grading, timeout, names)
            worker.send(request)
            expected = self.reference(lesson)
            record = worker.collect(
                request,
                time.monotonic() + timeout + self.limits.grace,
                timeout=timeout,
                names=names,
            )
        finally:
            worker.close()  # one child per file: never reused
        seconds = time.perf_counter() - started
        review = review_marks(plan, varied_of(grading.grading.probes))
        if record.interfered:
            path = str(submission.path)
            report = interfered_report(lesson, path, record.interfered, seconds, self.seed)
            return GradedRun(replace(report, review=review), plan, record)
        limits = self.limits
        runs = Runs(plan, record, grading.reference, expected, limits.timeout, limits.memory)
        tasks, prerequisites = check_all(
            lesson, grading.rubrics, grading.inputs, grading.probes, runs
        )
        seconds = time.perf_counter() - started
        report = GradeReport(
            lesson.meta.id, str(submission.path), tasks, prerequisites, seconds, self.seed, review
        )
        return GradedRun(report, plan, record)
