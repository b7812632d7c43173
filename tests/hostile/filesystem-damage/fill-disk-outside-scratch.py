# hostile: writes 6 files of 60 MB (just under the per-file limit) outside its scratch folder.
#@ TASK make-it-yours
import os as _os
_os.makedirs("/tmp/lessonkit-hostile-fill", exist_ok=True)
_chunk = b"\0" * (60 * 2**20)
for _i in range(6):
    with open(f"/tmp/lessonkit-hostile-fill/{_i}.bin", "wb") as _f:
        _f.write(_chunk)
norm_squared = manual = jnp.array(0.)
