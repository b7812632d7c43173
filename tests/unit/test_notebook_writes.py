"""The notebook is rendered as plain JSON and checked against nbformat's schema where it is
written: `write_all` validates every notebook it is about to write, before the first write."""

from __future__ import annotations

import json

import nbformat
import pytest

from lessonkit.lesson.load import load_lesson
from lessonkit.render.notebook import build_notebook, render_notebook, validate_notebook
from lessonkit.site.artifacts import write_all

from conftest import copy_lesson_repo


def test_the_rendered_notebook_is_one_nbformat_accepts_unchanged(any_lesson):
    text = render_notebook(any_lesson)
    validate_notebook(text.encode("utf-8"))
    node = nbformat.reads(text, as_version=4)
    assert json.dumps(node, indent=1, ensure_ascii=False, sort_keys=True) + "\n" == text


def test_a_notebook_nbformat_would_repair_is_refused(lesson):
    notebook = build_notebook(lesson)
    notebook["cells"][1]["id"] = notebook["cells"][0]["id"]
    with pytest.raises(nbformat.ValidationError, match="had to mend"):
        validate_notebook(json.dumps(notebook).encode("utf-8"))


def test_a_notebook_that_breaks_the_schema_is_never_written(tmp_path):
    folder = copy_lesson_repo(tmp_path)
    lesson = load_lesson(folder / "lesson.md")
    main = folder / "code" / "main.py"
    before = main.read_bytes()
    notebook = build_notebook(lesson)
    notebook["cells"][0]["cell_type"] = "poem"
    rendered = {
        "code/main.py": before + b"# changed\n",
        lesson.exercise_paths[1]: json.dumps(notebook).encode("utf-8"),
    }
    with pytest.raises(nbformat.ValidationError):
        write_all(lesson, rendered)
    assert main.read_bytes() == before  # the valid file waited for the notebook's check
