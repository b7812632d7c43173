"""Which leaves of a tree an optimizer can train, and splitting a tree by that."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util as jtu

from lessonkit.trees.nodes import KeyPath, format_leaf, format_path, plural, table

_ARRAYS = (jax.Array, np.ndarray, np.generic)


@dataclasses.dataclass(frozen=True)
class NonTrainable:
    """A leaf that is not a floating-point array, and why that matters."""

    path: str
    layout: str
    why: str
    key_path: KeyPath = dataclasses.field(default=(), repr=False)


@dataclasses.dataclass(frozen=True)
class TrainableReport:
    """Which leaves of a tree an optimizer could train."""

    num_leaves: int
    not_trainable: tuple[NonTrainable, ...]

    @property
    def ok(self) -> bool:
        """True when every leaf is a floating-point array."""
        return not self.not_trainable

    def __str__(self) -> str:
        total = plural(self.num_leaves, "leaf", "leaves")
        if self.ok:
            return f"every leaf is a floating-point array ({total}, all trainable)"
        n = len(self.not_trainable)
        verb = "is not a floating-point array" if n == 1 else "are not floating-point arrays"
        head = f"{n} of {total} {verb}:"
        rows = [(item.path, item.layout, item.why) for item in self.not_trainable]
        return "\n".join([head, *table(rows, indent="  ")])


def is_trainable(leaf: Any) -> bool:
    """True for floating-point (or complex) arrays: the leaves gradients flow to."""
    return isinstance(leaf, _ARRAYS) and bool(jnp.issubdtype(leaf.dtype, jnp.inexact))


def _why_not_trainable(leaf: Any) -> str:
    if isinstance(leaf, _ARRAYS):
        if jnp.issubdtype(leaf.dtype, jnp.bool_):
            return "a boolean array is a mask, not a parameter; it has no gradient"
        if jnp.issubdtype(leaf.dtype, jnp.integer):
            return "an integer array has no gradient (jax.grad rejects integer inputs)"
        return f"a {leaf.dtype} array is not floating-point"
    if isinstance(leaf, bool):
        return "a Python bool is a flag, not a parameter"
    if isinstance(leaf, int):
        return "a Python int has no gradient; keep counters and sizes out of params"
    if isinstance(leaf, float | complex):
        return "a Python scalar is not an array; use jnp.asarray if it should be trained"
    if isinstance(leaf, str):
        return "a string is metadata; jax.grad cannot differentiate it"
    return f"a {type(leaf).__name__} is not an array; jax.grad cannot differentiate it"


def check_trainable(tree: Any) -> TrainableReport:
    """Name every leaf that is not a floating-point array, by path, with why."""
    pairs, _ = jtu.tree_flatten_with_path(tree)
    bad = tuple(
        NonTrainable(format_path(path), format_leaf(leaf), _why_not_trainable(leaf), tuple(path))
        for path, leaf in pairs
        if not is_trainable(leaf)
    )
    return TrainableReport(len(pairs), bad)


def partition_trainable(
    tree: Any, predicate: Callable[[Any], bool] = is_trainable
) -> tuple[Any, Any]:
    """Split a tree into ``(trainable, other)`` of the same structure, each ``None`` where the
    other holds the leaf, so ``jax.grad`` can take the trainable half.
    """
    trainable = jax.tree.map(lambda x: x if predicate(x) else None, tree)
    other = jax.tree.map(lambda x: None if predicate(x) else x, tree)
    return trainable, other


def merge_trainable(trainable: Any, other: Any) -> Any:
    """Inverse of :func:`partition_trainable`: take each leaf from whichever side has it."""
    return jax.tree.map(
        lambda t, o: o if t is None else t, trainable, other, is_leaf=lambda x: x is None
    )
