"""Which students' work on a lesson is alike: every pair scored per task and for the file.

Only the learner's own code is compared (`course.own_code`), in its canonical form, so
renaming, recommenting, reformatting, inserted dead statements, helpers extracted or
inlined, loops written as comprehensions and reordered statements do not hide a copy.
A fingerprint (`course.fingerprints`) is evidence only as far as it is rare: it weighs
`log((N + 1) / df)` in each student's own code, and what a pair shares counts that weight
divided by `df - 1`, so code no other student wrote counts whole and code k other students
wrote too counts 1 / (k + 1) of it. A pair's score is 2 x what it shares over the two
students' own weights: 1.0 for the same code nobody else wrote, 0.5 at most for what a third
student wrote alike (the natural answer three wrote on their own), 0 for a blank file. A
pair is an exact copy only for the same bytes or the same code up to layout and comments,
and that never ranks it: the score does. Each pair lists the lines both wrote and how many
other students wrote each. Similarity is evidence for a person to read, never a verdict.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from lessonkit.course.fingerprints import fingerprints, normal_tokens, statement_hashes
from lessonkit.course.gradebook import Attempt, Gradebook, Graded, Policy, counting
from lessonkit.course.own_code import own_code
from lessonkit.lesson.cell import task_cell_source
from lessonkit.lesson.model import Lesson

EVIDENCE_NOTE = (
    "Similarity is evidence for a person to read, never a verdict: code that other students "
    "wrote alike counts for little, so read the shared lines and how many others wrote each, "
    "and open both files before speaking to anyone."
)
_BLOCK = 2048  # fingerprints multiplied at once: bounds the memory of one step


@dataclass(frozen=True)
class TaskCode:
    """One task's own code as compared: its normalised tokens, and each statement's hash
    with its text."""

    task: str
    tokens: tuple[str, ...]
    statements: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Work:
    """One student's submission as compared."""

    student: str
    file: str
    sha256: str
    tasks: tuple[TaskCode, ...]
    """Each task's own code (no tokens where the student wrote none)."""
    written: str
    """A digest of the student's own code up to layout and comments (names as written)."""

    @property
    def blank(self) -> bool:
        return not any(code.tokens for code in self.tasks)


@dataclass(frozen=True)
class TaskScore:
    task: str
    score: float


@dataclass(frozen=True)
class SharedLine:
    """A statement both students wrote (as compared), and how many others wrote it too."""

    task: str
    text: str
    others: int


Exact = Literal["the same bytes", "the same code up to layout and comments"]


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
    exact: Exact | None
    """Whether it is an exact copy, and of what (never for blank files)."""
    exact_others: int
    """For an exact pair, how many other students handed in the same (0 otherwise)."""
    tasks: tuple[TaskScore, ...]
    """Tasks where the pair shares code, most alike first."""
    shared: tuple[SharedLine, ...]
    """The statements both wrote, those the fewest others wrote first: why it is listed."""

    @property
    def label(self) -> str:
        """The score, and for an exact copy of what and how many others handed it in."""
        if self.exact is None:
            return f"{self.score:.2f}"
        others = {0: "no other student", 1: "1 other student"}.get(
            self.exact_others, f"{self.exact_others} other students"
        )
        return f"{self.score:.2f} exact copy ({self.exact}; {others} handed in the same)"

    @property
    def why(self) -> str:
        """Why the pair is listed: how many statements both wrote, and how many of them no
        other student wrote."""
        alone = sum(1 for line in self.shared if line.others == 0)
        return (
            f"{len(self.shared)} statement(s) both wrote, {alone} of them written by no "
            "other student"
        )


@dataclass(frozen=True)
class SimilarityReport:
    lesson: str
    students: int
    pairs: tuple[SimilarPair, ...]
    """Pairs at or over the threshold, by score."""
    note: str = EVIDENCE_NOTE


def work_of(lesson: Lesson, student: str, file: str, sha256: str, data: bytes) -> Work:
    """A submission as compared: its own code per task, canonical and normalised."""
    tasks, written = [], hashlib.sha256()
    for task, code in own_code(lesson, file, data).items():
        tokens = tuple(t for line in code.compared for t in line.tokens)
        statements = tuple(
            (hashes[0], line.text)
            for line in code.compared
            if (hashes := statement_hashes(line.tokens))
        )
        tasks.append(TaskCode(task, tokens, statements))
        written.update(f"{task}\x1f{' '.join(code.layout_free)}\x1e".encode())
    return Work(student, file, sha256, tuple(tasks), written.hexdigest())


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
    """Add to `shared[i, j]` what students i and j both have: each fingerprint's weight over
    `df - 1`. Only fingerprints two or more students have are multiplied, a block of them at
    a time, so memory stays the N x N sum and one N x `_BLOCK` matrix."""
    common = sorted(f for f, count in df.items() if count > 1)
    for start in range(0, len(common), _BLOCK):
        block = common[start : start + _BLOCK]
        column = {f: i for i, f in enumerate(block)}
        matrix = np.zeros((len(prints), len(block)), dtype=np.float32)
        for row, p in enumerate(prints):
            for f in p:
                if f in column:
                    matrix[row, column[f]] = 1.0
        weights = np.array([weight[f] / (df[f] - 1) for f in block], dtype=np.float32)
        shared += (matrix * weights) @ matrix.T


