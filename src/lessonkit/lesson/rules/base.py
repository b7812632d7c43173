"""What every per-task rule of the `{grading}` block is: one `RuleKind`, the facts its check
reads, and the failure it finds.

A rule's check runs in the parent while a task is graded, but this package sits in the
lesson layer (reading lesson.md must reach every rule, and `lesson` may not import `grade`),
so a check reads the task through `RuleFacts`, a protocol that `grade.judging.checks.TaskFacts`
meets, and never imports the grader.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
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
class RuleKind(Generic[R]):
    """One per-task rule: its key in {grading} and everything the toolkit does with it.

    `read` turns one task's value into the rule's frozen value (`shape` is what the rule
    maps task ids to, as its error says); `gap` says why the lesson's own solution (with the
    steps' code) could never meet it, and `fix` what to do then; `check` grades a learner's
    cell against it, under the check name `checks[0]`, worded as `words` in reports; a rule
    without a check of its own names in `checks` the checks that apply it. `ask` is what the
    grading child must be told for a task given the rule (its wire key is `key`), if
    anything: the child runs the rule's hook registered under that key in `grading_child/wire.py`,
    and `run_gap` reads its report of the lesson's own solution. `signature` is how a cell
    fails the check, in a form two runs compare (None: it does not fail it): a declared
    mistake whose values are the reference's is named where the learner's answer fails the
    rule's check with the same signature (`grade/judging/diagnosis.py`).
    """

    key: str
    order: int  # rules are read and checked in this order (gaps leave room for new ones)
    shape: str
    read: Callable[[object, int, Fail], R]
    checks: tuple[str, ...]
    gap: Callable[[R, str, tuple[str, ...]], str | None] | None = None
    fix: str | None = None
    check: Callable[[RuleFacts], Failure | None] | None = field(default=None, compare=False)
    words: str | None = None
    ask: Callable[[R], tuple[str, ...]] | None = None
    run_gap: Callable[[ReportFacts], str | None] | None = None
    """Why the child's report of the solution's own run breaks the rule (for a rule the child
    runs, whose breach shows only when the cell runs), or None; `run_fix` says what to do."""
    run_fix: str | None = None
    default: R | None = None
    signature: Callable[[RuleFacts], Hashable | None] | None = field(default=None, compare=False)
