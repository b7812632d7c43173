"""A second lesson, written only as a lesson.md, goes through every command unchanged.

The fixture (tests/fixtures/phases/99-fixture/01-tuples) is unlike state-02 on purpose: its
state is a tuple holding a Python int, a bool and a pair of arrays (graded on drawn
integers and booleans), its step defines a function that returns a tuple, and one task's
answer is a line of printed text. It is copied with state-02 into
a throwaway repository, then built, run, recorded, verified, graded and evidenced there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.load import load_lesson

from conftest import (
    FIXTURE_MD,
    FIXTURE_ROOT,
    copy_lesson_repo,
    grade_shared,
    invoke,
    make_attempt,
)

LESSON_ID = "fixture-01"
TASKS = ("twice", "report-line")


@dataclass(frozen=True)
class Repo:
    root: Path
    steps: tuple[tuple[str, int, str], ...]  # (command, exit code, stdout + stderr)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Repo:
    root = tmp_path_factory.mktemp("two-lessons")
    copy_lesson_repo(root)
    shutil.copytree(FIXTURE_ROOT / "phases", root / "phases", dirs_exist_ok=True)
    steps = []
    for argv in (
        ["build", LESSON_ID],  # writes its files, then stops: no execution record yet
        ["run", LESSON_ID, "--record"],
        ["build"],
        ["verify"],
        ["list"],
    ):
        code, out, err = invoke(argv, root=root, cwd=root)
        steps.append((" ".join(argv), code, out + err))
    return Repo(root, tuple(steps))


def _step(repo: Repo, command: str) -> tuple[int, str]:
    (found,) = [(code, text) for name, code, text in repo.steps if name == command]
    return found


def test_the_fixture_builds_runs_records_and_verifies(repo):
    code, text = _step(repo, f"build {LESSON_ID}")
    assert code == 0 and f"next: run `lessonkit run {LESSON_ID} --script all --record`" in text
    code, text = _step(repo, f"run {LESSON_ID} --record")
    assert code == 0, text
    assert "Summary: (5, True)" in text and f"PASS: {LESSON_ID}" in text
    for command in ("build", "verify"):
        code, text = _step(repo, command)
        assert code == 0, text
    folder = repo.root / "phases" / "99-fixture" / "01-tuples"
    for name in ("code/main.py", "exercises/fixture-01.py", "exercises/fixture-01.ipynb"):
        assert (folder / name).is_file(), name
    assert (folder / "outputs" / "figure.svg").is_file()


def test_the_site_and_the_list_show_every_lesson(repo):
    code, text = _step(repo, "list")
    assert code == 0 and "state-02" in text and LESSON_ID in text
    index = (repo.root / "build" / "site" / "index.html").read_text(encoding="utf-8")
    assert "Pytrees and structured parameters" in index and "Tuples as trees" in index
    page = (repo.root / "build" / "site" / LESSON_ID / "index.html").read_text(encoding="utf-8")
    # no "Before you start" in its lesson.md, yet the page still says where it stands
    assert 'class="nav-before"' in page and 'class="nav-next"' in page
    assert 'class="primary-download"' in page and ">Before you start</h2>" in page


@pytest.fixture(scope="module")
def fixture_lesson():
    return load_lesson(FIXTURE_MD)


@pytest.fixture(scope="module")
def reports(fixture_lesson, tmp_path_factory) -> dict[str, dict]:
    """The reference solutions and the untouched scaffolds, graded in one batch.

    Wrong attempts and other right answers are declared in the fixture's lesson.md and proven
    by `lessonkit verify` in `repo`.
    """
    files = {
        "solved.py": make_attempt(fixture_lesson),
        "unsolved.py": make_attempt(fixture_lesson, unsolved=TASKS),
    }
    return grade_shared(tmp_path_factory, "grade-fixture", fixture_lesson, files)


def test_the_grader_passes_the_solutions_and_not_the_scaffolds(reports):
    solved, unsolved = reports["solved.py"], reports["unsolved.py"]
    assert [(t["id"], t["status"]) for t in solved["tasks"]] == [(t, "passed") for t in TASKS]
    assert [t["status"] for t in unsolved["tasks"]] == ["not attempted"] * len(TASKS)
    assert all("todo(...) is still" in t["message"] for t in unsolved["tasks"])


def test_the_fixture_declares_wrong_and_right_attempts_for_its_printed_answer(fixture_lesson):
    """`verify` in `repo` proves them; a printed line is graded as the `str` it prints."""
    attempts = [a for a in fixture_lesson.grading.attempts if a.task == "report-line"]
    assert sum(a.expect == "failed" for a in attempts) >= 3
    assert any(a.expect == "passed" for a in attempts)
    assert any("should print" in a.message for a in attempts)


def test_evidence_is_filled_from_the_fixtures_run(repo, tmp_path):
    lesson = find_lesson(LESSON_ID, repo.root)
    mine = tmp_path / "mine.py"
    mine.write_text(make_attempt(lesson))
    code, out, err = invoke(["evidence", LESSON_ID, str(mine)], root=repo.root, cwd=tmp_path)
    assert code == 0, out + err
    (report,) = (tmp_path / "evidence").iterdir()
    text = report.read_text(encoding="utf-8")
    assert "state: tuple\n├── 0: int 3 (Python scalar)\n├── 1: bool True" in text
    assert "[2][1]: [2, 4]" in text and "`PyTreeDef((*, *, (*, *)))`" in text
    assert "Task *Advance twice*: passed" in text
    assert "`summary` in your run: [5, True]" in text
    assert "Summary: (5, True)" in text
    assert "Task *Say it in one line*: passed" in text and "Count: 4, flag: False" in text
