"""A lesson's declared attempts (or cheats) written as practice files: each task's cell
filled with its code, and the files packed so each task is tried once per file.

Apart from the proofs that grade them (`attempts`), since the grader's own diagnosis runs the
same files in its reference child (`grade.preparation.mistakes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar

from lessonkit.lesson.cell import task_cell_source
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.scripts import render_exercise_script


def attempt_script(
    lesson: Lesson, bodies: Mapping[str, str] | None = None, *, unsolved: tuple[str, ...] = ()
) -> str:
    """The practice script with task cells filled in, each keeping its `# TASK <id>` line.

    `bodies[task_id]` replaces that task's code; other tasks get the reference solution,
    except those named in `unsolved`, which keep their scaffold.
    """
    bodies = bodies or {}
    text = render_exercise_script(lesson)
    for task in lesson.tasks:
        if task.id in unsolved:
            continue
        scaffold = task_cell_source(task, task.scaffold)
        if scaffold not in text:
            raise ValueError(f"the scaffold of task {task.id!r} is not in the practice script")
        body = bodies.get(task.id, task.solution)
        text = text.replace(scaffold, task_cell_source(task, body))
    return text


class _ForTask(Protocol):
    """A declared attempt or a built cheat: code for one task."""

    @property
    def task(self) -> str: ...

    @property
    def code(self) -> str: ...


Packed = TypeVar("Packed", bound=_ForTask)


def pack_by_task(items: tuple[Packed, ...]) -> list[dict[str, Packed]]:
    """Attempts (or cheats) packed into as few files as possible: one per task in each file.

    Tasks are graded independently of each other, so the k-th attempt of every task can
    share the k-th file, and proving 12 attempts over 4 tasks costs 3 learner runs, not 12.
    """
    packed: list[dict[str, Packed]] = []
    for item in items:
        target = next((r for r in packed if item.task not in r), None)
        if target is None:
            target = {}
            packed.append(target)
        target[item.task] = item
    return packed
