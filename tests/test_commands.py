"""build, verify and start as a person uses them."""

from __future__ import annotations

import pytest

from lessonkit.cli import main

from conftest import copy_lesson_repo


@pytest.fixture
def repo_copy(tmp_path, monkeypatch):
    """A copy of the lesson repository that commands may change freely."""
    root = tmp_path / "repo"
    target = copy_lesson_repo(root)
    monkeypatch.setenv("LESSONKIT_ROOT", str(root))
    monkeypatch.chdir(root)
    return target


def test_verify_is_clean_on_the_committed_files(capsys):
    assert main(["verify", "state-02"]) == 0, capsys.readouterr().out


def test_verify_fails_after_an_unbuilt_edit(repo_copy, capsys):
    lesson_md = repo_copy / "lesson.md"
    text = lesson_md.read_text(encoding="utf-8")
    lesson_md.write_text(
        text.replace("x = jnp.array([2., 1.])", "x = jnp.array([2., 2.])"), encoding="utf-8"
    )
    assert main(["verify", "state-02"]) == 1
    out = capsys.readouterr().out
    for name in ("code/main.py", "exercises/state-02.py", "exercises/state-02.ipynb"):
        assert name in out
    assert "run `lessonkit build state-02`" in out


def test_start_copies_and_never_overwrites(repo_copy, tmp_path, capsys):
    target = tmp_path / "mine"
    assert main(["start", "state-02", str(target)]) == 0
    script = target / "state-02.py"
    assert script.read_bytes() == (repo_copy / "exercises" / "state-02.py").read_bytes()
    assert (target / "state-02.ipynb").is_file()
    script.write_text("my own work\n")
    assert main(["start", "state-02", str(target)]) == 0
    assert script.read_text() == "my own work\n"
    assert "never overwritten" in capsys.readouterr().out


def test_unknown_lesson_is_one_clear_message(capsys):
    assert main(["start", "state-99"]) == 2
    err = capsys.readouterr().err
    assert "unknown lesson 'state-99'" in err and "state-02" in err
