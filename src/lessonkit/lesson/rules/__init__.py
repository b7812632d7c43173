"""The per-task rules of the `{grading}` block (`accept:`, `method:`, `jit:`): one module each.

Each module exports one `RuleKind`: its key and how lesson.md spells it, how a task's value
is read and checked against the lesson's own solution, what the grading child is asked, the
check that grades a learner's cell, its words in reports, its check names and how a
failure of it is told apart from another (its signature). `RULES` is the one list of them,
gathered from the package's modules in their `order`; reading (`lesson.grading_block`),
validation, the rubric, the requests, the checks, the verdicts' words, the report and the
diagnosis of a declared mistake loop over it. So a new rule that the parent applies is one
module here; one the child runs adds its hook, registered under the rule's key beside
`EVENTS` in `grading_child/wire.py`.

The package lives in `lesson/`, not in `grade/` nor beside it: reading lesson.md must reach
every rule's spelling and validation, and the layers let `lesson` import neither `grade` nor a
package above it. A rule's check reads the task through `base.RuleFacts`, a protocol the
grader meets, so no rule imports the grader.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Literal

from lessonkit.lesson.rules.base import Failure, RuleFacts, RuleKind, TaskRule


def _gather() -> tuple[RuleKind, ...]:
    """The one `RuleKind` of each module of this package, in their `order`."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.name == "base":
            continue
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        kinds = [v for v in vars(loaded).values() if isinstance(v, RuleKind)]
        if len(kinds) != 1:
            raise ImportError(f"{loaded.__name__} must export one RuleKind, not {len(kinds)}")
        found.append(kinds[0])
    return tuple(sorted(found, key=lambda kind: kind.order))


RULES: tuple[RuleKind, ...] = _gather()
"""Every per-task rule, in the order they are read and their checks run."""

RULE_KEYS: tuple[str, ...] = tuple(rule.key for rule in RULES)


_BEFORE_RULES = ("cell", "attempted")
_AFTER_RULES = ("lesson inputs", "other inputs", "probes", "run")
CHECKS: tuple[str, ...] = (
    *_BEFORE_RULES,
    *(rule.checks[0] for rule in RULES if rule.check is not None),
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
    "Failure",
    "RuleFacts",
    "RuleKind",
    "TaskRule",
    "rule_named",
]
