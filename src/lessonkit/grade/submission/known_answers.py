"""Calls on answers a cell knows: a varied call given a function or values of the cell's own
making, read from the syntax of one cell.

A probe bends how far it moves a varied call's result by the result itself, so a call on an
answer the cell knows cannot measure the move of the task's own call at once. A cell that
asks such calls again and again (solving for the move point by point) still could, and
nothing a task asks for needs a derivative of a function that uses nothing from outside
the cell, or a varied library call on values made from constants. So those calls are
marked for review (`grade/submission/review.py`).

"Of the cell's own making": every name a function's body or an argument loads is bound in
the cell (an assignment, a loop, a function the cell defines that is itself of its own
making), by an import anywhere in the file, a builtin, or the function's own parameter. A
function that reads a name from an earlier cell (`x`, `params`, `loss`) is the task's.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass

from lessonkit.lesson.model import Probe

DERIVATIVES = frozenset(
    {"grad", "value_and_grad", "vjp", "jacrev", "jacobian", "jacfwd", "hessian", "jvp"}
    | {"linearize", "fwd_and_bwd"}
)
"""The public names of `jax` that differentiate, by which a cell's syntax is read. A
`gradients` probe varies differentiation in JAX's own layer, however it is reached
(`grading_child/differentiation.py`); this set is checked against every public callable
of `jax` that makes autodiff's traces (`tests/integration/test_public_differentiation.py`)."""

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Varied:
    """What a lesson's probes vary through calls: the calls, by their last name (`grad`,
    `apply_updates`), and the tasks those probes grade."""

    calls: frozenset[str] = frozenset()
    tasks: frozenset[str] = frozenset()

    def read_in(self, task: str | None, label: str | None) -> frozenset[str]:
        """The calls to read in a cell: a probed task's cell, or one the learner added or
        changed (no lesson cell matches it); none in a lesson cell left as it is or in
        another task's cell (a lesson may differentiate a function of its own)."""
        return self.calls if (task in self.tasks or (task is None and label is None)) else NONE


NONE = frozenset[str]()
NOTHING_VARIED = Varied()


def varied_of(probes: Iterable[Probe]) -> Varied:
    """The calls a lesson's probes vary and the tasks they grade."""
    by_call = [p for p in probes if p.source in ("gradients", "call")]
    calls = {n for p in by_call for n in (DERIVATIVES if p.source == "gradients" else [p.target])}
    return Varied(
        frozenset(c.rpartition(".")[2] for c in calls), frozenset(p.task for p in by_call)
    )


class _Cell:
    """What one cell binds: the names it assigns or imports, and the functions it defines."""

    def __init__(self, tree: ast.Module, imported: frozenset[str]) -> None:
        self.bound: set[str] = set(imported)
        self.functions: dict[str, ast.AST] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bound.add(node.id)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[node.name] = node
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.functions[target.id] = node.value
        self.bound -= set(self.functions)

    def own_function(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the function `node` (a lambda, a def, or a name of one) uses only what the
        cell makes: its answer is then known to the cell."""
        if isinstance(node, ast.Name):
            found = self.functions.get(node.id)
            if found is None or node.id in seen:
                return False
            return self.own_function(found, seen | {node.id})
        if not isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        local = {a.arg for n in ast.walk(node) if isinstance(n, ast.arguments) for a in _args(n)}
        local |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        body = node.body if isinstance(node.body, list) else [node.body]
        return all(self._own_name(name, local, seen) for part in body for name in _loaded(part))

    def own_value(self, node: ast.AST) -> bool:
        """Whether an argument is made in the cell alone (constants, the cell's own names)."""
        return all(self._own_name(name, set(), frozenset()) for name in _loaded(node))

    def _own_name(self, name: str, local: set[str], seen: frozenset[str]) -> bool:
        if name in local or name in self.bound or name in _BUILTINS:
            return True
        return name in self.functions and self.own_function(ast.Name(id=name), seen)


def _args(arguments: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def _loaded(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def known_answer_marks(
    tree: ast.Module, calls: frozenset[str], imported: frozenset[str]
) -> list[tuple[int, str]]:
    """(line, what) for each call named in `calls` (`Varied.calls`) on something of the
    cell's own making: a derivative of its own function, another call on its own values;
    `imported`: the names the file's imports bind (a module is nobody's answer)."""
    cell: _Cell | None = None
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not (node.args or node.keywords):
            continue
        name = _called(node)
        if name not in calls:
            continue
        cell = cell or _Cell(tree, imported)
        if name in DERIVATIVES and node.args and cell.own_function(node.args[0]):
            found.append((node.lineno, f"differentiates a function of its own making (`{name}`)"))
        elif name not in DERIVATIVES and all(
            cell.own_value(a) for a in [*node.args, *node.keywords]
        ):
            found.append((node.lineno, f"calls `{name}` on values of its own making"))
    return found
