"""Reports for people (rich tables) and for tools (JSON, CSV); rendering only, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text

from lessonkit.grade.batches.kind import BatchEntry
from lessonkit.grade.judging.results import (
    ERROR,
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    SCHEMA,
    GradeReport,
    not_graded_words,
)
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.text import csv_text, number_cell, safe_name

NOT_GRADED = "not graded"  # a file's mark, never a task's status (`GradeReport.not_graded`)

_MARKS = {
    PASSED: ("✓ passed", "bold green"),
    FAILED: ("✗ failed", "bold red"),
    NOT_ATTEMPTED: ("○ not attempted", "yellow"),
    ERROR: ("! error", "bold magenta"),
    NOT_GRADED: ("? not graded", "yellow"),  # the grader failed on the file: no verdict
}


def status_text(status: str) -> Text:
    label, style = _MARKS.get(status, (status, ""))
    return Text(label, style=style)


def status_mark(status: str) -> Text:
    """The status's symbol alone (✓ ✗ ○ !), for a table with a column per task."""
    label, style = _MARKS.get(status, (status, ""))
    return Text(label.split(" ", 1)[0], style=style)


def _feedback(message: str, hint: str | None) -> Text:
    text = Text(message)
    if hint:
        text.append("\nHint: ", style="bold cyan")
        text.append(hint)
    return text


