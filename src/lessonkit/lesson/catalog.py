"""Find the repository and its lessons, so commands work from any folder inside a checkout."""

from __future__ import annotations

import os
from pathlib import Path

from lessonkit.errors import UsageError, shown
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.phase_file import PHASE_FILE
from lessonkit.lesson.phases import check_phases
from lessonkit.lesson.project import ProjectContract
from lessonkit.lesson.repository import is_course
from lessonkit.lesson.study_guide import guide_path, load_study_guide

LESSON_FILE = "lesson.md"


def repo_root(start: Path | None = None) -> Path:
    """The nearest folder holding `phases/`: from $LESSONKIT_ROOT, the cwd, or this package."""
    if env := os.environ.get("LESSONKIT_ROOT"):
        return Path(env).resolve()
    candidates = [Path(start or Path.cwd()).resolve(), Path(__file__).resolve()]
    for candidate in candidates:
        for folder in (candidate, *candidate.parents):
            if is_course(folder):
                return folder
    raise UsageError(
        "cannot find the lesson repository (a folder with phases/ and pyproject.toml)",
        fix="run lessonkit from inside your checkout, or set LESSONKIT_ROOT",
    )


def lesson_paths(root: Path | None = None) -> list[Path]:
    root = root or repo_root()
    return sorted((root / "phases").glob(f"*/*/{LESSON_FILE}"))


def _lesson_id(path: Path) -> str | None:
    """The id from the front matter, read without parsing the whole lesson."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if line.startswith("id:"):
                return line.split(":", 1)[1].strip()
            if number > 0 and line.strip() == "---":
                break
    return None


def find_lesson(lesson_id: str, root: Path | None = None) -> Lesson:
    """Load the lesson whose front matter has this id."""
    return load_lesson(lesson_path(lesson_id, root))


def lesson_path(lesson_id: str, root: Path | None = None) -> Path:
    """The lesson.md whose front matter has this id, found without loading it."""
    paths = lesson_paths(root)
    for path in paths:
        if _lesson_id(path) == lesson_id:
            return path
    known = ", ".join(filter(None, map(_lesson_id, paths))) or "none"
    raise UsageError(f"unknown lesson {lesson_id!r}", fix=f"choose one of: {known}")


def all_lessons(root: Path | None = None) -> list[Lesson]:
    """Every lesson under phases/, each phase's order in its phase.yaml agreeing with them."""
    root = root or repo_root()
    lessons = [load_lesson(p) for p in lesson_paths(root)]
    check_phases(lessons, sorted((root / "phases").glob(f"*/{PHASE_FILE}")))
    return lessons


def phase_folders(root: Path | None = None) -> dict[str, Path]:
    """Each phase's folder under phases/, by its number (`03` for `phases/03-state/`)."""
    root = root or repo_root()
    folders = sorted(p for p in (root / "phases").iterdir() if p.is_dir())
    return {p.name.split("-", 1)[0]: p for p in folders if p.name.split("-", 1)[0].isdigit()}


def find_phase(name: str, root: Path | None = None) -> tuple[str, Path, tuple[str, ...]]:
    """A phase named `phase-03` (or `03`): its number, folder and the ids of its lessons."""
    folders = phase_folders(root)
    number = name.removeprefix("phase-")
    if number not in folders:
        known = ", ".join(f"phase-{n}" for n in folders) or "none"
        raise UsageError(f"unknown phase {name!r}", fix=f"choose one of: {known}")
    folder = folders[number]
    paths = sorted(folder.glob(f"*/{LESSON_FILE}"))
    return number, folder, tuple(filter(None, map(_lesson_id, paths)))


def phase_contract(name: str) -> tuple[str, ProjectContract]:
    """The phase's number and its project's graded contract; UsageError when it has none."""
    number, folder, lesson_ids = find_phase(name)
    path = guide_path(folder)
    guide = load_study_guide(path, lesson_ids) if path.is_file() else None
    if guide is None or guide.project.graded is None:
        raise UsageError(
            f"phase {number} declares no graded project",
            fix=f"add `project: graded:` to {shown(path)} (see docs/authoring.md)",
        )
    return number, guide.project.graded
