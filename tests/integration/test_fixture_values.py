"""A lesson that holds every kind of value a lesson holds (issue 32), through every command.

The fixture (tests/fixtures/values/98-fixture-values/01-optimizer-state) binds, in its one
step, an optax transformation (`sgd`, `adam`) and Adam's state (NamedTuples), key paths, a
registered dataclass, a jitted function, a NaN and an int; its tasks grade an optimizer
state, an int and a key path. It is copied alone into a throwaway repository, then built,
recorded, verified (its declared wrong attempts must fail with their messages, its right
ones pass, every cheat fails), graded and evidenced there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from lessonkit.lesson.load import load_lesson

from conftest import FIXTURE_ROOT, REPO, grade_shared, invoke, make_attempt

LESSON_ID = "fixture-02"
FOLDER = FIXTURE_ROOT / "values" / "98-fixture-values" / "01-optimizer-state"
TASKS = ("adam-step", "key-names")


@dataclass(frozen=True)
class Repo:
    root: Path
    steps: dict[str, tuple[int, str]]  # command: (exit code, stdout + stderr)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Repo:
    root = tmp_path_factory.mktemp("values-lesson")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(FOLDER.parent, root / "phases" / FOLDER.parent.name)
    steps = {}
    for argv in (
        ["build", LESSON_ID],  # writes its files, then stops: no execution record yet
        ["run", LESSON_ID, "--record"],
        ["build"],
        ["verify", LESSON_ID],
    ):
        code, out, err = invoke(argv, root=root, cwd=root)
        steps[" ".join(argv)] = (code, out + err)
    return Repo(root, steps)


@pytest.fixture(scope="module")
def lesson():
    return load_lesson(FOLDER / "lesson.md")


WRONG = {
    "float-count": (
        "key-names",
        "state_leaves = float(len(jax.tree.leaves(opt_state)))\n"
        "first_path = jax.tree_util.tree_flatten_with_path(opt_state)[0][0][0]\n",
        "`state_leaves` is 5.0; expected 5.",
    ),
    "params-path": (
        "key-names",
        "state_leaves = len(jax.tree.leaves(opt_state))\nfirst_path = paths[0][0]\n",
        "`first_path` at `0` is DictKey; expected SequenceKey",
    ),
    "no-step": (
        "adam-step",
        "new_state = opt_state\nstepped = values\n",
        "`new_state` at `0/count` is 0; expected 1.",
    ),
}


@pytest.fixture(scope="module")
def reports(lesson, tmp_path_factory) -> dict[str, dict]:
    files = {
        "solved.py": make_attempt(lesson),
        "unsolved.py": make_attempt(lesson, unsolved=TASKS),
    }
    for name, (task, code, _) in WRONG.items():
        files[f"{name}.py"] = make_attempt(lesson, {task: code})
    return grade_shared(tmp_path_factory, "grade-fixture-values", lesson, files)


def test_the_lesson_builds_records_and_verifies(repo):
    """`verify` grades the declared attempts: wrong ones fail with their messages."""
    code, text = repo.steps[f"run {LESSON_ID} --record"]
    assert code == 0 and f"PASS: {LESSON_ID}" in text, text
    assert repo.steps["build"][0] == 0, repo.steps["build"][1]
    code, text = repo.steps[f"verify {LESSON_ID}"]
    assert code == 0, text


def test_the_solved_copy_passes_every_step_and_task(reports):
    """Each step holds an optimizer, a jitted function, a NaN, key paths: none may fail."""
    solved = reports["solved.py"]
    assert [p["status"] for p in solved["prerequisites"]] == ["passed"] * len(
        solved["prerequisites"]
    ), solved["prerequisites"]
    assert [(t["id"], t["status"]) for t in solved["tasks"]] == [(t, "passed") for t in TASKS]
    unsolved = reports["unsolved.py"]
    assert [t["status"] for t in unsolved["tasks"]] == ["not attempted"] * len(TASKS)


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_copy_fails_for_its_reason(reports, name):
    task, _, message = WRONG[name]
    (result,) = [t for t in reports[f"{name}.py"]["tasks"] if t["id"] == task]
    assert result["status"] == "failed", result
    said = result["message"]  # a declared mistake is named first, then what the check found
    assert said.startswith((message, "This is a known mistake")) and message in said, said


def test_evidence_shows_every_item(repo, lesson, tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text(make_attempt(lesson), encoding="utf-8")
    code, out, err = invoke(["evidence", LESSON_ID, str(mine)], root=repo.root, cwd=tmp_path)
    assert code == 0, out + err
    (report,) = (tmp_path / "evidence").iterdir()
    text = report.read_text(encoding="utf-8")
    assert "nothing to show" not in text
    assert text.count("│   ├── count: int32[]") == 2  # opt_state and new_state as trees
    assert "layer: Layer(name='dense')\n└── w: float32[2]" in text  # a registered dataclass
    assert "`state_leaves` in your run: 5\n" in text and "`first_path` in your run: " in text
    assert "Task *One Adam step*: passed" in text and "Task *Count and name the leaves*" in text
