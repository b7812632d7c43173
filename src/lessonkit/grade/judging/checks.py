"""Per-task and per-prerequisite checks: small functions over reported values.

Every comparison happens here, in the parent, against the reference solution's values on
the same inputs. Task checks run in a fixed order and each returns a `Problem` or None; the
first problem is the task's verdict: its cell exists (once), no placeholder stopped it, it is
right on the lesson's inputs, right on the other input sets, and its checks respond to
the probes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import CellReport, ErrorInfo
from lessonkit.grade.channel.reported import Value
from lessonkit.grade.channel.values import difference_path, value_detail, value_problem
from lessonkit.grade.judging.explain import (
    _short_message,
    explain_error,
    failing_statement,
    last_line,
)
from lessonkit.grade.judging.hints import hint_applies
from lessonkit.grade.judging.results import (
    ERROR,
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    CheckName,
    PrerequisiteResult,
    Status,
    TaskResult,
)
from lessonkit.grade.preparation.inputs import InputSet, LessonInputs
from lessonkit.grade.preparation.prepared import LESSON, PreparedLesson
from lessonkit.grade.preparation.probes import ProbeRun
from lessonkit.grade.preparation.rubric import TaskRubric
from lessonkit.grade.submission.plan import LESSON_ONLY, Plan, PlannedCell, PracticeLayout
from lessonkit.grading_child.placeholders import PREFIX
from lessonkit.lesson.model import Lesson, Probe
from lessonkit.lesson.rules import RULES, Failure, RuleKind, TaskRule
from lessonkit.lesson.rules.accept import ACCEPT, EXACT, Accept
from lessonkit.lesson.syntax import read_cell, read_cells, reads_through_functions

R = TypeVar("R", bound=TaskRule)


@dataclass(frozen=True)
class Runs:
    """The learner's run and the reference run, each with the plan it ran."""

    learner: Plan
    child_report: ChildReport
    reference: Plan
    expected: ChildReport
    timeout: float
    memory: int | None = None  # the learner child's memory limit, for its message

    def explain(self, error: ErrorInfo) -> str:
        """An error of the learner's run in their words, naming the limit it ran past."""
        return explain_error(error, self.learner, self.timeout, self.memory)

    def expected_steps(self, scenario: str) -> dict[str, Value]:
        """The names the lesson's steps define, as the reference computed them."""
        if self.reference.checkpoint is None:
            return {}
        run = self.expected.get(scenario, self.reference.checkpoint)
        return (run.checkpoint or {}) if run is not None else {}

    def learner_steps(self, scenario: str) -> dict[str, Value] | None:
        """The same names after the learner's step cells; None when those were not reached."""
        if self.learner.checkpoint is None:
            return {}
        run = self.child_report.get(scenario, self.learner.checkpoint)
        return (run.checkpoint or {}) if run is not None else None


