"""Which declared mistake a learner's answer makes, and the feedback that names it.

A learner's task cell is matched to a declared mistake when, on every scenario that grades
the task, it behaves like that mistake's (the same values, as the task's `accept:` compares,
and the same way of stopping: to the end, or with the same error class and pytree mismatch)
and somewhere differs from the reference's. Anything less names no mistake: a wrong
diagnosis is worse than none. A mistake whose values are the reference's (an `if`
that fails only under `jax.jit`, a loop the task's `method:` rule forbids) is matched instead
when the learner's values are the reference's too and their answer fails the same check in
the same way: the same forbidden or missing construct, the same function failing under
`jax.jit` with the same error, the same printed lines. The learner then reads the
mistake's title, what it misunderstands and what to do instead, before what the check
found. No attempt's or solution's code is ever shown: only the lesson's own words about it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.grade.channel.protocol import CellReport
from lessonkit.grade.channel.values import value_problem
from lessonkit.grade.judging.checks import Runs, TaskFacts, says_nothing
from lessonkit.grade.judging.explain import failing_statement, tree_mismatch
from lessonkit.grade.judging.mistake_text import diagnosed
from lessonkit.grade.judging.results import NOT_ATTEMPTED, PASSED, TaskResult
from lessonkit.grade.preparation.mistakes import MistakeRun
from lessonkit.grade.preparation.prepared import LESSON, PreparedLesson
from lessonkit.grade.submission.plan import Plan
from lessonkit.lesson.model import DeclaredAttempt
from lessonkit.lesson.rules import RULES, CheckName
from lessonkit.lesson.rules.accept import ACCEPT, EXACT, Accept
from lessonkit.lesson.syntax import LessonCode

UNDIAGNOSED: tuple[CheckName, ...] = ("cell", "attempted", "run")
"""Checks whose problem is not an answer at all: no mistake is looked for."""


def _task_reports(child_report: ChildReport, plan: Plan, task_id: str) -> dict[str, CellReport]:
    """A task cell's report in each scenario of a run, by scenario name."""
    cell = plan.task_cell(task_id)
    if cell is None:
        return {}
    return {
        scenario: run for (scenario, index), run in child_report.runs.items() if index == cell.index
    }


_SIGNATURES = {rule.checks[0]: rule.parent.signature for rule in RULES if rule.parent}
"""A rule's check name -> how a cell fails it, comparable between runs (`ParentHooks.signature`)."""
_VALUE_CHECKS: frozenset[str] = frozenset(ACCEPT.checks)
"""The checks that compare the task's values (those `accept:` applies to)."""


def _failure(check: CheckName | None, facts: TaskFacts, scenarios: Iterable[str]) -> object:
    """How a run whose values are the reference's fails `check` (None: it does not): the
    rule's signature for a rule's check (the method rule's breach, the functions that fail
    under `jax.jit` and how), what the cell prints per scenario for a value check."""
    if check in _SIGNATURES:
        return _SIGNATURES[check](facts)
    if check in _VALUE_CHECKS:
        reports = _task_reports(facts.runs.child_report, facts.runs.learner, facts.rubric.task.id)
        return tuple((s, reports[s].output if s in reports else None) for s in sorted(scenarios))
    return None


def _as_run(facts: TaskFacts, plan: Plan, child_report: ChildReport) -> TaskFacts:
    """The same task's facts, read from another run of it (the reference's, a mistake's)."""
    return replace(facts, runs=replace(facts.runs, learner=plan, child_report=child_report))


def _own_check(run: CellReport, plan: Plan) -> bool:
    """The run stopped at an `assert` statement, failing or unable to compute what it
    compares: the learner's own check, which an attempt may leave out."""
    if run.error is None:
        return False
    statement = failing_statement(run.error, plan).lstrip()
    return run.error.type == "AssertionError" or statement.startswith("assert ")


def _stop(run: CellReport) -> tuple[str, str | None] | None:
    """How a run of a cell stopped, as the learner reads it: the error's class and, for a
    pytree mismatch, which named tree lacks what (`explain.tree_mismatch`); None: it ran to
    its end (an error it caught is seen only in its values and printed lines)."""
    if run.error is None:
        return None
    return run.error.type, tree_mismatch(run.error)


def _agree(
    names: Iterable[str],
    a: CellReport | None,
    b: CellReport | None,
    accept: Accept,
    plans: tuple[Plan, Plan],
) -> bool:
    """Both runs of a cell (of `plans`) behaved alike: they ran to the end or stopped the
    same way (one run's own check excepted, `_own_check`), and the graded names both reached
    have the same values. A name only one reached is left out where both stopped the same way
    (at another statement of one failure) or the other's own check stopped it first."""
    if a is None or b is None:
        return a is None and b is None
    own_a, own_b = _own_check(a, plans[0]), _own_check(b, plans[1])
    same_stop = _stop(a) == _stop(b)
    if not (same_stop or own_a or own_b):
        return False
    for name in names:
        if name in a.values and name in b.values:
            if value_problem(name, a.values[name], b.values[name], accept):
                return False
        elif name in a.values or name in b.values:
            short, short_own = (b, own_b) if name in a.values else (a, own_a)
            if not (short_own or (same_stop and short.error is not None)):
                return False
    return True


