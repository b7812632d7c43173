"""The lesson's declared mistakes, run on the reference's scenarios in its trusted child.

Each `:expect: failed` attempt that explains itself (`DeclaredAttempt.is_mistake`) is trusted
lesson code: it runs where the reference runs, on the same scenarios under the same names, so
that `grade.judging.diagnosis` can tell which mistake a learner's values behave like. Attempts are
packed one per task per request (`grade.preparation.attempt_files.pack_by_task`), and the cells of
tasks a
request does not try are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import Request
from lessonkit.grade.preparation.attempt_files import attempt_script, pack_by_task
from lessonkit.grade.preparation.prepared import PreparedLesson, build_request
from lessonkit.grade.submission.plan import SKIP, Plan, plan_cells
from lessonkit.grade.submission.sources import read_submission
from lessonkit.lesson.mistakes import declared_mistakes
from lessonkit.lesson.model import DeclaredAttempt


@dataclass(frozen=True)
class MistakeRequest:
    """One request of declared mistakes: one per task at most, and the plan they run in."""

    attempts: tuple[DeclaredAttempt, ...]
    plan: Plan
    request: Request


@dataclass(frozen=True)
class MistakeRun:
    """One declared mistake, with the plan it ran in and that run's report."""

    attempt: DeclaredAttempt
    plan: Plan
    child_report: ChildReport


def mistake_requests(
    prepared: PreparedLesson, names: dict[str, str], prefix: str
) -> tuple[MistakeRequest, ...]:
    """The requests that run every declared mistake on the scenarios `names` gives."""
    lesson = prepared.lesson
    requests = []
    for number, chosen in enumerate(pack_by_task(declared_mistakes(lesson))):
        script = attempt_script(lesson, {task: a.code for task, a in chosen.items()})
        path = Path(f"mistakes-{number:02d}.py")
        plan = plan_cells(read_submission(path, script.encode()), prepared.layout)
        cells = tuple(
            replace(c, role=SKIP) if c.task is not None and c.task not in chosen else c
            for c in plan.cells
        )
        plan = replace(plan, cells=cells)
        request = build_request(f"{prefix}-{number}", plan, prepared, None, names)
        requests.append(MistakeRequest(tuple(chosen.values()), plan, request))
    return tuple(requests)


def mistake_runs(
    requests: tuple[MistakeRequest, ...], child_reports: list[ChildReport]
) -> tuple[MistakeRun, ...]:
    """Each declared mistake with the report of the request it ran in."""
    return tuple(
        MistakeRun(attempt, sent.plan, child_report)
        for sent, child_report in zip(requests, child_reports, strict=True)
        for attempt in sent.attempts
    )
