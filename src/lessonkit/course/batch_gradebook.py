"""What `check --batch --gradebook` adds to a batch: the gradebook, opened before grading.

The gradebook is opened (and migrated) and the roster read and kept in it before any file
is graded, so a wrong path, a broken roster or a gradebook that cannot be written costs no
grading time, and every later batch, merge and regrade matches files with the roster the
gradebook keeps. A file whose bytes the gradebook has graded under the same grading
fingerprint is not graded again; the attempts are kept before the batch's own outputs are
written. Like the outputs, the gradebook never lies inside the
submissions folder, where a student could have planted one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from lessonkit import __version__
from lessonkit.course.gradebook import Gradebook, utc_stamp
from lessonkit.course.intake import Tie, intake, read_submission_times, student_of
from lessonkit.course.roster import Roster, read_roster
from lessonkit.course.similarity import SameBytes, same_bytes
from lessonkit.errors import LessonkitError, UsageError, shown
from lessonkit.grade.batches import BatchEntry, JournalEntry, Reuse, read_bytes_in_folder, short
from lessonkit.grade.judging import GradeReport, stopped_at_a_limit
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_name


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
    """New submissions."""
    unchanged: int
    """Files whose bytes the gradebook had graded under this fingerprint: not graded again."""
    regraded: int
    """Gradings kept in an earlier grading's place: of another fingerprint, or one that
    stopped at a limit."""
    unmatched: tuple[str, ...]
    unreadable: tuple[str, ...]
    untimed: tuple[str, ...] = ()
    """Files `--submitted-at-from` names that the batch does not hold (a typo, another
    folder): their times were used for nothing."""
    held: int = 0
    """Submissions the gradebook already held (the same file handed in again)."""
    kept_old: int = 0
    """Files that keep a grading of an older fingerprint (`--keep-old-gradings`)."""
    tied: tuple[Tie, ...] = ()
    """Files of one student at one time with other bytes: a question, so not kept."""
    same_bytes: tuple[SameBytes, ...] = ()
    """Files whose bytes another student handed in too."""
    unlisted: tuple[str, ...] = ()
    """Files of the batch `--submitted-at-from` does not name: not submissions, not kept."""


@dataclass(frozen=True)
class Reused:
    """What a batch need not grade: the gradebook holds a grading of the file's bytes."""

    entries: tuple[BatchEntry, ...]
    """Files shown with their kept grading's report."""
    older: tuple[str, ...] = ()
    """Relative paths whose bytes were graded only under another fingerprint."""
    fingerprints: tuple[str, ...] = ()
    """Those other fingerprints, newest first."""


