"""`lessonkit init DIR`: start a new course repository that passes its own checks.

It writes the files lessonkit needs to find the course, pinned requirements that install
lessonkit as it is installed here (or as `--lessonkit SPEC` says), a README with the set-up
commands, lessonkit's guides in `docs/`, a .gitignore and a CI script; no lesson: `lessonkit
new ID --phase NN` adds the first one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lessonkit.commands._common import console, marked, quoted
from lessonkit.lesson.new_course import write_course
from lessonkit.lesson.requirement import installed_requirement, requirement_from_spec


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", type=Path, help="a new or empty folder")
    parser.add_argument("--title", help="the course's title (default: from DIR's name)")
    parser.add_argument(
        "--lessonkit",
        metavar="SPEC",
        help="how the course installs lessonkit: a version (`lessonkit==0.1.0`), a wheel or "
        "folder on disk (`-e FOLDER` for an editable one) or a URL (default: as this "
        "lessonkit was installed, from an index, a wheel, a VCS URL or a folder)",
    )


def run(args: argparse.Namespace) -> int:
    folder: Path = args.folder
    title = args.title or folder.resolve().name.replace("-", " ").replace("_", " ").capitalize()
    if args.lessonkit is None:
        requirement = installed_requirement()
    else:
        requirement = requirement_from_spec(args.lessonkit, Path.cwd())
    out = console()
    written = write_course(folder, title, requirement)
    for path in written:
        out.print(f"wrote {quoted(path)}")
    out.print(f"lessonkit is installed by requirements-cpu.txt as: {requirement}")
    out.print(
        marked(
            "ok",
            f"course {title!r} is ready in {quoted(folder)}: set it up with the README's "
            "commands, then add a lesson with `lessonkit new ID --phase NN` from inside it.",
        )
    )
    return 0
