"""What `check --batch --gradebook` adds to a batch: the gradebook, opened before grading.

The gradebook is opened (and migrated) and the roster read and kept in it before any file
is graded, so a wrong path or a broken roster costs no grading time, and every later batch,
merge and regrade matches files with the roster the gradebook keeps. A file whose bytes
the gradebook already holds as its student's attempt is not graded again; the attempts are
kept once the batch's own outputs are written. Like the outputs, the gradebook never lies inside the
submissions folder, where a student could have planted one.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rich.console import Console
from rich.text import Text

from lessonkit import __version__
from lessonkit.course.gradebook import POLICIES, Gradebook, Identity, utc_stamp
from lessonkit.course.intake import intake, read_submission_times, student_of
from lessonkit.course.roster import Roster, read_roster
from lessonkit.errors import LessonkitError, UsageError, shown
from lessonkit.grade.batch import BatchEntry
from lessonkit.grade.batch_folder import read_bytes_in_folder
from lessonkit.grade.journal import JournalEntry
from lessonkit.grade.results import GradeReport, stopped_at_a_limit
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
class Kept:
    """What a batch or a merge added to the gradebook."""

    new: int
    unchanged: int
    regraded: int
    """Submissions the gradebook held, kept again in their originals' place: graded with
    another revision or toolkit, or graded again after stopping at a limit."""
    unmatched: tuple[str, ...]
    unreadable: tuple[str, ...]
    untimed: tuple[str, ...] = ()
    """Files `--submitted-at-from` names that the batch does not hold (a typo, another
    folder): their times were used for nothing."""


@dataclass(frozen=True)
class CourseIntake:
    gradebook: Gradebook
    roster: Roster | None
    """The gradebook's roster (after storing the one given, if any); None without any."""
    submitted_at: Mapping[str, float]
    """Submission times a submission system gave, by relative path."""

    @classmethod
    def open(
        cls,
        gradebook: str,
        roster: str | None,
        folder: Path | None,
        submitted_at: str | None = None,
    ) -> CourseIntake:
        """Open the gradebook, keep the roster given in it, and read the submission times;
        `folder` is the submissions' (if any)."""
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
        times = read_submission_times(Path(submitted_at)) if submitted_at else {}
        book = open_gradebook(gradebook)
        if students is not None:
            book.store_roster(students, utc_stamp())
        return cls(book, book.roster(), times)

    def identity(self, lesson: Lesson, relative: str, sha256: str) -> Identity | None:
        """The identity the file's attempt would have; None when no student matches it."""
        student = student_of(relative, self.roster)
        if student is None:
            return None
        return (student, lesson.meta.id, sha256, lesson.meta.revision, __version__)

    def unchanged(self, lesson: Lesson, folder: Path, paths: Sequence[Path]) -> list[BatchEntry]:
        """The files whose bytes the gradebook already holds as their student's attempt
        (same revision and toolkit), with the report kept then: they need no grading. A
        report that stopped at a time, memory or crash limit is not reused: the machine may
        have caused it, so the file is graded again."""
        found = []
        for path in paths:
            try:
                data = read_bytes_in_folder(folder, path)
            except LessonkitError:
                continue  # graded, so that its row says why it cannot be read
            digest = hashlib.sha256(data).hexdigest()
            identity = self.identity(lesson, path.relative_to(folder).as_posix(), digest)
            report = None if identity is None else self.gradebook.kept_report(identity)
            if report is not None and not stopped_at_a_limit(report):
                found.append(BatchEntry(path, report, digest, data))
        return found

    def keep(
        self,
        lesson: Lesson,
        records: Sequence[JournalEntry[GradeReport]],
        toolkit: str = __version__,
        *,
        graded_here: bool = True,
    ) -> Kept:
        """Keep every graded file that is new as an attempt; `toolkit` is the version that
        graded them (a merge's shards may have been graded by another). `graded_here`: the
        records are this batch's own gradings, so a file `unchanged` left to be graded
        again (its kept grading stopped at a limit) replaces that grading."""
        made = intake(
            lesson,
            records,
            roster=self.roster,
            toolkit=toolkit,
            submitted_at=self.submitted_at,
        )
        with self.gradebook:
            added = self.gradebook.add_attempts(made.attempts, replace_limited=graded_here)
        new = len(added.ids) - len(added.regraded)
        untimed = tuple(sorted(set(self.submitted_at) - {r.path for r in records}))
        return Kept(
            new,
            len(added.unchanged),
            len(added.regraded),
            made.unmatched,
            made.unreadable,
            untimed,
        )

    def say(self, kept: Kept, out: Console) -> None:
        """What was kept, then each file that is not in the gradebook, and why."""
        unchanged = (
            f"; {kept.unchanged} unchanged since their last grading" if kept.unchanged else ""
        )
        again = (
            f"; {kept.regraded} graded again in their earlier grading's place (another "
            "lesson revision or toolkit, or a run stopped at a time, memory or crash limit)"
            if kept.regraded
            else ""
        )
        out.print(
            Text(
                f"Kept {kept.new} new attempt(s) in the gradebook "
                f"{safe_name(shown(self.gradebook.path))}{unchanged}{again}."
            )
        )
        for relative in kept.unmatched:
            name = PurePosixPath(relative).parts[0]
            candidates = () if self.roster is None else self.roster.candidates(name)
            if len(candidates) > 1:
                out.print(Text(_ambiguous(relative, name, candidates), style="yellow"))
                continue
            near = None if self.roster is None else self.roster.near(name)
            why = (
                f" (it begins with the id `{safe_name(near)}`, but what follows is not a "
                "version tag such as _v2, -2 or -late)"
                if near
                else ""
            )
            out.print(
                Text(
                    f"{safe_name(relative)}: no student in the roster matches "
                    f"`{safe_name(name)}`{why}; it is not in the gradebook (add its student "
                    "to the roster, or rename the file to the student's id)",
                    style="yellow",
                )
            )
        for relative in kept.unreadable:
            out.print(
                Text(f"{safe_name(relative)}: unreadable, so not in the gradebook", style="yellow")
            )
        for relative in kept.untimed:
            out.print(
                Text(
                    f"{safe_name(relative)}: named by --submitted-at-from, but no such file was "
                    "graded (its path must be as below the batch folder)",
                    style="yellow",
                )
            )


def _ambiguous(relative: str, name: str, candidates: Sequence[str]) -> str:
    """Why a file that two roster ids could make is not in the gradebook."""
    each = [f"`{safe_name(sid)}`'s" for sid in candidates]
    whose = ", ".join(each[:-1]) + f" or {each[-1]}"
    return (
        f"{safe_name(relative)}: ambiguous, `{safe_name(name)}` could be {whose} (an id, or "
        "another id with a version tag); it is not in the gradebook (name the file so that "
        "one id alone makes it, or give one of those students an id that is not the other's "
        "with a version tag, in the roster)"
    )
