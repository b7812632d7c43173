"""The grader's verdicts: frozen values that the table, the JSON and the evidence report read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from lessonkit.lesson.model import AttemptStatus, Lesson
from lessonkit.lesson.rules import CHECKS, RULES, CheckName
from lessonkit.lesson.text import display_text, markdown_text, safe_name

Status = AttemptStatus  # a task's verdict; a declared attempt expects one
PASSED: Final = "passed"
FAILED: Final = "failed"
NOT_ATTEMPTED: Final = "not attempted"
ERROR: Final = "error"
STATUSES: tuple[Status, ...] = (PASSED, FAILED, NOT_ATTEMPTED, ERROR)


_WORDS = {
    "cell": "the task's cell is missing",
    "attempted": "not attempted yet",
    **{rule.checks[0]: rule.parent.words for rule in RULES if rule.parent is not None},
    "lesson inputs": "wrong on the lesson's inputs",
    "other inputs": "wrong on other inputs",
    "probes": "a probe showed a wrong value",
    "run": "the file could not be graded",
}
CHECK_WORDS: dict[CheckName, str] = {check: _WORDS[check] for check in CHECKS}
"""How a person reads each check (the class report); a test keeps its keys `CHECKS`."""

ErrorCause = Literal[
    "syntax error", "time limit", "memory", "crash", "interference", "unreadable", "exception"
]
"""Why a task's code stopped with an error, for grouping errors by what to teach."""

_CAUSES: tuple[tuple[ErrorCause, re.Pattern[str]], ...] = (
    ("syntax error", re.compile(r"^(?:SyntaxError|IndentationError|TabError)\b")),
    ("time limit", re.compile(r"time limit|did not finish in time")),
    ("memory", re.compile(r"MemoryError|out of memory|memory limit")),
    ("crash", re.compile(r"crashed|was killed|exited with status|used up its CPU time")),
    ("interference", re.compile(r"^The submission interfered with the grader")),
    (
        "unreadable",
        re.compile(r"is a binary file|cannot be (?:read|opened)|is not valid|is over [\d,]+ bytes"),
    ),
)


LIMIT_CAUSES: tuple[ErrorCause, ...] = ("time limit", "memory", "crash")
"""Causes that may lie with the machine rather than the code (a loaded machine runs out
of time): a verdict stopped by one is graded again, never reused as it stands."""


def counts_as_passed(status: Status, optional: bool) -> bool:
    """Passed, or an optional task left out: what a task's points and badges count as done."""
    return status == PASSED or (optional and status == NOT_ATTEMPTED)


def stopped_at_a_limit(report: GradeReport) -> bool:
    """Whether any task of `report` errored for one of the `LIMIT_CAUSES`."""
    return any(t.status == ERROR and error_cause(t.message) in LIMIT_CAUSES for t in report.tasks)


def error_cause(message: str) -> ErrorCause:
    """The cause an `error` verdict's message names (the grader's own wording: explain.py,
    record.py, run/process.py, sources.py); "exception" for an error the code raised."""
    for cause, pattern in _CAUSES:
        if pattern.search(message):
            return cause
    return "exception"


SCHEMA = 4  # 2: each task's `check` and `path`; 3: its `mistake`; 4: `not graded`


@dataclass(frozen=True)
class TaskResult:
    """One task's verdict; `hint` is the lesson's hint, given whenever the task did not pass."""

    id: str
    title: str
    status: Status
    message: str
    hint: str | None = None
    optional: bool = False  # a "going further" task: not attempting it is fine
    check: CheckName | None = None
    """The check that found the problem; None when the task passed."""
    path: str | None = None
    """The key path (`name/layer/weight`) or name of the value the problem is about."""
    mistake: str | None = None
    """The title of the lesson's declared mistake the answer makes (`grade.judging.diagnosis`)."""
    suspicion: str | None = field(default=None, compare=False)
    """The check's guess at a cause ("It looks hard-coded, ..."), a sentence of `message` that
    a named mistake replaces; kept only until the diagnosis, never in the JSON."""

    @property
    def counts_as_passed(self) -> bool:
        return counts_as_passed(self.status, self.optional)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "message": self.message,
            "hint": self.hint,
            "optional": self.optional,
            "check": self.check,
            "path": self.path,
            "mistake": self.mistake,
        }


def run_failed(lesson: Lesson, message: str) -> tuple[TaskResult, ...]:
    """Every task `error` with one message: the file could not be graded, or not trusted."""
    return tuple(
        TaskResult(t.id, t.title, ERROR, message, None, t.optional, "run") for t in lesson.tasks
    )


def not_graded_words(cause: str) -> str:
    """What a person reads about a file the grader failed on (its cause included)."""
    return (
        f"Not graded: grader failure ({cause}). Nothing in the file was judged; the grader "
        "ran it twice and failed both times, so it is graded again (`--resume`, `regrade`)."
    )


def not_graded(
    lesson: Lesson, path: str, cause: str, seconds: float, seed: int | None
) -> GradeReport:
    """The report of a file the grader failed on: no task, no verdict."""
    return GradeReport(lesson.meta.id, path, (), (), seconds, seed, not_graded=cause)


