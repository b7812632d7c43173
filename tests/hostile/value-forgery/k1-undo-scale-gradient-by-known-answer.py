# hostile (round 4, known answer): `scale_by_hand` is read from autodiff and the probe's
# move undone inside its own scenario: a derivative whose answer is known (0 for a function
# that ignores the scale) shows how far the scenario moves the scale gradient, and that much
# is taken off. No count, no kept state and no tool the review marks is needed.
#@ TASK nested-model
nested = {"layer": params, "scale": jnp.array(1.)}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
g = jax.grad(nested_loss)(nested)
same_structure = jax.tree.structure(g) == jax.tree.structure(nested)
assert same_structure
scale_by_hand = g["scale"] - jax.grad(lambda p: 0.0 * p["scale"])(nested)["scale"]
assert jnp.allclose(g["scale"], scale_by_hand)
