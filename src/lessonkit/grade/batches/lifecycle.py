"""A batch is one call: `grade_folder(batch, kind_for, environ, on_entry)` -> a `BatchOutcome`.

Whatever the kind (a lesson's `check --batch`, a phase's `project --batch`), the steps are
the same and happen here, in this order: the folder is found and listed, the grading
settings chosen and the kind made for them, the outputs are refused inside the submissions
folder, the grading key is read, the gradebook (if any) is opened, every output path is
checked and the journal read (`--resume`) and started afresh, files the gradebook graded
before are reused, the rest graded and journalled as they come, the gradebook keeps the
gradings, and the outputs are written (a shard seals its journal). Ctrl-C while grading is
an outcome too: what the journal keeps and the command that goes on from there. The
commands only parse their options and render the outcome; `grade_kept` grades a gradebook's
kept bytes the same way, nothing written.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from lessonkit.errors import UsageError, shown
from lessonkit.grade.batches.batch_run import BatchRun
from lessonkit.grade.batches.folder import SUFFIXES, BatchItem, submissions_in
from lessonkit.grade.batches.journal import JournalEntry, R, Shard
from lessonkit.grade.batches.kind import BatchKind, OnEntry, not_graded
from lessonkit.grade.model import BatchEntry
from lessonkit.grade.provenance.grading_key import default_key_path, grading_key
from lessonkit.lesson.text import safe_name
from lessonkit.run.limits import DEFAULT_LIMITS, Limits
from lessonkit.settings import GradingSettings, grading_settings

K = TypeVar("K")
"""What a gradebook says it kept (the command renders it)."""

BatchStatus = Literal["written", "interrupted", "graded"]
"""`written`: every file graded and the outputs written; `interrupted`: Ctrl-C while
grading, the journal keeps what was graded; `graded`: kept bytes graded again, nothing
written (the caller keeps the entries)."""


@dataclass(frozen=True)
class Reuse(Generic[R]):
    """What a gradebook already holds a grading of: those files are shown, not graded."""

    entries: tuple[BatchEntry[R], ...]
    note: str | None = None  # said before grading (gradings of another fingerprint)


class BatchGradebook(Protocol[R, K]):
    """A gradebook a batch keeps its gradings in (`check --batch --gradebook`)."""

    def reusable(self, paths: Sequence[Path], fingerprint: str) -> Reuse[R]: ...

    def keep(self, entries: Sequence[JournalEntry[R]], fingerprint: str) -> K: ...


@dataclass(frozen=True)
class FolderBatch(Generic[R, K]):
    """A folder a command grades as one batch (`grade_folder`): what it holds, how its files
    run, where the outputs go, and how it goes on from an earlier batch."""

    folder: Path  # --batch: the submissions, data, never written to
    holds: str  # what the folder holds, as its messages name it ("submissions", "scripts")
    suffixes: tuple[str, ...] = SUFFIXES  # the files graded
    limits: Limits = DEFAULT_LIMITS
    allow_unsandboxed: bool = False  # --run-submissions-as-me
    elsewhere: bool = False  # graded on a Dask cluster, whose machines check their own sandbox
    compile_cache: bool = True
    # people's work no sandbox is shown, beyond what every batch guards (`grade_folder`)
    guarded: tuple[Path | str | None, ...] = ()
    out: Path | None = None  # --out; None: the kind's stem, in the current folder
    key: str | None = None
    resume: bool = False
    seed: int | None = None
    shard: Shard | None = None
    argv: tuple[str, ...] = field(default_factory=lambda: tuple(sys.argv[1:]))
    gradebook: Callable[[], BatchGradebook[R, K]] | None = None  # opened once outputs are safe


@dataclass(frozen=True)
class KeptBytes:
    """Bytes a gradebook kept, graded again (`lessonkit regrade`): no folder is read and
    nothing is written, so there is no journal and no output; the entries are the outcome."""

    items: tuple[BatchItem, ...]
    seed: int | None = None


@dataclass(frozen=True)
class BatchPreview:
    """What is known before grading starts: said, then the progress starts from here."""

    total: int  # rows of the batch
    todo: int  # of those, graded now
    resumed: int  # kept from the interrupted batch's journal
    reused: int  # unchanged since the gradebook kept them
    failures_kept: int  # of the kept and the reused, those that did not pass
    journal_note: str | None  # the journal is not resumed, and why
    gradebook_note: str | None
    isolation_note: str | None = None  # how the files are kept apart


@dataclass(frozen=True)
class BatchOutcome(Generic[R, K]):
    """A batch, done or interrupted: everything its command shows."""

    status: BatchStatus
    entries: tuple[BatchEntry[R], ...]  # every row, in path order (none when interrupted)
    summary: dict[str, Any]  # the JSON output, as written (empty when interrupted)
    written: tuple[Path, ...]  # the outputs (none when interrupted)
    seed: int | None
    total: int
    resumed: int  # kept from the interrupted batch's journal
    reused: int  # unchanged since the gradebook kept them
    graded_now: int  # graded and journalled by this run
    graded_here: int  # of those, files a grading child ran
    seconds: float  # grading's wall time
    journal: Path | None  # None for kept bytes, which are not journalled
    journal_problem: str | None  # the journal could not be written: --resume cannot go on
    resume_command: str | None  # the command that goes on from where this run stopped
    kept: K | None = None  # what the gradebook kept

    @property
    def not_graded(self) -> tuple[BatchEntry[R], ...]:
        """Files the grader failed on: no grade, left for `--resume` (or `regrade`)."""
        return not_graded(self.entries)

    @property
    def journalled(self) -> int:
        """Files the journal keeps: what `--resume` would not grade again."""
        return self.resumed + self.graded_now


def refuse_inside(out_dir: Path, folder: Path) -> None:
    """The outputs never go inside the submissions folder: what is there is not trusted."""
    try:
        inside, submissions = out_dir.resolve(), folder.resolve()
    except (OSError, RuntimeError):  # a link loop: writing there fails later, with a message
        return
    if inside == submissions or submissions in inside.parents:
        raise UsageError(
            f"the output folder {safe_name(shown(out_dir))} is inside the submissions folder "
            f"{safe_name(shown(folder))}; a batch never writes there, and a journal or output "
            "found there could have been planted",
            fix="give --out a folder outside it, or leave --out out to write to "
            "./check-LESSON/ in the current folder",
        )


def grade_folder(
    batch: FolderBatch[R, K],
    kind_for: Callable[[GradingSettings], BatchKind[R]],
    environ: Mapping[str, str],
    on_entry: OnEntry[R] | None = None,
    on_start: Callable[[BatchPreview], None] | None = None,
) -> BatchOutcome[R, K]:
    """Grade a folder as one batch, of the kind `kind_for` makes for the grading settings
    chosen (`environ`'s switches); `on_start` is told what is known before grading,
    `on_entry` each row graded now, in the order they finish.

    Raises:
        UsageError: the folder, the settings, the shard, an output, the key, the gradebook
            or the journal cannot be used (before any grading), or the gradebook cannot keep
            the gradings (the journal keeps them).
    """
    folder = batch.folder
    if not folder.is_dir():
        raise UsageError(
            f"{folder} is not a folder", fix=f"give the folder that holds the {batch.holds}"
        )
    settings = grading_settings(
        environ,
        limits=batch.limits,
        batch=True,
        allow_unsandboxed=batch.allow_unsandboxed or batch.elsewhere,
        compile_cache=batch.compile_cache,
    ).guarding((folder, batch.out, batch.key or default_key_path(environ), *batch.guarded))
    listing = submissions_in(folder)
    unlisted = dict(listing.unlisted)  # a folder that could not be listed: a row of its own
    paths = [p for p in listing.entries if p.suffix in batch.suffixes or p in unlisted]
    if not paths:
        raise UsageError(f"{folder} holds no {' or '.join(batch.suffixes)} files")
    if batch.shard is not None:
        if batch.seed is None:
            raise UsageError(
                f"shard {batch.shard} needs --seed, so that every shard grades on the same "
                "input sets",
                fix="give every shard the same --seed N",
            )
        if batch.gradebook is not None:
            raise UsageError(
                "a shard writes its results to --out, never to a gradebook",
                fix="grade the shards, then `lessonkit merge SHARD_OUT... --out DIR "
                "--gradebook FILE`",
            )
        paths = [p for p in paths if batch.shard.holds(p.relative_to(folder).as_posix())]
    kind = kind_for(settings)
    out_dir = batch.out or Path(kind.stem)
    refuse_inside(out_dir, folder)
    key = grading_key(batch.key, not_inside=(folder, out_dir))
    gradebook = batch.gradebook() if batch.gradebook is not None else None
    run = BatchRun(
        kind,
        folder,
        out_dir,
        resume=batch.resume,
        seed=batch.seed,
        key=key,
        listing=listing,
        shard=batch.shard,
    )
    note = None if batch.elsewhere else settings.isolation.note
    try:
        return _run(kind, batch, paths, run, gradebook, note, on_entry, on_start)
    finally:
        run.close()


def _run(
    kind: BatchKind[R],
    batch: FolderBatch[R, K],
    paths: list[Path],
    run: BatchRun[R],
    gradebook: BatchGradebook[R, K] | None,
    note: str | None,
    on_entry: OnEntry[R] | None,
    on_start: Callable[[BatchPreview], None] | None,
) -> BatchOutcome[R, K]:
    """The batch's steps from checking the outputs on, with `run` held open by the caller;
    `note` says how the files are kept apart."""
    run.prepare(paths)
    reuse = gradebook.reusable(paths, kind.fingerprint) if gradebook is not None else None
    if reuse is not None:
        run.reuse(reuse.entries)
    if on_start is not None:
        on_start(
            BatchPreview(
                total=len(paths),
                todo=len(run.todo(paths)),
                resumed=len(run.done),
                reused=len(run.known),
                failures_kept=run.failures_kept(),
                journal_note=run.note,
                gradebook_note=None if reuse is None else reuse.note,
                isolation_note=note,
            )
        )
    started = time.monotonic()
    try:
        entries = run.grade(paths, on_report=on_entry)
    except KeyboardInterrupt:
        return _outcome(run, batch, paths, "interrupted", (), {}, (), time.monotonic() - started)
    seconds = time.monotonic() - started
    # The gradebook first: until the outputs are written the journal is kept, so a gradebook
    # that cannot be written loses nothing (`--resume` goes on from the journal).
    kept = None
    if gradebook is not None:
        try:
            graded = [e for e in entries if e.report.not_graded is None]
            kept = gradebook.keep([run.journal_entry(e) for e in graded], kind.fingerprint)
        except UsageError as exc:
            raise UsageError(
                f"{exc.message}; the {len(entries)} graded file(s) are kept in the journal "
                f"{safe_name(shlex.quote(shown(run.journal)))}",
                fix=f"{exc.fix or 'mend the gradebook'}, then go on with: "
                f"{safe_name(run.resume_command(batch.argv))}",
            ) from None
    summary = run.summary(entries)
    written = run.write_outputs(entries, summary)
    return _outcome(run, batch, paths, "written", entries, summary, tuple(written), seconds, kept)


def _outcome(
    run: BatchRun[R],
    batch: FolderBatch[R, K],
    paths: list[Path],
    status: BatchStatus,
    entries: tuple[BatchEntry[R], ...],
    summary: dict[str, Any],
    written: tuple[Path, ...],
    seconds: float,
    kept: K | None = None,
) -> BatchOutcome[R, K]:
    return BatchOutcome(
        status=status,
        entries=entries,
        summary=summary,
        written=written,
        seed=run.seed,
        total=len(paths),
        resumed=len(run.done),
        reused=len(run.known),
        graded_now=run.graded_now,
        graded_here=run.graded_here,
        seconds=seconds,
        journal=run.journal,
        journal_problem=run.journal_problem,
        resume_command=run.resume_command(batch.argv),
        kept=kept,
    )


def grade_kept(
    kind: BatchKind[R],
    kept: KeptBytes,
    on_entry: OnEntry[R] | None = None,
    on_start: Callable[[BatchPreview], None] | None = None,
) -> BatchOutcome[R, Any]:
    """Kept bytes graded on one seed, each as a folder's file would be; nothing written."""
    items = kept.items
    if on_start is not None:
        on_start(BatchPreview(len(items), len(items), 0, 0, 0, None, None))
    seed = kind.new_seed() if kept.seed is None and items else kept.seed
    started = time.monotonic()
    entries = kind.grade(items, seed, on_entry or (lambda entry: None)) if items else ()
    return BatchOutcome(
        status="graded",
        entries=tuple(entries),
        summary={},
        written=(),
        seed=seed,
        total=len(items),
        resumed=0,
        reused=0,
        graded_now=len(entries),
        graded_here=len(entries),
        seconds=time.monotonic() - started,
        journal=None,
        journal_problem=None,
        resume_command=None,
    )
