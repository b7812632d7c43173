"""One file's verdicts: what its learner child reported, judged against the reference's.

The judging step of a check (`grade.grader`: prepare → plan → run → judge). A run that
interfered with the grader has no results to believe; one the grader itself failed is not
graded; any other is checked task by task (`check_all`), and a failed or erroring task is
told which declared mistake it makes (`diagnose_all`). The declared mistakes' runs are asked
for only then (`mistakes`), since most files fail nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.judging.checks import Runs, check_all
from lessonkit.grade.judging.diagnosis import diagnose_all
from lessonkit.grade.judging.results import GradeReport, not_graded, run_failed
from lessonkit.grade.preparation.mistakes import MistakeRun
from lessonkit.grade.preparation.prepared import PreparedLesson
from lessonkit.grade.submission.plan import Plan
from lessonkit.grade.submission.review import review_marks
from lessonkit.lesson.model import Lesson
from lessonkit.run.limits import Limits


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


def judge(
    prepared: PreparedLesson,
    plan: Plan,
    child_report: ChildReport,
    expected: ChildReport,
    limits: Limits,
    mistakes: Callable[[], tuple[MistakeRun, ...]],
    path: str,
    started: float,
) -> GradeReport:
    """The verdicts on `child_report` (the learner child's run of `plan`) against
    `expected` (the reference's), timed from `started`, seeded as the inputs were drawn."""
    lesson, seed = prepared.lesson, prepared.inputs.seed
    review = review_marks(plan, prepared.varied)
    if child_report.interfered:
        seconds = time.perf_counter() - started
        report = interfered_report(lesson, path, child_report.interfered, seconds, seed)
        return replace(report, review=review)
    if child_report.ending == "grader failure":
        seconds = time.perf_counter() - started
        return not_graded(lesson, path, child_report.stop_reason or "", seconds, seed)
    runs = Runs(plan, child_report, prepared.reference, expected, limits.timeout, limits.memory)
    tasks, prerequisites = check_all(prepared, runs)
    if any(t.status in ("failed", "error") for t in tasks):
        tasks = diagnose_all(tasks, prepared, runs, mistakes())
    seconds = time.perf_counter() - started
    return GradeReport(lesson.meta.id, path, tasks, prerequisites, seconds, seed, review)
