"""`lessonkit migrate [LESSON...]`: rewrite lesson.md files into the current forms, in place.

First each lesson's phase: a phase still repeated in its lessons' front matter moves into the
phase's phase.yaml (every lesson of that phase changes, since each repeats it); then each
lesson into the MyST forms. Without LESSON, every lesson of the course.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lessonkit.atomic import write_named
from lessonkit.commands._common import console, marked, quoted
from lessonkit.lesson.catalog import LESSON_FILE, lesson_path, lesson_paths
from lessonkit.lesson.migrate import migrate_lesson
from lessonkit.lesson.phase_file import PHASE_FILE
from lessonkit.lesson.phase_migrate import migrate_phase


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lessons",
        nargs="*",
        metavar="LESSON",
        help="a lesson id or the path of a lesson.md (default: every lesson)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when a lesson is not in the current forms yet",
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    given = args.lessons or [str(path) for path in lesson_paths()]
    paths = {name: Path(name) if Path(name).is_file() else lesson_path(name) for name in given}
    status = 0
    for folder in dict.fromkeys(path.parent.parent for path in paths.values()):
        guide = folder / PHASE_FILE
        changed = migrate_phase(
            folder,
            guide.read_text(encoding="utf-8") if guide.is_file() else None,
            {p: p.read_text(encoding="utf-8") for p in sorted(folder.glob(f"*/{LESSON_FILE}"))},
        )
        if changed and args.check:
            out.print(
                marked(
                    "bad",
                    f"{quoted(guide)} needs `lessonkit migrate`: its lessons repeat the phase",
                )
            )
            status = 1
            continue
        for path, text in changed.items():
            write_named(path, text)  # the author's file: a link is written through
        if changed:
            out.print(marked("ok", f"{quoted(guide)} now holds the phase; its lessons name it"))
    for name, path in paths.items():
        text = path.read_text(encoding="utf-8")
        if status and args.check:
            continue  # its phase must move first: the lesson cannot load before
        migrated = migrate_lesson(text, path)
        if migrated == text:
            out.print(marked("ok", f"{quoted(path)} is in the MyST forms already"))
        elif args.check:
            out.print(marked("bad", f"{quoted(path)} needs `lessonkit migrate {name}`"))
            status = 1
        else:
            write_named(path, migrated)  # the author's file: a link is written through
            out.print(marked("ok", f"{quoted(path)} rewritten in the MyST forms"))
    return status
