"""Grade practice files with a grading child, run by run.

A run has explicit phases: start the child (it imports JAX at once), run the lesson's own
reference code in every scenario before any learner code, run the learner's cells in the
same scenarios, then compare everything here. The child is reused while it is clean and
replaced after a run that patched a module, timed out or ended abruptly.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

from lessonkit.grade.checks import LESSON, Runs, check_all
from lessonkit.grade.inputs import LessonInputs, inputs_for
from lessonkit.grade.plan import (
    Plan,
    bound_names,
    imported_modules,
    plan_submission,
    reference_plan,
)
from lessonkit.grade.record import RunRecord, record_from
from lessonkit.grade.results import GradeReport
from lessonkit.grade.rubric import TaskRubric, rubric_for
from lessonkit.grade.runner import DEFAULT_MEMORY, GRACE, GradingError, Worker
from lessonkit.model import Lesson
from lessonkit.sources import Submission, read_submission

DEFAULT_TIMEOUT = 60.0
REFERENCE_LIMIT = 300.0  # seconds to start the child and run the lesson's own code


@dataclass(frozen=True)
class LessonGrading:
    """Everything about grading a lesson that does not depend on the learner's file."""

    lesson: Lesson
    rubrics: tuple[TaskRubric, ...]
    inputs: LessonInputs
    reference: Plan
    step_names: tuple[str, ...]
    preload: tuple[str, ...]


def lesson_grading(lesson: Lesson) -> LessonGrading:
    return LessonGrading(
        lesson=lesson,
        rubrics=rubric_for(lesson),
        inputs=inputs_for(lesson.meta.id),
        reference=reference_plan(lesson),
        step_names=tuple(n for s in lesson.steps for n in bound_names(s.code)),
        preload=imported_modules(lesson),
    )


def scenarios(plan: Plan, grading: LessonGrading) -> list[dict]:
    """The lesson's inputs, the other input sets, then one probe run per probe."""
    out: list[dict] = [{"name": LESSON, "inputs": None, "lesson_only_cells": True}]
    out += [{"name": s.name, "inputs": s.values} for s in grading.inputs.others]
    for rubric in grading.rubrics:
        cell = plan.task_cell(rubric.task.id)
        if cell is None:
            continue
        for probe in rubric.probes:
            hook = {
                "cell": cell.index,
                "name": probe.target,
                "transform": probe.transform,
                "key": probe.key,
                "value": probe.value,
            }
            out.append({"name": probe.name, "inputs": None, "until": cell.index, "hook": hook})
    return out


def build_request(
    request_id: str, plan: Plan, grading: LessonGrading, budget: float | None
) -> dict:
    names = {r.task.id: list(r.names) for r in grading.rubrics}
    return {
        "id": request_id,
        "preload": list(grading.preload),
        "budget": budget,
        "cells": [
            {
                "index": c.index,
                "source": c.source,
                "offset": c.offset,
                "role": c.role,
                "report": names.get(c.task, []) if c.task else [],
            }
            for c in plan.cells
        ],
        "checkpoint": plan.checkpoint,
        "checkpoint_names": list(grading.step_names),
        "scenarios": scenarios(plan, grading),
    }


def _check_reference(record: RunRecord, grading: LessonGrading, diagnostics: str) -> None:
    """The lesson's own code must run cleanly, or grading against it means nothing."""
    if record.stop_reason:
        raise GradingError(
            f"the grading process could not run the lesson's reference code: {record.stop_reason}",
            fix="check that JAX imports in this environment: python -c 'import jax'"
            + (f"\n{diagnostics.strip()}" if diagnostics.strip() else ""),
        )
    names = {r.task.id: r.names for r in grading.rubrics}
    for (scenario, index), run in record.runs.items():
        cell = grading.reference.cell(index)
        if run.error is None:
            continue
        is_assert = run.error.get("type") == "AssertionError"
        reached = all(n in run.values for n in names.get(cell.task or "", ()))
        if scenario != LESSON and is_assert and reached:
            continue  # the lesson's own checks of typed-in numbers hold on its inputs only
        if scenario not in (LESSON, *(s.name for s in grading.inputs.others)) and is_assert:
            continue  # a probe makes the reference's own assertion fail, by design
        line = (run.error.get("frames") or [[index, cell.line]])[-1][1]
        raise GradingError(
            f"the lesson's reference code fails in scenario {scenario!r}: "
            f"{run.error.get('type')}: {run.error.get('message', '')[:200]}",
            where=f"{grading.lesson.path}:{line}",
            fix="fix lesson.md so that its steps and solutions run",
        )


