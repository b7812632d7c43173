"""A phase's order against its lesson folders: phase.yaml and the lessons must agree.

Loading a lesson already refuses one that phase.yaml does not list, or that names another
phase (`lessonkit.lesson.front_matter`), and phase.yaml refuses an id listed twice
(`lessonkit.lesson.phase_file`). What only the whole phase shows is checked here: an id that
phase.yaml lists but no lesson folder holds, and two folders with one id.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lessonkit.errors import LessonError, shown
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.phase_file import load_phase, phase_file_of


def check_phases(lessons: Sequence[Lesson], phase_files: Sequence[Path] = ()) -> None:
    """Raise LessonError at the first place where a phase's order and its lessons disagree.

    `phase_files` adds the phases that may have no lesson folder at all."""
    members: dict[Path, dict[str, Lesson]] = {path: {} for path in phase_files}
    for lesson in lessons:
        found = members.setdefault(phase_file_of(lesson.path), {})
        twin = found.setdefault(lesson.meta.id, lesson)
        if twin is not lesson:
            raise LessonError(
                f"lesson id {lesson.meta.id!r} is taken already by {shown(twin.path)}",
                where=f"{shown(lesson.path)}:{_line(lesson.path, 'id: ')}",
                fix="give each lesson its own id, and list it once in the phase's phase.yaml",
            )
    for path, found in members.items():
        for lesson_id in load_phase(path).lessons:
            if lesson_id is not None and lesson_id not in found:
                raise LessonError(
                    f"the phase's lessons list {lesson_id!r}, but no lesson folder of "
                    f"{shown(path.parent)} has that id",
                    where=f"{shown(path)}:{_line(path, f'- {lesson_id}')}",
                    fix=f"write it (`lessonkit new {lesson_id} --phase "
                    f"{load_phase(path).number}`), replace it with ~ to keep its place for "
                    "later, or remove it",
                )


def _line(path: Path, start: str) -> int:
    """The first line of `path` that starts, once indented, with `start`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith(start):
            return number
    return 1
