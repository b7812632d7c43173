"""`lessonkit new`: a skeleton lesson that builds, runs, grades and verifies as it is."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from lessonkit.lesson.load import load_lesson

from conftest import REPO, invoke


@dataclass(frozen=True)
class Made:
    root: Path
    code: int
    text: str


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Made:
    root = tmp_path_factory.mktemp("new-lesson")
    (root / "phases").mkdir()
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    code, out, err = invoke(["new", "loops-01", "--phase", "04"], root=root, cwd=root)
    return Made(root, code, out + err)


def test_new_writes_a_lesson_with_its_first_record_and_site(made):
    assert made.code == 0, made.text
    folder = made.root / "phases" / "04-phase-04" / "01-loops-01"
    lesson = load_lesson(folder / "lesson.md")
    assert lesson.meta.id == "loops-01" and lesson.meta.phase.number == "04"
    assert (folder / "outputs" / "execution.json").is_file()
    assert (made.root / "build" / "site" / "loops-01" / "index.html").is_file()
    code, out, err = invoke(["verify"], root=made.root, cwd=made.root)
    assert code == 0, out + err


def test_the_skeleton_grades_right_and_wrong_answers(made, tmp_path):
    practice = made.root / "phases" / "04-phase-04" / "01-loops-01" / "exercises" / "loops-01.py"
    scaffold = practice.read_text(encoding="utf-8")
    placeholder = 'total = todo("total: the sum of every number in scaled")'
    assert placeholder in scaffold
    answers = {
        "right": "total = sum(jnp.sum(leaf) for leaf in jax.tree.leaves(scaled))",
        "hard-coded": "total = jnp.array(12.0)",
    }
    statuses = {}
    for name, answer in answers.items():
        path = tmp_path / f"{name}.py"
        path.write_text(scaffold.replace(placeholder, answer), encoding="utf-8")
        _, out, _ = invoke(["check", "loops-01", str(path), "--json"], root=made.root)
        statuses[name] = [t["status"] for t in json.loads(out)["tasks"]]
    assert statuses == {"right": ["passed"], "hard-coded": ["failed"]}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["new", "Loops", "--phase", "04"], "is not lowercase words and digits"),
        (["new", "loops-02", "--phase", "4"], "--phase '4' is not two digits"),
        (["new", "loops-01", "--phase", "05"], "lesson 'loops-01' exists already"),
    ],
)
def test_new_refuses_a_bad_or_taken_id(made, argv, message):
    code, _, err = invoke(argv, root=made.root, cwd=made.root)
    assert code == 2 and message in err
    assert not (made.root / "phases" / "05-phase-05").exists()


def test_new_refuses_a_phase_with_no_free_place(made):
    code, _, err = invoke(["new", "loops-02", "--phase", "04"], root=made.root, cwd=made.root)
    assert code == 2 and "phase 04 has no place for another lesson" in err, err
    assert "add `- ~` to the `lessons:` list" in err
    assert not list((made.root / "phases" / "04-phase-04").glob("02-*"))


def test_new_joins_an_existing_phase_at_its_first_free_place(made, tmp_path):
    """The new lesson copies the phase as its siblings describe it and takes the first `~`."""
    root = tmp_path / "repo"
    shutil.copytree(made.root, root, ignore=shutil.ignore_patterns("build", "runs"))
    first = root / "phases" / "04-phase-04" / "01-loops-01" / "lesson.md"
    text = first.read_text(encoding="utf-8")
    text = text.replace("    - Loops 01\n", "    - Loops 01\n    - ~\n    - ~\n")
    first.write_text(text.replace("lesson_count: 1", "lesson_count: 3"), encoding="utf-8")
    argv = ["new", "loops-02", "--phase", "04", "--title", "Loops: the sequel"]
    code, out, err = invoke(argv, root=root, cwd=root)
    assert code == 0, out + err
    lesson = load_lesson(root / "phases" / "04-phase-04" / "02-loops-02" / "lesson.md")
    assert lesson.meta.phase.lessons == ("Loops 01", "Loops: the sequel", None)
    assert (lesson.meta.lesson_number, lesson.meta.lesson_count) == (2, 3)
    assert lesson.meta.previous == "Loops 01"
    code, out, err = invoke(["verify"], root=root, cwd=root)
    assert code == 0, out + err
