# hostile: patches the worker script itself (sys.modules["__main__"].Encoder), which the
# module guard does not watch: the child is reused and every later submission it grades
# reports None for every value.
#@ TASK make-it-yours
import sys as _sys
_sys.modules["__main__"].Encoder._value = lambda self, value, leaves, depth: {"t": "none"}
norm_squared = manual = jnp.array(0.)
