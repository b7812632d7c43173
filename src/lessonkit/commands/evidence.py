"""`lessonkit evidence`: write a new evidence report filled from the learner's own run."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from rich.markup import escape

from lessonkit.artifacts import exercise_paths
from lessonkit.catalog import find_lesson
from lessonkit.commands._common import add_lesson_argument, console, shown
from lessonkit.evidence import DEFAULT_TIMEOUT_S, collect_evidence, render_report, report_stem
from lessonkit.model import Lesson
from lessonkit.receipts import write_new
from lessonkit.sources import read_submission

EVIDENCE_FOLDER = "evidence"


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument(
        "file",
        nargs="?",
        help="your practice file, .py or .ipynb (default: exercises/LESSON.py here if it "
        "exists, else the lesson's own copy)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop your file's run after S seconds (default: {DEFAULT_TIMEOUT_S:g})",
    )


def default_file(lesson: Lesson) -> Path:
    """exercises/LESSON.py in the working folder if there is one, else the lesson's copy."""
    relative = Path(exercise_paths(lesson)[0])
    mine = Path.cwd() / relative
    return mine if mine.is_file() else lesson.directory / relative


def run(args: argparse.Namespace) -> int:
    out = console()
    lesson = find_lesson(args.lesson)
    file = Path(args.file) if args.file else default_file(lesson)
    read_submission(file)  # an unreadable file is one clear message before anything runs
    out.print(f"Running {escape(shown(file))} and `lessonkit check` in child processes ...")
    evidence = collect_evidence(lesson, file, timeout_s=args.timeout)
    written = dt.datetime.now(dt.UTC)
    text = render_report(lesson, evidence, written=written, shown_file=shown(file))
    path = write_new(Path.cwd() / EVIDENCE_FOLDER, report_stem(lesson, written), ".md", text)

    learner_run = evidence.run
    if learner_run.problem:
        out.print(f"[yellow]![/yellow] {escape(learner_run.problem)}")
    agreeing = sum(n.agrees for n in learner_run.numbers)
    out.print(
        f"hand-derived values that agree with your run: {agreeing} of {len(learner_run.numbers)}"
    )
    verdicts = evidence.verdicts
    if verdicts.note:
        out.print(f"grader: {escape(verdicts.note)}")
    else:
        summary = ", ".join(f"{t.id} {t.status}" for t in verdicts.tasks)
        out.print(f"grader: {escape(summary)}")
    out.print(
        f"[green]✓[/green] wrote {escape(shown(path))}\n"
        "Next: open it and write your predictions, the code you changed and your reasoning "
        "where it says “write yours here”."
    )
    return 0
