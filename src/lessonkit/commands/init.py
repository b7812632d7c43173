"""`lessonkit init DIR`: start a new course repository that passes its own checks.

It writes the files lessonkit needs to find the course, pinned requirements that install
lessonkit as a package, a README with the set-up commands, a .gitignore and a CI script; no
lesson: `lessonkit new ID --phase NN` adds the first one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lessonkit.commands._common import console, marked, quoted
from lessonkit.lesson.new_course import write_course


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", type=Path, help="a new or empty folder")
    parser.add_argument("--title", help="the course's title (default: from DIR's name)")


def run(args: argparse.Namespace) -> int:
    folder: Path = args.folder
    title = args.title or folder.resolve().name.replace("-", " ").replace("_", " ").capitalize()
    out = console()
    for path in write_course(folder, title):
        out.print(f"wrote {quoted(path)}")
    out.print(
        marked(
            "ok",
            f"course {title!r} is ready in {quoted(folder)}: set it up with the README's "
            "commands, then add a lesson with `lessonkit new ID --phase NN` from inside it.",
        )
    )
    return 0
