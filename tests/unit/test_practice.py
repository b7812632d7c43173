"""The learner's practice copy: where `start` puts it, and how `check` and `evidence` find it."""

from __future__ import annotations

import os
from pathlib import Path

from lessonkit.learner.practice import STATE_FILE, find_practice_file, remember_folder


def _copy(folder: Path, *names: str, mtime: float = 1_000_000.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("# a practice copy\n", encoding="utf-8")
        os.utime(folder / name, (mtime, mtime))
    return folder


def test_a_named_file_is_used_as_given(lesson, tmp_path):
    found = find_practice_file(lesson, "mine.ipynb", tmp_path, cwd=tmp_path)
    assert (found.path, found.origin) == (Path("mine.ipynb"), "given")


def test_without_a_practice_copy_the_lessons_own_copy_is_named_as_such(lesson, tmp_path):
    found = find_practice_file(lesson, None, tmp_path, cwd=tmp_path)
    assert found.origin == "lesson"
    assert found.path == lesson.directory / "exercises" / "state-02.py"


def test_the_folder_start_remembered_is_found_from_anywhere(lesson, tmp_path):
    root, elsewhere = tmp_path / "repo", _copy(tmp_path / "my work", "state-02.py")
    assert remember_folder(lesson, elsewhere, root)
    assert (root / STATE_FILE).is_file()
    found = find_practice_file(lesson, None, root, cwd=root)
    assert (found.path, found.origin) == (elsewhere.resolve() / "state-02.py", "practice")


def test_the_current_folder_comes_before_the_remembered_one(lesson, tmp_path):
    root = tmp_path / "repo"
    remember_folder(lesson, _copy(tmp_path / "first", "state-02.py"), root)
    here = _copy(tmp_path / "second", "state-02.py")
    assert find_practice_file(lesson, None, root, cwd=here).path == here / "state-02.py"


def test_practice_folder_at_the_repository_root(lesson, tmp_path):
    root = tmp_path / "repo"
    folder = _copy(root / "practice" / "state-02", "state-02.py", "state-02.ipynb")
    found = find_practice_file(lesson, None, root, cwd=_copy(root / "docs"))
    assert found.path == folder / "state-02.py"  # fresh copies: the script
    assert found.other == folder / "state-02.ipynb"


def test_the_notebook_is_chosen_when_it_was_saved_last(lesson, tmp_path):
    folder = _copy(tmp_path / "practice" / "state-02", "state-02.py", "state-02.ipynb")
    os.utime(folder / "state-02.ipynb", (2_000_000.0, 2_000_000.0))
    found = find_practice_file(lesson, None, tmp_path, cwd=tmp_path)
    assert found.path == folder / "state-02.ipynb"


def test_a_remembered_folder_that_is_gone_or_a_broken_state_file_is_skipped(lesson, tmp_path):
    root = tmp_path / "repo"
    remember_folder(lesson, tmp_path / "deleted", root)
    assert find_practice_file(lesson, None, root, cwd=root).origin == "lesson"
    (root / STATE_FILE).write_text("{not json", encoding="utf-8")
    assert find_practice_file(lesson, None, root, cwd=root).origin == "lesson"
    assert remember_folder(lesson, _copy(tmp_path / "new", "state-02.py"), root)
    assert find_practice_file(lesson, None, root, cwd=root).origin == "practice"


def test_the_lessons_exercises_folder_is_never_taken_for_a_practice_copy(lesson):
    found = find_practice_file(lesson, None, lesson.directory.parent, cwd=lesson.directory)
    assert found.origin == "lesson"


def test_the_practice_layout_is_computed_once_per_lesson(monkeypatch) -> None:
    """Script, notebook, recorded outputs and grader read one layout; a new lesson, a new one."""
    from lessonkit.lesson import layout
    from lessonkit.lesson.catalog import find_lesson

    built = []
    real = layout._layout
    monkeypatch.setattr(layout, "_layout", lambda lesson: built.append(lesson) or real(lesson))
    first = find_lesson("state-02")
    assert layout.lesson_cells(first) is layout.lesson_cells(first)
    again = find_lesson("state-02")
    assert layout.lesson_cells(again) == layout.lesson_cells(first)
    assert built == [first, again]
