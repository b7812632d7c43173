"""`lessonkit run`: run a lesson script in a child process, compare it, keep a receipt.

`--script` picks which of the lesson's scripts (`lessonkit.lesson.files`) runs; every script is run,
compared with its own record and recorded (`--record`) by the same code.

Recording is for authors, and only what can become a reference is recorded: a script out of
date with lesson.md, or a lesson whose declared numbers the code contradicts, stops `--record`
before anything runs, naming the lesson.md line. A failed run says what to fix in lesson.md and
never suggests re-recording, which cannot make a failing run pass.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from lessonkit.commands._common import (
    add_lesson_argument,
    console,
    marked,
    positive_seconds,
    quoted,
    whole_number,
)
from lessonkit.errors import UsageError
from lessonkit.lesson.catalog import find_lesson, repo_root
from lessonkit.lesson.files import (
    ALL,
    DEFAULT,
    GOING_FURTHER,
    MAIN,
    SCRIPTS,
    Script,
    script_at,
    select_scripts,
)
from lessonkit.lesson.model import Lesson
from lessonkit.receipts import (
    DEFAULT_TIMEOUT_S,
    PLATFORMS,
    Receipt,
    RecordError,
    StaleRecordError,
    check_options,
    compare_output,
    load_record,
    read_receipt,
    record_path,
    run_script,
    save_record,
    save_run,
    script_path,
)
from lessonkit.receipts.numbers import check_numbers, number_problems


def configure(parser: argparse.ArgumentParser) -> None:
    add_lesson_argument(parser)
    names = ", ".join(s.name for s in SCRIPTS)
    parser.add_argument(
        "--script",
        default=DEFAULT.name,
        metavar="NAME",
        help=f"which script to run: {names}, or {ALL} for each in turn "
        f"(default: {DEFAULT.name}; {GOING_FURTHER.name} runs the optional experiments)",
    )
    parser.add_argument(
        "--devices",
        type=whole_number,
        metavar="N",
        help="number of logical CPU devices (sets XLA_FLAGS before JAX starts; cpu only)",
    )
    parser.add_argument(
        "--platform",
        choices=PLATFORMS,
        default="cpu",
        help="the JAX platform to run on, through JAX_PLATFORMS (default: cpu)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="replace the script's record (outputs/execution.json for main) with this run "
        "(authors)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop the run after S seconds (default: {DEFAULT_TIMEOUT_S:g})",
    )


def _reference(lesson: Lesson, script: Script) -> tuple[Receipt | None, str | None]:
    """The recorded run to compare with, and a warning when it cannot be fully trusted."""
    try:
        return load_record(lesson, script), None
    except StaleRecordError as exc:
        try:  # still worth comparing with, unless an older lessonkit wrote it
            return read_receipt(record_path(lesson, script)), str(exc)
        except RecordError:
            return None, str(exc)
    except RecordError as exc:
        return None, str(exc)


def _show_output(out: Console, receipt: Receipt) -> None:
    out.rule(f"output of {receipt.script}", align="left")
    out.print(receipt.stdout.rstrip("\n") or "(nothing on stdout)")
    if receipt.stderr.strip() and not receipt.succeeded:
        out.rule("stderr", align="left")
        out.print(receipt.stderr.rstrip("\n"))
    out.rule(align="left")


def _compare(
    out: Console, lesson: Lesson, script: Script, receipt: Receipt, recording: bool
) -> bool:
    """Print how this run compares with the record; False when that should fail the command."""
    reference, warning = _reference(lesson, script)
    where = quoted(record_path(lesson, script))
    if warning and not recording:
        out.print(marked("warn", warning))
    if reference is None:
        return recording
    env = reference.environment
    about = f"{where}, recorded {reference.started_utc} with Python {env.python}, JAX {env.jax}"
    comparison = compare_output(reference.stdout, receipt.stdout)
    if comparison.matches:
        out.print(
            marked(
                "ok",
                f"output matches the recorded reference ({about}): {comparison.expected_lines} "
                f"lines, numbers within a relative {comparison.rel_tol:g}",
            )
        )
        return True
    verdict = "differs from the previous record" if recording else "differs from the record"
    out.print(marked("bad", f"output {verdict} ({about}):"))
    out.print(comparison.explain())
    return recording


def _failure(receipt: Receipt, timeout_s: float) -> str | None:
    if receipt.timed_out:
        return f"{receipt.script} did not finish within {timeout_s:g} s and was stopped"
    if not receipt.succeeded:
        return f"{receipt.script} failed with exit code {receipt.exit_code} (its stderr is above)"
    return None


def _explain_failure(out: Console, lesson: Lesson) -> None:
    """After a failed run: the lesson.md lines whose numbers the code contradicts, if any."""
    problems = number_problems(lesson)
    if problems:
        out.print("lesson.md disagrees with its code, which explains the failure:")
    for problem in problems:
        out.print(f"  {problem.where}: {problem.message}", markup=False)
    out.print(
        f"Fix lesson.md, run `lessonkit build {lesson.meta.id}`, then run again; "
        "re-recording cannot make a failing run pass.",
        markup=False,
    )


def _is_current(lesson: Lesson, script: Script) -> bool:
    path = script_path(lesson, script)
    return path.is_file() and path.read_text(encoding="utf-8") == script.render(lesson)


def _before_recording(lesson: Lesson, scripts: tuple[Script, ...]) -> None:
    """Refuse `--record` when the result could not be a current reference (see the docstring)."""
    stale = [quoted(script_path(lesson, s)) for s in scripts if not _is_current(lesson, s)]
    if stale:
        raise UsageError(
            f"{', '.join(stale)} {'is' if len(stale) == 1 else 'are'} out of date with "
            "lesson.md, so a record of it would be stale at once",
            fix=f"run `lessonkit build {lesson.meta.id}`, then record again",
        )
    check_numbers(lesson)


def _next_steps(lesson: Lesson) -> str:
    lesson_id = lesson.meta.id
    practice = f"practice/{lesson_id}/{lesson_id}.py"
    rows = [
        (f"lessonkit start {lesson_id}", f"copy the practice files to practice/{lesson_id}/"),
        (f"edit {practice}", "fill in each todo(...), or use the .ipynb next to it"),
        (f"lessonkit check {lesson_id} {practice}", "grade your attempt"),
        (f"lessonkit evidence {lesson_id} {practice}", "keep your evidence"),
    ]
    width = max(len(command) for command, _ in rows)
    lines = [f"  {command.ljust(width)}   {why}" for command, why in rows]
    return "\nNext steps:\n" + "\n".join(lines)


@dataclass(frozen=True)
class RunOptions:
    """How `lessonkit run` runs a lesson's scripts; `new` records a skeleton with the same."""

    script: str = DEFAULT.name
    record: bool = False
    platform: str = "cpu"
    devices: int | None = None
    timeout: float = DEFAULT_TIMEOUT_S

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        return cls(args.script, args.record, args.platform, args.devices, args.timeout)


