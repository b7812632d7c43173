"""The per-task rules of the `{grading}` block (`accept:`, `method:`, `jit:`): one module each.

Each module exports one `RuleKind`: its key and how lesson.md spells it, how a task's value
is read, the checks that apply it, and its hooks grouped by the side that runs them:
`ParentHooks` (the check of the lesson's own solution, the check that grades a learner's
cell, its words in reports and its signature) and `ChildHooks` (what the grading child is
asked, and how the child's report of the solution's own run is read). `RULES` is the one
ordered list of them, written out here as markdown-it-py writes out its rule chain;
reading (`lesson.grading_block`), validation, the rubric, the requests, the checks, the
verdicts' words, the report and the diagnosis of a declared mistake loop over it. So a new
rule that the parent applies is one module here and its place in `RULES`; one the child
runs adds its hook, registered under the rule's key beside `EVENTS` in
`grading_child/wire.py`.

The package lives in `lesson/`, not in `grade/` nor beside it: reading lesson.md must reach
every rule's spelling and validation, and the layers let `lesson` import neither `grade` nor a
package above it. A rule's check reads the task through `base.RuleFacts`, a protocol the
grader meets, so no rule imports the grader.
"""

from __future__ import annotations

from typing import Literal

from lessonkit.lesson.rules.accept import ACCEPT
from lessonkit.lesson.rules.base import (
    ChildHooks,
    Failure,
    ParentHooks,
    RuleFacts,
    RuleKind,
    TaskRule,
)
from lessonkit.lesson.rules.jit import JIT
from lessonkit.lesson.rules.method import METHOD

RULES: tuple[RuleKind, ...] = (ACCEPT, METHOD, JIT)
"""Every per-task rule, in the order they are read and their checks run: a task that breaks
two rules gets the first one's verdict (the method before jit)."""

RULE_KEYS: tuple[str, ...] = tuple(rule.key for rule in RULES)


_BEFORE_RULES = ("cell", "attempted")
_AFTER_RULES = ("lesson inputs", "other inputs", "probes", "run")
CHECKS: tuple[str, ...] = (
    *_BEFORE_RULES,
    *(rule.checks[0] for rule in RULES if rule.parent is not None),
    *_AFTER_RULES,
)
"""Every check, in the order they run: a rule with a check of its own runs after the cell is
found attempted and before its values are compared. A hint's `for:` may name these."""
CheckName = Literal[CHECKS]  # type: ignore[valid-type]
"""Which check found a task's problem; "run" when the file could not be graded at all."""


def rule_named(key: str) -> RuleKind:
    """The rule whose key in {grading} is `key`; KeyError for no rule."""
    return {rule.key: rule for rule in RULES}[key]


__all__ = [
    "CHECKS",
    "RULES",
    "RULE_KEYS",
    "CheckName",
    "ChildHooks",
    "Failure",
    "ParentHooks",
    "RuleFacts",
    "RuleKind",
    "TaskRule",
    "rule_named",
]
