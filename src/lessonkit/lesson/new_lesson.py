"""A new lesson: the skeleton lesson.md (`lessonkit/skeleton/lesson.md`, package data) with
its id, title and phase filled in, and its place in its phase's phase.yaml.

The skeleton uses every block an author needs once, so the new lesson builds, runs, grades
and verifies as it is; docs/authoring.md explains each block.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from lessonkit.atomic import write_atomically
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.catalog import find_lesson, repo_root
from lessonkit.lesson.model import Phase
from lessonkit.lesson.phase_file import (
    PHASE_FILE,
    load_phase,
    phase_header,
    with_lesson,
    yaml_scalar,
)

LESSON_ID = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


@dataclass(frozen=True)
class Place:
    """Where a new lesson goes: its folder, and its phase's phase.yaml with the lesson in it."""

    folder: Path
    phase_file: Path
    phase_text: str


def skeleton(lesson_id: str, title: str, number: str, day: dt.date) -> str:
    """The skeleton lesson.md with its placeholders filled in."""
    text = (resources.files("lessonkit") / "skeleton" / "lesson.md").read_text(encoding="utf-8")
    return Template(text).substitute(
        id=lesson_id, title=yaml_scalar(title), phase=number, date=day.isoformat()
    )


def place_in_phase(root: Path, number: str, lesson_id: str) -> Place:
    """A new phase of one lesson, or the lesson's place in an existing phase: the place its
    phase.yaml keeps for it (its id, else the first `~`), else after the last lesson.
    Only the phase's phase.yaml changes; its other lessons are left as they are."""
    phases = root / "phases"
    existing = sorted(p for p in phases.glob(f"{number}-*") if p.is_dir())
    if not existing:
        folder = phases / f"{number}-phase-{number}"
        phase = Phase(number, f"Phase {number}", "Phase study guide", (lesson_id,))
        return Place(folder / f"01-{lesson_id}", folder / PHASE_FILE, phase_header(phase))
    path = existing[0] / PHASE_FILE
    load_phase(path)  # a phase folder without its phase.yaml: say how to write it
    text, slot = with_lesson(path.read_text(encoding="utf-8"), path, lesson_id)
    return Place(existing[0] / f"{slot:02d}-{lesson_id}", path, text)


def write_new_lesson(
    lesson_id: str, number: str, title: str | None, root: Path | None = None
) -> Place:
    """Write the skeleton lesson.md of `lesson_id` in phase `number` under phases/ (of `root`,
    else of the repository here),
    and its phase's phase.yaml with the lesson in it; the title defaults to one made from
    the id. An id that is not lowercase words and digits, a phase that is not two digits
    or an id a lesson has already is refused before anything is written."""
    if not LESSON_ID.fullmatch(lesson_id):
        raise UsageError(
            f"lesson id {lesson_id!r} is not lowercase words and digits joined by dashes",
            fix="choose an id such as loops-01",
        )
    if not re.fullmatch(r"\d{2}", number):
        raise UsageError(f"--phase {number!r} is not two digits", fix="write it as 04")
    root = root or repo_root()
    try:
        taken = find_lesson(lesson_id, root)
    except UsageError:
        taken = None
    if taken is not None:
        raise UsageError(f"lesson {lesson_id!r} exists already: {shown(taken.path)}")
    title = title or lesson_id.replace("-", " ").capitalize()
    place = place_in_phase(root, number, lesson_id)
    text = skeleton(lesson_id, title, number, dt.date.today())
    place.folder.mkdir(parents=True)
    write_atomically(place.folder / "lesson.md", text)
    write_atomically(place.phase_file, place.phase_text)
    return place
