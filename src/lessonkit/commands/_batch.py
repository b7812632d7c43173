"""`lessonkit check --batch`: an instructor's run over a folder of submissions.

Each result is appended to a journal the moment it is known (so Ctrl-C loses nothing and
`--resume` skips what is graded); the CSV, the JSON and one Markdown feedback file per
submission are written only when every submission is graded, each to a temporary name and
then renamed, so no submission's child can see or change them half-written. While the
batch runs a terminal shows a progress bar; without one, a line per finished submission.

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
import json
import os
import re
import shlex
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

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
from lessonkit.grade.journal import (
    JournalEntry,
    JournalHeader,
    JournalKey,
    NotVerified,
    Shard,
    batch_id,
    read_journal,
)
from lessonkit.grade.report import Scoring, summary_csv, summary_json
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import safe_name
from lessonkit.run.isolation import Isolation
from lessonkit.run.limits import Limits

_SIMPLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def feedback_name(relative: str, hashed: bool = False) -> str:
    """`alice.py` -> `alice.py.md`; any other path -> a readable stem and its sha256.

    A one-part name of safe characters keeps its name; every other path (folders, spaces,
    non-ASCII, over 200 characters), or one `hashed` because its name differs from another
    only in case, gets the flattened, cut stem plus the first 16 hex digits of the sha256 of
    its POSIX path. Kept names end in .py or .ipynb, hashed ones in hex digits: one
    submission's feedback can never take another's name.
    """
    if not hashed and _SIMPLE.fullmatch(relative):
        return relative + ".md"
    digest = hashlib.sha256(os.fsencode(relative)).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", relative.replace("/", "__"))[:120]
    return f"{stem}--{digest}.md"


def feedback_names(relatives: list[str]) -> dict[str, str]:
    """Each relative path's feedback file name; distinct even on a case-blind file system."""
    names = {r: feedback_name(r) for r in relatives}
    folded: dict[str, list[str]] = {}
    for relative, name in names.items():
        folded.setdefault(name.casefold(), []).append(relative)
    for group in folded.values():
        if len(group) > 1:
            names.update({r: feedback_name(r, hashed=True) for r in group})
    if len({n.casefold() for n in names.values()}) != len(names):
        raise UsageError(
            "two submissions' feedback files would have the same name",
            fix="rename one of the submissions, then grade again",
        )
    return names


def write_results(
    out_dir: Path,
    stem: str,
    entries: Sequence[BatchEntry],
    relatives: Sequence[str],
    scoring: Scoring,
    summary: dict,
) -> list[Path]:
    """A batch's outputs in `out_dir`: `stem`.csv, `stem`.json and a feedback file per entry.

    `relatives` are the entries' paths below the batch folder; each file is written to a
    temporary name and renamed. OSError names the file that could not be written.
    """

    def write(path: Path, text: str) -> None:
        try:
            write_atomically(path, text)
        except OSError as exc:  # named by the file it was for, not by its temporary name
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc

    names = feedback_names(list(relatives))
    for entry, relative in zip(entries, relatives, strict=True):
        write(out_dir / "feedback" / names[relative], entry.report.feedback_markdown())
    write(out_dir / f"{stem}.csv", summary_csv(entries, scoring))
    write(out_dir / f"{stem}.json", json.dumps(summary, indent=2) + "\n")
    return [out_dir / f"{stem}.csv", out_dir / f"{stem}.json", out_dir / "feedback"]


