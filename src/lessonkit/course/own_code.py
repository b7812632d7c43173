"""What a student wrote themselves in each task cell: as written, and as compared.

Only the learner's own code is compared: the scaffold's lines are removed from each task
cell, as MOSS's base file does. What is compared is the cell's canonical form
(`course.canonical`), each line of which knows the written lines it came from, so the
side-by-side view marks what the student wrote; a cell that does not parse is compared
statement by statement as written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lessonkit.course.canonical import canonical_lines
from lessonkit.course.fingerprints import located_tokens, normal_tokens
from lessonkit.grade.submission import SubmissionError, read_submission, task_of
from lessonkit.lesson.cell import task_cell_source
from lessonkit.lesson.model import Lesson, Task


@dataclass(frozen=True)
class ComparedLine:
    text: str
    """One statement as compared, without indentation."""
    written: tuple[int, ...]
    """The lines of the written own code (from 1) it came from."""
    tokens: tuple[str, ...]
    """Its normalised tokens (`course.fingerprints.normal_tokens`)."""


@dataclass(frozen=True)
class OwnCode:
    """One task's own code of one submission."""

    written: str
    """The task cells' lines without the scaffold's: what a side-by-side view shows."""
    compared: tuple[ComparedLine, ...]
    layout_free: tuple[str, ...]
    """The task cells' tokens with every name as written: the code up to layout and
    comments, scaffold and all (what an exact copy has the same of)."""


def _kept_lines(task: Task, cell: str) -> list[tuple[int, str]]:
    """(line number in the cell, text) of the lines the scaffold did not give (each given
    line removed as often as the scaffold has it, compared without indentation), nor its
    marker."""
    given = Counter(line.strip() for line in task_cell_source(task, task.scaffold).splitlines())
    kept = []
    for number, line in enumerate(cell.splitlines(), start=1):
        if task_of(line):
            continue
        if given[line.strip()] > 0:
            given[line.strip()] -= 1
        else:
            kept.append((number, line))
    return kept


def own_lines(task: Task, cell: str) -> str:
    """The task cell's code without the lines the scaffold gave and its marker."""
    return "\n".join(line for _, line in _kept_lines(task, cell))


def _as_written(text: str, offset: int) -> tuple[ComparedLine, ...]:
    """The statements of code that does not parse, each with the lines it spans."""
    source = text.split("\n")
    out, tokens, lines = [], [], []
    for token, line in located_tokens(text):
        tokens.append(token)
        lines.append(line)
        if token == "<end>":
            numbers = tuple(range(min(lines), max(lines) + 1))
            joined = " ".join(source[n - 1].strip() for n in numbers if n <= len(source))
            out.append(ComparedLine(joined, tuple(n + offset for n in numbers), tuple(tokens)))
            tokens, lines = [], []
    return tuple(out)


def own_code(lesson: Lesson, file: str, data: bytes) -> dict[str, OwnCode]:
    """A submission's own code in each task cell; a file that cannot be read as cells has
    none."""
    try:
        cells = read_submission(file, data).cells
    except SubmissionError:
        cells = ()
    out = {}
    for task in lesson.tasks:
        scaffold = task_cell_source(task, task.scaffold)
        written: list[str] = []
        compared: list[ComparedLine] = []
        layout_free: list[str] = []
        for cell in (c for c in cells if c.task == task.id):
            layout_free += normal_tokens(cell.source, names=True)
            kept = _kept_lines(task, cell.source)
            offset = len(written)
            where = {number: offset + index for index, (number, _) in enumerate(kept, start=1)}
            written += [line for _, line in kept]
            canonical = canonical_lines(cell.source, scaffold)
            if canonical is None:
                compared += _as_written("\n".join(line for _, line in kept), offset)
                continue
            compared += [
                ComparedLine(
                    line.text, tuple(where[n] for n in line.origin if n in where), line.tokens
                )
                for line in canonical
            ]
        out[task.id] = OwnCode("\n".join(written), tuple(compared), tuple(layout_free))
    return out
