"""Arguments and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console


def add_lesson_argument(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    if optional:
        parser.add_argument(
            "lesson", nargs="?", default=None, help="lesson id, e.g. state-02 (default: all)"
        )
    else:
        parser.add_argument("lesson", help="lesson id, e.g. state-02")


def console(stderr: bool = False) -> Console:
    """A rich console that honours NO_COLOR and plain pipes."""
    return Console(
        file=sys.stderr if stderr else sys.stdout,
        no_color="NO_COLOR" in os.environ,
        highlight=False,
        soft_wrap=True,
    )


def shown(path: Path) -> str:
    """A path relative to the working folder when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
