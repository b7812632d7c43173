"""Marks for review: code in a submission that reaches into the grader, read from its syntax.

A cell runs in the same process as the grader's loop over scenarios, so a determined file
can still walk the interpreter's frames, closures or objects to learn what a scenario varies
(see docs/grading-security.md). Nothing a lesson asks for needs those tools, so their use
is named for the instructor in the report, the CSV, the JSON and the gradebook, whatever
the verdict: a file that evades a probe is seen even where it is not caught.

The marks are read here, in the parent, from the source text alone: nothing runs.
"""

from __future__ import annotations

import ast
import functools
import re

from lessonkit.grade.submission.known_answers import NOTHING_VARIED, Varied, known_answer_marks
from lessonkit.grade.submission.plan import Plan
from lessonkit.lesson.syntax import parse_python

# Modules whose only use in a cell would be to look at the running process.
INTROSPECTION_MODULES = frozenset({"inspect", "gc", "ctypes", "_ctypes", "cffi", "_testcapi"})
# Attributes that lead from a value to frames, closures, code or the original of a wrapper.
INTROSPECTION_ATTRIBUTES = frozenset(
    {
        "_getframe",
        "_current_frames",
        "f_back",
        "f_locals",
        "f_globals",
        "f_code",
        "tb_frame",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "__closure__",
        "cell_contents",
        "__wrapped__",
        "__code__",
        "co_consts",
        "__globals__",
        "__subclasses__",
        "get_referrers",
        "get_referents",
        "get_objects",
    }
)
MAX_REVIEWED = 200_000  # characters of a cell read for marks; a longer cell is marked itself


def _imported(node: ast.AST) -> list[str]:
    """Modules a statement or call imports, including `__import__("gc")` and
    `importlib.import_module("gc")`."""
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module.split(".")[0]]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        called = node.func
        name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
        if name in ("__import__", "import_module") and isinstance(node.args[0].value, str):
            return [node.args[0].value.split(".")[0]]
    return []


@functools.lru_cache(maxsize=16)
def _triggers(calls: frozenset[str]) -> re.Pattern[str]:
    """Text without which a cell can earn no mark: a cell that holds none is not parsed."""
    words = sorted({"import", *INTROSPECTION_MODULES, *INTROSPECTION_ATTRIBUTES})
    patterns = list(map(re.escape, words))
    if calls:
        patterns.append(rf"\b(?:{'|'.join(map(re.escape, sorted(calls)))})\s*\(")
    return re.compile("|".join(patterns))


def _tree(source: str) -> ast.Module | None:
    try:
        return parse_python(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # a cell that does not parse is that cell's error, reported by the run


def _bound_by_imports(tree: ast.Module) -> set[str]:
    """The names a cell's imports bind (`import numpy as np`: np; `from jax import grad`)."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


def cell_marks(
    source: str, calls: frozenset[str] = frozenset(), imported: frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    """(line in the cell, what it does) for each reach into the grader in one cell; `calls`
    (varied calls to read here) and `imported` as `known_answers.known_answer_marks` reads
    them."""
    if len(source) > MAX_REVIEWED:
        return [(1, f"a cell too long to read for marks ({len(source):,} characters)")]
    if not _triggers(calls).search(source):
        return []
    tree = _tree(source)
    if tree is None:
        return []
    modules = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    found = known_answer_marks(tree, calls, imported | modules)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 1)
        if isinstance(node, ast.Import | ast.ImportFrom | ast.Call):
            found += [
                (line, f"imports `{name}`")
                for name in _imported(node)
                if name in INTROSPECTION_MODULES
            ]
        elif isinstance(node, ast.Attribute) and node.attr in INTROSPECTION_ATTRIBUTES:
            found.append((line, f"reads `{node.attr}`"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in INTROSPECTION_ATTRIBUTES
        ):
            found.append((line, f'names "{node.value}"'))
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id in modules
            ):
                what = f"{target.value.id}.{target.attr}"
                found.append((line, f"keeps state in a module (`{what} = ...`)"))
    return sorted(set(found))


def review_marks(plan: Plan, varied: Varied = NOTHING_VARIED) -> tuple[str, ...]:
    """Every reach into the grader in a file, each with the place a person finds it.

    `varied`: the calls the lesson's probes vary (`known_answers.varied_of`). A cell met
    again (a file of repeated cells) is read once."""
    imported: set[str] = set()
    for source in {cell.source for cell in plan.cells if "import" in cell.source}:
        tree = _tree(source) if len(source) <= MAX_REVIEWED else None
        imported |= _bound_by_imports(tree) if tree is not None else set()
    known: dict[tuple[str, frozenset[str]], list[tuple[int, str]]] = {}
    marks = []
    for cell in plan.cells:
        key = (cell.source, varied.read_in(cell.task, cell.label))
        if key not in known:
            known[key] = cell_marks(*key, frozenset(imported))
        for line, what in known[key]:
            marks.append(f"{what} at {plan.where(cell.index, line + cell.offset)}")
    return tuple(marks)
