"""What a batch shows while it runs: a bar on a terminal, else a line per finished file.

The batch itself (journal, resume, shards, outputs) is `grade.batches.batch.BatchRun`; this
module only shows its progress and says what it kept and how long it took.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from lessonkit.commands._common import quoted
from lessonkit.grade.batches import BatchEntry, BatchRun
from lessonkit.grade.judging import GradeReport
from lessonkit.lesson.text import safe_name


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


def grade_with_progress(
    run: BatchRun[GradeReport], paths: list[Path], progress: Console
) -> tuple[BatchEntry[GradeReport], ...]:
    """`run.grade(paths)` with its progress shown on `progress`, then what it kept."""
    if run.note is not None:
        progress.print(Text(run.note, style="yellow"))
    todo = run.todo(paths)
    if run.known:
        progress.print(
            Text(
                f"{len(run.known)} unchanged since their last grading (shown as graded "
                f"then); {len(todo)} new."
            )
        )
    started = time.monotonic()
    bar = BatchProgress(
        progress, len(paths), len(paths) - len(todo), run.failures_kept(), run.relative
    )
    with bar:
        entries = run.grade(paths, on_report=bar.finished)
    say_kept(run, progress)
    elapsed = time.monotonic() - started
    progress.print(f"Graded {run.graded_here} file(s) in {elapsed:.1f} s.")
    return entries


def say_kept(run: BatchRun, progress: Console) -> None:
    """What the journal could not keep, and what was kept from an interrupted batch."""
    if run.journal_problem is not None:
        progress.print(Text(run.journal_problem, style="yellow"))
    if run.done:
        progress.print(f"Kept {len(run.done)} result(s) from the interrupted batch.")


def say_interrupted(run: BatchRun, total: int, argv: Sequence[str], out: Console) -> int:
    """After Ctrl-C: how much the journal keeps, and the command that goes on from there;
    the exit status (130)."""
    kept = len(run.done) + run.graded_now
    out.print(
        Text(
            f"Interrupted: {kept} of {total} file(s) graded and kept in the journal "
            f"{safe_name(quoted(run.journal))}. Go on from there with:\n  "
            f"{safe_name(run.resume_command(argv))}"
        )
    )
    return 130