class BatchProgress:
    """A batch's progress: a bar on a terminal, else a line per finished file (a log)."""

    def __init__(
        self,
        out: Console,
        total: int,
        done: int = 0,
        failures: int = 0,
        name: Callable[[Path], str] = lambda path: path.name,
    ):
        self.out, self.total, self.name = out, total, name
        self.done, self.failures = done, failures
        self.bar: Progress | None = None
        if out.is_terminal:
            self.bar = Progress(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failures]} not passed"),
                TimeRemainingColumn(),
                console=out,
                transient=True,
            )
            self.task = self.bar.add_task("grading", total=total, completed=done, failures=failures)

    def __enter__(self) -> BatchProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def finished(self, entry: BatchEntry) -> None:
        self.done += 1
        self.failures += not entry.report.passed
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, failures=self.failures)
            return
        mark = "pass" if entry.report.passed else "not passed"
        name = safe_name(self.name(entry.path))
        self.out.print(Text(f"[{self.done}/{self.total}] {name}: {mark}"), soft_wrap=True)


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

    def reuse(self, entries: Sequence[BatchEntry]) -> None:
        """Show these files as graded before (the gradebook holds their bytes), unregraded."""
        self.known = {self._relative(e.path): e for e in entries}

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
            found.append((self._relative(path), digest))
        return found

    def _check_outputs(self, paths: list[Path]) -> None:
        self.names = names = feedback_names([self._relative(p) for p in paths])
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
            relative = self._relative(path)
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

    def _relative(self, path: Path) -> str:
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
        relative = self._relative(entry.path)
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

    def grade(
        self,
        paths: list[Path],
        *,
        jobs: int | None,
        limits: Limits,
        isolation: Isolation,
        progress: Console,
        dask: str | None = None,
        allow_unsandboxed: bool = False,
    ) -> tuple[BatchEntry, ...]:
        """Every submission's entry, in path order: journalled ones kept, the rest graded
        here, or on the Dask cluster at `dask` (`grade.distributed`)."""
        if self.note is not None:
            progress.print(Text(self.note, style="yellow"))
        todo = [
            p for p in paths if (r := self._relative(p)) not in self.done and r not in self.known
        ]
        kept = len(paths) - len(todo)
        if self.known:
            progress.print(
                Text(
                    f"{len(self.known)} unchanged since their last grading (shown as graded "
                    f"then); {len(todo)} new."
                )
            )
        failures = sum(not e.report.passed for e in (*self.done.values(), *self.known.values()))
        started = time.monotonic()
        shown_name = self._relative

        def on_report(entry: BatchEntry) -> None:
            self._journal(entry)
            self.graded_now += 1
            bar.finished(entry)

        bar = BatchProgress(progress, len(paths), kept, failures, shown_name)
        with bar:
            unlisted = []
            for path in todo:  # a folder that could not be listed: its row says why
                if path in self.unlisted:
                    problem = self.unlisted[path]
                    unlisted.append(BatchEntry(path, unreadable(self.lesson, path, problem, 0.0)))
                    on_report(unlisted[-1])
            todo = [p for p in todo if p not in self.unlisted]
            if dask is not None:
                from lessonkit.grade.distributed import grade_on_dask
                from lessonkit.grade.inputs import new_seed

                self.seed = new_seed() if self.seed is None else self.seed
                graded = grade_on_dask(
                    self.lesson,
                    read_items(todo, self.folder),
                    address=dask,
                    seed=self.seed,
                    limits=limits,
                    allow_unsandboxed=allow_unsandboxed,
                    on_report=on_report,
                )
            else:
                graded = grade_many(
                    self.lesson,
                    read_items(todo, self.folder),
                    jobs=jobs,
                    limits=limits,
                    on_report=on_report,
                    isolation=isolation,
                    seed=self.seed,
                )
        if graded:
            self.seed = graded[0].report.seed
        by_path = {self._relative(e.path): e for e in (*graded, *unlisted)}
        entries = []
        for path in paths:
            relative = self._relative(path)
            entry = by_path.get(relative)
            if entry is None:
                entry = self.done.get(relative) or self.known[relative]
            entries.append(entry)
        if self.journal_problem is not None:
            progress.print(Text(self.journal_problem, style="yellow"))
        if self.done:
            progress.print(f"Kept {len(self.done)} result(s) from the interrupted batch.")
        progress.print(f"Graded {len(graded)} file(s) in {time.monotonic() - started:.1f} s.")
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
        relatives = [self._relative(e.path) for e in entries]
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