@dataclass(frozen=True)
class PrerequisiteResult:
    """A step or experiment the tasks build on, confirmed on the learner's own cells."""

    name: str
    status: Literal["passed", "failed", "error"]
    message: str

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "message": self.message}


@dataclass(frozen=True)
class TaskTally:
    """How many tasks passed, counted one way for every reader (`check`, a batch's feedback
    pages, Gradescope): the required tasks, and beside them the optional ones that passed."""

    passed: int
    required: int
    optional_passed: int

    @classmethod
    def of(cls, tasks: tuple[TaskResult, ...]) -> TaskTally:
        required = [t for t in tasks if not t.optional]
        return cls(
            sum(t.status == PASSED for t in required),
            len(required),
            sum(t.status == PASSED for t in tasks if t.optional),
        )

    def words(self, *, all_passed: bool) -> str:
        """ "All 3 tasks passed (and 1 optional)", or "2 of 3 tasks passed"."""
        also = f" (and {self.optional_passed} optional)" if self.optional_passed else ""
        if all_passed:
            return f"All {self.required} tasks passed{also}"
        return f"{self.passed} of {self.required} tasks passed{also}"


@dataclass(frozen=True)
class GradeReport:
    lesson: str
    file: str
    tasks: tuple[TaskResult, ...]
    prerequisites: tuple[PrerequisiteResult, ...]
    seconds: float
    seed: int | None = None  # the seed of the input sets drawn for this run
    review: tuple[str, ...] = ()
    """Where the file reaches into the grader (`grade.submission.review`): for the instructor to
    read."""
    not_graded: str | None = None
    """Why the grader itself failed on this file (`not_graded`): no verdict, no task, kept out
    of every count; a batch leaves it for `--resume`, a gradebook never keeps it."""

    @property
    def passed(self) -> bool:
        """Every task passed, optional ones left out excepted (prerequisites only inform)."""
        return bool(self.tasks) and all(t.counts_as_passed for t in self.tasks)

    @property
    def tally(self) -> TaskTally:
        return TaskTally.of(self.tasks)

    def to_json(self) -> dict:
        """The `--json` document; `lessonkit evidence` reads exactly these keys."""
        return {
            "schema": SCHEMA,
            "lesson": self.lesson,
            "file": self.file,
            "passed": self.passed,
            "tasks": [t.to_json() for t in self.tasks],
            "prerequisites": [p.to_json() for p in self.prerequisites],
            "seconds": round(self.seconds, 3),
            "seed": self.seed,
            "review": list(self.review),
            "not graded": self.not_graded,
        }

    @classmethod
    def from_json(cls, data: dict) -> GradeReport:
        """A report read back from `to_json` (a batch journal); KeyError/TypeError if not one."""
        tasks = tuple(
            TaskResult(
                str(t["id"]),
                str(t["title"]),
                str(t["status"]),
                str(t["message"]),
                None if t["hint"] is None else str(t["hint"]),
                bool(t["optional"]),
                _check_name(t.get("check")),
                None if t.get("path") is None else str(t["path"]),
                None if t.get("mistake") is None else str(t["mistake"]),
            )
            for t in data["tasks"]
        )
        prerequisites = tuple(
            PrerequisiteResult(str(p["name"]), str(p["status"]), str(p["message"]))
            for p in data["prerequisites"]
        )
        seed = data["seed"]
        return cls(
            str(data["lesson"]),
            str(data["file"]),
            tasks,
            prerequisites,
            float(data["seconds"]),
            None if seed is None else int(seed),
            tuple(str(mark) for mark in data.get("review", ())),
            None if data.get("not graded") is None else str(data["not graded"]),
        )

    def feedback_markdown(self) -> str:
        """The learner's own report as a Markdown page, for an instructor to hand back."""
        lines = [f"# {self.lesson}: feedback on {markdown_text(safe_name(self.file))}", ""]
        if self.not_graded is not None:
            lines += [markdown_text(not_graded_words(self.not_graded)), ""]
            return display_text("\n".join(lines))
        lines += [f"{self.tally.words(all_passed=self.passed)}.", ""]
        for task in self.tasks:  # a message quotes the learner's code: shown, never markup
            title = f"{task.title} (optional)" if task.optional else task.title
            lines += [f"## {title}: {task.status}", "", markdown_text(task.message), ""]
            if task.hint and task.status != PASSED:
                lines += [f"Hint: {task.hint}", ""]
        failing = [p for p in self.prerequisites if p.status != PASSED]
        if failing:
            lines += ["## Steps and experiments the tasks build on", ""]
            lines += [
                f"- {markdown_text(f'{p.name}: {p.status}. {p.message}'.rstrip())}" for p in failing
            ]
            lines.append("")
        if self.seed is not None:
            lines += [
                f"Graded on the lesson's inputs and on input sets drawn with seed {self.seed}.",
                "",
            ]
        return display_text("\n".join(lines))


def _check_name(value: object) -> CheckName | None:
    """A check name read back from JSON (None for a schema 1 report, which had none)."""
    if value is None:
        return None
    if value not in CHECKS:
        raise TypeError(f"unknown check {value!r}")
    return value  # type: ignore[return-value]
