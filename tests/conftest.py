"""Shared fixtures: the lesson as loaded from the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonkit.lesson import load_lesson
from lessonkit.model import Lesson

REPO = Path(__file__).resolve().parents[1]
LESSON_DIR = REPO / "phases" / "03-state" / "02-pytrees-and-structured-parameters"
LESSON_MD = LESSON_DIR / "lesson.md"


@pytest.fixture(scope="session")
def lesson() -> Lesson:
    return load_lesson(LESSON_MD)


def copy_lesson_repo(root: Path) -> Path:
    """A throwaway repository at `root` with a copy of the lesson; returns the lesson folder."""
    import shutil

    target = root / LESSON_DIR.relative_to(REPO)
    shutil.copytree(LESSON_DIR, target)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return target


def invoke(argv: list[str], root: Path | None = None, cwd: Path | None = None):
    """Run the `lessonkit` CLI in this process: ``(exit code, stdout, stderr)``.

    `root` becomes $LESSONKIT_ROOT and `cwd` the working folder, only for this call, so
    module-scoped fixtures can share one expensive run between tests.
    """
    import contextlib
    import io

    from lessonkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        if root is not None:
            patch.setenv("LESSONKIT_ROOT", str(root))
        if cwd is not None:
            patch.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static site, built once per session from this repository's lessons."""
    from lessonkit.catalog import all_lessons
    from lessonkit.site import build_site

    target = tmp_path_factory.mktemp("site") / "site"
    build_site(all_lessons(REPO), target)
    return target
