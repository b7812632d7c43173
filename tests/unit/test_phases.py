"""The lessons of one phase describe it alike; a lesson written later fills a `~` slot."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from lessonkit.commands.new import Place, skeleton
from lessonkit.errors import LessonError
from lessonkit.lesson.catalog import all_lessons
from lessonkit.lesson.model import Phase
from lessonkit.render.page import render_index

from conftest import REPO


def _write(root: Path, folder: str, lesson_id: str, title: str, edits: dict[str, str]) -> None:
    phase = Phase("04", "Loops", "Phase study guide", (title,))
    place = Place(root / "phases" / "04-loops" / folder, phase, 1, "none")
    text = skeleton(lesson_id, title, place, dt.date(2026, 1, 1))
    for old, new in edits.items():
        assert old in text
        text = text.replace(old, new)
    path = root / "phases" / "04-loops" / folder / "lesson.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    _write(  # written first: lesson 2 is still to be written
        tmp_path, "01-first", "loops-01", "First", {"- First\n": "- First\n    - ~\n"}
    )
    (tmp_path / "phases" / "04-loops" / "01-first" / "lesson.md").write_text(
        (tmp_path / "phases" / "04-loops" / "01-first" / "lesson.md")
        .read_text(encoding="utf-8")
        .replace("lesson_count: 1", "lesson_count: 2"),
        encoding="utf-8",
    )
    return tmp_path


def _second(root: Path, title_in_list: str = "Second", **edits: str) -> None:
    _write(
        root,
        "02-second",
        "loops-02",
        "Second",
        {
            "    - Second\n": f"    - First\n    - {title_in_list}\n",
            "lesson_number: 1\nlesson_count: 1": "lesson_number: 2\nlesson_count: 2",
            "previous: none": "previous: First",
            **edits,
        },
    )


def test_a_lesson_written_later_fills_the_slot_on_the_index(root):
    _second(root)
    html = render_index(all_lessons(root))
    assert "loops-02/index.html" in html
    assert "coming later" not in html


def test_lessons_that_describe_their_phase_differently_are_refused_at_the_phase_line(root):
    _second(root, **{"title: Loops\n": "title: Phase 04\n"})
    with pytest.raises(LessonError) as raised:
        all_lessons(root)
    where = raised.value.where or ""
    assert where.endswith("02-second/lesson.md:7"), where
    assert "the phase's title is 'Phase 04' here but 'Loops'" in raised.value.message
    assert "01-first/lesson.md" in raised.value.message


def test_two_titles_for_one_lesson_of_the_phase_are_refused(root):
    _second(root)
    first = root / "phases" / "04-loops" / "01-first" / "lesson.md"
    first.write_text(
        first.read_text(encoding="utf-8").replace("    - ~\n", "    - Other\n"), encoding="utf-8"
    )
    with pytest.raises(LessonError, match="lesson 2 of the phase is 'Second' here but 'Other'"):
        all_lessons(root)
