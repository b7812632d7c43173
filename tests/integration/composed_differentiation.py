"""Every pair of JAX's public differentiating transformations, one inside the other, and
`jax.experimental.jet`, graded under the gradients probe as a cell using them would be.

Run as a script (`python composed_differentiation.py`), in a process of its own (it asks
`differentiation_survey.py` which public callables of `jax` differentiate). Prints one JSON
object: {"differentiating": [...], "rows": [{outer, inner, right, wrong, structure}]}.

A gradient of `loss` is taken with `inner` and its value read back out of `outer` applied to
the function that takes it (a primal or auxiliary output): `jvp(grad(loss))`'s primal,
`jacfwd(grad_aux, has_aux=True)`'s auxiliary output, and so on. Each composition is graded
as `grade/judging/checks.py` grades a probe: a cell whose derivatives the probe reached must
give what `jax.grad` gives under it, and one it never reached is judged by the unprobed
scenario alone.

- right: the gradient itself passes (right without the probe; under it, the reference's);
- wrong: `scale_by_hand` read from that gradient (the declared mistake "autodiff's scale
  bound in the same statement as g") fails: under the probe it moves away from the hand
  formula, which the reference's does not;
- structure: the gradient passes the probe that drops its `scale` key (it loses the key where
  the reference's does, or the probe reached nothing of it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
from jax.experimental import jet

sys.path.insert(0, str(Path(__file__).parent))
from differentiation_survey import survey

from lessonkit.grading_child.ir_contexts import share_ir_contexts
from lessonkit.grading_child.request import ChangedCall
from lessonkit.grading_child.varied_calls import VariedCalls

POINT = {"w": jnp.array([1.0, 2.0]), "scale": jnp.array(1.5)}
BEND = (0.5, 1.1, 0.3)


def loss(p):
    return p["scale"] * jnp.sum(p["w"] ** 2)


def by_hand(p):
    """The gradient worked out by hand: what the reference's `scale_by_hand` is."""
    return {"w": 2 * p["scale"] * p["w"], "scale": jnp.sum(p["w"] ** 2)}


def _coordinates(p):
    """(leaf index, position) for every number of `p`, and the tree's flattening."""
    leaves, treedef = jax.tree.flatten(p)
    return [(i, j) for i, leaf in enumerate(leaves) for j in range(leaf.size)], leaves, treedef


def _basis(p, i, j):
    leaves, treedef = jax.tree.flatten(p)
    zeros = [jnp.zeros_like(leaf) for leaf in leaves]
    zeros[i] = zeros[i].reshape(-1).at[j].set(1.0).reshape(leaves[i].shape)
    return jax.tree.unflatten(treedef, zeros)


def _assembled(p, directional):
    """A gradient put together from one directional derivative per coordinate."""
    coordinates, leaves, treedef = _coordinates(p)
    values = [directional(_basis(p, i, j)) for i, j in coordinates]
    out, k = [], 0
    for leaf in leaves:
        out.append(jnp.stack(values[k : k + leaf.size]).reshape(leaf.shape))
        k += leaf.size
    return jax.tree.unflatten(treedef, out)


def _jet_along(f, p, direction):
    """f's derivative along `direction` from a first-order Taylor series (jet takes arrays)."""
    _, (d,) = jet.jet(
        lambda t: f(jax.tree.map(lambda a, b: a + t * b, p, direction)), (0.0,), ((1.0,),)
    )
    return d


# How each transform gives the gradient of a scalar function (the inner role), each called
# when the composition runs, as a cell calls it once the probe is installed.
GRADIENT = {
    "grad": lambda f: lambda p: jax.grad(f)(p),
    "value_and_grad": lambda f: lambda p: jax.value_and_grad(f)(p)[1],
    "vjp": lambda f: lambda p: jax.vjp(f, p)[1](jnp.ones(()))[0],
    "jacrev": lambda f: lambda p: jax.jacrev(f)(p),
    "jacobian": lambda f: lambda p: jax.jacobian(f)(p),
    "jacfwd": lambda f: lambda p: jax.jacfwd(f)(p),
    "jvp": lambda f: lambda p: _assembled(p, lambda t: jax.jvp(f, (p,), (t,))[1]),
    "linearize": lambda f: (
        lambda p: jax.linear_transpose(jax.linearize(f, p)[1], p)(jnp.ones(()))[0]
    ),
    "fwd_and_bwd": lambda f: (
        lambda p: (lambda fwd, bwd: bwd(fwd(p)[1], jnp.ones(())))(*jax.fwd_and_bwd(f, 0))
    ),
    "jet": lambda f: lambda p: _assembled(p, lambda t: _jet_along(f, p, t)),
}
NOT_A_GRADIENT = {"hessian": "a Hessian is no gradient: hessian is only the outer one"}


