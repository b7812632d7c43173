"""`lessonkit migrate` on a course written when every lesson repeated its phase: the phase moves
into phase.yaml, and the course then builds the generated files committed for it, byte for
byte.

The old-style course is phases/03-state as it was: tests/fixtures/old-phase holds its
phase.yaml (the study guide alone) and each lesson's old front matter; the lessons' bodies
and generated files are today's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.phase_file import load_phase
from lessonkit.site.artifacts import find_drift

from conftest import FIXTURE_ROOT, REPO, invoke

OLD = FIXTURE_ROOT / "old-phase"
PHASE = REPO / "phases" / "03-state"


def _body(text: str) -> str:
    """A lesson.md after its front matter."""
    return text.split("\n---\n", 1)[1]


@pytest.fixture
def old_course(tmp_path: Path) -> Path:
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    folder = tmp_path / "phases" / PHASE.name
    shutil.copytree(PHASE, folder)
    shutil.copy(OLD / "phase.yaml", folder / "phase.yaml")
    for front in sorted(OLD.glob("*.md")):
        lesson = folder / front.stem / "lesson.md"
        body = _body(lesson.read_text(encoding="utf-8"))
        lesson.write_text(front.read_text(encoding="utf-8") + body, encoding="utf-8")
    return tmp_path


def test_an_old_style_course_does_not_load_and_says_to_migrate(old_course):
    path = next((old_course / "phases" / PHASE.name).glob("01-*/lesson.md"))
    with pytest.raises(LessonError) as raised:
        load_lesson(path)
    assert (raised.value.where or "").endswith("phase.yaml:1")
    assert "phase.yaml must name the phase's number, title" in raised.value.message
    assert (raised.value.fix or "").startswith("run `lessonkit migrate` when the lessons")
    shutil.copy(PHASE / "phase.yaml", path.parents[1] / "phase.yaml")  # half migrated
    with pytest.raises(LessonError) as raised:
        load_lesson(path)
    assert (raised.value.where or "").endswith("lesson.md:7")
    assert "now live in the phase's phase.yaml" in raised.value.message
    assert raised.value.fix == "run `lessonkit migrate` to move them there"


def test_migrate_moves_the_phase_into_phase_yaml_and_builds_the_same_outputs(old_course):
    folder = old_course / "phases" / PHASE.name
    code, out, err = invoke(["migrate", "--check"], root=old_course, cwd=old_course)
    assert code == 1 and "needs `lessonkit migrate`" in out, out + err
    code, out, err = invoke(["migrate"], root=old_course, cwd=old_course)
    assert code == 0, out + err
    assert load_phase(folder / "phase.yaml") == load_phase(PHASE / "phase.yaml")
    guide = (OLD / "phase.yaml").read_text(encoding="utf-8")
    assert (folder / "phase.yaml").read_text(encoding="utf-8").endswith(guide.split("\n", 3)[3])
    for lesson_md in sorted(PHASE.glob("*/lesson.md")):
        migrated = folder / lesson_md.parent.name / "lesson.md"
        assert migrated.read_bytes() == lesson_md.read_bytes(), migrated
        assert find_drift(load_lesson(migrated)) == [], migrated
    code, out, err = invoke(["migrate", "--check"], root=old_course, cwd=old_course)
    assert code == 0, out + err


def test_a_place_no_lesson_fills_becomes_a_kept_place(old_course):
    """The old lessons listed a title for lesson 5, written nowhere: it becomes `~`."""
    folder = old_course / "phases" / PHASE.name
    for lesson_md in folder.glob("*/lesson.md"):
        text = lesson_md.read_text(encoding="utf-8")
        text = text.replace(
            "    - Control flow under jit\n", "    - Control flow under jit\n    - Later\n"
        )
        lesson_md.write_text(text.replace("lesson_count: 4", "lesson_count: 5"), encoding="utf-8")
    code, out, err = invoke(["migrate"], root=old_course, cwd=old_course)
    assert code == 0, out + err
    phase = load_phase(folder / "phase.yaml")
    assert phase.lessons == ("state-01", "state-02", "state-03", "state-04", None)
