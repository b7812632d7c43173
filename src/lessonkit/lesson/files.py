"""A lesson's runnable scripts, declared once, each with the committed record of its reference run.

`lessonkit run --script`, `lessonkit verify`, the site build and the page all read this list, so
every script is run, compared, recorded and checked for staleness by the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lessonkit.errors import UsageError
from lessonkit.lesson.model import Lesson
from lessonkit.render.script import render_going_further, render_main

ALL = "all"
"""The `--script` value that runs every script of the lesson, in order."""


@dataclass(frozen=True)
class Script:
    """A generated script a learner runs, and where its reference run is recorded.

    Paths are relative to the lesson folder; `name` is what `lessonkit run --script` takes;
    `render` writes the script's text from the lesson (the build writes it, records hash it).
    """

    name: str
    path: str
    record: str
    render: Callable[[Lesson], str]


MAIN = Script("main", "code/main.py", "outputs/execution.json", render_main)
GOING_FURTHER = Script(
    "going-further", "code/going_further.py", "outputs/going-further.json", render_going_further
)
SCRIPTS = (MAIN, GOING_FURTHER)
DEFAULT = MAIN


def lesson_scripts(lesson: Lesson) -> tuple[Script, ...]:
    """The scripts this lesson runs: going_further.py only when it has optional experiments."""
    return tuple(s for s in SCRIPTS if s is not GOING_FURTHER or lesson.optional_experiments)


def script_names(lesson: Lesson) -> tuple[str, ...]:
    """Every value `--script` accepts for this lesson."""
    return (*(s.name for s in lesson_scripts(lesson)), ALL)


def select_scripts(lesson: Lesson, name: str) -> tuple[Script, ...]:
    """The scripts `--script name` runs; raises UsageError naming the choices otherwise."""
    if name == ALL:
        return lesson_scripts(lesson)
    for script in lesson_scripts(lesson):
        if script.name == name:
            return (script,)
    raise UsageError(
        f"{lesson.meta.id} has no script {name!r}",
        fix=f"choose one of: {', '.join(script_names(lesson))}",
    )


def script_at(path: str) -> Script:
    """The script declared at `path` (as a receipt names it); raises ValueError otherwise."""
    for script in SCRIPTS:
        if script.path == path:
            return script
    known = ", ".join(s.path for s in SCRIPTS)
    raise ValueError(f"script is {path!r}; expected one of {known}")
