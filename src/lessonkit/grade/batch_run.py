"""One lesson batch from start to end: check the outputs, resume, grade, journal, write.

The lifecycle of `lessonkit check --batch`, an instructor's run over a folder of
submissions; the command only parses its arguments, shows the progress and prints.

Each result is appended to a journal the moment it is known (so Ctrl-C loses nothing and
`--resume` skips what is graded); the CSV, the JSON and one Markdown feedback file per
submission are written only when every submission is graded, each to a temporary name and
then renamed, so no submission's child can see or change them half-written.

The submissions folder is data: nothing is written there and nothing found there is
trusted. The outputs go to a folder outside it (`./check-<lesson>/` by default), every
output path is checked before grading starts, and the journal is bound to its run (an id
its first line holds), its batch (the folder's listing and the seed) and the sha256 of each
file it graded, every line signed with the instructor's grading key: a stale entry is graded
afresh, and one that does not verify is refused by name (`grade.journal`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from lessonkit import __version__
from lessonkit.atomic import write_atomically
from lessonkit.errors import LessonkitError, UsageError, shown
from lessonkit.grade.batch import (
    BatchEntry,
    Listing,
    grade_many,
    read_bytes_in_folder,
    read_items,
    unreadable,
)
from lessonkit.grade.batch_outputs import feedback_names, write_results
from lessonkit.grade.journal import (
    JournalEntry,
    JournalHeader,
    JournalKey,
    NotVerified,
    Shard,
    batch_id,
    read_journal,
)
from lessonkit.grade.report import Scoring, summary_json
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_name
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import Limits


class BatchRun:
    """One batch: its journal, its seed, and its outputs in `out_dir`."""

    def __init__(
        self,
        lesson: Lesson,
        folder: Path,
        out_dir: Path,
        *,
        resume: bool,
        seed: int | None,
        key: JournalKey,
        listing: Listing,
        shard: Shard | None = None,
    ):
        self.lesson = lesson
        self.key = key  # signs every journal line; --resume keeps only lines it verifies
        self.listing = listing
        self.unlisted = dict(self.listing.unlisted)  # folder -> why it could not be listed
        self.folder = folder
        self.out_dir = out_dir
        self.scoring = Scoring.of(lesson)
        self.stem = f"check-{lesson.meta.id}"
        self.journal = out_dir / f".{self.stem}.journal.jsonl"
        self.csv_path = out_dir / f"{self.stem}.csv"
        self.json_path = out_dir / f"{self.stem}.json"
        self.shard = shard
        self.shard_path = out_dir / f"{self.stem}.shard.jsonl"  # a shard's kept journal
        self.feedback = out_dir / "feedback"
        self.run_id = uuid.uuid4().hex
        self.header: JournalHeader | None = None  # written by `prepare`
        self.journalled: dict[str, JournalEntry] = {}  # by relative path
        self.done: dict[str, BatchEntry] = {}  # kept from the journal, with their bytes
        self.seed = seed
        self.resume = resume
        self.note: str | None = None  # said once the batch starts
        self.journal_problem: str | None = None  # the journal could not be written
        self.names: dict[str, str] = {}  # relative path -> feedback file name
        self.known: dict[str, BatchEntry] = {}  # unchanged since the gradebook kept them
        self.graded_now = 0  # files graded (and journalled) by this run
        self.graded_here = 0  # of those, files a grading child ran

    def reuse(self, entries: Sequence[BatchEntry]) -> None:
        """Show these files as graded before (the gradebook holds their bytes), unregraded."""
        self.known = {self.relative(e.path): e for e in entries}

    def resume_command(self, argv: Sequence[str]) -> str:
        """The command that goes on from where this run stopped (`argv` is this one's)."""
        words = list(argv)
        if "--resume" not in words:
            words.append("--resume")
        return "lessonkit " + shlex.join(words)

    def prepare(self, paths: list[Path]) -> None:
        """Check every output path, then read the journal (--resume) and start it afresh
        with this batch's header and the entries kept from it.

        Runs before any grading, so a folder where a file must go, an output folder that
        cannot be written, or a journal that does not verify, costs no grading time and is
        one message.
        """
        self._check_outputs(paths)
        if self.resume:
            self._read_journal()
            self._keep_unchanged(paths)
        self.header = JournalHeader(
            run=self.run_id,
            lesson=self.lesson.meta.id,
            revision=self.lesson.meta.revision,
            toolkit=__version__,
            folder=str(self.folder.resolve()),
            seed=self.seed,
            shard=self.shard,
            batch=batch_id(self._listing_digests(), self.seed),
        )
        kept = [self.journalled[relative] for relative in self.done]
        lines = [self.header.line(self.key), *(e.line(self.key, self.header) for e in kept)]
        try:
            write_atomically(self.journal, "".join(line + "\n" for line in lines))
        except OSError as exc:
            raise self._write_error(self.journal, exc) from None

    def _listing_digests(self) -> list[tuple[str, str]]:
        """Every entry of the folder (of every shard) and the sha256 of its bytes, "" for
        one that cannot be read: what the batch id is made of."""
        found = []
        for path in self.listing.entries:
            try:
                digest = hashlib.sha256(read_bytes_in_folder(self.folder, path)).hexdigest()
            except LessonkitError:
                digest = ""
            found.append((self.relative(path), digest))
        return found

    def _check_outputs(self, paths: list[Path]) -> None:
        self.names = names = feedback_names([self.relative(p) for p in paths])
        files = [self.csv_path, self.json_path, self.journal, self.shard_path]
        files += [self.feedback / n for n in names.values()]
        try:
            for folder in (self.out_dir, self.feedback):
                if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                    raise UsageError(
                        f"{shown(folder)} is not a folder; the batch writes its outputs in it",
                        fix="move it away, or give --out another folder",
                    )
            for path in files:
                if path.is_symlink() or (path.exists() and not path.is_file()):
                    raise UsageError(
                        f"{shown(path)} is a folder or a link; the batch writes a file there",
                        fix="move it away, or give --out another folder",
                    )
            for folder in (self.out_dir, self.feedback):
                folder.mkdir(parents=True, exist_ok=True)
                with tempfile.TemporaryFile(dir=folder):
                    pass  # the folder can be written to
        except OSError as exc:
            raise self._write_error(Path(exc.filename or self.out_dir), exc) from None

    def _write_error(self, path: Path, exc: OSError) -> UsageError:
        return UsageError(
            f"cannot write {shown(path)}: {exc.strerror or exc}",
            fix="give --out a folder you can write to (nothing graded is lost: the journal "
            "keeps it, and --resume goes on from there)",
        )

    def _read_journal(self) -> None:
        """The journal's entries of this run: each line names the run its first line opened."""
        try:
            text = self.journal.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"cannot read the batch journal {shown(self.journal)}: {exc}"
            ) from None
        try:
            header, entries = read_journal(text, self.key)
            if (
                header.lesson != self.lesson.meta.id
                or header.revision != self.lesson.meta.revision
                or header.toolkit != __version__
                or header.folder != str(self.folder.resolve())
                or header.shard != self.shard
            ):
                raise ValueError
        except NotVerified as exc:
            raise UsageError(
                f"{shown(self.journal)}, {exc.what}: {exc.why} ({self.key.where}); it was not "
                "written by this instructor's batch, so nothing in it is kept",
                fix="grade afresh without --resume (the journal is then replaced), or give "
                "--key the grading key the batch was started with",
            ) from None
        except ValueError:
            self.note = (
                f"{safe_name(shown(self.journal))} is not this batch's journal: "
                "every file is graded afresh."
            )
            return
        self.run_id = header.run
        self.journalled = {entry.path: entry for entry in entries}

    def _keep_unchanged(self, paths: list[Path]) -> None:
        """Keep a journalled report only for the same bytes, graded with one seed."""
        for path in paths:
            relative = self.relative(path)
            if relative not in self.journalled:
                continue
            journalled = self.journalled[relative]
            digest, report = journalled.sha256, journalled.report
            try:
                data = read_bytes_in_folder(self.folder, path)
            except LessonkitError:
                continue
            if hashlib.sha256(data).hexdigest() != digest or report.seed is None:
                continue
            if self.seed is None:
                self.seed = report.seed
            elif report.seed != self.seed:
                raise UsageError(
                    f"the interrupted batch used input seed {report.seed}, not {self.seed}",
                    fix=f"resume with --seed {report.seed}, or start afresh without --resume",
                )
            self.done[relative] = BatchEntry(path, report, digest, data)

    def relative(self, path: Path) -> str:
        """`path` below the batch folder, as the journal, the CSV and the progress name it."""
        try:
            return path.relative_to(self.folder).as_posix()
        except ValueError:
            return path.as_posix()

    def journal_entry(self, entry: BatchEntry) -> JournalEntry:
        """`entry` as the journal keeps it (and a gradebook takes it)."""
        try:
            mtime = os.stat(entry.path, follow_symlinks=False).st_mtime
        except OSError:
            mtime = 0.0
        relative = self.relative(entry.path)
        digest = entry.sha256 or ""
        return JournalEntry(self.run_id, relative, digest, mtime, entry.report, entry.data)

    def _journal(self, entry: BatchEntry) -> None:
        if self.journal_problem is not None:
            return  # an unreadable file (no sha256) is kept too, and read again on --resume
        record = self.journal_entry(entry)
        assert self.header is not None, "prepare() writes the header first"
        try:
            with self.journal.open("a", encoding="utf-8") as file:
                file.write(record.line(self.key, self.header) + "\n")
                file.flush()
                os.fsync(file.fileno())
        except OSError as exc:
            self.journal_problem = (
                f"cannot write the journal {safe_name(shown(self.journal))} ({exc.strerror}): "
                "--resume cannot go on from this run"
            )

    def todo(self, paths: Sequence[Path]) -> list[Path]:
        """The paths this run grades: neither kept from the journal nor unchanged since the
        gradebook kept them."""
        return [
            p for p in paths if (r := self.relative(p)) not in self.done and r not in self.known
        ]

    def failures_kept(self) -> int:
        """How many of the results kept (journal, gradebook) did not pass."""
        return sum(not e.report.passed for e in (*self.done.values(), *self.known.values()))

    def grade(
        self,
        paths: list[Path],
        *,
        jobs: int | None,
        limits: Limits,
        isolation: Isolation,
        on_report: Callable[[BatchEntry], None] | None = None,
        dask: str | None = None,
        allow_unsandboxed: bool = False,
    ) -> tuple[BatchEntry, ...]:
        """Every submission's entry, in path order: journalled ones kept, the rest graded
        here, or on the Dask cluster at `dask` (`grade.distributed`); each one graded now is
        journalled, then handed to `on_report`."""
        todo = self.todo(paths)

        def finished(entry: BatchEntry) -> None:
            self._journal(entry)
            self.graded_now += 1
            if on_report is not None:
                on_report(entry)

        unlisted = []
        for path in todo:  # a folder that could not be listed: its row says why
            if path in self.unlisted:
                problem = self.unlisted[path]
                unlisted.append(BatchEntry(path, unreadable(self.lesson, path, problem, 0.0)))
                finished(unlisted[-1])
        items = read_items([p for p in todo if p not in self.unlisted], self.folder)
        if dask is not None:
            from lessonkit.grade.distributed import grade_on_dask
            from lessonkit.grade.inputs import new_seed

            self.seed = new_seed() if self.seed is None else self.seed
            graded = grade_on_dask(
                self.lesson,
                items,
                address=dask,
                seed=self.seed,
                limits=limits,
                allow_unsandboxed=allow_unsandboxed,
                on_report=finished,
            )
        else:
            graded = grade_many(
                self.lesson,
                items,
                jobs=jobs,
                limits=limits,
                on_report=finished,
                isolation=isolation,
                seed=self.seed,
            )
        self.graded_here = len(graded)
        if graded:
            self.seed = graded[0].report.seed
        by_path = {self.relative(e.path): e for e in (*graded, *unlisted)}
        entries = []
        for path in paths:
            relative = self.relative(path)
            entry = by_path.get(relative)
            if entry is None:
                entry = self.done.get(relative) or self.known[relative]
            entries.append(entry)
        return tuple(entries)

    def summary(self, entries: tuple[BatchEntry, ...]) -> dict:
        summary = summary_json(entries, self.lesson.meta.id, self.scoring)
        summary["seed"] = summary["seed"] if self.seed is None else self.seed
        summary |= {
            "revision": self.lesson.meta.revision,
            "toolkit": __version__,
            "shard": None if self.shard is None else str(self.shard),
        }
        return summary

    def write_outputs(self, entries: tuple[BatchEntry, ...]) -> list[Path]:
        """The CSV, the JSON and the feedback files; then the journal is no longer needed,
        except by a shard, which keeps it as its result for `lessonkit merge`."""
        relatives = [self.relative(e.path) for e in entries]
        try:
            write_results(
                self.out_dir, self.stem, entries, relatives, self.scoring, self.summary(entries)
            )
        except OSError as exc:
            raise self._write_error(Path(exc.filename or self.out_dir), exc) from None
        if self.shard is not None:
            try:
                os.replace(self.journal, self.shard_path)
            except OSError as exc:
                raise self._write_error(self.shard_path, exc) from None
            return [self.csv_path, self.json_path, self.shard_path, self.feedback]
        with contextlib.suppress(OSError):
            self.journal.unlink()
        return [self.csv_path, self.json_path, self.feedback]