def _dice(shared: float, own: float) -> float:
    """2 * shared / own (the two students' own weights summed), 0 when they have none."""
    return min(max(2 * shared / own, 0.0), 1.0) if own > 0 else 0.0


def compare(lesson: Lesson, works: Sequence[Work], threshold: float = 0.5) -> SimilarityReport:
    """Every pair of `works` (one per student) scored; those at or over `threshold` kept.

    The file scores are one N x N matrix; a task's score and the shared lines are worked
    out only for the pairs listed."""
    base = _scaffold_prints(lesson)
    task_ids = [t.id for t in lesson.tasks]
    shared = np.zeros((len(works), len(works)), dtype=np.float32)
    own = np.zeros(len(works))
    prints: dict[str, list[frozenset[int]]] = {}
    dfs: dict[str, Counter[int]] = {}
    weights: dict[str, dict[int, float]] = {}
    codes = [{code.task: code for code in w.tasks} for w in works]
    for task in task_ids:
        prints[task] = [fingerprints(code[task].tokens) - base[task] for code in codes]
        dfs[task] = Counter(f for p in prints[task] for f in p)  # students with each one
        weights[task] = _weights(dfs[task], len(works))
        _add_shared(shared, prints[task], dfs[task], weights[task])
        own += [sum(weights[task][f] for f in p) for p in prints[task]]
    total = own[:, None] + own[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.clip(np.where(total > 0, 2 * shared / total, 0.0), 0.0, 1.0)
    statement_df = {
        task: Counter(h for code in codes for h in {h for h, _ in code[task].statements})
        for task in task_ids
    }

    def task_score(task: str, i: int, j: int) -> float:
        weight, df = weights[task], dfs[task]
        mine, theirs = prints[task][i], prints[task][j]
        both = sum(weight[f] / (df[f] - 1) for f in mine & theirs)
        return _dice(both, sum(weight[f] for f in mine) + sum(weight[f] for f in theirs))

    def shared_lines(i: int, j: int) -> tuple[SharedLine, ...]:
        found = []
        for task in task_ids:
            theirs = {h for h, _ in codes[j][task].statements}
            seen: set[int] = set()
            for h, text in codes[i][task].statements:
                if h in theirs and h not in seen:
                    seen.add(h)
                    found.append(SharedLine(task, text, statement_df[task][h] - 2))
        return tuple(sorted(found, key=lambda s: s.others))

    alike = _alike_groups(works)
    over = np.nonzero(np.triu(scores >= max(threshold, 1e-9), k=1))
    pairs = []
    for i, j in zip(*over, strict=True):
        i, j = sorted((int(i), int(j)), key=lambda k: works[k].student)
        a, b = works[i], works[j]
        found = [(kind, len(g)) for kind, g in alike if i in g and j in g]
        exact, group = min(found, key=lambda f: f[0] != "bytes") if found else (None, 0)
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
                round(float(scores[i, j]), 4),
                _EXACT[exact] if exact else None,
                max(group - 2, 0),
                tuple(s for s in tasks if s.score > 0),
                shared_lines(i, j),
            )
        )
    pairs.sort(key=lambda p: (-p.score, p.first, p.second))
    return SimilarityReport(lesson.meta.id, len(works), tuple(pairs))


_EXACT: dict[str, Exact] = {
    "bytes": "the same bytes",
    "code": "the same code up to layout and comments",
}


def _alike_groups(works: Sequence[Work]) -> list[tuple[str, frozenset[int]]]:
    """The groups of two or more works with the same bytes or the same code up to layout
    and comments, blank ones left out."""
    groups: dict[tuple[str, str], set[int]] = {}
    for index, work in enumerate(works):
        if not work.blank:
            groups.setdefault(("bytes", work.sha256), set()).add(index)
            groups.setdefault(("code", work.written), set()).add(index)
    return [(kind, frozenset(g)) for (kind, _), g in groups.items() if len(g) > 1]


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
