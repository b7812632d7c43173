# hostile: repair hands back the step cell's own `updated` instead of computing `fixed`.
#@ TASK repair
partial = {"weight": grads["weight"]}
try:
    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)
except ValueError:
    print("Expected tree mismatch")
fixed = updated
