# hostile: make-it-yours computes nothing: it finds, with gc, the reference run's namespace
# on the same inputs (the reference ran earlier in this same process) and copies its answers.
#@ PREFIX
__learner__ = True
#@ TASK make-it-yours
import gc as _gc
def _same(a, b):
    try:
        la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
        return jax.tree.structure(a) == jax.tree.structure(b) and all(
            bool(jnp.array_equal(u, v)) for u, v in zip(la, lb))
    except Exception:
        return False
def _reference_namespace(name):
    """A namespace of the reference run (same process) on the inputs this scenario has."""
    for d in _gc.get_objects():
        if (type(d) is dict and d is not globals() and name in d and "__learner__" not in d
                and d.get("__name__") == "__main__" and _same(d.get("params"), params)
                and _same(d.get("x"), x) and _same(d.get("grads"), grads)):
            return d
    raise LookupError(name)
_ref = _reference_namespace("norm_squared")
norm_squared = _ref["norm_squared"]
manual = _ref["manual"]
