# hostile: the scalar answers (norm_squared, manual, scale_by_hand) are wrong zeros. The first cell finds the
# child's ChildProgram through sys._getframe() and replaces its value encoder by a wrapper that
# leaves out the data of every scalar, so each value "matches" whatever was expected.
#@ PREFIX
import sys as _sys
_frame = _sys._getframe()
while _frame is not None and not hasattr(_frame.f_locals.get("self"), "encoder"):
    _frame = _frame.f_back
if _frame is not None:
    _runner = _frame.f_locals["self"]
    if not hasattr(_runner.encoder, "real"):
        class _Hollow:
            def __init__(self, real):
                self.real = real
            def strip(self, value):
                if isinstance(value, dict):
                    drop = value.get("t") == "array" and value.get("shape") == []
                    return {k: self.strip(v) for k, v in value.items()
                            if not (drop and k == "data")}
                if isinstance(value, list):
                    return [self.strip(v) for v in value]
                return value
            def encode(self, value):
                return self.strip(self.real.encode(value))
        _runner.encoder = _Hollow(_runner.encoder)
#@ TASK make-it-yours
norm_squared = jnp.array(0.)
manual = jnp.array(0.)
#@ TASK nested-model
nested = {"layer": params, "scale": jnp.array(1.)}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
g = jax.grad(nested_loss)(nested)
same_structure = jax.tree.structure(g) == jax.tree.structure(nested)
scale_by_hand = jnp.array(0.)
