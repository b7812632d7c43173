"""The `lessonkit` command's own behaviour, whatever the subcommand: a closed pipe, an empty
course."""

from __future__ import annotations

import io
import os
import shutil
import sys

import pytest

from lessonkit.cli import main
from lessonkit.course.gradebook import Gradebook

from conftest import REPO, invoke


@pytest.mark.parametrize("printer", ["print", "rich"])
def test_a_reader_that_closed_the_pipe_ends_the_command_quietly(
    printer, tmp_path, monkeypatch, capfd
):
    """`lessonkit grades --json | head`: once head exits, lessonkit stops with 141, as a
    shell reports SIGPIPE, with no BrokenPipeError traceback (issue 52), whether the command
    printed with print() (`grades --json`) or with rich (`grades`)."""
    book = tmp_path / "course.sqlite"
    with Gradebook(book):
        pass
    read, write = os.pipe()
    os.close(read)
    closed = io.TextIOWrapper(io.FileIO(write, "wb"), encoding="utf-8")
    monkeypatch.setenv("LESSONKIT_ROOT", str(REPO))
    monkeypatch.setattr(sys, "stdout", closed)
    code = main(["grades", "--gradebook", str(book), *(["--json"] if printer == "print" else [])])
    closed.flush()  # what Python does at exit: stdout now leads nowhere, so nothing is raised
    monkeypatch.undo()
    closed.close()
    assert code == 141
    assert "Traceback" not in capfd.readouterr().err


def test_list_says_when_the_course_has_no_lessons(tmp_path):
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "phases").mkdir()
    code, out, err = invoke(["list"], root=tmp_path, cwd=tmp_path)
    assert (code, err) == (0, "")
    assert out.startswith("no lessons yet under phases/: add the first with `lessonkit new")
