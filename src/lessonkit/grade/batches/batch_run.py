"""One batch's state on disk: its output folder, the journal it resumes from and appends to,
and the outputs it writes at the end (`BatchRun`). The steps that drive it, in order, are
`grade.batches.lifecycle.grade_folder`; what a kind of batch does its own way is its
`grade.batches.kind.BatchKind`.

Each result is appended to a journal the moment it is known (so Ctrl-C loses nothing and
`--resume` skips what is graded); the outputs (the JSON, a Markdown feedback file per
submission, and for a lesson the CSV) are written only when every submission is graded,
each to a temporary name and then renamed, so no submission's child can see or change them
half-written.

The submissions folder is data: nothing is written there and nothing found there is
trusted. The outputs go to a folder outside it, every output path is checked before
grading starts, and the output folder is opened once, then every file in it is named
relative to it and never followed if a link (`atomic.OpenFolder`): the journal is written
through the file it made, whatever is later put at its name, and the outputs through the
folder it opened, so a journal or `feedback/` replaced by a link while the batch grades
sends nothing elsewhere. The journal is bound to its run (an id its first line holds), its batch
(the folder's listing and the seed) and the sha256 of each file it graded, every line signed
with the instructor's grading key: a stale entry is graded afresh, and one that does not
verify is refused by name (`grade.batches.journal`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shlex
import stat
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Generic

from lessonkit import __version__
from lessonkit.atomic import OpenFolder
from lessonkit.errors import LessonkitError, UsageError, shown
from lessonkit.grade.batches.folder import Listing, read_bytes_in_folder, read_items
from lessonkit.grade.batches.journal import (
    JournalEntry,
    JournalHeader,
    JournalKey,
    JournalSeal,
    NotVerified,
    OldSchema,
    Shard,
    batch_id,
    read_journal,
)
from lessonkit.grade.batches.kind import BatchKind, OnEntry, not_graded, relative_to
from lessonkit.grade.batches.outputs import FEEDBACK, feedback_names, write_results
from lessonkit.grade.model import BatchEntry, R
from lessonkit.lesson.text import safe_name


class BatchRun(Generic[R]):
    """One batch: its journal, its seed, and its outputs in `out_dir`."""

    def __init__(
        self,
        kind: BatchKind[R],
        folder: Path,
        out_dir: Path,
        *,
        resume: bool,
        seed: int | None,
        key: JournalKey,
        listing: Listing,
        shard: Shard | None = None,
    ):
        self.kind = kind
        self.key = key  # signs every journal line; --resume keeps only lines it verifies
        self.listing = listing
        self.unlisted = dict(self.listing.unlisted)  # folder -> why it could not be listed
        self.folder = folder
        self.out_dir = out_dir
        self.stem = kind.stem
        self.journal = out_dir / f".{self.stem}.journal.jsonl"
        self.shard = shard
        self.shard_path = out_dir / f"{self.stem}.shard.jsonl"  # a shard's kept journal
        self.feedback = out_dir / FEEDBACK
        self.out: OpenFolder | None = None  # the output folder, opened once by `prepare`
        self._journal_fd: int | None = None  # the journal this run made, appended to
        self.run_id = uuid.uuid4().hex
        self.header: JournalHeader | None = None  # written by `prepare`
        self.journalled: dict[str, JournalEntry[R]] = {}  # by relative path
        self.done: dict[str, BatchEntry[R]] = {}  # kept from the journal, with their bytes
        self.seed = seed
        self.resume = resume
        self.note: str | None = None  # said once the batch starts
        self.journal_problem: str | None = None  # the journal could not be written
        self.known: dict[str, BatchEntry[R]] = {}  # unchanged since the gradebook kept them
        self.graded_now = 0  # files graded (and journalled) by this run
        self.graded_here = 0  # of those, files a grading child ran

    def reuse(self, entries: Sequence[BatchEntry[R]]) -> None:
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
        digests = self._listing_digests()  # every file read and hashed once, here
        if self.resume:
            self._read_journal()
            self._keep_unchanged(paths, dict(digests))
        self.header = JournalHeader(
            run=self.run_id,
            lesson=self.kind.subject,
            revision=self.kind.revision,
            toolkit=__version__,
            folder=str(self.folder.resolve()),
            seed=self.seed,
            shard=self.shard,
            batch=batch_id(digests, self.seed),
            fingerprint=self.kind.fingerprint,
        )
        kept = [self.journalled[relative] for relative in self.done]
        lines = [self.header.line(self.key), *(e.line(self.key, self.header) for e in kept)]
        try:
            # private: it holds every submission's bytes and report, as the gradebook does
            text = "".join(line + "\n" for line in lines)
            self._journal_fd = self._out.create(self.journal.name, text, private=True)
        except OSError as exc:
            raise self._write_error(self.journal, exc) from None

    @property
    def _out(self) -> OpenFolder:
        assert self.out is not None, "prepare() opens the output folder first"
        return self.out

    def close(self) -> None:
        """Close the journal and the output folder this run holds open."""
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        if self.out is not None:
            self.out.close()

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
        """Open the output folder (once: every output is written relative to it), and refuse
        a link or a folder where a file goes, or a link or a file where a folder goes."""
        names = feedback_names([self.relative(p) for p in paths])
        files = [f"{self.stem}.json", self.journal.name, self.shard_path.name]
        files += [f"{self.stem}.csv"] if self.kind.csv is not None else []
        try:
            self.out = OpenFolder.open(self.out_dir)
            self._refuse_taken(self.out, files)
            with self.out.folder(FEEDBACK) as feedback:
                self._refuse_taken(feedback, list(names.values()))
                self.out.check_writable()
                feedback.check_writable()
        except OSError as exc:
            raise self._write_error(Path(exc.filename or self.out_dir), exc) from None

    @staticmethod
    def _refuse_taken(folder: OpenFolder, names: Sequence[str]) -> None:
        """Refuse a folder or a link where the batch writes a file."""
        for name in names:
            if folder.kind(name) not in (None, stat.S_IFREG):
                raise UsageError(
                    f"{shown(folder.path / name)} is a folder or a link; the batch writes a "
                    "file there",
                    fix="move it away, or give --out another folder",
                )

    def _write_error(self, path: Path, exc: OSError) -> UsageError:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return UsageError(
                f"{shown(path)} is not a folder (a link or a file is there, put before the "
                "batch or while it graded); the batch writes its outputs in it, and never "
                "through a link",
                fix="move it away, or give --out another folder (nothing graded is lost: "
                "the journal keeps it, and --resume goes on from there)",
            )
        return UsageError(
            f"cannot write {shown(path)}: {exc.strerror or exc}",
            fix="give --out a folder you can write to (nothing graded is lost: the journal "
            "keeps it, and --resume goes on from there)",
        )

    def _read_journal(self) -> None:
        """The journal's entries of this run: each line names the run its first line opened."""
        try:
            text = self._out.read_bytes(self.journal.name).decode("utf-8")
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"cannot read the batch journal {shown(self.journal)}: {exc}"
            ) from None
        try:
            header, entries = read_journal(text, self.key, self.kind.from_json)
            if (
                header.lesson != self.kind.subject
                or header.revision != self.kind.revision
                or header.fingerprint != self.kind.fingerprint
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
        except OldSchema as exc:
            self.note = (
                f"{safe_name(shown(self.journal))} is {exc} (an older lessonkit's): "
                "every file is graded afresh."
            )
            return
        except ValueError:
            self.note = (
                f"{safe_name(shown(self.journal))} is not this batch's journal: "
                "every file is graded afresh."
            )
            return
        self.run_id = header.run
        self.journalled = {entry.path: entry for entry in entries}

    def _keep_unchanged(self, paths: list[Path], digests: dict[str, str]) -> None:
        """Keep a journalled report only for the same bytes (`digests`: each file's sha256
        now, "" for one that cannot be read), graded with one seed."""
        for path in paths:
            relative = self.relative(path)
            if relative not in self.journalled:
                continue
            journalled = self.journalled[relative]
            digest, report = journalled.sha256, journalled.report
            if not digest or digests.get(relative) != digest or report.seed is None:
                continue
            if report.not_graded is not None:
                continue  # the grader failed on it: graded now
            data = journalled.data
            if data is None:  # an entry kept without its bytes: the file holds them
                try:
                    data = read_bytes_in_folder(self.folder, path)
                except LessonkitError:
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
        return relative_to(self.folder, path)

    def journal_entry(self, entry: BatchEntry[R]) -> JournalEntry[R]:
        """`entry` as the journal keeps it (and a gradebook takes it)."""
        try:
            mtime = os.stat(entry.path, follow_symlinks=False).st_mtime
        except OSError:
            mtime = 0.0
        relative = self.relative(entry.path)
        digest = entry.sha256 or ""
        return JournalEntry(self.run_id, relative, digest, mtime, entry.report, entry.data)

    def _append(self, line: str) -> None:
        """One line added to the journal this run made (whatever is at its name now: a link
        put there is never followed), and on disk before the next is graded."""
        assert self._journal_fd is not None, "prepare() makes the journal first"
        data = (line + "\n").encode("utf-8")
        while data:
            data = data[os.write(self._journal_fd, data) :]
        os.fsync(self._journal_fd)

    def _journal(self, entry: BatchEntry[R]) -> None:
        """Journal `entry`: an unreadable file (no sha256) too, read again on --resume, and a
        file the grader failed on, which --resume grades again (a shard's result names it)."""
        if self.journal_problem is not None:
            return
        journalled = self.journal_entry(entry)
        assert self.header is not None, "prepare() writes the header first"
        try:
            self._append(journalled.line(self.key, self.header))
        except OSError as exc:
            self.journal_problem = (
                f"cannot write the journal {safe_name(shown(self.journal))} ({exc.strerror}): "
                "--resume cannot go on from this run"
            )

    def _seal(self, entries: Sequence[BatchEntry[R]]) -> None:
        """Close a shard's journal with its seal, of every entry this batch has: a journal
        that misses one (deleted, or never written) is refused by `merge` (`check_seal`)."""
        if self.journal_problem is not None:
            raise UsageError(
                f"{self.journal_problem}; this shard's result would miss files, so it is not "
                "sealed and `merge` refuses it",
                fix="give --out room and write access, then grade this shard again with --resume",
            )
        assert self.header is not None, "prepare() writes the header first"
        pairs = [(self.relative(e.path), e.sha256 or "") for e in entries]
        try:
            self._append(JournalSeal.of(self.header, pairs).line(self.key))
        except OSError as exc:
            raise self._write_error(self.journal, exc) from None

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
        self, paths: list[Path], on_report: OnEntry[R] | None = None
    ) -> tuple[BatchEntry[R], ...]:
        """Every submission's entry, in path order: journalled ones kept, the rest graded by
        the kind's grade-many function on one seed; each one graded now is journalled, then
        handed to `on_report`."""
        todo = self.todo(paths)
        items = read_items([p for p in todo if p not in self.unlisted], self.folder)
        if items and self.seed is None:
            self.seed = self.kind.new_seed()

        def finished(entry: BatchEntry[R]) -> None:
            self._journal(entry)
            self.graded_now += 1
            if on_report is not None:
                on_report(entry)

        unlisted = []
        for path in todo:  # a folder that could not be listed: its row says why
            if path in self.unlisted:
                report = self.kind.unreadable(path, self.unlisted[path], self.seed)
                unlisted.append(BatchEntry(path, report))
                finished(unlisted[-1])
        graded = self.kind.grade(items, self.seed, finished) if items else ()
        self.graded_here = len(graded)
        by_path = {self.relative(e.path): e for e in (*graded, *unlisted)}
        entries = []
        for path in paths:
            relative = self.relative(path)
            entry = by_path.get(relative)
            if entry is None:
                entry = self.done.get(relative) or self.known[relative]
            entries.append(entry)
        return tuple(entries)

    def summary(self, entries: Sequence[BatchEntry[R]]) -> dict:
        """The batch's JSON output."""
        return self.kind.summary(entries, self.seed)

    def write_outputs(
        self, entries: Sequence[BatchEntry[R]], summary: dict | None = None
    ) -> list[Path]:
        """The outputs (`summary`: the JSON one, where the caller has built it already);
        then the journal is no longer needed, except by a shard, which seals it and keeps it
        as its result for `lessonkit merge`."""
        relatives = [self.relative(e.path) for e in entries]
        csv = None if self.kind.csv is None else self.kind.csv(entries)
        summary = self.summary(entries) if summary is None else summary
        try:
            reports = [e.report for e in entries]
            written = write_results(self._out, self.stem, reports, relatives, summary, csv)
        except OSError as exc:
            raise self._write_error(Path(exc.filename or self.out_dir), exc) from None
        if self.shard is not None:  # sealed even with files not graded: it names them
            self._seal(entries)
            try:  # the journal this run wrote, whatever is at its name now
                self._out.write(self.shard_path.name, self._journal_text(), private=True)
            except OSError as exc:
                raise self._write_error(self.shard_path, exc) from None
            written = [*written[:-1], self.shard_path, self.feedback]
        if not not_graded(entries):  # else the journal stays: --resume grades those again
            with contextlib.suppress(OSError):
                self._out.unlink(self.journal.name)
        return written

    def _journal_text(self) -> bytes:
        """Everything this run wrote to its journal, read back through the file it made."""
        assert self._journal_fd is not None, "prepare() makes the journal first"
        os.lseek(self._journal_fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(self._journal_fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)  # at the end again: a line appended now would go there
