"""The guides travel with lessonkit: every `docs/...` path a message, the skeleton, a template
or a guide names is a file of the package's guides, so it is in every install (`lessonkit docs`)
and in every new course's `docs/`; this repository's `docs/` holds the same files, not copies."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from lessonkit.cli import main
from lessonkit.errors import UsageError
from lessonkit.guides import guide_files, guide_names, guide_text
from lessonkit.lesson.new_course import write_course

from conftest import REPO

PACKAGE = REPO / "src" / "lessonkit"
NAMED = re.compile(r"\bdocs/([\w./-]*\w)")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the strings that stand alone as statements (docstrings, a constant's
    docstring): text for developers, never shown as a message."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _message_strings(path: Path) -> list[str]:
    """Every string a module holds but its docstrings and comments: its messages."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in skipped
    ]


def named_paths(package: Path) -> dict[str, set[str]]:
    """Each `docs/...` path the package shows a person, with where it is named."""
    texts: list[tuple[str, str]] = []
    for path in sorted(package.rglob("*")):
        where = path.relative_to(package).as_posix()
        if path.suffix == ".py":
            texts += [(where, s) for s in _message_strings(path)]
        elif path.is_file() and path.suffix in {".md", ".j2", ".html", ".sh", ".yaml", ".js"}:
            texts.append((where, path.read_text(encoding="utf-8")))
    named: dict[str, set[str]] = {}
    for where, text in texts:
        for match in NAMED.finditer(text):
            named.setdefault(match.group(1), set()).add(where)
    return named


def test_every_guide_path_a_person_is_shown_is_in_the_package_and_in_a_new_course(tmp_path):
    named = named_paths(PACKAGE)
    assert {"authoring.md", "grading-security.md"} <= set(named), named
    shipped = {g.path for g in guide_files()}
    shipped |= {str(Path(p).parent) for p in shipped if "/" in p}  # `docs/cluster/`
    assert {p: sorted(w) for p, w in named.items() if p not in shipped} == {}
    write_course(tmp_path / "course", "T", "lessonkit==0.1.0")
    assert [p for p in named if not (tmp_path / "course" / "docs" / p).exists()] == []


def test_a_path_named_outside_the_guides_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text(
        '"""See docs/modules.md (a docstring)."""\nFIX = f"see docs/missing.md for {1}"\n',
        encoding="utf-8",
    )
    assert named_paths(package) == {"missing.md": {"m.py"}}


def test_this_repository_docs_are_the_package_guides_not_copies():
    for guide in guide_files():
        ours = REPO / "docs" / guide.path
        assert ours.read_bytes() == guide.data, guide.path
        assert ours.resolve() == (PACKAGE / "guides" / guide.path).resolve(), guide.path


def test_the_overview_names_every_guide():
    overview = guide_text("overview")
    assert [n for n in guide_names() if n != "overview" and f"`docs/{n}.md`" not in overview] == []


def test_docs_lists_the_guides_and_prints_one_as_its_markdown_when_piped(capsys):
    assert main(["docs"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in guide_names())
    assert "Writing a lesson" in listed
    assert main(["docs", "authoring"]) == 0
    assert capsys.readouterr().out == guide_text("authoring")
    assert main(["docs", "docs/instructor.md"]) == 0
    assert capsys.readouterr().out.startswith("# Grading a course")


def test_docs_refuses_an_unknown_guide_naming_the_guides():
    with pytest.raises(UsageError, match="authoring"):
        guide_text("autoring")


def test_the_package_metadata_describes_lessonkit_not_this_repository_lesson():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    ids = {
        re.search(r"^id: (\S+)", p.read_text(encoding="utf-8"), re.M).group(1)
        for p in (REPO / "phases").glob("*/*/lesson.md")
    }
    readme = REPO / project["readme"]
    assert [i for i in ids if i in project["description"]] == [], project["description"]
    assert "lessonkit" in project["description"] or "lesson" in project["description"]
    assert readme.resolve().parent == (PACKAGE / "guides").resolve(), "readme is not a guide"
    assert readme.read_text(encoding="utf-8").startswith("# lessonkit")
    assert "Topic :: Education" in project["classifiers"]
    assert project["license"] == "Apache-2.0"
    assert [f for f in project["license-files"] if not (REPO / f).is_file()] == []
    assert (REPO / "LICENSE").read_text(encoding="utf-8").split()[:4] == [
        "Apache",
        "License",
        "Version",
        "2.0,",
    ]
