"""Every layout difference between two live trees, by key path.

The differences are decided by `lessonkit.treediff`, the engine the grader uses too; this
module describes live JAX trees for it. Equal subtrees are skipped quickly: where two
subtrees have equal treedefs, their leaves' shapes and dtypes are compared in lockstep
from the flat leaf lists, and the engine descends only where something differs.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal, get_args

from jax import tree_util as jtu

from lessonkit import treediff
from lessonkit.trees.nodes import (
    KeyPath,
    children,
    format_leaf,
    format_path,
    is_array_like,
    key_name,
    node_label,
    table,
)

LayoutKind = Literal["node", "missing", "extra", "type", "shape", "dtype"]
#: Layout difference kinds, in the order the lesson inspects them.
KINDS: tuple[LayoutKind, ...] = get_args(LayoutKind)

_SHAPE = operator.attrgetter("shape")
_DTYPE = operator.attrgetter("dtype")


@dataclasses.dataclass(frozen=True)
class Difference:
    """One layout difference between two trees, located by key path.

    ``kind`` is one of ``node``, ``missing``, ``extra``, ``type``, ``shape``, ``dtype``;
    ``expected`` describes the first tree at ``path``, ``got`` the second (``"nothing"`` where
    a side lacks the path).
    """

    kind: LayoutKind
    path: str
    expected: str
    got: str
    key_path: KeyPath = dataclasses.field(default=(), repr=False)

    @property
    def keystr(self) -> str:
        """The path as JAX prints it, e.g. ``['layer']['weight']``."""
        return jtu.keystr(self.key_path)


@dataclasses.dataclass(frozen=True)
class TreeReport:
    """Every layout difference between two trees, structure first."""

    names: tuple[str, str]
    differences: tuple[Difference, ...]
    num_leaves: tuple[int, int]

    @property
    def ok(self) -> bool:
        """True when structure, paths, shapes and dtypes all match."""
        return not self.differences

    def of_kind(self, kind: str) -> tuple[Difference, ...]:
        """The differences of one kind, e.g. ``report.of_kind("missing")``."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
        return tuple(d for d in self.differences if d.kind == kind)

    def __str__(self) -> str:
        a, b = self.names
        if self.ok:
            return f"{b} matches {a}: same structure, paths, shapes and dtypes"
        n = len(self.differences)
        head = f"{b} differs from {a} in {n} {'place' if n == 1 else 'places'}:"
        return "\n".join([head, *difference_lines(self.differences, a, b, indent="  ")])


class TreeMismatch(ValueError):
    """Raised by :func:`assert_same_layout`; ``.report`` holds every difference."""

    def __init__(self, report: TreeReport):
        super().__init__(str(report))
        self.report = report


def difference_lines(diffs: Iterable[Difference], a: str, b: str, indent: str) -> list[str]:
    rows = [(d.kind, d.path, f"{a} has {d.expected}, {b} has {d.got}") for d in diffs]
    return table(rows, indent)


def compare(a: Any, b: Any, names: tuple[str, str] = ("a", "b")) -> TreeReport:
    """List every layout difference between tree ``a`` and tree ``b``, in the lesson's order:
    node types and static data, missing and extra key paths, then leaf kinds, shapes and
    dtypes. Leaf values are never compared.
    """
    x, y = LiveTree.of(a), LiveTree.of(b)
    found = treediff.differences(x, y)
    return TreeReport(tuple(names), tuple(map(_public, found)), (len(x.leaves), len(y.leaves)))


def assert_same_layout(a: Any, b: Any, names: tuple[str, str] = ("expected", "got")) -> None:
    """Raise :class:`TreeMismatch` listing every difference unless layouts match."""
    report = compare(a, b, names=names)
    if not report.ok:
        raise TreeMismatch(report)


def _public(found: treediff.Difference) -> Difference:
    side = found.expected if found.expected is not None else found.got
    key_path = side.origin if side is not None else ()
    return Difference(found.kind, format_path(key_path), *found.words, key_path)


# --------------------------------------------------------------------------- live trees


class LiveTree:
    """A live (sub)tree described for `lessonkit.treediff`, read lazily where it differs."""

    __slots__ = ("key_path", "leaves", "node", "treedef")

    def __init__(self, node: Any, treedef: Any, leaves: list[Any], key_path: KeyPath):
        self.node = node
        self.treedef = treedef
        self.leaves = leaves
        self.key_path = key_path

    @classmethod
    def of(cls, tree: Any) -> LiveTree:
        leaves, treedef = jtu.tree_flatten(tree)
        return cls(tree, treedef, leaves, ())

    def entry(self) -> treediff.Entry:
        data = self.treedef.node_data()
        if data is None:
            return leaf_entry(self.node, self.key_path)
        node_type, aux = data
        return treediff.Entry(
            "node",
            _type_name(node_type),
            node_label(self.node, aux),
            static=aux,
            static_is_keys=isinstance(self.node, dict),
            leaves=self.treedef.num_leaves,
            origin=self.key_path,
        )

    def children(self) -> Sequence[tuple[Hashable, LiveTree]]:
        pairs = children(self.node) or []
        kids, offset = [], 0
        for (key, child), child_def in zip(pairs, self.treedef.children(), strict=True):
            end = offset + child_def.num_leaves
            leaves = self.leaves[offset:end]
            kids.append((key_name(key), LiveTree(child, child_def, leaves, (*self.key_path, key))))
            offset = end
        return kids

    def same_layout(self, other: LiveTree) -> bool:
        tx, ty = self.treedef, other.treedef
        if tx.num_leaves != ty.num_leaves or tx.num_nodes != ty.num_nodes or tx != ty:
            return False
        return not _leaves_may_differ(self.leaves, other.leaves)


def leaf_entry(leaf: Any, key_path: KeyPath = ()) -> treediff.Entry:
    """A live leaf as the engine compares it: arrays by shape and dtype, others by type."""
    if is_array_like(leaf):
        shape, dtype = tuple(leaf.shape), str(leaf.dtype)
        return treediff.Entry(
            "leaf", "array", format_leaf(leaf), shape=shape, dtype=dtype, origin=key_path
        )
    return treediff.Entry("leaf", _type_name(type(leaf)), format_leaf(leaf), origin=key_path)


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _leaves_may_differ(xs: list[Any], ys: list[Any]) -> bool:
    """False only when every pair of leaves has equal layouts.

    Runs as C-level ``map`` over attribute getters, with no per-leaf Python frame; a tree
    with leaves that have no ``shape`` (Python scalars, strings) is checked leaf by leaf.
    """
    try:
        return any(map(operator.ne, map(_SHAPE, xs), map(_SHAPE, ys))) or any(
            map(operator.ne, map(_DTYPE, xs), map(_DTYPE, ys))
        )
    except AttributeError:
        return any(
            treediff.leaf_differences(leaf_entry(x), leaf_entry(y))
            for x, y in zip(xs, ys, strict=True)
        )
