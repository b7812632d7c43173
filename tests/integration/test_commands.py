"""build, verify and start as a person uses them."""

from __future__ import annotations

import shlex

import nbformat
import pytest

from lessonkit.cli import main, parse

from conftest import REPO, copy_lesson_repo


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
    assert (target / "state-02.ipynb").is_file()
    script.write_text("my own work\n")
    assert main(["start", "state-02", str(target)]) == 0
    assert script.read_text() == "my own work\n"
    out = capsys.readouterr().out
    assert "never overwritten" in out and "now grades" not in out  # the same folder again
    other = tmp_path / "other"
    assert main(["start", "state-02", str(other)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert f"`lessonkit check state-02` now grades your copy in {other}, no longer" in said
    assert f"the one in {target.resolve()}" in said


def test_started_copies_do_not_carry_the_generated_header(repo_copy, tmp_path, lesson):
    from lessonkit.lesson.layout import generated_note, practice_note

    target = tmp_path / "mine"
    assert main(["start", "state-02", str(target)]) == 0
    for name in ("state-02.py", "state-02.ipynb"):
        copy = (target / name).read_text(encoding="utf-8")
        original = (repo_copy / "exercises" / name).read_text(encoding="utf-8")
        assert "do not edit" not in copy and "do not edit" in original
        assert practice_note(lesson) in copy
    script = (target / "state-02.py").read_text(encoding="utf-8")
    original = (repo_copy / "exercises" / "state-02.py").read_text(encoding="utf-8")
    assert script == original.replace(generated_note(lesson, "this file"), practice_note(lesson))
    copied = nbformat.read(target / "state-02.ipynb", as_version=4)
    built = nbformat.read(repo_copy / "exercises" / "state-02.ipynb", as_version=4)
    assert [c.source for c in copied.cells[1:]] == [c.source for c in built.cells[1:]]
    assert "generated" not in copied.metadata["lessonkit"]


# --------------------------------------------------------------------------- build keeps edits


def test_build_refuses_to_overwrite_a_hand_edited_file(repo_copy, capsys):
    main_py = repo_copy / "code" / "main.py"
    edited = main_py.read_text(encoding="utf-8") + "\nprint('my solution')\n"
    main_py.write_text(edited, encoding="utf-8")
    assert main(["build", "state-02"]) == 2
    err = capsys.readouterr().err
    assert "not overwriting code/main.py" in err
    assert "lessonkit start state-02" in err and "--force" in err
    assert main_py.read_text(encoding="utf-8") == edited
    assert main(["build", "state-02", "--force"]) == 0, capsys.readouterr().err
    assert "my solution" not in main_py.read_text(encoding="utf-8")


def test_build_refuses_a_notebook_whose_cells_were_edited(repo_copy, capsys):
    path = repo_copy / "exercises" / "state-02.ipynb"
    notebook = nbformat.read(path, as_version=4)
    task = next(c for c in notebook.cells if "task:repair" in c.metadata.get("tags", []))
    task.source = task.source.replace('todo("partial', 'todo("mine')
    nbformat.write(notebook, path)
    assert main(["build", "state-02"]) == 2
    assert "not overwriting exercises/state-02.ipynb" in capsys.readouterr().err


def test_a_notebook_jupyter_ran_and_saved_is_still_the_builds_own(repo_copy, capsys):
    """Outputs, execution counts and metadata are not edits: build may replace the file."""
    path = repo_copy / "exercises" / "state-02.ipynb"
    built = path.read_bytes()
    notebook = nbformat.read(path, as_version=4)
    for number, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
        cell.execution_count = number + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    notebook.metadata["language_info"]["version"] = "3.12.1"
    for cell in notebook.cells:
        cell.metadata.pop("jupyter", None)  # a solution the learner opened
    nbformat.write(notebook, path)
    assert main(["build", "state-02"]) == 0, capsys.readouterr().err
    assert path.read_bytes() == built


def test_practice_folders_are_ignored_by_git():
    import shutil
    import subprocess

    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for path in ("practice/state-02/state-02.py", ".lessonkit/practice.json"):
        result = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
        assert result.returncode == 0, f"{path} is not git-ignored"


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
    said = " ".join(out.split())
    assert f"fill in the todo(...) cells in {' '.join(script.split())}" in said
    assert "then run `lessonkit check state-02`." in said
    assert (target / "state-02.ipynb").is_file()
