"""A phase's study guide: preparation, milestones per lesson and the phase project.

The guide is data the course's authors write in `phase.yaml` (the toolkit holds no course
content); its keys are optional: without them the phase's page lists its lessons and says no
guide has been written. Mistakes are `LessonError`s at `phase.yaml:LINE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from lessonkit.errors import LessonError
from lessonkit.lesson.phase_file import PHASE_FILE, PHASE_KEYS
from lessonkit.lesson.project import ProjectContract, parse_contract

GUIDE_FILE = PHASE_FILE
_KEYS = ("preparation", "milestones", "project")
_PREPARATION = ("know", "install")
_MILESTONE = ("can_do", "keep")
_PROJECT = ("title", "summary", "checklist")
_GRADED = "graded"  # optional: the contract `lessonkit project` checks


@dataclass(frozen=True)
class Milestone:
    """What a learner can do after one lesson, and the evidence to keep from it."""

    lesson_id: str
    can_do: tuple[str, ...]
    keep: tuple[str, ...]


@dataclass(frozen=True)
class Project:
    """The phase's project: a short piece of work that uses its lessons together.

    `checklist` is what the learner assesses for themselves (what code cannot observe);
    `graded`, when the phase declares it, is what `lessonkit project` checks.
    """

    title: str
    summary: str
    checklist: tuple[str, ...]
    graded: ProjectContract | None = None


@dataclass(frozen=True)
class StudyGuide:
    """One phase's guide, as its phase.yaml declares it."""

    path: Path
    know: tuple[str, ...]
    install: tuple[str, ...]
    milestones: tuple[Milestone, ...]
    project: Project

    def milestone(self, lesson_id: str) -> Milestone | None:
        return next((m for m in self.milestones if m.lesson_id == lesson_id), None)


class _Source:
    """Errors at the line of phase.yaml where the key is written."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.splitlines()

    def error(self, message: str, key: str | None = None) -> LessonError:
        line = 1
        if key is not None:
            for number, raw in enumerate(self.lines, start=1):
                if raw.lstrip().startswith(f"{key}:"):
                    line = number
                    break
        return LessonError(message, where=f"{self.path}:{line}")

    def mapping(
        self, value: object, key: str, allowed: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> dict:
        if not isinstance(value, dict) or not set(allowed) <= set(value) <= {*allowed, *optional}:
            extra = f" (and optionally {', '.join(optional)})" if optional else ""
            raise self.error(
                f"'{key}' must have exactly these keys: {', '.join(allowed)}{extra}", key
            )
        return value

    def texts(self, value: object, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise self.error(f"'{key}' must be a non-empty list of sentences", key)
        return tuple(" ".join(v.split()) for v in value)

    def text(self, value: object, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"'{key}' must be a sentence", key)
        return " ".join(value.split())


def guide_path(phase_folder: Path) -> Path:
    """Where a phase's guide lives: next to its lesson folders."""
    return phase_folder / GUIDE_FILE


def load_study_guide(path: Path, lesson_ids: tuple[str, ...]) -> StudyGuide | None:
    """Read and check `phase.yaml`'s guide (None when it has none); milestones must name
    lessons of this phase."""
    text = path.read_text(encoding="utf-8")
    source = _Source(path, text)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise LessonError(f"not valid YAML ({exc})", where=f"{path}:{line}") from None
    if isinstance(data, dict) and not set(_KEYS) & set(data):
        return None
    data = source.mapping(data, "phase.yaml", _KEYS, optional=PHASE_KEYS)
    preparation = source.mapping(data["preparation"], "preparation", _PREPARATION)
    milestones = data["milestones"]
    if not isinstance(milestones, dict) or not milestones:
        raise source.error("'milestones' must map lesson ids to can_do and keep", "milestones")
    for lesson_id in milestones:
        if lesson_id not in lesson_ids:
            raise source.error(
                f"milestone {lesson_id!r} names no lesson of this phase; "
                f"its lessons are: {', '.join(lesson_ids)}",
                str(lesson_id),
            )
    project = source.mapping(data["project"], "project", _PROJECT, optional=(_GRADED,))
    return StudyGuide(
        path=path,
        know=source.texts(preparation["know"], "know"),
        install=source.texts(preparation["install"], "install"),
        milestones=tuple(
            Milestone(
                str(lesson_id),
                source.texts(source.mapping(m, str(lesson_id), _MILESTONE)["can_do"], "can_do"),
                source.texts(m["keep"], "keep"),
            )
            for lesson_id, m in milestones.items()
        ),
        project=Project(
            source.text(project["title"], "title"),
            source.text(project["summary"], "summary"),
            source.texts(project["checklist"], "checklist"),
            parse_contract(project[_GRADED], source.error) if _GRADED in project else None,
        ),
    )
