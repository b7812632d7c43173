"""`lessonkit migrate LESSON...`: rewrite lesson.md files into the MyST forms, in place."""

from __future__ import annotations

import argparse
from pathlib import Path

from lessonkit.atomic import write_named
from lessonkit.commands._common import console, marked, quoted
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.migrate import migrate_lesson


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lessons", nargs="+", metavar="LESSON", help="a lesson id or the path of a lesson.md"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when a lesson is not in the MyST forms yet",
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    status = 0
    for given in args.lessons:
        path = Path(given) if Path(given).is_file() else find_lesson(given).path
        text = path.read_text(encoding="utf-8")
        migrated = migrate_lesson(text, path)
        if migrated == text:
            out.print(marked("ok", f"{quoted(path)} is in the MyST forms already"))
        elif args.check:
            out.print(marked("bad", f"{quoted(path)} needs `lessonkit migrate {given}`"))
            status = 1
        else:
            write_named(path, migrated)  # the author's file: a link is written through
            out.print(marked("ok", f"{quoted(path)} rewritten in the MyST forms"))
    return status
