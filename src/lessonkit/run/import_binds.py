"""What a sandboxed child is shown of the folders it imports from: its packages, never
people's work that lies beside them.

PYTHONPATH or a user site (and the `.pth` files in it) may name a folder that holds far
more than packages: `~/src` with the course and the week's submissions beside the
instructor's own packages, or home itself. Bound whole, such a folder would show learner
code the lesson's solutions and a classmate's file. So before a folder is bound it is
searched for people's work: a course at any depth (`lesson.repository.is_course`), a path the
command guards (the files it grades, the submissions folder, the gradebook, the key, the
outputs), a place where such work lies loose (the working folder, a guarded file's folder),
or the grader's home. Then:

- a folder that holds none is bound whole, as a site-packages needs (its `numpy.libs` and
  metadata are no packages, yet NumPy reads them);
- a folder that holds some (or is the home), or is too large to search, is bound entry by
  entry: only the packages (a folder with an `__init__` module) Python imports from it, each
  searched in turn, so a package that itself holds a course or a guarded path is left out,
  and of its loose modules only those the grader itself runs on (`grader_modules`: one an
  installed distribution records there, or one this process has imported), never a
  classmate's `bob.py` lying beside the work;
- an entry that is a link is bound as what it names only where that is no one's work (in a
  course, a guarded path or a place where work lies loose: `is_or_in_work`), since the
  sandbox binds the file the link leads to;
- a folder that *is* people's work (a course, a guarded path or inside one, a place) is not
  bound.

Each search opens at most `IMPORT_SEARCH_FOLDERS` folders within `IMPORT_SEARCH_S` seconds
and follows no link; one that stops there counts as finding work, so a folder too large to
search is never bound whole, only its packages.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lessonkit.defaults import IMPORT_SEARCH_FOLDERS, IMPORT_SEARCH_S
from lessonkit.lesson.repository import COURSE_MARKS, is_course

MODULE_SUFFIXES = tuple(importlib.machinery.all_suffixes())
"""The file endings this interpreter imports a module from (`.py`, `.pyc`, extension modules)."""

WorkKind = Literal["course", "guarded", "unsearched"]


@dataclass(frozen=True)
class Budget:
    """How far one search of a folder may go before it counts as finding work."""

    folders: int = IMPORT_SEARCH_FOLDERS
    seconds: float = IMPORT_SEARCH_S


@dataclass(frozen=True)
class Work:
    """People's work found in a folder: a course, a guarded path, or a folder too large to
    search within the budget (`path`: the folder where the search stopped)."""

    kind: WorkKind
    path: Path


@dataclass(frozen=True)
class Guard:
    """What no sandboxed child may see, as real paths."""

    work: tuple[Path, ...] = ()
    """People's work: never bound, nor what lies inside it, nor whole a folder that holds it."""
    places: tuple[Path, ...] = ()
    """Folders where people's work lies loose (the working folder, a guarded file's folder):
    never bound themselves, nor whole a folder that holds them; a folder inside may be."""
    homes: tuple[Path, ...] = ()
    """Folders that hold everything of a person's (the grader's home): never bound whole,
    nor whole a folder that holds them; their packages may be."""

    @classmethod
    def around(cls, guarded: Iterable[Path], working: Path, home: Path | None = None) -> Guard:
        """The guard of a command that guards `guarded` from the working folder `working`,
        run by the person whose home is `home`: a guarded file's folder is a place, since a
        classmate's file may lie beside it."""
        work = sorted({_real(p) for p in guarded})
        files = (p.parent for p in work if not p.is_dir())
        places = tuple(sorted({_real(working), *files}))
        return cls(tuple(work), places, (_real(home),) if home is not None else ())


def import_binds(
    folders: Iterable[str], guard: Guard, budget: Budget = Budget()
) -> tuple[Path, ...]:
    """What of the import `folders` (in their order) a sandboxed child is shown: each whole
    where it holds no work, else its packages and modules that hold none."""
    return _binds(tuple(folders), guard, budget)


@functools.cache
def _binds(folders: tuple[str, ...], guard: Guard, budget: Budget) -> tuple[Path, ...]:
    """`import_binds`, searched once per process: the starter and every child bind alike."""
    binds: list[Path] = []
    for folder in map(Path, folders):
        if is_work(folder, guard):
            continue
        if work_in(folder, guard, budget) is None:
            binds.append(folder)
            continue
        ours = grader_modules(folder)
        for entry in importable_entries(folder):
            if entry.is_symlink() and is_or_in_work(entry, guard):
                continue
            if not entry.is_dir() and _real(entry) not in ours and entry not in ours:
                continue  # a loose module the grader does not run on
            if not is_work(entry, guard) and work_in(entry, guard, budget) is None:
                binds.append(entry)
    return tuple(binds)


def is_or_in_work(path: Path, guard: Guard) -> bool:
    """Whether what `path` names (a link followed) is people's work or lies inside it: in a
    course at any depth, a guarded path, or a place where work lies loose."""
    real = _real(path)
    if is_work(real, guard) or any(real.is_relative_to(p) for p in guard.places):
        return True
    return any(is_course(folder) for folder in real.parents)


def grader_modules(folder: Path) -> frozenset[Path]:
    """The module files of `folder` the grader itself runs on: those an installed
    distribution's `RECORD` there names (`typing_extensions.py`, `six.py`), and those this
    process has imported from it."""
    found: set[Path] = set()
    try:
        with os.scandir(folder) as scan:
            records = [Path(e.path) / "RECORD" for e in scan if e.name.endswith(".dist-info")]
    except OSError:
        records = []
    for record in records:
        try:
            lines = record.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            name = line.split(",", 1)[0]
            if name and "/" not in name and name.endswith(MODULE_SUFFIXES):
                found.add(folder / name)
    real = _real(folder)
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and Path(file).parent in (folder, real):
            found.update((Path(file), _real(Path(file))))
    return frozenset(found)


def is_work(path: Path, guard: Guard) -> bool:
    """Whether `path` is itself people's work, or where it lies loose: a course, a guarded
    path or inside one, a place."""
    real = _real(path)
    if is_course(real) or real in guard.places:
        return True
    return any(real == g or real.is_relative_to(g) for g in guard.work)


def work_in(path: Path, guard: Guard, budget: Budget = Budget()) -> Work | None:
    """The first work found in `path`, searched without following links; None where it
    holds none."""
    real = _real(path)
    for inside in (*guard.work, *guard.places, *guard.homes):
        if inside.is_relative_to(real):
            return Work("guarded", inside)
    deadline = time.monotonic() + budget.seconds
    pending, opened = [real], 0
    while pending:
        folder = pending.pop()
        if opened >= budget.folders or time.monotonic() > deadline:
            return Work("unsearched", folder)
        opened += 1
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:  # not a folder, or one this account cannot open: nor can a child
            continue
        names = {e.name for e in entries}  # the listing spares two look-ups per folder
        if all(mark in names for mark in COURSE_MARKS) and is_course(folder):
            return Work("course", folder)
        pending += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    return None


def importable_entries(folder: Path) -> list[Path]:
    """The packages (a folder named as a module, with an `__init__` module) and modules that
    Python imports from `folder`, by name."""
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if _importable(e)]


def _importable(entry: os.DirEntry[str]) -> bool:
    try:
        if entry.is_dir():
            init = (Path(entry.path) / f"__init__{s}" for s in MODULE_SUFFIXES)
            return entry.name.isidentifier() and any(p.is_file() for p in init)
        return any(
            entry.name.endswith(s) and entry.name[: -len(s)].isidentifier() for s in MODULE_SUFFIXES
        )
    except OSError:
        return False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))
