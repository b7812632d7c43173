"""Arguments and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from lessonkit.atomic import write_named
from lessonkit.errors import UsageError, quoted, shown
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_text
from lessonkit.run.isolation import RUN_AS_ME
from lessonkit.run.limits import DEFAULT_LIMITS, MIN_MEMORY, Limits, parse_size, shown_size

if TYPE_CHECKING:
    from lessonkit.site.build import Build


def add_lesson_argument(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    if optional:
        parser.add_argument(
            "lesson", nargs="?", default=None, help="lesson id from `lessonkit list` (default: all)"
        )
    else:
        parser.add_argument("lesson", help="lesson id, from `lessonkit list`")


class Terminal(Console):
    """A console whose every printed character passes through `safe_text`, the terminal's
    one escaping function: a learner's file name, message or output that holds an escape
    sequence shows it as U+FFFD, whichever command prints it and however it is wrapped (a
    table cell, a caption). Only rich's own styles reach the terminal as control codes."""

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterator[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None:
                yield Segment(safe_text(segment.text), segment.style)
            else:
                yield segment

    def on_broken_pipe(self) -> None:
        """Raise it on (rich would exit here): `cli.main` ends every command on a closed
        pipe, whatever printed last."""
        raise BrokenPipeError


def console(stderr: bool = False) -> Console:
    """A rich console that honours NO_COLOR and plain pipes, and shows text from outside
    safely (`Terminal`).

    It never reads markup or emoji codes in strings: what commands print holds the user's
    folder names, file names and messages (a folder named `a[/x]b` is text, not a tag).
    Styles are given as `Text` objects instead, e.g. `marked`.
    """
    return Terminal(
        file=sys.stderr if stderr else sys.stdout,
        no_color="NO_COLOR" in os.environ,
        highlight=False,
        soft_wrap=True,
        markup=False,
        emoji=False,
    )


Mark = Literal["ok", "bad", "warn"]
_MARKS: dict[Mark, tuple[str, str]] = {
    "ok": ("✓", "green"),
    "bad": ("✗", "red"),
    "warn": ("!", "yellow"),
}


def marked(mark: Mark, message: str) -> Text:
    """A message behind a coloured ✓, ✗ or !; the message itself is printed as it is."""
    symbol, style = _MARKS[mark]
    return Text.assemble((symbol, style), " ", message)


def add_timeout_argument(
    parser: argparse.ArgumentParser, default: float, what: str, metavar: str = "SECONDS"
) -> None:
    """`--timeout`, a time limit in seconds, taken and explained alike by every command."""
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=default,
        metavar=metavar,
        help=f"{what} (default: {default:g})",
    )


def add_limit_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """`--timeout` and `--memory`: the time and memory each graded child gets (`Limits`)."""
    add_timeout_argument(parser, DEFAULT_LIMITS.timeout, what)
    parser.add_argument(
        "--memory",
        type=memory_size,
        metavar="SIZE",
        help="memory each process of a graded run may use, e.g. 512M or 4G "
        f"(default: {shown_size(DEFAULT_LIMITS.memory)})",
    )


def limits_from(args: argparse.Namespace) -> Limits:
    """The grader's limits with the `--timeout` and `--memory` this command was given."""
    return DEFAULT_LIMITS.with_options(
        memory=getattr(args, "memory", None), timeout=getattr(args, "timeout", None)
    )


def memory_size(text: str) -> int:
    """An argparse type for `--memory`: a size such as 512M or 2G, of at least MIN_MEMORY."""
    try:
        size = parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if size < MIN_MEMORY:
        raise argparse.ArgumentTypeError(
            f"give at least {shown_size(MIN_MEMORY)}: JAX alone needs about 300M"
        )
    return size


def positive_seconds(text: str) -> float:
    """An argparse type for time limits: a number of seconds above 0 and at most an hour."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("give a time limit between 0 and 3600 seconds")
    return value


def whole_number(text: str) -> int:
    """An argparse type for counts (devices, jobs): a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return int(text)


def add_run_as_me_argument(parser: argparse.ArgumentParser) -> None:
    """The option that grades other people's files with no isolation: only where nothing
    can isolate them (no bubblewrap, not root), and its name says what it allows."""
    parser.add_argument(
        RUN_AS_ME,
        dest="run_submissions_as_me",
        action="store_true",
        help="grade other people's files where nothing can isolate them (no bubblewrap, "
        "not root): every submission then runs as you and can read and change everything "
        "you can, the other submissions, the key and the results included (as root without "
        "namespaces, each runs as a user id of its own but reads what every user may read)",
    )


