"""`lessonkit new`: write a skeleton lesson that builds, runs, grades and verifies as it is.

The skeleton (`lessonkit/skeleton/lesson.md`) uses every block an author needs once; the
command fills in the id, title and phase, writes it under phases/, then runs the same code
as `lessonkit run ID --record` and `lessonkit build`, so the new lesson starts with its first
record and every generated file. docs/authoring.md explains each block.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

import yaml

from lessonkit.atomic import write_atomically
from lessonkit.commands._common import console, marked, quoted
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.catalog import find_lesson, repo_root
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.model import Phase
from lessonkit.lesson.phases import phase_titles
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
    """Where a new lesson goes: its folder, its place in the phase, and the phase it joins."""

    folder: Path
    phase: Phase
    number: int
    previous: str  # the title of the lesson before it, or "none"


def skeleton(lesson_id: str, title: str, place: Place, day: dt.date) -> str:
    """The skeleton lesson.md with its placeholders filled in."""
    text = (resources.files("lessonkit") / "skeleton" / "lesson.md").read_text(encoding="utf-8")
    lessons = "\n".join(f"    - {_yaml(t) if t else '~'}" for t in place.phase.lessons)
    return Template(text).substitute(
        id=lesson_id,
        title=_yaml(title),
        phase=place.phase.number,
        phase_title=_yaml(place.phase.title),
        study_guide=_yaml(place.phase.study_guide),
        lessons=lessons,
        number=place.number,
        count=len(place.phase.lessons),
        previous=_yaml(place.previous),
        date=day.isoformat(),
    )


def _yaml(text: str) -> str:
    """`text` as a YAML scalar: plain where YAML reads it back unchanged, else quoted."""
    try:
        plain = yaml.safe_load(text) == text and "\n" not in text
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text, ensure_ascii=False)  # JSON strings are YAML


def place_in_phase(root: Path, number: str, lesson_id: str, title: str) -> Place:
    """A new phase of one lesson, or the first free place (`~`) of an existing phase.

    A lesson joining a phase copies the phase as its siblings describe it, so every lesson of
    the phase still agrees on it (`lessonkit.lesson.phases`).
    """
    phases = root / "phases"
    existing = sorted(p for p in phases.glob(f"{number}-*") if p.is_dir())
    folder = existing[0] if existing else phases / f"{number}-phase-{number}"
    siblings = [load_lesson(p) for p in sorted(folder.glob("*/lesson.md"))]
    if not siblings:
        phase = Phase(number, f"Phase {number}", "Phase study guide", (title,))
        return Place(folder / f"01-{lesson_id}", phase, 1, "none")
    titles = phase_titles(number, siblings)
    if None not in titles:
        raise UsageError(
            f"phase {number} has no place for another lesson: "
            f"all {len(titles)} lessons its front matter lists are written",
            fix=f"add `- ~` to the `lessons:` list of every lesson of phase {number} "
            "(in its lesson.md front matter), then run this again",
        )
    slot = titles.index(None)
    known = siblings[-1].meta.phase
    phase = Phase(
        number, known.title, known.study_guide, (*titles[:slot], title, *titles[slot + 1 :])
    )
    previous = titles[slot - 1] if slot and titles[slot - 1] else "none"
    return Place(folder / f"{slot + 1:02d}-{lesson_id}", phase, slot + 1, previous)


def run(args: argparse.Namespace) -> int:
    from lessonkit.commands.run import run_lesson
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
    place = place_in_phase(root, args.phase, args.lesson, title)
    folder = place.folder
    text = skeleton(args.lesson, title, place, dt.date.today())
    folder.mkdir(parents=True)
    write_atomically(folder / "lesson.md", text)
    out = console()
    out.print(f"wrote {quoted(folder / 'lesson.md')}")
    for path in write_all(load_lesson(folder / "lesson.md")):  # what the record is made from
        out.print(f"wrote {quoted(path)}")
    if not run_lesson(out, load_lesson(folder / "lesson.md"), RunOptions(record=True)):
        raise UsageError("the skeleton's first run failed", fix="see the output above")
    build()
    out.print(
        marked(
            "ok",
            f"lesson {args.lesson} is ready. Edit {quoted(folder / 'lesson.md')} "
            f"(see docs/authoring.md), then run `lessonkit build`, `lessonkit run {args.lesson} "
            "--record` when its code changes, and `lessonkit verify`.",
        )
    )
    return 0
