"""state-02's declared mistakes, graded for real: each is named to the learner who makes it,
in the lesson's own code or in other code with the same values, and no right answer is.

One grader for the module (one reference run, the mistakes' runs beside it); attempts of
different tasks share a file (`grade.self_checks.attempts.grade_packed`), as `verify` grades them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from lessonkit.grade.grader import Grader
from lessonkit.grade.judging.mistake_text import same_mistake
from lessonkit.grade.self_checks.attempts import grade_packed
from lessonkit.lesson.model import Lesson
from lessonkit.settings import proving_settings


@dataclass(frozen=True)
class Rewritten:
    """A declared mistake written in other code that computes the same values."""

    task: str
    name: str  # the declared mistake it makes
    code: str


NESTED = """layer = {"bias": params["bias"], "weight": params["weight"]}
nested = dict(scale=jnp.ones(()), layer=layer)
def nested_loss(q):
    return (q["scale"] * (q["layer"]["weight"] @ x + q["layer"]["bias"]) - 3.) ** 2
"""
HAND = """wxb = params["weight"] @ x + params["bias"]
scale_by_hand = 2 * (wxb - 3.) * wxb
"""
ADAM = """import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
"""
CAUGHT = """try:
    jax.tree.map(lambda a, b: a - 0.05 * b, params, partial)
except ValueError as caught:
    mismatch = str(caught)
    print("Expected tree mismatch")
