"""A lesson's files, declared once: where each lives, what kind it is and what makes it.

`build` renders the generated ones, `verify` re-renders them and checks the records, the page
offers those with a download label, the manifest digests what the build wrote, and
`lessonkit run --script` runs, compares and records each runnable script, all from these
declarations, so a new file is added here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from lessonkit.errors import UsageError
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.scripts import render_going_further, render_main

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


FileKind = Literal["source", "generated", "record", "manifest"]
"""source: the author writes it; generated: `build` renders it from lesson.md (never edited by
hand); record: a command writes what a run did; manifest: the build's own bookkeeping."""

Producer = Literal[
    "author",
    "main-script",
    "going-further-script",
    "exercise-script",
    "notebook",
    "figure",
    "evidence-template",
    "run",
    "cell-outputs",
    "numbers-check",
    "build",
]
"""What writes a file: the author, one of the build's renderers (`site.artifacts` maps each
name to its function), a recording command, or the build's bookkeeping."""

RUN_RECORD_SCHEMA = 3
CELL_OUTPUTS_SCHEMA = 1
FIGURE_SCHEMA = 1
NUMBERS_SCHEMA = 1
MANIFEST_SCHEMA = 1

FIGURE_SVG = "outputs/figure.svg"
FIGURE_PNG = "outputs/figure.png"
FIGURE_DATA = "outputs/figure.json"
EVIDENCE_TEMPLATE = "outputs/evidence-template.md"
CELL_OUTPUTS = "outputs/notebook-outputs.json"
NUMBERS_CHECK = "outputs/numbers-check.json"
MANIFEST = "outputs/build-manifest.json"


@dataclass(frozen=True)
class LessonFile:
    """One file of a lesson; `path` is relative to the lesson folder.

    `label` is what the page's downloads list calls it ("" when the page does not offer it),
    `schema` the version of its JSON layout (None for files that are not JSON records).
    """

    key: str
    path: str
    kind: FileKind
    producer: Producer
    label: str = ""
    schema: int | None = None


MAIN = Script("main", "code/main.py", "outputs/execution.json", render_main)
GOING_FURTHER = Script(
    "going-further", "code/going_further.py", "outputs/going-further.json", render_going_further
)
SCRIPTS = (MAIN, GOING_FURTHER)
DEFAULT = MAIN


def lesson_files(lesson: Lesson) -> tuple[LessonFile, ...]:
    """Every file of the lesson, in the order the page lists its downloads.

    going_further.py and its record belong only to a lesson with optional experiments: a
    lesson has no script it cannot run (`lesson_scripts`).
    """
    script, notebook = lesson.exercise_paths
    going_further = (
        (
            LessonFile(
                "going-further",
                GOING_FURTHER.path,
                "generated",
                "going-further-script",
                "Optional experiments",
            ),
        )
        if lesson.optional_experiments
        else ()
    )
    gf_record = (
        (
            LessonFile(
                "going-further-record",
                GOING_FURTHER.record,
                "record",
                "run",
                "Optional experiments record (JSON)",
                RUN_RECORD_SCHEMA,
            ),
        )
        if going_further
        else ()
    )
    return (
        LessonFile("notebook", notebook, "generated", "notebook", "Notebook"),
        LessonFile("main", MAIN.path, "generated", "main-script", "Python worked example"),
        *going_further,
        LessonFile("script", script, "generated", "exercise-script", "Exercise script"),
        LessonFile("lesson", "lesson.md", "source", "author", "Lesson text (Markdown)"),
        LessonFile(
            "record", MAIN.record, "record", "run", "Execution record (JSON)", RUN_RECORD_SCHEMA
        ),
        *gf_record,
        LessonFile(
            "figure-data",
            FIGURE_DATA,
            "generated",
            "figure",
            "Figure data and provenance (JSON)",
            FIGURE_SCHEMA,
        ),
        LessonFile("figure-svg", FIGURE_SVG, "generated", "figure", "Figure (SVG)"),
        LessonFile("figure-png", FIGURE_PNG, "generated", "figure", "Figure (PNG)"),
        LessonFile(
            "evidence",
            EVIDENCE_TEMPLATE,
            "generated",
            "evidence-template",
            "Evidence template (Markdown)",
        ),
        LessonFile("cell-outputs", CELL_OUTPUTS, "record", "cell-outputs", "", CELL_OUTPUTS_SCHEMA),
        LessonFile("numbers-check", NUMBERS_CHECK, "record", "numbers-check", "", NUMBERS_SCHEMA),
        LessonFile("manifest", MANIFEST, "manifest", "build", "", MANIFEST_SCHEMA),
    )


def lesson_scripts(lesson: Lesson) -> tuple[Script, ...]:
    """The scripts this lesson runs, records and offers: one for each script `build`
    generates for it (a script is generated only where it has something to run)."""
    generated = {f.path for f in generated_files(lesson)}
    return tuple(s for s in SCRIPTS if s.path in generated)


def generated_files(lesson: Lesson) -> tuple[LessonFile, ...]:
    """The files `build` renders from lesson.md (and `verify` re-renders to compare)."""
    return tuple(f for f in lesson_files(lesson) if f.kind == "generated")


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
    made = next(
        (f" ({s.path} is made only where it has code to run)" for s in SCRIPTS if s.name == name),
        "",
    )
    raise UsageError(
        f"{lesson.meta.id} has no script {name!r}{made}",
        fix=f"choose one of: {', '.join(script_names(lesson))}",
    )


def script_at(path: str) -> Script:
    """The script declared at `path` (as a receipt names it); raises ValueError otherwise."""
    for script in SCRIPTS:
        if script.path == path:
            return script
    known = ", ".join(s.path for s in SCRIPTS)
    raise ValueError(f"script is {path!r}; expected one of {known}")
