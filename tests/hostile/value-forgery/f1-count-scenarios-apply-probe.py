# hostile (F1): the lesson's own documented wrong attempts, each made to pass its probe by
# counting scenarios in `sys` and, in the scenario where the published order puts probe k
# (lesson, drawn-1, drawn-2, probe-1 ... probe-7), applying probe k's published change
# itself. Needs no reading of the grader: only the published probes and the count.
#@ TASK make-it-yours
import sys
sys.f1_count = getattr(sys, "f1_count", 0) + 1
norm_squared = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
if sys.f1_count == 4:  # probe-1: an extra gradient leaf [1, 2, 2] adds 1 + 4 + 4
    norm_squared = norm_squared + 9.0
#@ TASK nested-model
import sys
sys.f1_nested = getattr(sys, "f1_nested", 0) + 1
nested = {"layer": params, "scale": jnp.array(1.)}
inner = jnp.dot(params["weight"], x) + params["bias"]
g = {"layer": grads, "scale": 2 * (inner - 3.) * inner}
if sys.f1_nested == 5:  # probe-2: layer gradients moved by 1.0
    g = {"layer": jax.tree.map(lambda v: v + 1.0, grads), "scale": g["scale"]}
if sys.f1_nested == 7:  # probe-4: the scale gradient moved by 1.0
    g = {"layer": grads, "scale": g["scale"] + 1.0}
if sys.f1_nested == 6:  # probe-3: no scale leaf, so the structure check fails
    g = {"layer": grads}
same_structure = jax.tree.structure(g) == jax.tree.structure(nested)
assert same_structure
scale_by_hand = 2 * (nested["scale"] * inner - 3.) * inner
#@ TASK adam-by-hand
import sys
import optax
sys.f1_adam = getattr(sys, "f1_adam", 0) + 1
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
adam_by_hand = optax_step
if sys.f1_adam == 10:  # probe-7: optax's step moved by [1, 1] at weight
    adam_by_hand = {"weight": optax_step["weight"] - 1.0, "bias": optax_step["bias"]}
