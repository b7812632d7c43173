"""Which placeholder ran in a task cell: the first `todo(...)` it reached, escaped or caught.

A practice file's `todo(what)` raises `NotImplementedError("TODO: what")`, and the helper
`optional_task()` ends an optional task's cell quietly when exactly such an error reaches
it. The grader counts a placeholder the same way, from what ran: an exception of that form
that leaves the cell, or that the cell's own code catches (a `with` block such as
`optional_task()`, or an `except` clause). A `todo(...)` that never runs counts for nothing.

The cell's top-level code is rewritten so that every `with` hands its exception to the
watch on the way out and every `except` clause notes the exception it handles; code in
functions the cell defines is left as written, since it may run after the cell.
"""

from __future__ import annotations

import ast
import sys

PLACEHOLDER_HOOK = "__lessonkit_todo__"  # the namespace name of the cell's `PlaceholderWatch`
PREFIX = "TODO: "  # what `todo(...)` puts before its text: `lesson.layout.TODO_HELPER`


def is_placeholder(error: BaseException | None) -> bool:
    """The test `optional_task()` makes: a NotImplementedError whose text starts "TODO: "."""
    if not isinstance(error, NotImplementedError):
        return False
    try:
        return str(error).startswith(PREFIX)
    except Exception:  # a learner's exception whose __str__ raises
        return False


class _Watched:
    """A context manager used as the one it wraps, noting the exception that leaves it."""

    __slots__ = ("_enter", "_exit", "_manager", "_watch")

    def __init__(self, manager, watch: PlaceholderWatch):
        kind = type(manager)
        try:
            self._enter, self._exit = kind.__enter__, kind.__exit__
        except AttributeError:
            raise TypeError(
                f"'{kind.__qualname__}' object does not support the context manager protocol"
            ) from None
        self._manager, self._watch = manager, watch

    def __enter__(self):
        return self._enter(self._manager)

    def __exit__(self, kind, error, traceback):
        self._watch.note(error)
        return self._exit(self._manager, kind, error, traceback)


class PlaceholderWatch:
    """The first placeholder that ran while one cell ran."""

    __slots__ = ("first",)

    def __init__(self) -> None:
        self.first: BaseException | None = None

    def note(self, error: BaseException | None) -> None:
        if self.first is None and is_placeholder(error):
            self.first = error

    def watch(self, manager) -> _Watched:
        """What a `with` of the cell enters instead of `manager`."""
        return _Watched(manager, self)

    def caught(self) -> None:
        """Called first in each `except` clause of the cell: the exception it handles."""
        self.note(sys.exc_info()[1])


class _Hooks(ast.NodeTransformer):
    """The cell's `with` and `except` statements, reporting to `PLACEHOLDER_HOOK`."""

    def _hook(self, method: str, node: ast.AST, *args: ast.expr) -> ast.Call:
        target = ast.Attribute(ast.Name(PLACEHOLDER_HOOK, ast.Load()), method, ast.Load())
        return ast.copy_location(ast.Call(target, list(args), []), node)

    def _leave(self, node: ast.AST) -> ast.AST:
        return node  # a function or class body may run after the cell, without the hook

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _leave

    def visit_With(self, node: ast.With) -> ast.With:
        self.generic_visit(node)
        for item in node.items:
            item.context_expr = self._hook("watch", item.context_expr, item.context_expr)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        self.generic_visit(node)
        node.body.insert(0, ast.copy_location(ast.Expr(self._hook("caught", node)), node))
        return node


def watch_placeholders(tree: ast.Module) -> ast.Module:
    """The cell's code with its `with` blocks and `except` clauses reporting placeholders."""
    tree = _Hooks().visit(tree)
    return ast.fix_missing_locations(tree)
