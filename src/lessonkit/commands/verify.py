"""`lessonkit verify`: every problem of each lesson (`site.verification.lesson_problems`), one
line each, exit 1 if there is any; else the notes on old accelerator receipts, exit 0.
"""

from __future__ import annotations

import argparse

from lessonkit.commands._common import add_lesson_argument, console, marked
from lessonkit.lesson.catalog import all_lessons, find_lesson
from lessonkit.site.verification import accelerator_notes, lesson_problems


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser, optional=True)


def run(args: argparse.Namespace) -> int:
    out = console()
    lessons = [find_lesson(args.lesson)] if args.lesson else all_lessons()
    problems = [p for lesson in lessons for p in lesson_problems(lesson)]
    for problem in problems:
        out.print(marked("bad", problem))
    if problems:
        out.print(f"verify: {len(problems)} problem(s)")
        return 1
    for lesson in lessons:
        for note in accelerator_notes(lesson):
            out.print(marked("warn", note))
    if not lessons:
        out.print(marked("ok", "verify: no lessons yet; `lessonkit new ID --phase NN` starts one"))
        return 0
    names = ", ".join(lesson.meta.id for lesson in lessons)
    out.print(
        marked(
            "ok",
            f"verify: {names} up to date (declared numbers, generated files, records and "
            "declared attempts, and every cheat of the cheat set fails)",
        )
    )
    return 0
