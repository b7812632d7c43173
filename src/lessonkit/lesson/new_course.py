"""A new course repository: the files lessonkit needs to find and check a course, no lesson.

Each `.j2` template under `lessonkit/skeleton/course/` is rendered, every other file there is
copied as it is (the MyST book's `myst.yml` and its plugin in `myst/`), and the bundled
guides are copied into `docs/`. `phases/` holds a README so git keeps it while empty, and
`requirements-cpu.txt` installs this lessonkit (`lessonkit.lesson.requirement`).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

from lessonkit import __version__
from lessonkit.errors import UsageError, shown
from lessonkit.guides import (
    COURSE_FOLDER,
    guide_files,
    guide_names,
    guide_text,
    guide_title,
    package_files,
)


@dataclass(frozen=True)
class CourseFile:
    """One file of a new course: its template and where it goes in the course."""

    template: str
    path: str
    executable: bool = False


COURSE_FILES = (
    CourseFile("README.md.j2", "README.md"),
    CourseFile("pyproject.toml.j2", "pyproject.toml"),
    CourseFile("requirements-cpu.txt.j2", "requirements-cpu.txt"),
    CourseFile("gitignore.j2", ".gitignore"),
    CourseFile("ci-run.j2", ".ci/run", executable=True),
    CourseFile("phases-README.md.j2", "phases/README.md"),
)

TEMPLATE_SUFFIX = ".j2"


@dataclass(frozen=True)
class CopiedFile:
    """A file of the skeleton that a new course gets as it is: its path there, its bytes."""

    path: str
    data: bytes


def copied_files() -> tuple[CopiedFile, ...]:
    """Every file of `skeleton/course/` that is not a template, by its path in the course."""
    return tuple(
        CopiedFile(path, entry.read_bytes())
        for path, entry in package_files(files("lessonkit") / "skeleton" / "course")
        if not path.endswith(TEMPLATE_SUFFIX)
    )


ALLOWED_BEFORE = frozenset({".git"})
"""What a folder may already hold to become a course: an empty git repository's `.git`."""


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("lessonkit", "skeleton/course"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_course(title: str, lessonkit: str) -> dict[str, str]:
    """Each rendered file of a new course (its path inside the course) with its text;
    `lessonkit` is the requirement line that installs lessonkit (`lesson.requirement`)."""
    env = _environment()
    guides = [
        {"path": f"{COURSE_FOLDER}/{name}.md", "title": guide_title(guide_text(name))}
        for name in guide_names()
    ]
    context = {"title": title, "version": __version__, "lessonkit": lessonkit, "guides": guides}
    return {f.path: env.get_template(f.template).render(**context) for f in COURSE_FILES}


def _write(path: Path, data: bytes, executable: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def write_course(folder: Path, title: str, lessonkit: str) -> list[Path]:
    """Write a new course into `folder` (made if missing, else empty): the rendered files,
    the copied ones, then the guides under `docs/`; the files written."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{shown(folder)} is a file, not a folder", fix="choose a new folder")
    present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if set(present) - ALLOWED_BEFORE:
        raise UsageError(
            f"{shown(folder)} is not empty (it holds {', '.join(present[:3])}"
            f"{', ...' if len(present) > 3 else ''}); a new course is only written into a new "
            "or empty folder, so that nothing there is overwritten",
            fix="choose a new folder, e.g. `lessonkit init my-course`",
        )
    texts = render_course(title, lessonkit)
    written = [
        _write(folder / f.path, texts[f.path].encode("utf-8"), f.executable) for f in COURSE_FILES
    ]
    written += [_write(folder / c.path, c.data, False) for c in copied_files()]
    written += [
        _write(folder / COURSE_FOLDER / g.path, g.data, g.executable) for g in guide_files()
    ]
    return written
