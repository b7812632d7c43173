# hostile: writes 200 MB straight to file descriptor 2 (the worker's stderr file).
#@ TASK make-it-yours
import os as _os
_chunk = b"E" * 2**20
for _ in range(200):
    _os.write(2, _chunk)
norm_squared = manual = jnp.array(0.)
