# hostile (B3): a task cell with a structure check that cannot fail (`same_structure =
# True`) walks up the stack to the cell runner's frame and resets its probe state, so the
# probe that drops g's scale leaf counts as "not applied" and its check is skipped.
#@ TASK nested-model
import sys
nested = {"layer": params, "scale": jnp.array(1.)}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
g = jax.grad(nested_loss)(nested)
same_structure = True
inner = jnp.dot(params["weight"], x) + params["bias"]
scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner
runner_frame = sys._getframe()
while runner_frame is not None and runner_frame.f_code.co_name != "_cell":
    runner_frame = runner_frame.f_back
probe_state = None if runner_frame is None else runner_frame.f_locals.get("hook_state")
if type(probe_state) is dict:
    probe_state["applied"] = probe_state["failed"] = False
del runner_frame
