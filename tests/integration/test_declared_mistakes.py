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
        "g assembled from the flat model's gradient taken again",
        NESTED
        + HAND
        + 'g = {"scale": scale_by_hand, "layer": jax.value_and_grad(loss)(params)[1]}\n'
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
    # scale_by_hand read from g a statement after g: the probe that changes g where the cell
    # binds it moves scale_by_hand too, which the attempt binding both at once never meets, so
    # the attempt that reads g a statement later is named (parent: the one statement's).
    Rewritten(
        "nested-model",
        "scale_by_hand read from g",
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


# Differentiation however it is written (issue 50): the nested model's gradient through each
# public way JAX differentiates, right and as the declared mistake (the flat model's
# derivative, taken the same way, put together with a formula).
SAME = "same_structure = jax.tree.structure(g) == jax.tree.structure(nested)\n"
CUSTOM = """@jax.custom_jvp
def own_rule(q):
    return nested_loss(q)
@own_rule.defjvp
def _(primals, tangents):
    return own_rule(primals[0]), jax.jvp(nested_loss, primals, tangents)[1]
"""
JET_GRAD = """from jax.experimental import jet
def jet_grad(q):
    leaves, treedef = jax.tree.flatten(q)
    def slope(i, j):
        def along(t):
            moved = [a.reshape(-1).at[j].add(t).reshape(a.shape) if k == i else a
                     for k, a in enumerate(leaves)]
            return nested_loss(jax.tree.unflatten(treedef, moved))
        return jet.jet(along, (0.0,), ((1.0,),))[1][0]
    return jax.tree.unflatten(
        treedef, [jnp.stack([slope(i, j) for j in range(a.size)]).reshape(a.shape)
                  for i, a in enumerate(leaves)])
"""
JET = JET_GRAD + "g = jet_grad(nested)\n"  # a coordinate at a time
BY_HAND = """wxb_ = nested["layer"]["weight"] @ x + nested["layer"]["bias"]
err = 2 * (nested["scale"] * wxb_ - 3.)
g = {"layer": {"weight": err * nested["scale"] * x, "bias": err * nested["scale"]},
     "scale": err * wxb_}
"""
RIGHT_WAYS = {
    "jax.jacobian": "g = jax.jacobian(nested_loss)(nested)\n",
    "jax.jacrev": "g = jax.jacrev(nested_loss)(nested)\n",
    "jax.jacfwd": "g = jax.jacfwd(nested_loss)(nested)\n",
    "jax.vjp": "g, = jax.vjp(nested_loss, nested)[1](jnp.ones(()))\n",
    "jax.fwd_and_bwd": "fwd, bwd = jax.fwd_and_bwd(nested_loss, 0)\n"
    "_, residuals = fwd(nested)\ng = bwd(residuals, jnp.ones(()))\n",
    "a custom_jvp rule": CUSTOM + "g = jax.grad(own_rule)(nested)\n",
    "jax.experimental.jet, a coordinate at a time": JET,
    "by hand": BY_HAND,
    "jax.grad bound beside an ungraded name": "_, g = 0, jax.grad(nested_loss)(nested)\n",
}
FLAT_WAYS = {
    "jax.jacobian": "jax.jacobian(loss)(params)",
    "jax.jacfwd": "jax.jacfwd(loss)(params)",
    "jax.value_and_grad": "jax.value_and_grad(loss)(params)[1]",
    "jax.vjp": "jax.vjp(loss, params)[1](jnp.ones(()))[0]",
    "jax.jvp": '{"weight": jnp.stack([jax.jvp(loss, (params,), ({"weight": jnp.eye(2)[i], '
    '"bias": jnp.zeros(())},))[1] for i in range(2)]), "bias": jax.jvp(loss, (params,), '
    '({"weight": jnp.zeros(2), "bias": jnp.ones(())},))[1]}',
    "jax.linearize": '(lambda f: {"weight": jnp.stack([f({"weight": jnp.eye(2)[i], '
    '"bias": jnp.zeros(())}) for i in range(2)]), "bias": f({"weight": jnp.zeros(2), '
    '"bias": jnp.ones(())})})(jax.linearize(loss, params)[1])',
}


def test_right_gradients_however_taken_pass_and_are_never_diagnosed(lesson: Lesson, grader: Grader):
    """A right g through any way JAX returns a derivative shaped like `nested` passes every
    probe of the task (a moved, dropped or renamed key included) and names no mistake."""
    items = tuple(
        Rewritten("nested-model", way, NESTED + code + SAME + HAND)
        for way, code in RIGHT_WAYS.items()
    )
    for item, _, result in grade_packed(grader, lesson, items, "right-ways", 2):
        assert (result.status, result.mistake) == ("passed", None), (item.name, result.message)


# A right g by jet, read back out of another derivative: the probe of JAX's derivatives
# reaches the outer one but not the Taylor series inside it, so it cannot move this g, which
# then stays where the reference's moves (a limit the security guide names), as the flat
# model's gradient taken again does. It must still never be named as that mistake: it never
# reads the flat model's `loss`.
JET_INSIDE = {
    "the primal of jax.jvp": (
        "g = jax.jvp(jet_grad, (nested,), (jax.tree.map(jnp.ones_like, nested),))[0]\n"
    ),
    "the auxiliary output of jax.jacfwd": (
        "g = jax.jacfwd(lambda q: (nested_loss(q), jet_grad(q)), has_aux=True)(nested)[1]\n"
    ),
    "the primal of jax.linearize": "g = jax.linearize(jet_grad, nested)[0]\n",
}


def test_a_right_jet_gradient_read_out_of_another_derivative_is_never_named(
    lesson: Lesson, grader: Grader
):
    """Named before as "g assembled from the flat model's gradient taken again", which it
    behaves like under every scenario: a mistake is named only for a cell that reads the
    lesson's state the mistake is about (here `loss`), issue 60."""
    items = tuple(
        Rewritten("nested-model", way, NESTED + JET_GRAD + code + SAME + HAND)
        for way, code in JET_INSIDE.items()
    )
    for item, _, result in grade_packed(grader, lesson, items, "jet-inside", 2):
        assert result.mistake is None, (item.name, result.message)
        assert not result.message.startswith("This is a known mistake"), result.message


def test_the_declared_mistake_however_differentiated_is_named(lesson: Lesson, grader: Grader):
    """g assembled from the flat model's derivative fails, named as the declared mistake,
    whichever way that derivative is taken."""
    items = tuple(
        Rewritten(
            "nested-model",
            way,
            NESTED + HAND + f'g = {{"scale": scale_by_hand, "layer": {code}}}\n' + SAME,
        )
        for way, code in FLAT_WAYS.items()
    )
    for item, _, result in grade_packed(grader, lesson, items, "mistake-ways", 2):
        assert result.status == "failed", (item.name, result.message)
        assert result.mistake == "g assembled from the flat model's gradient taken again", (
            item.name,
            result.message,
        )


# The declared mistake "g assembled from grads" inside the learner's own custom_vjp: its
# backward rule hands back `grads` for the layer, so `jax.grad` returns them as g's.
OWN_RULE_RETURNS_GRADS = """@jax.custom_vjp
def own_rule(q):
    return nested_loss(q)
def own_rule_fwd(q):
    return nested_loss(q), q
def own_rule_bwd(q, cotangent):
    return ({"layer": grads, "scale": cotangent * scale_by_hand},)
own_rule.defvjp(own_rule_fwd, own_rule_bwd)
g = jax.grad(own_rule)(nested)
"""


def test_the_declared_mistake_inside_the_learners_own_rule_is_named(lesson: Lesson, grader: Grader):
    """A custom_vjp whose backward rule returns `grads` for the layer is the declared mistake
    "g assembled from grads" written as a derivative: it fails and is named. The probe that
    moves autodiff's layer gradients moves the rule's output too, but the mistake's cell
    takes no derivative that probe could move, so that scenario is no evidence about it."""
    items = (
        Rewritten(
            "nested-model", "g assembled from grads", NESTED + HAND + OWN_RULE_RETURNS_GRADS + SAME
        ),
    )
    for item, _, result in grade_packed(grader, lesson, items, "own-rule", 2):
        assert result.status == "failed", (item.name, result.message)
        assert result.mistake == item.name, (item.name, result.message)


def test_optax_step_however_reached_is_named(lesson: Lesson, grader: Grader):
    """optax's own step handed back fails, named, whether the cell calls
    optax.apply_updates or adds optax's updates to params itself (issue 50)."""
    items = (
        Rewritten(
            "adam-by-hand",
            "the updates added by hand",
            ADAM + "adam_by_hand = jax.tree.map(lambda p, u: p + u, params, adam_updates)\n",
        ),
        Rewritten(
            "adam-by-hand",
            "the transformation unpacked",
            "import optax\ninit, update = optax.adam(0.1)\n"
            "moves, _ = update(grads, init(params), params)\n"
            "optax_step = {k: params[k] + moves[k] for k in params}\n"
            "adam_by_hand = dict(optax_step)\n",
        ),
    )
    for item, _, result in grade_packed(grader, lesson, items, "optax-ways", 2):
        assert result.status == "failed", (item.name, result.message)
        assert result.mistake == "optax's step handed back", (item.name, result.message)


# The declared mistakes about what the cell does with g, where g itself is right but taken in
# a way no probe of JAX's derivatives reaches (a Taylor series, a formula by hand): the
# probes that change g where the cell binds it find them (issue 60).
WITHOUT_AUTODIFF = {"jet": JET, "by hand": BY_HAND}
USES_OF_G = {
    "scale_by_hand read from g": SAME + 'scale_by_hand = g["scale"] * 1\n',
    "a structure check that cannot fail": "same_structure = True\n" + HAND,
    "a structure check by leaf count": "count = len(jax.tree.leaves(nested))\n"
    "same_structure = len(jax.tree.leaves(g)) == count\n" + HAND,
}


def test_what_the_cell_does_with_g_is_named_however_g_is_taken(lesson: Lesson, grader: Grader):
    """scale_by_hand read from g, a typed-in or leaf-counting structure check: each fails and
    is named after a g by `jax.experimental.jet` or by hand, as after `jax.grad` (parent: each
    passed, since no derivative the gradients probes change was taken)."""
    items = tuple(
        Rewritten("nested-model", mistake, NESTED + way + use)
        for way in WITHOUT_AUTODIFF.values()
        for mistake, use in USES_OF_G.items()
    )
    for item, _, result in grade_packed(grader, lesson, items, "without-autodiff", 2):
        assert result.status == "failed", (item.code, result.message)
        assert result.mistake == item.name, (item.code, result.message)
