"""One way to parse Python source in the toolkit, safe to call from several threads, and one
reading of a cell's code (`CellCode`): what it binds, reads and imports, worked out from one
parse, so a lesson's code is parsed once however many parts of a grading ask about it."""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lessonkit.grading_child.names import bindings, bound_at_top

_AST_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """`ast.parse` under a lock: batch grading runs in threads, and CPython 3.11's AST
    conversion keeps its recursion depth in shared state, so concurrent parses can fail
    with "AST constructor recursion depth mismatch"."""
    with _AST_LOCK:
        return ast.parse(source)


@dataclass(frozen=True)
class CellCode:
    """One cell's code read once: every question the grader asks of the lesson's code."""

    source: str
    tree: ast.Module = field(compare=False, repr=False)
    assigned: tuple[str, ...]  # what its assignments bind, in blocks too, not in functions
    todo: tuple[str, ...]  # what it assigns from `todo(...)`: a scaffold's graded names
    bound: tuple[str, ...]  # top-level assignments and imports, not functions
    defined: frozenset[str]  # top-level `def`s and plain assignments (what `jit:` can watch)
    read: frozenset[str]  # every name it reads, anywhere
    imported: tuple[str, ...]  # the modules its top-level imports load
    key: str  # its syntax tree, dumped: cells compare equal when their trees do
    functions: tuple[tuple[str, frozenset[str]], ...] = ()
    """Each top-level `def`, with the names it reads from the module (`_module_reads`)."""


def read_cell(source: str) -> CellCode:
    """`source` parsed once and read (it must parse)."""
    tree = parse_python(source)
    statements = list(_statements(tree.body))
    todo = [
        name
        for s in statements
        if isinstance(s, ast.Assign | ast.AnnAssign) and _is_todo(s.value)
        for name in bindings(s)
    ]
    return CellCode(
        source=source,
        tree=tree,
        assigned=_once(n for s in statements for n in bindings(s, augmented=True)),
        todo=_once(todo),
        bound=_once(n for s in tree.body for n in bindings(s, imports=True)),
        defined=frozenset(n for s in tree.body for n in bound_at_top(s)),
        read=frozenset(
            node.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        ),
        imported=_once(_modules(tree.body)),
        key=ast.dump(tree),
        functions=tuple(
            (s.name, _module_reads(s))
            for s in tree.body
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
        ),
    )


def reads_through_functions(cell: CellCode, others: Iterable[CellCode]) -> frozenset[str]:
    """What `cell` reads, with what each function it reads reads from the module, where a
    cell of `others` (the same file's) defines it, and so on: a cell that calls a helper of
    another cell reads what the helper reads."""
    functions = {name: reads for other in others for name, reads in other.functions}
    read = set(cell.read)
    waiting = [name for name in read if name in functions]
    while waiting:
        for name in functions.pop(waiting.pop(), frozenset()) - read:
            read.add(name)
            waiting.append(name)
    return frozenset(read)


def _module_reads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a function reads and never binds itself (its parameters, assignments,
    imports and inner definitions, unless declared `global`): what it reads from the module."""
    nodes = list(ast.walk(function))
    declared = {name for node in nodes if isinstance(node, ast.Global) for name in node.names}
    own: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            own.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not function:
                own.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            own.update(bindings(node, imports=True))
    read = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return frozenset(read - (own - declared))


@dataclass(frozen=True)
class LessonCode:
    """Every cell of a lesson's code that parses, each distinct source read once."""

    cells: dict[str, CellCode] = field(hash=False)

    def of(self, source: str) -> CellCode:
        """The reading of `source`: the one kept, else read now (a source that does not
        parse raises `SyntaxError` here, where it is used, as `read_cell` does)."""
        return self.cells.get(source) or read_cell(source)


def read_cells(sources: Iterable[str]) -> LessonCode:
    """Each distinct source of `sources` that parses, parsed once."""
    cells = {}
    for source in dict.fromkeys(sources):
        try:
            cells[source] = read_cell(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return LessonCode(cells)


def _once(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The cell's statements, inside `try`, `if`, `for`, `while` and `with` blocks too, but
    not inside function or class bodies: what the cell itself binds."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, name, []))
        for handler in getattr(statement, "handlers", []):
            yield from _statements(handler.body)


def _is_todo(value: ast.expr | None) -> bool:
    return (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "todo"
    )


def _modules(body: list[ast.stmt]) -> Iterator[str]:
    for statement in body:
        if isinstance(statement, ast.Import):
            yield from (alias.name for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom) and statement.module:
            yield statement.module
