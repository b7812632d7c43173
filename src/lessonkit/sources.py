"""Read a learner's practice file (.py percent cells or .ipynb) into code cells.

Task cells are found by their first line, `# TASK <id>`, so a file keeps working after an
editor drops cell metadata. Unreadable files become one `SubmissionError` message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import LessonkitError

_TASK_LINE = re.compile(r"^#\s*TASK\s+(?P<id>[a-z0-9-]+)\b")
_PERCENT = re.compile(r"^# %%(?P<rest>.*)$")
MAX_BYTES = 2_000_000


class SubmissionError(LessonkitError):
    """The practice file cannot be read as cells."""


@dataclass(frozen=True)
class CodeCell:
    source: str
    line: int  # first line of the cell's code in the file (1-based; cell index + 1 for .ipynb)
    task: str | None  # the task id for task cells


@dataclass(frozen=True)
class Submission:
    path: Path
    cells: tuple[CodeCell, ...]

    def task_cells(self, task_id: str) -> tuple[CodeCell, ...]:
        return tuple(c for c in self.cells if c.task == task_id)


def _task_of(source: str) -> str | None:
    first = source.lstrip("\n").split("\n", 1)[0]
    match = _TASK_LINE.match(first)
    return match["id"] if match else None


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SubmissionError(
            f"{path}: no such file", fix="give the path of your practice file"
        ) from None
    except IsADirectoryError:
        raise SubmissionError(f"{path} is a folder, not a practice file") from None
    if len(data) > MAX_BYTES:
        raise SubmissionError(f"{path} is {len(data):,} bytes; a practice file is far smaller")
    if b"\x00" in data:
        raise SubmissionError(f"{path} is a binary file, not Python or a notebook")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SubmissionError(
            f"{path} is not UTF-8 text (byte {exc.start})", fix="save the file as UTF-8"
        ) from None


def _percent_cells(text: str) -> list[CodeCell]:
    cells: list[CodeCell] = []
    kind, start, body = "code", 1, []
    lines = text.splitlines()

    def close() -> None:
        source = "\n".join(body).strip("\n")
        if kind == "code" and source.strip():
            offset = next(i for i, t in enumerate(body) if t.strip())
            cells.append(CodeCell(source, start + offset, _task_of(source)))

    for number, line in enumerate(lines, start=1):
        match = _PERCENT.match(line)
        if match:
            close()
            rest = match["rest"]
            kind = "markdown" if re.search(r"\[(markdown|md|raw)\]", rest) else "code"
            start, body = number + 1, []
        else:
            body.append(line)
    close()
    return cells


def _notebook_cells(text: str, path: Path) -> list[CodeCell]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubmissionError(
            f"{path} is not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno}",
            fix="restore it from your editor's history or run `lessonkit start` for a fresh copy",
        ) from None
    raw = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise SubmissionError(f"{path} is JSON but not a notebook (no list of cells)")
    cells = []
    for index, cell in enumerate(raw, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.strip():
            cells.append(CodeCell(source.strip("\n"), index, _task_of(source)))
    return cells


def read_submission(path: str | Path) -> Submission:
    """The code cells of a practice file, in order."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix == ".ipynb":
        cells = _notebook_cells(text, path)
    elif path.suffix == ".py":
        cells = _percent_cells(text)
    else:
        raise SubmissionError(f"{path}: expected a .py or .ipynb practice file")
    return Submission(path, tuple(cells))
