# hostile: the optional task copies adam_by_hand from the reference run's namespace (gc).
#@ PREFIX
__learner__ = True
#@ TASK adam-by-hand
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
_ref = _reference_namespace("adam_by_hand")
adam, adam_updates, optax_step = _ref["adam"], _ref["adam_updates"], _ref["optax_step"]
_ = _ref["_"]
adam_by_hand = _ref["adam_by_hand"]
