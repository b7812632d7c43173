# hostile: patches the worker's Encoder._array to leave out array data; the child is
# reused and the next (honest but wrong) submission's wrong arrays now "match".
#@ TASK make-it-yours
import sys as _sys
_Encoder = _sys.modules["__main__"].Encoder
_real_array = _Encoder._array
def _hollow_array(self, value, _real=_real_array):
    out = _real(self, value)
    out.pop("data", None)
    return out
_Encoder._array = _hollow_array
norm_squared = manual = jnp.array(0.)
