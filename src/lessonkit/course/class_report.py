"""What the class got wrong: one lesson's attempts in a gradebook, summed up per task.

Pass rates count each student once, by the attempt the policy picks. Failures are grouped
over every submission (the mistakes made on the way are the ones worth teaching) by task,
check, key path and cause, each group with an example. Totals are of the required tasks'
points; optional tasks' points are extra credit, counted apart.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lessonkit.course.gradebook import Attempt, Policy, TaskGrade, counting, current
from lessonkit.course.pair_view import PairView
from lessonkit.course.similarity import SimilarityReport
from lessonkit.errors import UsageError
from lessonkit.grade.judging import (
    CHECK_WORDS,
    ERROR,
    NOT_ATTEMPTED,
    PASSED,
    CheckName,
    ErrorCause,
    Status,
    error_cause,
)
from lessonkit.render.page import render_template

UNRECORDED_CHECK = "(graded before checks were recorded)"

ATTEMPT_BINS = ("1", "2", "3", "4 or more", "not yet")


@dataclass(frozen=True)
class FailureGroup:
    """Failed submissions of one task that one check found wrong at one key path."""

    check: CheckName | None
    path: str | None
    status: Status
    cause: ErrorCause | None
    """For an `error`, what stopped the code; None for any other status."""
    attempts: int
    students: int
    example: str

    @property
    def check_words(self) -> str:
        if self.check is None:
            return UNRECORDED_CHECK
        words = CHECK_WORDS[self.check]
        if self.status == NOT_ATTEMPTED and self.check == "attempted":
            return words
        cause = f", {self.cause}" if self.cause else ""
        return f"{words} ({self.status}{cause})"


@dataclass(frozen=True)
class TaskSummary:
    task: str
    title: str
    optional: bool
    passed: int
    """Students whose counting attempt passed the task (left out is not passed)."""
    attempted: int
    """Students whose counting attempt attempted the task."""
    graded: int
    """Students with a counting attempt."""
    failures: tuple[FailureGroup, ...]
    median_attempts: float | None
    """Among the students who passed it, the median number of submissions it took."""
    mistakes: tuple[tuple[str, int], ...] = ()
    """(declared mistake's title, students whose counting attempt made it), most first."""

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class ClassReport:
    lesson: str
    title: str
    policy: Policy
    max_points: float
    totals: tuple[float, ...]
    """Each student's required points on the counting attempt, in student order."""
    extra: tuple[float, ...]
    """Each student's extra points (optional tasks) on the counting attempt, in order."""
    submissions: int
    tasks: tuple[TaskSummary, ...]
    attempts_needed: tuple[tuple[str, int], ...]
    """(bin, students): submissions until every task passed, or "not yet"."""

    @property
    def students(self) -> int:
        return len(self.totals)


def _failure_groups(task: str, attempts: Sequence[Attempt]) -> tuple[FailureGroup, ...]:
    """Every submission that did not pass `task`, grouped by what went wrong."""
    keyed: dict[tuple, list[tuple[str, TaskGrade]]] = defaultdict(list)
    for attempt in attempts:
        for grade in attempt.tasks:
            if grade.task == task and grade.status != PASSED:
                cause = error_cause(grade.message) if grade.status == ERROR else None
                key = (grade.check, grade.path, grade.status, cause)
                keyed[key].append((attempt.student, grade))
    groups = [
        FailureGroup(
            check,
            path,
            status,
            cause,
            attempts=len(found),
            students=len({student for student, _ in found}),
            example=found[-1][1].message,
        )
        for (check, path, status, cause), found in keyed.items()
    ]
    return tuple(sorted(groups, key=lambda g: (-g.attempts, str(g.check), g.path or "")))


def _mistakes(
    task: str, chosen: Sequence[Attempt], declared: Sequence[str]
) -> tuple[tuple[str, int], ...]:
    """How many students' counting attempts made each declared mistake at `task`: every
    mistake the lesson declares (`declared`), 0 where no one made it, and any other one the
    gradebook names (a mistake the lesson has since dropped)."""
    counts = Counter(dict.fromkeys(declared, 0))
    counts.update(
        grade.mistake
        for attempt in chosen
        for grade in attempt.tasks
        if grade.task == task and grade.mistake
    )
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _attempts_needed(by_student: dict[str, list[Attempt]]) -> tuple[tuple[str, int], ...]:
    counts: Counter[str] = Counter()
    for attempts in by_student.values():
        first = next(
            (n for n, a in enumerate(attempts, 1) if all(t.counts_as_passed for t in a.tasks)), None
        )
        counts[ATTEMPT_BINS[min(first, 4) - 1] if first else "not yet"] += 1
    return tuple((label, counts[label]) for label in ATTEMPT_BINS)


def _median_attempts(task: str, by_student: dict[str, list[Attempt]]) -> float | None:
    needed = []
    for attempts in by_student.values():
        for n, attempt in enumerate(attempts, 1):
            if any(t.task == task and t.status == PASSED for t in attempt.tasks):
                needed.append(n)
                break
    return statistics.median(needed) if needed else None


def class_report(
    attempts: Sequence[Attempt],
    lesson: str,
    policy: Policy,
    declared: Mapping[str, Sequence[str]] | None = None,
) -> ClassReport:
    """The summary of `lesson`'s attempts; a lesson with none is refused. `declared` holds
    the titles of the mistakes the lesson declares, by task: each is counted, 0 included."""
    declared = declared or {}
    mine = current(a for a in attempts if a.lesson == lesson)
    if not mine:
        raise UsageError(
            f"the gradebook has no attempt of {lesson}",
            fix=f"grade a batch into it first: lessonkit check {lesson} --batch DIR --gradebook F",
        )
    chosen = sorted(counting(mine, policy).values(), key=lambda a: a.student)
    latest = max(mine, key=lambda a: a.id or 0)
    by_student: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in mine:
        by_student[attempt.student].append(attempt)
    tasks = tuple(
        TaskSummary(
            grade.task,
            grade.title,
            grade.optional,
            passed=sum(
                any(t.task == grade.task and t.status == PASSED for t in a.tasks) for a in chosen
            ),
            attempted=sum(
                any(t.task == grade.task and t.status != NOT_ATTEMPTED for t in a.tasks)
                for a in chosen
            ),
            graded=len(chosen),
            failures=_failure_groups(grade.task, mine),
            median_attempts=_median_attempts(grade.task, by_student),
            mistakes=_mistakes(grade.task, chosen, declared.get(grade.task, ())),
        )
        for grade in latest.tasks
    )
    return ClassReport(
        lesson=lesson,
        title=latest.lesson_title,
        policy=policy,
        max_points=latest.max_points,
        totals=tuple(a.points - a.extra_points for a in chosen),
        extra=tuple(a.extra_points for a in chosen),
        submissions=len(mine),
        tasks=tasks,
        attempts_needed=_attempts_needed(by_student),
    )


# --------------------------------------------------------------------------- the page


@dataclass(frozen=True)
class Bar:
    """One bar of a chart, in the chart's own units (the template scales them)."""

    label: str
    value: float
    text: str
    """The value as the bar's label says it."""


@dataclass(frozen=True)
class Chart:
    title: str
    description: str
    bars: tuple[Bar, ...]
    most: float

    def width(self, bar: Bar, full: float) -> float:
        return round(full * bar.value / self.most, 1) if self.most else 0.0


def _pass_rate_chart(report: ClassReport) -> Chart:
    bars = tuple(
        Bar(
            f"{t.title} (optional)" if t.optional else t.title,
            t.pass_rate,
            f"{round(100 * t.pass_rate)}% ({t.passed} of {t.graded})",
        )
        for t in report.tasks
    )
    return Chart(
        "Pass rate per task",
        f"The share of the {report.students} students whose counting attempt passed each task "
        "(a task left out is not passed).",
        bars,
        1.0,
    )


def total_bins(max_points: float) -> tuple[tuple[float, float], ...]:
    """The totals' histogram bins: one per whole point up to 20 points, else ten equal ones."""
    if max_points <= 20:
        return tuple((float(k), float(k)) for k in range(math.ceil(max(max_points, 0)) + 1))
    step = max_points / 10
    return tuple((k * step, (k + 1) * step) for k in range(10))


def bin_of(total: float, bins: Sequence[tuple[float, float]]) -> int:
    """The bin a total falls in: its whole points, or its tenth of the maximum."""
    low, high = bins[0]
    index = int(total) if low == high else int(total / high)
    return min(max(index, 0), len(bins) - 1)


def _totals_chart(report: ClassReport) -> Chart:
    bins = total_bins(report.max_points)
    counts = Counter(bin_of(total, bins) for total in report.totals)
    counts = [counts[k] for k in range(len(bins))]
    bars = tuple(
        Bar(
            f"{low:g}" if low == high else f"{low:.3g} to {high:.3g}",
            count,
            f"{count} student{'s' if count != 1 else ''}",
        )
        for (low, high), count in zip(bins, counts, strict=True)
    )
    earned_extra = sum(1 for e in report.extra if e)
    extra = (
        f" Optional tasks are extra credit and not in these totals: {earned_extra} "
        f"student{'s' if earned_extra != 1 else ''} earned extra points."
        if any(t.optional for t in report.tasks)
        else ""
    )
    return Chart(
        "Distribution of totals",
        f"How many students scored each total of the required tasks (of "
        f"{report.max_points:g} points), {report.policy} attempt counting.{extra}",
        bars,
        float(max(counts, default=0)),
    )


def _mistakes_chart(report: ClassReport) -> Chart | None:
    """Students per declared mistake, task by task (0 where no one made it); None where the
    lesson declares none and no answer made one."""
    bars = tuple(
        Bar(f"{t.title}: {title}", count, f"{count} of {t.graded}")
        for t in report.tasks
        for title, count in t.mistakes
    )
    if not bars:
        return None
    return Chart(
        "Declared mistakes made",
        f"How many of the {report.students} students' counting attempts made each mistake the "
        "lesson declares, by task.",
        bars,
        float(max(b.value for b in bars)),
    )


def render_class_report(
    report: ClassReport,
    similar: SimilarityReport | None = None,
    views: Sequence[PairView] = (),
    threshold: float = 0.5,
) -> str:
    """The page: self-contained (inline style and SVG, no script), so it works offline;
    with `similar`, a section of the most alike pairs, each linked to its side-by-side
    `views` on the page."""
    charts = (_pass_rate_chart(report), _totals_chart(report), _mistakes_chart(report))
    return render_template(
        "class-report.html",
        report=report,
        charts=tuple(c for c in charts if c is not None),
        similar=similar,
        views=tuple(views),
        threshold=threshold,
    )
