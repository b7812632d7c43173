"""`jit:` rules in {grading}: reading them, the load-time check of the lesson's own solution,
the wire entries the child sends, and the child's watch that repeats a call under jax.jit.

The verdicts the parent draws from reported outcomes are tested with fabricated run results
in test_checks.py; here the child's side runs in-process on real JAX, one small cell each.
"""

from __future__ import annotations

import json

import pytest

from lessonkit.errors import LessonError
from lessonkit.grade.channel.protocol import RuleOutcome, parse_event
from lessonkit.grade.channel.reported import Interference
from lessonkit.grading_child import cells, jit_watch, wire
from lessonkit.grading_child.request import CellSpec
from lessonkit.lesson.load import parse_lesson
from lessonkit.lesson.rules.jit import JitRule, jit_rule_gap

from conftest import LESSON_MD

# --------------------------------------------------------------------------- in lesson.md

WITH_FUNCTION = (
    "def squared_norm(tree):\n"
    "    return sum(jnp.sum(g ** 2) for g in jax.tree.leaves(tree))\n\n"
    "norm_squared = squared_norm(grads)\n"
)


def _lesson_with(rule: str, solution: str | None = None):
    return parse_lesson(_text_with(rule, solution), LESSON_MD)


def _text_with(rule: str, solution: str | None = None) -> str:
    text = LESSON_MD.read_text(encoding="utf-8")
    assert text.count("```{grading}\n") == 1
    text = text.replace("```{grading}\n", "```{grading}\n" + rule)
    if solution is not None:
        old = "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))\n"
        assert text.count(old) == 1
        text = text.replace(old, solution)
    return text


def test_a_jit_rule_is_read_per_task():
    lesson = _lesson_with("jit:\n  make-it-yours: [squared_norm]\n", WITH_FUNCTION)
    grading = lesson.grading
    assert grading is not None
    assert grading.rules_for("make-it-yours")["jit"] == JitRule(("squared_norm",))
    assert grading.rules_for("repair").get("jit") is None


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("jit: [squared_norm]\n", "'jit' must map task ids to lists of function names"),
        ("jit:\n  make-it-yours: squared_norm\n", "must list the names of functions"),
        ("jit:\n  make-it-yours: []\n", "must list the names of functions"),
        ("jit:\n  make-it-yours: [jax.jit]\n", "must list the names of functions"),
        ("jit:\n  no-such-task: [squared_norm]\n", "'jit' names no task of this lesson"),
        (
            "jit:\n  make-it-yours: [cube]\n",
            "the solution of 'make-it-yours' cannot meet its own 'jit' rule: it does not "
            "define `cube` at its top level",
        ),
    ],
)
def test_a_bad_jit_rule_is_a_lesson_error_at_its_line(rule, message):
    with pytest.raises(LessonError) as caught:
        _lesson_with(rule, WITH_FUNCTION)
    assert message in str(caught.value)
    assert caught.value.where.startswith(str(LESSON_MD))
    line = int(caught.value.where.rsplit(":", 1)[1])
    cited = _text_with(rule, WITH_FUNCTION).splitlines()[line - 1]
    assert cited.strip() == rule.splitlines()[-1].strip()  # the rule's own line


def test_a_solution_that_defines_but_never_uses_its_function_cannot_meet_the_rule():
    unused = "def squared_norm(tree):\n    return 0.0\n\nnorm_squared = 96.0\n"
    assert jit_rule_gap(JitRule(("squared_norm",)), unused) == (
        "it defines `squared_norm` but never uses it, so the grader has no call to repeat"
    )
    assert jit_rule_gap(JitRule(("squared_norm",)), WITH_FUNCTION) is None
    # a function handed to a transformation counts as used; one nested in a def does not bind
    assert jit_rule_gap(JitRule(("f",)), "f = lambda v: v\ny = jax.vmap(f)(xs)\n") is None
    nested = "def outer():\n    def f(v):\n        return v\n    return f(1)\n\ny = outer()\n"
    assert jit_rule_gap(JitRule(("f",)), nested) is not None


# --------------------------------------------------------------------------- on the wire


def _cell_event(**extra) -> bytes:
    event = wire.event(
        "cell", request="r", scenario="lesson", cell=3, status="ok", output="", **extra
    )
    return json.dumps(event).encode()


def test_jit_outcomes_are_read_from_a_cell_report():
    error = {
        "kind": "exception",
        "type": "TracerBoolConversionError",
        "module": "jax.errors",
        "message": "Attempted boolean conversion",
        "frames": [[3, 12, 1]],
    }
    event = parse_event(
        _cell_event(
            jit=[
                {"name": "f", "status": "error", "error": error},
                {"name": "g", "status": "not called"},
            ]
        )
    )
    assert event.outcomes("jit")[1] == RuleOutcome("g", "not called")
    assert event.outcomes("jit")[0].error is not None and event.outcomes("jit")[0].error.frames == (
        (3, 12, 1),
    )
    assert parse_event(_cell_event()).outcomes("jit") == ()


@pytest.mark.parametrize(
    "jit",
    [
        {"name": "f", "status": "ok"},  # not a list
        [{"name": "f", "status": "passed"}],  # an unknown status
        [{"name": "f", "status": "error"}],  # an error status without its error
        [{"name": "f", "status": "ok", "error": None}],  # an error with a status that has none
        [{"name": "f", "status": "ok", "extra": 1}],
    ],
)
def test_a_malformed_jit_entry_is_interference(jit):
    with pytest.raises(Interference):
        parse_event(_cell_event(jit=jit))


# --------------------------------------------------------------------------- in the child


def _run(source: str, names: tuple[str, ...], namespace: dict | None = None) -> list[dict]:
    """Compile and run one cell as the child does (in `namespace`), and return its jit report."""
    import jax

    cell = CellSpec(0, source, 0, "setup", (), {"jit": names})
    ((code, ()),) = cells.compile_cell(cell, frozenset())
    watch = jit_watch.JitWatch(jax.jit, {"<cell 0>": 0})
    space = {} if namespace is None else namespace
    space.update({"jax": jax, "jnp": jax.numpy, wire.rule_hook("jit"): watch.wrap})
    exec(code, space)
    return watch.report(list(names))


def test_a_python_if_on_an_argument_works_directly_and_is_reported_under_jit():
    import jax.numpy as jnp

    source = (
        "def clip(v, bound):\n"
        "    if v > bound:\n"
        "        return bound\n"
        "    return v\n\n"
        "clipped = clip(value, 1.0)\n"
    )
    namespace = {"value": jnp.array(3.0)}
    (outcome,) = _run(source, ("clip",), namespace)
    assert outcome["status"] == "error"
    assert outcome["error"]["type"] == "TracerBoolConversionError"
    assert outcome["error"]["frames"][-1][:2] == [0, 2]  # the learner's `if` line
    assert float(namespace["clipped"]) == 1.0  # the cell's own call ran as written


def test_a_function_that_traces_is_ok_and_its_prints_are_not_repeated(capsys):
    source = (
        "def double(v):\n"
        "    print('doubling')\n"
        "    return 2 * v\n\n"
        "twice = double(jnp.array(2.0))\n"
    )
    assert _run(source, ("double",)) == [{"name": "double", "status": "ok"}]
    assert capsys.readouterr().out == "doubling\n"


def test_a_function_never_called_or_never_bound_is_reported_as_such():
    source = "def unused(v):\n    return v\n\nlam = lambda v: v\nresult = lam(1.0)\n"
    assert _run(source, ("unused", "missing")) == [
        {"name": "unused", "status": "not called"},
        {"name": "missing", "status": "not defined"},
    ]
