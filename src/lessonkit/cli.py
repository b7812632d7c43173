"""The `lessonkit` command: one subcommand per module under `lessonkit.commands`.

Each command module exposes `configure(parser)` and `run(args) -> int`. Errors a person
can cause arrive here as `LessonkitError` and leave as one message and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from lessonkit import __version__
from lessonkit.errors import LessonkitError

COMMANDS: dict[str, str] = {
    "list": "List the lessons in this repository.",
    "new": "Write a skeleton lesson (and its first record) under phases/.",
    "build": "Render every generated file (and the site) from lesson.md.",
    "verify": "Check that generated files, the execution records and the figure are up to date.",
    "start": "Copy a lesson's practice files into your own folder.",
    "run": "Run the worked example (or another lesson script) in a child process; keep a receipt.",
    "check": "Grade your attempt at the lesson's tasks.",
    "evidence": "Write an evidence report filled from your own run.",
    "serve": "Serve the built site on 127.0.0.1.",
}


def _module(name: str):
    return importlib.import_module(f"lessonkit.commands.{name}")


def make_parser(names: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lessonkit",
        description="Build, run, grade and record the lessons under phases/.",
    )
    parser.add_argument("--version", action="version", version=f"lessonkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        command = sub.add_parser(name, help=summary, description=summary)
        if names is None or name in names:
            _module(name).configure(command)
    return parser


def _stop(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so every child is stopped and every temp folder removed."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str]) -> int:
    # Only the chosen command's module is imported: `lessonkit check` must not pay for the others.
    chosen = next((a for a in argv if a in COMMANDS), None)
    parser = make_parser([chosen] if chosen else [])
    args = parser.parse_args(argv)
    try:
        return int(_module(args.command).run(args) or 0)
    except LessonkitError as exc:
        print(f"lessonkit {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lessonkit {args.command}: interrupted", file=sys.stderr)
        return 130
