"""lesson.md's YAML front matter: every key and its type; `phase` names the phase, whose
phase.yaml places the lesson (its number, title and the order of its lessons)."""

from __future__ import annotations

import datetime as dt

import yaml

from lessonkit.errors import LessonError
from lessonkit.lesson.blocks import at_line, yaml_mark
from lessonkit.lesson.model import (
    Meta,
    Phase,
)

_META_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "title": str,
    "goal": str,
    "track": str,
    "hardware_labels": list,
    "phase": str,
    "revision": str,
    "date": dt.date,
    "minutes": int,
    "hardware": str,
    "practice": str,
}
_OLD_KEYS = ("lesson_number", "lesson_count", "previous")  # now derived from phase.yaml


def parse_front_matter(text: str, where: str, phase: Phase, phase_file: str) -> Meta:
    """The lesson's metadata, placed in `phase` (read from `phase_file`), which it must name
    and which must list its id."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = yaml_mark(exc)
        line = 2 + (mark.line if mark else 0)
        problem = getattr(exc, "problem", None) or exc
        raise LessonError(
            f"bad front matter: not valid YAML ({problem})", where=at_line(where, line)
        ) from None
    if not isinstance(data, dict):
        raise LessonError("bad front matter: expected key: value lines", where=at_line(where, 1))

    def line_of(key: str) -> int:
        for number, raw in enumerate(text.splitlines(), start=2):
            if raw.lstrip().startswith(f"{key}:"):  # the first line with the key, nested too
                return number
        return 1

    if isinstance(data.get("date"), str):  # quoted, as MyST tools and jupytext want it
        try:
            data["date"] = dt.date.fromisoformat(data["date"])
        except ValueError:
            raise LessonError(
                f"bad front matter: 'date' should be a date as YYYY-MM-DD, got {data['date']!r}",
                where=at_line(where, line_of("date")),
            ) from None
    if isinstance(data.get("phase"), dict) or any(key in data for key in _OLD_KEYS):
        raise LessonError(
            "bad front matter: the phase's title, its lessons, lesson_number, lesson_count and "
            "previous now live in the phase's phase.yaml; the lesson names its phase alone",
            where=at_line(where, line_of("phase")),
            fix="run `lessonkit migrate` to move them there",
        )
    for key, kind in _META_TYPES.items():
        if key not in data:
            raise LessonError(f"bad front matter: missing '{key}'", where=at_line(where, 1))
        if not isinstance(data[key], kind) or isinstance(data[key], bool):
            expected = kind.__name__ if isinstance(kind, type) else kind
            raise LessonError(
                f"bad front matter: '{key}' should be a {expected}, got {data[key]!r}",
                where=at_line(where, line_of(key)),
            )
    unknown = set(data) - set(_META_TYPES)
    if unknown:
        raise LessonError(
            f"bad front matter: unknown key(s) {', '.join(sorted(unknown))}",
            where=at_line(where, line_of(sorted(unknown)[0])),
        )
    if data["phase"] != phase.number:
        raise LessonError(
            f"bad front matter: 'phase' is {data['phase']!r}, but this lesson's folder is in "
            f"phase {phase.number} ({phase_file})",
            where=at_line(where, line_of("phase")),
            fix=f'write phase: "{phase.number}", or move the lesson\'s folder to its phase',
        )
    if data["id"] not in phase.lessons:
        raise LessonError(
            f"lesson {data['id']!r} is not in the lessons of its phase ({phase_file})",
            where=at_line(where, line_of("id")),
            fix=f"add `- {data['id']}` to the lessons of {phase_file}, at its place in the "
            "phase (replacing a ~ kept for it)",
        )
    return Meta(
        id=data["id"],
        title=data["title"],
        goal=data["goal"],
        track=data["track"],
        hardware_labels=tuple(map(str, data["hardware_labels"])),
        phase=phase,
        lesson_number=phase.lessons.index(data["id"]) + 1,
        revision=data["revision"],
        date=data["date"],
        minutes=data["minutes"],
        hardware=data["hardware"],
        practice=data["practice"],
    )
