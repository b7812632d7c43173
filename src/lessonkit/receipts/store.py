"""Where a lesson's execution records live, and reading and writing them.

A script's committed reference (``outputs/execution.json``, ...) is read only through
`load_record`, which refuses one whose code hash no longer matches the script lesson.md
renders: a stale record is an error, never silently shown. GPU and TPU receipts sit beside
the CPU one and are shown, stale or not, but never replace it; fresh runs go under ``runs/``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from lessonkit.atomic import write_atomically
from lessonkit.errors import UsageError, shown
from lessonkit.lesson.files import ALL, DEFAULT, MAIN, Script, lesson_scripts, script_at
from lessonkit.lesson.model import Lesson
from lessonkit.receipts.comparison import OutputComparison, compare_output
from lessonkit.receipts.schema import (
    SCHEMA,
    CorruptRecordError,
    MissingRecordError,
    Receipt,
    RecordError,
    StaleRecordError,
    code_sha256,
)

RUNS = "runs"
Platform = Literal["cpu", "gpu", "tpu"]
PLATFORMS: tuple[Platform, ...] = get_args(Platform)
ACCELERATORS = tuple(p for p in PLATFORMS if p != "cpu")


def current_code_sha256(lesson: Lesson, script: Script) -> str:
    """The code hash of `script` as lesson.md renders it now (what a current record matches)."""
    return code_sha256(script.render(lesson))


def record_path(lesson: Lesson, script: Script = MAIN, platform: Platform = "cpu") -> Path:
    """The committed record: the CPU reference, or an accelerator's receipt beside it
    (outputs/execution-gpu.json), which never replaces the CPU one."""
    path = lesson.directory / script.record
    return path if platform == "cpu" else path.with_name(f"{path.stem}-{platform}{path.suffix}")


def script_path(lesson: Lesson, script: Script = MAIN) -> Path:
    return lesson.directory / script.path


def run_command(lesson: Lesson, script: Script = MAIN) -> str:
    """The command that runs `script`, as a person types it (the default script needs no flag)."""
    chosen = "" if script == DEFAULT else f" --script {script.name}"
    return f"lessonkit run {lesson.meta.id}{chosen}"


def record_command(lesson: Lesson, script: Script | None = None) -> str:
    """The command that (re)creates the record of `script`'s reference run; with no script,
    of every script and the notebook's cell outputs (`--script all`), the one form
    docs/authoring.md gives after a code change."""
    if script is None:
        return f"lessonkit run {lesson.meta.id} --script {ALL} --record"
    return f"{run_command(lesson, script)} --record"


def record_fix(lesson: Lesson) -> str:
    """What brings a lesson's records up to date, in the order docs/authoring.md gives."""
    then = f"lessonkit build {lesson.meta.id}"
    return f"run `{record_command(lesson)}` (it records them all), then `{then}`"


def read_receipt(path: Path) -> Receipt:
    """A receipt from disk, validated but not checked against the lesson.

    Raises:
        MissingRecordError: there is no file at `path`.
        CorruptRecordError: the file is not valid JSON or not a current-schema receipt.
    """
    where = shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingRecordError("no execution record", where=where) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptRecordError(f"cannot read the execution record ({exc})", where=where) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptRecordError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", where=where
        ) from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if isinstance(schema, int) and not isinstance(schema, bool) and 1 <= schema < SCHEMA:
        raise StaleRecordError(
            f"stale: written by an older lessonkit (receipt schema {schema}, whose hashes "
            f"cannot tell a prose edit from a code change); re-record it",
            where=where,
        )
    try:
        return Receipt.from_dict(data)
    except (TypeError, ValueError) as exc:
        raise CorruptRecordError(f"not a valid receipt: {exc}", where=where) from None


def is_stale(lesson: Lesson, receipt: Receipt) -> bool:
    """Whether the receipt's script runs different code now than when it was recorded."""
    return receipt.code_sha256 != current_code_sha256(lesson, script_at(receipt.script))


def _mismatch(lesson: Lesson, script: Script, receipt: Receipt) -> str | None:
    """Why `receipt` cannot be `script`'s record at all (another lesson or script), if it can't."""
    if receipt.lesson != lesson.meta.id:
        return f"records lesson {receipt.lesson!r}, not {lesson.meta.id!r}"
    if receipt.script != script.path:
        return f"records {receipt.script}, not {script.path}"
    return None


def load_record(lesson: Lesson, script: Script = MAIN) -> Receipt:
    """The committed reference run of one of the lesson's scripts, guaranteed current.

    Raises:
        MissingRecordError: the script's record (e.g. outputs/execution.json) does not exist.
        CorruptRecordError: it is unreadable, invalid, for another lesson or script, or a failed
            run.
        StaleRecordError: the script's code (as lesson.md renders it) changed since it was
            recorded, or an older lessonkit wrote the record.
    """
    path = record_path(lesson, script)
    fix = record_fix(lesson)
    try:
        receipt = read_receipt(path)
    except RecordError as exc:
        raise type(exc)(exc.message, where=exc.where, fix=fix) from None
    where = shown(path)
    mismatch = _mismatch(lesson, script, receipt)
    if mismatch:
        raise CorruptRecordError(mismatch, where=where, fix=fix)
    if not receipt.succeeded:
        raise CorruptRecordError(
            f"records a failed run (exit code {receipt.exit_code}); a reference must pass",
            where=where,
            fix=fix,
        )
    if is_stale(lesson, receipt):
        raise StaleRecordError(
            f"stale: the code of {receipt.script} in lesson.md changed since it was recorded "
            f"on {receipt.started_utc}",
            where=where,
            fix=fix,
        )
    return receipt


