# hostile: leaves a setsid() grandchild running after grading ends (killpg misses it).
#@ TASK make-it-yours
import os as _os, time as _time
if not _os.environ.get("HOSTILE_ONCE"):
    _os.environ["HOSTILE_ONCE"] = "1"
    _pid = _os.fork()
    if _pid == 0:
        _os.setsid()
        if _os.fork() == 0:
            _time.sleep(600)
        _os._exit(0)
    _os.waitpid(_pid, 0)
norm_squared = manual = jnp.array(0.)
