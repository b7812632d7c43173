""" "My learning" across lessons: one page that reads every lesson's browser-saved portfolio.

Each lesson page keeps its portfolio in localStorage under its own key (`storage_key`). This
page is told every lesson's key, labels and quiz answers (embedded as JSON, since a page
opened from file:// cannot fetch files), lists what each holds, and exports or imports all of
them in one file of portfolio version `COURSE_VERSION`; a one-lesson file (version
`PORTFOLIO_VERSION`, what a lesson page exports) still imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lessonkit.lesson.model import STAGES, Lesson, Quiz, Task
from lessonkit.lesson.study_guide import Project
from lessonkit.render.blocks import (
    COURSE_VERSION,
    PORTFOLIO_SCHEMA,
    PORTFOLIO_VERSION,
    portfolio_fields,
    section_blocks,
    storage_key,
)
from lessonkit.render.downloads import page_path
from lessonkit.render.page import render_template

LEARNING_PAGE = "my-learning/index.html"


def _lesson_data(lesson: Lesson) -> dict[str, Any]:
    blocks = section_blocks(lesson)
    quizzes, tasks = {}, []
    for section in lesson.sections:
        for block in blocks[section.id]:
            if isinstance(block.item, Quiz):
                quizzes[block.key] = {
                    "options": list(block.item.options),
                    "answer": block.item.answer,
                }
            elif isinstance(block.item, Task) and not block.item.optional:
                tasks.append(f"{block.key}:done")
    return {
        "id": lesson.meta.id,
        "title": lesson.meta.title,
        "phase": lesson.meta.phase.number,
        "number": lesson.meta.lesson_number,
        "href": f"../{page_path(lesson)}",
        "storageKey": storage_key(lesson),
        "fields": portfolio_fields(lesson, blocks),
        "quizzes": quizzes,
        "tasks": tasks,
    }


def learning_data(lessons: Sequence[Lesson]) -> dict[str, Any]:
    """What the page script needs: the file format and every lesson's keys and labels."""
    return {
        "schema": PORTFOLIO_SCHEMA,
        "version": COURSE_VERSION,
        "lessonVersion": PORTFOLIO_VERSION,
        "stages": list(STAGES),
        "lessons": [_lesson_data(lesson) for lesson in lessons],
    }


@dataclass(frozen=True)
class PhaseProject:
    """A phase's project, as the My learning page shows it."""

    phase: str
    project: Project

    @property
    def storage_key(self) -> str:
        """The localStorage key of the learner's self-assessment of this project."""
        return f"lessonkit:project-{self.phase}"


def render_my_learning(lessons: Sequence[Lesson], projects: Sequence[PhaseProject] = ()) -> str:
    """The page; its script fills in each lesson's saved work from this browser."""
    return render_template(
        "my-learning.html", root="../", data=learning_data(lessons), projects=projects
    )
