"""state-04 (Control flow under jit) as a lesson: its parts, its numbers, its incremental
build, the example's output and its notebook, solved and as scaffolded.

Grading is in test_state04_grade.py. Nothing in src/ knows this lesson.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lessonkit.lesson.load import load_lesson
from lessonkit.receipts.numbers import number_problems

from conftest import REPO, solved_notebook_output

FOLDER = REPO / "phases" / "03-state" / "04-control-flow-under-jit"
MAIN = FOLDER / "code" / "main.py"
NOTEBOOK = FOLDER / "exercises" / "state-04.ipynb"
STEP_OUTPUT = [
    "Eager: -0.2",
    "Under jit: TracerBoolConversionError",
    "JAX says: Attempted boolean conversion of traced array with shape bool[].",
    "cond under jit: -0.2",
    "switch under jit: -0.2",
    "Gradient norm: 13.0",
    "Values: [0.0, 0.0, 2.0]",
    "One where, gradients: [nan, nan, 0.25]",
    "Two wheres, gradients: [0.0, 0.0, 0.25]",
    "fori_loop: 2.90625 after 5 steps",
    "while_loop: 2.994141 after 9 steps",
    "Cached programs: 3 and 1",
    "Traces with static_argnums: 3 with switch: 1",
]
LINES_AFTER_STEP = (3, 6, 9, 11, 13)


@pytest.fixture(scope="module")
def state04():
    return load_lesson(FOLDER / "lesson.md")


def _python(path, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.run(
        [sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_lesson_has_the_parts_of_a_course_lesson(state04):
    assert [t.kind for t in state04.tasks] == ["exercise", "practice", "challenge"]
    assert len(state04.steps) == 5 and len(state04.core_experiments) == 2
    assert len(state04.quizzes) >= 3 and all(q.explanation for q in state04.quizzes)
    meta = state04.meta
    assert (meta.lesson_number, len(meta.phase.lessons), meta.minutes) == (4, 4, 60)
    assert meta.phase.lessons[meta.lesson_number - 2] == "state-03"
    assert None not in meta.phase.lessons


def test_the_tasks_declare_method_and_jit_rules(state04):
    grading = state04.grading
    assert grading is not None
    assert grading.rules_for("clip-update")["method"].forbid == ("if",)
    assert grading.rules_for("clip-update")["jit"].functions == ("clip_update",)
    assert grading.rules_for("newton")["jit"].functions == ("newton_sqrt",)
    for task in state04.tasks:
        wrong = [a for a in grading.attempts if a.task == task.id and a.expect != "passed"]
        assert len(wrong) >= 4 and all(a.message for a in wrong), task.id


def test_every_number_the_prose_states_is_declared_and_computed(state04):
    assert number_problems(state04) == ()
    names = {number.name for number in state04.numbers}
    assert {"static_total", "switch_total", "while_steps", "fori_gradient"} <= names


def test_incremental_build(state04, tmp_path):
    """Step 1, then 1-2, ... each run on its own as the learner builds main.py."""
    main, code = tmp_path / "main.py", ""
    for step, lines in zip(state04.steps, LINES_AFTER_STEP, strict=True):
        code += step.code + "\n\n"
        main.write_text(code)
        result = _python(main, tmp_path)
        assert result.returncode == 0, (step.title, result.stderr)
        assert result.stdout.splitlines() == STEP_OUTPUT[:lines], step.title


def test_the_example_runs_every_experiment_and_solution():
    result = _python(MAIN, REPO)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[: len(STEP_OUTPUT)] == STEP_OUTPUT
    assert "Branches traced: {'true': 1, 'false': 1}" in lines
    assert "Gradient through fori_loop: 1.875" in lines
    assert "Clipped norm: 6.5" in lines and "NaN in gradients: False" in lines
    assert lines[-1] == "PASS: state-04"


def test_the_notebook_runs_when_solved_and_stops_at_each_todo(state04, tmp_path):
    text = solved_notebook_output(state04, NOTEBOOK, tmp_path)
    assert "Newton: 5.5001 after 5 steps" in text and "Clipped norm: 6.5" in text