def load_records(lesson: Lesson) -> dict[Script, Receipt]:
    """The current record of every script of the lesson, in order; raises as `load_record`.

    When more than one record is not current (a script's, the notebook's cell outputs), one
    error names them all, with the one command that records them all: recording one script
    at a time would leave the next build or verify failing on the others.
    """
    from lessonkit.receipts.cells import RECORD, stale_cells  # cells reads receipts too

    records, problems = {}, []
    for script in lesson_scripts(lesson):
        try:
            records[script] = load_record(lesson, script)
        except RecordError as exc:
            problems.append(exc)
    if not problems:
        return records
    cells = stale_cells(lesson)
    if len(problems) == 1 and not cells:
        raise problems[0]
    named = [f"{p.where}: {p.message}" for p in problems]
    if cells:
        s = "s" if len(cells) > 1 else ""
        named.append(
            f"{shown(lesson.directory / RECORD)}: no current output for cell{s} {', '.join(cells)}"
        )
    kind = (
        StaleRecordError
        if all(isinstance(p, StaleRecordError) for p in problems)
        else (type(problems[0]))
    )
    raise kind(
        f"{len(named)} records are not current:\n" + "\n".join(f"  {n}" for n in named),
        where=shown((lesson.directory / RECORD).parent),  # the folder of them all, not one
        fix=record_fix(lesson),
    )


@dataclass(frozen=True)
class AcceleratorRecord:
    """A script's receipt recorded on a GPU or TPU: informational, since it cannot be
    re-recorded where no such device exists. `stale` says the lesson's code changed after it
    was recorded; `comparison` sets its output beside the CPU record of the same script
    (None when that record cannot be read)."""

    platform: Platform
    script: Script
    receipt: Receipt
    stale: bool
    comparison: OutputComparison | None

    @property
    def verified(self) -> bool:
        """It ran the lesson's current code and printed what the CPU reference printed."""
        return not self.stale and self.comparison is not None and self.comparison.matches

    @property
    def hardware(self) -> str:
        """What it ran on, as JAX names the device (`TPU v5 lite`), else the platform."""
        kinds = self.receipt.environment.device_kinds
        return ", ".join(dict.fromkeys(kinds)) if kinds else self.platform.upper()


def _cpu_comparison(lesson: Lesson, script: Script, receipt: Receipt) -> OutputComparison | None:
    try:
        reference = read_receipt(record_path(lesson, script))
    except RecordError:
        return None
    return compare_output(reference.stdout, receipt.stdout)


def load_accelerator_records(lesson: Lesson) -> tuple[AcceleratorRecord, ...]:
    """The accelerator receipts committed for the lesson's scripts, stale ones included.

    Raises:
        CorruptRecordError: a receipt is unreadable, invalid, or for another lesson or script.
    """
    found = []
    for platform in ACCELERATORS:
        for script in lesson_scripts(lesson):
            path = record_path(lesson, script, platform)
            if not path.is_file():
                continue
            fix = (
                f"run `lessonkit run {lesson.meta.id} --script {ALL} --record --platform "
                f"{platform}` on a {platform.upper()}"
            )
            try:
                receipt = read_receipt(path)
            except RecordError as exc:
                raise type(exc)(exc.message, where=exc.where, fix=fix) from None
            mismatch = _mismatch(lesson, script, receipt)
            if mismatch:
                raise CorruptRecordError(mismatch, where=shown(path), fix=fix)
            found.append(
                AcceleratorRecord(
                    platform,
                    script,
                    receipt,
                    is_stale(lesson, receipt),
                    _cpu_comparison(lesson, script, receipt),
                )
            )
    return tuple(found)


def verified_hardware(lesson: Lesson, records: tuple[AcceleratorRecord, ...]) -> tuple[str, ...]:
    """What the lesson is verified on: the CPU (its records must be current to build), and
    each accelerator whose receipts (`load_accelerator_records`) of every script ran the
    current code and matched."""
    scripts = set(lesson_scripts(lesson))
    verified = ["CPU"]
    for platform in ACCELERATORS:
        mine = [r for r in records if r.platform == platform]
        if mine and {r.script for r in mine} == scripts and all(r.verified for r in mine):
            verified.append(mine[0].hardware)
    return tuple(verified)


def _timestamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def write_new(folder: Path, stem: str, suffix: str, text: str) -> Path:
    """Write `text` to folder/stem+suffix, or stem-2, stem-3...: never replaces a file."""
    folder.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 1000):
        path = folder / (f"{stem}{suffix}" if attempt == 1 else f"{stem}-{attempt}{suffix}")
        try:
            with path.open("x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            continue
        return path
    raise UsageError(f"{shown(folder)} already holds 999 files named {stem}*", fix="tidy it up")


def save_run(receipt: Receipt, root: Path) -> Path:
    """Write a receipt under runs/LESSON/, named by start time and script; never replaces one."""
    stem = f"{_timestamp(receipt.started)}-{script_at(receipt.script).name}"
    return write_new(root / RUNS / receipt.lesson, stem, ".json", receipt.to_json())


def save_record(receipt: Receipt, lesson: Lesson, platform: Platform = "cpu") -> Path:
    """Replace the record of the receipt's script on `platform` in one step (write, rename)."""
    path = record_path(lesson, script_at(receipt.script), platform)
    write_atomically(path, receipt.to_json())
    return path
