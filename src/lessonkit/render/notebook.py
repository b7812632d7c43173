"""The exercise notebook (nbformat 4): the practice cells plus collapsed reference solutions."""

from __future__ import annotations

import base64
import json

import nbformat
from nbformat import v4

from lessonkit.model import Lesson
from lessonkit.render.cells import Cell, generated_note, lesson_cells


def _notebook_cell(cell: Cell, figure_png: bytes | None, title: str) -> nbformat.NotebookNode:
    metadata: dict = {}
    if cell.tags:
        metadata["tags"] = list(cell.tags)
    if cell.kind == "markdown":
        if cell.solution:
            metadata["jupyter"] = {"source_hidden": True}
        node = v4.new_markdown_cell(cell.source, metadata=metadata)
    else:
        node = v4.new_code_cell(cell.source, metadata=metadata)
        if cell.figure and figure_png is not None:
            node.outputs = [
                v4.new_output(
                    "display_data",
                    data={
                        "image/png": base64.b64encode(figure_png).decode("ascii"),
                        "text/plain": f"<Figure: {title}>",
                    },
                )
            ]
    node.id = cell.id
    return node


def build_notebook(lesson: Lesson, figure_png: bytes | None = None) -> nbformat.NotebookNode:
    """The notebook node; `figure_png` becomes the plot cell's recorded output."""
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
    notebook.cells = [_notebook_cell(c, figure_png, title) for c in lesson_cells(lesson)]
    return notebook


def render_notebook(lesson: Lesson, figure_png: bytes | None = None) -> str:
    """Serialized notebook text, stable byte for byte for the same lesson and figure."""
    notebook = build_notebook(lesson, figure_png)
    nbformat.validate(notebook)
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
