# hostile: the scalar answers (norm_squared, manual, scale_by_hand) are wrong zeros. The first cell walks
# sys._getframe() to the child's ChildProgram and swaps its report channel's JSON encoder for
# one that strips the data of every reported scalar and drops every error.
#@ PREFIX
import sys as _sys
def _hollow(value):
    """Leave out the data of scalar arrays: the grader takes a data-less scalar as a match."""
    if isinstance(value, dict):
        drop = value.get("t") == "array" and value.get("shape") == []
        return {k: _hollow(v) for k, v in value.items() if not (drop and k == "data")}
    if isinstance(value, list):
        return [_hollow(v) for v in value]
    return value
_frame = _sys._getframe()
while _frame is not None and not hasattr(_frame.f_locals.get("self"), "channel"):
    _frame = _frame.f_back
if _frame is not None:
    _channel = _frame.f_locals["self"].channel
    if not getattr(_channel, "hollowed", False):
        _real_dumps = _channel._dumps
        def _forged_dumps(message, _real=_real_dumps):
            if message.get("event") == "cell":
                message = {k: _hollow(v) for k, v in message.items() if k != "error"}
                message["status"] = "ok"
            return _real(message)
        _channel._dumps = _forged_dumps
        _channel.hollowed = True
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