@dataclass(frozen=True)
class CourseIntake:
    gradebook: Gradebook
    roster: Roster | None
    """The gradebook's roster (after storing the one given, if any); None without any."""
    submitted_at: Mapping[str, float] | None
    """Submission times a submission system gave, by relative path (None without its
    list): the files it received."""

    @classmethod
    def open(
        cls,
        gradebook: str,
        roster: str | None,
        folder: Path | None,
        submitted_at: str | None = None,
    ) -> CourseIntake:
        """Open the gradebook, make sure it can be written, keep the roster given in it, and
        read the submission times; `folder` is the submissions' (if any)."""
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
        times = read_submission_times(Path(submitted_at)) if submitted_at else None
        book = open_gradebook(gradebook)
        book.check_writable()
        if students is not None:
            book.store_roster(students, utc_stamp())
        return cls(book, book.roster(), times)

    def reusable(
        self,
        lesson: Lesson,
        folder: Path,
        paths: Sequence[Path],
        fingerprint: str,
        *,
        keep_old: bool = False,
    ) -> Reused:
        """The files whose bytes the gradebook has graded under `fingerprint`, with the
        report kept then: they need no grading. Bytes graded only under another fingerprint
        are graded again (named in `older`), or with `keep_old` shown with that grading. A
        report that stopped at a time, memory or crash limit is not reused: the machine may
        have caused it, so the file is graded again."""
        found, older, others = [], [], []
        for path in paths:
            relative = path.relative_to(folder).as_posix()
            if student_of(relative, self.roster) is None:
                continue  # graded, so that its row is there; kept out of the gradebook
            try:
                data = read_bytes_in_folder(folder, path)
            except LessonkitError:
                continue  # graded, so that its row says why it cannot be read
            digest = hashlib.sha256(data).hexdigest()
            report = self.gradebook.kept_report((lesson.meta.id, digest, fingerprint))
            if report is None:
                held = self.gradebook.fingerprints(lesson.meta.id, digest)
                if held:
                    older.append(relative)
                    others.extend(held)
                    if keep_old:
                        report = self.gradebook.kept_report((lesson.meta.id, digest, held[0]))
            if report is not None and not stopped_at_a_limit(report):
                found.append(BatchEntry(path, replace(report, file=str(path)), digest, data))
        return Reused(tuple(found), tuple(older), tuple(dict.fromkeys(others)))

    def keep(
        self,
        lesson: Lesson,
        records: Sequence[JournalEntry[GradeReport]],
        fingerprint: str,
        toolkit: str = __version__,
        *,
        graded_here: bool = True,
        keep_old: bool = False,
    ) -> Kept:
        """Keep every graded file's submission, and its grading where its bytes need one;
        `toolkit` and `fingerprint` name what graded them (a merge's shards may have been
        graded by another). `graded_here`: the records are this batch's own gradings, so a
        file `reusable` left to be graded again (its kept grading stopped at a limit)
        replaces that grading. `keep_old`: bytes graded under another fingerprint keep it."""
        held = self.gradebook.attempts(lesson=lesson.meta.id)
        made = intake(
            lesson,
            records,
            roster=self.roster,
            toolkit=toolkit,
            fingerprint=fingerprint,
            submitted_at=self.submitted_at,
            held=held,
        )
        shared = same_bytes(lesson, made.attempts, held)
        with self.gradebook:
            added = self.gradebook.add_attempts(
                made.attempts, replace_limited=graded_here, keep_old=keep_old
            )
        untimed = tuple(sorted(set(self.submitted_at or {}) - {r.path for r in records}))
        return Kept(
            len(added.ids),
            len(added.unchanged),
            len(added.regraded),
            made.unmatched,
            made.unreadable,
            untimed,
            added.held,
            len(added.kept_old),
            made.tied,
            shared,
            made.unlisted,
        )

    def older_note(self, reused: Reused, fingerprint: str, keep_old: bool) -> str | None:
        """Before grading: files whose kept gradings have another fingerprint, and what is
        done with them; None when there are none."""
        if not reused.older:
            return None
        done = (
            "they keep those gradings, marked as of an older fingerprint (--keep-old-gradings)"
            if keep_old
            else "they are graded again (--keep-old-gradings keeps the old gradings instead)"
        )
        return (
            f"{len(reused.older)} file(s) were graded into "
            f"{safe_name(shown(self.gradebook.path))} under another grading fingerprint "
            f"({', '.join(short(f) for f in reused.fingerprints)}; now {short(fingerprint)}"
            f": the lesson's grading or the grader changed); {done}."
        )

    @staticmethod
    def kept_text(kept: Kept, where: str) -> str:
        """One sentence: what the gradebook `where` kept."""
        held = f" ({kept.held} handed in before were there already)" if kept.held else ""
        unchanged = (
            f"; {kept.unchanged} share a grading already kept (the same bytes)"
            if kept.unchanged
            else ""
        )
        again = (
            f"; {kept.regraded} graded again in their earlier grading's place (another "
            "grading fingerprint, or a run stopped at a time, memory or crash limit)"
            if kept.regraded
            else ""
        )
        old = f"; {kept.kept_old} keep a grading of an older fingerprint" if kept.kept_old else ""
        said = f"{held}{unchanged}{again}{old}"
        return f"Kept {kept.new} new attempt(s) in the gradebook {where}{said}."

    def kept_notes(self, kept: Kept) -> tuple[str, ...]:
        """Each file that is not in the gradebook, and why (said after what was kept)."""
        notes = []
        for relative in kept.unmatched:
            name = PurePosixPath(relative).parts[0]
            candidates = () if self.roster is None else self.roster.candidates(name)
            if len(candidates) > 1:
                notes.append(_ambiguous(relative, name, candidates))
                continue
            near = None if self.roster is None else self.roster.near(name)
            why = (
                f" (it begins with the id `{safe_name(near)}`, but what follows is not a "
                "version tag such as _v2, -2 or -late)"
                if near
                else ""
            )
            notes.append(
                f"{safe_name(relative)}: no student in the roster matches "
                f"`{safe_name(name)}`{why}; it is not in the gradebook (add its student "
                "to the roster, or rename the file to the student's id)"
            )
        notes += [_tied(tie) for tie in kept.tied]
        notes += [
            f"{safe_name(same.file)} ({safe_name(same.student)}): the same bytes as "
            f"the submission of {', '.join(safe_name(o) for o in same.others)}; "
            "`lessonkit similar` lists every pair alike (evidence to read, never a "
            "verdict)"
            for same in kept.same_bytes
        ]
        notes += [
            f"{safe_name(relative)}: unreadable, so not in the gradebook"
            for relative in kept.unreadable
        ]
        notes += [
            f"{safe_name(relative)}: not in the submission system's list (--submitted-at-from),"
            " so not a submission: never counted, and not in the gradebook"
            for relative in kept.unlisted
        ]
        notes += [
            f"{safe_name(relative)}: named by --submitted-at-from, but no such file was "
            "graded (its path must be as below the batch folder)"
            for relative in kept.untimed
        ]
        return tuple(notes)


@dataclass(frozen=True)
class KeptInGradebook:
    """What a lesson batch's gradebook kept, said after the batch's table."""

    course: CourseIntake
    kept: Kept


@dataclass(frozen=True)
class LessonGradebook:
    """`check --batch --gradebook`: the gradebook a lesson batch reuses and keeps gradings in
    (a `grade.batches.lifecycle.BatchGradebook`)."""

    course: CourseIntake
    lesson: Lesson
    folder: Path
    keep_old: bool = False

    def reusable(self, paths: Sequence[Path], fingerprint: str) -> Reuse[GradeReport]:
        reused = self.course.reusable(
            self.lesson, self.folder, paths, fingerprint, keep_old=self.keep_old
        )
        note = self.course.older_note(reused, fingerprint, self.keep_old)
        return Reuse(reused.entries, note)

    def keep(
        self, entries: Sequence[JournalEntry[GradeReport]], fingerprint: str
    ) -> KeptInGradebook:
        kept = self.course.keep(self.lesson, entries, fingerprint, keep_old=self.keep_old)
        return KeptInGradebook(self.course, kept)


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


def _tied(tie: Tie) -> str:
    """Why files of one student handed in at one time are not in the gradebook."""
    files = ", ".join(safe_name(f) for f in tie.files)
    before = f", as {', '.join(safe_name(f) for f in tie.held)} kept before" if tie.held else ""
    return (
        f"{files}: tied, `{safe_name(tie.student)}`'s submissions at the same time "
        f"({utc_stamp(tie.submitted)}{before}) with other bytes, so which is newer is a "
        "question; not in the gradebook (give each file its submission time with "
        "--submitted-at-from FILE, from the submission system or a clone's commit times)"
    )
