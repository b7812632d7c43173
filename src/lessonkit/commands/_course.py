"""What `check --batch --gradebook` adds to a batch: the gradebook, opened before grading.

The gradebook is opened (and migrated) and the roster read before any file is graded, so a
wrong path or a broken roster costs no grading time; the attempts are kept once the
batch's own outputs are written. Like the outputs, the gradebook never lies inside the
submissions folder, where a student could have planted one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

from lessonkit import __version__
from lessonkit.course.gradebook import POLICIES, Gradebook
from lessonkit.course.intake import intake
from lessonkit.course.roster import Roster, read_roster
from lessonkit.errors import UsageError, shown
from lessonkit.grade.journal import JournalEntry
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_name


def add_policy_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--policy latest|best`: which attempt of each student counts, for `what`."""
    parser.add_argument("--policy", choices=POLICIES, default="latest", help=what)


def open_gradebook(path: str) -> Gradebook:
    """The gradebook at `path`, created when it does not exist (its folder must)."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{shown(file)} is a folder", fix="give --gradebook a file name")
    if not file.parent.is_dir():
        raise UsageError(
            f"the folder of the gradebook {shown(file)} does not exist",
            fix="create it, or give --gradebook a file in an existing folder",
        )
    return Gradebook(file)


def existing_gradebook(path: str) -> Gradebook:
    """The gradebook at `path`, which must exist (reading never creates an empty one)."""
    if not Path(path).is_file():
        raise UsageError(
            f"there is no gradebook {shown(Path(path))}",
            fix="grade a batch into it first: lessonkit check LESSON --batch DIR --gradebook FILE",
        )
    return Gradebook(Path(path))


@dataclass(frozen=True)
class CourseIntake:
    gradebook: Gradebook
    roster: Roster | None

    @classmethod
    def open(cls, gradebook: str, roster: str | None, folder: Path | None) -> CourseIntake:
        """Open the gradebook and read the roster; `folder` is the submissions' (if any)."""
        try:
            inside = folder is not None and folder.resolve() in Path(gradebook).resolve().parents
        except (OSError, RuntimeError):
            inside = False
        if inside:
            raise UsageError(
                f"the gradebook {safe_name(gradebook)} is inside the submissions folder "
                f"{safe_name(shown(folder or Path()))}, where a planted file could pose as it",
                fix="keep the gradebook outside the submissions folder",
            )
        students = read_roster(Path(roster)) if roster else None
        book = open_gradebook(gradebook)
        if students is not None:
            book.set_students(students)
        return cls(book, students)

    def keep(self, lesson: Lesson, records: Sequence[JournalEntry], out: Console) -> None:
        """Keep every graded file as a new attempt; say which files have no student."""
        made = intake(lesson, records, roster=self.roster, toolkit=__version__)
        with self.gradebook:
            self.gradebook.add_attempts(made.attempts)
        for relative in made.unmatched:
            out.print(
                Text(
                    f"{safe_name(relative)}: no roster id matches its name; it is not in the "
                    "gradebook",
                    style="yellow",
                )
            )
        for relative in made.unreadable:
            out.print(
                Text(f"{safe_name(relative)}: unreadable, so not in the gradebook", style="yellow")
            )
        out.print(
            Text(
                f"Kept {len(made.attempts)} attempt(s) in the gradebook "
                f"{safe_name(shown(self.gradebook.path))}."
            )
        )
