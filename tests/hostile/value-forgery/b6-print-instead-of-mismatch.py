# hostile (B6): repair never reproduces the tree mismatch: a bare print stands in for the
# failing jax.tree.map, and only the printed line is graded today. `fixed` is right.
#@ TASK repair
partial = {"weight": grads["weight"]}
print("Expected tree mismatch")
fixed = jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)
assert jnp.allclose(fixed["weight"], jnp.array([1.4, -0.8]))
assert jnp.allclose(fixed["bias"], 0.2)
