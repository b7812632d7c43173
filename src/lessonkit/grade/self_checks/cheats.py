"""The cheat set: three wrong answers built from the lesson itself, which every task must fail.

A declared attempt proves what its author thought of; the cheat set proves, for every task
of every lesson, that the checks can fail at all. From the reference run on the lesson's
inputs it builds, per task:

- *typed-in*: each graded name bound to a literal of the reference's value, and the
  reference's printed lines printed verbatim (caught by other inputs, probes or edges);
- *inputs unchanged*: the reference solution, then each graded name that has an input of
  its layout (a name the steps define and the cell reads) bound to a copy of that input;
- *zeros*: each graded name as zeros of the reference's layout, with the printed lines.

A cheat counts only when it is well formed: on the lesson's inputs alone, its names have
the reference's layout (typed-in: the reference's values and lines too). One that is not is
a bug in this builder, reported as such. A well-formed cheat that passes the real rubric is
the lesson's problem: `lessonkit verify` fails, naming the lesson, the task and the cheat.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import CellReport
from lessonkit.grade.channel.reported import Value
from lessonkit.grade.channel.values import differences, value_problem
from lessonkit.grade.grader import GradedRun, Grader
from lessonkit.grade.judging.results import PASSED, Status
from lessonkit.grade.preparation.prepared import LESSON, PreparedLesson
from lessonkit.grade.preparation.rubric import TaskRubric
from lessonkit.grade.self_checks.attempts import grade_packed, proof
from lessonkit.grade.self_checks.literals import LiteralError, imports_for, literal, zeros
from lessonkit.lesson.model import Lesson
from lessonkit.lesson.syntax import parse_python

CheatKind = Literal["typed-in", "inputs unchanged", "zeros"]
KINDS: tuple[CheatKind, ...] = ("typed-in", "inputs unchanged", "zeros")

HINT = (
    "declare a probe that changes what the cell reads, an edge input in the {grading} block "
    "that the answer must follow, or grade the printed text as a value"
)


@dataclass(frozen=True)
class Cheat:
    """One cheat for one task: the task cell's body, and what it binds each graded name to."""

    task: str
    kind: CheatKind
    code: str
    bound: tuple[tuple[str, str], ...]  # (graded name, what it is bound to, in words)

    def describe(self) -> str:
        said = ", ".join(f"`{name}` = {what}" for name, what in self.bound)
        return said or "only the reference's printed lines"


@dataclass(frozen=True)
class Built:
    """The cheats the lesson allows, and the builder's own errors (its bugs, not the lesson's)."""

    cheats: tuple[Cheat, ...]
    errors: tuple[str, ...]


def read_names(code: str) -> tuple[str, ...]:
    """Every name the code reads, in order of first appearance (inside functions too)."""
    nodes = [n for n in ast.walk(parse_python(code)) if isinstance(n, ast.Name)]
    nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    return tuple(dict.fromkeys(n.id for n in nodes if isinstance(n.ctx, ast.Load)))


def same_layout(expected: Value, got: Value) -> bool:
    """Same containers, keys, leaf kinds, shapes and dtypes; values may differ."""
    return all(d.kind == "value" for d in differences(expected, got))


def _prints(output: str) -> list[str]:
    return [f"print({line!r})" for line in output.splitlines()]


def _with_imports(lines: list[str]) -> str:
    return "\n".join([*imports_for("\n".join(lines)), *lines]) + "\n"


def _typed_in(task: str, names: tuple[str, ...], run: CellReport) -> Cheat:
    lines = [f"{name} = {literal(run.values[name])}" for name in names]
    bound = tuple((name, "a literal of the reference's value") for name in names)
    return Cheat(task, "typed-in", _with_imports(lines + _prints(run.output)), bound)


def _zeros(task: str, names: tuple[str, ...], run: CellReport) -> Cheat:
    lines = [f"{name} = {zeros(run.values[name])}" for name in names]
    bound = tuple((name, "zeros of the reference's layout") for name in names)
    return Cheat(task, "zeros", _with_imports(lines + _prints(run.output)), bound)


def _inputs_unchanged(rubric: TaskRubric, run: CellReport, steps: dict[str, Value]) -> Cheat | None:
    """The solution, then each graded name with an input of its layout bound to a copy of it.

    A copy, not the object itself: the alias check would catch the object, and the point is
    whether the value checks see an answer that is only the input.
    """
    reads = [n for n in read_names(rubric.task.solution) if n in steps]
    bound = []
    for name in rubric.names:
        source = next((n for n in reads if same_layout(run.values[name], steps[n])), None)
        if source is not None:
            bound.append((name, source))
    if not bound:
        return None
    lines = [rubric.task.solution.rstrip("\n"), "import copy"]
    lines += [f"{name} = copy.deepcopy({source})" for name, source in bound]
    described = tuple((name, f"a copy of the input `{source}`") for name, source in bound)
    return Cheat(rubric.task.id, "inputs unchanged", "\n".join(lines) + "\n", described)


