"""The receipt: what ran, where, and what it printed, as a versioned JSON value.

A receipt validates itself when read back (`Receipt.from_dict`), and names the code it ran by
two hashes: the file byte for byte, and its code without comments (`code_sha256`), which is what
staleness is judged by, so editing prose (even a step summary that the script carries as a
comment) leaves the records current.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import math
import re
import tokenize
from dataclasses import dataclass, fields
from typing import Any, Literal

from lessonkit.errors import LessonkitError
from lessonkit.lesson.files import RUN_RECORD_SCHEMA, script_at
from lessonkit.run.environment import Environment

SCHEMA = RUN_RECORD_SCHEMA
"""Schema 2 added `script` and renamed schema 1's `main_sha256` to `script_sha256`; schema 3
dropped `lesson_sha256` (a prose edit made records stale) for `code_sha256`."""
TIMEOUT: Literal["timeout"] = "timeout"
"""The exit code a receipt records for a run stopped at its time limit."""


class RecordError(LessonkitError):
    """The committed execution record cannot be used as the lesson's reference."""


class MissingRecordError(RecordError):
    """The script's record (e.g. outputs/execution.json) does not exist."""


class CorruptRecordError(RecordError):
    """The record is not a valid current-schema receipt of a successful run of its script."""


class StaleRecordError(RecordError):
    """The script's code changed after its record was recorded (or an older lessonkit wrote it)."""


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
