"""`method:` in {grading}: what a task's cell calls or uses, read from its syntax tree.

A task may require calls (`jax.lax.cond`) or forbid them, and forbid the statements `for`,
`while` and `if`. Calls are matched by their dotted name after the file's imports are
resolved (`from jax import lax` makes `lax.cond` read `jax.lax.cond`). This catches the
honest mistake; a determined evader (`getattr(jax.lax, "cond")`) gets past any syntax check,
which `docs/grading-security.md` says.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

from lessonkit.lesson.rules.base import (
    UNGRADED,
    Fail,
    Failure,
    ParentHooks,
    RuleFacts,
    RuleKind,
)
from lessonkit.lesson.syntax import parse_python

Statement = Literal["for", "while", "if"]
STATEMENTS: tuple[str, ...] = get_args(Statement)
_KEYS = frozenset({"require", "forbid"})
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

_STATEMENT_NODES: dict[str, tuple[type[ast.AST], ...]] = {
    "for": (ast.For, ast.AsyncFor),
    "while": (ast.While,),
    "if": (ast.If,),
}
_STATEMENT_WORDS = {
    "for": "a Python `for` loop",
    "while": "a Python `while` loop",
    "if": "a Python `if` statement",
}


@dataclass(frozen=True)
class MethodRule:
    """What one task's cell must use and must not (`method:` in {grading}).

    Each entry is a dotted name the cell calls (`jax.lax.cond`) or a statement (`for`,
    `while`, `if`), looked for on the cell's syntax tree. It catches the honest mistake (a
    Python loop where the lesson teaches `jax.lax.fori_loop`), not a determined evader.
    """

    require: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    line: int = field(default=0, compare=False, metadata=UNGRADED)


@dataclass(frozen=True)
class MethodBreach:
    """The first way a cell breaks its task's method rule."""

    what: str  # "a Python `for` loop", "`jax.lax.cond`"
    forbidden: bool  # True: the cell uses it; False: the cell lacks it
    line: int | None  # the line of `source` where a forbidden use starts
    instead: tuple[str, ...] = ()  # what the rule requires, named in the message

    def message(self, where: str | None = None) -> str:
        """One sentence for the learner; `where` is the forbidden use's place in their file."""
        if not self.forbidden:
            return f"Your cell does not use {self.what}, which this task asks for."
        asks = ", ".join(f"`{name}`" for name in self.instead)
        instead = f"; use {asks} instead" if asks else ""
        at = f" ({where})" if where else ""
        return f"Your cell uses {self.what}{at}, which this task rules out{instead}."


def _word(entry: str) -> str:
    return _STATEMENT_WORDS[entry] if entry in STATEMENTS else f"`{entry}`"


def _aliases(sources: Iterable[str]) -> dict[str, str]:
    """Local name -> the dotted name it imports, from every import in `sources`."""
    names: dict[str, str] = {}
    for source in sources:
        try:
            tree = parse_python(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    names[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _calls(tree: ast.AST, aliases: dict[str, str]) -> dict[str, int]:
    """Every dotted name the tree calls, as written and as imported, with its first line."""
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (name := _dotted(node.func)) is None:
            continue
        head, _, rest = name.partition(".")
        resolved = ".".join(filter(None, (aliases.get(head, head), rest)))
        for spelling in (name, resolved):
            found[spelling] = min(found.get(spelling, node.lineno), node.lineno)
    return found


def method_breach(
    rule: MethodRule, source: str, context: Iterable[str] = ()
) -> MethodBreach | None:
    """How `source` breaks `rule`, or None; imports in `context` (the other cells) count."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return None  # a cell that does not parse fails when it runs, with Python's message
    calls = _calls(tree, _aliases([*context, source]))

    def first_line(entry: str) -> int | None:
        if entry in STATEMENTS:
            kinds = _STATEMENT_NODES[entry]
            return min((n.lineno for n in ast.walk(tree) if isinstance(n, kinds)), default=None)
        return calls.get(entry)

    for entry in rule.forbid:
        if (line := first_line(entry)) is not None:
            return MethodBreach(_word(entry), True, line, rule.require)
    for entry in rule.require:
        if first_line(entry) is None:
            return MethodBreach(_word(entry), False, None)
    return None


def _read(rule: object, line: int, fail: Fail) -> MethodRule:
    if not isinstance(rule, dict) or not rule or set(rule) - _KEYS:
        raise fail("must be a mapping with require and/or forbid")
    lists = {key: rule.get(key) or [] for key in sorted(_KEYS)}
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


def _gap(rule: MethodRule, solution: str, steps: tuple[str, ...]) -> str | None:
    """The solution, with the steps' imports, must use what the rule asks and nothing it bans."""
    breach = method_breach(rule, solution, steps)
    if breach is None:
        return None
    return "breaks its own 'method' rule: " + breach.message(
        f"solution line {breach.line}" if breach.line else None
    )


def _breach(facts: RuleFacts) -> MethodBreach | None:
    """The first way the learner's cell breaks its task's `method:` rule, if it has one."""
    rule, source = facts.rule(METHOD), facts.cell_source()
    if rule is None or source is None:
        return None
    return method_breach(rule, source, facts.other_sources())


def _check(facts: RuleFacts) -> Failure | None:
    """The cell uses what its task's `method:` rule requires, and nothing it forbids."""
    breach = _breach(facts)
    if breach is None:
        return None
    return Failure(breach.message(facts.cell_line(breach.line) if breach.line else None))


def _signature(facts: RuleFacts) -> tuple[str, str] | None:
    """What the cell breaks of the rule: a construct it misses or uses, and which."""
    breach = _breach(facts)
    return None if breach is None else (breach.what, breach.forbidden)


METHOD: RuleKind[MethodRule] = RuleKind(
    key="method",
    shape="{require: [...], forbid: [...]}",
    read=_read,
    checks=("method",),
    parent=ParentHooks(
        gap=_gap,
        fix="change the rule or the solution, so the lesson's own answer passes",
        check=_check,
        words="the method the task asks for is not used",
        signature=_signature,
    ),
)
