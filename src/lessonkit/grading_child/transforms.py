"""Probe transforms: what a probe does to a value, written once for the grading child (a
library's result, made of arrays) and the parent (drawn input data, made of numbers and
lists).

Each transform is one row of `ROWS`: its name, what a probe must give it (a key, a value of
which shape), what it varies, how each run draws its family, and its function. Every list,
check and choice about transforms (lesson.md's validation, the model's names, the probe's
family and bend, the child's wrappers) is read from the rows, and a name without a row is an
error (`row`), never a default.

The two sides hold values differently, so each passes its own `leaf` (a declared value made
a leaf: an array in the child, a list in the parent) and `shift` (a subtree moved by a
value). A tree the transform does not fit (not a dict, no such key) raises `NotFitting`,
and both sides leave it as it is. Standard library only: the child loads this by path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Leaf = Callable[[object], object]
Shift = Callable[[object, object], object]


class NotFitting(TypeError):
    """The value is not a dict, or has no such key: the probe leaves it as it is."""


def _dict_with(tree, key: str | None):
    if type(tree) is not dict or (key is not None and key not in tree):
        raise NotFitting("not a dict with that key")
    return tree


def add_leaf(tree, key: str, value, leaf: Leaf, shift: Shift):
    """A leaf `key` = `value` added to a dict."""
    return {**_dict_with(tree, None), key: leaf(value)}


def drop_key(tree, key: str, value, leaf: Leaf, shift: Shift):
    """A dict without `key`."""
    return {k: v for k, v in _dict_with(tree, key).items() if k != key}


def rename_key(tree, key: str, value, leaf: Leaf, shift: Shift):
    """The same dict with `key` renamed (`key_renamed`): as many leaves, another structure."""
    return {(f"{k}_renamed" if k == key else k): v for k, v in _dict_with(tree, key).items()}


def shift_key(tree, key: str, value, leaf: Leaf, shift: Shift):
    """Every leaf under `key` moved by `value`; with no key, every leaf of the tree."""
    if not key:
        return shift(tree, value)
    return {**_dict_with(tree, key), key: shift(tree[key], value)}


def unchanged(tree, key: str, value, leaf: Leaf, shift: Shift):
    """The change of a call a scenario does not vary: every scenario wraps the same calls."""
    return tree


def replace_value(tree, key: str, value, leaf: Leaf, shift: Shift):
    """The declared value itself, in place of what a step assigned."""
    return leaf(value)


ValueShape = Literal["numbers", "replacement", "none"]
"""What a probe's `value:` is: a number or a list of numbers; a number, a list or a mapping
of them; or nothing."""
Varies = Literal["data", "step"]
"""What a transform changes: a tree of data (a drawn input, a library call's result), or the
value of a name a step assigns."""
Changes = Literal["leaves", "structure", "nothing"]
"""What a transform does to a tree: moves its leaves (keeping its structure), changes its
structure (a key dropped, renamed or added), or nothing. A derivative's leaves are moved in
the function JAX differentiates, its structure where JAX assembles it
(`differentiation.py`)."""


@dataclass(frozen=True)
class TransformRow:
    """One probe transform: its name, what it needs, and its function."""

    name: str
    function: Callable[[object, str, object, Leaf, Shift], object]
    value: ValueShape
    needs_key: bool  # a probe must name the key it works on
    varies: Varies
    drawn_key: bool = False  # each run names the key afresh (the declared one is an example)
    drawn_value: tuple[float, float] | None = None
    """Each run draws the value afresh, of the declared value's shape, each number of a
    magnitude in this range and either sign; None keeps the declared value."""
    bends: bool = False  # on a changed call, the shift follows the value it moves
    authored: bool = True  # spelled in lesson.md; False: the parent's own filler
    changes: Changes = "structure"


ROWS: tuple[TransformRow, ...] = (
    TransformRow("add_leaf", add_leaf, "numbers", True, "data", True, (0.5, 3.0)),
    TransformRow("drop_key", drop_key, "none", True, "data"),
    TransformRow("rename_key", rename_key, "none", True, "data"),
    TransformRow(
        "shift_key", shift_key, "numbers", False, "data", False, (0.5, 2.0), True, changes="leaves"
    ),
    TransformRow("replace", replace_value, "replacement", False, "step", changes="leaves"),
    # A call every scenario wraps but this one does not vary: every scenario wraps the same.
    TransformRow("none", unchanged, "none", False, "data", authored=False, changes="nothing"),
)
TRANSFORMS: dict[str, TransformRow] = {r.name: r for r in ROWS}
AUTHORED: tuple[str, ...] = tuple(r.name for r in ROWS if r.authored)
"""The names lesson.md may give, in the order its messages list them."""
UNCHANGED = TRANSFORMS["none"]


class UnknownTransform(KeyError):
    """A transform name with no row: a lesson, a probe or a request naming something that
    does not exist."""

    def __str__(self) -> str:
        return f"no probe transform is named {self.args[0]!r}; they are: {', '.join(TRANSFORMS)}"


def row(name: str) -> TransformRow:
    """The named transform's row, or `UnknownTransform`."""
    try:
        return TRANSFORMS[name]
    except (KeyError, TypeError):
        raise UnknownTransform(name) from None


def apply(transform: str, tree, key: str, value, leaf: Leaf, shift: Shift):
    """`tree` changed by the named transform, or `tree` itself where it does not fit."""
    function = row(transform).function
    try:
        return function(tree, key, value, leaf, shift)
    except NotFitting:
        return tree
