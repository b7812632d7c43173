"""`lessonkit init`'s course files, rendered in memory."""

from __future__ import annotations

import pytest

from lessonkit import __version__
from lessonkit.errors import UsageError
from lessonkit.lesson.new_course import COURSE_FILES, render_course, write_course

from conftest import REPO


def _pins(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("#", "-e"))]


def test_a_course_pins_what_this_repository_pins_and_lessonkit_as_a_package():
    course = _pins(render_course("T")["requirements-cpu.txt"])
    ours = _pins((REPO / "requirements-cpu.txt").read_text(encoding="utf-8"))
    assert course == [*ours, f"lessonkit=={__version__}"]


def test_the_readme_first_block_sets_up_then_lists_and_sets_up_then_verifies():
    readme = render_course("My course")["README.md"]
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert readme.startswith("# My course\n")
    assert [line.rsplit("&& ", 1)[1] for line in block] == [
        ".venv/bin/lessonkit list",
        ".venv/bin/lessonkit verify",
    ]
    assert all("-r requirements-cpu.txt" in line for line in block)


def test_init_refuses_a_folder_that_holds_anything_but_git(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError, match="is not empty"):
        write_course(tmp_path, "T")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_init_writes_every_course_file_beside_an_empty_git_folder(tmp_path):
    (tmp_path / ".git").mkdir()
    written = write_course(tmp_path, "T")
    assert sorted(str(p.relative_to(tmp_path)) for p in written) == sorted(
        f.path for f in COURSE_FILES
    )
    assert (tmp_path / ".ci" / "run").stat().st_mode & 0o111
