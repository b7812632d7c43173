"""The toolkit knows no lesson: every lesson's names live in its lesson.md, none in src/."""

from __future__ import annotations

import ast
import builtins
import re

import pytest
import yaml

from lessonkit.lesson.catalog import lesson_paths
from lessonkit.lesson.load import load_lesson
from lessonkit.lesson.model import Lesson

from conftest import REPO

SRC = REPO / "src" / "lessonkit"
# `lessonkit.trees` is a pytree library for learners: its documented defaults use the field's
# conventional word for a parameter tree, as Flax and Optax do, not one lesson's variable.
CONVENTIONS = {"trees": {"params"}}
# Plain words that some lesson also uses as a variable: the toolkit's own meaning is unrelated
# ("a reported value is nested too deeply", `functools.partial`, "the output's mismatch",
# `lessonkit init`, the command that starts a course).
WORDS = {"nested", "partial", "mismatch", "init"}
LESSONS = [load_lesson(p) for p in lesson_paths(REPO)]  # the fixture's names are plain words
GUIDES = sorted((REPO / "phases").glob("*/phase.yaml"))
# Options of lessonkit's own commands (`check --seed`, `check --out`): a project's script may
# take flags of the same spelling, which is no reason to rename the toolkit's.
TOOLKIT_OPTIONS = {"--seed", "--out"}


def lesson_names(lesson: Lesson) -> set[str]:
    """Names that belong to this one lesson: ids, graded and generated names, its quantities."""
    names = {lesson.meta.id, *(t.id for t in lesson.tasks)}
    names |= {s.id for s in lesson.sections if "-" in s.id}
    names |= {n.name for n in lesson.numbers if "_" in n.name}
    for task in lesson.tasks:
        names |= set(re.findall(r"todo\(\"(\w+):", task.scaffold))
    if lesson.grading is not None:
        names |= set(lesson.grading.input_names)
        # `gradients` and a library function (`optax.apply_updates`) are sources the toolkit
        # knows how to vary, not a lesson's names; an input or a step's name is the lesson's.
        names |= {p.target for p in lesson.grading.probes if p.source in ("input", "step")}
        # the functions a task's `jit:` rule names are the lesson's own (`clip_update`)
        names |= {
            f for name, _, rule in lesson.grading.rules if name == "jit" for f in rule.functions
        }
    for item in lesson.evidence:
        names |= {n for s in item.show for n in _defined_names(s.expr)}
    return {n for n in names if len(n) >= 4} - WORDS


def _defined_names(expr: str) -> set[str]:
    """Names an evidence expression reads from the lesson: not builtins (`round`), not
    attributes of a library (`jax.random.key_data`, `.tolist()`), which no lesson owns."""
    names = set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", expr))
    return names - set(dir(builtins)) - {"for", "in", "if", "else", "not", "and", "or"}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def hits(names: set[str]) -> list[str]:
    """`file:line: name` for every string or identifier in src/ that uses one of `names`."""
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w-])")
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        allowed = CONVENTIONS.get(path.relative_to(SRC).parts[0], set())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = "" if id(node) in docs else node.value
            elif isinstance(node, ast.Name):
                text = node.id
            else:
                continue
            for match in pattern.finditer(text):
                if match[1] not in allowed:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {match[1]}")
    return found


def test_the_scan_finds_a_lesson_name_when_there_is_one():
    assert hits({"describe"}), "the scan must be able to fail"


def test_a_jit_rules_function_names_are_the_lessons_names():
    (state04,) = [lesson for lesson in LESSONS if lesson.meta.id == "state-04"]
    assert {"clip_update", "newton_sqrt", "clip-update", "newton", "state-04"} <= lesson_names(
        state04
    )


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.meta.id for lesson in LESSONS])
def test_src_names_nothing_of_the_lesson(lesson):
    names = lesson_names(lesson)
    assert len(names) > 5
    assert hits(names) == []


def project_names(guide) -> set[str]:
    """Names that belong to one phase's project: its script's and parameter file's names and
    the flags of its invocations (the `{placeholders}` are the toolkit's contract words)."""
    graded = yaml.safe_load(guide.read_text(encoding="utf-8"))["project"].get("graded")
    if graded is None:
        return set()
    names = {graded["script"], graded["output"]}
    names |= {part for part in graded["run"] + graded["resume"] if "{" not in part}
    return names - TOOLKIT_OPTIONS


def test_the_scan_finds_a_project_name_when_there_is_one():
    assert hits({"--batch"}), "the scan must be able to fail on a flag"


@pytest.mark.parametrize("guide", GUIDES, ids=[g.parent.name for g in GUIDES])
def test_src_names_nothing_of_the_phase_project(guide):
    names = project_names(guide)
    assert len(names) >= 4, names
    assert hits(names) == []
