"""Execution receipts: what ran, where, and what it printed, as a versioned JSON value.

`run_script` runs one of a lesson's scripts (`lessonkit.scripts`: ``code/main.py``,
``code/going_further.py``) in a child process and returns a `Receipt`. Each script's committed
reference (``outputs/execution.json``, ``outputs/going-further.json``) is read only through
`load_record`, which refuses a record whose code hash no longer matches the script that lesson.md
renders now: a stale record is an error, never silently shown. The hash covers what the run
depends on, the script's Python tokens without comments, so editing prose (even a step summary
that the script carries as a comment) leaves the records current. `compare_output` aligns a
fresh run's lines with the record's, numbers compared within a relative tolerance.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import io
import json
import math
import os
import re
import shlex
import sys
import tokenize
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from lessonkit.environment import Environment, static_environment
from lessonkit.errors import LessonkitError, UsageError
from lessonkit.execute import BACKEND_UNAVAILABLE, child_env, run_child
from lessonkit.model import Lesson
from lessonkit.scripts import DEFAULT, MAIN, Script, lesson_scripts, script_at

SCHEMA = 3
"""Schema 2 added `script` and renamed schema 1's `main_sha256` to `script_sha256`; schema 3
dropped `lesson_sha256` (a prose edit made records stale) for `code_sha256`."""
RUNS = "runs"
TIMEOUT: Literal["timeout"] = "timeout"
"""The exit code a receipt records for a run stopped at its time limit."""

PLATFORMS = ("cpu", "gpu", "tpu")
DEFAULT_TIMEOUT_S = 120.0
REL_TOL = 1e-6
ABS_TOL = 1e-12  # only so that a printed 0.0 and a float32 rounding residue still agree
DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"


class RecordError(LessonkitError):
    """The committed execution record cannot be used as the lesson's reference."""


class MissingRecordError(RecordError):
    """The script's record (e.g. outputs/execution.json) does not exist."""


class CorruptRecordError(RecordError):
    """The record is not a valid current-schema receipt of a successful run of its script."""


class StaleRecordError(RecordError):
    """The script's code changed after its record was recorded (or an older lessonkit wrote it)."""


class BackendUnavailableError(LessonkitError):
    """JAX in the child found no backend for the requested platform."""


@dataclass(frozen=True)
class Receipt:
    """One execution of a lesson script; `exit_code` is ``"timeout"`` if it was stopped."""

    schema: int
    lesson: str
    script: str  # the script's path in the lesson folder, e.g. code/main.py
    script_sha256: str  # the file as run, byte for byte
    code_sha256: str  # its code without comments: what staleness is judged by (`code_sha256`)
    started_utc: str  # ISO 8601 with the +00:00 offset
    duration_s: float
    command: str  # as run, from the repository root
    exit_code: int | Literal["timeout"]
    stdout: str
    stderr: str
    environment: Environment

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0

    @property
    def timed_out(self) -> bool:
        return self.exit_code == TIMEOUT

    @property
    def started(self) -> dt.datetime:
        return dt.datetime.fromisoformat(self.started_utc)

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["environment"] = self.environment.to_dict()
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any) -> Receipt:
        """Validate and rebuild a receipt; raises ValueError saying what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("a receipt must be a JSON object")
        schema = data.get("schema")
        if schema != SCHEMA:
            raise ValueError(f"schema is {schema!r}; this lessonkit reads schema {SCHEMA}")
        names = [f.name for f in fields(cls)]
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}")
        for name in ("lesson", "script", "started_utc", "command", "stdout", "stderr"):
            if not isinstance(data[name], str):
                raise ValueError(f"{name} must be a string")
        script_at(data["script"])  # only a declared script can have a receipt
        for name in ("script_sha256", "code_sha256"):
            if not re.fullmatch(r"[0-9a-f]{64}", str(data[name])):
                raise ValueError(f"{name} must be 64 lowercase hex digits")
        try:
            started = dt.datetime.fromisoformat(data["started_utc"])
        except ValueError:
            raise ValueError("started_utc must be an ISO 8601 time") from None
        if started.utcoffset() != dt.timedelta(0):
            raise ValueError("started_utc must be in UTC (+00:00)")
        duration = data["duration_s"]
        if not _is_number(duration) or duration < 0:
            raise ValueError("duration_s must be a non-negative number of seconds")
        code = data["exit_code"]
        if code != TIMEOUT and (not isinstance(code, int) or isinstance(code, bool)):
            raise ValueError(f"exit_code must be an integer or {TIMEOUT!r}")
        environment = Environment.from_dict(data["environment"])
        return cls(**{**data, "duration_s": float(duration), "environment": environment})


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# --------------------------------------------------------------------------- files


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_sha256(source: str) -> str:
    """A hash of `source` without its comments, trailing spaces or blank lines.

    Two scripts with the same hash run the same code, so a record stays current when only
    prose changes. Comments are found with `tokenize`, but the hash is taken over the text
    that remains, not over token types: those differ between Python versions (3.12 splits
    f-strings into several tokens), and a record must read as current on every supported
    Python. Source that does not tokenize is hashed as text.
    """
    lines = source.splitlines()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                lines[row - 1] = lines[row - 1][:column]
    except (tokenize.TokenError, SyntaxError, IndexError):
        return hashlib.sha256(source.encode("utf-8")).hexdigest()
    kept = [line.rstrip() for line in lines if line.strip()]
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()


def current_code_sha256(lesson: Lesson, script: Script) -> str:
    """The code hash of `script` as lesson.md renders it now (what a current record matches)."""
    return code_sha256(script.render(lesson))


ACCELERATORS = ("gpu", "tpu")


def record_path(lesson: Lesson, script: Script = MAIN, platform: str = "cpu") -> Path:
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


def record_command(lesson: Lesson, script: Script = MAIN) -> str:
    """The command that (re)creates the record of `script`'s reference run."""
    return f"{run_command(lesson, script)} --record"


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_receipt(path: Path) -> Receipt:
    """A receipt from disk, validated but not checked against the lesson.

    Raises:
        MissingRecordError: there is no file at `path`.
        CorruptRecordError: the file is not valid JSON or not a current-schema receipt.
    """
    where = _display(path)
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
    fix = f"run `{record_command(lesson, script)}`"
    try:
        receipt = read_receipt(path)
    except RecordError as exc:
        raise type(exc)(exc.message, where=exc.where, fix=fix) from None
    where = _display(path)
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
    """The current record of every script of the lesson, in order; raises as `load_record`."""
    return {script: load_record(lesson, script) for script in lesson_scripts(lesson)}


