# hostile (F3): the optional task hands back optax's own step, computed with the original
# `optax.apply_updates` a probe wrapper kept on `__wrapped__`, so the probe that moves
# optax's step cannot tell the copy from a hand-written update.
#@ TASK adam-by-hand
import optax
apply_updates = getattr(optax.apply_updates, "__wrapped__", optax.apply_updates)
adam = optax.adam(0.1)
adam_updates, _ = adam.update(grads, adam.init(params), params)
optax_step = optax.apply_updates(params, adam_updates)
adam_by_hand = apply_updates(params, adam_updates)
