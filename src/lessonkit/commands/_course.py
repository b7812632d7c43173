"""The course commands' shared options, and what a gradebook kept, said after a batch or a
merge (`course.batch_gradebook` decides what is kept and words each note)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.text import Text

from lessonkit.course.batch_gradebook import CourseIntake, Kept
from lessonkit.course.gradebook import POLICIES
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.text import safe_name


def add_policy_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--policy latest|best`: which attempt of each student counts, for `what`."""
    parser.add_argument("--policy", choices=POLICIES, default="latest", help=what)


def add_similarity_threshold(parser: argparse.ArgumentParser, option: str, what: str) -> None:
    """`option X`: the least similarity score, 0 to 1 (default 0.5), of the pairs `what`."""
    parser.add_argument(option, type=float, default=0.5, metavar="X", help=f"{what} (default: 0.5)")


def similarity_threshold(value: float, option: str) -> float:
    """A similarity score given on the command line (`option`), which must lie in 0 to 1."""
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{option} {value:g} is outside 0 to 1", fix="give a score such as 0.5")
    return value


def say_gradebook_kept(course: CourseIntake, kept: Kept, out: Console) -> None:
    """What was kept, then each file that is not in the gradebook, and why."""
    out.print(Text(course.kept_text(kept, safe_name(shown(course.gradebook.path)))))
    for note in course.kept_notes(kept):
        out.print(Text(note, style="yellow"))
