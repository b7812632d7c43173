"""What a learner has run in a kernel, as a submission the grader reads like a file.

The kernel's input history (`In`) holds every cell it executed, re-runs and edits included.
Each distinct input is kept once, where it was first run, so "Run all" then edits grades like
the notebook read top to bottom: a task cell (`# TASK <id>`) is the latest source run under
that id; top-level `check(...)` lines, magics, shell commands, blank inputs and `# %%` lines
are left out (a timing magic is the code it times, `grade.submission.magics`). A task this
kernel has not run is "not attempted"; a cell's line is its execution count, so "cell 14" is
`In [14]`.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from lessonkit.defaults import MAX_CELLS, MAX_CODE_CHARACTERS
from lessonkit.grade.judging import NOT_ATTEMPTED, GradeReport
from lessonkit.grade.submission import (
    CodeCell,
    Submission,
    SubmissionError,
    python_of_kernel_input,
    task_of,
)
from lessonkit.learner.messages import RunCell
from lessonkit.lesson.syntax import parse_python

_CELL_MARKER = re.compile(r"^\s*# %%[^\n]*\n?")
KERNEL_FILE = "kernel-history.ipynb"  # a notebook, so messages name cells, not file lines


def _is_check_call(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id == "check"
    )


def _answer(source: str) -> str:
    """The input without its top-level `check(...)` lines, its timing magics made plain
    Python; "" if nothing else is left, or if it needs the kernel (another magic)."""
    if "get_ipython()" in source:
        source = python_of_kernel_input(source) or ""
    if not source.strip():
        return ""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source  # the grader reports the learner's syntax error in its cell
    calls = [s for s in tree.body if _is_check_call(s)]
    if not calls:
        return source
    lines = source.split("\n")
    for call in reversed(calls):
        del lines[call.lineno - 1 : call.end_lineno]
    rest = "\n".join(lines)
    return rest if rest.strip() else ""


def history_submission(cells: Sequence[RunCell]) -> Submission:
    """The submission of a kernel's history: each input once, tasks as last run."""
    if sum(len(c.source) for c in cells) > MAX_CODE_CHARACTERS:
        raise SubmissionError(
            f"this kernel has run over {MAX_CODE_CHARACTERS:,} characters of code",
            fix="restart the kernel, run the notebook from the top, then check again",
        )
    order: list[str] = []  # a key per kept cell: "task:<id>" or the source itself
    latest: dict[str, CodeCell] = {}
    for cell in cells:
        source = _answer(_CELL_MARKER.sub("", cell.source, count=1)).strip("\n")
        if not source:
            continue
        task = task_of(source)
        key = f"task:{task}" if task else source
        if key not in latest:
            order.append(key)
        if task or key not in latest:
            latest[key] = CodeCell(source, cell.count, task)
    if len(order) > MAX_CELLS:
        raise SubmissionError(
            f"this kernel has run {len(order):,} different cells; "
            "a practice notebook has far fewer",
            fix="restart the kernel, run the notebook from the top, then check again",
        )
    return Submission(Path(KERNEL_FILE), tuple(latest[k] for k in order))


NOT_RUN = "You have not run this task's cell in this kernel yet: run it, then check again."


def mark_unrun(report: GradeReport, submission: Submission) -> GradeReport:
    """Tasks with no cell in the kernel's history: not attempted yet, rather than errors."""
    run = {c.task for c in submission.cells if c.task}
    tasks = tuple(
        t
        if t.id in run
        else dataclasses.replace(t, status=NOT_ATTEMPTED, message=NOT_RUN, hint=None)
        for t in report.tasks
    )
    return dataclasses.replace(report, tasks=tasks)


def up_to_task(submission: Submission, task: str) -> Submission:
    """Without the task cells after `task`'s: they cannot change its verdict, only slow it.

    Earlier task cells stay, since a task may use what an earlier one defined.
    """
    index = next((i for i, c in enumerate(submission.cells) if c.task == task), None)
    if index is None:
        return submission
    cells = tuple(c for i, c in enumerate(submission.cells) if i <= index or c.task is None)
    return dataclasses.replace(submission, cells=cells)
