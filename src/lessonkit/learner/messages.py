"""The messages between a learner's kernel and its grading server: one JSON line each.

The kernel sends what the learner ran (or the path of the script it is running); the
server answers with a report or one error message. Both sides parse strictly: a message
that is not exactly one of these is refused, so a kernel cannot steer the server beyond
asking it to grade some text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lessonkit.grade.judging import GradeReport

VERSION = 1
MAX_MESSAGE = 8_000_000  # bytes of one line; a practice file is read up to 2 MB


class ProtocolError(ValueError):
    """A line that is not a message of this protocol."""


@dataclass(frozen=True)
class RunCell:
    """One input the kernel executed: its source and its execution count (`In[count]`)."""

    source: str
    count: int


@dataclass(frozen=True)
class CheckRequest:
    """Grade `cells` (a kernel's history) or `file` (a script run as a whole) for `lesson`."""

    lesson: str
    task: str | None  # one task, or None for every task
    cells: tuple[RunCell, ...] = ()
    file: str | None = None


@dataclass(frozen=True)
class CheckReply:
    """The report, or the one message that says why there is none; `note` is said once."""

    report: GradeReport | None
    error: str | None = None
    note: str | None = None


def _text(data: dict, key: str, optional: bool = False) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"{key!r} must be text")
    return value


def _object(line: bytes | str, keys: set[str]) -> dict:
    if len(line) > MAX_MESSAGE:
        raise ProtocolError("the message is too large")
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        raise ProtocolError("the message is not JSON") from None
    if not isinstance(data, dict) or set(data) != keys or data.get("v") != VERSION:
        raise ProtocolError(f"the message must have exactly the keys {sorted(keys)}")
    return data


def encode_request(request: CheckRequest) -> bytes:
    data = {
        "v": VERSION,
        "lesson": request.lesson,
        "task": request.task,
        "cells": [[c.source, c.count] for c in request.cells],
        "file": request.file,
    }
    return json.dumps(data).encode() + b"\n"


def decode_request(line: bytes) -> CheckRequest:
    data = _object(line, {"v", "lesson", "task", "cells", "file"})
    cells = data["cells"]
    if not isinstance(cells, list) or not all(
        isinstance(c, list)
        and len(c) == 2
        and isinstance(c[0], str)
        and type(c[1]) is int
        and c[1] >= 0
        for c in cells
    ):
        raise ProtocolError("'cells' must be a list of [source, count] pairs")
    return CheckRequest(
        lesson=_text(data, "lesson") or "",
        task=_text(data, "task", optional=True),
        cells=tuple(RunCell(s, n) for s, n in cells),
        file=_text(data, "file", optional=True),
    )


def encode_reply(reply: CheckReply) -> bytes:
    data = {
        "v": VERSION,
        "report": reply.report.to_json() if reply.report else None,
        "error": reply.error,
        "note": reply.note,
    }
    return json.dumps(data).encode() + b"\n"


def decode_reply(line: bytes) -> CheckReply:
    data = _object(line, {"v", "report", "error", "note"})
    report = data["report"]
    if report is not None:
        try:
            report = GradeReport.from_json(report)
        except (KeyError, TypeError, ValueError):
            raise ProtocolError("'report' is not a grade report") from None
    error, note = _text(data, "error", optional=True), _text(data, "note", optional=True)
    if (report is None) == (error is None):
        raise ProtocolError("a reply holds either a report or an error")
    return CheckReply(report, error, note)
