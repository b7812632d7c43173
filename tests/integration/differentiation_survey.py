"""Every public callable of `jax` called on a test function, with and without a gradients
probe: which ones differentiate, and whether the probe's change reached what they returned.

Run as a script (`python differentiation_survey.py`), in a process of its own: calling every
public callable of `jax` with a function may change the process's settings. Prints one JSON
object: {name: {"differentiates": bool, "changed": bool}} for each callable that ran.

"Differentiates" is read from JAX itself, not from the grader's hook: a call that creates
one of autodiff's traces (`JVPTrace`, `LinearizeTrace`) differentiates.
"""

from __future__ import annotations

import json
import sys

import jax
import jax.numpy as jnp
from jax._src.interpreters import ad

from lessonkit.grading_child.ir_contexts import share_ir_contexts
from lessonkit.grading_child.request import ChangedCall
from lessonkit.grading_child.varied_calls import VariedCalls

POINT = {"w": jnp.array([1.0, 2.0]), "scale": jnp.array(1.5)}
ONES = jax.tree.map(jnp.ones_like, POINT)


def loss(p):
    return p["scale"] * jnp.sum(p["w"] ** 2)


PATTERNS = (
    lambda c: c(loss)(POINT),  # grad, jacrev, jacobian, hessian, ...
    lambda c: c(loss, POINT),  # vjp, linearize
    lambda c: c(loss, (POINT,), (ONES,)),  # jvp
    lambda c: c(loss, 0),  # fwd_and_bwd
)


class _Traces:
    """Counts autodiff's traces as JAX makes them."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self):
        self._saved = [(cls, cls.__init__) for cls in (ad.JVPTrace, ad.LinearizeTrace)]
        for cls, init in self._saved:
            cls.__init__ = self._counting(init)
        return self

    def _counting(self, init):
        def counted(trace, *args, **kwargs):
            self.count += 1
            init(trace, *args, **kwargs)

        return counted

    def __exit__(self, *exc) -> None:
        for cls, init in self._saved:
            cls.__init__ = init


def _realised(value, depth=0):
    """The arrays a result holds, calling what it returns as functions (a pullback, a
    linearised function, a jitted backward pass) on ones shaped like what they take."""
    if depth > 3:
        return []
    if isinstance(value, dict):
        return [a for k in sorted(value) for a in _realised(value[k], depth + 1)]
    if isinstance(value, list | tuple):
        if len(value) == 2 and all(callable(v) for v in value):
            # (forward, backward): the backward pass takes the forward's residuals
            try:
                output, residuals = value[0](POINT)
            except Exception:
                return []
            return _realised(output, depth + 1) + _called(lambda ct: value[1](residuals, ct), depth)
        if len(value) == 2 and callable(value[1]) and not callable(value[0]):
            # (output, function of it): a pullback or a backward pass takes the output's shape
            first = _realised(value[0], depth + 1)
            return first + _called(value[1], depth)
        return [a for v in value for a in _realised(v, depth + 1)]
    if isinstance(value, jax.Array):
        return [value]
    if callable(value):
        return _called(value, depth)
    return []


def _called(function, depth):
    for argument in ([ONES], [jnp.ones(())]):
        try:
            return _realised(function(*argument), depth + 1)
        except Exception:
            continue
    return []


def _run(callable_):
    """(differentiated, arrays) of the first pattern the callable takes, or None."""
    for pattern in PATTERNS:
        with _Traces() as traces:
            try:
                arrays = _realised(pattern(callable_))
            except Exception:
                continue
        return traces.count > 0, arrays
    return None


def _probed(name):
    """What `jax.<name>`, read once the probe is installed (as a cell reads it), returns."""
    calls = VariedCalls(jax, lambda v: jnp.asarray(v, dtype=jnp.float32))
    undo = calls.install(calls.prepare((ChangedCall("gradients", "shift_key", "scale", 1.0),)))
    try:
        return _run(getattr(jax, name))
    finally:
        undo()


def survey() -> dict[str, dict[str, bool]]:
    found = {}
    for name in sorted(dir(jax)):
        candidate = getattr(jax, name)
        if name.startswith("_") or not callable(candidate):
            continue
        plain = _run(candidate)
        if plain is None:
            continue
        differentiates, arrays = plain
        probed = _probed(name)
        changed = probed is None or len(probed[1]) != len(arrays)
        if probed is not None and not changed:
            changed = any(
                a.shape != b.shape or not bool(jnp.array_equal(a, b))
                for a, b in zip(arrays, probed[1], strict=True)
            )
        found[name] = {"differentiates": differentiates, "changed": changed}
    return found


if __name__ == "__main__":
    share_ir_contexts()  # JAX's lowerings share one MLIR context, as in a grading child
    json.dump(survey(), sys.stdout)
