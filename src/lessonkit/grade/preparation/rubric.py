"""What each task must produce, and the counterfactuals that expose vacuous answers.

The names a task is graded on come from the lesson itself: the names its scaffold leaves as
`todo(...)` and its reference solution assigns (`norm_squared`, `manual`...). Probes are
declared in the lesson's `{grading}` block: each varies a value at its source, in a scenario
of its own (`grade.preparation.probes`), and the learner's values must move the way the
reference's do.
A check that cannot see the change is a check that can never fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from lessonkit.lesson.model import Grading, Lesson, Probe, Task
from lessonkit.lesson.rules import RuleKind, TaskRule
from lessonkit.lesson.syntax import LessonCode, read_cells

R = TypeVar("R", bound=TaskRule)


@dataclass(frozen=True)
class TaskRubric:
    """What one task is graded on: the names its cell must compute, its probes, and its rules
    (`lesson.rules.RULES`) by their keys, as its {grading} block gives them."""

    task: Task
    names: tuple[str, ...]  # what the scaffold leaves as todo(...), in the solution's order
    probes: tuple[Probe, ...]
    rules: tuple[tuple[str, TaskRule], ...] = ()  # (rule key, the task's value of it)

    def rule(self, kind: RuleKind[R]) -> R | None:
        """The task's value of one rule; the rule's default when the task is not given it."""
        return dict(self.rules).get(kind.key, kind.default)  # type: ignore[return-value]


def rubric_for(
    lesson: Lesson, grading: Grading, code: LessonCode | None = None
) -> tuple[TaskRubric, ...]:
    """One rubric per task, in lesson order: the names its scaffold leaves as `todo(...)`,
    in the order its solution assigns them, read from `code` (the lesson's code read once,
    `PracticeLayout.code`; read here when not given)."""
    if code is None:
        code = read_cells(c for task in lesson.tasks for c in (task.scaffold, task.solution))
    rubrics = []
    for task in lesson.tasks:
        answers = set(code.of(task.scaffold).todo)
        names = tuple(n for n in code.of(task.solution).assigned if n in answers)
        probes = tuple(p for p in grading.probes if p.task == task.id)
        rubrics.append(TaskRubric(task, names, probes, tuple(grading.rules_for(task.id).items())))
    return tuple(rubrics)