"""

# Ordered so that the alias, which empties `grads` for every later cell, shares its file
# with no attempt at adam-by-hand (the task after it).
REWRITTEN = (
    Rewritten(
        "make-it-yours",
        "typed-in answer",
        'norm_squared = 4.0 * 24\nmanual = grads["bias"] ** 2 + jnp.sum(grads["weight"] ** 2)\n',
    ),
    Rewritten(
        "make-it-yours",
        "keys named in the sum",
        'norm_squared = sum(jnp.sum(grads[k] ** 2) for k in ("weight", "bias"))\n'
        'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2\n',
    ),
    Rewritten(
        "make-it-yours",
        "forgetting to square",
        "norm_squared = jnp.sum(jnp.concatenate([jnp.ravel(v) for v in jax.tree.leaves(grads)]))\n"
        'manual = grads["weight"].sum() + grads["bias"]\n',
    ),
    Rewritten(
        "nested-model",
        "autodiff's scale bound in the same statement as g",
        NESTED
        + "grads_and_scale = [(G, G['scale'] * 1.0) for G in [jax.grad(nested_loss)(nested)]]\n"
        "g, scale_by_hand = grads_and_scale[0]\n"
        "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n",
    ),
    Rewritten(
        "nested-model",
        "g assembled from grads",
        NESTED + HAND + 'g = {"scale": scale_by_hand, "layer": dict(grads)}\n'
        "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n",
    ),
    Rewritten(
        "nested-model",
        "a structure check that cannot fail",
        NESTED + "g = jax.grad(nested_loss)(nested)\nsame_structure = 1 == 1\n" + HAND,
    ),
    Rewritten(
        "nested-model",
        "a structure check by leaf count",
        NESTED + "g = jax.grad(nested_loss)(nested)\n"
        "count = jax.tree.structure(nested).num_leaves\n"
        "same_structure = jax.tree.structure(g).num_leaves == count\n"
        "assert same_structure\n" + HAND + 'assert jnp.allclose(g["scale"], scale_by_hand)\n',
    ),
    Rewritten(
        "repair",
        "the update with the partial tree",
        'partial = dict(weight=grads["weight"])\nmismatch = str()\n'
        'print("Expected tree mismatch")\n'
        "fixed = jax.tree.map(lambda a, b: a - 0.05 * b, params, partial)\n",
    ),
    Rewritten(
        "repair",
        "a print in place of the error",
        'partial = dict(weight=grads["weight"])\nprint("Expected tree mismatch")\n'
        "leaves = [p - 0.05 * q for p, q in zip(jax.tree.leaves(params), jax.tree.leaves(grads))]\n"
        "fixed = jax.tree.unflatten(jax.tree.structure(params), leaves)\n",
    ),
    Rewritten(
        "repair",
        "the step's own result handed back",
        'partial = dict(weight=grads["weight"])\n' + CAUGHT + "fixed = dict(updated)\n",
    ),
    Rewritten(
        "repair",
        "deleting from grads through an alias",
        'partial = grads\npartial.pop("bias")\n' + CAUGHT + "else:\n"
        '    raise AssertionError("Expected a missing-key failure")\n'
        "fixed = jax.tree.map(lambda a, b: a - 0.05 * b, params, grads)\n",
    ),
    Rewritten(
        "adam-by-hand",
        "optax's step handed back",
        ADAM + "adam_by_hand = jax.tree.map(lambda v: v, optax_step)\n",
    ),
    Rewritten(
        "adam-by-hand",
        "plain gradient descent",
        ADAM + "adam_by_hand = {k: params[k] - 0.1 * grads[k] for k in params}\n"
        "assert jax.tree.all(jax.tree.map(jnp.allclose, optax_step, adam_by_hand))\n",
    ),
)


# Held-out answers (issue 50, item 6): written otherwise than any attempt, each with the
# mistake it makes, or None where no declared mistake behaves like it on every scenario.
HELD_OUT = (
    # The update done with the new partial dict, its error caught first as the task asks: it
    # stops as the alias does, but on `partial`; `grads` keeps every key (parent: named
    # "deleting from grads through an alias").
    Rewritten(
        "repair",
        "",
        'partial = {k: v for k, v in grads.items() if k != "bias"}\n'
        + CAUGHT
        + "fixed = jax.tree.map(lambda a, b: a - 0.05 * b, params, partial)\n",
    ),
    # scale_by_hand read from g a statement after g: under the probes that drop or rename the
    # scale key it raises the KeyError the attempt raises, with g and same_structure already
    # assigned (parent: not named).
    Rewritten(
        "nested-model",
        "autodiff's scale bound in the same statement as g",
        NESTED + "g = jax.grad(nested_loss)(nested)\n"
        "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n"
        'scale_by_hand = g["scale"] + 0.0\n',
    ),
)


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    with Grader(proving_settings(os.environ, jobs=2)) as own:
        yield own


def test_every_mistake_the_lesson_declares_has_a_rewritten_form_here(lesson: Lesson):
    declared = {(a.task, a.name) for a in lesson.grading.attempts if a.is_mistake}
    rewritten = {(r.task, r.name) for r in REWRITTEN}
    duplicates = {  # one mistake written two ways, explained alike: either title is right
        (a.task, a.name)
        for a in lesson.grading.attempts
        for b in lesson.grading.attempts
        if a.is_mistake and b.is_mistake and a.name != b.name and same_mistake(a, b)
    }
    assert declared - rewritten <= duplicates


def test_each_declared_attempt_is_named_as_itself_and_right_answers_never(
    lesson: Lesson, grader: Grader
):
    graded = grade_packed(grader, lesson, lesson.grading.attempts, "declared", 2)
    by_name = {a.name: a for a in lesson.grading.attempts}
    for attempt, _, result in graded:
        if attempt.expect == "passed":
            assert result.status == "passed" and result.mistake is None, attempt.name
        elif attempt.is_mistake:
            named = by_name.get(result.mistake or "")
            assert named is not None and same_mistake(named, attempt), (attempt.name, result)
            assert result.message.startswith(f'This is a known mistake, "{named.name}". ')


def test_the_same_mistake_in_other_code_is_named_with_its_explanation(
    lesson: Lesson, grader: Grader
):
    by_name = {a.name: a for a in lesson.grading.attempts}
    for item, _, result in grade_packed(grader, lesson, REWRITTEN, "rewritten", 2):
        assert result.status in ("failed", "error"), (item.name, result)
        assert result.mistake == item.name, (item.name, result.message)
        mistake = by_name[item.name]
        assert mistake.why in result.message and mistake.instead in result.message
        assert item.code not in result.message  # no attempt code is ever shown


def test_a_solved_file_is_never_diagnosed(lesson: Lesson, grader: Grader):
    solutions = tuple(
        Rewritten(t.id, "solution", t.solution) for t in lesson.tasks if t.solution.strip()
    )
    for _, _, result in grade_packed(grader, lesson, solutions, "solved", 1):
        assert result.status == "passed" and result.mistake is None


def test_a_mistake_is_named_only_where_the_answer_behaves_like_it_everywhere(
    lesson: Lesson, grader: Grader
):
    for item, _, result in grade_packed(grader, lesson, HELD_OUT, "held-out", 2):
        assert result.status in ("failed", "error"), (item.code, result)
        assert result.mistake == (item.name or None), (item.code, result.message)
        if not item.name:
            assert not result.message.startswith("This is a known mistake"), result.message


def test_no_guess_at_a_cause_follows_a_named_mistake(lesson: Lesson, grader: Grader):
    """A typed-in number fails on other inputs, where the check alone would add "It looks
    hard-coded, ...": the mistake's own words replace that guess (parent: both were said)."""
    typed = (Rewritten("make-it-yours", "typed-in answer", REWRITTEN[0].code),)
    ((_, _, result),) = grade_packed(grader, lesson, typed, "typed", 1)
    assert result.mistake == "typed-in answer" and result.check == "other inputs"
    assert "hard-coded" not in result.message
    assert "right on the lesson's inputs but not on other inputs" in result.message
