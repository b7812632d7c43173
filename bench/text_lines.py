"""Count, per package of src/lessonkit, its lines of code, docstring and comment.

A docstring is the leading string of a module, class or function (as `ast.get_docstring`
finds it); a comment line is one whose first non-blank character is `#`; blank lines count
as neither. Run `python bench/text_lines.py [ROOT]`; issue 53 asks that docstrings not grow
faster than the code they describe.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "lessonkit"


def _docstring_lines(tree: ast.Module) -> set[int]:
    """The line numbers a module's, classes' and functions' docstrings span."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            first = body[0]
            lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def count_file(path: Path) -> Counter[str]:
    """Lines of one file by kind: code, docstring, comment."""
    text = path.read_text()
    docs = _docstring_lines(ast.parse(text))
    counts: Counter[str] = Counter()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if number in docs:
            counts["docstring"] += 1
        elif stripped.startswith("#"):
            counts["comment"] += 1
        else:
            counts["code"] += 1
    return counts


def package_of(path: Path, root: Path) -> str:
    """The top-level package (or module) under root a file belongs to."""
    parts = path.relative_to(root).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def count(root: Path) -> dict[str, Counter[str]]:
    """Counts per package, and a `total` row."""
    rows: dict[str, Counter[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rows.setdefault(package_of(path, root), Counter()).update(count_file(path))
    rows["total"] = sum(rows.values(), Counter())
    return rows


def main(argv: list[str]) -> None:
    root = Path(argv[0]) if argv else SRC
    print(f"{'package':<16}{'code':>8}{'docstring':>11}{'comment':>9}")
    for name, row in count(root).items():
        print(f"{name:<16}{row['code']:>8}{row['docstring']:>11}{row['comment']:>9}")


if __name__ == "__main__":
    main(sys.argv[1:])
