"""Pytree diagnostics that explain every mismatch by key path.

The lesson's advice for a failing tree operation is to inspect structure, leaf
paths, shapes and dtypes, in that order. JAX stops at the first mismatch, chex
stops at the first bad leaf, and ``tree_equal``-style helpers return a bool.
This package reports every difference, each at its key path, in that order:

* :func:`describe` draws a tree in its containers' own order (``describe``);
* :func:`compare` and :func:`assert_same_layout` list every layout difference,
  decided by `lessonkit.treediff`, the engine the grader uses too (``compare``);
* :func:`check_trainable`, :func:`partition_trainable` and
  :func:`merge_trainable` separate trainable arrays from metadata (``trainable``);
* :func:`compare_state` checks an optimizer state's moment trees against params
  (``state``).

Only public ``jax.tree_util`` API is used. Equal trees take a fast path that
compares treedefs and then leaf shapes and dtypes in lockstep; key paths are
built only where something differs.
"""

from lessonkit.trees.compare import (
    Difference,
    TreeMismatch,
    TreeReport,
    assert_same_layout,
    compare,
)
from lessonkit.trees.describe import describe
from lessonkit.trees.nodes import format_leaf, format_path
from lessonkit.trees.state import LeafInfo, MatchedTree, StateReport, compare_state
from lessonkit.trees.trainable import (
    NonTrainable,
    TrainableReport,
    check_trainable,
    is_trainable,
    merge_trainable,
    partition_trainable,
)

__all__ = [
    "Difference",
    "LeafInfo",
    "MatchedTree",
    "NonTrainable",
    "StateReport",
    "TrainableReport",
    "TreeMismatch",
    "TreeReport",
    "assert_same_layout",
    "check_trainable",
    "compare",
    "compare_state",
    "describe",
    "format_leaf",
    "format_path",
    "is_trainable",
    "merge_trainable",
    "partition_trainable",
]
