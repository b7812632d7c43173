"""The per-task rules of the `{grading}` block (`accept:`, `method:`, `jit:`): one entry each.

Each rule maps task ids to one value (`method: {clip-update: {forbid: [if]}}`). `TASK_RULES`
is the one table of them: for each rule, how one task's value is read and why the lesson's
own solution could not meet it, side by side. One loop in `grading_block` reads every rule,
one in `validate` checks them against the lesson, and `grade.judging.checks.RULE_CHECKS` names the
checks that apply each one, keyed by the same names (a unit test keeps the tables equal).
So a new rule is its dataclass in the model, one entry here, its field on `TaskRubric` and
the check that applies it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from lessonkit.lesson.jit_rule import jit_rule_gap
from lessonkit.lesson.methods import method_breach
from lessonkit.lesson.model import STATEMENTS, Accept, JitRule, Lesson, MethodRule, Task, TaskRule

R = TypeVar("R", bound=TaskRule)
Fail = Callable[[str], Exception]
"""Makes the error for one task's value: `fail("must list ...")` reads `jit 'my-task': must
list ...`, at the task's line in lesson.md."""

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
_ACCEPT_KEYS = frozenset({"mappings", "floats"})
_METHOD_KEYS = frozenset({"require", "forbid"})
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class TaskRuleKind(Generic[R]):
    """One per-task rule: what it maps task ids to, how it reads one task's value, and what
    keeps a rule that the lesson's own solution could never meet from loading."""

    shape: str  # what the rule maps task ids to, as its error says: "lists of function names"
    read: Callable[[object, int, Fail], R]  # one task's value, declared at that line
    gap: Callable[[R, Task, Lesson], str | None] | None = None
    """Why the solution of the task cannot meet the rule ("breaks its own 'method' rule:
    ..."), or None; None for a rule any solution meets."""
    fix: str | None = None  # what to do about a gap


def _read_accept(rule: object, line: int, fail: Fail) -> Accept:
    if not isinstance(rule, dict) or not rule:
        raise fail("must be a mapping with mappings and/or floats")
    unknown = set(rule) - _ACCEPT_KEYS
    if unknown:
        raise fail(
            f"unknown key {sorted(unknown)[0]!r}; allowed: {', '.join(sorted(_ACCEPT_KEYS))}"
        )
    mappings = rule.get("mappings", "exact")
    if mappings not in ("exact", "any"):
        raise fail(f"'mappings' must be any or exact, got {mappings!r}")
    floats = rule.get("floats", [])
    if (
        not isinstance(floats, list)
        or any(f not in FLOAT_DTYPES for f in floats)
        or len(set(floats)) != len(floats)
        or len(floats) == 1
    ):
        raise fail(f"'floats' must list two or more of {', '.join(FLOAT_DTYPES)}")
    return Accept(mappings, tuple(floats), line=line)


def _read_method(rule: object, line: int, fail: Fail) -> MethodRule:
    if not isinstance(rule, dict) or not rule or set(rule) - _METHOD_KEYS:
        raise fail("must be a mapping with require and/or forbid")
    lists = {key: rule.get(key) or [] for key in sorted(_METHOD_KEYS)}
    for key, entries in lists.items():
        if not isinstance(entries, list) or not all(
            isinstance(e, str) and (e in STATEMENTS or _DOTTED.fullmatch(e)) for e in entries
        ):
            raise fail(
                f"'{key}' must list dotted names the cell calls "
                f"(module.function) or the statements {', '.join(STATEMENTS)}"
            )
    both = set(lists["require"]) & set(lists["forbid"])
    if both:
        raise fail(f"{sorted(both)[0]!r} is both required and forbidden")
    return MethodRule(tuple(lists["require"]), tuple(lists["forbid"]), line=line)


def _method_gap(rule: MethodRule, task: Task, lesson: Lesson) -> str | None:
    """The solution, with the steps' imports, must use what the rule asks and nothing it bans."""
    breach = method_breach(rule, task.solution, [step.code for step in lesson.steps])
    if breach is None:
        return None
    return "breaks its own 'method' rule: " + breach.message(
        f"solution line {breach.line}" if breach.line else None
    )


def _read_jit(names: object, line: int, fail: Fail) -> JitRule:
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and _IDENTIFIER.fullmatch(n) for n in names)
    ):
        raise fail(
            "must list the names of functions the task's cell defines (task-id: [function_name])"
        )
    return JitRule(tuple(dict.fromkeys(names)), line=line)


def _jit_gap(rule: JitRule, task: Task, lesson: Lesson) -> str | None:
    """The solution must define each function at its top level and use it."""
    gap = jit_rule_gap(rule, task.solution)
    return None if gap is None else f"cannot meet its own 'jit' rule: {gap}"


TASK_RULES: dict[str, TaskRuleKind[Any]] = {
    "accept": TaskRuleKind("{mappings: ..., floats: [...]}", _read_accept),
    "method": TaskRuleKind(
        "{require: [...], forbid: [...]}",
        _read_method,
        _method_gap,
        "change the rule or the solution, so the lesson's own answer passes",
    ),
    "jit": TaskRuleKind(
        "lists of function names",
        _read_jit,
        _jit_gap,
        "name a function the solution defines and calls, or change the solution",
    ),
}
"""Every per-task rule by its key in {grading}, in the order they are read and checked."""
