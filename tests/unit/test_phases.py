"""A phase in one place: phase.yaml orders its lessons, and every way the order and the lesson
folders can disagree is one error naming the file to fix; a lesson written later fills a
`~` place."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
from pathlib import Path

import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.catalog import all_lessons
from lessonkit.lesson.model import Phase
from lessonkit.lesson.new_lesson import skeleton
from lessonkit.lesson.phase_file import phase_header, with_lesson
from lessonkit.render.page import render_index

from conftest import REPO, invoke

PHASE = Path("phases") / "04-loops"


def _lesson(root: Path, folder: str, lesson_id: str, phase: str = "04") -> Path:
    path = root / PHASE / folder / "lesson.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        skeleton(lesson_id, lesson_id.title(), phase, dt.date(2026, 1, 1)), encoding="utf-8"
    )
    return path


def _phase(root: Path, *lessons: str | None) -> Path:
    path = root / PHASE / "phase.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(phase_header(Phase("04", "Loops", "Phase study guide", lessons)), "utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    _lesson(tmp_path, "01-first", "loops-01")  # written first: lesson 2 is still to be written
    _phase(tmp_path, "loops-01", None)
    return tmp_path


def test_a_lesson_written_later_fills_the_slot_on_the_index(root):
    before = render_index(all_lessons(root))
    assert "coming later" in before and "loops-02/index.html" not in before
    _lesson(root, "02-second", "loops-02")
    path = root / PHASE / "phase.yaml"
    text, number = with_lesson(path.read_text(encoding="utf-8"), path, "loops-02")
    path.write_text(text, encoding="utf-8")
    assert number == 2
    lessons = all_lessons(root)
    assert [(x.meta.lesson_number, len(x.meta.phase.lessons)) for x in lessons] == [(1, 2), (2, 2)]
    html = render_index(lessons)
    assert "loops-02/index.html" in html
    assert "coming later" not in html


def _listed_but_missing(root: Path) -> None:
    _phase(root, "loops-01", "loops-02")


def _folder_not_listed(root: Path) -> None:
    _lesson(root, "02-second", "loops-02")


def _another_phase(root: Path) -> None:
    _lesson(root, "02-second", "loops-02", phase="05")
    _phase(root, "loops-01", "loops-02")


def _listed_twice(root: Path) -> None:
    _lesson(root, "02-second", "loops-02")
    _phase(root, "loops-01", "loops-02", "loops-01")


def _two_folders_one_id(root: Path) -> None:
    _lesson(root, "02-second", "loops-01")


BROKEN = {
    "listed-but-missing": (
        _listed_but_missing,
        "phase.yaml:6",
        "the phase's lessons list 'loops-02', but no lesson folder of",
        "replace it with ~ to keep its place for later",
    ),
    "folder-not-listed": (
        _folder_not_listed,
        "02-second/lesson.md:2",
        "lesson 'loops-02' is not in the lessons of its phase",
        "add `- loops-02` to the lessons of",
    ),
    "another-phase": (
        _another_phase,
        "02-second/lesson.md:7",
        "'phase' is '05', but this lesson's folder is in phase 04",
        'write phase: "04"',
    ),
    "listed-twice": (
        _listed_twice,
        "phase.yaml:4",
        "lesson 'loops-01' is listed twice in 'lessons'",
        "keep one `- loops-01`",
    ),
    "two-folders-one-id": (
        _two_folders_one_id,
        "02-second/lesson.md:2",
        "lesson id 'loops-01' is taken already by",
        "give each lesson its own id",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_an_order_that_disagrees_with_the_lessons_is_one_error_naming_the_file(root, case):
    breaks, where, message, fix = BROKEN[case]
    breaks(root)
    with pytest.raises(LessonError) as raised:
        all_lessons(root)
    assert (raised.value.where or "").endswith(where), raised.value.where
    assert message in raised.value.message
    assert fix in (raised.value.fix or "")
    code, _, err = invoke(["verify"], root=root, cwd=root)
    assert code == 2 and message in err and fix in err, err


def test_a_phase_folder_without_its_phase_yaml_says_how_to_write_it(root):
    (root / PHASE / "phase.yaml").unlink()
    with pytest.raises(LessonError, match=r"no phase\.yaml in the phase folder 04-loops") as raised:
        all_lessons(root)
    assert "lessonkit migrate" in (raised.value.fix or "")


def test_a_phase_with_the_default_title_is_named_once(lesson):
    """`lessonkit new --phase 01` titles a new phase "Phase 01": the index, the study guide,
    the lesson page's breadcrumb and the practice files said "Phase 01 · Phase 01" (issue 52).
    A phase with a title of its own still shows it beside the number."""
    from lessonkit.lesson.scripts import render_exercise_script
    from lessonkit.render.page import render_study_guide

    default = dataclasses.replace(lesson.meta.phase, title=f"Phase {lesson.meta.phase.number}")
    plain = dataclasses.replace(lesson, meta=dataclasses.replace(lesson.meta, phase=default))
    for shown in (
        render_index([plain]),
        render_study_guide(plain, [plain], None),
        render_exercise_script(plain),
    ):
        assert "Phase 03 · Phase 03" not in shown and "Phase 03 / Phase 03" not in shown
        assert "Phase 03 study guide · Phase 03" not in shown
    assert ">Phase 03</h2>" in render_index([plain])
    assert "# Phase 03 · lesson 2 of 4 ·" in render_exercise_script(plain)
    assert ">Phase 03 · State, randomness &amp; control flow</h2>" in render_index([lesson])
