# hostile: nested-model's `g` is not a gradient of nested_loss: it reuses the lesson's
# `grads` for the layer and the hand formula for the scale.
#@ TASK nested-model
nested = {"layer": params, "scale": jnp.array(1.)}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
inner = jnp.dot(params["weight"], x) + params["bias"]
g = {"layer": grads, "scale": 2 * (inner - 3.) * inner}
same_structure = jax.tree.structure(g) == jax.tree.structure(nested)
assert same_structure
scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner
