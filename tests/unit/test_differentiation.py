"""The gradients probe in JAX's differentiation layer (`grading_child/differentiation.py`):
every way to differentiate carries its change, the same way, and the layer it hooks is
there in this JAX."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import pytest

from lessonkit.grading_child.request import ChangedCall
from lessonkit.grading_child.varied_calls import VariedCalls

POINT = {"w": jnp.array([1.0, 2.0]), "scale": jnp.array(1.5)}
BEND = (0.5, 1.1, 0.3)


def loss(p):
    return p["scale"] * jnp.sum(p["w"] ** 2)


@jax.custom_vjp
def loss_vjp(p):
    return loss(p)


loss_vjp.defvjp(lambda p: (loss(p), p), lambda p, ct: (jax.grad(loss)(p),))


@jax.custom_jvp
def loss_jvp(p):
    return loss(p)


loss_jvp.defjvp(lambda ps, ts: (loss(ps[0]), jax.jvp(loss, ps, ts)[1]))


def _basis(key):
    return {k: (jnp.ones_like if k == key else jnp.zeros_like)(v) for k, v in POINT.items()}


def _directional(derivative):
    """A gradient's scale entry from a function of a tangent (jvp, linearize)."""
    return {
        "scale": derivative(_basis("scale")),
        "w": jnp.stack(
            [derivative({"w": jnp.eye(2)[i], "scale": jnp.zeros(())}) for i in range(2)]
        ),
    }


WAYS = {
    "grad": lambda: jax.grad(loss)(POINT),
    "value_and_grad": lambda: jax.value_and_grad(loss)(POINT)[1],
    "vjp": lambda: jax.vjp(loss, POINT)[1](jnp.ones(()))[0],
    "jacrev": lambda: jax.jacrev(loss)(POINT),
    "jacobian": lambda: jax.jacobian(loss)(POINT),
    "jacfwd": lambda: jax.jacfwd(loss)(POINT),
    "jvp": lambda: _directional(lambda t: jax.jvp(loss, (POINT,), (t,))[1]),
    "linearize": lambda: _directional(jax.linearize(loss, POINT)[1]),
    "fwd_and_bwd": lambda: (lambda f, b: b(f(POINT)[1], jnp.ones(())))(*jax.fwd_and_bwd(loss, 0)),
    "custom_vjp": lambda: jax.grad(loss_vjp)(POINT),
    "custom_jvp": lambda: jax.grad(loss_jvp)(POINT),
    "jit of grad": lambda: jax.jit(jax.grad(loss))(POINT),
    "grad with aux": lambda: jax.grad(lambda p: (loss(p), 7), has_aux=True)(POINT)[0],
}


def _probe(transform, key, value=None, bend=None):
    calls = VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    return calls.install(calls.prepare((ChangedCall("gradients", transform, key, value, bend),)))


def test_the_layer_it_hooks_is_in_this_jax():
    """JAX's internals move: a release without them fails here, by name, not as a probe
    that silently changes nothing."""
    from lessonkit.grading_child import differentiation

    assert differentiation.missing_layer() == []


@pytest.mark.parametrize("way", sorted(WAYS))
def test_every_way_to_differentiate_moves_by_the_same_bent_shift(way):
    true = float(jnp.sum(POINT["w"] ** 2))  # d loss / d scale
    depth, frequency, phase = BEND
    moved = true + 1.0 * (1 + depth * math.sin(frequency * true + phase))
    undo = _probe("shift_key", "scale", 1.0, BEND)
    try:
        derivative = WAYS[way]()
    finally:
        undo()
    assert float(derivative["scale"]) == pytest.approx(moved, rel=1e-5)
    assert jnp.allclose(derivative["w"], 2 * POINT["scale"] * POINT["w"])


@pytest.mark.parametrize("way", sorted(w for w in WAYS if w not in ("jvp", "linearize")))
def test_every_derivative_shaped_like_its_argument_loses_a_dropped_key(way):
    """jvp and linearize return a directional derivative, which has no keys to drop."""
    undo = _probe("drop_key", "scale")
    try:
        derivative = WAYS[way]()
    finally:
        undo()
    assert sorted(derivative) == ["w"]


def test_a_derivative_inside_another_is_changed_once():
    """A Hessian (a Jacobian of a Jacobian) moves where the outer derivative is taken: its
    scale column by the shift, once."""
    plain = jax.hessian(loss)(POINT)
    undo = _probe("shift_key", "scale", 1.0)
    try:
        moved = jax.hessian(loss)(POINT)
    finally:
        undo()
    assert jnp.allclose(moved["w"]["scale"], plain["w"]["scale"] + 1.0)
    assert jnp.allclose(moved["w"]["w"], plain["w"]["w"])


def test_the_probe_is_undone_and_counts_each_outermost_differentiation():
    from lessonkit.grading_child import differentiation

    watch = differentiation.Watch(jax, None, None)
    undo = watch.install()
    try:
        for way in WAYS.values():
            way()
    finally:
        undo()
    assert watch.seen >= len(WAYS)
    before = watch.seen
    jax.grad(loss)(POINT)
    assert watch.seen == before  # no longer installed


