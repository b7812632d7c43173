# hostile: repair's `fixed` is a dict of lying ndarray subclasses with complex data:
# right layout, no data, nothing computed.
#@ TASK repair
import numpy as np
class Scalar(np.ndarray):
    shape = property(lambda self: ())
    dtype = property(lambda self: np.dtype("float32"))
class Pair(np.ndarray):
    shape = property(lambda self: (2,))
    dtype = property(lambda self: np.dtype("float32"))
partial = {"weight": grads["weight"]}
try:
    jax.tree.map(lambda p, g: p - 0.05 * g, params, partial)
except ValueError:
    print("Expected tree mismatch")
fixed = {
    "bias": np.zeros(1, dtype=np.complex64).view(Scalar),
    "weight": np.zeros(2, dtype=np.complex64).view(Pair),
}