def add_key_argument(parser: argparse.ArgumentParser) -> None:
    """`--key FILE`: the grading key that signs and verifies batch journals and shard results."""
    parser.add_argument(
        "--key",
        metavar="FILE",
        help="the grading key that signs the batch's journal and shard result, and that "
        "--resume and merge verify (default: $LESSONKIT_GRADING_KEY, else "
        "~/.config/lessonkit/grading.key, made on first use); never inside the submissions "
        "or an output folder",
    )


def add_practice_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        nargs="?",
        help="your practice file, .py or .ipynb (default: your practice copy from "
        "`lessonkit start`, else the lesson's own copy)",
    )


def practice_file(lesson: Lesson, given: str | None) -> Path:
    """The file the learner named, else their practice copy; says on stderr which one it took.

    stderr keeps `--json` output clean; the note matters most when nothing was named.
    """
    from rich.text import Text

    from lessonkit.learner.practice import find_practice_file
    from lessonkit.lesson.catalog import repo_root

    found = find_practice_file(lesson, given, repo_root())
    where, lesson_id = shown(found.path), lesson.meta.id
    if found.origin == "practice":
        note = f"Using {where}, your practice copy"
        if found.other is not None:
            later = f", saved after {found.other.name}" if found.path.suffix == ".ipynb" else ""
            note += f"{later} (give FILE to use {found.other.name} instead)"
        note += "."
    elif found.origin == "lesson":
        note = (
            f"No practice copy found, so using the lesson's own copy, {where}. "
            f"`lessonkit start {lesson_id}` makes yours; or give FILE."
        )
    else:
        return found.path
    console(stderr=True).print(Text(note))
    return found.path


STDOUT = "-"
"""`--output -`: the output goes to standard output, and what the command says to stderr."""


def write_output(given: str, content: str | bytes, said: str) -> None:
    """`--output FILE` as `atomic.write_named` writes it, then `Wrote FILE{said}`.

    `-` (or a path naming the file standard output already is, such as `/dev/stdout`
    redirected to a file) writes to standard output, and the note goes to stderr. Bytes
    (a zip) are refused there while standard output is a terminal, as `curl` and `tar` do:
    they would garble it, and a pipe or a redirect was surely meant. A path that cannot be
    written is the person's error, with one message.
    """
    if given == STDOUT or _is_stdout(Path(given)):
        if isinstance(content, bytes) and sys.stdout.isatty():
            raise UsageError(
                "the output is binary and standard output is a terminal",
                fix="give --output FILE, or send it on: `--output - > FILE` or `| COMMAND`",
            )
        sys.stdout.flush()
        sys.stdout.buffer.write(content.encode("utf-8") if isinstance(content, str) else content)
        sys.stdout.flush()
        console(stderr=True).print(Text(f"Wrote standard output{said}"))
        return
    path = Path(given)
    try:
        write_named(path, content)
    except OSError as exc:
        raise UsageError(
            f"cannot write {shown(path)}: {exc.strerror or exc}",
            fix="give --output a file in a folder you can write to, or - for standard output",
        ) from None
    console().print(Text(f"Wrote {quoted(path)}{said}"))


def _is_stdout(path: Path) -> bool:
    """Whether `path` names the very file standard output writes to."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # missing; stdout closed or not a real file
        return False


def show_build(out: Console, done: Build) -> None:
    """Every file a build wrote, lesson by lesson, then the site, or the step it waits for."""
    from lessonkit.site.build import INDEX

    show_lessons(out, done)
    report = done.site
    if report is None:
        waiting = done.waiting
        assert waiting is not None  # a build without a site says why
        out.print(
            f"site: not rebuilt yet, the records are not current for the code lesson.md has "
            f"now:\n  {waiting.where}: {waiting.message}\nnext: {waiting.fix}"
        )
        return
    out.print(
        f"site: wrote {quoted(report.target)} ({len(report.pages)} lesson page(s), "
        f"{report.file_count} files, {report.total_bytes / 1024:.0f} KiB); open "
        f"{quoted(report.target / INDEX)} or run `lessonkit serve`"
    )


def show_lessons(out: Console, done: Build) -> None:
    """Each file a build wrote or removed, lesson by lesson."""
    for built in done.lessons:
        for path in built.written:
            out.print(f"wrote {quoted(path)}")
        for path in built.removed:
            out.print(f"removed {quoted(path)} (lesson.md no longer makes it)")
        changed = len(built.written) + len(built.removed)
        out.print(f"{built.lesson}: {changed} file(s) changed, the rest already up to date")


def shard_spec(text: str):
    """An argparse type for `--shard K/N`."""
    from lessonkit.course.shards import parse_shard

    return parse_shard(text)


def seed_number(text: str) -> int:
    """An argparse type for --seed: a whole number from 0 to 2**32 - 1."""
    from lessonkit.grade.judging import MAX_SEED

    if not text.isdigit() or int(text) > MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 0 to {MAX_SEED}, got {text!r}"
        )
    return int(text)
