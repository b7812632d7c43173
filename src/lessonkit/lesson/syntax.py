"""One way to parse Python source in the toolkit, safe to call from several threads."""

from __future__ import annotations

import ast
import threading

_AST_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """`ast.parse` under a lock: batch grading runs in threads, and CPython 3.11's AST
    conversion keeps its recursion depth in shared state, so concurrent parses can fail
    with "AST constructor recursion depth mismatch"."""
    with _AST_LOCK:
        return ast.parse(source)
