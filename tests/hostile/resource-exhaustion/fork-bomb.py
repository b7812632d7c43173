# hostile: a fork bomb: every process forks until fork() fails, then the copies sleep.
# Run only under the suite's confinement (PID namespace, pids cgroup).
#@ TASK make-it-yours
import os as _os, time as _time
_root = _os.getpid()
for _ in range(64):
    try:
        _os.fork()
    except OSError:
        break
if _os.getpid() != _root:
    _time.sleep(3600)
norm_squared = manual = jnp.array(0.)