def _grad_aux(p):
    gradient = jax.grad(loss)(p)
    return gradient, gradient


NESTED = {
    "jvp of grad, its primal": lambda: jax.jvp(jax.grad(loss), (POINT,), (POINT,))[0],
    "jacfwd with has_aux, its aux": lambda: jax.jacfwd(_grad_aux, has_aux=True)(POINT)[1],
    "hessian with has_aux, its aux": lambda: jax.hessian(
        lambda p: (loss(p), jax.grad(loss)(p)), has_aux=True
    )(POINT)[1],
    "vjp of grad, its primal": lambda: jax.vjp(jax.grad(loss), POINT)[0],
    "linearize of grad, its primal": lambda: jax.linearize(jax.grad(loss), POINT)[0],
    "vmap of grad": lambda: jax.tree.map(
        lambda a: a[0], jax.vmap(jax.grad(loss))(jax.tree.map(lambda a: a[None], POINT))
    ),
    "checkpoint of grad": lambda: jax.checkpoint(jax.grad(loss))(POINT),
    "linear_transpose of linearize": lambda: jax.linear_transpose(
        jax.linearize(loss, POINT)[1], POINT
    )(jnp.ones(()))[0],
    "grad of a custom_vjp whose rule takes grad": lambda: jax.grad(loss_vjp)(POINT),
}


@pytest.mark.parametrize("way", sorted(NESTED))
def test_a_gradient_at_any_depth_moves_as_jax_grads_does(way):
    """Issue 60: the gradient inside another transformation (read from its primal or
    auxiliary output) moves once, as `jax.grad`'s alone does: not only the outermost."""
    depth, frequency, phase = BEND
    true = float(jnp.sum(POINT["w"] ** 2))
    moved = true + 1.0 * (1 + depth * math.sin(frequency * true + phase))
    undo = _probe("shift_key", "scale", 1.0, BEND)
    try:
        derivative = NESTED[way]()
    finally:
        undo()
    assert float(derivative["scale"]) == pytest.approx(moved, rel=1e-5)
    assert jnp.allclose(derivative["w"], 2 * POINT["scale"] * POINT["w"])


def test_the_derivative_of_a_moved_gradient_is_the_true_hessian_moved_once():
    """A change is invisible to the derivatives taken of it: jacfwd of grad, jacrev of grad
    and hessian agree, each the true Hessian with its own level's change."""
    plain = jax.hessian(loss)(POINT)
    undo = _probe("shift_key", "scale", 1.0)
    try:
        ways = [jax.hessian(loss)(POINT), jax.jacfwd(jax.grad(loss))(POINT)]
        ways.append(jax.jacrev(jax.grad(loss))(POINT))
    finally:
        undo()
    for moved in ways:
        assert jnp.allclose(moved["w"]["scale"], plain["w"]["scale"] + 1.0)
        assert jnp.allclose(moved["w"]["w"], plain["w"]["w"])


def _by_finite_differences(p, eps=1e-3):
    return {
        "scale": (loss({**p, "scale": p["scale"] + eps}) - loss({**p, "scale": p["scale"] - eps}))
        / (2 * eps),
        "w": jnp.stack(
            [
                (loss({**p, "w": p["w"].at[i].add(eps)}) - loss({**p, "w": p["w"].at[i].add(-eps)}))
                / (2 * eps)
                for i in range(2)
            ]
        ),
    }


def test_reached_counts_only_derivatives_the_change_applies_to():
    """A derivative by finite differences or by a Taylor series (`jet`) is not reached: the
    child then reports that the probe said nothing. Any JAX derivative is, for a moved leaf
    (a flat model's gradient, which has no scale key to move, included); for a changed
    structure only one assembled where a structure site is (not a directional one).

    The runner reads only whether the count moved during a cell: a derivative JAX traces
    for the first time in the process also counts JAX's own `jvp` of each jitted function
    inside it, so the count it adds depends on what ran before."""
    from jax.experimental import jet

    def moved(step) -> bool:
        before = calls.reached()
        step()
        return calls.reached() > before

    calls = VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    undo = calls.install(calls.prepare((ChangedCall("gradients", "shift_key", "scale", 1.0),)))
    try:
        assert not moved(lambda: _by_finite_differences(POINT))
        assert not moved(
            lambda: jet.jet(
                lambda t: loss({**POINT, "scale": POINT["scale"] + t}), (0.0,), ((1.0,),)
            )
        )
        assert calls.reached() == 0
        assert moved(lambda: jax.grad(lambda w: jnp.sum(w**2))(POINT["w"]))  # no scale key
        assert moved(lambda: jax.jvp(loss, (POINT,), (POINT,)))
    finally:
        undo()
    calls = VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    undo = calls.install(calls.prepare((ChangedCall("gradients", "drop_key", "scale", None),)))
    try:
        assert not moved(lambda: jax.jvp(loss, (POINT,), (POINT,)))
        assert not moved(lambda: jax.linearize(loss, POINT)[1](POINT))
        assert calls.reached() == 0
        assert moved(lambda: jax.grad(loss)(POINT))
    finally:
        undo()
