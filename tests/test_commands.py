"""build, verify and start as a person uses them."""

from __future__ import annotations

import shlex

import pytest

from lessonkit.cli import main, parse

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


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "state-02", "--watch", "--timeout", "5", "mine.py"],
        ["check", "state-02", "mine.py", "--watch", "--timeout", "5"],
        ["check", "--timeout", "5", "state-02", "--watch", "mine.py"],
    ],
)
def test_options_go_before_or_after_the_file(argv):
    args = parse(argv)
    assert (args.command, args.lesson, args.file, args.watch, args.timeout) == (
        "check",
        "state-02",
        "mine.py",
        True,
        5.0,
    )


def test_a_usage_error_shows_the_subcommands_usage(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["check", "state-02", "mine.py", "--no-such-option"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: lessonkit check ")
    assert "lessonkit check: error: unrecognized arguments: --no-such-option" in err


def test_start_prints_odd_folder_names_as_they_are_and_quoted(tmp_path, capsys):
    target = tmp_path / "my work [/x] :warning:"
    assert main(["start", "state-02", str(target)]) == 0
    out = capsys.readouterr().out
    script = shlex.quote(str(target / "state-02.py"))
    assert f"copied {script}\n" in out
    assert f"copied {shlex.quote(str(target / 'state-02.ipynb'))}\n" in out
    assert f"then run `lessonkit check state-02 {script}`." in " ".join(out.split())
    assert (target / "state-02.ipynb").is_file()
