"""Python renderings: the worked example `code/main.py` and the percent-format exercise script."""

from __future__ import annotations

from lessonkit.model import Lesson
from lessonkit.render.cells import Cell, generated_note, lesson_cells


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.splitlines())


def render_main(lesson: Lesson) -> str:
    """The complete worked example: every step, experiment and reference solution, once each."""
    meta = lesson.meta
    relative = lesson.directory.name
    chunks = [
        f"# {generated_note(lesson, 'this file')}",
        f'"""{meta.title} ({meta.id}): worked example, experiments and reference solutions.\n\n'
        f"Run it from the repository root:\n\n    python phases/{lesson.directory.parent.name}/"
        f'{relative}/code/main.py\n"""',
    ]
    for step in lesson.steps:
        chunks.append(f"# Step {step.number} — {step.title}: {step.summary}\n{step.code}")
    for experiment in lesson.core_experiments:
        chunks.append(f"# Experiment — {experiment.title}\n{experiment.code}")
    for task in lesson.tasks:
        chunks.append(
            f"# {task.kind.capitalize()} — {task.title} (reference solution)\n{task.solution}"
        )
    chunks.append(f'print("PASS: {meta.id}")')
    return "\n\n".join(chunks) + "\n"


def render_going_further(lesson: Lesson) -> str:
    """The optional experiments, after the steps they build on, with a PASS line of their own."""
    meta = lesson.meta
    chunks = [
        f"# {generated_note(lesson, 'this file')}",
        f'"""{meta.title} ({meta.id}): the optional "going further" experiments."""',
    ]
    for step in lesson.steps:
        chunks.append(f"# Step {step.number} — {step.title}\n{step.code}")
    for experiment in lesson.optional_experiments:
        chunks.append(f"# Going further — {experiment.title}\n{experiment.code}")
    chunks.append(f'print("PASS: {meta.id} going further")')
    return "\n\n".join(chunks) + "\n"


def _percent_cell(cell: Cell) -> str:
    if cell.kind == "markdown":
        return f"# %% [markdown]\n{_comment(cell.source)}"
    tags = " tags=[" + ", ".join(f'"{t}"' for t in cell.tags) + "]" if cell.tags else ""
    return f"# %%{tags}\n{cell.source}"


def render_exercise_script(lesson: Lesson) -> str:
    """Percent-format cells (`# %%`): editors and jupytext open it as a notebook, no solutions."""
    cells = [c for c in lesson_cells(lesson) if not c.solution]
    return "\n\n".join(_percent_cell(c) for c in cells) + "\n"
