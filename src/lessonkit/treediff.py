"""The one tree-difference engine: every difference between two described trees, by key path.

`lessonkit.trees.compare` (live JAX trees) and the grader (values a learner's process
reported) both hand their descriptions here, so a verdict and the words that explain it come
from the same rules; nothing here imports JAX or NumPy, so the grading parent decides without
them. Children are matched by name, and differences come in the order the lesson inspects a
tree: node types, missing and extra paths, leaf kinds, shapes, dtypes, then values.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from lessonkit.defaults import TREE_ATOL, TREE_RTOL

__all__ = [
    "KINDS",
    "Described",
    "Difference",
    "Entry",
    "Kind",
    "close",
    "differences",
    "leaf_differences",
    "summary",
]

Kind = Literal["node", "missing", "extra", "type", "shape", "dtype", "value"]
Role = Literal["node", "leaf"]

#: Difference kinds, in the order the lesson inspects them; layout first, values last.
KINDS: tuple[Kind, ...] = ("node", "missing", "extra", "type", "shape", "dtype", "value")
_RANK = {kind: rank for rank, kind in enumerate(KINDS)}

NOTHING = "nothing"


@dataclass(frozen=True, eq=False)
class Entry:
    """One node or leaf of a tree, as much of it as the engine compares.

    ``type`` is what must match: a node's type, or a leaf's kind (``array``, ``float``,
    ``str``, ...). ``label`` is how a person reads it: ``dict``, ``Linear(act='relu')``,
    ``float32[2]``. ``data`` holds a leaf's values when they were read; ``None`` means they
    were not, and values that were not read never match when values are compared.
    """

    role: Role
    type: str
    label: str
    static: Any = None
    #: A dict's static data is its keys: it differs only when the key sets are the same
    #: (an OrderedDict in another order); other key changes are missing and extra paths.
    static_is_keys: bool = False
    leaves: int = 1
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    data: tuple[Any, ...] | None = None
    #: Compare ``data`` element-wise within tolerance (numbers), not exactly.
    approx: bool = False
    #: The describer's own handle (a key path, the reported value); never compared.
    origin: Any = field(default=None, repr=False)


class Described(Protocol):
    """A tree, or a subtree of one, that the engine can walk."""

    def entry(self) -> Entry:
        """This node or leaf."""
        ...

    def children(self) -> Sequence[tuple[Hashable, Described]]:
        """``(name, child)`` pairs in the tree's own order; empty for a leaf."""
        ...

    def same_layout(self, other: Any) -> bool:
        """A quick, sufficient test that no layout difference lies at or below here.

        Returning False is always allowed; the engine then compares entry by entry.
        """
        ...


@dataclass(frozen=True)
class Difference:
    """One way the second tree differs from the first, at a key path."""

    kind: Kind
    path: tuple[Hashable, ...]
    expected: Entry | None
    got: Entry | None
    #: How a person reads each side here: ``float32[2]``, ``dict with 3 leaves``, ``nothing``.
    words: tuple[str, str]

    @property
    def location(self) -> str:
        """The path in slash form, ``layer/weight``; ``""`` for the tree itself."""
        return "/".join(str(name) for name in self.path)


def differences(
    expected: Described, got: Described, *, values: bool = False
) -> tuple[Difference, ...]:
    """Every difference of `got` from `expected`: layout in the lesson's order, then values.

    Values are compared only when ``values`` is true; `lessonkit.trees.compare` compares
    layouts alone, the grader compares both.
    """
    found = list(_walk(expected, got, (), values))
    return tuple(sorted(found, key=lambda d: _RANK[d.kind]))


def summary(entry: Entry | None) -> str:
    """A subtree in a phrase: ``float32[2]``, ``dict with 3 leaves``, ``None (empty node)``."""
    if entry is None:
        return NOTHING
    if entry.role == "leaf":
        return entry.label
    if entry.leaves == 0:
        return f"{entry.label} (empty node)"
    return f"{entry.label} with {entry.leaves} {'leaf' if entry.leaves == 1 else 'leaves'}"


def close(expected: Sequence[float], got: Sequence[float]) -> bool:
    """Element-wise closeness like ``jnp.allclose(..., equal_nan=True)``: NaN at the same
    place is the same result (a loss that diverged in both), NaN against a number is not."""
    if len(expected) != len(got):
        return False
    for e, g in zip(expected, got, strict=True):
        e, g = float(e), float(g)
        if math.isnan(e) or math.isnan(g):
            if math.isnan(e) and math.isnan(g):
                continue
            return False
        if math.isinf(e) or math.isinf(g):
            if e != g:
                return False
        elif abs(g - e) > TREE_ATOL + TREE_RTOL * abs(e):
            return False
    return True


# --------------------------------------------------------------------------- walking


def _walk(
    x: Described, y: Described, path: tuple[Hashable, ...], values: bool
) -> Iterator[Difference]:
    if not values and x.same_layout(y):
        return
    a, b = x.entry(), y.entry()
    if a.role == "leaf" and b.role == "leaf":
        yield from leaf_differences(a, b, path, values=values)
        return
    if a.role != b.role:
        yield Difference("node", path, a, b, (summary(a), summary(b)))
        return
    kids_x, kids_y = dict(x.children()), dict(y.children())
    if _nodes_differ(a, b, kids_x, kids_y):
        yield Difference("node", path, a, b, _node_words(a, b))
    for name, child in kids_x.items():
        other = kids_y.get(name)
        if other is None:
            entry = child.entry()
            yield Difference("missing", (*path, name), entry, None, (summary(entry), NOTHING))
        else:
            yield from _walk(child, other, (*path, name), values)
    for name, child in kids_y.items():
        if name not in kids_x:
            entry = child.entry()
            yield Difference("extra", (*path, name), None, entry, (NOTHING, summary(entry)))


def _nodes_differ(a: Entry, b: Entry, kids_a: dict, kids_b: dict) -> bool:
    if a.type != b.type:
        return True
    if a.static_is_keys and b.static_is_keys and kids_a.keys() != kids_b.keys():
        return False  # reported as missing and extra paths instead
    return bool(a.static != b.static)


def _node_words(a: Entry, b: Entry) -> tuple[str, str]:
    if a.label != b.label:
        return a.label, b.label
    return f"{a.label} static {_short_repr(a.static)}", f"{b.label} static {_short_repr(b.static)}"


def leaf_differences(
    a: Entry, b: Entry, path: tuple[Hashable, ...] = (), *, values: bool = False
) -> tuple[Difference, ...]:
    """How leaf `b` differs from leaf `a`: its kind, else its shape and dtype, then values."""
    return tuple(_leaf_walk(a, b, path, values))


def _leaf_walk(
    a: Entry, b: Entry, path: tuple[Hashable, ...], values: bool
) -> Iterator[Difference]:
    words = (a.label, b.label)
    if a.type != b.type:
        yield Difference("type", path, a, b, words)
        return
    if a.shape != b.shape:
        yield Difference("shape", path, a, b, words)
    if a.dtype != b.dtype:
        yield Difference("dtype", path, a, b, words)
    if values and a.shape == b.shape and not _same_values(a, b):
        yield Difference("value", path, a, b, words)


def _same_values(a: Entry, b: Entry) -> bool:
    if a.data is None or b.data is None:  # nothing was read, so nothing can be confirmed
        return False
    if a.approx and b.approx:
        return close(a.data, b.data)
    return len(a.data) == len(b.data) and all(
        x == y or (_is_nan(x) and _is_nan(y)) for x, y in zip(a.data, b.data, strict=True)
    )


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _short_repr(x: Any, limit: int = 40) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."