class Grader:
    """Grades files one after another, keeping one grading child warm between them.

    The child starts as soon as the grader exists, so it imports JAX while the caller loads
    the lesson. With `warm=True` a replacement child is started right after a run that
    spoiled the old one, so the next file does not wait for JAX either.
    """

    def __init__(
        self, timeout: float = DEFAULT_TIMEOUT, memory: int = DEFAULT_MEMORY, warm: bool = False
    ):
        self.timeout = float(timeout)
        self.memory = memory
        self.warm = warm
        self._ids = itertools.count(1)
        self._worker: Worker | None = Worker(memory)
        self._pending: str | None = None  # reference request sent to this child, not collected
        self._warmed: str | None = None  # lesson whose reference ran in this child
        self._gradings: dict[str, LessonGrading] = {}
        self._expected: dict[str, RunRecord] = {}
        self.replaced = 0  # children replaced after a run that spoiled them

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def grading(self, lesson: Lesson) -> LessonGrading:
        key = lesson.meta.id
        if key not in self._gradings:
            self._gradings[key] = lesson_grading(lesson)
        return self._gradings[key]

    def prepare(self, lesson: Lesson) -> None:
        """Start a child if needed and queue the reference run, without waiting for either."""
        grading = self.grading(lesson)
        if self._worker is None or not self._worker.alive:
            self.close()
            self._worker = Worker(self.memory)
            self._warmed = None
        if self._warmed != lesson.meta.id:
            request_id = f"reference-{next(self._ids)}"
            self._worker.send(build_request(request_id, grading.reference, grading, None))
            self._pending, self._warmed = request_id, lesson.meta.id

    def _collect_reference(self, grading: LessonGrading) -> RunRecord:
        worker = self._worker
        assert worker is not None
        if self._pending is not None:
            outcome = worker.collect(self._pending, time.monotonic() + REFERENCE_LIMIT)
            self._pending = None
            record = record_from(outcome, REFERENCE_LIMIT)
            _check_reference(record, grading, worker.diagnostics())
            self._expected.setdefault(grading.lesson.meta.id, record)
        return self._expected[grading.lesson.meta.id]

    def grade(self, lesson: Lesson, path: str | Path) -> GradeReport:
        """Grade one practice file (.py or .ipynb); unreadable files raise SubmissionError."""
        started = time.perf_counter()
        return self.grade_submission(lesson, read_submission(path), started)

    def grade_submission(
        self, lesson: Lesson, submission: Submission, started: float | None = None
    ) -> GradeReport:
        started = time.perf_counter() if started is None else started
        grading = self.grading(lesson)
        plan = plan_submission(submission, lesson)
        self.prepare(lesson)
        worker = self._worker
        assert worker is not None
        request_id = f"learner-{next(self._ids)}"
        worker.send(build_request(request_id, plan, grading, self.timeout))
        try:
            expected = self._collect_reference(grading)
        except GradingError:
            self.close()
            raise
        outcome = worker.collect(request_id, time.monotonic() + self.timeout + GRACE)
        record = record_from(outcome, self.timeout)
        if not outcome.clean:
            self.replaced += 1
            self.close()
            if self.warm:
                self.prepare(lesson)
        runs = Runs(plan, record, grading.reference, expected, self.timeout)
        tasks, prerequisites = check_all(lesson, grading.rubrics, grading.inputs, runs)
        seconds = time.perf_counter() - started
        return GradeReport(lesson.meta.id, str(submission.path), tasks, prerequisites, seconds)


def grade_file(lesson: Lesson, path: str | Path, timeout: float = DEFAULT_TIMEOUT) -> GradeReport:
    """Grade one practice file in a fresh grading child."""
    with Grader(timeout) as grader:
        return grader.grade(lesson, path)
