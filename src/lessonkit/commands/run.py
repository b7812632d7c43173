"""`lessonkit run`: run the worked example in a child process, compare it, keep a receipt."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from lessonkit.catalog import find_lesson, repo_root
from lessonkit.commands._common import add_lesson_argument, console, shown
from lessonkit.model import Lesson
from lessonkit.receipts import (
    DEFAULT_TIMEOUT_S,
    MAIN,
    PLATFORMS,
    REL_TOL,
    Receipt,
    RecordError,
    StaleRecordError,
    check_options,
    compare_output,
    load_record,
    read_receipt,
    record_path,
    run_example,
    save_record,
    save_run,
)


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return int(text)


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
        "--devices",
        type=_count,
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
        help="replace the lesson's outputs/execution.json with this run (authors)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop the run after S seconds (default: {DEFAULT_TIMEOUT_S:g})",
    )


def _reference(lesson: Lesson) -> tuple[Receipt | None, str | None]:
    """The recorded run to compare with, and a warning when it cannot be fully trusted."""
    try:
        return load_record(lesson), None
    except StaleRecordError as exc:
        return read_receipt(record_path(lesson)), str(exc)
    except RecordError as exc:
        return None, str(exc)


def _show_output(out: Console, receipt: Receipt) -> None:
    out.rule(f"output of {MAIN}", align="left")
    out.print(receipt.stdout.rstrip("\n") or "(nothing on stdout)", markup=False)
    if receipt.stderr.strip() and not receipt.succeeded:
        out.rule("stderr", align="left")
        out.print(receipt.stderr.rstrip("\n"), markup=False)
    out.rule(align="left")


def _compare(out: Console, lesson: Lesson, receipt: Receipt, recording: bool) -> bool:
    """Print how this run compares with the record; False when that should fail the command."""
    reference, warning = _reference(lesson)
    where = shown(record_path(lesson))
    if warning and not recording:
        out.print(f"[yellow]![/yellow] {escape(warning)}")
    if reference is None:
        return recording
    env = reference.environment
    about = escape(
        f"{where}, recorded {reference.started_utc} with Python {env.python}, JAX {env.jax}"
    )
    comparison = compare_output(reference.stdout, receipt.stdout)
    if comparison.matches:
        out.print(
            f"[green]✓[/green] output matches the recorded reference ({about}): "
            f"{comparison.expected_lines} lines, numbers within a relative {REL_TOL:g}"
        )
        return True
    verdict = "differs from the previous record" if recording else "differs from the record"
    out.print(f"[red]✗[/red] output {verdict} ({about}):")
    out.print(comparison.explain(), markup=False)
    return recording


def _failure(receipt: Receipt, timeout_s: float) -> str | None:
    if receipt.timed_out:
        return f"{MAIN} did not finish within {timeout_s:g} s and was stopped"
    if not receipt.succeeded:
        return f"{MAIN} failed with exit code {receipt.exit_code} (its stderr is above)"
    return None


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


def run(args: argparse.Namespace) -> int:
    out = console()
    lesson = find_lesson(args.lesson)
    root = repo_root()
    check_options(args.platform, args.devices)
    setting = f"JAX_PLATFORMS={args.platform}"
    if args.devices is not None:
        setting += f", {args.devices} logical CPU device{'s' if args.devices > 1 else ''}"
    script = escape(shown(lesson.directory / MAIN))
    out.print(f"Running {script} in a child process ({setting}) ...")
    receipt = run_example(
        lesson, root, platform=args.platform, devices=args.devices, timeout_s=args.timeout
    )
    _show_output(out, receipt)
    failure = _failure(receipt, args.timeout)
    passed = failure is None and _compare(out, lesson, receipt, args.record)
    if failure:
        out.print(f"[red]✗[/red] {escape(failure)}")

    if args.record and failure is None:
        path = save_record(receipt, lesson)
        kept = f"recorded the new reference in {shown(path)}; commit it with lesson.md"
    else:
        path = save_run(receipt, root)
        kept = f"receipt: {shown(path)}"
        if args.record:
            kept += f" (a reference must be a passing run: {shown(record_path(lesson))} unchanged)"
    env = receipt.environment
    out.print(
        escape(kept)
        + f"\n  {receipt.started_utc} · {receipt.duration_s:.2f} s · Python {env.python} · "
        f"JAX {env.jax} · {env.devices_line()}"
    )
    if passed and not args.record:
        out.print(_next_steps(lesson), markup=False)
    return 0 if passed else 1
