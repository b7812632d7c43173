"""Which students' work on a lesson is alike: every pair scored per task and for the file.

Only the learner's own code is compared: the scaffold's lines are removed from each task
cell, as MOSS's base file does. Each fingerprint (`course.fingerprints`) is weighted by its
rarity in the class (`log((N + 1) / df)`), so code many write alike counts for little; a
pair's score is the weighted Dice coefficient of its fingerprints (1.0 for the same
normalised code, 0 for a blank file). Exact copies are marked and ranked first.
Similarity is evidence for a person to read, never a verdict.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lessonkit.course.fingerprints import fingerprints, normal_tokens
from lessonkit.course.gradebook import Attempt, Gradebook, Graded, Policy, counting
from lessonkit.grade.submission import SubmissionError, read_submission, task_of
from lessonkit.lesson.cell import task_cell_source
from lessonkit.lesson.model import Lesson, Task

EVIDENCE_NOTE = (
    "Similarity is evidence for a person to read, never a verdict: code that many students "
    "write alike counts for little, and a high score asks for a look at both files."
)
_BLOCK = 2048  # fingerprints multiplied at once: bounds the memory of one step


@dataclass(frozen=True)
class Work:
    """One student's submission as compared: the normalised tokens of their own code in
    each task cell (empty where they wrote none)."""

    student: str
    file: str
    sha256: str
    tasks: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def blank(self) -> bool:
        return not any(tokens for _, tokens in self.tasks)


@dataclass(frozen=True)
class TaskScore:
    task: str
    score: float


@dataclass(frozen=True)
class SimilarPair:
    """Two students' submissions, `first` < `second`, and how alike they are."""

    first: str
    second: str
    first_file: str
    second_file: str
    first_sha256: str
    second_sha256: str
    score: float
    """Rarity-weighted similarity over every task, 0 to 1."""
    exact: bool
    """The same bytes, or the same code once normalised (never for blank files)."""
    tasks: tuple[TaskScore, ...]
    """Tasks where the pair shares code, most alike first."""


@dataclass(frozen=True)
class SimilarityReport:
    lesson: str
    students: int
    pairs: tuple[SimilarPair, ...]
    """Pairs at or over the threshold: exact copies first, then by score."""
    note: str = EVIDENCE_NOTE


def own_lines(task: Task, cell: str) -> str:
    """The task cell's code without the lines the scaffold gave (each given line removed
    as often as the scaffold has it, compared without their indentation) and its marker."""
    given = Counter(line.strip() for line in task_cell_source(task, task.scaffold).splitlines())
    kept = []
    for line in cell.splitlines():
        if task_of(line):
            continue
        if given[line.strip()] > 0:
            given[line.strip()] -= 1
        else:
            kept.append(line)
    return "\n".join(kept)


def own_code(lesson: Lesson, file: str, data: bytes) -> dict[str, str]:
    """A submission's own code in each task cell (`own_lines`); a file that cannot be read
    as cells has none."""
    try:
        cells = read_submission(file, data).cells
    except SubmissionError:
        cells = ()
    return {
        task.id: "\n".join(own_lines(task, c.source) for c in cells if c.task == task.id)
        for task in lesson.tasks
    }


def work_of(lesson: Lesson, student: str, file: str, sha256: str, data: bytes) -> Work:
    """A submission as compared: the normalised tokens of its own code per task."""
    code = own_code(lesson, file, data)
    return Work(student, file, sha256, tuple((t, normal_tokens(c)) for t, c in code.items()))


def _scaffold_prints(lesson: Lesson) -> dict[str, frozenset[int]]:
    """The fingerprints of what each task cell gave, as a base file removes them."""
    return {
        t.id: fingerprints(normal_tokens(task_cell_source(t, t.scaffold))) for t in lesson.tasks
    }


def _weights(df: Mapping[int, int], students: int) -> dict[int, float]:
    """Each fingerprint's rarity weight, `log((N + 1) / df)`, N the class's students."""
    return {f: math.log((students + 1) / count) for f, count in df.items()}


def _add_shared(
    shared: np.ndarray,
    prints: Sequence[frozenset[int]],
    df: Mapping[int, int],
    weight: Mapping[int, float],
) -> None:
    """Add to `shared[i, j]` the weight of the fingerprints students i and j both have. Only
    fingerprints two or more students have (`df`) are multiplied, a block of them at a time,
    so memory stays the N x N sum and one N x `_BLOCK` matrix."""
    common = sorted(f for f, count in df.items() if count > 1)
    for start in range(0, len(common), _BLOCK):
        block = common[start : start + _BLOCK]
        column = {f: i for i, f in enumerate(block)}
        matrix = np.zeros((len(prints), len(block)), dtype=np.float32)
        for row, p in enumerate(prints):
            for f in p:
                if f in column:
                    matrix[row, column[f]] = 1.0
        weights = np.array([weight[f] for f in block], dtype=np.float32)
        shared += (matrix * weights) @ matrix.T


