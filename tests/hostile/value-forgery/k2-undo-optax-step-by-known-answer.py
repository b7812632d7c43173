# hostile (round 4, known answer): the optional task copies optax's step and undoes the
# probe's move inside its own scenario: optax.apply_updates on zeros (whose answer is zero)
# shows how far the scenario moves the step, and that much is taken off.
#@ TASK adam-by-hand
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
moved = optax.apply_updates({"weight": 0., "bias": 0.}, {"weight": 0., "bias": 0.})
adam_by_hand = jax.tree.map(lambda step, by: step - by, optax_step, moved)
assert jax.tree.all(jax.tree.map(jnp.allclose, optax_step, adam_by_hand))
