"""One cell of the practice files, and the task cell that the grader finds by its first line.

Both practice files (the percent-format script and the notebook) are a sequence of these
cells (`lesson.layout`); the item kinds (`lesson.item_kinds`) make them, and the recorded
outputs and the grader read a task cell's source the same way.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Literal

from lessonkit.lesson.model import Task

TASK_MARKER = "# TASK {id}"
"""First line of every task cell; the grader finds task cells by it in .py and .ipynb files."""

OPTIONAL_LINE = "with optional_task():  # indent your code under this line"
"""Opens every optional task cell: its `todo(...)` must not stop the script or Run All (the
helper cell defines `optional_task`, `lesson.layout.OPTIONAL_HELPER`)."""


@dataclass(frozen=True)
class Cell:
    id: str
    kind: Literal["markdown", "code"]
    source: str
    tags: tuple[str, ...] = ()
    solution: bool = False  # only the notebook shows reference solutions
    figure: bool = False  # the plotting cell; the notebook attaches the recorded figure


def task_cell_source(task: Task, code: str) -> str:
    """A task cell: its marker line, then the code; an optional task's code sits under
    `with optional_task():`, so leaving it unfinished never stops a run."""
    header = (
        TASK_MARKER.format(id=task.id) + f" · {task.title}: replace every todo(...) with your code."
    )
    if task.optional:
        return f"{header}\n{OPTIONAL_LINE}\n{textwrap.indent(code, '    ')}"
    return f"{header}\n{code}"
