"""`lessonkit start`: copy the practice files into the learner's own folder, never overwriting."""

from __future__ import annotations

import argparse
from pathlib import Path

from lessonkit.catalog import find_lesson
from lessonkit.commands._common import add_lesson_argument, console, quoted, shown
from lessonkit.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("dir", nargs="?", help="your practice folder (default: practice/LESSON)")


def run(args: argparse.Namespace) -> int:
    lesson = find_lesson(args.lesson)
    target = Path(args.dir or f"practice/{lesson.meta.id}")
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", fix="choose another folder")
    sources = [lesson.directory / p for p in lesson.exercise_paths]
    for source in sources:
        if not source.is_file():
            raise UsageError(
                f"{shown(source)} is missing", fix=f"run `lessonkit build {lesson.meta.id}`"
            )
    out = console()
    target.mkdir(parents=True, exist_ok=True)
    copied = 0
    for source in sources:
        destination = target / source.name
        try:
            with destination.open(
                "xb"
            ) as handle:  # "x": fail instead of replacing a learner's work
                handle.write(source.read_bytes())
        except FileExistsError:
            out.print(f"kept {quoted(destination)} (it exists; your work is never overwritten)")
            continue
        copied += 1
        out.print(f"copied {quoted(destination)}")
    script = target / Path(lesson.exercise_paths[0]).name
    out.print(
        f"\n{copied} file(s) copied. Next: fill in the todo(...) cells in {quoted(script)}, "
        f"then run `lessonkit check {lesson.meta.id} {quoted(script)}`."
    )
    return 0
