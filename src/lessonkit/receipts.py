"""Execution receipts: what ran, where, and what it printed, as a versioned JSON value.

`run_script` runs one of a lesson's scripts (`lessonkit.scripts`: ``code/main.py``,
``code/going_further.py``) in a child process and returns a `Receipt`. Each script's committed
reference (``outputs/execution.json``, ``outputs/going-further.json``) is read only through
`load_record`, which refuses a record whose content hashes no longer match lesson.md and the
script: a stale record is an error, never silently shown. `compare_output` sets a fresh run
beside the record, line by line, with numbers compared within a relative tolerance.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import shlex
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from lessonkit.environment import Environment, static_environment
from lessonkit.errors import LessonkitError, UsageError
from lessonkit.execute import BACKEND_UNAVAILABLE, child_env, run_child
from lessonkit.model import Lesson
from lessonkit.scripts import DEFAULT, MAIN, Script, lesson_scripts, script_at

SCHEMA = 2
"""Schema 2 added `script` and renamed schema 1's `main_sha256` to `script_sha256`."""
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
    """lesson.md or the script changed after its record was recorded."""


class BackendUnavailableError(LessonkitError):
    """JAX in the child found no backend for the requested platform."""


@dataclass(frozen=True)
class Receipt:
    """One execution of a lesson script; `exit_code` is ``"timeout"`` if it was stopped."""

    schema: int
    lesson: str
    script: str  # the script's path in the lesson folder, e.g. code/main.py
    lesson_sha256: str
    script_sha256: str
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
        for name in ("lesson_sha256", "script_sha256"):
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


def record_path(lesson: Lesson, script: Script = MAIN) -> Path:
    return lesson.directory / script.record


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
    try:
        return Receipt.from_dict(data)
    except (TypeError, ValueError) as exc:
        raise CorruptRecordError(f"not a valid receipt: {exc}", where=where) from None


def stale_sources(lesson: Lesson, receipt: Receipt) -> tuple[str, ...]:
    """The source files (lesson.md, the receipt's script) whose content differs from its hashes."""
    changed = []
    if sha256_file(lesson.path) != receipt.lesson_sha256:
        changed.append(lesson.path.name)
    script = script_path(lesson, script_at(receipt.script))
    if not script.is_file() or sha256_file(script) != receipt.script_sha256:
        changed.append(receipt.script)
    return tuple(changed)


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
        StaleRecordError: lesson.md or the script changed since it was recorded.
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
    changed = stale_sources(lesson, receipt)
    if changed:
        raise StaleRecordError(
            f"stale: {' and '.join(changed)} changed since it was recorded on "
            f"{receipt.started_utc}",
            where=where,
            fix=fix,
        )
    return receipt


def load_records(lesson: Lesson) -> dict[Script, Receipt]:
    """The current record of every script of the lesson, in order; raises as `load_record`."""
    return {script: load_record(lesson, script) for script in lesson_scripts(lesson)}


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


def save_record(receipt: Receipt, lesson: Lesson) -> Path:
    """Replace the record of the receipt's script in one step (write, then rename)."""
    path = record_path(lesson, script_at(receipt.script))
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
    lesson_sha, script_sha = sha256_file(lesson.path), sha256_file(path)

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
        lesson_sha256=lesson_sha,
        script_sha256=script_sha,
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
    line: int  # 1-based
    expected: str | None  # None: this run printed an extra line
    got: str | None  # None: this run stopped short of the line
    detail: str


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
            out.append(f"line {d.line}: {d.detail}")
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


def compare_output(expected: str, got: str, rel_tol: float = REL_TOL) -> OutputComparison:
    """Compare stdout line by line; numbers agree within `rel_tol`, all other text exactly."""
    want, have = expected.splitlines(), got.splitlines()
    differences = []
    for index in range(max(len(want), len(have))):
        a = want[index] if index < len(want) else None
        b = have[index] if index < len(have) else None
        if a is None:
            differences.append(LineDifference(index + 1, None, b, "an extra line in this run"))
        elif b is None:
            differences.append(LineDifference(index + 1, a, None, "missing from this run"))
        elif (detail := _compare_line(a, b, rel_tol)) is not None:
            differences.append(LineDifference(index + 1, a, b, detail))
    return OutputComparison(len(want), len(have), rel_tol, tuple(differences))