@dataclass(frozen=True)
class AcceleratorRecord:
    """A receipt recorded on a GPU or TPU: informational, since it cannot be re-recorded where
    no such device exists. `stale` says the lesson's code changed after it was recorded."""

    platform: str
    receipt: Receipt
    stale: bool


def load_accelerator_records(lesson: Lesson) -> tuple[AcceleratorRecord, ...]:
    """The accelerator receipts committed for the lesson's main script, stale ones included.

    Raises:
        CorruptRecordError: a receipt is unreadable, invalid, or for another lesson or script.
    """
    found = []
    for platform in ACCELERATORS:
        path = record_path(lesson, MAIN, platform)
        if not path.is_file():
            continue
        fix = f"run `{record_command(lesson)} --platform {platform}` on a {platform.upper()}"
        try:
            receipt = read_receipt(path)
        except RecordError as exc:
            raise type(exc)(exc.message, where=exc.where, fix=fix) from None
        mismatch = _mismatch(lesson, MAIN, receipt)
        if mismatch:
            raise CorruptRecordError(mismatch, where=_display(path), fix=fix)
        found.append(AcceleratorRecord(platform, receipt, is_stale(lesson, receipt)))
    return tuple(found)


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
    raise UsageError(f"{_display(folder)} already holds 999 files named {stem}*", fix="tidy it up")


def save_run(receipt: Receipt, root: Path) -> Path:
    """Write a receipt under runs/LESSON/, named by start time and script; never replaces one."""
    stem = f"{_timestamp(receipt.started)}-{script_at(receipt.script).name}"
    return write_new(root / RUNS / receipt.lesson, stem, ".json", receipt.to_json())


