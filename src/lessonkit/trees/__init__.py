"""Pytree diagnostics that explain every mismatch by key path.

JAX stops at the first mismatch, chex at the first bad leaf, ``tree_equal`` returns a bool;
this package reports every difference at its key path, in the order the lesson advises
(structure, paths, shapes, dtypes): `describe`, `compare` (decided by `lessonkit.treediff`,
as the grader's verdicts are), `check_trainable` and `compare_state`. Only public
``jax.tree_util`` API is used; equal trees take a fast path and key paths are built only
where something differs.
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
