"""The practice notebook's recorded cell outputs: shown where the reference run printed them,
never on task cells, folded after a prediction prompt, and checked for staleness by verify."""

from __future__ import annotations

import json

import nbformat

from lessonkit.lesson.layout import lesson_cells
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.model import Lesson
from lessonkit.receipts.cells import RECORD, current_outputs, recorded_cells, stale_cells
from lessonkit.render.notebook import build_notebook

from conftest import copy_lesson_repo, invoke

BEFORE_AFTER = "Before/after: 4.0 0.6399999260902405\n"  # what step 3 prints


def test_the_committed_record_is_current_and_covers_only_non_task_code_cells(
    lesson: Lesson,
) -> None:
    assert stale_cells(lesson) == []
    outputs = current_outputs(lesson)
    assert set(outputs) == {c.id for c in recorded_cells(lesson)}
    tasks = {c.id for c in lesson_cells(lesson) if "task" in c.tags}
    assert tasks and not tasks & set(outputs)
    assert outputs["step-3"] == BEFORE_AFTER


def test_the_notebook_shows_recorded_outputs_folded_after_a_prediction(lesson: Lesson) -> None:
    outputs = {"step-3": BEFORE_AFTER, "going-further-key-paths": "layer/bias: ...\n"}
    notebook = nbformat.from_dict(build_notebook(lesson, None, outputs))
    cells = {c.id: c for c in notebook.cells}
    assert [o.text for o in cells["step-3"].outputs] == [BEFORE_AFTER]
    assert "jupyter" not in cells["step-3"].metadata
    experiment = cells["going-further-key-paths"]
    assert experiment.metadata["jupyter"] == {"outputs_hidden": True}
    assert [o.name for o in experiment.outputs] == ["stdout"]
    assert cells["step-1"].outputs == []  # nothing recorded, nothing shown


def test_the_committed_notebook_carries_the_record_and_no_task_output(lesson: Lesson) -> None:
    path = lesson.directory / lesson.exercise_paths[1]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    by_id = {c["id"]: c for c in notebook["cells"]}
    assert "".join(by_id["step-3"]["outputs"][0]["text"]) == BEFORE_AFTER
    for cell in notebook["cells"]:
        if "task" in cell["metadata"].get("tags", []):
            assert cell["outputs"] == []


def test_verify_names_the_cells_whose_code_changed_since_the_record(tmp_path) -> None:
    folder = copy_lesson_repo(tmp_path)
    record = folder / RECORD
    body = json.loads(record.read_text(encoding="utf-8"))
    step = next(c for c in body["cells"] if c["id"] == "step-3")
    step["code_sha256"] = "0" * 64  # recorded from other code than lesson.md has now
    record.write_text(json.dumps(body), encoding="utf-8")
    assert stale_cells(load_lesson(folder / "lesson.md")) == ["step-3"]
    code, out, _ = invoke(["verify", "state-02"], root=tmp_path)
    assert code == 1
    problems = [line for line in out.splitlines() if "notebook-outputs.json" in line]
    assert len(problems) == 1, out
    assert "notebook cell step-3 (changed since recorded" in problems[0]
    fix = (
        "run `lessonkit run state-02 --script all --record` (it records them all), then "
        "`lessonkit build state-02`"
    )
    assert problems[0].endswith(fix)
    assert "state-02.ipynb is out of date" in out  # the build leaves the stale output out
