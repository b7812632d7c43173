"""A second lesson, written only as a lesson.md, goes through every command unchanged.

The fixture (tests/fixtures/phases/99-fixture/01-tuples) is unlike state-02 on purpose: its
state is a tuple holding a Python int, a bool and a pair of arrays, its step defines a
function that returns a tuple, and its task prints its answer. It is copied with state-02 into
a throwaway repository, then built, run, recorded, verified, graded and evidenced there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from lessonkit.catalog import find_lesson
from lessonkit.evidence import render_template
from lessonkit.grade import Grader
from lessonkit.grade.isolation import choose_isolation
from lessonkit.lesson import load_lesson
from lessonkit.render.script import render_exercise_script

from conftest import FIXTURE_MD, FIXTURE_ROOT, LESSON_MD, copy_lesson_repo, invoke

LESSON_ID = "fixture-01"


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
    assert code == 2 and f"run `lessonkit run {LESSON_ID} --record`" in text
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
    assert (repo.root / "build" / "site" / LESSON_ID / "index.html").is_file()


def _attempt(lesson, twice: str, summary: str) -> str:
    script = render_exercise_script(lesson)
    script = script.replace('twice = todo("twice: state advanced two times")', twice)
    return script.replace(
        'summary = todo("summary: the pair (count, flag) read from twice")', summary
    )


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Right, wrong and hard-coded attempts, graded by one grader: (status, message)."""
    lesson = load_lesson(FIXTURE_MD)
    folder = tmp_path_factory.mktemp("attempts")
    attempts = {
        "scaffold": render_exercise_script(lesson),
        "right": _attempt(lesson, "twice = advance(advance(state))", "summary = twice[:2]"),
        "also right": _attempt(
            lesson, "once = advance(state)\ntwice = advance(once)", "summary = (twice[0], twice[1])"
        ),
        "once": _attempt(lesson, "twice = advance(state)", "summary = (twice[0], twice[1])"),
        "flag lost": _attempt(
            lesson, "twice = advance(advance(state))", "summary = (twice[0], False)"
        ),
        "hard-coded": _attempt(
            lesson,
            "twice = (5, True, (jnp.array(6.0), jnp.array([4, 6], dtype=jnp.int32)))",
            "summary = (5, True)",
        ),
    }
    out = {}
    with Grader(60, sandbox=choose_isolation(batch=False, allow_unsandboxed=True).sandbox) as g:
        for name, text in attempts.items():
            path = folder / f"{name.replace(' ', '-')}.py"
            path.write_text(text, encoding="utf-8")
            (task,) = g.grade(lesson, path).tasks
            out[name] = (task.status, task.message)
    return out


@pytest.mark.parametrize(
    ("attempt", "status", "message"),
    [
        ("scaffold", "not attempted", "todo(...) is still"),
        ("right", "passed", ""),
        ("also right", "passed", ""),
        ("once", "failed", "`twice` at `0`"),
        ("flag lost", "failed", "`summary`"),
        ("hard-coded", "failed", "not on other inputs"),
    ],
)
def test_the_grader_judges_the_fixtures_attempts(verdicts, attempt, status, message):
    got_status, got_message = verdicts[attempt]
    assert got_status == status, got_message
    assert message in got_message


def test_evidence_is_filled_from_the_fixtures_run(repo, tmp_path):
    lesson = find_lesson(LESSON_ID, repo.root)
    mine = tmp_path / "mine.py"
    mine.write_text(_attempt(lesson, "twice = advance(advance(state))", "summary = twice[:2]"))
    code, out, err = invoke(["evidence", LESSON_ID, str(mine)], root=repo.root, cwd=tmp_path)
    assert code == 0, out + err
    (report,) = (tmp_path / "evidence").iterdir()
    text = report.read_text(encoding="utf-8")
    assert "state: tuple\n├── 0: int 3 (Python scalar)\n├── 1: bool True" in text
    assert "[2][1]: [2, 4]" in text and "`PyTreeDef((*, *, (*, *)))`" in text
    assert "Task *Advance twice*: passed" in text
    assert "`summary` in your run: [5, True]" in text
    assert "Summary: (5, True)" in text


@pytest.mark.parametrize("path", [LESSON_MD, FIXTURE_MD], ids=["state-02", LESSON_ID])
def test_every_lesson_has_a_template_item_per_evidence_entry(path):
    lesson = load_lesson(path)
    template = render_template(lesson)
    assert lesson.evidence
    for number, item in enumerate(lesson.evidence, 1):
        assert f"## {number}. {item.title}\n" in template
    assert template.count("**Prediction**") == len(lesson.evidence)
