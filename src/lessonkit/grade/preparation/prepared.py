"""A lesson prepared for grading: what every file of it is graded against, worked out once.

`prepare_lesson` is the one way a lesson is prepared: its grading (`lesson_grading`: input
sets drawn from the grader's seed, probes, rubrics, the practice file's layout and the
reference plan), the reference request with the names the child sees its scenarios by,
where the reference store keeps its report, and that report once it is known: read back
from the store when this very run was kept and still passes `check_reference`, else
collected by the grader from its trusted reference child. A `PreparedLesson` is frozen;
knowing the report makes a new one (`with_child_report`). A file's plan is a step of its own
(`plan_cells` on `grading.layout`), taken per file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lessonkit.grade.channel.child_handle import GradingError
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import Request
from lessonkit.grade.channel.reference_store import ReferenceStore, reference_key
from lessonkit.grade.preparation.reference_checks import check_reference
from lessonkit.grade.preparation.requests import (
    LessonGrading,
    build_request,
    lesson_grading,
    wire_names,
)
from lessonkit.grade.submission.known_answers import Varied, varied_of
from lessonkit.grade.submission.plan import Plan
from lessonkit.lesson.model import Lesson


@dataclass(frozen=True)
class ReferenceRun:
    """A reference request: what the child is sent, the names it sees the scenarios by, and
    where the reference store keeps its report (None: no store)."""

    request: Request
    names: dict[str, str]
    store: ReferenceStore | None
    stored_as: tuple[str, str]  # the store's (lesson id, key): the request, hashed once


@dataclass(frozen=True)
class PreparedLesson:
    """Everything grading a lesson's files needs that no file changes."""

    grading: LessonGrading
    reference_run: ReferenceRun
    child_report: ChildReport | None  # the reference run's report, once known
    varied: Varied  # the calls the lesson's probes vary, for the review marks

    @property
    def lesson(self) -> Lesson:
        return self.grading.lesson

    @property
    def reference_plan(self) -> Plan:
        return self.grading.reference

    def with_child_report(self, child_report: ChildReport) -> PreparedLesson:
        return replace(self, child_report=child_report)


def prepare_lesson(
    lesson: Lesson, seed: int, store: ReferenceStore | None, request_id: str
) -> PreparedLesson:
    """`lesson`'s grading under `seed`, with its reference request, its scenarios named once
    for the child and the store's key alike, and the report the store keeps for that very
    request, if any."""
    grading = lesson_grading(lesson, seed)
    names = wire_names(grading)
    request = build_request(request_id, grading.reference, grading, None, names)
    meta = grading.lesson.meta
    key = reference_key(meta.id, meta.revision, seed, request, names) if store else ""
    run = ReferenceRun(request, names, store, (meta.id, key))
    return PreparedLesson(
        grading, run, _kept_report(run, grading), varied_of(grading.grading.probes)
    )


def _kept_report(run: ReferenceRun, grading: LessonGrading) -> ChildReport | None:
    """The stored report of this very reference run, if one is kept and still checks out."""
    child_report = None if run.store is None else run.store.load(*run.stored_as)
    if child_report is None:
        return None
    try:
        check_reference(child_report, grading, "")
    except GradingError:
        return None  # kept by another version of the checks: run the reference again
    return child_report
