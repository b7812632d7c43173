# hostile (B4): scale_by_hand is read from autodiff, not derived by hand, and bound in the
# same statement as g: a probe that rebinds `g` after the statement never reaches it.
#@ TASK nested-model
nested = {"layer": params, "scale": jnp.array(1.)}
def nested_loss(p):
    pred = p["scale"] * (jnp.dot(p["layer"]["weight"], x) + p["layer"]["bias"])
    return (pred - 3.) ** 2
g, scale_by_hand = (lambda G: (G, G["scale"] + 0.0))(jax.grad(nested_loss)(nested))
same_structure = jax.tree.structure(g) == jax.tree.structure(nested)
assert same_structure
assert jnp.allclose(g["scale"], scale_by_hand)
