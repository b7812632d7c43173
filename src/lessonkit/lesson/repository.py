"""What a course repository is, told from its top folder alone: light to import, since the
sandbox asks it of every folder it searches (`run/import_binds.py`)."""

from __future__ import annotations

from pathlib import Path

COURSE_MARKS = ("phases", "pyproject.toml")
"""What a course repository holds at its top: `phases/` beside `pyproject.toml`."""


def is_course(folder: Path) -> bool:
    """Whether `folder` is a course repository (`COURSE_MARKS`)."""
    phases, project = COURSE_MARKS
    return (folder / phases).is_dir() and (folder / project).is_file()
