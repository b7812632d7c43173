"""`lessonkit docs [NAME]`: the guides that come with lessonkit, wherever it is installed.

Without NAME it lists the guides; with one it prints that guide: rendered, in a pager, on a
terminal, and as its Markdown when piped or redirected (`lessonkit docs authoring >
authoring.md`). A new course has the same guides in its `docs/`.
"""

from __future__ import annotations

import argparse
import sys

from rich.markdown import Markdown
from rich.text import Text

from lessonkit.commands._common import console
from lessonkit.guides import COURSE_FOLDER, guide_names, guide_text, guide_title


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", nargs="?", metavar="NAME", help="a guide's name (default: list the guides)"
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    if args.name is None:
        for name in guide_names():
            about = f"  {guide_title(guide_text(name))}  ({COURSE_FOLDER}/{name}.md in a course)"
            out.print(Text.assemble((name, "bold"), about))
        out.print("Print one with `lessonkit docs NAME`.")
        return 0
    text = guide_text(args.name)
    if not sys.stdout.isatty():
        sys.stdout.write(text)
        return 0
    with out.pager(styles=True):
        out.print(Markdown(text), soft_wrap=False)  # wrapped to the terminal
    return 0
