"""Two students' code side by side, task by task, with the lines they share marked.

The view shows each task cell's own code as the student wrote it, the scaffold's lines left
out; a line is marked where what it became once compared (`course.own_code`: in canonical
form, so a disguise does not hide it) is part of a k-gram or a statement the other
student's code for the same task has too (`course.fingerprints.shared_lines`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lessonkit.course.fingerprints import shared_lines
from lessonkit.course.own_code import OwnCode, own_code
from lessonkit.course.similarity import SimilarityReport, SimilarPair
from lessonkit.lesson.model import Lesson


@dataclass(frozen=True)
class CodeLine:
    number: int
    text: str
    shared: bool


@dataclass(frozen=True)
class TaskSides:
    task: str
    title: str
    score: float
    first: tuple[CodeLine, ...]
    second: tuple[CodeLine, ...]


@dataclass(frozen=True)
class PairView:
    pair: SimilarPair
    tasks: tuple[TaskSides, ...]
    """The tasks where the pair shares code, most alike first."""


def _lines(mine: OwnCode, theirs: OwnCode) -> tuple[CodeLine, ...]:
    """`mine` as written, each line marked where a compared line it became is shared."""
    compared = "\n".join(line.text for line in mine.compared)
    shared = shared_lines(compared, "\n".join(line.text for line in theirs.compared))
    marked = {n for index in shared for n in mine.compared[index - 1].written}
    return tuple(
        CodeLine(number, text, number in marked)
        for number, text in enumerate(mine.written.split("\n"), start=1)
    )


def pair_view(lesson: Lesson, pair: SimilarPair, first: bytes, second: bytes) -> PairView:
    """The side-by-side view of `pair`, from the two files' bytes."""
    mine = own_code(lesson, pair.first_file, first)
    theirs = own_code(lesson, pair.second_file, second)
    titles = {t.id: t.title for t in lesson.tasks}
    sides = tuple(
        TaskSides(
            score.task,
            titles[score.task],
            score.score,
            _lines(mine[score.task], theirs[score.task]),
            _lines(theirs[score.task], mine[score.task]),
        )
        for score in pair.tasks
    )
    return PairView(pair, sides)


def pair_views(
    lesson: Lesson, report: SimilarityReport, content: Callable[[str], bytes], top: int = 10
) -> tuple[PairView, ...]:
    """The views of the `top` most alike pairs; `content` gives a file's bytes by sha256."""
    return tuple(
        pair_view(lesson, pair, content(pair.first_sha256), content(pair.second_sha256))
        for pair in report.pairs[:top]
    )
