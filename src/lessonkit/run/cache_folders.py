"""Where lessonkit keeps what it can recompute: the user's cache folder and JAX's compile cache.

JAX (0.10.2) puts the cache folder's absolute path into every compile-cache key, so a copy
of the cache at another path never hits. A course graded on many machines (Slurm, Kubernetes,
Dask) therefore names one folder, at the same absolute path on every worker, with
`LESSONKIT_COMPILE_CACHE`, which the command reads (`settings.py`) and passes here; each
sandboxed learner child sees it read-only at that same path.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

from lessonkit.atomic import make_folders

SHARED_FOLDER_MODE = 0o755
"""The compile cache and the folders above it that lessonkit makes: every account may read
(a sandboxed child runs as a user id of its own), none but the owner write, whatever the
umask."""
PRIVATE_FOLDER_MODE = 0o700
"""A cache folder only the instructor may read or write (the reference store)."""


def cache_home() -> Path:
    """lessonkit's folder in the user's cache ($XDG_CACHE_HOME, else ~/.cache)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lessonkit"


def compile_cache_folder(chosen: str = "") -> Path | None:
    """The compile cache's folder, made if missing; None when unusable.

    A `chosen` folder (`LESSONKIT_COMPILE_CACHE`) is used as given (made absolute; an
    existing folder's modes are left as they are, a shared folder is its administrator's);
    otherwise a folder per JAX and Python version under `cache_home()`. A folder made here
    (and each made above it) is 0755 whatever the umask: a sandboxed learner child runs as a
    user id of its own and must read what the trusted reference child wrote, and no other
    account may write it.
    """
    if chosen:
        folder = Path(chosen).expanduser().absolute()
        try:
            make_folders(folder, SHARED_FOLDER_MODE)
        except OSError:
            return None
        return folder
    try:
        version = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    python = f"py{sys.version_info[0]}{sys.version_info[1]}"
    folder = cache_home() / f"jax-{version}-{python}"
    try:
        make_folders(folder, SHARED_FOLDER_MODE)
        if folder.stat().st_mode & 0o005 != 0o005 and folder.stat().st_uid == os.getuid():
            folder.chmod(SHARED_FOLDER_MODE)  # made by an older lessonkit, under a tight umask
    except OSError:
        return None
    return folder
