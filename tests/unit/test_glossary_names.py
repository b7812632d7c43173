"""A name means one thing, as docs/glossary.md says: read from the code itself (`ast`).

- `record` is a committed file of a lesson's run (`receipts/`), never what a grading child
  reports: in grade/ that is a `child_report`, so no name there says record.
- `worker` is a Dask worker only: a name holding the word lives in a module that speaks to
  Dask (it imports `distributed`); a grading process is a child.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "lessonkit"


def _names(tree: ast.AST) -> set[str]:
    """Every name a module binds or reads: variables, attributes, arguments, definitions."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
    return found


def _speaks_to_dask(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "distributed" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "distributed":
            return True
    return False


def misnamed(package: Path) -> list[str]:
    """Each module and name against the glossary, as `module: name`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = path.relative_to(package).as_posix()
        names = _names(tree)
        if module.startswith("grade/"):
            found += [f"{module}: {n}" for n in sorted(names) if "record" in n.lower()]
        if not _speaks_to_dask(tree):
            found += [f"{module}: {n}" for n in sorted(names) if "worker" in n.lower()]
    return found


def test_each_name_keeps_the_one_meaning_the_glossary_gives_it():
    assert misnamed(PACKAGE) == []


def test_a_name_with_another_meaning_is_found(tmp_path):
    (tmp_path / "grade").mkdir()
    (tmp_path / "grade" / "grader.py").write_text("def run(record):\n    return record.runs\n")
    (tmp_path / "pool.py").write_text("class WorkerHandle:\n    pass\n")
    (tmp_path / "dask.py").write_text("import distributed\nworkers = distributed.Client\n")
    assert misnamed(tmp_path) == ["grade/grader.py: record", "pool.py: WorkerHandle"]
