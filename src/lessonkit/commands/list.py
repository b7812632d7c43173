"""`lessonkit list`: the lessons in this repository."""

from __future__ import annotations

import argparse

from lessonkit.catalog import all_lessons
from lessonkit.commands._common import console, shown


def configure(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    out = console()
    for lesson in all_lessons():
        meta = lesson.meta
        out.print(
            f"[bold]{meta.id}[/bold]  {meta.title}  (phase {meta.phase.number}, lesson "
            f"{meta.lesson_number} of {meta.lesson_count}, {meta.revision})  {shown(lesson.path)}"
        )
    return 0
