"""Errors a person can cause, with one message template: what, where, and what to do next."""

from __future__ import annotations

import os
import shlex
from pathlib import Path


class LessonkitError(Exception):
    """Base of every error lessonkit reports to a person as one clear message."""

    def __init__(self, message: str, *, where: str | None = None, fix: str | None = None):
        self.message = message
        self.where = where
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        return f"{text}\n  fix: {self.fix}" if self.fix else text

    def to_json(self) -> dict[str, str | None]:
        """The message's parts, for a command run with `--json`: tools read one JSON
        object on stdout whether the command succeeded or not."""
        return {"message": self.message, "where": self.where, "fix": self.fix}


class LessonError(LessonkitError):
    """A mistake in a lesson source file; `where` is always `file:line`."""


class UsageError(LessonkitError):
    """A command was given a missing file, an unknown lesson or a bad option."""


def shown(path: Path) -> str:
    """A path relative to the working folder when it lies below it: how messages name files."""
    # abspath, not resolve: a path that is a symlink loop must still be printable.
    try:
        return str(Path(os.path.abspath(path)).relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def quoted(path: Path) -> str:
    """`shown(path)` quoted for a POSIX shell, so it can be pasted into a command as printed."""
    return shlex.quote(shown(path))


def grader_failed(exc: Exception, *, detail: bool = True) -> str:
    """What a file's result says when grading it raised something no file should cause: a
    bug of lessonkit's, reported on that file so that the other files keep their grades.
    `detail` adds the exception's own words to its type."""
    what = f"{type(exc).__name__}: {exc}" if detail else type(exc).__name__
    return f"the grader failed on this file ({what}); please report it"
