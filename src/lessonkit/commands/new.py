"""`lessonkit new`: write a skeleton lesson that builds, runs, grades and verifies as it is.

The skeleton (`lessonkit/skeleton/lesson.md`) uses every block an author needs once; the
command fills in the id, title and phase, writes it under phases/, then runs the same code
as `lessonkit run ID --record` and `lessonkit build`, so the new lesson starts with its first
record and every generated file. docs/authoring.md explains each block.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from lessonkit.atomic import write_atomically
from lessonkit.commands._common import console, marked, quoted
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.catalog import find_lesson, repo_root
from lessonkit.lesson.files import ALL
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.model import Phase
from lessonkit.lesson.phase_file import (
    PHASE_FILE,
    load_phase,
    phase_header,
    with_lesson,
    yaml_scalar,
)
from lessonkit.site.artifacts import write_all

LESSON_ID = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lesson", help="the new lesson's id: lowercase words and digits, e.g. loops-01"
    )
    parser.add_argument(
        "--phase", required=True, metavar="NN", help="the phase number, two digits, e.g. 04"
    )
    parser.add_argument("--title", help="the lesson's title (default: from the id)")


@dataclass(frozen=True)
class Place:
    """Where a new lesson goes: its folder, and its phase's phase.yaml with the lesson in it."""

    folder: Path
    phase_file: Path
    phase_text: str


def skeleton(lesson_id: str, title: str, number: str, day: dt.date) -> str:
    """The skeleton lesson.md with its placeholders filled in."""
    text = (resources.files("lessonkit") / "skeleton" / "lesson.md").read_text(encoding="utf-8")
    return Template(text).substitute(
        id=lesson_id, title=yaml_scalar(title), phase=number, date=day.isoformat()
    )


def place_in_phase(root: Path, number: str, lesson_id: str) -> Place:
    """A new phase of one lesson, or the lesson's place in an existing phase: the place its
    phase.yaml keeps for it (its id, else the first `~`), else after the last lesson.
    Only the phase's phase.yaml changes; its other lessons are left as they are."""
    phases = root / "phases"
    existing = sorted(p for p in phases.glob(f"{number}-*") if p.is_dir())
    if not existing:
        folder = phases / f"{number}-phase-{number}"
        phase = Phase(number, f"Phase {number}", "Phase study guide", (lesson_id,))
        return Place(folder / f"01-{lesson_id}", folder / PHASE_FILE, phase_header(phase))
    path = existing[0] / PHASE_FILE
    load_phase(path)  # a phase folder without its phase.yaml: say how to write it
    text, slot = with_lesson(path.read_text(encoding="utf-8"), path, lesson_id)
    return Place(existing[0] / f"{slot:02d}-{lesson_id}", path, text)


def run(args: argparse.Namespace) -> int:
    from lessonkit.commands._common import show_build
    from lessonkit.commands._lesson_run import run_lesson
    from lessonkit.receipts.lesson_runs import RunOptions
    from lessonkit.site.build import build

    if not LESSON_ID.fullmatch(args.lesson):
        raise UsageError(
            f"lesson id {args.lesson!r} is not lowercase words and digits joined by dashes",
            fix="choose an id such as loops-01",
        )
    if not re.fullmatch(r"\d{2}", args.phase):
        raise UsageError(f"--phase {args.phase!r} is not two digits", fix="write it as 04")
    root = repo_root()
    try:
        taken = find_lesson(args.lesson, root)
    except UsageError:
        taken = None
    if taken is not None:
        raise UsageError(f"lesson {args.lesson!r} exists already: {shown(taken.path)}")
    title = args.title or args.lesson.replace("-", " ").capitalize()
    place = place_in_phase(root, args.phase, args.lesson)
    folder = place.folder
    text = skeleton(args.lesson, title, args.phase, dt.date.today())
    folder.mkdir(parents=True)
    write_atomically(folder / "lesson.md", text)
    write_atomically(place.phase_file, place.phase_text)
    out = console()
    out.print(f"wrote {quoted(folder / 'lesson.md')}")
    out.print(f"wrote {quoted(place.phase_file)}")
    lesson = load_lesson(folder / "lesson.md")
    for path in write_all(lesson).written:  # what the record is made from
        out.print(f"wrote {quoted(path)}")
    if not run_lesson(out, lesson, RunOptions(script=ALL, record=True), builds_next=True):
        raise UsageError("the skeleton's first run failed", fix="see the output above")
    out.print()
    show_build(out, build())  # the phase's other lessons too: their pages say "lesson k of N"
    out.print(
        marked(
            "ok",
            f"lesson {args.lesson} is ready. Edit {quoted(folder / 'lesson.md')} "
            f"(see docs/authoring.md), then run `lessonkit build`; after a code change, "
            f"`lessonkit build {args.lesson} --record` (it records the scripts too); and "
            "`lessonkit verify` before you commit.",
        )
    )
    return 0
