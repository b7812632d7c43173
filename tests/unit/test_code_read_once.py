"""A lesson's code is read once: one preparation (the rubric, the reference's names and
imports, the practice file's plan, the declared mistakes' plans, the warm-up request) parses
each distinct source at most once, and every parse in the toolkit goes through
`lesson.syntax.parse_python` (the grading child, standard library only, parses for itself)."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

from lessonkit.grade.preparation.mistakes import mistake_requests
from lessonkit.grade.preparation.prepared import prepare_lesson, warm_up_request
from lessonkit.grade.submission.plan import plan_cells
from lessonkit.grade.submission.sources import read_submission
from lessonkit.lesson.scripts import render_exercise_script

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "lessonkit"
PARSER = "lesson/syntax.py"
OWN_PARSER = "grading_child/"  # loaded by path in the sandbox: it imports nothing of lessonkit


@pytest.fixture
def parses(monkeypatch) -> collections.Counter[str]:
    """Every source `ast.parse` is given from now on, counted."""
    counted: collections.Counter[str] = collections.Counter()
    real = ast.parse

    def counting(source, *args, **kwargs):
        counted[source] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return counted


def test_one_preparation_parses_each_source_once(any_lesson, parses):
    prepared = prepare_lesson(any_lesson, seed=7)
    practice = render_exercise_script(any_lesson).encode()
    plan_cells(read_submission(Path("practice.py"), practice), prepared.layout)
    mistake_requests(prepared, prepared.reference_run.names, "mistakes")
    warm_up_request(prepared, 20.0)
    task_code = {c for t in any_lesson.tasks for c in (t.scaffold, t.solution)}
    assert task_code <= set(parses)  # the counter sees the preparation's parses
    twice = {source[:60]: n for source, n in parses.items() if n > 1}
    assert twice == {}


def direct_parses(package: Path) -> list[str]:
    """ "file:line" of each `ast.parse(...)` outside the one parser and the grading child."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where == PARSER or where.startswith(OWN_PARSER):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "parse"
                and isinstance(node.value, ast.Name)
                and node.value.id == "ast"
            ) or (isinstance(node, ast.ImportFrom) and node.module == "ast"):
                found.append(f"{where}:{node.lineno}")
    return found


def test_every_parse_goes_through_the_one_parser():
    assert direct_parses(PACKAGE) == []


def test_a_parse_of_its_own_is_found(tmp_path: Path):
    package = tmp_path / "lessonkit"
    (package / "lesson").mkdir(parents=True)
    (package / "grading_child").mkdir()
    (package / "lesson" / "syntax.py").write_text("import ast\nast.parse('x')\n")
    (package / "grading_child" / "cells.py").write_text("import ast\nast.parse('x')\n")
    (package / "history.py").write_text("import ast\n\ntree = ast.parse('x')\n")
    (package / "tasks.py").write_text("from ast import parse\n")
    assert direct_parses(package) == ["history.py:3", "tasks.py:1"]


HELPERS = """
import jax

def flat_layer():
    return {"weight": grads["weight"], "bias": grads["bias"]}

def shadowed(grads):
    return grads

def assigned():
    grads = {}
    return grads

def declared():
    global grads
    grads = {}
    return grads

def imported():
    from optax import grads
    return grads

def outer():
    return flat_layer()
"""


@pytest.mark.parametrize(
    ("call", "reads_grads"),
    [
        ("flat_layer()", True),  # reads the module's grads
        ("outer()", True),  # through another helper
        ("shadowed(params)", False),  # a parameter of that name
        ("assigned()", False),  # its own local
        ("declared()", True),  # declared global: the module's
        ("imported()", False),  # an import of its own
        ("jax.grad(lambda p: 0.0)", False),  # no helper at all
    ],
)
def test_a_cell_reads_what_the_helpers_of_other_cells_read(call: str, reads_grads: bool):
    from lessonkit.lesson.syntax import read_cell, reads_through_functions

    cell = read_cell(f"g = {call}\n")
    others = (read_cell(HELPERS), read_cell("x = 1\n"))
    assert ("grads" in reads_through_functions(cell, others)) is reads_grads
    assert "grads" not in cell.read
