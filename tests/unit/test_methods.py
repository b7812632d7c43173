"""Method rules (`method:` in {grading}): the syntax-tree check, its parsing and its checks.

The rule is read on the cell's syntax tree in the parent, so everything here is in-process:
what counts as a call of a dotted name once imports are resolved, which statements count,
the learner's message, and the lesson's own mistakes (a rule no solution meets, a task that
does not exist, an entry that is neither a name nor a statement).
"""

from __future__ import annotations

import pytest

from lessonkit.errors import LessonError
from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.rules.method import MethodRule, method_breach

from conftest import LESSON_MD

LOOP = "total = 0.\nfor g in leaves:\n    total = total + g\n"


def breach(source: str, context: tuple[str, ...] = (), **rule: tuple[str, ...]):
    return method_breach(MethodRule(**rule), source, context)


def test_a_forbidden_statement_is_found_with_its_line():
    found = breach("x = 1\n" + LOOP, forbid=("for",))
    assert found is not None and (found.forbidden, found.line) == (True, 3)
    assert found.message("line 40") == (
        "Your cell uses a Python `for` loop (line 40), which this task rules out."
    )


@pytest.mark.parametrize(
    ("statement", "source"),
    [
        ("while", "while x < 3:\n    x = x + 1\n"),
        ("if", "def f(x):\n    if x > 0:\n        return x\n    return -x\n"),
        ("for", "async def f(xs):\n    async for x in xs:\n        pass\n"),
    ],
)
def test_each_statement_is_found_inside_functions_too(statement, source):
    found = breach(source, forbid=(statement,))
    assert found is not None and found.forbidden


def test_a_comprehension_or_a_conditional_expression_is_not_a_statement():
    source = "total = sum(g for g in leaves)\ny = 1 if total else 0\n"
    assert breach(source, forbid=("for", "if", "while")) is None


def test_a_required_call_is_matched_through_the_files_imports():
    rule = {"require": ("jax.lax.cond",)}
    assert breach("y = jax.lax.cond(p, f, g, x)\n", **rule) is None
    assert breach("y = lax.cond(p, f, g, x)\n", ("from jax import lax",), **rule) is None
    assert breach("y = L.cond(p, f, g, x)\n", ("import jax.lax as L",), **rule) is None
    assert breach("y = cond(p, f, g, x)\n", ("from jax.lax import cond",), **rule) is None
    missing = breach("y = jnp.where(p, f(x), g(x))\n", **rule)
    assert missing is not None and not missing.forbidden
    assert missing.message() == "Your cell does not use `jax.lax.cond`, which this task asks for."


def test_a_name_mentioned_but_not_called_does_not_count():
    assert breach("cond = jax.lax.cond\n", require=("jax.lax.cond",)) is not None


def test_a_forbidden_call_names_what_the_task_asks_for_instead():
    found = breach(
        "y = np.where(p, 1, 2)\n",
        ("import numpy as np",),
        forbid=("numpy.where",),
        require=("jax.numpy.where",),
    )
    assert found is not None
    assert found.message("line 7") == (
        "Your cell uses `numpy.where` (line 7), which this task rules out; "
        "use `jax.numpy.where` instead."
    )


def test_a_cell_that_does_not_parse_is_left_to_the_run():
    assert breach("for x in\n", forbid=("for",)) is None


def test_a_determined_evader_gets_past_a_syntax_check():
    """Documented in docs/grading-security.md: the rule catches honest mistakes only."""
    assert breach('y = getattr(jax.lax, "cond")(p, f, g, x)\n', require=("jax.lax.cond",))


# --------------------------------------------------------------------------- in lesson.md


def _lesson_with(method: str):
    text = LESSON_MD.read_text(encoding="utf-8")
    assert text.count("```{grading}\n") == 1
    return parse_lesson(text.replace("```{grading}\n", "```{grading}\n" + method), LESSON_MD)


def test_a_method_rule_is_read_per_task():
    lesson = _lesson_with("method:\n  make-it-yours: {require: [jax.tree.leaves], forbid: [for]}\n")
    grading = lesson.grading
    assert grading is not None
    rule = grading.rules_for("make-it-yours")["method"]
    assert rule == MethodRule(("jax.tree.leaves",), ("for",))
    assert grading.rules_for("repair").get("method") is None


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("method: [for]\n", "'method' must map task ids"),
        (
            "method:\n  make-it-yours: {use: [for]}\n",
            "must be a mapping with require and/or forbid",
        ),
        ("method:\n  make-it-yours: {forbid: ['cond()']}\n", "'forbid' must list dotted names"),
        ("method:\n  make-it-yours: {forbid: [jax..lax]}\n", "'forbid' must list dotted names"),
        ("method:\n  make-it-yours: {require: [for], forbid: [for]}\n", "both required and"),
        ("method:\n  no-such-task: {forbid: [for]}\n", "names no task of this lesson"),
        (
            "method:\n  make-it-yours: {require: [jax.lax.cond]}\n",
            "the solution of 'make-it-yours' breaks its own 'method' rule: Your cell does not "
            "use `jax.lax.cond`",
        ),
    ],
)
def test_a_bad_method_rule_is_a_lesson_error_at_its_line(method, message):
    with pytest.raises(LessonError) as caught:
        _lesson_with(method)
    assert message in str(caught.value)
    assert caught.value.where.startswith(str(LESSON_MD))


def test_the_rule_parses_under_the_toolkits_ast_lock(monkeypatch):
    """Batch grading checks method rules in threads: CPython 3.11's concurrent `ast.parse`
    can fail with "AST constructor recursion depth mismatch" unless every parse is locked."""
    from lessonkit.lesson import syntax

    entered: list[bool] = []

    class Recording:
        def __enter__(self):
            entered.append(True)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(syntax, "_AST_LOCK", Recording())
    breach("y = lax.cond(p, f, g, x)\n", ("from jax import lax",), require=("jax.lax.cond",))
    assert len(entered) >= 2  # the cell and the file's imports
