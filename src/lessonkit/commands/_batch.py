"""`lessonkit check --batch`: an instructor's run over a folder of submissions.

Each result is appended to a journal the moment it is known (so Ctrl-C loses nothing and
`--resume` skips what is graded); the CSV, the JSON and one Markdown feedback file per
submission are written only when every submission is graded, each to a temporary name and
then renamed, so no submission's child can see or change them half-written. While the
batch runs a terminal shows a progress bar; without one, a line per finished submission.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from lessonkit.errors import UsageError
from lessonkit.grade.batch import BatchEntry, grade_many
from lessonkit.grade.report import Scoring, summary_csv, summary_json
from lessonkit.grade.results import GradeReport
from lessonkit.grade.sandbox import Sandbox
from lessonkit.model import Lesson
from lessonkit.text import safe_text


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def feedback_name(relative: Path) -> str:
    """`group-a/alice.ipynb` -> `group-a__alice.ipynb.md`: one flat, safe file name."""
    name = "__".join(relative.parts)
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:200] + ".md"


class BatchRun:
    """One batch: its journal, its seed, and its outputs in `out_dir`."""

    def __init__(
        self, lesson: Lesson, folder: Path, out_dir: Path, *, resume: bool, seed: int | None
    ):
        self.lesson = lesson
        self.folder = folder
        self.out_dir = out_dir
        self.scoring = Scoring.of(lesson)
        self.stem = f"check-{lesson.meta.id}"
        self.journal = out_dir / f".{self.stem}.journal.jsonl"
        self.done: dict[str, GradeReport] = {}
        self.seed = seed
        if resume:
            self._read_journal()
        elif self.journal.exists():
            self.journal.unlink()

    def _read_journal(self) -> None:
        try:
            lines = self.journal.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read the batch journal {self.journal}: {exc}") from None
        for line in lines:
            try:
                data = json.loads(line)
                report = GradeReport.from_json(data["report"])
                relative = str(data["path"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by the interruption
            self.done[relative] = report
            if self.seed is None:
                self.seed = report.seed
            elif report.seed != self.seed:
                raise UsageError(
                    f"the interrupted batch used input seed {report.seed}, not {self.seed}",
                    fix=f"resume with --seed {report.seed}, or start afresh without --resume",
                )

    def _relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.folder).as_posix()
        except ValueError:
            return path.as_posix()

    def _journal(self, entry: BatchEntry) -> None:
        record = {"path": self._relative(entry.path), "report": entry.report.to_json()}
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with self.journal.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")
            file.flush()
            os.fsync(file.fileno())

    def grade(
        self,
        paths: list[Path],
        *,
        jobs: int | None,
        timeout: float,
        sandbox: Sandbox | None,
        cache: Path | None,
        progress: Console,
    ) -> tuple[BatchEntry, ...]:
        """Every submission's entry, in path order: journalled ones kept, the rest graded."""
        todo = [p for p in paths if self._relative(p) not in self.done]
        kept = len(paths) - len(todo)
        failures = sum(not r.passed for r in self.done.values())
        started = time.monotonic()

        def line(entry: BatchEntry, done: int) -> None:
            mark = "pass" if entry.report.passed else "not passed"
            name = safe_text(self._relative(entry.path))
            progress.print(Text(f"[{done}/{len(paths)}] {name}: {mark}"), soft_wrap=True)

        if progress.is_terminal:
            bar = Progress(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failures]} not passed"),
                TimeRemainingColumn(),
                console=progress,
                transient=True,
            )
        else:
            bar = None
        counter = {"done": kept, "failures": failures}

        def on_report(entry: BatchEntry) -> None:
            self._journal(entry)
            counter["done"] += 1
            counter["failures"] += not entry.report.passed
            if bar is not None:
                bar.update(task, completed=counter["done"], failures=counter["failures"])
            else:
                line(entry, counter["done"])

        with bar or contextlib.nullcontext():
            if bar is not None:
                task = bar.add_task("grading", total=len(paths), completed=kept, failures=failures)
            graded = grade_many(
                self.lesson,
                todo,
                jobs=jobs,
                timeout=timeout,
                on_report=on_report,
                sandbox=sandbox,
                seed=self.seed,
                cache=cache,
            )
        if graded:
            self.seed = graded[0].report.seed
        by_path = {self._relative(e.path): e for e in graded}
        entries = []
        for path in paths:
            relative = self._relative(path)
            entry = by_path.get(relative)
            entries.append(entry if entry is not None else BatchEntry(path, self.done[relative]))
        if kept:
            progress.print(f"Kept {kept} result(s) from the interrupted batch.")
        progress.print(f"Graded {len(graded)} file(s) in {time.monotonic() - started:.1f} s.")
        return tuple(entries)

    def summary(self, entries: tuple[BatchEntry, ...]) -> dict:
        return summary_json(entries, self.lesson.meta.id, self.scoring)

    def write_outputs(self, entries: tuple[BatchEntry, ...]) -> list[Path]:
        """The CSV, the JSON and the feedback files; then the journal is no longer needed."""
        csv_path = self.out_dir / f"{self.stem}.csv"
        json_path = self.out_dir / f"{self.stem}.json"
        feedback = self.out_dir / "feedback"
        for entry in entries:
            relative = Path(self._relative(entry.path))
            write_atomically(feedback / feedback_name(relative), entry.report.feedback_markdown())
        write_atomically(csv_path, summary_csv(entries, self.scoring))
        write_atomically(json_path, json.dumps(self.summary(entries), indent=2) + "\n")
        with contextlib.suppress(FileNotFoundError):
            self.journal.unlink()
        return [csv_path, json_path, feedback]
