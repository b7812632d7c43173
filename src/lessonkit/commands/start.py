"""`lessonkit start`: copy the practice files into the learner's own folder, never overwriting.

The copies lose the "do not edit" header (they are the learner's to edit), and the folder is
remembered so that `lessonkit check` and `lessonkit evidence` find it without a FILE.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lessonkit.commands._common import add_lesson_argument, console, quoted
from lessonkit.errors import UsageError
from lessonkit.learner.practice import (
    STATE_FILE,
    copy_times,
    learner_copy,
    remember_folder,
    remembered_folder,
)
from lessonkit.lesson.catalog import find_lesson, repo_root


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("dir", nargs="?", help="your practice folder (default: practice/LESSON)")


def run(args: argparse.Namespace) -> int:
    lesson = find_lesson(args.lesson)
    root = repo_root()
    target = Path(args.dir or f"practice/{lesson.meta.id}")
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", fix="choose another folder")
    sources = [lesson.directory / p for p in lesson.exercise_paths]
    for source in sources:
        if not source.is_file():
            raise UsageError(
                f"{quoted(source)} is missing", fix=f"run `lessonkit build {lesson.meta.id}`"
            )
    out = console()
    target.mkdir(parents=True, exist_ok=True)
    stamp = copy_times(sources)
    copied = 0
    for source in sources:
        destination = target / source.name
        try:
            with destination.open("xb") as handle:  # "x": fail instead of replacing work
                handle.write(learner_copy(lesson, source.name, source.read_bytes()))
        except FileExistsError:
            out.print(f"kept {quoted(destination)} (it exists; your work is never overwritten)")
            continue
        # Fresh copies look older than any save of yours, so check picks the file you work in.
        os.utime(destination, (stamp, stamp))
        copied += 1
        out.print(f"copied {quoted(destination)}")
    before = remembered_folder(lesson, root)
    if not remember_folder(lesson, target, root):
        out.print(f"(could not write {quoted(root / STATE_FILE)}; give FILE to check)")
    elif before is not None and before != target.resolve():
        out.print(
            f"`lessonkit check {lesson.meta.id}` now grades your copy in {quoted(target)}, no "
            f"longer the one in {quoted(before)} (`lessonkit start {lesson.meta.id} "
            f"{quoted(before)}` points it back; your files there are kept)."
        )
    script = target / Path(lesson.exercise_paths[0]).name
    out.print(
        f"\n{copied} file(s) copied. Next: fill in the todo(...) cells in {quoted(script)} "
        f"(or the notebook beside it), then run `lessonkit check {lesson.meta.id}`."
    )
    return 0
