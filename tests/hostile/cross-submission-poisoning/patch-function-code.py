# hostile: rewrites jax.tree.leaves.__code__ in place (same function object, so the guard's
# identity check sees no change): every later submission in this child gets no leaves.
#@ TASK make-it-yours
jax.tree.leaves.__code__ = (lambda tree, is_leaf=None: []).__code__
norm_squared = manual = jnp.array(0.)
