"""Running and recording a lesson's scripts: the policy of `lessonkit run`, as a library.

Which scripts run, what may be recorded, what each is compared with and where it is kept are
decided here and returned as frozen `ScriptRun`s; nothing here prints
(`commands/_lesson_run.py` shows them). Only what can become a reference is recorded: an
out-of-date script, or declared numbers the code contradicts, stop a recording before
anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import LessonError, UsageError, quoted
from lessonkit.lesson.files import DEFAULT, GOING_FURTHER, MAIN, Script, select_scripts
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.numbers import unprinted_numbers
from lessonkit.receipts.comparison import (
    OutputComparison,
    compare_output,
    missing_lines,
    printed_numbers,
)
from lessonkit.receipts.numbers import NumbersCheck, check_numbers, number_problems
from lessonkit.receipts.running import DEFAULT_TIMEOUT_S, check_options, run_script
from lessonkit.receipts.schema import Receipt, RecordError, StaleRecordError
from lessonkit.receipts.store import (
    load_record,
    read_receipt,
    record_path,
    save_record,
    save_run,
    script_path,
)


@dataclass(frozen=True)
class RunOptions:
    """How a lesson's scripts run: `lessonkit run`'s flags, and `new`'s first recording."""

    script: str = DEFAULT.name
    record: bool = False
    platform: str = "cpu"
    devices: int | None = None
    timeout: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class ScriptRun:
    """One script's run: its receipt, what it was compared with, and where it was kept."""

    script: Script
    path: Path
    current: bool
    """The script file matched lesson.md when it ran."""
    receipt: Receipt
    reference: Receipt | None
    """The recorded run it was compared with, read before this run could replace it."""
    warning: str | None
    """Why the reference cannot be fully trusted (stale, missing or unreadable)."""
    comparison: OutputComparison | None
    failure: str | None
    """Why the run failed (a timeout or a non-zero exit), or None."""
    contradictions: tuple[LessonError, ...]
    """After a failure, the lesson.md numbers its code contradicts, which may explain it."""
    recording: bool
    kept: Path
    recorded: bool
    """`kept` is the script's new record, not a receipt beside the old one."""

    @property
    def passed(self) -> bool:
        """It ran to the end and matched its record, or it is being recorded."""
        matched = self.comparison is not None and self.comparison.matches
        return self.failure is None and (matched or self.recording)


def is_current(lesson: Lesson, script: Script) -> bool:
    """Whether the script on disk is what lesson.md renders today."""
    path = script_path(lesson, script)
    return path.is_file() and path.read_text(encoding="utf-8") == script.render(lesson)


@dataclass(frozen=True)
class RunPlan:
    """The scripts a run takes, and the numbers verdict a recording wrote before them
    (`receipts.numbers`), so the command can name every file it changed."""

    scripts: tuple[Script, ...]
    numbers_written: Path | None = None


def scripts_to_run(lesson: Lesson, options: RunOptions) -> RunPlan:
    """The scripts `options` names, refused before anything runs when they cannot be."""
    scripts = select_scripts(lesson, options.script)
    check_options(options.platform, options.devices)
    if not options.record:
        return RunPlan(scripts)
    return RunPlan(scripts, refuse_stale_recording(lesson, scripts).written)


def refuse_stale_recording(lesson: Lesson, scripts: tuple[Script, ...]) -> NumbersCheck:
    """A record must be current: refuse stale scripts and numbers the code contradicts."""
    stale = [quoted(script_path(lesson, s)) for s in scripts if not is_current(lesson, s)]
    if stale:
        raise UsageError(
            f"{', '.join(stale)} {'is' if len(stale) == 1 else 'are'} out of date with "
            "lesson.md, so a record of it would be stale at once",
            fix=f"run `lessonkit build {lesson.meta.id}`, then record again",
        )
    return check_numbers(lesson)


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


def output_contradictions(lesson: Lesson, script: Script, stdout: str) -> tuple[LessonError, ...]:
    """What the page says `script`'s experiments print, contradicted by a run's `stdout`:
    declared `:output:` lines it does not print, and numbers their sections' text and
    `:expected:` lines state that it does not bear out (`unprinted_numbers`)."""
    further = script == GOING_FURTHER
    experiments = lesson.optional_experiments if further else lesson.core_experiments
    declared = [(e.line, line) for e in experiments for line in e.output]
    missing = set(missing_lines([line for _, line in declared], stdout))
    unprinted = unprinted_numbers(
        lesson,
        experiments + (lesson.optional_tasks if further else ()),
        printed_numbers(stdout),
        script.path,
    )
    return (
        tuple(
            LessonError(
                f"{script.path} does not print the declared output `{line}`",
                where=f"{lesson.path}:{number}",
                fix="if the code is right, change the :output: line and the prose that states "
                "it; otherwise fix the code",
            )
            for number, line in declared
            if line in missing
        )
        + unprinted
    )


def _failure(receipt: Receipt, timeout_s: float) -> str | None:
    if receipt.timed_out:
        return f"{receipt.script} did not finish within {timeout_s:g} s and was stopped"
    if not receipt.succeeded:
        return f"{receipt.script} failed with exit code {receipt.exit_code} (its stderr is above)"
    return None


def run_and_keep(lesson: Lesson, script: Script, root: Path, options: RunOptions) -> ScriptRun:
    """Run one script in a child, compare it with its record, and keep the run.

    A passing run being recorded becomes the script's record; every other run is kept as
    a receipt under `root`, which never replaces another.
    """
    current = is_current(lesson, script)
    receipt = run_script(
        lesson,
        root,
        script,
        platform=options.platform,
        devices=options.devices,
        timeout_s=options.timeout,
    )
    reference, warning = _reference(lesson, script)
    comparison = None if reference is None else compare_output(reference.stdout, receipt.stdout)
    failure = _failure(receipt, options.timeout)
    contradictions = () if failure else output_contradictions(lesson, script, receipt.stdout)
    if contradictions:  # never a reference: the page would say one thing and the record another
        failure = f"{receipt.script} ran, but not as lesson.md declares it prints"
    recorded = options.record and receipt.succeeded and not contradictions
    kept = save_record(receipt, lesson, options.platform) if recorded else save_run(receipt, root)
    return ScriptRun(
        script=script,
        path=script_path(lesson, script),
        current=current,
        receipt=receipt,
        reference=reference,
        warning=warning,
        comparison=comparison,
        failure=failure,
        contradictions=contradictions or (number_problems(lesson) if failure else ()),
        recording=options.record,
        kept=kept,
        recorded=recorded,
    )


def cell_outputs_due(options: RunOptions, runs: tuple[ScriptRun, ...]) -> bool:
    """Recording main on the CPU, and every run passed: the notebook's cell outputs are
    recorded too. An accelerator's recording keeps its receipt alone: the cell outputs are a
    CPU artifact, which no accelerator run may rewrite."""
    return (
        options.record
        and options.platform == "cpu"
        and any(r.script == MAIN for r in runs)
        and all(r.passed for r in runs)
    )


def record_cell_outputs(lesson: Lesson, timeout_s: float) -> Path:
    """What each practice-notebook cell prints, run in a child and saved (`receipts.cells`)."""
    from lessonkit.receipts.cells import run_cells, save_record

    return save_record(lesson, run_cells(lesson, timeout_s))
