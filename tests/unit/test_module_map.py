"""docs/modules.md is the one module map: it names every module of `src/lessonkit`, and
every module it names exists, so the map cannot drift from the files."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "lessonkit"
MAP = ROOT / "docs" / "modules.md"
ENTRY = re.compile(r"^- `([\w/]+\.py)`: \S", re.M)


def mapped(text: str) -> list[str]:
    return ENTRY.findall(text)


def modules(package: Path) -> set[str]:
    return {p.relative_to(package).as_posix() for p in package.rglob("*.py")}


def test_the_map_names_every_module_once_and_only_modules_that_exist():
    named = mapped(MAP.read_text(encoding="utf-8"))
    assert sorted(modules(PACKAGE) - set(named)) == [], "missing from docs/modules.md"
    assert sorted(set(named) - modules(PACKAGE)) == [], "in docs/modules.md, not in src"
    assert len(named) == len(set(named)), "named twice in docs/modules.md"


def test_a_missing_or_a_gone_module_is_found(tmp_path: Path):
    (tmp_path / "part").mkdir()
    (tmp_path / "part" / "kept.py").write_text("")
    (tmp_path / "part" / "unmapped.py").write_text("")
    named = mapped("- `part/kept.py`: kept\n- `part/gone.py`: gone\n")
    assert sorted(modules(tmp_path) - set(named)) == ["part/unmapped.py"]
    assert sorted(set(named) - modules(tmp_path)) == ["part/gone.py"]
