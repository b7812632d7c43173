"""A cell's code made ready to run (inputs stripped, rule hooks added, cut where a scenario
changes a name it binds) and its errors as data."""

from __future__ import annotations

import ast
from collections.abc import Callable
from types import CodeType

from .names import bindings, bound_at_top
from .placeholders import watch_placeholders
from .request import TASK, CellSpec
from .wire import MAX_MESSAGE, MAX_TEXT, rule_hook


class CellTimeout(BaseException):
    """Raised inside learner code when the request's time budget runs out."""


def _assigns_only(statement: ast.stmt, names: frozenset[str]) -> bool:
    """True for `params = ...`, `x = ...` or `params, x = ...`: inputs the scenario supplies."""
    if isinstance(statement, ast.Assign):
        targets = []
        for target in statement.targets:
            targets.extend(target.elts if isinstance(target, ast.Tuple) else [target])
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return False
    return bool(targets) and all(isinstance(t, ast.Name) and t.id in names for t in targets)


def bound_beside_others(source: str, names: frozenset[str]) -> frozenset[str]:
    """The supplied names a top-level assignment binds beside names the scenario does not
    supply (`value, grads = ...`): such a statement cannot be stripped, so the runner hands
    the supplied value on after the cell. One bound inside a block (`if True: params = ...`)
    is not: the step then keeps its own value, and the parent says it could not replace it."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found: set[str] = set()
    for statement in tree.body:
        bound = set(bindings(statement))
        if bound & names and not _assigns_only(statement, names):
            found |= bound & names
    return frozenset(found)


class CompileError(Exception):
    def __init__(self, report: dict):
        super().__init__(report.get("message", ""))
        self.report = report


Watched = Callable[[ast.stmt], list[str]]
"""Which names a statement binds that a hook is handed."""

Segment = tuple[CodeType, tuple[str, ...]]
"""A run of a cell's statements, and the names it binds that the runner changes after it."""


def _watch(body: list, hooks: list[tuple[str, Watched]]) -> list:
    """After each top-level statement, `name = HOOK(name, "name")` for each hook and each
    name it watches among those the statement binds (a `with` block's body too: an optional
    task's cell)."""
    out = []
    for statement in body:
        if isinstance(statement, ast.With):  # an optional task's cell: `with optional_task():`
            statement.body = _watch(statement.body, hooks)
        out.append(statement)
        for hook_name, watched in hooks:
            for name in watched(statement):
                hook = ast.parse(f"{name} = {hook_name}({name}, {name!r})").body[0]
                out.append(ast.copy_location(hook, statement))
    return out


def _rule_watch(names: frozenset[str]) -> Watched:
    """A rule watches its names where a `def` or a plain assignment binds them."""
    return lambda statement: [n for n in bound_at_top(statement) if n in names]


def _varied_bindings(names: frozenset[str], graded: frozenset[str]) -> Watched:
    """A varied name where a top-level statement binds it beside no other graded name: a
    graded name bound in the same statement (`g, scale = G, G["scale"]`) keeps what the
    unchanged value gave it, so a change there would say nothing true of the cell (it is not
    made, and the probe says nothing of a cell it never reaches)."""

    def watched(statement: ast.stmt) -> list[str]:
        bound = bindings(statement)
        return [n for n in bound if n in names and not (set(bound) - {n}) & graded]

    return watched


def _segments(body: list, watched: Watched) -> list[tuple[list, tuple[str, ...]]]:
    """The statements cut after each one that binds a varied name. The runner changes the
    name between two runs of the code, so nothing the cell can rebind stands in the way."""
    segments: list[tuple[list, tuple[str, ...]]] = [([], ())]
    for statement in body:
        segments[-1][0].append(statement)
        names = tuple(watched(statement))
        if names:
            segments[-1] = (segments[-1][0], names)
            segments.append(([], ()))
    return [s for s in segments if s[0]]


def compile_cell(cell: CellSpec, strip: frozenset[str]) -> tuple[Segment, ...]:
    """The cell's code, without the assignments of names the scenario supplies, cut where it
    binds a name a scenario may change (`_varied_bindings`), with the names each rule the
    child runs watches (`CELL_RULES`) handed to its hook as they are bound, and, in a task
    cell, each `with` and `except` reporting the placeholders that reach it."""
    filename = f"<cell {cell.index}>"
    try:
        tree = ast.parse(cell.source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None) or 1
        raise CompileError(
            {
                "kind": "syntax",
                "type": type(exc).__name__,
                "module": "builtins",
                "message": str(getattr(exc, "msg", exc))[:MAX_TEXT],
                "frames": [[cell.index, line + cell.offset, 1]],
            }
        ) from None
    if strip:
        tree.body = [s for s in tree.body if not _assigns_only(s, strip)]
    varied = _varied_bindings(frozenset(cell.varies), frozenset(cell.report))
    hooks = [(rule_hook(k), _rule_watch(frozenset(n))) for k, n in cell.asks.items() if n]
    compiled = []
    for body, changed in _segments(tree.body, varied) if cell.varies else [(tree.body, ())]:
        part = ast.Module(body=_watch(body, hooks) if hooks else body, type_ignores=[])
        ast.fix_missing_locations(part)
        if cell.role == TASK:
            part = watch_placeholders(part)
        ast.increment_lineno(part, cell.offset)
        compiled.append((compile(part, filename, "exec", dont_inherit=True), changed))
    return tuple(compiled)  # not this file's __future__ (dont_inherit)


def error_report(exc: BaseException, cells_by_file: dict[str, int]) -> dict:
    """The exception's type, message and the learner's own frames (cell index, line)."""
    frames: list[list[int]] = []  # [cell index, line, times in a row]
    tb = exc.__traceback__
    while tb is not None:
        index = cells_by_file.get(tb.tb_frame.f_code.co_filename)
        if index is not None:
            if frames and frames[-1][:2] == [index, tb.tb_lineno]:
                frames[-1][2] += 1
            else:
                frames.append([index, tb.tb_lineno, 1])
        tb = tb.tb_next
    if isinstance(exc, CellTimeout):
        kind = "timeout"
    elif isinstance(exc, SystemExit):
        kind = "exit"
    elif isinstance(exc, KeyboardInterrupt):
        kind = "interrupt"
    else:
        kind = "exception"
    try:
        message = str(exc)
    except Exception:
        message = ""
    report = {
        "kind": kind,
        "type": type(exc).__qualname__,
        "module": type(exc).__module__,
        "message": message[:MAX_MESSAGE],
        "frames": frames[:2] + frames[2:][-6:],
    }
    if isinstance(exc, SystemExit):
        code = exc.code
        report["exit_code"] = code if isinstance(code, int) or code is None else str(code)[:80]
    return report
