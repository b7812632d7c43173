"""Where the site puts a lesson: its page, its phase's study guide, and the files it offers.

A lesson page sits in a folder of its own (`page_path`) next to ``downloads/``, which holds a copy
of every lesson file the page links to, each declared once here (`lesson_downloads`); the site
builder copies them and checks that each exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lessonkit.lesson.files import lesson_files
from lessonkit.lesson.model import Lesson


def page_path(lesson: Lesson) -> str:
    """Where a lesson's page lives, relative to the site root."""
    return f"{lesson.meta.id}/index.html"


def guide_page_path(phase_number: str) -> str:
    """Where a phase's study guide lives, relative to the site root; every lesson links it."""
    return f"phase-{phase_number}/index.html"


@dataclass(frozen=True)
class Download:
    """A lesson file offered on the page: copied from `source` (relative to the lesson folder)."""

    key: str
    label: str
    source: str
    name: str

    @property
    def href(self) -> str:
        """The link from the lesson page, which sits next to its `downloads/` folder."""
        return f"downloads/{self.name}"


def lesson_downloads(lesson: Lesson) -> tuple[Download, ...]:
    """Every file the page links to, in the order the page lists them (`lesson_files`)."""
    renamed = {"lesson.md": f"{lesson.meta.id}.md"}  # a lesson's text under its own name
    return tuple(
        Download(f.key, f.label, f.path, renamed.get(f.path, Path(f.path).name))
        for f in lesson_files(lesson)
        if f.label
    )
