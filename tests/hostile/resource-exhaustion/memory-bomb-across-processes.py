# hostile: 8 forked children each fill 1.5 GB (under the per-process limit), 12 GB in all.
# Run only under the suite's confinement (memory cgroup).
#@ TASK make-it-yours
import os as _os, time as _time
for _ in range(8):
    if _os.fork() == 0:
        try:
            _hog = b"x" * (3 * 2**29)
            _time.sleep(3600)
        finally:
            _os._exit(0)
norm_squared = manual = jnp.array(0.)
