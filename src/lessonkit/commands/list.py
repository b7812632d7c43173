"""`lessonkit list`: the lessons in this repository."""

from __future__ import annotations

import argparse

from rich.text import Text

from lessonkit.commands._common import console, quoted
from lessonkit.lesson.catalog import all_lessons


def configure(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    out = console()
    lessons = all_lessons()
    if not lessons:
        out.print(
            "no lessons yet under phases/: add the first with "
            "`lessonkit new ID --phase NN` (for example `lessonkit new loops-01 --phase 01`)"
        )
    for lesson in lessons:
        meta = lesson.meta
        about = (
            f"  {meta.title}  (phase {meta.phase.number}, lesson {meta.lesson_number} of "
            f"{len(meta.phase.lessons)}, {meta.revision})  {quoted(lesson.path)}"
        )
        out.print(Text.assemble((meta.id, "bold"), about))
    return 0