def _build(
    kind: CheatKind, rubric: TaskRubric, run: CellReport, steps: dict[str, Value]
) -> Cheat | None:
    if kind == "typed-in":
        return _typed_in(rubric.task.id, rubric.names, run)
    if kind == "zeros":
        return _zeros(rubric.task.id, rubric.names, run)
    return _inputs_unchanged(rubric, run, steps)


def build_cheats(prepared: PreparedLesson, expected: ChildReport) -> Built:
    """Every cheat the reference run allows, task by task, and why any could not be built."""
    lesson, reference = prepared.lesson, prepared.reference
    steps: dict[str, Value] = {}
    if reference.checkpoint is not None:
        run = expected.get(LESSON, reference.checkpoint)
        steps = dict((run.checkpoint or {}) if run is not None else {})
    cheats, errors = [], []
    for rubric in prepared.rubrics:
        task = rubric.task.id
        cell = reference.task_cell(task)
        run = expected.get(LESSON, cell.index) if cell is not None else None
        missing = [n for n in rubric.names if run is None or n not in run.values]
        if run is None or missing:
            why = f"the reference run has no value of {', '.join(missing) or 'this task'}"
            errors.append(_builder_error(lesson, task, "any", why))
            continue
        # with nothing graded, zeros and inputs unchanged are the typed-in cheat again
        for kind in KINDS if rubric.names else KINDS[:1]:
            try:
                cheat = _build(kind, rubric, run, steps)
            except LiteralError as exc:
                errors.append(_builder_error(lesson, task, kind, str(exc)))
                continue
            if cheat is not None:
                cheats.append(cheat)
    return Built(tuple(cheats), tuple(errors))


def _builder_error(lesson: Lesson, task: str, kind: str, why: str) -> str:
    return (
        f"{lesson.path}: lesson {lesson.meta.id}, task {task!r}: the cheat builder could not "
        f"build a well-formed {kind} cheat ({why.rstrip('.')}): this is a bug in lessonkit's cheat "
        "builder, not in the lesson; please report it"
    )


def malformed(
    cheat: Cheat, rubric: TaskRubric, graded: GradedRun, expected: CellReport
) -> str | None:
    """Why the cheat is not well formed on the lesson's inputs alone, or None."""
    if graded.child_report.interfered:
        return f"its run was refused: {graded.child_report.interfered}"
    cell = graded.plan.task_cell(cheat.task)
    got = graded.child_report.get(LESSON, cell.index) if cell is not None else None
    if got is None:
        return "its cell did not run on the lesson's inputs"
    if got.error is not None:
        return f"its cell raised {got.error.type}: {got.error.message[:120]}"
    for name in rubric.names:
        if name not in got.values:
            return f"`{name}` is not defined after its cell runs"
        if not same_layout(expected.values[name], got.values[name]):
            return value_problem(name, expected.values[name], got.values[name])
        if cheat.kind == "typed-in":
            problem = value_problem(name, expected.values[name], got.values[name])
            if problem:
                return problem
    printed = {line.strip() for line in got.output.splitlines()}
    if cheat.kind != "inputs unchanged":
        for line in expected.output.splitlines():
            if line.strip() and line.strip() not in printed:
                return f"it does not print {line.strip()!r}"
    return None


@dataclass(frozen=True)
class CheatVerdict:
    """How the real rubric graded one cheat, or why the cheat was not well formed."""

    cheat: Cheat
    status: Status
    message: str
    malformed: str | None  # set: the builder's bug, and the verdict means nothing


def grade_cheats(lesson: Lesson, grader: Grader, jobs: int = 2) -> tuple[Built, list[CheatVerdict]]:
    """Build the cheat set from the reference run and grade it, one file per round."""
    prepared = grader.prepare(lesson)
    expected = grader.reference(lesson)
    built = build_cheats(prepared, expected)
    rubrics = {r.task.id: r for r in prepared.rubrics}
    verdicts = []
    # Packed as attempts are: three files for any lesson.
    for cheat, run, result in grade_packed(grader, lesson, built.cheats, "cheats", jobs):
        cell = prepared.reference.task_cell(cheat.task)
        assert cell is not None, "the reference plan holds every task"
        reference_run = expected.get(LESSON, cell.index)
        assert reference_run is not None, "build_cheats skips tasks the reference missed"
        why = malformed(cheat, rubrics[cheat.task], run, reference_run)
        verdicts.append(CheatVerdict(cheat, result.status, result.message, why))
    return built, verdicts


@proof(lambda lesson: lesson.grading is not None and bool(lesson.tasks))
def prove_cheats(lesson: Lesson, jobs: int, grader: Grader) -> list[str]:
    """Grade the cheat set; one problem per cheat that passes, or that the builder got wrong."""
    built, verdicts = grade_cheats(lesson, grader, jobs)
    problems = list(built.errors)
    for verdict in verdicts:
        cheat = verdict.cheat
        if verdict.malformed:
            problems.append(_builder_error(lesson, cheat.task, cheat.kind, verdict.malformed))
        elif verdict.status == PASSED:
            problems.append(
                f"{lesson.path}: lesson {lesson.meta.id}, task {cheat.task!r} passes the "
                f"{cheat.kind} cheat ({cheat.describe()}), so its checks cannot tell this "
                f"wrong answer from the right one: {HINT}"
            )
    return problems
