"""A lesson's scripts (`lesson.files`): every script `build` generates runs through
`lessonkit run`, and a script lesson.md no longer makes is removed by the next build."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from lessonkit.errors import UsageError
from lessonkit.lesson.files import (
    GOING_FURTHER,
    MANIFEST,
    SCRIPTS,
    generated_files,
    lesson_scripts,
    select_scripts,
)
from lessonkit.lesson.load import load_lesson, parse_lesson
from lessonkit.lesson.model import Phase
from lessonkit.lesson.new_lesson import skeleton
from lessonkit.site.artifacts import find_drift, write_all

from conftest import copy_lesson_repo


def _skeleton():
    phase = Phase("04", "Phase 04", "Phase study guide", ("loops-01",))
    text = skeleton("loops-01", "Loops 01", "04", dt.date(2026, 1, 1))
    return parse_lesson(text, Path("lesson.md"), phase)


def _generated_scripts(lesson) -> set[str]:
    """What the issue calls a generated script: a file under code/, which says "Run it from
    the repository root"."""
    return {f.path for f in generated_files(lesson) if f.path.startswith("code/")}


@pytest.mark.parametrize("skeleton_too", [False, True])
def test_every_generated_script_runs_through_lessonkit_run(any_lesson, skeleton_too):
    """Issue 52: `lessonkit run LESSON --script going-further` was refused ("choose one of:
    main, all") for a lesson without optional experiments, whose code/going_further.py was
    generated anyway and said "Run it from the repository root"."""
    lesson = _skeleton() if skeleton_too else any_lesson
    generated = _generated_scripts(lesson)
    assert generated == {s.path for s in lesson_scripts(lesson)}
    for script in SCRIPTS:
        if script.path in generated:
            assert select_scripts(lesson, script.name) == (script,)
        else:
            with pytest.raises(UsageError, match="is made only where it has code to run"):
                select_scripts(lesson, script.name)
    assert (GOING_FURTHER.path in generated) == bool(lesson.optional_experiments)


def test_the_skeleton_has_no_script_it_cannot_run():
    assert _generated_scripts(_skeleton()) == {"code/main.py"}


def test_a_script_lesson_md_no_longer_makes_is_removed_unless_edited(tmp_path):
    """A lesson whose optional experiments are gone: its going_further.py, as the last build
    wrote it, is no longer made, so `verify` names it and `build` removes it; an edited one
    is someone's work and stays."""
    folder = copy_lesson_repo(tmp_path)
    lesson = load_lesson(folder / "lesson.md")
    listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert GOING_FURTHER.path in listed
    now = {path: (folder / path).read_bytes() for path in listed if path != GOING_FURTHER.path}
    left = folder / GOING_FURTHER.path
    drift = find_drift(lesson, now)
    assert [(d.path, d.reason) for d in drift] == [(left, "left over")]
    done = write_all(lesson, now)
    assert done.removed == (left,) and not left.exists()
    assert GOING_FURTHER.path not in json.loads((folder / MANIFEST).read_text())["files"]
    assert find_drift(lesson, now) == []

    edited = tmp_path / "edited"
    folder = copy_lesson_repo(edited)
    (folder / GOING_FURTHER.path).write_text("# mine\n", encoding="utf-8")
    assert write_all(load_lesson(folder / "lesson.md"), now).removed == ()
    assert (folder / GOING_FURTHER.path).read_text(encoding="utf-8") == "# mine\n"
