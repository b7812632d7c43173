"""The `lessonkit` command: one subcommand per module under `lessonkit.commands`.

Each command module exposes `configure(parser)` and `run(args) -> int`. A subcommand's
arguments are parsed by its own parser with `parse_intermixed_args`, so options may come
before or after FILE and a usage error shows that subcommand's usage line. Errors a person
can cause arrive here as `LessonkitError` and leave as one message and exit status 2; a
command run with `--json` also prints it on stdout as one JSON object, `{"command", "error":
{"message", "where", "fix"}}`.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import io
import json
import os
import signal
import sys
import threading

from lessonkit import __version__
from lessonkit.errors import LessonkitError

COMMANDS: dict[str, str] = {
    "init": "Start a new course repository in a new or empty folder.",
    "list": "List the lessons in this repository.",
    "docs": "Print a guide that comes with lessonkit (list them without a name).",
    "new": "Write a skeleton lesson (and its first record) under phases/.",
    "build": "Render every generated file (and the site) from lesson.md.",
    "verify": "Check that generated files, the execution records and the figure are up to date.",
    "migrate": "Rewrite lesson.md files written in the older syntax into the MyST forms.",
    "start": "Copy a lesson's practice files into your own folder.",
    "run": "Run the worked example (or another lesson script) in a child process; keep a receipt.",
    "check": "Grade your attempt at the lesson's tasks.",
    "evidence": "Write an evidence report filled from your own run.",
    "project": "Grade a phase project script by the properties its phase declares.",
    "grades": "Print a course gradebook's grades, or export them for an LMS.",
    "regrade": "Grade a lesson's kept attempts again with the lesson as it is today.",
    "report": "Write a page of what the class got wrong in a lesson, from a gradebook.",
    "similar": "List the pairs of students whose work on a lesson is alike, from a gradebook.",
    "merge": "Join the shards of one batch into its outputs (and a gradebook).",
    "autograder": "Write a Gradescope autograder bundle for a lesson (or grade inside one).",
    "serve": "Serve the built site on 127.0.0.1.",
}


def _module(name: str):
    return importlib.import_module(f"lessonkit.commands.{name}")


def make_parser() -> argparse.ArgumentParser:
    """The top-level parser: `--version`, `--help` and the list of commands."""
    parser = argparse.ArgumentParser(
        prog="lessonkit",
        description="Build, run, grade and record the lessons under phases/.",
    )
    parser.add_argument("--version", action="version", version=f"lessonkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        sub.add_parser(name, help=summary, description=summary)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """One subcommand's own parser; only that command's module is imported."""
    summary = COMMANDS[name]
    parser = argparse.ArgumentParser(prog=f"lessonkit {name}", description=summary)
    _module(name).configure(parser)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The chosen command's arguments, options before or after the positional ones."""
    # Top-level options (--help, --version) come before the command; the command is the
    # first word that is not an option.
    position = next((i for i, word in enumerate(argv) if not word.startswith("-")), None)
    if position is None or argv[position] not in COMMANDS or position > 0:
        make_parser().parse_args(argv)  # prints help or the version, or a usage error
    name = argv[position]
    args = command_parser(name).parse_intermixed_args(argv[position + 1 :])
    args.command = name
    return args


def _stop(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, so every child is stopped and every temp folder removed."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _stop)
        if hasattr(signal, "SIGUSR1"):  # `kill -USR1 PID` prints where every thread is
            with contextlib.suppress(AttributeError, ValueError, OSError):  # no real stderr
                faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str]) -> int:
    try:
        code = _command(argv)
        sys.stdout.flush()  # here, not at exit, where a closed pipe could only be reported
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 141  # as a shell reports a command that SIGPIPE ended: 128 + 13


def _silence_stdout() -> None:
    """The reader of stdout went away (`lessonkit grades --json | head`): what is left to
    print goes nowhere, and Python's flush at exit finds nothing to complain about."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # stdout is no file (a test's)
        pass


def _command(argv: list[str]) -> int:
    args = parse(argv)
    args.argv = tuple(argv)  # as typed: a command that stops can say how to go on
    try:
        return int(_module(args.command).run(args) or 0)
    except LessonkitError as exc:
        from lessonkit.lesson.text import safe_text  # a file name in it may hold escapes

        print(safe_text(f"lessonkit {args.command}: {exc}"), file=sys.stderr)
        if getattr(args, "json", False):  # tools expect JSON on stdout, a failure included
            print(json.dumps({"command": args.command, "error": exc.to_json()}, indent=2))
        return 2
    except KeyboardInterrupt:
        print(f"lessonkit {args.command}: interrupted", file=sys.stderr)
        return 130
