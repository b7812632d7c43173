"""state-01 (Random keys without surprises) as a lesson: its numbers, its incremental build,
its notebook, and the same output on one and on four logical CPU devices.

Grading is in test_state01_grade.py; the toolkit itself is tested with state-02 and the
fixture lesson. Nothing in src/ knows this lesson.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lessonkit.lesson.load import load_lesson
from lessonkit.receipts.numbers import number_problems

from conftest import REPO, solved_notebook_output

FOLDER = REPO / "phases" / "03-state" / "01-random-keys-without-surprises"
MAIN = FOLDER / "code" / "main.py"
NOTEBOOK = FOLDER / "exercises" / "state-01.ipynb"
STEP_OUTPUT = [
    "Key types: key<fry> uint32 (2,)",
    "Same key, same numbers: True",
    "Distinct draws, reused key: 1",
    "Distinct draws, fold_in: 6",
]


@pytest.fixture(scope="module")
def state01():
    return load_lesson(FOLDER / "lesson.md")


def _python(path, cwd, devices: int = 1) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    return subprocess.run(
        [sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_lesson_has_the_parts_of_a_course_lesson(state01):
    kinds = [t.kind for t in state01.tasks]
    assert kinds == ["exercise", "practice", "challenge"]
    assert len(state01.steps) == 3 and len(state01.core_experiments) == 2
    assert len(state01.quizzes) >= 3 and all(q.explanation for q in state01.quizzes)
    assert state01.meta.lesson_number == 1 and state01.meta.phase.lessons[0] == "state-01"


def test_every_number_the_prose_states_is_declared_and_computed(state01):
    assert number_problems(state01) == ()
    names = {number.name for number in state01.numbers}
    assert {"first_draw", "noise_first", "distinct_reused", "distinct_fold_in"} <= names


def test_incremental_build(state01, tmp_path):
    """Step 1, then 1-2, then 1-3, each run on its own as the learner builds main.py."""
    main, code = tmp_path / "main.py", ""
    for step, lines in zip(state01.steps, (1, 2, 4), strict=True):
        code += step.code + "\n\n"
        main.write_text(code)
        result = _python(main, tmp_path)
        assert result.returncode == 0, (step.title, result.stderr)
        assert result.stdout.splitlines() == STEP_OUTPUT[:lines], step.title


def test_the_example_prints_the_same_lines_on_one_and_four_devices(tmp_path):
    one, four = _python(MAIN, REPO), _python(MAIN, REPO, devices=4)
    assert one.returncode == 0 and four.returncode == 0, (one.stderr, four.stderr)
    assert one.stdout == four.stdout
    assert "Sharded draw matches one device: True" in one.stdout
    assert one.stdout.splitlines()[-1] == "PASS: state-01"


def test_the_notebook_runs_when_solved_and_stops_at_each_todo(state01, tmp_path):
    text = solved_notebook_output(state01, NOTEBOOK, tmp_path)
    assert "Reused key repeats its numbers: True" in text and "Walk after 4 steps: (3,)" in text
