# hostile (B5): adam_by_hand is optax's step, copied through a list (a fresh dict, so it is
# no alias of optax_step): a probe that rebinds `optax_step` never reaches the list.
#@ TASK adam-by-hand
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
steps = [optax.apply_updates(params, adam_updates)]
optax_step = steps[0]
adam_by_hand = dict(steps[0])
assert jax.tree.all(jax.tree.map(jnp.allclose, optax_step, adam_by_hand))
