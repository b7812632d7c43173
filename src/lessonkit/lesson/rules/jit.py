"""`jit:` in {grading}: functions a task's cell defines, also called under `jax.jit`.

The grading child traces each use of a named function a second time through `jax.jit` (its
hook, `grading_child/jit_watch.py`, runs for a cell whose request names them under the wire key
`jit`); that needs the cell to bind the function at its top level (a `def` or an assignment)
and to use it. The lesson's own solution is checked for both when the lesson loads, so a
rule that its reference answer could never meet is refused at its line in lesson.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from lessonkit.lesson.rules.base import (
    UNGRADED,
    ChildHooks,
    ErrorFacts,
    Fail,
    Failure,
    OutcomeFacts,
    ParentHooks,
    RuleFacts,
    RuleKind,
)
from lessonkit.lesson.syntax import read_cell

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# Errors JAX raises when Python asks a tracer for a concrete value: what `jit:` rules catch.
_TRACER_ERRORS = frozenset(
    {
        "TracerBoolConversionError",
        "ConcretizationTypeError",
        "TracerIntegerConversionError",
        "TracerArrayConversionError",
    }
)


@dataclass(frozen=True)
class JitRule:
    """Functions one task's cell defines that the grader also calls under `jax.jit`
    (`jit:` in {grading}).

    Each call the cell makes to one of them is traced a second time through `jax.jit`, with
    the same arguments (drawn inputs included), so a Python `if` on a traced value fails
    there even where the plain call works. Like `MethodRule`, it catches the honest mistake.
    """

    functions: tuple[str, ...]
    line: int = field(default=0, compare=False, metadata=UNGRADED)


def jit_rule_gap(rule: JitRule, code: str) -> str | None:
    """Why a cell cannot meet `rule` (a function it does not define or never uses), or None."""
    cell = read_cell(code)
    bound, used = cell.defined, cell.read
    for name in rule.functions:
        if name not in bound:
            return f"it does not define `{name}` at its top level (def {name}(...): ...)"
        if name not in used:
            return f"it defines `{name}` but never uses it, so the grader has no call to repeat"
    return None


def _read(names: object, line: int, fail: Fail) -> JitRule:
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and _IDENTIFIER.fullmatch(n) for n in names)
    ):
        raise fail(
            "must list the names of functions the task's cell defines (task-id: [function_name])"
        )
    return JitRule(tuple(dict.fromkeys(names)), line=line)


def _gap(rule: JitRule, solution: str, steps: tuple[str, ...]) -> str | None:
    """The solution must define each function at its top level and use it."""
    gap = jit_rule_gap(rule, solution)
    return None if gap is None else f"cannot meet its own 'jit' rule: {gap}"


def _not_ok(facts: RuleFacts) -> Iterator[tuple[str, OutcomeFacts]]:
    """(where, outcome) of each function the task's `jit:` rule names that did not run under
    `jax.jit`, on every input set where the cell ran (a cell that raises by itself, not in an
    `assert`, is left to the value checks: its own error comes first)."""
    if facts.rule(JIT) is None or facts.cell_source() is None:
        return
    for on, report in facts.cell_runs():
        for outcome in report.outcomes(JIT.key):
            if outcome.status != "ok":
                yield on, outcome


def _check(facts: RuleFacts) -> Failure | None:
    """The functions the task's `jit:` rule names also run under `jax.jit`."""
    failures = (_outcome_failure(outcome, facts, on) for on, outcome in _not_ok(facts))
    return next(filter(None, failures), None)


def _outcome_failure(outcome: OutcomeFacts, facts: RuleFacts, on: str) -> Failure | None:
    name = outcome.name
    if outcome.status == "error" and outcome.error is not None:
        return Failure(explain_jit_error(name, outcome.error, facts, on), name)
    if outcome.status == "not defined":
        return Failure(
            f"The cell does not define `{name}`: the task asks for a function of that name, "
            "and the grader also calls it under `jax.jit`.",
            name,
        )
    if outcome.status == "not called":
        return Failure(
            f"The cell defines `{name}` but never calls it {on}: compute the task's answer "
            f"with `{name}`, which the grader also calls under `jax.jit`.",
            name,
        )
    return None


def _signature(facts: RuleFacts) -> frozenset[tuple[str, str, str, str | None]] | None:
    """Which functions fail under `jax.jit`, on which inputs, how, and with which error."""
    failed = frozenset(
        (on, o.name, o.status, o.error.type if o.error else None) for on, o in _not_ok(facts)
    )
    return failed or None


def _run_gap(outcomes: Sequence[OutcomeFacts]) -> str | None:
    """How the solution's own run failed the rule: `sq` error: ConcretizationTypeError."""
    for outcome in outcomes:
        if outcome.status != "ok":
            said = f": {outcome.error.type}" if outcome.error is not None else ""
            return f"`{outcome.name}` {outcome.status}{said}"
    return None


def explain_jit_error(name: str, error: ErrorFacts, facts: RuleFacts, on: str) -> str:
    """Why a function that works when called fails under `jax.jit`, at the learner's line."""
    where, statement = facts.error_at(error)
    code = f" (`{statement}`)" if statement else ""
    head = (
        f"`{name}` runs when called directly but fails under `jax.jit`, where the grader "
        f"also calls it {on}: {error.type} at {where}{code}."
    )
    if error.type not in _TRACER_ERRORS:
        return f"{head} {facts.short_message(error.message)}".strip()
    return (
        f"{head} Under jit its arguments are tracers, with a shape and a dtype but no value, "
        "so a Python `if`, `while`, `bool(...)`, `int(...)` or `float(...)` on them cannot "
        "decide anything. Put the decision in the compiled program: `jax.lax.cond`, "
        "`jax.lax.switch`, `jnp.where` or a `jax.lax` loop."
    )


JIT: RuleKind[JitRule] = RuleKind(
    key="jit",
    shape="lists of function names",
    read=_read,
    checks=("jit",),
    parent=ParentHooks(
        gap=_gap,
        fix="name a function the solution defines and calls, or change the solution",
        check=_check,
        words="fails under jax.jit",
        signature=_signature,
    ),
    child=ChildHooks(
        ask=lambda rule: rule.functions,
        run_gap=lambda report: _run_gap(report.outcomes(JIT.key)),
        run_fix="make the solution's function trace under jax.jit, or change the rule",
    ),
)
