"""`lessonkit init`'s course files, rendered in memory."""

from __future__ import annotations

import pytest

from lessonkit.errors import UsageError
from lessonkit.guides import guide_files, guide_names
from lessonkit.lesson.new_course import COURSE_FILES, copied_files, render_course, write_course

from conftest import REPO

WHEEL = "lessonkit @ file:///tmp/dist/lessonkit-0.1.0-py3-none-any.whl"


def _pins(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("#", "-e"))]


def test_a_course_pins_what_this_repository_pins_and_lessonkit_as_it_is_given():
    course = _pins(render_course("T", WHEEL)["requirements-cpu.txt"])
    ours = _pins((REPO / "requirements-cpu.txt").read_text(encoding="utf-8"))
    assert course == [*ours, WHEEL]


def test_the_readme_first_block_sets_up_then_lists_and_sets_up_then_verifies():
    readme = render_course("My course", WHEEL)["README.md"]
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
        write_course(tmp_path, "T", WHEEL)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_init_writes_every_course_file_beside_an_empty_git_folder(tmp_path):
    (tmp_path / ".git").mkdir()
    written = write_course(tmp_path, "T", WHEEL)
    assert sorted(str(p.relative_to(tmp_path)) for p in written) == sorted(
        [f.path for f in COURSE_FILES]
        + [c.path for c in copied_files()]
        + [f"docs/{g.path}" for g in guide_files()]
    )
    assert (tmp_path / ".ci" / "run").stat().st_mode & 0o111


def test_a_new_course_holds_every_guide_as_lessonkit_has_it_and_its_readme_names_them(tmp_path):
    write_course(tmp_path, "T", WHEEL)
    for guide in guide_files():
        assert (tmp_path / "docs" / guide.path).read_bytes() == guide.data, guide.path
    assert (tmp_path / "docs" / "cluster" / "slurm-array.sh").stat().st_mode & 0o111
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert {"authoring", "instructor", "grading-security"} <= set(guide_names())
    assert all(f"`docs/{name}.md`" in readme for name in guide_names())


def test_a_new_course_can_build_the_myst_book_as_this_repository_does(tmp_path):
    write_course(tmp_path, "T", WHEEL)
    for name in ("myst.yml", "myst/lessonkit.mjs", "myst/package.json", "myst/package-lock.json"):
        assert (tmp_path / name).read_bytes() == (REPO / name).read_bytes(), name
    ignored = (tmp_path / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "_build/"} <= set(ignored)
