"""What graded an attempt, as one hash: the grading fingerprint.

A verdict and its points follow from the lesson's graded parts (its id, steps, tasks with
their solutions, and the grading section: inputs, probes, points, declared attempts, rules)
and from the grader that judged them (lessonkit's version, the sources of the grader, the
runner, the tree engine and the grading child, the packages installed, the interpreter's
version and the grading child's settings). `grading_fingerprint` hashes exactly these, so a
probe restored without a `revision:` bump, a changed point or a new JAX is another
fingerprint, while prose edits and source line numbers are not. The lesson's `revision:`
stays the author's label; the gradebook, the journal and `merge` compare fingerprints.

`grader_digest` is the grader's part alone: the reference store's key builds on it, adding
what only its records depend on (the machine and its CPU), so there is one way to say what
the grader is. It holds nothing machine-bound (no paths), so shards graded on several
machines with the same installation have one fingerprint.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib.metadata
import json
import platform
from pathlib import Path
from typing import Any

from lessonkit import __version__
from lessonkit.lesson.model import Lesson
from lessonkit.run.process import GRADER_SETTINGS

_PACKAGE = Path(__file__).resolve().parents[2]
GRADER_FOLDERS = ("grade", "run", "trees", "grading_child")
"""The lessonkit folders whose sources decide a verdict (besides the lesson itself)."""
_POSITIONS = frozenset({"line", "expected_line"})
"""Fields that say where something is written, never what it is."""


@functools.cache
def grader_digest() -> str:
    """A digest of the grader: lessonkit's version and grading sources, the installed
    packages (name and version), the interpreter's version and the child's settings."""
    sources = hashlib.sha256()
    for folder in GRADER_FOLDERS:
        for path in sorted((_PACKAGE / folder).glob("*.py")):
            sources.update(f"{folder}/{path.name}".encode() + b"\0" + path.read_bytes() + b"\0")
    facts = {
        "lessonkit": __version__,
        "sources": sources.hexdigest(),
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


def _plain(value: Any) -> Any:
    """`value` as JSON-able data, dataclass positions left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "type": type(value).__name__,
            **{
                f.name: _plain(getattr(value, f.name))
                for f in dataclasses.fields(value)
                if f.name not in _POSITIONS
            },
        }
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, frozenset | set) else items
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if callable(value):  # a rule's function: its qualified name, its code is in the sources
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    return repr(value)


def lesson_grading(lesson: Lesson) -> dict[str, Any]:
    """The parts of `lesson` a verdict or its points depend on, as plain data."""
    return {
        "lesson": lesson.meta.id,
        "steps": _plain(lesson.steps),
        "tasks": _plain(lesson.tasks),
        "grading": _plain(lesson.grading),
    }


def grading_fingerprint(lesson: Lesson) -> str:
    """The fingerprint of grading `lesson` with this installation (module docstring)."""
    text = json.dumps(
        {"lesson": lesson_grading(lesson), "grader": grader_digest()},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()


def short(fingerprint: str) -> str:
    """A fingerprint as messages show it; an empty one was kept before fingerprints."""
    return fingerprint[:12] if fingerprint else "(none: graded before fingerprints)"
