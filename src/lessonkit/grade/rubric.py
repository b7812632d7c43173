"""What each task must produce, and the counterfactuals that expose vacuous answers.

The names a task is graded on come from the lesson itself: every name that both the
scaffold and the reference solution assign at the top level (`norm_squared`, `manual`...).
Probes are lesson knowledge: change one value while the task cell runs (add a leaf to
`grads`, drop a key from `g`) and check that the learner's values move the way the
reference's do. A check that cannot see the change is a check that can never fail.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from lessonkit.grade.plan import parse_python
from lessonkit.model import Lesson, Task


@dataclass(frozen=True)
class Probe:
    """Replace `target` by `transform(target, key, value)` whenever the task cell binds it."""

    name: str
    task: str
    target: str
    transform: str  # add_leaf, drop_key or shift_key (see worker.TRANSFORMS)
    key: str
    value: float | list[float] | None
    messages: dict[str, str]  # checked name -> what it means when that name does not follow


@dataclass(frozen=True)
class TaskRubric:
    task: Task
    names: tuple[str, ...]
    probes: tuple[Probe, ...]


_PROBES: dict[str, tuple[Probe, ...]] = {
    "state-02": (
        Probe(
            name="grads with an extra leaf",
            task="make-it-yours",
            target="grads",
            transform="add_leaf",
            key="extra",
            value=[1.0, 2.0, 2.0],
            messages={
                "norm_squared": "`norm_squared` does not count a leaf added to `grads`: add up "
                "every leaf of the tree instead of naming its keys.",
                "manual": "`manual` changes when a leaf is added to `grads`: write it from "
                'grads["weight"] and grads["bias"] by name, so that it checks norm_squared '
                "independently.",
            },
        ),
        Probe(
            name="g without its scale leaf",
            task="nested-model",
            target="g",
            transform="drop_key",
            key="scale",
            value=None,
            messages={
                "same_structure": "`same_structure` stays true when `g` lacks a key that "
                "`nested` has, so `assert same_structure` can never fail: compare the tree "
                "structure of g with that of nested.",
            },
        ),
        Probe(
            name="g with a wrong scale gradient",
            task="nested-model",
            target="g",
            transform="shift_key",
            key="scale",
            value=1.0,
            messages={
                "scale_by_hand": '`scale_by_hand` follows g["scale"]: it is read from the '
                "gradient, so the final assertion compares g with itself. Work it out from x, "
                "weight and bias instead.",
            },
        ),
    ),
}


def assigned_names(code: str) -> tuple[str, ...]:
    """Names bound by top-level assignments, in order (function definitions excluded)."""
    names: list[str] = []
    for statement in parse_python(code).body:
        if isinstance(statement, ast.Assign):
            targets = [t for target in statement.targets for t in _flat_targets(target)]
        elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
            targets = [statement.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in names:
                names.append(target.id)
    return tuple(names)


def _flat_targets(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for element in target.elts for t in _flat_targets(element)]
    return [target]


def rubric_for(lesson: Lesson) -> tuple[TaskRubric, ...]:
    """One rubric per task, in lesson order."""
    probes = _PROBES.get(lesson.meta.id, ())
    rubrics = []
    for task in lesson.tasks:
        in_solution = assigned_names(task.solution)
        in_scaffold = set(assigned_names(task.scaffold))
        names = tuple(n for n in in_solution if n in in_scaffold)
        rubrics.append(TaskRubric(task, names, tuple(p for p in probes if p.task == task.id)))
    return tuple(rubrics)