def save_record(receipt: Receipt, lesson: Lesson, platform: str = "cpu") -> Path:
    """Replace the record of the receipt's script on `platform` in one step (write, rename)."""
    path = record_path(lesson, script_at(receipt.script), platform)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        partial.write_text(receipt.to_json(), encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


# --------------------------------------------------------------------------- running


def with_device_count(xla_flags: str, devices: int) -> str:
    """`xla_flags` with the logical CPU device count set to `devices` (other flags kept)."""
    kept = [f for f in xla_flags.split() if not f.startswith(DEVICE_COUNT_FLAG)]
    return " ".join([*kept, f"{DEVICE_COUNT_FLAG}={devices}"])


def _program(root: Path) -> str:
    """The interpreter as a reader of the receipt would type it."""
    executable = Path(sys.executable)
    try:
        return executable.relative_to(root).as_posix()
    except ValueError:
        return executable.name or "python"


def check_options(platform: str, devices: int | None) -> None:
    """Raise UsageError unless `platform` is known and `devices` (if given) applies to it."""
    if platform not in PLATFORMS:
        raise UsageError(
            f"unknown platform {platform!r}", fix=f"choose one of: {', '.join(PLATFORMS)}"
        )
    if devices is not None and platform != "cpu":
        raise UsageError(
            f"--devices sets logical CPU devices; it does not apply to --platform {platform}",
            fix="leave out --devices, or use --platform cpu",
        )


def run_script(
    lesson: Lesson,
    root: Path,
    script: Script = MAIN,
    *,
    platform: str = "cpu",
    devices: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Receipt:
    """Run one of the lesson's scripts from `root` in a child process and describe the run.

    Raises:
        UsageError: the script is missing, or the options do not fit together.
        BackendUnavailableError: JAX found no backend for `platform` on this machine.
    """
    check_options(platform, devices)
    path = script_path(lesson, script)
    if not path.is_file():
        raise UsageError(
            f"{_display(path)} is missing", fix=f"run `lessonkit build {lesson.meta.id}`"
        )
    data = path.read_bytes()
    source = data.decode("utf-8", errors="replace")

    settings = {"JAX_PLATFORMS": platform}
    if devices is not None:
        settings["XLA_FLAGS"] = with_device_count(os.environ.get("XLA_FLAGS", ""), devices)
    relative = Path(os.path.relpath(path, root)).as_posix()
    argv = [sys.executable, "-m", "lessonkit.execute", relative]
    run = run_child(argv, cwd=root, env=child_env(settings), timeout_s=timeout_s)

    report = run.report if isinstance(run.report, dict) else {}
    if BACKEND_UNAVAILABLE in report:
        installable = "GPU-enabled" if platform == "gpu" else f"{platform.upper()}-enabled"
        raise BackendUnavailableError(
            f"JAX found no {platform} backend on this machine "
            f"(install a {installable} jax, or use --platform cpu)"
        )
    try:
        environment = Environment.from_dict(report["environment"])
    except (KeyError, ValueError):  # stopped before JAX started: keep what the parent knows
        environment = static_environment()
    command = shlex.join([_program(root), *argv[1:]])
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in settings.items())
    return Receipt(
        schema=SCHEMA,
        lesson=lesson.meta.id,
        script=script.path,
        script_sha256=hashlib.sha256(data).hexdigest(),
        code_sha256=code_sha256(source),
        started_utc=run.started_utc.isoformat(timespec="microseconds"),
        duration_s=round(run.duration_s, 3),
        command=f"{assignments} {command}",
        exit_code=TIMEOUT if run.timed_out else int(run.exit_code or 0),
        stdout=run.stdout,
        stderr=run.stderr,
        environment=environment,
    )


# --------------------------------------------------------------------------- comparing

_NUMBER = re.compile(r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)")


@dataclass(frozen=True)
class LineDifference:
    """One difference: a changed line, an extra line in this run, or a recorded line missing."""

    line: int  # 1-based: in this run, or in the record for a line missing from this run
    expected: str | None  # None: this run printed an extra line
    got: str | None  # None: this run stopped short of the line
    detail: str
    recorded_line: int | None = None  # where a changed line stands in the record, if elsewhere


@dataclass(frozen=True)
class OutputComparison:
    """A fresh run's stdout set beside the recorded one."""

    expected_lines: int
    got_lines: int
    rel_tol: float
    differences: tuple[LineDifference, ...]

    @property
    def matches(self) -> bool:
        return not self.differences

    def explain(self) -> str:
        """The differences, one block per line, for a terminal."""
        out = []
        for d in self.differences:
            if d.got is None:
                where = f"recorded line {d.line}"
            elif d.recorded_line is not None and d.recorded_line != d.line:
                where = f"line {d.line} (recorded line {d.recorded_line})"
            else:
                where = f"line {d.line}"
            out.append(f"{where}: {d.detail}")
            if d.expected is not None:
                out.append(f"  recorded:  {d.expected}")
            if d.got is not None:
                out.append(f"  this run:  {d.got}")
        return "\n".join(out)


def _compare_line(expected: str, got: str, rel_tol: float) -> str | None:
    want, have = _NUMBER.split(expected), _NUMBER.split(got)
    if len(want) != len(have):
        return "the text differs"
    for index, (a, b) in enumerate(zip(want, have, strict=True)):
        if index % 2 == 0:
            if a != b:
                return "the text differs"
        elif not math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=ABS_TOL):
            return f"{b} differs from the recorded {a} by more than a relative {rel_tol:g}"
    return None


def _shape(line: str) -> str:
    """A line with its numbers blanked: lines that differ only in numbers align with each other."""
    return _NUMBER.sub("#", line)


def compare_output(expected: str, got: str, rel_tol: float = REL_TOL) -> OutputComparison:
    """Align this run's lines with the record's, then compare each aligned pair.

    Lines are aligned by their text with numbers blanked (`difflib`), so one inserted or lost
    line is one difference, not a shift of every line after it. Numbers in aligned lines agree
    within `rel_tol`; all other text must agree exactly.
    """
    want, have = expected.splitlines(), got.splitlines()
    matcher = difflib.SequenceMatcher(None, [_shape(a) for a in want], [_shape(b) for b in have])
    differences = []
    for _, w0, w1, h0, h1 in matcher.get_opcodes():
        pairs = min(w1 - w0, h1 - h0)
        for offset in range(pairs):
            a, b = want[w0 + offset], have[h0 + offset]
            detail = _compare_line(a, b, rel_tol)
            if detail is not None:
                differences.append(LineDifference(h0 + offset + 1, a, b, detail, w0 + offset + 1))
        for index in range(w0 + pairs, w1):
            differences.append(
                LineDifference(index + 1, want[index], None, "missing from this run")
            )
        for index in range(h0 + pairs, h1):
            differences.append(
                LineDifference(index + 1, None, have[index], "an extra line in this run")
            )
    return OutputComparison(len(want), len(have), rel_tol, tuple(differences))
