"""Where the site puts a lesson: its page, its phase's study guide, and the files it offers.

A lesson page sits in a folder of its own (`page_path`) next to ``downloads/``, which holds a copy
of every lesson file the page links to, each declared once here (`lesson_downloads`); the site
builder copies them and checks that each exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lessonkit.site import figure
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.files import GOING_FURTHER, MAIN, lesson_scripts


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
    """Every file the page links to, in the order the page lists them."""
    script, notebook = lesson.exercise_paths
    going_further = GOING_FURTHER in lesson_scripts(lesson)
    files = [
        ("notebook", "Notebook", notebook),
        ("main", "Python worked example", MAIN.path),
    ]
    if going_further:
        files.append(("going-further", "Optional experiments", GOING_FURTHER.path))
    files += [
        ("script", "Exercise script", script),
        ("lesson", "Lesson text (Markdown)", "lesson.md"),
        ("record", "Execution record (JSON)", MAIN.record),
    ]
    if going_further:
        files.append(
            ("going-further-record", "Optional experiments record (JSON)", GOING_FURTHER.record)
        )
    files += [
        ("figure-data", "Figure data and provenance (JSON)", figure.DATA),
        ("figure-svg", "Figure (SVG)", figure.SVG),
        ("figure-png", "Figure (PNG)", figure.PNG),
        ("evidence", "Evidence template (Markdown)", "outputs/evidence-template.md"),
    ]
    renamed = {"lesson.md": f"{lesson.meta.id}.md"}  # a lesson's text under its own name
    return tuple(
        Download(key, label, source, renamed.get(source, Path(source).name))
        for key, label, source in files
    )
