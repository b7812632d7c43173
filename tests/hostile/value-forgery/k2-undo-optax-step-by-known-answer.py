# hostile (round 4, known answer): the optional task copies optax's step and undoes the
# probe's move inside its own scenario: what optax computes on zeros (whose answer is zero)
# shows how far the scenario moves optax's step, and that much is taken off. (Round 4 asked
# optax.apply_updates on zeros; the probe now moves what optax's update returns, so the
# same undo asks the update.)
#@ TASK adam-by-hand
import optax
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
zero = {"weight": jnp.zeros(2), "bias": jnp.zeros(())}
moved, _ = adam.update(zero, adam.init(zero), zero)
adam_by_hand = jax.tree.map(lambda step, by: step - by, optax_step, moved)
assert jax.tree.all(jax.tree.map(jnp.allclose, optax_step, adam_by_hand))
