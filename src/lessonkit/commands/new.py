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
from importlib import resources
from pathlib import Path
from string import Template

from lessonkit.artifacts import write_all
from lessonkit.catalog import find_lesson, repo_root
from lessonkit.commands._common import console, marked, quoted
from lessonkit.errors import UsageError, shown
from lessonkit.lesson import load_lesson

LESSON_ID = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lesson", help="the new lesson's id: lowercase words and digits, e.g. loops-01"
    )
    parser.add_argument(
        "--phase", required=True, metavar="NN", help="the phase number, two digits, e.g. 04"
    )
    parser.add_argument("--title", help="the lesson's title (default: from the id)")


def skeleton(lesson_id: str, title: str, phase: str, phase_title: str, day: dt.date) -> str:
    """The skeleton lesson.md with its placeholders filled in."""
    text = (resources.files("lessonkit") / "skeleton" / "lesson.md").read_text(encoding="utf-8")
    return Template(text).substitute(
        id=lesson_id, title=title, phase=phase, phase_title=phase_title, date=day.isoformat()
    )


def _folder(root: Path, phase: str, lesson_id: str) -> Path:
    """phases/NN-<existing or new phase folder>/KK-<id>, KK one past the phase's lessons."""
    phases = root / "phases"
    existing = sorted(p for p in phases.glob(f"{phase}-*") if p.is_dir())
    phase_folder = existing[0] if existing else phases / f"{phase}-phase-{phase}"
    count = len(list(phase_folder.glob("*/lesson.md"))) if phase_folder.is_dir() else 0
    return phase_folder / f"{count + 1:02d}-{lesson_id}"


def run(args: argparse.Namespace) -> int:
    from lessonkit.cli import parse
    from lessonkit.commands import build as build_command
    from lessonkit.commands import run as run_command

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
    folder = _folder(root, args.phase, args.lesson)
    title = args.title or args.lesson.replace("-", " ").capitalize()
    text = skeleton(args.lesson, title, args.phase, f"Phase {args.phase}", dt.date.today())
    folder.mkdir(parents=True)
    (folder / "lesson.md").write_text(text, encoding="utf-8")
    out = console()
    out.print(f"wrote {quoted(folder / 'lesson.md')}")
    for path in write_all(load_lesson(folder / "lesson.md")):  # what the record is made from
        out.print(f"wrote {quoted(path)}")
    if run_command.run(parse(["run", args.lesson, "--record"])) != 0:
        raise UsageError("the skeleton's first run failed", fix="see the output above")
    build_command.run(parse(["build"]))
    out.print(
        marked(
            "ok",
            f"lesson {args.lesson} is ready. Edit {quoted(folder / 'lesson.md')} "
            f"(see docs/authoring.md), then run `lessonkit build`, `lessonkit run {args.lesson} "
            "--record` when its code changes, and `lessonkit verify`.",
        )
    )
    return 0
