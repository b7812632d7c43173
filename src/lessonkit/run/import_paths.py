"""Where this interpreter finds packages that an isolated child (`python -I`) would not.

Every grading process (the starter and its forks, a child started from scratch, the
notebook's grading server) starts Python isolated: no PYTHONPATH, no user site, nothing
read from an environment. Where JAX comes through PYTHONPATH (an HPC module, a TPU image)
or the user site (`pip install --user`), such a child would not find it. So the parent
works out the locations it imports from itself and hands them over explicitly, as an
argument the child prepends to `sys.path` (`grading_child/main.py`, `use_import_paths`); the
sandbox binds of them what holds no one's work, read-only (`run/import_binds.py`). Nothing a
submission controls takes part: the list comes from the parent's own start-up, before any
learner code runs.
"""

from __future__ import annotations

import json
import os
import site
import sys
from collections.abc import Iterable, Sequence

from lessonkit.grading_child.main import use_import_paths

_given: list[str] = []
"""Paths this process was handed by its parent (`adopt`): the notebook's grading server."""


def extra_paths(
    path: Sequence[str],
    *,
    pythonpath: str | None,
    user_sites: Iterable[str],
    given: Iterable[str] = (),
) -> tuple[str, ...]:
    """The entries of `path` (in its order) that came from `pythonpath` (the variable as
    Python read it), from a user site folder in `user_sites` or a `.pth` file in it, or
    from `given`: what a child started with `-I` lacks. The script's own folder, the
    standard library and the site-packages that an isolated child finds are never among them.
    """
    wanted = {os.path.abspath(p) for p in (pythonpath or "").split(os.pathsep) if p}
    for folder in user_sites:
        wanted.update(_site_folder_entries(folder))
    wanted.update(given)
    chosen: list[str] = []
    for entry in path:
        if entry and entry in wanted and entry not in chosen:
            chosen.append(entry)
    return tuple(chosen)


def _site_folder_entries(folder: str) -> list[str]:
    """A site folder and the folders its `.pth` files add, as `site.addsitedir` adds them."""
    entries = [os.path.abspath(folder)]
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".pth"))
    except OSError:
        return entries
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as file:
                lines = file.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            line = line.rstrip()
            if line and not line.startswith(("#", "import ", "import\t")):
                entries.append(os.path.abspath(os.path.join(folder, line)))
    return entries


def import_paths() -> tuple[str, ...]:
    """Where this process finds packages that a `python -I` child would not, in the order
    this process searches them."""
    pythonpath = None if sys.flags.ignore_environment else os.environ.get("PYTHONPATH")
    user_sites = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    found = extra_paths(sys.path, pythonpath=pythonpath, user_sites=user_sites, given=_given)
    return tuple(p for p in found if os.path.exists(p))


def encoded_import_paths() -> str:
    """`import_paths()` as the one argument a grading child takes (a JSON list)."""
    return json.dumps(list(import_paths()))


def adopt(encoded: str) -> None:
    """In a grading process started by lessonkit itself: put the parent's import paths
    first, and pass them on to the children this process starts."""
    _given[:] = use_import_paths(encoded)
