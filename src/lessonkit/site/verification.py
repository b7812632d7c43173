"""What `lessonkit verify` finds wrong with a lesson: declared numbers that disagree with
prose and code, generated files that no longer match lesson.md, stale records, declared
attempts without their verdict, and a cheat of the cheat set (`grade.self_checks.cheats`)
that passes: its checks are proven able to fail.

Each problem names the place to fix it: a lesson.md line for a number, the file and `lessonkit
build` for drift, the record and the re-record command for a stale record. Re-recording is only
suggested when it can succeed: while lesson.md's numbers are broken or a script is out of
date, the record's fix says what has to come first. The problems span receipts, the site's
generated files and the grader, so they live here, in the top library part.
"""

from __future__ import annotations

import os

from lessonkit.errors import LessonError, LessonkitError, quoted
from lessonkit.grade import Grader
from lessonkit.grade.self_checks import prove_attempts, prove_cheats
from lessonkit.lesson.files import lesson_scripts
from lessonkit.lesson.model import Lesson
from lessonkit.receipts import (
    RecordError,
    load_accelerator_records,
    load_records,
    record_command,
    record_fix,
    record_path,
    script_path,
)
from lessonkit.receipts.lesson_runs import output_contradictions
from lessonkit.receipts.numbers import number_problems
from lessonkit.settings import proving_settings
from lessonkit.site.artifacts import Drift, find_drift


def _line(problem: LessonkitError) -> str:
    text = f"{problem.where}: {problem.message}" if problem.where else problem.message
    return f"{text}: {problem.fix}" if problem.fix else text


def _drift_problems(lesson: Lesson, drift: list[Drift]) -> list[str]:
    said = {"missing": "missing", "differs": "out of date", "left over": "no longer made"}
    return [
        f"{quoted(d.path)} is {said[d.reason]}: run `lessonkit build {lesson.meta.id}`"
        for d in drift
    ]


def _record_problems(lesson: Lesson, numbers_broken: bool, drift: list[Drift]) -> list[str]:
    """Every script's record must exist, be valid, and match the code lesson.md renders; all
    that do not (the notebook's cell outputs with them) are one problem with one command."""
    drifted = {d.path for d in drift}
    try:
        records = load_records(lesson)
    except RecordError as exc:
        fix = exc.fix or ""
        if numbers_broken:
            fix = (
                "fix the lesson.md numbers above first (a run of the current code cannot "
                f"be a reference); then {fix}"
            )
        elif any(script_path(lesson, s) in drifted for s in lesson_scripts(lesson)):
            fix = f"run `lessonkit build {lesson.meta.id}`, then {fix.removeprefix('run ')}"
        return [f"{exc.where}: {exc.message}: {fix}"]
    return [  # the recorded runs print what the experiments declare
        f"{p.where}: {p.message} (its record prints otherwise): {p.fix}"
        for script, receipt in records.items()
        for p in output_contradictions(lesson, script, receipt.stdout)
    ]


def _accelerator_problems(lesson: Lesson) -> list[str]:
    try:
        load_accelerator_records(lesson)  # a broken file is a problem; an old one is a note
    except RecordError as exc:
        return [f"{exc.where}: {exc.message}: {exc.fix}"]
    return []


def lesson_problems(lesson: Lesson) -> list[str]:
    """Every problem of one lesson, numbers first (they explain the others)."""
    numbers = [_line(p) for p in number_problems(lesson)]
    try:
        drift = find_drift(lesson)
    except LessonError as exc:  # the figure's blocks fail: already named above, or named here
        return numbers or [_line(exc)]
    problems = numbers + _drift_problems(lesson, drift)
    records = _record_problems(lesson, bool(numbers), drift)
    problems += records + _accelerator_problems(lesson)
    if not records:  # else the record problem named the stale cells already
        problems += _cell_output_problems(lesson, bool(numbers))
    if not problems:  # the attempts and the cheat set are graded on the lesson as it is built
        problems += prove_lesson(lesson)
    return problems


def prove_lesson(lesson: Lesson, jobs: int = 2) -> list[str]:
    """The declared attempts get their verdicts and every cheat of the cheat set fails, all
    graded by one grader (one reference run, the same input sets)."""
    if lesson.grading is None:
        return []
    with Grader(proving_settings(os.environ, jobs=jobs)) as grader:
        return prove_attempts(lesson, jobs, grader=grader) + prove_cheats(
            lesson, jobs, grader=grader
        )


def _cell_output_problems(lesson: Lesson, numbers_broken: bool) -> list[str]:
    """The notebook's recorded cell outputs must come from the cells lesson.md renders now."""
    from lessonkit.receipts.cells import RECORD, stale_cells

    stale = stale_cells(lesson)
    if not stale:
        return []
    fix = record_fix(lesson)
    if numbers_broken:
        fix = "fix the lesson.md numbers above first (a run of the current code cannot be a " + (
            f"reference); then {fix}"
        )
    return [
        f"{quoted(lesson.directory / RECORD)} has no current output for the notebook cell"
        f"{'s' if len(stale) > 1 else ''} {', '.join(stale)} (changed since recorded, or "
        f"never recorded): {fix}"
    ]


def accelerator_notes(lesson: Lesson) -> list[str]:
    """Accelerator receipts older than the lesson: said, never failed (they cannot be
    re-recorded where no such device exists)."""
    notes = []
    for record in load_accelerator_records(lesson):
        if not record.stale:
            continue
        name = record.platform.upper()
        notes.append(
            f"{quoted(record_path(lesson, record.script, record.platform))}: the {name} receipt "
            f"is older than the lesson's code (recorded {record.receipt.started_utc}); the page "
            f"says so until `{record_command(lesson, record.script)} --platform "
            f"{record.platform}` runs on a {name}"
        )
    return notes
