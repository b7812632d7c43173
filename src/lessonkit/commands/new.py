"""`lessonkit new`: write a skeleton lesson (`lesson.new_lesson`) that builds, runs, grades
and verifies as it is, then record and build it as `lessonkit build ID --record` does, so the
new lesson starts with its first record and every generated file.
"""

from __future__ import annotations

import argparse

from lessonkit.commands._common import console, marked, quoted
from lessonkit.errors import UsageError
from lessonkit.lesson.files import ALL
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.new_lesson import write_new_lesson
from lessonkit.site.artifacts import write_all


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lesson", help="the new lesson's id: lowercase words and digits, e.g. loops-01"
    )
    parser.add_argument(
        "--phase", required=True, metavar="NN", help="the phase number, two digits, e.g. 04"
    )
    parser.add_argument("--title", help="the lesson's title (default: from the id)")


def run(args: argparse.Namespace) -> int:
    from lessonkit.commands._common import show_build
    from lessonkit.commands._lesson_run import run_lesson
    from lessonkit.receipts.lesson_runs import RunOptions
    from lessonkit.site.build import build

    place = write_new_lesson(args.lesson, args.phase, args.title)
    folder = place.folder
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
