"""A task assembled from its {task}, {scaffold}, {solution}, {hint} and {reasoning} blocks."""

from __future__ import annotations

import ast
import re

from lessonkit.lesson.blocks import RawBlock, code_notes
from lessonkit.lesson.model import (
    TASK_KINDS,
    Task,
)
from lessonkit.lesson.syntax import parse_python


def check_placeholders(scaffold: RawBlock) -> None:
    """Every `todo(...)` outside a function must be the whole value of an assignment.

    The grader grades the names a scaffold assigns from `todo(...)` (in `try`, `if` or loop
    blocks too); one inside an expression names nothing, so the task would go ungraded.
    Inside a function a placeholder is fine: the names that call the function are graded.
    """
    try:
        tree = parse_python(scaffold.body)
    except SyntaxError as exc:
        line = scaffold.line + (exc.lineno or 1)
        raise scaffold.error(f"is not valid Python ({exc.msg})", line) from None
    outside: list[ast.AST] = []  # every node outside a function body
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        outside.append(node)
        pending.extend(ast.iter_child_nodes(node))
    graded = {
        id(node.value)
        for node in outside
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
    }
    for node in outside:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "todo"
            and id(node) not in graded
        ):
            raise scaffold.error(
                "todo(...) outside a function must be the whole value of an assignment "
                "(`name = todo(...)`), so the grader knows which name to grade",
                scaffold.line + node.lineno,
            )


def assemble_task(parts: list[RawBlock]) -> Task:
    head = parts[0]
    found: dict[str, RawBlock] = {}
    for part in parts[1:]:
        if part.arg and part.arg != head.arg:
            raise part.error(
                f"names task {part.arg!r}, but it follows the {{task}} block of {head.arg!r}"
            )
        if part.role in found:
            raise part.error(f"task {head.arg!r} already has a {{{part.role}}} block")
        found[part.role] = part
    for needed in ("scaffold", "solution", "hint"):
        if needed not in found:
            raise head.error(f"task {head.arg!r} has no {{{needed}}} block after it")
    kind = head.one("kind")
    if kind not in TASK_KINDS:
        raise head.error(f"':kind:' must be one of {', '.join(TASK_KINDS)}, got {kind!r}")
    if not re.fullmatch(r"[a-z0-9-]+", head.arg or ""):
        raise head.error("needs a task id of lowercase letters, digits and dashes")
    reasoning = found.get("reasoning")
    check_placeholders(found["scaffold"])
    return Task(
        id=head.arg,
        kind=kind,
        title=head.one("title", ""),  # empty: the section title, filled in by the caller
        where=head.one("where"),
        uses=code_notes(head),
        plan=head.many("plan"),
        prompt=head.need_body("the task prompt").strip(),
        scaffold=found["scaffold"].need_body("scaffold code").rstrip("\n"),
        solution=found["solution"].code_body("solution code").rstrip("\n"),
        hint=found["hint"].need_body("a hint").strip(),
        reasoning=reasoning.body.strip() if reasoning else "",
        line=head.line,
        hint_for=tuple(" ".join(target.split()) for target in found["hint"].many("for")),
    )
