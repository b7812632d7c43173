"""The exercise notebook (nbformat 4.5): the practice cells plus collapsed reference solutions.

Code cells carry the reference run's outputs (task cells none; an experiment's is folded).
The notebook is built as plain JSON, field for field what nbformat's `v4.new_*` helpers make:
importing nbformat costs a second of CPU, and a build with nothing to do only compares. The
schema check, `validate_notebook`, runs where a notebook is written (`site.artifacts`).
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Mapping
from typing import Any

from lessonkit.lesson.cell import Cell
from lessonkit.lesson.layout import generated_note, lesson_cells
from lessonkit.lesson.model import Lesson

NBFORMAT = (4, 5)
"""The format version written: nbformat's `v4.nbformat` and `v4.nbformat_minor`."""

Json = dict[str, Any]


def _outputs(cell: Cell, figure_png: bytes | None, stdout: str | None, title: str) -> list[Json]:
    outputs: list[Json] = []
    if stdout:
        outputs.append({"output_type": "stream", "name": "stdout", "text": stdout})
    if cell.figure and figure_png is not None:
        data = {
            "image/png": base64.b64encode(figure_png).decode("ascii"),
            "text/plain": f"<Figure: {title}>",
        }
        outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
    return outputs


def _notebook_cell(cell: Cell, figure_png: bytes | None, stdout: str | None, title: str) -> Json:
    metadata: Json = {}
    if cell.tags:
        metadata["tags"] = list(cell.tags)
    if cell.kind == "markdown":
        if cell.solution:
            metadata["jupyter"] = {"source_hidden": True}
        return {"id": cell.id, "cell_type": "markdown", "metadata": metadata, "source": cell.source}
    if stdout and "experiment" in cell.tags:
        # It follows a "Predict first" prompt: the output stays folded until asked for.
        metadata["jupyter"] = {"outputs_hidden": True}
    return {
        "id": cell.id,
        "cell_type": "code",
        "metadata": metadata,
        "execution_count": None,
        "source": cell.source,
        "outputs": _outputs(cell, figure_png, stdout, title),
    }


def build_notebook(
    lesson: Lesson, figure_png: bytes | None = None, outputs: Mapping[str, str] | None = None
) -> Json:
    """The notebook as JSON data; `figure_png` becomes the plot cell's recorded output, and
    `outputs` (cell id -> stdout, from `cell_outputs`) the other code cells'.

    `nbformat.from_dict` gives it attribute access where a caller wants a NotebookNode.
    """
    outputs = outputs or {}
    title = lesson.figure.title
    return {
        "nbformat": NBFORMAT[0],
        "nbformat_minor": NBFORMAT[1],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "lessonkit": {
                "lesson": lesson.meta.id,
                "generated": generated_note(lesson, "this notebook"),
            },
        },
        "cells": [
            _notebook_cell(c, figure_png, outputs.get(c.id), title) for c in lesson_cells(lesson)
        ],
    }


def render_notebook(
    lesson: Lesson, figure_png: bytes | None = None, outputs: Mapping[str, str] | None = None
) -> str:
    """Serialized notebook text, stable byte for byte for the same lesson, figure and outputs.

    Not validated here: `validate_notebook` does that where the text is written.
    """
    notebook = build_notebook(lesson, figure_png, outputs)
    return json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def validate_notebook(content: bytes) -> None:
    """Check notebook bytes against nbformat's schema before they are written.

    Raises:
        nbformat.ValidationError: the notebook breaks the schema, or is one nbformat would
            repair (`validate` mends some faults in place, duplicate cell ids among them).
    """
    import nbformat  # imports jsonschema: only when a notebook is written

    notebook = json.loads(content)
    with warnings.catch_warnings(record=True) as repairs:  # nbformat warns of what it mends
        warnings.simplefilter("always")
        nbformat.validate(notebook)
    if notebook != json.loads(content):
        said = "; ".join(str(w.message) for w in repairs) or "no reason given"
        raise nbformat.ValidationError(f"nbformat had to mend the notebook: {said}")
