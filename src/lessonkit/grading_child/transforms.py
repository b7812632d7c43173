"""Probe transforms: what a probe does to a value, written once for the grading child (a
library's result, made of arrays) and the parent (drawn input data, made of numbers and
lists).

The two sides hold values differently, so each passes its own `leaf` (a declared value made
a leaf: an array in the child, a list in the parent) and `shift` (a subtree moved by a
value). A tree the transform does not fit (not a dict, no such key) raises `NotFitting`,
and both sides leave it as it is. Standard library only: the child loads this by path.
"""

from __future__ import annotations

from collections.abc import Callable

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


def shift_key(tree, key: str, value, leaf: Leaf, shift: Shift):
    """Every leaf under `key` moved by `value`; with no key, every leaf of the tree."""
    if not key:
        return shift(tree, value)
    return {**_dict_with(tree, key), key: shift(tree[key], value)}


def unchanged(tree, key: str, value, leaf: Leaf, shift: Shift):
    """The change of a call a scenario does not vary: every scenario wraps the same calls."""
    return tree


TRANSFORMS = {
    "add_leaf": add_leaf,
    "drop_key": drop_key,
    "shift_key": shift_key,
    "none": unchanged,
}


def apply(transform: str, tree, key: str, value, leaf: Leaf, shift: Shift):
    """`tree` changed by the named transform, or `tree` itself where it does not fit."""
    try:
        return TRANSFORMS[transform](tree, key, value, leaf, shift)
    except NotFitting:
        return tree
