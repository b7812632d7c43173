"""Python renderings: the worked example `code/main.py` and the percent-format exercise script."""

from __future__ import annotations

from lessonkit.lesson.cell import Cell
from lessonkit.lesson.layout import generated_note, lesson_cells
from lessonkit.lesson.model import Lesson, Task


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def _script(lesson: Lesson, name: str, purpose: str, blocks: list[str], pass_line: str) -> str:
    """A runnable script: generated header, docstring, the steps, then `blocks`, then PASS."""
    meta = lesson.meta
    where = f"phases/{lesson.directory.parent.name}/{lesson.directory.name}/code/{name}"
    chunks = [
        f"# {generated_note(lesson, 'this file')}",
        f'"""{meta.title} ({meta.id}): {purpose}.\n\n'
        f'Run it from the repository root:\n\n    python {where}\n"""',
    ]
    chunks += [f"# Step {s.number} — {s.title}: {s.summary}\n{s.code}" for s in lesson.steps]
    chunks += blocks
    chunks.append(f'print("{pass_line}")')
    return "\n\n".join(chunks) + "\n"


def _solution_block(task: Task, label: str) -> str:
    return f"# {label} — {task.title} (reference solution)\n{task.solution}"


def render_main(lesson: Lesson) -> str:
    """The complete worked example: every step, experiment and reference solution, once each."""
    blocks = [f"# Experiment — {e.title}\n{e.code}" for e in lesson.core_experiments]
    blocks += [_solution_block(t, t.kind.capitalize()) for t in lesson.core_tasks]
    purpose = "worked example, experiments and reference solutions"
    return _script(lesson, "main.py", purpose, blocks, f"PASS: {lesson.meta.id}")


def render_going_further(lesson: Lesson) -> str:
    """The optional experiments, after the steps they build on, with a PASS line of their own."""
    blocks = [f"# Going further — {e.title}\n{e.code}" for e in lesson.optional_experiments]
    blocks += [_solution_block(t, "Optional task") for t in lesson.optional_tasks]
    purpose = 'the optional "going further" experiments and tasks'
    pass_line = f"PASS: {lesson.meta.id} going further"
    return _script(lesson, "going_further.py", purpose, blocks, pass_line)


def _percent_cell(cell: Cell) -> str:
    if cell.kind == "markdown":
        return f"# %% [markdown]\n{_comment(cell.source)}"
    tags = " tags=[" + ", ".join(f'"{t}"' for t in cell.tags) + "]" if cell.tags else ""
    return f"# %%{tags}\n{cell.source}"


def render_exercise_script(lesson: Lesson) -> str:
    """Percent-format cells (`# %%`): editors and jupytext open it as a notebook, no solutions."""
    cells = [c for c in lesson_cells(lesson) if not c.solution]
    return "\n\n".join(_percent_cell(c) for c in cells) + "\n"
