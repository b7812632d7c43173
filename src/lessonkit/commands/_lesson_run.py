"""A lesson's scripts run, compared with their records and kept, shown as they go: what
`run`, `build --record` and `new` print for each lesson (`receipts.lesson_runs` runs them).

A failed run says what to fix in lesson.md and never suggests re-recording, which cannot make
a failing run pass.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from lessonkit.commands._common import marked, quoted
from lessonkit.lesson.catalog import repo_root
from lessonkit.lesson.files import Script
from lessonkit.lesson.model import Lesson
from lessonkit.receipts import Receipt, record_path, script_path
from lessonkit.receipts.lesson_runs import (
    RunOptions,
    ScriptRun,
    cell_outputs_due,
    is_current,
    record_cell_outputs,
    run_and_keep,
    scripts_to_run,
)


def run_lesson(
    out: Console, lesson: Lesson, options: RunOptions, *, builds_next: bool = False
) -> bool:
    """Run, compare and keep the chosen scripts (and, recording main, the cell outputs).

    `builds_next`: the caller builds the lesson right after (`build --record`, `new`), so
    the advice to run `lessonkit build` is left out.
    """
    plan = scripts_to_run(lesson, options)
    if plan.numbers_written:
        out.print(f"wrote {quoted(plan.numbers_written)} (the declared numbers hold)")
    scripts = plan.scripts
    root = repo_root()
    runs = []
    for index, script in enumerate(scripts):
        if index:
            out.print()
        runs.append(_run_one(out, lesson, script, root, options))
    passed = all(r.passed for r in runs)
    if len(scripts) > 1:
        out.print(f"\n{sum(r.passed for r in runs)} of {len(scripts)} scripts passed")
    if cell_outputs_due(options, tuple(runs)):
        out.print("\nRecording the practice notebook's cell outputs in a child process ...")
        path = record_cell_outputs(lesson, options.timeout)
        advice = (
            "the build that follows puts them in the notebook; commit both"
            if builds_next
            else f"run `lessonkit build {lesson.meta.id}` to put them in the notebook, and "
            "commit both"
        )
        out.print(f"recorded them in {quoted(path)}; {advice}")
    if passed and not options.record:
        out.print(_next_steps(lesson))
    return passed


def _show_output(out: Console, receipt: Receipt) -> None:
    out.rule(f"output of {receipt.script}", align="left")
    out.print(receipt.stdout.rstrip("\n") or "(nothing on stdout)")
    if receipt.stderr.strip() and not receipt.succeeded:
        out.rule("stderr", align="left")
        out.print(receipt.stderr.rstrip("\n"))
    out.rule(align="left")


def _show_comparison(out: Console, lesson: Lesson, run: ScriptRun) -> None:
    """How this run compares with the record it was compared with, if any."""
    if run.warning and not run.recording:
        out.print(marked("warn", run.warning))
    if run.reference is None or run.comparison is None:
        return
    env = run.reference.environment
    about = (
        f"{quoted(record_path(lesson, run.script))}, recorded {run.reference.started_utc} "
        f"with Python {env.python}, JAX {env.jax}"
    )
    comparison = run.comparison
    if comparison.matches:
        out.print(
            marked(
                "ok",
                f"output matches the recorded reference ({about}): {comparison.expected_lines} "
                f"lines, numbers within a relative {comparison.rel_tol:g}",
            )
        )
        return
    if run.recording:  # the change the author meant to record: said, not an alarm
        out.print(f"what this run changes in the record ({about}):")
    else:
        out.print(marked("bad", f"output differs from the record ({about}):"))
    out.print(comparison.explain())


def _explain_failure(out: Console, lesson: Lesson, run: ScriptRun) -> None:
    """After a failed run: the lesson.md lines whose numbers the code contradicts, if any."""
    out.print(marked("bad", run.failure or ""))
    if run.contradictions:
        out.print("lesson.md disagrees with its code, which explains the failure:")
    for problem in run.contradictions:
        out.print(f"  {problem.where}: {problem.message}", markup=False)
    out.print(
        f"Fix lesson.md, run `lessonkit build {lesson.meta.id}`, then run again; "
        "re-recording cannot make a failing run pass.",
        markup=False,
    )


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


def _setting(options: RunOptions) -> str:
    setting = f"JAX_PLATFORMS={options.platform}"
    if options.devices is not None:
        setting += f", {options.devices} logical CPU device{'s' if options.devices > 1 else ''}"
    return setting


def _show_kept(out: Console, lesson: Lesson, run: ScriptRun, platform: str) -> None:
    """Where the run was kept: as the script's new record, or as a receipt beside it."""
    if run.recorded:
        kept = (
            f"recorded the new reference in {quoted(run.kept)}; commit it with lesson.md"
            if platform == "cpu"
            else f"recorded the {platform.upper()} receipt in {quoted(run.kept)}, beside the "
            "CPU reference; commit it with lesson.md"
        )
    else:
        kept = f"receipt: {quoted(run.kept)}"
        if run.recording:
            unchanged = quoted(record_path(lesson, run.script))
            kept += f" (a reference must be a passing run: {unchanged} unchanged)"
    receipt = run.receipt
    env = receipt.environment
    out.print(
        kept + f"\n  {receipt.started_utc} · {receipt.duration_s:.2f} s · Python {env.python} · "
        f"JAX {env.jax} · {env.devices_line()}"
    )


def _run_one(
    out: Console, lesson: Lesson, script: Script, root: Path, options: RunOptions
) -> ScriptRun:
    shown_script = quoted(script_path(lesson, script))
    if not options.record and not is_current(lesson, script):
        out.print(
            marked(
                "warn",
                f"{shown_script} is out of date with lesson.md (run `lessonkit build "
                f"{lesson.meta.id}`); this runs the file as it is",
            )
        )
    out.print(f"Running {shown_script} in a child process ({_setting(options)}) ...")
    run = run_and_keep(lesson, script, root, options)
    _show_output(out, run.receipt)
    if run.failure is None:
        _show_comparison(out, lesson, run)
    else:
        _explain_failure(out, lesson, run)
    _show_kept(out, lesson, run, options.platform)
    return run
