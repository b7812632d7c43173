"""What each task must produce, and the counterfactuals that expose vacuous answers.

The names a task is graded on come from the lesson itself: the names its scaffold leaves as
`todo(...)` and its reference solution assigns (`norm_squared`, `manual`...). Probes are
declared in the lesson's `{grading}` block: each varies a value at its source, in a scenario
of its own (`grade.preparation.probes`), and the learner's values must move the way the
reference's do.
A check that cannot see the change is a check that can never fail.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TypeVar

from lessonkit.grading_child.names import bindings
from lessonkit.lesson.model import Grading, Lesson, Probe, Task
from lessonkit.lesson.rules import RuleKind, TaskRule
from lessonkit.lesson.syntax import parse_python

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


def _statements(body: list[ast.stmt]):
    """The cell's statements, inside `try`, `if`, `for`, `while` and `with` blocks too, but
    not inside function or class bodies: what the cell itself binds."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, field, []))
        for handler in getattr(statement, "handlers", []):
            yield from _statements(handler.body)


def assigned_names(code: str) -> tuple[str, ...]:
    """Names the cell's assignments bind, in order (function bodies excluded)."""
    statements = _statements(parse_python(code).body)
    return tuple(dict.fromkeys(n for s in statements for n in bindings(s, augmented=True)))


def todo_names(code: str) -> tuple[str, ...]:
    """Names a scaffold assigns from `todo(...)`: what the learner must compute."""
    names: list[str] = []
    for statement in _statements(parse_python(code).body):
        if not isinstance(statement, ast.Assign | ast.AnnAssign):
            continue
        value = statement.value
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "todo"
        ):
            continue
        names.extend(bindings(statement))
    return tuple(dict.fromkeys(names))


def rubric_for(lesson: Lesson, grading: Grading) -> tuple[TaskRubric, ...]:
    """One rubric per task, in lesson order."""
    rubrics = []
    for task in lesson.tasks:
        answers = set(todo_names(task.scaffold))
        names = tuple(n for n in assigned_names(task.solution) if n in answers)
        probes = tuple(p for p in grading.probes if p.task == task.id)
        rubrics.append(TaskRubric(task, names, probes, tuple(grading.rules_for(task.id).items())))
    return tuple(rubrics)
