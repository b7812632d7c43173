"""Notebooks as Jupyter saves them, graded by `lessonkit check FILE --json`: with saved
outputs, with the kernel calls IPython writes for a magic, and with a task cell copied."""

from __future__ import annotations

import base64
import json
import os
import re

import pytest

from conftest import LESSON_DIR, invoke, task_result


def _notebook(lesson, first_code: str = "", extra_task: str | None = None) -> dict:
    """The practice notebook with every task solved; `first_code` goes before the first code
    cell's own code, and `extra_task` becomes a second cell for adam-by-hand."""
    notebook = json.loads((LESSON_DIR / "exercises" / "state-02.ipynb").read_text("utf-8"))
    cells = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        task = next((t for t in lesson.tasks if source.startswith(f"# TASK {t.id}")), None)
        if task is not None:
            cell["source"] = f"# TASK {task.id}\n{task.solution}"
        cells.append(cell)
        if task is not None and task.id == "adam-by-hand" and extra_task is not None:
            cells.append({**cell, "source": f"# TASK adam-by-hand\n{extra_task}"})
    first = next(c for c in cells if c["cell_type"] == "code")
    first["source"] = first_code + "".join(first["source"])
    notebook["cells"] = cells
    return notebook


def _check(tmp_path, name: str, notebook: dict) -> tuple[int, dict | None, str]:
    path = tmp_path / name
    path.write_text(json.dumps(notebook), encoding="utf-8")
    code, out, err = invoke(["check", "state-02", str(path), "--json"])
    return code, (json.loads(out) if out.strip() else None), err


def test_saved_outputs_do_not_count_towards_the_size_cap(lesson, tmp_path):
    """A right notebook with 3 MB of saved image output passes; its code is what is capped."""
    notebook = _notebook(lesson)
    figure = next(c for c in notebook["cells"] if "figure" in c["metadata"].get("tags", []))
    image = base64.b64encode(os.urandom(2_300_000)).decode()
    figure["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": image}}
    ]
    code, report, err = _check(tmp_path, "with-outputs.ipynb", notebook)
    assert (tmp_path / "with-outputs.ipynb").stat().st_size > 3_000_000
    assert code == 0 and report is not None and report["passed"] is True, err


def test_kernel_calls_jupyter_would_run_are_run(lesson, tmp_path):
    magic = 'get_ipython().run_line_magic("matplotlib", "inline")\n'
    code, report, err = _check(tmp_path, "magic-call.ipynb", _notebook(lesson, magic))
    assert report is not None, err
    assert [t["status"] for t in report["tasks"]] == ["passed"] * 4, report["tasks"]
    assert code == 0 and all(p["status"] == "passed" for p in report["prerequisites"])


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ('get_ipython().run_line_magic("env", "A=1")\n', "magic: %env"),
        ('get_ipython().system("pip install optax")\n', "shell command: get_ipython().system"),
    ],
    ids=["other magic", "system"],
)
def test_other_kernel_calls_are_named_in_their_own_cell(lesson, tmp_path, line, named):
    _, report, err = _check(tmp_path, "kernel-call.ipynb", _notebook(lesson, line))
    assert report is not None, err
    failing = [p for p in report["prerequisites"] if p["status"] != "passed"]
    assert [p["name"] for p in failing] == ["Helper (cell [1])"], failing
    message = failing[0]["message"]
    assert re.match(
        rf"NameError at cell \[1\], line 1: uses a Jupyter {re.escape(named)}, ", message
    )
    assert message.endswith(f"cell [1], line 1: {line.strip()}")


def test_two_cells_for_one_task_are_an_error_naming_both(lesson, tmp_path):
    wrong = "with optional_task():\n    adam_by_hand = params\n"
    code, report, err = _check(tmp_path, "two-cells.ipynb", _notebook(lesson, extra_task=wrong))
    assert code == 1 and report is not None, err
    result = task_result(report, "adam-by-hand")
    assert result["status"] == "error", result
    assert re.match(
        r"More than one cell starts with `# TASK adam-by-hand`: "
        r"cell \[(\d+)\] \(\"Adam's first step by hand\"\) and cell \[(\d+)\] \(\"Adam's",
        result["message"],
    ), result["message"]