def _summed(tree):
    return sum(jnp.sum(leaf) for leaf in jax.tree.leaves(tree))


def _with_aux(h):
    return lambda p: (_summed(h(p)), h(p))


def _ones(p):
    return jax.tree.map(jnp.ones_like, p)


# How each transform, applied to a function `h` of the parameters, hands back h's value.
VALUE_OUT_OF = {
    "grad": lambda h: lambda p: jax.grad(_with_aux(h), has_aux=True)(p)[1],
    "value_and_grad": lambda h: lambda p: jax.value_and_grad(_with_aux(h), has_aux=True)(p)[0][1],
    "vjp": lambda h: lambda p: jax.vjp(h, p)[0],
    "jacrev": lambda h: lambda p: jax.jacrev(_with_aux(h), has_aux=True)(p)[1],
    "jacobian": lambda h: lambda p: jax.jacobian(_with_aux(h), has_aux=True)(p)[1],
    "jacfwd": lambda h: lambda p: jax.jacfwd(_with_aux(h), has_aux=True)(p)[1],
    "hessian": lambda h: lambda p: jax.hessian(_with_aux(h), has_aux=True)(p)[1],
    "jvp": lambda h: lambda p: jax.jvp(h, (p,), (_ones(p),))[0],
    "linearize": lambda h: lambda p: jax.linearize(h, p)[0],
    "fwd_and_bwd": lambda h: lambda p: jax.fwd_and_bwd(h, 0)[0](p)[0],
    "jet": lambda h: (
        lambda p: jet.jet(lambda t: h(jax.tree.map(lambda a: a + t, p)), (0.0,), ((1.0,),))[0]
    ),
}


def _probed(transform, key, value=None, bend=None):
    calls = VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    undo = calls.install(calls.prepare((ChangedCall("gradients", transform, key, value, bend),)))
    return calls, undo


def _run(compute, transform=None, key=None, value=None, bend=None):
    """(what `compute()` returns, whether a probe's change reached a derivative it took)."""
    if transform is None:
        return compute(), False
    calls, undo = _probed(transform, key, value, bend)
    try:
        return compute(), calls.reached() > 0
    finally:
        undo()


def _close(a, b) -> bool:
    if jax.tree.structure(a) != jax.tree.structure(b):
        return False
    pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    return all(bool(jnp.allclose(x, y, rtol=1e-4)) for x, y in pairs)


def grade(outer: str, inner: str) -> dict[str, bool]:
    composed = VALUE_OUT_OF[outer](GRADIENT[inner](loss))
    true = by_hand(POINT)
    reference_moved, _ = _run(lambda: jax.grad(loss)(POINT), "shift_key", "scale", 1.0, BEND)
    plain, _ = _run(lambda: composed(POINT))
    moved, reached = _run(lambda: composed(POINT), "shift_key", "scale", 1.0, BEND)
    right = _close(plain, true) and (not reached or _close(moved, reference_moved))
    # scale_by_hand read from g: caught where it moves away from the hand formula.
    wrong_caught = reached and not bool(jnp.allclose(moved["scale"], true["scale"], rtol=1e-4))
    dropped, dropped_reached = _run(lambda: composed(POINT), "drop_key", "scale")
    structure = not dropped_reached or sorted(dropped) == ["w"]
    return {"right": bool(right), "wrong": bool(wrong_caught), "structure": bool(structure)}


def main() -> dict:
    found = survey()
    differentiating = sorted(n for n, seen in found.items() if seen["differentiates"])
    outers = [*differentiating, "jet"]
    inners = [n for n in outers if n not in NOT_A_GRADIENT]
    rows = []
    for outer in outers:
        for inner in inners:
            try:
                verdict = grade(outer, inner)
            except Exception as exc:  # a pair JAX cannot compose is a row that says why
                verdict = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            rows.append({"outer": outer, "inner": inner, **verdict})
    return {"differentiating": differentiating, "rows": rows}


if __name__ == "__main__":
    share_ir_contexts()  # JAX's lowerings share one MLIR context, as in a grading child
    json.dump(main(), sys.stdout)
