# hostile (B1): the same wrapper of the grading child's cell runner as
# b1-wrap-cell-runner-wrong-attempts.py, with the lesson's declared attempt "a structure
# check that cannot fail" (`same_structure = True`): the probe that drops g's scale leaf is
# reported "not applied", so nothing shows that the check never looks at g.
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
#@ TASK nested-model
nested = {"layer": params, "scale": jnp.array(1.)}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
g = jax.grad(nested_loss)(nested)
same_structure = True
inner = jnp.dot(params["weight"], x) + params["bias"]
scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner
