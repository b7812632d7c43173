"""The names a statement binds: one reading for the parent (rules, plans, rubrics) and the
grading child (the jit watch), so both sides agree on what a cell defines.

Standard library only: the child loads this folder by path.
"""

from __future__ import annotations

import ast


def _targets(target: ast.expr, unpack: bool) -> list[ast.expr]:
    if unpack and isinstance(target, ast.Tuple | ast.List):
        return [t for element in target.elts for t in _targets(element, unpack)]
    return [target]


def bindings(
    statement: ast.stmt,
    *,
    functions: bool = False,
    imports: bool = False,
    unpack: bool = True,
    augmented: bool = False,
) -> list[str]:
    """The names one statement binds, in order.

    Always a plain or annotated assignment (`x = ...`, `x: int = ...`); with `unpack`, each
    name of `a, b = ...`; with `functions`, a `def`'s name; with `imports`, the name an import
    binds (`import jax.numpy` binds `jax`); with `augmented`, `x += ...`.
    """
    if isinstance(statement, ast.Assign):
        targets = [t for target in statement.targets for t in _targets(target, unpack)]
    elif (isinstance(statement, ast.AnnAssign) and statement.value is not None) or (
        augmented and isinstance(statement, ast.AugAssign)
    ):
        targets = [statement.target]
    elif functions and isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return [statement.name]
    elif imports and isinstance(statement, ast.Import | ast.ImportFrom):
        return [alias.asname or alias.name.split(".")[0] for alias in statement.names]
    else:
        return []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def bound_at_top(statement: ast.stmt) -> list[str]:
    """What a task's `jit:` rule can watch: a top-level `def` or plain assignment's name
    (`f = jax.jit(g)`), not a name unpacked from a tuple."""
    return bindings(statement, functions=True, unpack=False)
