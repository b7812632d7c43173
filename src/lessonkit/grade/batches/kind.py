"""What a batch of one kind does its own way (`BatchKind`: how a file is graded, what its
report is, what the outputs hold); each file's row is a `grade.model.BatchEntry`, and the
rest of a batch is `grade.batches.lifecycle`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

from lessonkit.grade.batches.folder import BatchItem
from lessonkit.grade.model import BatchEntry, R

OnEntry = Callable[[BatchEntry[R]], None]


GradeItems = Callable[[Sequence[BatchItem], int | None, OnEntry[R]], tuple[BatchEntry[R], ...]]
"""A kind's grade-many: (items, seed, on_report) -> each item's entry, in item order."""


@dataclass(frozen=True)
class BatchKind(Generic[R]):
    """What a batch of one kind (a lesson's, a project's) does its own way; the rest of the
    lifecycle is `BatchRun`."""

    subject: str  # the lesson or phase the journal is bound to
    revision: str  # its revision: a journal of another revision is not resumed
    stem: str  # the outputs' names: `stem`.json, `.stem.journal.jsonl`
    from_json: Callable[[Any], R]  # a journalled report read back
    unreadable: Callable[[Path, str, int | None], R]  # the row of a file that has no bytes
    grade: GradeItems[R]
    summary: Callable[[Sequence[BatchEntry[R]], int | None], dict]  # the JSON output
    new_seed: Callable[[], int]
    csv: Callable[[Sequence[BatchEntry[R]]], str] | None = None  # a CSV output, if any
    fingerprint: str = (
        ""  # what grades (`grade.provenance.fingerprint`): a journal of another is not resumed
    )


def not_graded(entries: Sequence[BatchEntry[R]]) -> tuple[BatchEntry[R], ...]:
    """The entries of files the grader failed on: journalled marked so (`--resume` grades them
    again), never kept in a gradebook."""
    return tuple(e for e in entries if e.report.not_graded is not None)


def relative_to(folder: Path, path: Path) -> str:
    """`path` below `folder`, as the journal, the CSV and the progress name it."""
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.as_posix()
