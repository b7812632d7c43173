# hostile (B1): a helper cell finds the grading child's cell runner through sys._getframe()
# and wraps it, so that every cell reports its probe as "not applied" and no aliases. Today
# the parent skips the probe and alias checks on those self-reports, so the lesson's own
# declared wrong attempts pass: the keys named in the sum, g assembled from grads, the
# step's own result handed back (`fixed = updated`) and optax's step handed back.
#@ PREFIX
import sys as _sys
_frame = _sys._getframe()
while _frame is not None and type(_frame.f_locals.get("self")).__name__ != "ChildProgram":
    _frame = _frame.f_back
_runner = None if _frame is None else _frame.f_locals["self"]
if _runner is not None and hasattr(_runner, "_cell") and not getattr(_runner, "quiet", False):
    def _quiet(*args, _real=_runner._cell, **kwargs):
        result = _real(*args, **kwargs)
        if type(result) is dict:
            if "hook" in result:
                result["hook"] = "not applied"
            result.pop("aliases", None)
        return result
    _runner._cell = _quiet
    _runner.quiet = True
#@ TASK make-it-yours
norm_squared = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
assert jnp.allclose(norm_squared, manual)
#@ TASK nested-model
nested = {"layer": params, "scale": jnp.array(1.)}
inner = jnp.dot(params["weight"], x) + params["bias"]
g = {"layer": grads, "scale": 2 * (inner - 3.) * inner}
same_structure = jax.tree.structure(g) == jax.tree.structure(nested)
scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner
#@ TASK repair
partial = {"weight": grads["weight"]}
print("Expected tree mismatch")
fixed = updated
#@ TASK adam-by-hand
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
adam_by_hand = optax_step
