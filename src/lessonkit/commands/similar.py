"""`lessonkit similar`: which students' work on a lesson is alike, from a gradebook.

Each student's counting submission is compared with every other's on the code they wrote
themselves (`lessonkit.course.similarity`); the pairs at or over `--threshold` are printed,
most alike first, each with why (how many statements both wrote, how many of them no other
student wrote), or with `--json` for tools (every shared statement, with how many others
wrote it). Similarity is evidence to read, never a
verdict.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from rich.table import Table
from rich.text import Text

from lessonkit.commands._common import add_lesson_argument, console
from lessonkit.commands._course import (
    add_policy_argument,
    add_similarity_threshold,
    similarity_threshold,
)
from lessonkit.course.batch_gradebook import existing_gradebook
from lessonkit.course.similarity import SimilarityReport, class_similarity
from lessonkit.lesson.catalog import find_lesson


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    parser.add_argument("--gradebook", required=True, metavar="FILE", help="the course gradebook")
    add_similarity_threshold(parser, "--threshold", "show pairs scoring at least X, from 0 to 1")
    parser.add_argument("--json", action="store_true", help="print the pairs as JSON for tools")
    add_policy_argument(parser, "which submission of each student is compared (default: latest)")


def run(args: argparse.Namespace) -> int:
    similarity_threshold(args.threshold, "--threshold")
    lesson = find_lesson(args.lesson)
    with existing_gradebook(args.gradebook) as book:
        report = class_similarity(lesson, book, args.policy, args.threshold)
    if args.json:
        print(json.dumps(dataclasses.asdict(report), indent=2))
    else:
        _show(report)
    return 0


def _show(report: SimilarityReport) -> None:
    out = console()
    out.print(
        Text(
            f"{report.lesson}: {len(report.pairs)} pair(s) of {report.students} students "
            "at or over the threshold, most alike first."
        )
    )
    if report.pairs:
        table = Table("score", "students", "files", "tasks alike")
        for pair in report.pairs:
            tasks = ", ".join(f"{t.task} {t.score:.2f}" for t in pair.tasks[:4])
            table.add_row(
                Text(f"{pair.score:.2f}" + (" exact copy" if pair.exact else "")),
                Text(f"{pair.first} · {pair.second}"),
                Text(f"{pair.first_file} · {pair.second_file}"),
                Text(tasks),
            )
        out.print(table)
        out.print(Text("Why each pair is listed:"))
        for pair in report.pairs:
            out.print(Text(f"  {pair.first} · {pair.second}: {pair.label}; {pair.why}."))
    out.print(Text(report.note, style="italic"))
