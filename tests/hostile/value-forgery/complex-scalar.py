# hostile: make-it-yours answers are complex scalars (real part right, huge imaginary part).
#@ TASK make-it-yours
norm_squared = jnp.asarray(96 + 1e6j, dtype=jnp.complex64)
manual = norm_squared
