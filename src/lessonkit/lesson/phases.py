"""A phase as its lessons describe it together: each lesson's front matter repeats the phase.

The index, the study guide and every "Before this" / "Next" link read the phase's list of
lessons, so the lessons of one phase must agree on it. A `~` (still to be written) in one
lesson may be a title in another, written later: the title wins, so adding a lesson does not
require editing the older ones first. Anything else that differs is a mistake, reported at
the lesson that disagrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lessonkit.errors import LessonError, shown
from lessonkit.lesson.model import Lesson, Phase


def phase_titles(number: str, lessons: Sequence[Lesson]) -> tuple[str | None, ...]:
    """The titles of phase `number`'s lessons, merged over `lessons` (None: coming later)."""
    merged: list[str | None] = []
    for lesson in lessons:
        phase = lesson.meta.phase
        if phase.number != number:
            continue
        if not merged:
            merged = list(phase.lessons)
        merged = [mine or theirs for mine, theirs in zip(merged, phase.lessons, strict=False)]
    return tuple(merged)


def check_phases(lessons: Sequence[Lesson]) -> None:
    """Raise LessonError at the first lesson whose phase contradicts an earlier lesson's."""
    for index, lesson in enumerate(lessons):
        for earlier in lessons[:index]:
            problem = _contradiction(earlier.meta.phase, lesson.meta.phase)
            if problem:
                raise LessonError(
                    f"bad front matter: {problem} in {shown(earlier.path)}",
                    where=f"{shown(lesson.path)}:{_phase_line(lesson.path)}",
                    fix=f"give every lesson of phase {lesson.meta.phase.number} the same phase: "
                    "title, study_guide and lessons (a lesson still to be written is ~)",
                )


def _contradiction(theirs: Phase, mine: Phase) -> str | None:
    """What two lessons' descriptions of one phase disagree on, if anything."""
    if mine.number != theirs.number:
        return None
    for field in ("title", "study_guide"):
        if getattr(mine, field) != getattr(theirs, field):
            return (
                f"the phase's {field} is {getattr(mine, field)!r} here "
                f"but {getattr(theirs, field)!r}"
            )
    if len(mine.lessons) != len(theirs.lessons):
        return f"the phase has {len(mine.lessons)} lessons here but {len(theirs.lessons)}"
    for number, (title, other) in enumerate(
        zip(mine.lessons, theirs.lessons, strict=True), start=1
    ):
        if title and other and title != other:
            return f"lesson {number} of the phase is {title!r} here but {other!r}"
    return None


def _phase_line(path: Path) -> int:
    """The front matter's `phase:` line, where the disagreement is written."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("phase:"):
            return number
    return 1
