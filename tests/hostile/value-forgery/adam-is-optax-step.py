# hostile: the optional task hands back optax's own step instead of the hand-written one.
#@ TASK adam-by-hand
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
adam_by_hand = optax_step
assert jax.tree.all(jax.tree.map(jnp.allclose, optax_step, adam_by_hand))
