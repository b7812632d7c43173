"""Read a learner's practice file (.py percent cells or .ipynb) into code cells.

Task cells are found by their first line, `# TASK <id>`, so a file keeps working after an
editor drops cell metadata. A notebook's cells are read as Jupyter runs them: a timing
magic (`%time`) is the code it times (`grade.submission.magics`), and its saved outputs and
attachments are dropped, so only its code counts towards `MAX_BYTES`. Unreadable files
become one `SubmissionError` message.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import LessonkitError
from lessonkit.grade.submission.magics import python_of_cells
from lessonkit.lesson.text import safe_name

_TASK_LINE = re.compile(r"^#\s*TASK\s+(?P<id>[a-z0-9-]+)\b")
_PERCENT = re.compile(r"^# %%(?P<rest>.*)$")
MAX_BYTES = 2_000_000  # of code: a .py file, or a notebook's code cells (in characters)
MAX_NOTEBOOK_BYTES = 64 * 2**20  # a notebook file with the outputs Jupyter saved in it
MAX_JSON_ITEMS = 1_000_000  # commas and brackets in a notebook's JSON (a practice one: 5k)
MAX_LINES = 50_000
MAX_CELLS = 2_000
MAX_CODE_CELLS = 500  # a practice file has tens; each more one runs in every scenario
_LINE_END = re.compile(r"\r\n|\r|\n")


class SubmissionError(LessonkitError):
    """The practice file cannot be read as cells."""


@dataclass(frozen=True)
class CodeCell:
    source: str
    line: int  # first line of the cell's code in the file (.py), or the code cell's number
    # (.ipynb: 1 for the first code cell, as Jupyter counts running all from the top)
    task: str | None  # the task id for task cells


@dataclass(frozen=True)
class Submission:
    path: Path
    cells: tuple[CodeCell, ...]

    def task_cells(self, task_id: str) -> tuple[CodeCell, ...]:
        return tuple(c for c in self.cells if c.task == task_id)


def task_of(source: str) -> str | None:
    """The task id of a cell whose first line is `# TASK <id>`, else None."""
    first = source.lstrip("\n").split("\n", 1)[0]
    match = _TASK_LINE.match(first)
    return match["id"] if match else None


def _cap(path: Path) -> int:
    """Bytes a file may have: a notebook holds its saved outputs besides its code."""
    return MAX_NOTEBOOK_BYTES if path.suffix == ".ipynb" else MAX_BYTES


def read_bytes(path: Path) -> bytes:
    """A regular file's bytes, at most its cap (`_cap`) + 1 of them, in bounded time.

    Opened without blocking (a FIFO would wait for a writer forever) and checked to be a
    regular file before reading (a link to /dev/zero would never end).
    """
    name = safe_name(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SubmissionError(
            f"{name}: no such file", fix="give the path of your practice file"
        ) from None
    except IsADirectoryError:
        raise SubmissionError(f"{name} is a folder, not a practice file") from None
    except PermissionError:
        raise SubmissionError(f"{name} cannot be read (permission denied)") from None
    except OSError as exc:  # a symlink loop, a name too long, ...
        raise SubmissionError(f"{name} cannot be opened ({exc.strerror or exc})") from None
    return read_open_file(fd, path)


def read_open_file(fd: int, path: Path) -> bytes:
    """The bytes of the regular file open as `fd` (closed here), at most its cap + 1."""
    name, cap = safe_name(str(path)), _cap(path)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise SubmissionError(f"{name} is a folder, not a practice file")
        if not stat.S_ISREG(info.st_mode):
            raise SubmissionError(f"{name} is not a regular file (a device, pipe or socket)")
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise SubmissionError(f"{name} cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def decode_source(path: Path, data: bytes) -> str:
    name = safe_name(str(path))
    if len(data) > _cap(path) and path.suffix == ".ipynb":
        raise SubmissionError(
            f"{name} is over {MAX_NOTEBOOK_BYTES >> 20} MiB with its saved outputs; a practice "
            "notebook is far smaller",
            fix=_CLEAR_OUTPUTS,
        )
    if len(data) > _cap(path):
        raise SubmissionError(f"{name} is over {MAX_BYTES:,} bytes; a practice file is far smaller")
    if b"\x00" in data:
        raise SubmissionError(f"{name} is a binary file, not Python or a notebook")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SubmissionError(
            f"{name} is not UTF-8 text (byte {exc.start})", fix="save the file as UTF-8"
        ) from None


def python_lines(text: str) -> list[str]:
    """Lines as Python counts them: only \\n, \\r\\n and \\r end a line.

    `str.splitlines` also breaks at U+2028, form feeds and other separators, which would
    put a cell boundary where Python sees none.
    """
    return _LINE_END.split(text.removesuffix("\n").removesuffix("\r")) if text else []


def _percent_cells(text: str) -> list[CodeCell]:
    cells: list[CodeCell] = []
    kind, start, body = "code", 1, []
    lines = python_lines(text)
    if len(lines) > MAX_LINES:
        raise SubmissionError(f"the file has {len(lines):,} lines; a practice file is far smaller")

    def close() -> None:
        source = "\n".join(body).strip("\n")
        if kind == "code" and source.strip():
            offset = next(i for i, t in enumerate(body) if t.strip())
            cells.append(CodeCell(source, start + offset, task_of(source)))

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


_CLEAR_OUTPUTS = (
    "clear its outputs in Jupyter (Edit > Clear Outputs of All Cells), save, and check again"
)


def _notebook_cells(text: str, path: Path) -> list[CodeCell]:
    name = safe_name(str(path))
    items = text.count(",") + text.count("[") + text.count("{")  # what json.loads would build
    if items > MAX_JSON_ITEMS:
        raise SubmissionError(
            f"{name} holds {items:,} JSON items; a practice notebook, with its saved outputs, "
            "holds far fewer",
            fix=_CLEAR_OUTPUTS,
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubmissionError(
            f"{name} is not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno}",
            fix="restore it from your editor's history or run `lessonkit start` for a fresh copy",
        ) from None
    except (ValueError, RecursionError):  # 5,000-digit numbers, nesting deeper than Python
        raise SubmissionError(
            f"{name} is not a notebook this grader can read (its JSON nests too deeply or "
            "holds an enormous number)",
            fix="run `lessonkit start` for a fresh copy and paste your answers in",
        ) from None
    raw = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise SubmissionError(f"{name} is JSON but not a notebook (no list of cells)")
    if len(raw) > MAX_CELLS:
        raise SubmissionError(f"{name} has {len(raw):,} cells; a practice notebook is far smaller")
    found: list[tuple[str, int]] = []
    code = 0  # characters of code: outputs and attachments are never read
    index = 0  # the code cell's number: Jupyter's count for it after running all from the top
    for cell in raw:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        index += 1
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        elif not isinstance(source, str):
            raise SubmissionError(
                f"{name}: code cell [{index}]'s source is not text",
                fix="open and save the notebook in Jupyter, or run `lessonkit start`",
            )
        source = "\n".join(python_lines(source)).strip("\n")
        if source.strip():
            found.append((source, index))
            code += len(source)
    if code > MAX_BYTES:
        raise SubmissionError(
            f"{name} has over {MAX_BYTES:,} characters of code; a practice notebook is far smaller"
        )
    plain = python_of_cells([source for source, _ in found])  # magics as Jupyter reads them
    return [
        CodeCell(code, index, task_of(source))
        for code, (source, index) in zip(plain, found, strict=True)
    ]


def read_submission(path: str | Path, data: bytes | None = None) -> Submission:
    """The code cells of a practice file, in order; `data`: its bytes, when already read."""
    path = Path(path)
    text = decode_source(path, read_bytes(path) if data is None else data)
    if path.suffix == ".ipynb":
        cells = _notebook_cells(text, path)
    elif path.suffix == ".py":
        cells = _percent_cells(text)
    else:
        raise SubmissionError(f"{safe_name(str(path))}: expected a .py or .ipynb practice file")
    if len(cells) > MAX_CODE_CELLS:
        raise SubmissionError(
            f"{safe_name(str(path))} has {len(cells):,} code cells; a practice file is far "
            f"smaller (at most {MAX_CODE_CELLS:,} are graded)",
            fix="run `lessonkit start` for a fresh copy and paste your answers in",
        )
    return Submission(path, tuple(cells))
