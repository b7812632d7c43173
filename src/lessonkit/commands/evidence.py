"""`lessonkit evidence`: write a new evidence report filled from the learner's own run."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from lessonkit.commands._common import (
    add_lesson_argument,
    add_practice_file_argument,
    add_timeout_argument,
    console,
    marked,
    practice_file,
    quoted,
    shown,
)
from lessonkit.evidence.observe import DEFAULT_TIMEOUT_S, collect_evidence
from lessonkit.evidence.report import render_report, report_stem
from lessonkit.grade.submission import read_submission
from lessonkit.lesson.catalog import find_lesson
from lessonkit.receipts import write_new

EVIDENCE_FOLDER = "evidence"


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    add_practice_file_argument(parser)
    add_timeout_argument(
        parser, DEFAULT_TIMEOUT_S, "stop your file's run after S seconds", metavar="S"
    )


def run(args: argparse.Namespace) -> int:
    out = console()
    lesson = find_lesson(args.lesson)
    file = practice_file(lesson, args.file)
    read_submission(file)  # an unreadable file is one clear message before anything runs
    out.print(f"Grading {quoted(file)} (its one run, in the grader's child) ...")
    evidence = collect_evidence(lesson, file, timeout_s=args.timeout)
    written = dt.datetime.now(dt.UTC)
    text = render_report(lesson, evidence, written=written, shown_file=shown(file))
    path = write_new(Path.cwd() / EVIDENCE_FOLDER, report_stem(lesson, written), ".md", text)

    if evidence.problem:
        out.print(marked("warn", evidence.problem))
    numbers = evidence.numbers
    if numbers:
        agreeing = sum(n.agrees for n in numbers)
        out.print(f"hand-derived values that agree with your run: {agreeing} of {len(numbers)}")
    summary = ", ".join(f"{t.id} {t.status}" for t in evidence.verdicts.tasks)
    out.print(f"grader: {summary}")
    out.print(marked("ok", f"wrote {quoted(path)}"))
    out.print(
        "Next: open it and write your predictions, the code you changed and your reasoning "
        "where it says “write yours here”."
    )
    return 0