@dataclass(frozen=True)
class TaskFacts:
    """Everything one task's checks may read."""

    rubric: TaskRubric
    inputs: LessonInputs
    probes: tuple[ProbeRun, ...]  # every copy of each of this task's probes, in order
    runs: Runs

    @property
    def cell(self) -> PlannedCell | None:
        return self.runs.learner.task_cell(self.rubric.task.id)

    def pair(self, scenario: str) -> tuple[CellReport | None, CellReport | None]:
        """(reference, learner) runs of this task's cell in one scenario."""
        reference_cell = self.runs.reference.task_cell(self.rubric.task.id)
        assert reference_cell is not None, "the reference plan holds every task"
        expected = self.runs.expected.get(scenario, reference_cell.index)
        cell = self.cell
        got = self.runs.child_report.get(scenario, cell.index) if cell is not None else None
        return expected, got

    # What a rule's check reads (`lesson.rules.RuleFacts`).

    def rule(self, kind: RuleKind[R]) -> R | None:
        return self.rubric.rule(kind)

    def cell_source(self) -> str | None:
        cell = self.cell
        return None if cell is None else cell.source

    def other_sources(self) -> tuple[str, ...]:
        cell = self.cell
        return tuple(
            c.source for c in self.runs.learner.cells if cell is None or c.index != cell.index
        )

    def cell_reads(self) -> frozenset[str] | None:
        """What the learner's task cell reads, with what the helpers it calls from their
        other cells read; None where there is no such cell or it does not parse."""
        if (source := self.cell_source()) is None:
            return None
        try:
            cell = read_cell(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return reads_through_functions(cell, read_cells(self.other_sources()).cells.values())

    def cell_line(self, line: int) -> str:
        cell = self.cell
        assert cell is not None, "a rule's check reads a line of a cell it found"
        return self.runs.learner.where(cell.index, line + cell.offset)

    def cell_runs(self) -> Iterator[tuple[str, CellReport]]:
        scenarios = [(LESSON, "on the lesson's inputs")]
        scenarios += [
            (s.name, f"on {'edge' if s.kind == 'edge' else 'other'} inputs ({s.describe()})")
            for s in self.inputs.others
        ]
        for scenario, on in scenarios:
            _, got = self.pair(scenario)
            if got is not None and (got.error is None or _is_assertion(got)):
                yield on, got

    def error_at(self, error: ErrorInfo) -> tuple[str, str]:
        plan = self.runs.learner
        return last_line(error, plan), failing_statement(error, plan)

    def short_message(self, message: str) -> str:
        return _short_message(message)


@dataclass(frozen=True)
class Problem:
    """What a check found wrong with a task: the task's status, one message, and the key
    path (`name/layer/weight`, or the name alone) of the value it is about, if any."""

    status: Status
    message: str
    path: str | None = None
    suspicion: str | None = None
    """A guess at the cause, said after `message` unless a declared mistake explains it."""


def _first(problems: Iterable[Problem | None]) -> Problem | None:
    return next(filter(None, problems), None)


def not_reached(child_report: ChildReport, plan: Plan, what: str, own: int | None = None) -> str:
    """Why a cell has no report: the run stopped earlier, or in this very cell (`own`)."""
    reason = child_report.stop_reason or "the run stopped"
    if child_report.stopped_at is not None:
        scenario, index = child_report.stopped_at
        if index == own:
            return f"{what} did not finish: {reason}."
        if 0 <= index < len(plan.cells):
            place = plan.place(index)
            inputs = "" if scenario == LESSON else " (on other inputs)"
            return f"{what} was not reached: {reason}, in {place}{inputs}."
    return f"{what} was not reached: {reason}."


def _is_assertion(run: CellReport) -> bool:
    error = run.error
    return error is not None and error.kind == "exception" and error.type == "AssertionError"


def _failed_check(error: ErrorInfo, plan: Plan) -> str:
    """`The assertion at line 231 fails (`assert ...`)` or `Line 240 raises AssertionError`."""
    statement = failing_statement(error, plan)
    where = last_line(error, plan)
    if statement.startswith("assert"):
        return f"The assertion at {where} fails (`{statement}`)"
    message = error.message.strip().splitlines()
    said = f" ({message[0][:80]})" if message else ""
    return f"{where[:1].upper()}{where[1:]} raises AssertionError{said}"


# --------------------------------------------------------------------------- task checks


def _missing_names(facts: TaskFacts, run: CellReport) -> list[str]:
    return [n for n in facts.rubric.names if n not in run.values]


def _differs(name: str, expected: CellReport, got: CellReport, accept: Accept = EXACT) -> bool:
    """Both runs reached `name` and its values differ (as the task's `accept` compares)."""
    if name not in got.values or name not in expected.values:
        return False
    return value_problem(name, expected.values[name], got.values[name], accept) is not None


def _cell_present(facts: TaskFacts) -> Problem | None:
    marker = f"# TASK {facts.rubric.task.id}"
    plan = facts.runs.learner
    cells = [c for c in plan.cells if c.task == facts.rubric.task.id]
    if len(cells) > 1:
        places = " and ".join(plan.place(c.index) for c in cells[:2])
        more = f" (and {len(cells) - 2} more)" if len(cells) > 2 else ""
        return Problem(
            ERROR,
            f"More than one cell starts with `{marker}`: {places}{more}; the grader cannot tell "
            "which is your answer. Keep that first line in one cell only (delete the other "
            "cell, or its first line).",
        )
    if cells:
        return None
    return Problem(
        ERROR,
        f"No cell starting with `{marker}` was found. Keep that first line in the task's "
        "cell (or run `lessonkit start` for a fresh copy of the practice file).",
    )


def _attempted(facts: TaskFacts) -> Problem | None:
    """Not attempted: on the lesson's inputs a placeholder ran in the task's cell (the
    child's report: a `todo(...)`, escaped or caught) and a name the task grades is still
    unbound after it. A placeholder that never ran, or one after every name is bound, leaves
    the task to be graded on its values."""
    cell = facts.cell
    _, got = facts.pair(LESSON)
    if cell is None or got is None or got.placeholder is None:
        return None
    missing = _missing_names(facts, got)
    if not missing:
        return None
    placeholder, plan = got.placeholder, facts.runs.learner
    lines = [line for index, line, _ in placeholder.frames if index == cell.index]
    where = plan.where(cell.index, lines[-1]) if lines else plan.place(cell.index)
    text = placeholder.message.removeprefix(PREFIX).strip().split("\n", 1)[0][:120]
    what = f' ("{text}")' if text else ""
    return Problem(
        NOT_ATTEMPTED,
        f"todo(...) is still at {where}{what} and ran before `{missing[0]}` was assigned.",
    )


def _rule_check(check: Callable[[TaskFacts], Failure | None]):
    """A rule's own check (`lesson.rules`), its failure the task's verdict."""

    def run(facts: TaskFacts) -> Problem | None:
        failure = check(facts)
        return None if failure is None else Problem(FAILED, failure.message, failure.path)

    return run


def _lesson_inputs(facts: TaskFacts) -> Problem | None:
    runs, cell = facts.runs, facts.cell
    expected, got = facts.pair(LESSON)
    if got is None or expected is None:
        return Problem(
            ERROR, not_reached(runs.child_report, runs.learner, "This task's cell", cell.index)
        )
    if got.error and not _is_assertion(got):
        return Problem(ERROR, runs.explain(got.error))
    accept = facts.rubric.rule(ACCEPT)
    for name in facts.rubric.names:
        if _differs(name, expected, got, accept):
            want, have = expected.values[name], got.values[name]
            problem = value_problem(name, want, have, accept)
            return Problem(FAILED, problem, difference_path(name, want, have, accept))
    missing = _missing_names(facts, got)
    if got.error:
        failed = _failed_check(got.error, runs.learner)
        if missing:
            return Problem(
                FAILED,
                f"{failed} before `{missing[0]}` is assigned; the values before it are right, "
                "so look at what it checks.",
                missing[0],
            )
        return Problem(FAILED, f"{failed} although every value is right: check what it compares.")
    if missing:
        return Problem(FAILED, f"`{missing[0]}` is not defined after the cell runs.", missing[0])
    return _printed(expected, got)


def _printed(expected: CellReport, got: CellReport) -> Problem | None:
    """Lines the reference prints (e.g. `Expected tree mismatch`) must be printed too."""
    printed = {line.strip() for line in got.output.splitlines()}
    for line in expected.output.splitlines():
        if line.strip() and line.strip() not in printed:
            seen = next((s for s in got.output.splitlines() if s.strip()), "")
            said = f'; it printed "{seen[:60]}"' if seen else "; it printed nothing"
            return Problem(FAILED, f'The cell should print "{line.strip()}"{said}.')
    return None


def _inputs_kept(facts: TaskFacts, scenario: str, names: Iterable[str]) -> str | None:
    """Other values reach a task only if the step cells let the grader replace them."""
    expected = facts.runs.expected_steps(scenario)
    got = facts.runs.learner_steps(scenario)
    if got is None:
        return None
    for name in names:
        if name not in expected:
            continue
        if name not in got:
            return f"`{name}` is not defined"
        problem = value_problem(name, expected[name], got[name])
        if problem:
            return problem.rstrip(".")
    return None


def _not_replaced(kept: str, names: Iterable[str]) -> Problem:
    listed = " and ".join(f"`{n}`" for n in names)
    return Problem(
        FAILED,
        f"The grader could not give the step cells other inputs ({kept}). Keep {listed} "
        "as plain assignments in the step cell, so they can be replaced.",
    )


def _other_inputs(facts: TaskFacts) -> Problem | None:
    return _first(_one_input_set(facts, inputs) for inputs in facts.inputs.others)


def _one_input_set(facts: TaskFacts, inputs: InputSet) -> Problem | None:
    runs, cell = facts.runs, facts.cell
    expected, got = facts.pair(inputs.name)
    edge = inputs.kind == "edge"
    on = f"on {'edge' if edge else 'other'} inputs ({inputs.describe()})"
    if got is None or expected is None:
        what = f"This task's cell {on}"
        return Problem(ERROR, not_reached(runs.child_report, runs.learner, what, cell.index))
    kept = _inputs_kept(facts, inputs.name, facts.inputs.names)
    if kept:
        return _not_replaced(kept, facts.inputs.names)
    if got.error and not _is_assertion(got):
        explained = runs.explain(got.error)
        return Problem(ERROR, f"On other inputs ({inputs.describe()}): {explained}")
    for name in facts.rubric.names:
        if _differs(name, expected, got, facts.rubric.rule(ACCEPT)):
            want, have = expected.values[name], got.values[name]
            detail = value_detail(want, have, facts.rubric.rule(ACCEPT))
            why = (
                "It assumes something (a start value, a bound) that holds only for inputs "
                "inside the usual range: compute it from the inputs themselves."
                if edge
                else "It looks hard-coded, or it leaves out a term that vanishes on the "
                "lesson's inputs: compute it from the inputs."
            )
            return Problem(
                FAILED,
                f"`{name}` is right on the lesson's inputs but not {on}: {detail}.",
                difference_path(name, want, have, facts.rubric.rule(ACCEPT)),
                why,
            )
    missing = _missing_names(facts, got)
    if missing and got.error:
        return Problem(
            FAILED,
            f"{_failed_check(got.error, runs.learner)} {on}, which stops the cell before "
            f"`{missing[0]}` is assigned: the check holds only on the lesson's inputs.",
            missing[0],
            "Compare with values computed from the inputs, not typed-in numbers.",
        )
    if missing:
        return Problem(
            FAILED, f"`{missing[0]}` is not defined after the cell runs {on}.", missing[0]
        )
    return None


def _probes(facts: TaskFacts) -> Problem | None:
    """A probe passes only if every copy does (`probes.COPIES`). A probe's
    copies come together, so the verdict is its first failing copy's: one message, naming
    the probe once, with that copy's values."""
    return _first(_one_probe(facts, run) for run in facts.probes)


def says_nothing(probe: Probe, expected: CellReport, got: CellReport) -> bool:
    """A probe of JAX's derivatives or of a name where the cell binds it says nothing of a run
    it did not reach (by hand, by finite differences; a name bound beside another graded one)
    where it reached the reference's."""
    return probe.source in ("gradients", "binding") and expected.reached and not got.reached


def _one_probe(facts: TaskFacts, run: ProbeRun) -> Problem | None:
    """Every value the reference's solution computes under the probe, the learner's must too.

    The reference alone says what applies: a name it assigns in this scenario is checked,
    and a learner's cell that does not assign it, stopped or not, fails. A probe of JAX's
    derivatives may say nothing about the cell (`says_nothing`): it is judged elsewhere.
    """
    runs, cell, probe = facts.runs, facts.cell, run.probe
    expected, got = facts.pair(run.name)
    if expected is None:
        return None  # the grader checked the reference's run of every probe: not reached here
    if got is None:
        what = f"This task's cell, run with {probe.name},"
        return Problem(ERROR, not_reached(runs.child_report, runs.learner, what, cell.index))
    if says_nothing(probe, expected, got):
        return None
    replaced = tuple(run.inputs or ())  # the probe's own drawn inputs, and a step's name
    step = (probe.target,) if probe.source == "step" else ()
    for names in (tuple(n for n in replaced if n not in step), step):
        kept = _inputs_kept(facts, run.name, names)
        if kept:
            return _not_replaced(kept, names)
    messages = dict(probe.messages)
    for name in facts.rubric.names:
        if name not in expected.values:
            continue
        if name not in got.values:
            stopped = f": {_stopped(got, runs)}" if got.error else ""
            return Problem(
                FAILED,
                f"`{name}` is not defined after the cell runs with {probe.name}{stopped}.",
                name,
            )
        accept = facts.rubric.rule(ACCEPT)
        if _differs(name, expected, got, accept):
            want, have = expected.values[name], got.values[name]
            detail = value_detail(want, have, accept)
            plain = f"`{name}` is wrong when the cell runs with {probe.name}."
            authored = messages.get(name) if _message_describes(facts, probe) else None
            return Problem(
                FAILED,
                (authored or plain) + f" (With {probe.name}: {detail}.)",
                difference_path(name, want, have, accept),
            )
    return None


def _message_describes(facts: TaskFacts, probe: Probe) -> bool:
    """Whether a probe's own message (how the value follows what the probe changed) is true
    of the learner's cell. A probe that gives a name another value declares which cell its
    messages speak of (`MessagesWhen`): one that reads the name (a `g` that reuses `grads`,
    itself or through a function another cell defines), one that never reads it (a count
    typed in), or any. Any other cell (a `g` by finite differences) gets the plain message."""
    if probe.messages_when == "always" or facts.cell_source() is None:
        return probe.messages_when != "read"
    read = facts.cell_reads()
    return read is not None and (probe.target in read) == (probe.messages_when == "read")


def _stopped(run: CellReport, runs: Runs) -> str:
    assert run.error is not None
    if _is_assertion(run):
        return _failed_check(run.error, runs.learner)
    return runs.explain(run.error).rstrip(".")


TASK_CHECKS: tuple[tuple[CheckName, Callable[[TaskFacts], Problem | None]], ...] = (
    ("cell", _cell_present),
    ("attempted", _attempted),
    *((rule.checks[0], _rule_check(rule.parent.check)) for rule in RULES if rule.parent),
    ("lesson inputs", _lesson_inputs),
    ("other inputs", _other_inputs),
    ("probes", _probes),
)
"""Each check, named as a verdict records which one found the problem."""

RULE_CHECKS: dict[str, tuple[CheckName, ...]] = {rule.key: rule.checks for rule in RULES}
"""The checks of `TASK_CHECKS` that apply each per-task rule (`lesson.rules.RULES`), by its
key; a rule with a check of its own gives it its name. A unit test keeps each one run."""


def check_task(facts: TaskFacts, steps_hold: bool) -> TaskResult:
    """Run the task checks in order; the first problem is the verdict."""
    task = facts.rubric.task
    found = next(
        ((name, problem) for name, check in TASK_CHECKS if (problem := check(facts))), None
    )
    if found is None:
        drawn, edges = facts.inputs.count("drawn"), facts.inputs.count("edge")
        also = f" and on {edges} edge input set{'s' if edges > 1 else ''}" if edges else ""
        message = (
            f"Right on the lesson's inputs, on {drawn} input set{'s' if drawn > 1 else ''} "
            "drawn at random "
            f"(seed {facts.inputs.seed}){also}."
        )
        return TaskResult(task.id, task.title, PASSED, message, None, task.optional)
    check, problem = found
    message = problem.message + (f" {problem.suspicion}" if problem.suspicion else "")
    if problem.status in (FAILED, ERROR) and not steps_hold:
        message += " (The steps this task builds on do not hold yet: see the prerequisites.)"
    # A hint helps after a try; for a task not yet attempted it would give the answer away.
    fits = hint_applies(task, problem.status, check, None)
    hint = " ".join(task.hint.split()) if fits else None
    return TaskResult(
        task.id,
        task.title,
        problem.status,
        message,
        hint,
        task.optional,
        check,
        problem.path,
        suspicion=problem.suspicion,
    )


# --------------------------------------------------------------------------- prerequisites


def _cell_outcome(name: str, cell: PlannedCell, runs: Runs, what: str) -> PrerequisiteResult:
    """How one learner cell ran on the lesson's inputs."""
    run = runs.child_report.get(LESSON, cell.index)
    if run is None:
        return PrerequisiteResult(name, ERROR, not_reached(runs.child_report, runs.learner, what))
    if run.error is None:
        return PrerequisiteResult(name, PASSED, "")
    if _is_assertion(run):
        return PrerequisiteResult(name, FAILED, f"{_failed_check(run.error, runs.learner)}.")
    return PrerequisiteResult(name, ERROR, runs.explain(run.error))


def _step_result(
    lesson: Lesson, layout: PracticeLayout, index: int, runs: Runs
) -> PrerequisiteResult:
    """A step holds when its cell runs and the names it defines have the reference's values."""
    step = lesson.steps[index]
    name = f"Step {step.number} · {step.title}"
    cell = runs.learner.labelled(f"step-{step.number}")
    if cell is not None:
        outcome = _cell_outcome(name, cell, runs, "This step")
        if outcome.status != PASSED:
            return outcome
    expected, got = runs.expected_steps(LESSON), runs.learner_steps(LESSON)
    if got is None:
        return PrerequisiteResult(
            name, ERROR, not_reached(runs.child_report, runs.learner, "This step")
        )
    for value_name in layout.code.of(step.code).bound:
        if value_name not in expected:
            continue
        if value_name not in got:
            missing = "No cell matches this step, and " if cell is None else ""
            message = f"{missing}`{value_name}` is not defined after the steps run."
            return PrerequisiteResult(name, FAILED, message)
        problem = value_problem(value_name, expected[value_name], got[value_name])
        if problem:
            return PrerequisiteResult(name, FAILED, problem)
    return PrerequisiteResult(name, PASSED, "")


def check_prerequisites(prepared: PreparedLesson, runs: Runs) -> tuple[PrerequisiteResult, ...]:
    """The steps (their values), the core experiments (they run), then any other failing cell."""
    lesson, layout = prepared.lesson, prepared.layout
    results = [_step_result(lesson, layout, i, runs) for i in range(len(lesson.steps))]
    known = {c.label: c for c in layout.cells}
    checked = {f"step-{s.number}" for s in lesson.steps}
    for label, lesson_cell in known.items():
        if lesson_cell.role != LESSON_ONLY:
            continue
        checked.add(label)
        cell = runs.learner.labelled(label)
        if cell is None:
            message = "No cell in the file matches it; restore it from the lesson."
            results.append(PrerequisiteResult(lesson_cell.title, FAILED, message))
        else:
            results.append(_cell_outcome(lesson_cell.title, cell, runs, "This cell"))
    for cell in runs.learner.cells:
        if cell.task is not None or cell.label in checked:
            continue
        what = known[cell.label].title if cell.label in known else "Cell"
        outcome = _cell_outcome(
            f"{what} ({runs.learner.place(cell.index)})", cell, runs, "This cell"
        )
        if outcome.status != PASSED and runs.child_report.get(LESSON, cell.index) is not None:
            results.append(outcome)
    return tuple(results)


def check_all(
    prepared: PreparedLesson, runs: Runs
) -> tuple[tuple[TaskResult, ...], tuple[PrerequisiteResult, ...]]:
    """Prerequisites first (a task's message says when its steps do not hold), then tasks."""
    lesson = prepared.lesson
    prerequisites = check_prerequisites(prepared, runs)
    steps_hold = all(p.status == PASSED for p in prerequisites[: len(lesson.steps)])
    tasks = tuple(
        check_task(TaskFacts(r, prepared.inputs, prepared.probes_of(r.task.id), runs), steps_hold)
        for r in prepared.rubrics
    )
    return tasks, prerequisites
