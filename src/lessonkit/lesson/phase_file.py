"""A phase in one place: `phases/NN-name/phase.yaml` holds its number, titles and lesson order.

A lesson's front matter names only its phase (`phase: "03"`); its position, neighbours and
the phase's titles are read from here. The order lists lesson ids, `~` keeping a place for
a lesson still to be written. The same file holds the study guide
(`lessonkit.lesson.study_guide`). Mistakes are `LessonError`s at `phase.yaml:LINE`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from lessonkit.errors import LessonError
from lessonkit.lesson.model import Phase

PHASE_FILE = "phase.yaml"
PHASE_KEYS = ("number", "title", "study_guide", "lessons")
PHASE_NUMBER = re.compile(r"\d{2}")
_ITEM = re.compile(r"^(?P<indent>\s*)- (?P<value>.*?)\s*(#.*)?$")


def phase_file_of(lesson_path: Path) -> Path:
    """The phase.yaml of the phase folder holding a lesson's folder."""
    return lesson_path.parent.parent / PHASE_FILE


def yaml_scalar(text: str) -> str:
    """`text` as a YAML scalar: plain where YAML reads it back unchanged, else quoted."""
    try:
        plain = yaml.safe_load(text) == text and "\n" not in text
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text, ensure_ascii=False)  # JSON strings are YAML


def phase_header(phase: Phase) -> str:
    """The phase's own keys as phase.yaml spells them, lessons one a line (`~`: a place)."""
    lessons = "".join(f"  - {lesson_id or '~'}\n" for lesson_id in phase.lessons)
    return (
        f'number: "{phase.number}"\ntitle: {yaml_scalar(phase.title)}\n'
        f"study_guide: {yaml_scalar(phase.study_guide)}\nlessons:\n{lessons}"
    )


def load_phase(path: Path) -> Phase:
    """Read and check a phase.yaml's own keys (the study guide's are checked elsewhere)."""
    if not path.is_file():
        raise LessonError(
            f"no {PHASE_FILE} in the phase folder {path.parent.name}",
            where=f"{path}:1",
            fix=f"write {path} with number, title, study_guide and lessons, or run "
            "`lessonkit migrate` on a course whose lessons still list their phase",
        )
    return parse_phase(path.read_text(encoding="utf-8"), path)


def parse_phase(text: str, path: Path) -> Phase:
    def error(message: str, key: str | None = None, fix: str | None = None) -> LessonError:
        return LessonError(message, where=f"{path}:{_line_of(text, key)}", fix=fix)

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise LessonError(
            f"not valid YAML ({exc})", where=f"{path}:{mark.line + 1 if mark else 1}"
        ) from None
    if not isinstance(data, dict) or not set(PHASE_KEYS) <= set(data):
        raise error(
            f"{PHASE_FILE} must name the phase's {', '.join(PHASE_KEYS)}",
            fix="run `lessonkit migrate` when the lessons still repeat the phase in their "
            'front matter; else write number: "03", title, study_guide and lessons: the lesson '
            "ids in order (~ for a lesson still to be written)",
        )
    number = data["number"]
    if not isinstance(number, str) or not PHASE_NUMBER.fullmatch(number):
        raise error(
            f"'number' must be the phase's two digits as a quoted string, got {number!r}",
            "number",
            fix=f'write number: "{path.parent.name.split("-", 1)[0]}"',
        )
    for key in ("title", "study_guide"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise error(f"'{key}' must be a line of text", key)
    lessons = data["lessons"]
    if (
        not isinstance(lessons, list)
        or not lessons
        or not all(entry is None or isinstance(entry, str) for entry in lessons)
    ):
        raise error(
            "'lessons' must list the phase's lesson ids in order, ~ for a lesson still to be "
            "written",
            "lessons",
        )
    seen: set[str] = set()
    for entry in lessons:
        if entry in seen:
            raise error(
                f"lesson {entry!r} is listed twice in 'lessons'",
                "lessons",
                fix=f"keep one `- {entry}`, at the lesson's place in the phase",
            )
        if entry is not None:
            seen.add(entry)
    return Phase(number, data["title"], data["study_guide"], tuple(lessons))


def with_lesson(text: str, path: Path, lesson_id: str) -> tuple[str, int]:
    """phase.yaml's text with `lesson_id` in its place: where it is listed already, else the
    first place kept for a lesson still to be written (`- ~`), else after the last lesson;
    and the lesson's number in the phase.
    Everything else (the study guide, comments) is kept as written."""
    phase = parse_phase(text, path)
    if lesson_id in phase.lessons:  # its place is kept already
        return text, phase.lessons.index(lesson_id) + 1
    lines = text.split("\n")
    start = next(n for n, line in enumerate(lines) if line.startswith("lessons:"))
    items = []
    for number in range(start + 1, len(lines)):
        match = _ITEM.match(lines[number])
        if match is None:
            if lines[number].strip() and not lines[number].lstrip().startswith("#"):
                break
            continue
        items.append((number, match))
    if len(items) != len(phase.lessons):
        raise LessonError(
            "'lessons' must be written one `- id` a line for a lesson to be added to it",
            where=f"{path}:{start + 1}",
        )
    slot = phase.lessons.index(None) if None in phase.lessons else len(phase.lessons)
    if slot < len(items):
        number, match = items[slot]
        lines[number] = f"{match['indent']}- {lesson_id}"
    else:
        number, match = items[-1]
        lines.insert(number + 1, f"{match['indent']}- {lesson_id}")
    added = "\n".join(lines)
    expected = (*phase.lessons[:slot], lesson_id, *phase.lessons[slot + 1 :])
    if parse_phase(added, path).lessons != expected:  # the edit must mean what it says
        raise LessonError("cannot add a lesson to 'lessons' as written", where=f"{path}:1")
    return added, slot + 1


def _line_of(text: str, key: str | None) -> int:
    if key is not None:
        for number, raw in enumerate(text.splitlines(), start=1):
            if raw.startswith(f"{key}:"):
                return number
    return 1
