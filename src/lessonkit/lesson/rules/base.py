"""What every per-task rule of the `{grading}` block is: one `RuleKind` with its hooks grouped
by the side that runs them (`ParentHooks`, `ChildHooks`), the facts its check reads, and the
failure it finds.

A rule's check runs in the parent while a task is graded, but this package sits in the
lesson layer (reading lesson.md must reach every rule, and `lesson` may not import `grade`),
so a check reads the task through `RuleFacts`, a protocol that `grade.judging.checks.TaskFacts`
meets, and never imports the grader.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Generic, Protocol, TypeVar


class TaskRule(Protocol):
    """What every per-task rule's value is: a frozen value that keeps the lesson.md line it
    is declared at."""

    @property
    def line(self) -> int: ...


UNGRADED = MappingProxyType({"graded": False})
"""Field metadata: no verdict, diagnosis or points read this field (prose, titles, hints,
quizzes, the evidence block, labels, dates, where a thing is written). The grading
fingerprint leaves it out (`grade.provenance.fingerprint`); a field without it is in, so a new
field counts until it is declared ungraded. Here, below the lesson model, so that the rules'
own fields can be marked too."""

R = TypeVar("R", bound=TaskRule)

Fail = Callable[[str], Exception]
"""Makes the error for one task's value: `fail("must list ...")` reads `jit 'my-task': must
list ...`, at the task's line in lesson.md."""


@dataclass(frozen=True)
class Failure:
    """What a rule's check found wrong: one message for the learner, and the name (or key
    path) it is about. A rule the cell breaks fails the task; it is never an error."""

    message: str
    path: str | None = None


class ErrorFacts(Protocol):
    """An error the child reported (`grade.channel.protocol.ErrorInfo`), as a check words it."""

    type: str
    message: str


class OutcomeFacts(Protocol):
    """How one name a rule's child hook watched fared (`grade.channel.protocol.RuleOutcome`)."""

    name: str
    status: str
    error: ErrorFacts | None


class ReportFacts(Protocol):
    """The child's report of one run of a cell (`grade.channel.protocol.CellReport`), as a rule
    reads it."""

    def outcomes(self, key: str) -> Sequence[OutcomeFacts]:
        """What the hook of the rule with wire key `key` reported; none when not asked."""
        ...


class RuleFacts(Protocol):
    """What a rule's check reads of one task (`grade.judging.checks.TaskFacts` meets it)."""

    def rule(self, kind: RuleKind[R]) -> R | None:
        """The task's value of one rule, or None when the task is not given it."""
        ...

    def cell_source(self) -> str | None:
        """The code of the learner's cell for the task; None when their file has none."""
        ...

    def other_sources(self) -> tuple[str, ...]:
        """The code of every other cell of the learner's file (their imports count)."""
        ...

    def cell_line(self, line: int) -> str:
        """A line of the task's cell as the learner finds it (`line 231`, `cell [4], line 3`)."""
        ...

    def cell_runs(self) -> Iterable[tuple[str, ReportFacts]]:
        """(`on the lesson's inputs`, the child's report) for each input set where the cell
        ran to its end or to a failed `assert`, lesson's inputs first."""
        ...

    def error_at(self, error: ErrorFacts) -> tuple[str, str]:
        """Where an error happened in the learner's code and that line's source."""
        ...

    def short_message(self, message: str) -> str:
        """The first lines of an exception message, as every error message shows them."""
        ...


@dataclass(frozen=True)
class ParentHooks(Generic[R]):
    """What the parent runs of a rule besides reading it. At load, `gap` says why the
    lesson's own solution (with the steps' code) could never meet it, `fix` what to do then;
    as a task is graded, `check` grades the learner's cell, worded `words` in reports, and
    `signature` is how the cell fails it, comparable between runs (None: it does not), which
    names a declared mistake (`grade/judging/diagnosis.py`)."""

    gap: Callable[[R, str, tuple[str, ...]], str | None]
    fix: str
    check: Callable[[RuleFacts], Failure | None]
    words: str
    signature: Callable[[RuleFacts], Hashable | None]


@dataclass(frozen=True)
class ChildHooks(Generic[R]):
    """What a rule the grading child runs adds: `ask`, what the child's hook under the rule's
    key (`grading_child/wire.py`) is told for a task; `run_gap`, why the child's report of
    the lesson's own solution breaks the rule, and `run_fix`, what to do then."""

    ask: Callable[[R], tuple[str, ...]]
    run_gap: Callable[[ReportFacts], str | None]
    run_fix: str


@dataclass(frozen=True)
class RuleKind(Generic[R]):
    """One per-task rule: `read` turns a task's value under `key` into the rule's frozen
    value (`shape` is what it maps task ids to, as its error says; a task not given it has
    `default`). `checks` are the checks that apply it: with `parent` hooks, its own, named
    `checks[0]`. `child` is there for a rule the grading child runs."""

    key: str
    shape: str
    read: Callable[[object, int, Fail], R]
    checks: tuple[str, ...]
    default: R | None = None
    parent: ParentHooks[R] | None = None
    child: ChildHooks[R] | None = None
