"""The exercise notebook (nbformat 4): the practice cells plus collapsed reference solutions.

Code cells carry the reference run's outputs (task cells none): the figure, and what each
cell printed when recorded by `lessonkit run --record` (`lessonkit.receipts.cells`); the output
of an experiment, which follows a "Predict first" prompt, is folded.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping

import nbformat
from nbformat import v4

from lessonkit.lesson.layout import Cell, generated_note, lesson_cells
from lessonkit.lesson.model import Lesson


def _notebook_cell(
    cell: Cell, figure_png: bytes | None, stdout: str | None, title: str
) -> nbformat.NotebookNode:
    metadata: dict = {}
    if cell.tags:
        metadata["tags"] = list(cell.tags)
    if cell.kind == "markdown":
        if cell.solution:
            metadata["jupyter"] = {"source_hidden": True}
        node = v4.new_markdown_cell(cell.source, metadata=metadata)
    else:
        if stdout and "experiment" in cell.tags:
            # It follows a "Predict first" prompt: the output stays folded until asked for.
            metadata["jupyter"] = {"outputs_hidden": True}
        node = v4.new_code_cell(cell.source, metadata=metadata)
        if stdout:
            node.outputs.append(v4.new_output("stream", name="stdout", text=stdout))
        if cell.figure and figure_png is not None:
            node.outputs.append(
                v4.new_output(
                    "display_data",
                    data={
                        "image/png": base64.b64encode(figure_png).decode("ascii"),
                        "text/plain": f"<Figure: {title}>",
                    },
                )
            )
    node.id = cell.id
    return node


def build_notebook(
    lesson: Lesson, figure_png: bytes | None = None, outputs: Mapping[str, str] | None = None
) -> nbformat.NotebookNode:
    """The notebook node; `figure_png` becomes the plot cell's recorded output, and
    `outputs` (cell id -> stdout, from `cell_outputs`) the other code cells'."""
    outputs = outputs or {}
    notebook = v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "lessonkit": {
            "lesson": lesson.meta.id,
            "generated": generated_note(lesson, "this notebook"),
        },
    }
    title = lesson.figure.title
    notebook.cells = [
        _notebook_cell(c, figure_png, outputs.get(c.id), title) for c in lesson_cells(lesson)
    ]
    return notebook


def render_notebook(
    lesson: Lesson, figure_png: bytes | None = None, outputs: Mapping[str, str] | None = None
) -> str:
    """Serialized notebook text, stable byte for byte for the same lesson, figure and outputs."""
    notebook = build_notebook(lesson, figure_png, outputs)
    nbformat.validate(notebook)
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