def _setting(args: RunOptions) -> str:
    setting = f"JAX_PLATFORMS={args.platform}"
    if args.devices is not None:
        setting += f", {args.devices} logical CPU device{'s' if args.devices > 1 else ''}"
    return setting


def _keep(
    out: Console, lesson: Lesson, receipt: Receipt, root: Path, record: bool, platform: str
) -> None:
    """Save the run: as the script's new record, or as a receipt that never replaces another."""
    if record and receipt.succeeded:
        path = save_record(receipt, lesson, platform)
        kept = (
            f"recorded the new reference in {quoted(path)}; commit it with lesson.md"
            if platform == "cpu"
            else f"recorded the {platform.upper()} receipt in {quoted(path)}, beside the CPU "
            "reference; commit it with lesson.md"
        )
    else:
        path = save_run(receipt, root)
        kept = f"receipt: {quoted(path)}"
        if record:
            unchanged = quoted(record_path(lesson, script_at(receipt.script)))
            kept += f" (a reference must be a passing run: {unchanged} unchanged)"
    env = receipt.environment
    out.print(
        kept + f"\n  {receipt.started_utc} · {receipt.duration_s:.2f} s · Python {env.python} · "
        f"JAX {env.jax} · {env.devices_line()}"
    )


def _run_one(out: Console, lesson: Lesson, script: Script, root: Path, args: RunOptions) -> bool:
    """Run, show, compare and keep one script; True when it passed and matched its record."""
    shown_script = quoted(script_path(lesson, script))
    if not args.record and not _is_current(lesson, script):
        out.print(
            marked(
                "warn",
                f"{shown_script} is out of date with lesson.md (run `lessonkit build "
                f"{lesson.meta.id}`); this runs the file as it is",
            )
        )
    out.print(f"Running {shown_script} in a child process ({_setting(args)}) ...")
    receipt = run_script(
        lesson,
        root,
        script,
        platform=args.platform,
        devices=args.devices,
        timeout_s=args.timeout,
    )
    _show_output(out, receipt)
    failure = _failure(receipt, args.timeout)
    passed = failure is None and _compare(out, lesson, script, receipt, args.record)
    if failure:
        out.print(marked("bad", failure))
        _explain_failure(out, lesson)
    _keep(out, lesson, receipt, root, args.record, args.platform)
    return passed


def _record_cell_outputs(out: Console, lesson: Lesson, timeout_s: float) -> None:
    """With main's record, what each practice-notebook cell prints (`receipts.cells`)."""
    from lessonkit.receipts.cells import run_cells, save_record

    out.print("\nRecording the practice notebook's cell outputs in a child process ...")
    path = save_record(lesson, run_cells(lesson, timeout_s))
    out.print(
        f"recorded them in {quoted(path)}; run `lessonkit build {lesson.meta.id}` to put "
        "them in the notebook, and commit both"
    )


def run(args: argparse.Namespace) -> int:
    return 0 if run_lesson(console(), find_lesson(args.lesson), RunOptions.from_args(args)) else 1


def run_lesson(out: Console, lesson: Lesson, args: RunOptions) -> bool:
    """Run, compare and keep the chosen scripts (and, recording main, the cell outputs)."""
    scripts = select_scripts(lesson, args.script)
    check_options(args.platform, args.devices)
    root = repo_root()
    if args.record:
        _before_recording(lesson, scripts)
    results = []
    for index, script in enumerate(scripts):
        if index:
            out.print()
        results.append(_run_one(out, lesson, script, root, args))
    if len(scripts) > 1:
        passed = sum(results)
        out.print(f"\n{passed} of {len(scripts)} scripts passed")
    if args.record and MAIN in scripts and all(results):
        _record_cell_outputs(out, lesson, args.timeout)
    if all(results) and not args.record:
        out.print(_next_steps(lesson))
    return all(results)