def task_table(report: GradeReport) -> Table:
    title = f"{report.lesson} · {safe_name(report.file)}"
    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("Task", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Feedback", overflow="fold")
    for task in report.tasks:
        hint = task.hint if task.status in (FAILED, ERROR) else None
        title = f"{task.title} (optional)" if task.optional else task.title
        table.add_row(Text(title), status_text(task.status), _feedback(task.message, hint))
    return table


def prerequisites_view(report: GradeReport) -> Text | Table:
    """One line when every step and experiment holds; a table of those that do not."""
    failing = [p for p in report.prerequisites if p.status != PASSED]
    if not report.prerequisites:
        return Text("")
    if not failing:
        return Text(
            f"✓ The {len(report.prerequisites)} steps and experiments the tasks build on hold.",
            style="green",
        )
    table = Table(title="Steps and experiments the tasks build on", title_justify="left")
    table.add_column("Cell", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Feedback", overflow="fold")
    for item in failing:
        table.add_row(Text(item.name), status_text(item.status), Text(item.message))
    return table


def summary_line(report: GradeReport) -> Text:
    seconds = f"{report.seconds:.1f} s"
    said = report.tally.words(all_passed=report.passed)
    if report.passed:
        return Text(f"{said} in {seconds}.", style="bold green")
    failed = [t for t in report.tasks if t.optional and not t.counts_as_passed]
    if failed:
        names = ", ".join(f'"{t.title}"' for t in failed)
        said += (
            f"; the optional {'tasks' if len(failed) > 1 else 'task'} {names} "
            f"{'are' if len(failed) > 1 else 'is'} attempted but not right yet, which fails the "
            "check: fix it, or put back its todo(...) to leave it out"
        )
    return Text(f"{said} ({seconds}).", style="bold")


def review_view(report: GradeReport) -> Text:
    """Where the file reaches into the grader: the instructor reads it, whatever the verdict."""
    if not report.review:
        return Text("")
    lines = "\n".join(f"  - {mark}" for mark in report.review)
    return Text(
        f"Marked for review: this file reaches into the grader's process\n{lines}",
        style="bold yellow",
    )


def report_view(report: GradeReport) -> Group:
    if report.not_graded is not None:
        return Group(Text(not_graded_words(report.not_graded), style="bold yellow"))
    parts = [task_table(report), prerequisites_view(report), summary_line(report)]
    return Group(*parts, *([review_view(report)] if report.review else []))


# --------------------------------------------------------------------------- batch


def batch_table(entries: Sequence[BatchEntry], task_titles: Sequence[tuple[str, str]]) -> Table:
    """One row per file, readable in an 80-column terminal.

    Tasks are numbered columns of status marks, named in the caption, so that the file
    column keeps its room however many tasks there are or however long their titles.
    """
    numbered = " · ".join(f"{n} {title}" for n, (_, title) in enumerate(task_titles, 1))
    legend = " · ".join(label for label, _ in _MARKS.values())
    table = Table(
        title="Batch grading",
        title_justify="left",
        caption=Text(f"Tasks: {numbered}\n{legend}"),
        caption_justify="left",
    )
    table.add_column("File", overflow="fold", ratio=1, min_width=16)
    for number in range(1, len(task_titles) + 1):
        table.add_column(str(number), justify="center", no_wrap=True)
    table.add_column("Seconds", justify="right", no_wrap=True)
    for entry in entries:
        statuses = {t.id: t.status for t in entry.report.tasks}
        missing = ERROR if entry.report.not_graded is None else NOT_GRADED
        table.add_row(
            Text(safe_name(entry.report.file)),
            *(status_mark(statuses.get(task_id, missing)) for task_id, _ in task_titles),
            f"{entry.report.seconds:.1f}",
        )
    return table


@dataclass(frozen=True)
class Scoring:
    """Points per task, declared in the lesson's {grading} block (1 when not given).

    Optional tasks add their points when passed and never count toward the maximum.
    """

    points: tuple[tuple[str, float, bool], ...]  # (task id, points, optional)

    @classmethod
    def of(cls, lesson: Lesson) -> Scoring:
        grading = lesson.grading
        return cls(
            tuple(
                (t.id, grading.points_for(t.id) if grading else 1.0, t.optional)
                for t in lesson.tasks
            )
        )

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(task_id for task_id, _, _ in self.points)

    @property
    def available(self) -> dict[str, float]:
        """The points each task is worth, by task id."""
        return {task_id: points for task_id, points, _ in self.points}

    @property
    def maximum(self) -> float:
        """The required tasks' points; optional ones are extra credit over it."""
        return sum(points for _, points, optional in self.points if not optional)

    def extra(self, report: GradeReport) -> float:
        """The points `report` earned on optional tasks (part of `earned`, over `maximum`)."""
        earned = self.earned(report)
        return sum(earned[task_id] for task_id, _, optional in self.points if optional)

    def earned(self, report: GradeReport) -> dict[str, float]:
        passed = {t.id for t in report.tasks if t.status == PASSED}
        return {
            task_id: (points if task_id in passed else 0.0) for task_id, points, _ in self.points
        }


def summary_csv(entries: Sequence[BatchEntry], scoring: Scoring) -> str:
    """One row per file: points, each task's status, points and message, for a spreadsheet.

    `points` is every point earned; `extra points` says how many of them are extra credit
    (optional tasks), the only way `points` can exceed `max points`. `review` names where a
    file reaches into the grader (empty for nearly every file).

    Written by `csv_text`, so a message or file name that starts a formula is text to a
    spreadsheet, and no bidi control reorders it.
    """
    task_ids = scoring.task_ids
    header = [
        "file",
        "passed",
        "points",
        "max points",
        "extra points",
        *task_ids,
        *(f"{t} points" for t in task_ids),
        *(f"{t} message" for t in task_ids),
        "seconds",
        "seed",
        "review",
    ]
    rows = [header]
    for entry in entries:
        by_id = {t.id: t for t in entry.report.tasks}
        earned = scoring.earned(entry.report)
        failed = entry.report.not_graded
        missing = ERROR if failed is None else NOT_GRADED
        row = [
            entry.report.file,
            NOT_GRADED if failed else "yes" if entry.report.passed else "no",
            number_cell(sum(earned.values())),
            number_cell(scoring.maximum),
            number_cell(scoring.extra(entry.report)),
            *(by_id[t].status if t in by_id else missing for t in task_ids),
            *(number_cell(earned[t]) for t in task_ids),
            *(by_id[t].message if t in by_id else failed or "" for t in task_ids),
            f"{entry.report.seconds:.3f}",
            "" if entry.report.seed is None else str(entry.report.seed),
            "; ".join(entry.report.review),
        ]
        rows.append(row)
    return csv_text(rows)


def summary_json(entries: Sequence[BatchEntry], lesson_id: str, scoring: Scoring) -> dict:
    """Every file's `--json` report, with counts per task and status, and points."""
    counts: dict[str, dict[str, int]] = {}
    graded = [e for e in entries if e.report.not_graded is None]
    for entry in entries:
        for task in entry.report.tasks:
            counts.setdefault(task.id, {}).setdefault(task.status, 0)
            counts[task.id][task.status] += 1
    return {
        "schema": SCHEMA,
        "lesson": lesson_id,
        "files": len(entries),
        "passed": sum(e.report.passed for e in entries),
        "seed": next((e.report.seed for e in entries), None),
        "max points": scoring.maximum,
        "counts": counts,
        "points": {e.report.file: sum(scoring.earned(e.report).values()) for e in graded},
        "not graded": {e.report.file: e.report.not_graded for e in entries if e.report.not_graded},
        "extra points": {e.report.file: scoring.extra(e.report) for e in graded},
        "reports": [e.report.to_json() for e in entries],
    }