def _reads_its_state(facts: TaskFacts, attempt: DeclaredAttempt, code: LessonCode) -> bool:
    """Whether the learner's cell reads (itself, or through a helper another cell of their
    file defines) every name of the lesson's state that the mistake's cell reads and the
    reference's answer does not: `loss` for the flat model's gradient taken again, `grads`
    for a g assembled from them. Those names are what the mistake is about, so a cell that
    does not read them does not make it, however alike the values (a g by a Taylor series
    read out of an outer derivative is as unmoved by a probe of JAX's derivatives as one of
    the flat model). A cell that does not parse is not read (True: its values decide)."""
    reference, task_id = facts.runs.reference, facts.rubric.task.id
    own_cell = reference.task_cell(task_id)
    state: set[str] = set()
    for cell in reference.cells:
        known = code.cells.get(cell.source)
        if cell is not own_cell and known is not None:
            state.update(known.assigned, known.defined)
    solution = code.cells.get(facts.rubric.task.solution)
    mistake = code.cells.get(attempt.code)
    if solution is None or mistake is None:
        return True
    binds_itself = {*mistake.assigned, *mistake.defined}
    needed = (mistake.read & state) - solution.read - binds_itself
    read = facts.cell_reads() if needed else None
    return read is None or needed <= read


def matched_mistake(
    facts: TaskFacts,
    mistakes: tuple[MistakeRun, ...],
    scenarios: frozenset[str] | None = None,
    check: CheckName | None = None,
    code: LessonCode | None = None,
) -> DeclaredAttempt | None:
    """The first declared mistake of this task that the learner's answer behaves like on
    every scenario of the reference that grades the task (`scenarios`; None: all): the same
    values, stopped the same way (`_agree`); where the learner's values are the reference's,
    the mistake must also fail the learner's `check` the same way (for a value check, print
    the same lines). `facts` are the task's, as its checks read them.

    A probe that says nothing about a run (`checks.says_nothing`: the cell took no derivative
    it could change, or bound no name where it is changed) is no evidence about that run
    either way: the learner is not set apart by it, and learner and mistake are compared
    without it. But a mistake explains the learner only if it says something wherever the
    learner is set apart: a mistake the probe never reached cannot be the one it found.

    With the lesson's code read once (`code`), a mistake is also named only for a cell that
    reads the lesson's state the mistake is about (`_reads_its_state`)."""
    rubric, runs = facts.rubric, facts.runs
    task_id, names, accept = rubric.task.id, rubric.names, rubric.rule(ACCEPT) or EXACT
    expected = _task_reports(runs.expected, runs.reference, task_id)
    if scenarios is not None:
        expected = {s: run for s, run in expected.items() if s in scenarios}
    probes = {run.name: run.probe for run in facts.probes}

    def evidence(scenario: str, run: CellReport | None) -> bool:
        probe = probes.get(scenario)
        return probe is None or run is None or not says_nothing(probe, expected[scenario], run)

    got = _task_reports(runs.child_report, runs.learner, task_id)
    judged = [s for s in expected if evidence(s, got.get(s))]
    both = (runs.reference, runs.learner)
    apart = [s for s in judged if not _agree(names, expected[s], got.get(s), accept, both)]
    differs = bool(apart)
    failure = None if differs else _failure(check, facts, expected)
    reference = _as_run(facts, runs.reference, runs.expected)
    if failure is not None and failure == _failure(check, reference, expected):
        failure = None  # nothing the check reads sets the learner apart from the reference
    if not differs and failure is None:
        return None  # the learner's values are the reference's: no mistake to name
    for mistake in mistakes:
        if mistake.attempt.task != task_id:
            continue
        made = _task_reports(mistake.child_report, mistake.plan, task_id)
        reached = any(n in run.values for run in made.values() for n in names)
        plans = (mistake.plan, runs.learner)
        alike = all(
            _agree(names, made.get(s), got.get(s), accept, plans)
            for s in judged
            if evidence(s, made.get(s))
        )
        explains = all(evidence(s, made.get(s)) for s in apart)
        if not (reached and alike and explains):
            continue
        if code is not None and not _reads_its_state(facts, mistake.attempt, code):
            continue
        made_facts = _as_run(facts, mistake.plan, mistake.child_report)
        if differs or _failure(check, made_facts, expected) == failure:
            return mistake.attempt
    return None


def graded_scenarios(prepared: PreparedLesson) -> dict[str, frozenset[str]]:
    """Per task, the scenarios its checks read: the lesson's inputs, the drawn input sets
    and the task's own probes (another task's probe says nothing about this one)."""
    common = {LESSON, *(s.name for s in prepared.inputs.others)}
    return {
        r.task.id: frozenset(
            common | {p.name for p in prepared.probes if p.probe.task == r.task.id}
        )
        for r in prepared.rubrics
    }


def diagnose_all(
    tasks: tuple[TaskResult, ...],
    prepared: PreparedLesson,
    runs: Runs,
    mistakes: tuple[MistakeRun, ...],
) -> tuple[TaskResult, ...]:
    """Every failed or erroring task's verdict, with the declared mistake it makes, if any."""
    by_id = {r.task.id: r for r in prepared.rubrics}
    scenarios = graded_scenarios(prepared)
    out = []
    for result in tasks:
        rubric = by_id.get(result.id)
        if (
            rubric is None
            or result.status in (NOT_ATTEMPTED, PASSED)
            or result.check in UNDIAGNOSED
        ):
            out.append(result)
            continue
        facts = TaskFacts(rubric, prepared.inputs, prepared.probes_of(result.id), runs)
        mistake = matched_mistake(
            facts, mistakes, scenarios.get(result.id), result.check, prepared.layout.code
        )
        out.append(diagnosed(result, rubric.task, mistake))
    return tuple(out)
