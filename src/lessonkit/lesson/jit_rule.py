"""`jit:` rules read on a cell's syntax tree: which named functions the cell defines and uses.

The grading child calls each use of a named function a second time through `jax.jit`; that
needs the cell to bind the function at its top level (a `def` or an assignment) and to use
it. This module checks the lesson's own solution for both when the lesson loads, so a rule
that its reference answer could never meet is refused at its line in lesson.md.
"""

from __future__ import annotations

import ast

from lessonkit.grading_child.names import bound_at_top
from lessonkit.lesson.model import JitRule
from lessonkit.lesson.syntax import parse_python


def top_level_bindings(code: str) -> frozenset[str]:
    """Names the cell's own top-level statements bind with `def` or a plain assignment."""
    return frozenset(n for s in parse_python(code).body for n in bound_at_top(s))


def used_names(code: str) -> frozenset[str]:
    """Names the cell reads anywhere (calls, arguments to `jax.vmap`, ...)."""
    return frozenset(
        node.id
        for node in ast.walk(parse_python(code))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    )


def jit_rule_gap(rule: JitRule, code: str) -> str | None:
    """Why a cell cannot meet `rule` (a function it does not define or never uses), or None."""
    bound, used = top_level_bindings(code), used_names(code)
    for name in rule.functions:
        if name not in bound:
            return f"it does not define `{name}` at its top level (def {name}(...): ...)"
        if name not in used:
            return f"it defines `{name}` but never uses it, so the grader has no call to repeat"
    return None
