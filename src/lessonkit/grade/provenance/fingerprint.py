"""What graded an attempt, as one hash: the grading fingerprint.

A verdict and its points follow from the lesson's graded parts and from the grader that
judged them; `grading_fingerprint` hashes exactly these, so a probe restored without a
`revision:` bump, an edited experiment, a changed point or a new JAX is another fingerprint,
while prose edits and source line numbers are not. The lesson's `revision:` stays the
author's label; the gradebook, the journal and `merge` compare fingerprints.

Both parts come from what exists, never from a list of what to include:

- the lesson's part (`graded_parts`) is the whole `Lesson` model, walked field by field,
  less the fields the model itself declares `UNGRADED` (prose, titles, hints, quizzes, the
  evidence block, labels, dates, where each thing is written): steps' and tasks' code, the
  experiments' code and roles, the figure's code, task ids and kinds, and the whole
  `{grading}` block (inputs, probes, points, attempts, declared mistakes, rules). A field
  the model gains is graded until it is declared `UNGRADED`, so forgetting it can only make
  the fingerprint change too often, never keep a stale grading.
- the grader's part (`grader_digest`) is every file of the installed lessonkit package,
  found by walking it (`package_files`: every module at any depth and the data beside them,
  compiled caches aside), lessonkit's version, every installed distribution (name and
  version: JAX, jaxlib, NumPy, Optax...), the interpreter's version and the settings every
  grading child gets.

`grader_digest` is the grader's part alone: the reference store's key builds on it, adding
what only its reports depend on (the machine and its CPU), so there is one way to say what
the grader is. It holds nothing machine-bound (no paths), so shards graded on several
machines with the same installation have one fingerprint. It is computed once per process.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib.metadata
import importlib.resources
import json
import platform
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from typing import Any

from lessonkit import __version__
from lessonkit.lesson.model import UNGRADED, Lesson
from lessonkit.run.process import GRADER_SETTINGS

_SKIPPED = frozenset({"__pycache__"})
"""Folders of the package that only cache what its files say."""
_COMPILED = (".pyc", ".pyo")


def package_files(
    root: Traversable | None = None, prefix: str = ""
) -> Iterator[tuple[str, Traversable]]:
    """Every file of the lessonkit package (or below `root`), at any depth, by its path
    inside the package, in a stable order; compiled caches are left out."""
    folder = importlib.resources.files("lessonkit") if root is None else root
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            if entry.name not in _SKIPPED:
                yield from package_files(entry, f"{name}/")
        elif entry.is_file() and not entry.name.endswith(_COMPILED):
            yield name, entry


def package_digest(root: Traversable | None = None) -> str:
    """A digest of every file `package_files` walks: each one's path and bytes."""
    digest = hashlib.sha256()
    for name, entry in package_files(root):
        digest.update(name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def grader_digest() -> str:
    """A digest of the grader: lessonkit's version and every file of the package, the
    installed packages (name and version), the interpreter's version and the child's
    settings (module docstring)."""
    facts = {
        "lessonkit": __version__,
        "sources": package_digest(),
        "packages": _packages(),
        "python": platform.python_version(),
        "settings": GRADER_SETTINGS,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _packages() -> list[str]:
    """Every installed distribution as `name==version`, sorted."""
    found = {
        f"{d.metadata['Name'] or ''}=={d.version}".lower()
        for d in importlib.metadata.distributions()
    }
    return sorted(found)


def _graded(value: Any) -> Any:
    """`value` as JSON-able data, less ungraded fields; None for a model value
    with nothing graded in it (a paragraph, a quiz), which a sequence then leaves out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kept = {
            f.name: _graded(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not UNGRADED.items() <= f.metadata.items()
        }
        if all(v is None or v == [] for v in kept.values()):
            return None
        return {"type": type(value).__name__, **kept}
    if isinstance(value, enum.Enum):
        return _graded(value.value)
    if isinstance(value, dict):
        return {str(k): _graded(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        items = [v for v in map(_graded, value) if v is not None]
        return sorted(items, key=repr) if isinstance(value, frozenset | set) else items
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if callable(value):  # a rule's function: its qualified name, its code is in the sources
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    return repr(value)


def graded_parts(lesson: Lesson) -> dict[str, Any]:
    """The parts of `lesson` a verdict or its points depend on, as plain data: the model
    less what it declares `UNGRADED` (module docstring)."""
    return _graded(lesson)


def grading_fingerprint(lesson: Lesson) -> str:
    """The fingerprint of grading `lesson` with this installation (module docstring)."""
    text = json.dumps(
        {"lesson": graded_parts(lesson), "grader": grader_digest()},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()


def short(fingerprint: str) -> str:
    """A fingerprint as messages show it; an empty one was kept before fingerprints."""
    return fingerprint[:12] if fingerprint else "(none: graded before fingerprints)"
