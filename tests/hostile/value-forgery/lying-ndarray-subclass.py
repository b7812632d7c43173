# hostile: make-it-yours answers are an ndarray subclass whose `shape`/`dtype` lie
# (float32[]) over complex data, so the encoder sends a scalar with no data.
#@ TASK make-it-yours
import numpy as np
class Lie(np.ndarray):
    shape = property(lambda self: ())
    dtype = property(lambda self: np.dtype("float32"))
norm_squared = np.zeros(1, dtype=np.complex64).view(Lie)
manual = norm_squared
