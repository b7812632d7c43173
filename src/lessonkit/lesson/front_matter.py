"""lesson.md's YAML front matter: every key, its type, and the phase it places the lesson in."""

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
    "phase": dict,
    "lesson_number": int,
    "lesson_count": int,
    "revision": str,
    "date": dt.date,
    "minutes": int,
    "hardware": str,
    "practice": str,
    "previous": str,
}
_PHASE_KEYS = ("number", "title", "study_guide", "lessons")


def parse_front_matter(text: str, where: str) -> Meta:
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
    phase = data["phase"]
    if set(phase) != set(_PHASE_KEYS) or not isinstance(phase["lessons"], list):
        raise LessonError(
            f"bad front matter: 'phase' needs exactly {', '.join(_PHASE_KEYS)} (lessons a list)",
            where=at_line(where, line_of("phase")),
        )
    if not 1 <= data["lesson_number"] <= data["lesson_count"] == len(phase["lessons"]):
        raise LessonError(
            "bad front matter: lesson_number must lie in 1..lesson_count, and lesson_count "
            "must equal the number of phase lessons",
            where=at_line(where, line_of("lesson_number")),
        )
    lessons = phase["lessons"]
    if not all(entry is None or isinstance(entry, str) for entry in lessons):
        raise LessonError(
            "bad front matter: each of the phase's lessons is a title, or ~ for a lesson "
            "still to be written (shown as coming later)",
            where=at_line(where, line_of("lessons")),
        )
    number = data["lesson_number"]
    if lessons[number - 1] != data["title"]:
        raise LessonError(
            f"bad front matter: entry {number} of the phase's lessons is "
            f"{lessons[number - 1]!r}, but this lesson's title is {data['title']!r}",
            where=at_line(where, line_of("lessons")),
        )
    before = lessons[number - 2] if number > 1 else None
    if before is not None and data["previous"] != before:
        raise LessonError(
            f"bad front matter: 'previous' is {data['previous']!r}, but the phase lists "
            f"{before!r} before this lesson",
            where=at_line(where, line_of("previous")),
        )
    return Meta(
        id=data["id"],
        title=data["title"],
        goal=data["goal"],
        track=data["track"],
        hardware_labels=tuple(map(str, data["hardware_labels"])),
        phase=Phase(
            str(phase["number"]), phase["title"], phase["study_guide"], tuple(phase["lessons"])
        ),
        lesson_number=data["lesson_number"],
        lesson_count=data["lesson_count"],
        revision=data["revision"],
        date=data["date"],
        minutes=data["minutes"],
        hardware=data["hardware"],
        practice=data["practice"],
        previous=data["previous"],
    )
