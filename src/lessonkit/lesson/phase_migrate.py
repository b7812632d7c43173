"""Move a phase out of its lessons' front matter (`phase:`, `lesson_number`, ...) into phase.yaml.

`migrate_phase` writes the phase's number, titles and lesson order (`~` for an unfilled
place) into phase.yaml and leaves each lesson's front matter with `phase: "NN"`. The result
must place every lesson where its old front matter did, else it raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from lessonkit.errors import LessonError
from lessonkit.lesson.front_matter import parse_front_matter
from lessonkit.lesson.model import Phase
from lessonkit.lesson.phase_file import PHASE_FILE, PHASE_KEYS, parse_phase, phase_header

_DROPPED = ("phase:", "lesson_number:", "lesson_count:", "previous:")


@dataclass(frozen=True)
class _OldLesson:
    path: Path
    lesson_id: str
    title: str
    number: int
    phase: Phase  # as this lesson's front matter repeats it (lessons as titles)


def migrate_phase(folder: Path, guide: str | None, lessons: Mapping[Path, str]) -> dict[Path, str]:
    """The new text of each file of the phase in `folder` that changes: its phase.yaml (whose
    text is `guide`, None when absent) and each lesson.md of `lessons` (path to text).
    Empty when the lessons name their phase alone already."""
    old = [lesson for path, text in lessons.items() if (lesson := _old_lesson(path, text))]
    if not old:
        return {}
    if len(old) != len(lessons):
        new = sorted(set(lessons) - {lesson.path for lesson in old})
        raise LessonError(
            "some lessons of this phase repeat the phase in their front matter and some do not",
            where=f"{new[0]}:1",
            fix="migrate the phase before adding lessons to it: write the older lessons' "
            "phase back into this one's front matter, run `lessonkit migrate`, then add it",
        )
    phase = _phase(old)
    path = folder / PHASE_FILE
    written = yaml.safe_load(guide or "") or {}
    if isinstance(written, dict) and set(written) & set(PHASE_KEYS):
        raise LessonError(
            "phase.yaml holds the phase already, and its lessons still repeat it",
            where=f"{path}:1",
            fix="delete one of the two: the phase's keys here, or the old keys in the lessons",
        )
    header = phase_header(phase)
    changed = {path: _with_header(guide, header)}
    placed = parse_phase(changed[path], path)
    for lesson in old:
        text = _name_phase_only(lessons[lesson.path], phase.number)
        meta = parse_front_matter(_front(text), str(lesson.path), placed, str(path))
        if (meta.lesson_number, meta.title) != (lesson.number, lesson.title):
            raise LessonError("the migrated phase moves this lesson", where=f"{lesson.path}:1")
        changed[lesson.path] = text
    return changed


def _old_lesson(path: Path, text: str) -> _OldLesson | None:
    data = yaml.safe_load(_front(text))
    phase = data.get("phase") if isinstance(data, dict) else None
    if not isinstance(phase, dict):
        return None
    try:
        return _OldLesson(
            path,
            str(data["id"]),
            str(data["title"]),
            int(data["lesson_number"]),
            Phase(
                str(phase["number"]),
                str(phase["title"]),
                str(phase["study_guide"]),
                tuple(phase["lessons"]),
            ),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LessonError(
            f"the front matter's phase cannot be read ({type(exc).__name__}: {exc})",
            where=f"{path}:1",
            fix="give it id, title, lesson_number and phase: number, title, study_guide, lessons",
        ) from None


def _phase(old: list[_OldLesson]) -> Phase:
    """The phase the lessons describe together, its lessons as ids in order."""
    first = old[0].phase
    order: list[str | None] = [None] * len(first.lessons)
    for lesson in old:
        mine = lesson.phase
        agree = (mine.number, mine.title, mine.study_guide, len(mine.lessons)) == (
            first.number,
            first.title,
            first.study_guide,
            len(first.lessons),
        )
        if not agree or not 1 <= lesson.number <= len(order) or order[lesson.number - 1]:
            raise LessonError(
                f"this lesson's phase disagrees with {old[0].path}'s, or its lesson_number "
                f"{lesson.number} is out of range or taken",
                where=f"{lesson.path}:1",
                fix="give every lesson of the phase the same phase and its own lesson_number, "
                "then run `lessonkit migrate` again",
            )
        order[lesson.number - 1] = lesson.lesson_id
    return Phase(first.number, first.title, first.study_guide, tuple(order))


def _front(text: str) -> str:
    """The YAML between the opening `---` and the next."""
    lines = text.split("\n")
    end = lines.index("---", 1) if lines and lines[0] == "---" and "---" in lines[1:] else 0
    return "\n".join(lines[1:end]) + "\n"


def _name_phase_only(text: str, number: str) -> str:
    """The lesson with `phase: "NN"` in place of the phase and of its place in it."""
    lines = text.split("\n")
    end = lines.index("---", 1)
    kept: list[str] = []
    dropping = False
    for line in lines[1:end]:
        if line and not line[0].isspace():
            dropping = line.startswith(_DROPPED)
            if line.startswith("phase:"):
                kept.append(f'phase: "{number}"')
        if not dropping:
            kept.append(line)
    return "\n".join([lines[0], *kept, *lines[end:]])


def _with_header(guide: str | None, header: str) -> str:
    """phase.yaml: its leading comment, the phase's own keys, then the rest as written."""
    lines = (guide or "").splitlines(keepends=True)
    comment = 0
    while comment < len(lines) and lines[comment].startswith("#"):
        comment += 1
    return "".join(lines[:comment]) + header + "".join(lines[comment:])
