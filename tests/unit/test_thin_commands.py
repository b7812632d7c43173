"""A command parses, calls the library and prints: it imports no other command.

What several commands need alike is library code (it belongs to the package that owns it) or
printing shared in a `commands/_` module; a command importing another is the sign that
library code was left in a command. The check reads the source (`ast`), so it sees imports
inside functions too, and it is also run on a small package made to break it.
"""

from __future__ import annotations

import ast
from pathlib import Path

COMMANDS = Path(__file__).resolve().parents[2] / "src" / "lessonkit" / "commands"


def _targets(node: ast.AST, package: str) -> list[str]:
    """The modules of `package` an import statement names (`from package import x` names x)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # `from . import x`, `from .x import y`: inside the folder itself
            base = package + (f".{node.module}" if node.module else "")
        else:
            base = node.module or ""
        names = [base] + [f"{base}.{a.name}" for a in node.names]
    else:
        return []
    prefix = package + "."
    return list(
        dict.fromkeys(n[len(prefix) :].split(".")[0] for n in names if n.startswith(prefix))
    )


def commands_importing_commands(folder: Path, package: str) -> list[str]:
    """ "file:line imports other" for each command that imports another command."""
    found = []
    commands = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    for path in sorted(folder.glob("*.py")):
        if path.stem.startswith("_"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node, package):
                if target in commands and target != path.stem:
                    found.append(f"{path.name}:{node.lineno} imports {target}")
    return found


def test_no_command_imports_another():
    assert commands_importing_commands(COMMANDS, "lessonkit.commands") == []


def test_a_command_importing_another_is_found(tmp_path: Path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "_shared.py").write_text("def shown(): ...\n")
    (tmp_path / "run.py").write_text("def run_lesson(): ...\n")
    (tmp_path / "build.py").write_text(
        "from pkg.commands._shared import shown\n"
        "def run():\n    from pkg.commands.run import run_lesson\n"
    )
    (tmp_path / "new.py").write_text("from . import build\nfrom .run import run_lesson\n")
    assert commands_importing_commands(tmp_path, "pkg.commands") == [
        "build.py:3 imports run",
        "new.py:1 imports build",
        "new.py:2 imports run",
    ]
