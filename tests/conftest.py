"""Shared fixtures: the lesson as loaded from the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonkit.lesson import load_lesson
from lessonkit.model import Lesson

REPO = Path(__file__).resolve().parents[1]
LESSON_DIR = REPO / "phases" / "03-state" / "02-pytrees-and-structured-parameters"
LESSON_MD = LESSON_DIR / "lesson.md"


@pytest.fixture(scope="session")
def lesson() -> Lesson:
    return load_lesson(LESSON_MD)