def _dice(shared: float, own: float) -> float:
    """2 * shared / own (the two students' own weights summed), 0 when they have none."""
    return min(max(2 * shared / own, 0.0), 1.0) if own > 0 else 0.0


def compare(lesson: Lesson, works: Sequence[Work], threshold: float = 0.5) -> SimilarityReport:
    """Every pair of `works` (one per student) scored; those at or over `threshold` kept.

    The file scores are one N x N matrix; a task's score is worked out only for the pairs
    listed."""
    base = _scaffold_prints(lesson)
    task_ids = [t.id for t in lesson.tasks]
    shared = np.zeros((len(works), len(works)), dtype=np.float32)
    own = np.zeros(len(works))
    prints: dict[str, list[frozenset[int]]] = {}
    weights: dict[str, dict[int, float]] = {}
    tokens = [dict(w.tasks) for w in works]
    for task in task_ids:
        prints[task] = [fingerprints(code[task]) - base[task] for code in tokens]
        df = Counter(f for p in prints[task] for f in p)  # students with each fingerprint
        weights[task] = _weights(df, len(works))
        _add_shared(shared, prints[task], df, weights[task])
        own += [sum(weights[task][f] for f in p) for p in prints[task]]
    total = own[:, None] + own[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.clip(np.where(total > 0, 2 * shared / total, 0.0), 0.0, 1.0)

    def task_score(task: str, i: int, j: int) -> float:
        weight = weights[task]
        mine, theirs = prints[task][i], prints[task][j]
        both = sum(weight[f] for f in mine & theirs)
        return _dice(both, sum(weight[f] for f in mine) + sum(weight[f] for f in theirs))

    exact = _exact_pairs(works)
    over = np.nonzero(np.triu(scores >= max(threshold, 1e-9), k=1))
    candidates = {(int(i), int(j)) for i, j in zip(*over, strict=True)}
    pairs = []
    for i, j in sorted(candidates | exact):
        a, b = sorted((works[i], works[j]), key=lambda w: w.student)
        score = 1.0 if (i, j) in exact else float(scores[i, j])
        if score < threshold:
            continue
        tasks = sorted(
            (TaskScore(t, round(task_score(t, i, j), 4)) for t in task_ids),
            key=lambda s: -s.score,
        )
        pairs.append(
            SimilarPair(
                a.student,
                b.student,
                a.file,
                b.file,
                a.sha256,
                b.sha256,
                round(score, 4),
                (i, j) in exact,
                tuple(s for s in tasks if s.score > 0),
            )
        )
    pairs.sort(key=lambda p: (not p.exact, -p.score, p.first, p.second))
    return SimilarityReport(lesson.meta.id, len(works), tuple(pairs))


def _exact_pairs(works: Sequence[Work]) -> set[tuple[int, int]]:
    """(i, j), i < j, of every two works with the same bytes or the same normalised code,
    blank ones left out: found by grouping, not by comparing every pair."""
    groups: dict[object, list[int]] = {}
    for index, work in enumerate(works):
        if not work.blank:
            groups.setdefault(("bytes", work.sha256), []).append(index)
            groups.setdefault(("code", work.tasks), []).append(index)
    return {
        (members[x], members[y])
        for members in groups.values()
        for x in range(len(members))
        for y in range(x + 1, len(members))
    }


def class_similarity(
    lesson: Lesson, book: Gradebook, policy: Policy = "latest", threshold: float = 0.5
) -> SimilarityReport:
    """The lesson's pairs from a gradebook: each student's counting submission (`policy`),
    read from the bytes the gradebook keeps, one file at a time."""
    chosen = counting(book.attempts(lesson=lesson.meta.id), policy).values()
    works = [
        work_of(lesson, a.student, a.file, a.sha256, book.content(a.sha256))
        for a in sorted(chosen, key=lambda a: a.student)
    ]
    return compare(lesson, works, threshold)


@dataclass(frozen=True)
class SameBytes:
    """A file handed in whose bytes another student handed in too (not a blank file)."""

    student: str
    file: str
    others: tuple[str, ...]
    """The other students with these bytes, in the gradebook or in the same batch."""


def same_bytes(
    lesson: Lesson, items: Sequence[Graded], held: Sequence[Attempt]
) -> tuple[SameBytes, ...]:
    """The files of `items` (about to be kept) whose bytes another student's submission has,
    among `held` (already kept) and `items`; a file with no code of its own (the scaffold
    as given) is never named, since every such file is alike."""
    students: dict[str, set[str]] = {}
    for attempt in (*held, *(item.attempt for item in items)):
        students.setdefault(attempt.sha256, set()).add(attempt.student)
    found = []
    for item in items:
        attempt = item.attempt
        others = tuple(sorted(students[attempt.sha256] - {attempt.student}))
        if others and not work_of(lesson, "", attempt.file, attempt.sha256, item.data).blank:
            found.append(SameBytes(attempt.student, attempt.file, others))
    return tuple(found)
