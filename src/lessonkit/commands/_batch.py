"""What a batch shows while it runs: a bar on a terminal, else a line per finished file.

The batch itself (folder, settings, journal, resume, shards, outputs) is
`grade.batches.lifecycle.grade_folder`; this module reads the options every batch command
has, shows the batch's progress and says what it kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from lessonkit.commands._common import console, limits_from, quoted
from lessonkit.grade.batches import (
    BatchEntry,
    BatchKind,
    BatchOutcome,
    BatchPreview,
    FolderBatch,
    grade_folder,
    relative_to,
)
from lessonkit.lesson.text import safe_name
from lessonkit.settings import GradingSettings

LESSON_MARKS = ("pass", "not passed")
"""How a finished file's line says whether it passed."""


def folder_batch(args: argparse.Namespace, **more: Any) -> FolderBatch:
    """The batch every batch command's options ask for alike: `--batch`, `--out`, `--key`,
    `--resume`, the limits, `--run-submissions-as-me`, and the command line a resume
    repeats; `more` are the command's own."""
    return FolderBatch(
        folder=Path(args.batch),
        out=Path(args.out) if args.out else None,
        key=args.key,
        resume=args.resume,
        limits=limits_from(args),
        allow_unsandboxed=args.run_submissions_as_me,
        argv=tuple(getattr(args, "argv", sys.argv[1:])),
        **more,
    )


def grade_shown(
    batch: FolderBatch,
    kind_for: Callable[[GradingSettings], BatchKind],
    marks: tuple[str, str] = LESSON_MARKS,
) -> BatchOutcome:
    """`grade_folder` with its progress shown, then what it kept said; after Ctrl-C, what the
    journal keeps and the command that goes on from there."""
    out = console(stderr=True)
    with BatchProgress(out, name=lambda path: relative_to(batch.folder, path), marks=marks) as bar:
        outcome = grade_folder(batch, kind_for, os.environ, bar.finished, bar.started)
    if outcome.status == "interrupted":
        out.print(
            Text(
                f"Interrupted: {outcome.journalled} of {outcome.total} file(s) graded and kept "
                f"in the journal {safe_name(quoted(outcome.journal))}. Go on from there with:"
                f"\n  {safe_name(outcome.resume_command)}"
            )
        )
        return outcome
    if outcome.journal_problem is not None:  # --resume cannot go on from this run
        out.print(Text(outcome.journal_problem, style="yellow"))
    if outcome.resumed:
        out.print(f"Kept {outcome.resumed} result(s) from the interrupted batch.")
    return outcome


class BatchProgress:
    """A batch's progress: a bar on a terminal, else a line per finished file (a log).

    `started` (a batch's `on_start`) says what is known before grading and starts it.
    """

    def __init__(
        self,
        out: Console,
        *,
        name: Callable[[Path], str] = lambda path: path.name,
        marks: tuple[str, str] = LESSON_MARKS,
    ):
        self.out, self.total, self.name, self.marks = out, 0, name, marks
        self.done, self.failures = 0, 0
        self.bar: Progress | None = None

    def __enter__(self) -> BatchProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def started(self, start: BatchPreview) -> None:
        """What the batch knows before grading: its notes, the files reused, then the bar."""
        for note in (start.gradebook_note, start.isolation_note, start.journal_note):
            if note is not None:
                self.out.print(Text(note, style="yellow"))
        if start.reused:
            self.out.print(
                Text(
                    f"{start.reused} unchanged since their last grading (shown as graded "
                    f"then); {start.todo} new."
                )
            )
        self.total, self.done = start.total, start.total - start.todo
        self.failures = start.failures_kept
        self._start()

    def _start(self) -> None:
        if not self.out.is_terminal:
            return
        self.bar = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failures]} not passed"),
            TimeRemainingColumn(),
            console=self.out,
            transient=True,
        )
        self.task = self.bar.add_task(
            "grading", total=self.total, completed=self.done, failures=self.failures
        )
        self.bar.start()

    def finished(self, entry: BatchEntry) -> None:
        self.done += 1
        self.failures += not entry.report.passed
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, failures=self.failures)
            return
        mark = self.marks[0] if entry.report.passed else self.marks[1]
        name = safe_name(self.name(entry.path))
        self.out.print(Text(f"[{self.done}/{self.total}] {name}: {mark}"), soft_wrap=True)


def say_not_graded(outcome: BatchOutcome, out: Console) -> int:
    """The files the grader failed on (no grade, kept out of the gradebook) and the command
    that grades them again; the exit status (1 when there are any, else 0)."""
    failed = outcome.not_graded
    if not failed:
        return 0
    lines = [f"Not graded: grader failure on {len(failed)} file(s), kept out of every count:"]
    lines += [f"  {safe_name(e.report.file)}: {e.report.not_graded}" for e in failed]
    lines.append(f"Grade them again with:\n  {safe_name(outcome.resume_command or '')}")
    out.print(Text("\n".join(lines), style="yellow"))
    return 1
