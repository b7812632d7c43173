"""Pytree diagnostics that explain every mismatch by key path.

The lesson's advice for a failing tree operation is to inspect structure, leaf
paths, shapes and dtypes, in that order. JAX stops at the first mismatch, chex
stops at the first bad leaf, and ``tree_equal``-style helpers return a bool.
This module reports every difference, each at its key path, in that order:

* :func:`describe` draws a tree in its containers' own order;
* :func:`compare` and :func:`assert_same_layout` list every layout difference;
* :func:`check_trainable`, :func:`partition_trainable` and
  :func:`merge_trainable` separate trainable arrays from metadata;
* :func:`compare_state` checks an optimizer state's moment trees against params.

Only public ``jax.tree_util`` API is used. Equal trees take a fast path that
compares treedefs and then leaf shapes and dtypes in lockstep; key paths are
built only where something differs.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from itertools import compress, count
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import tree_util as jtu

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

KeyPath = tuple[Any, ...]

#: Difference kinds, in the order the lesson inspects them.
KINDS: tuple[str, ...] = ("node", "missing", "extra", "type", "shape", "dtype")
_KIND_RANK = {kind: rank for rank, kind in enumerate(KINDS)}
_NOTHING = "nothing"
_ROOT = "(root)"

_SHAPE = operator.attrgetter("shape")
_DTYPE = operator.attrgetter("dtype")
_SCALARS = (bool, int, float, complex)
_ARRAYS = (jax.Array, np.ndarray, np.generic)
# Node types whose aux data is just their keys: a key change there is a path
# difference (missing/extra), not a node difference.
_KEYED_AUX = (dict,)


# --------------------------------------------------------------------------- results


@dataclasses.dataclass(frozen=True)
class Difference:
    """One layout difference between two trees, located by key path.

    ``kind`` is one of ``node``, ``missing``, ``extra``, ``type``, ``shape``,
    ``dtype``. ``expected`` describes the first tree at ``path`` and ``got`` the
    second; the side that lacks the path says ``"nothing"``.
    """

    kind: str
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
        if kind not in _KIND_RANK:
            raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
        return tuple(d for d in self.differences if d.kind == kind)

    def __str__(self) -> str:
        a, b = self.names
        if self.ok:
            return f"{b} matches {a}: same structure, paths, shapes and dtypes"
        n = len(self.differences)
        head = f"{b} differs from {a} in {n} {'place' if n == 1 else 'places'}:"
        return "\n".join([head, *_difference_lines(self.differences, a, b, indent="  ")])


class TreeMismatch(ValueError):
    """Raised by :func:`assert_same_layout`; ``.report`` holds every difference."""

    def __init__(self, report: TreeReport):
        super().__init__(str(report))
        self.report = report


@dataclasses.dataclass(frozen=True)
class LeafInfo:
    """A leaf's path and layout, e.g. ``0/count`` and ``int32[]``."""

    path: str
    layout: str
    key_path: KeyPath = dataclasses.field(default=(), repr=False)


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
        total = _plural(self.num_leaves, "leaf", "leaves")
        if self.ok:
            return f"every leaf is a floating-point array ({total}, all trainable)"
        n = len(self.not_trainable)
        verb = "is not a floating-point array" if n == 1 else "are not floating-point arrays"
        head = f"{n} of {total} {verb}:"
        rows = [(item.path, item.layout, item.why) for item in self.not_trainable]
        return "\n".join([head, *_table(rows, indent="  ")])


@dataclasses.dataclass(frozen=True)
class MatchedTree:
    """A params-shaped subtree of an optimizer state and how it compares."""

    path: str
    report: TreeReport
    key_path: KeyPath = dataclasses.field(default=(), repr=False)


@dataclasses.dataclass(frozen=True)
class StateReport:
    """An optimizer state checked against params.

    ``matched`` holds the subtrees laid out like params (Adam's ``mu`` and
    ``nu``) with their comparison; ``other`` holds the remaining leaves (such as
    ``count``), which are expected extra state rather than errors.
    """

    names: tuple[str, str]
    params: tuple[LeafInfo, ...]
    matched: tuple[MatchedTree, ...]
    other: tuple[LeafInfo, ...]

    @property
    def ok(self) -> bool:
        """True when every params-shaped subtree matches params' layout."""
        return all(m.report.ok for m in self.matched)

    def __str__(self) -> str:
        params_name, state_name = self.names
        width = max((len(x.path) for x in (*self.params, *self.matched, *self.other)), default=0)
        lines = [f"{params_name}: {_plural(len(self.params), 'leaf', 'leaves')}"]
        lines += [f"  {p.path:<{width}}  {p.layout}" for p in self.params]
        if self.matched:
            lines.append(f"{state_name} subtrees shaped like {params_name}:")
        else:
            lines.append(f"{state_name} has no subtree shaped like {params_name}")
        for m in self.matched:
            if m.report.ok:
                lines.append(f"  {m.path:<{width}}  matches {params_name}")
                continue
            n = len(m.report.differences)
            lines.append(
                f"  {m.path:<{width}}  differs from {params_name} in "
                f"{n} {'place' if n == 1 else 'places'}:"
            )
            lines += _difference_lines(m.report.differences, *m.report.names, indent="      ")
        if self.other:
            lines.append("other optimizer state:")
            lines += [f"  {o.path:<{width}}  {o.layout}" for o in self.other]
        else:
            lines.append("other optimizer state: none")
        return "\n".join(lines)


# --------------------------------------------------------------------------- formatting


def format_path(key_path: Iterable[Any]) -> str:
    """A key path in the lesson's slash form, e.g. ``layer/weight`` or ``0/mu/bias``."""
    key_path = tuple(key_path)
    if not key_path:
        return _ROOT
    return jtu.keystr(key_path, simple=True, separator="/")


def format_leaf(leaf: Any) -> str:
    """A leaf's layout, e.g. ``float32[2]``, ``int32[]`` or ``str 'mlp'``."""
    if _is_array_like(leaf):
        return f"{leaf.dtype}[{','.join(str(d) for d in leaf.shape)}]"
    if isinstance(leaf, _SCALARS):
        return f"{type(leaf).__name__} {leaf!r} (Python scalar)"
    return f"{type(leaf).__name__} {_short_repr(leaf)}"


def _short_repr(x: Any, limit: int = 40) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _table(rows: list[tuple[str, ...]], indent: str) -> list[str]:
    """Left-aligned columns; the last column is not padded."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for *cells, last in rows:
        padded = [cell.ljust(width) for cell, width in zip(cells, widths, strict=True)]
        lines.append(indent + "  ".join([*padded, last]).rstrip())
    return lines


def _difference_lines(diffs: Iterable[Difference], a: str, b: str, indent: str) -> list[str]:
    rows = [(d.kind, d.path, f"{a} has {d.expected}, {b} has {d.got}") for d in diffs]
    return _table(rows, indent)


# --------------------------------------------------------------------------- leaves


def _is_array_like(x: Any) -> bool:
    """Arrays, NumPy scalars, tracers and ShapeDtypeStructs: things with a layout."""
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _is_numerical(x: Any) -> bool:
    """Arrays of numbers or bools; their sizes count as numerical values."""
    if not _is_array_like(x):
        return False
    return bool(jnp.issubdtype(x.dtype, jnp.number) or jnp.issubdtype(x.dtype, jnp.bool_))


def _size(x: Any) -> int:
    return math.prod(x.shape)


def _leaf_differences(x: Any, y: Any) -> list[tuple[str, str, str]]:
    """``(kind, expected, got)`` for each way leaf ``y`` differs from leaf ``x``."""
    if _is_array_like(x) and _is_array_like(y):
        out = []
        if tuple(x.shape) != tuple(y.shape):
            out.append(("shape", format_leaf(x), format_leaf(y)))
        if x.dtype != y.dtype:
            out.append(("dtype", format_leaf(x), format_leaf(y)))
        return out
    if _is_array_like(x) or _is_array_like(y) or type(x) is not type(y):
        return [("type", format_leaf(x), format_leaf(y))]
    return []


def _may_differ(xs: list[Any], ys: list[Any]) -> bool:
    """Cheap screen: False only if all leaves have equal ``shape`` and ``dtype``.

    Runs as C-level ``map`` over attribute getters, with no per-leaf Python
    frame; a leaf without ``shape``/``dtype`` sends the caller to the exact check.
    """
    try:
        return any(map(operator.ne, map(_SHAPE, xs), map(_SHAPE, ys))) or any(
            map(operator.ne, map(_DTYPE, xs), map(_DTYPE, ys))
        )
    except AttributeError:
        return True


def _mismatch_indices(xs: list[Any], ys: list[Any]) -> list[int]:
    """Indices where two equally long leaf lists differ in layout."""
    if not _may_differ(xs, ys):
        return []
    try:
        bad = set(compress(count(), map(operator.ne, map(_SHAPE, xs), map(_SHAPE, ys))))
        bad.update(compress(count(), map(operator.ne, map(_DTYPE, xs), map(_DTYPE, ys))))
    except AttributeError:
        return [i for i, (x, y) in enumerate(zip(xs, ys, strict=True)) if _leaf_differences(x, y)]
    return [i for i in sorted(bad) if _leaf_differences(xs[i], ys[i])]


# --------------------------------------------------------------------------- nodes


def _expand(node: Any) -> tuple[list[tuple[Any, Any]], Any] | None:
    """A node's ``(key, child)`` pairs in flatten order and its aux data; None for a leaf.

    Flattens one level by treating everything below ``node`` as a leaf.
    (``jax.tree_util.flatten_one_level_with_keys`` is not used: in jax 0.10 it
    gives every NamedTuple child the first field's key.)
    """
    pairs, treedef = jtu.tree_flatten_with_path(node, is_leaf=lambda x: x is not node)
    data = treedef.node_data()
    if data is None:
        return None
    return [(path[0], child) for path, child in pairs], data[1]


def _children(node: Any) -> list[tuple[Any, Any]] | None:
    """A node's ``(key, child)`` pairs in flatten order, or None for a leaf."""
    expanded = _expand(node)
    return None if expanded is None else expanded[0]


def _in_written_order(node: Any, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Dict children in insertion order, as people write them; JAX sorts them."""
    if pairs and isinstance(node, Mapping) and all(isinstance(k, jtu.DictKey) for k, _ in pairs):
        rank = {key: i for i, key in enumerate(node)}
        return sorted(pairs, key=lambda pair: rank[pair[0].key])
    return pairs


def _key_name(key: Any) -> Any:
    """What a key entry names, so a dict key and a field of the same name match."""
    if isinstance(key, jtu.DictKey):
        return key.key
    if isinstance(key, jtu.GetAttrKey):
        return key.name
    if isinstance(key, jtu.SequenceKey):
        return key.idx
    if isinstance(key, jtu.FlattenedIndexKey):
        return key.key
    return key


def _segment(key: Any) -> str:
    return format_path((key,))


def _static_fields(node: Any, pairs: list[tuple[Any, Any]]) -> str:
    """``name=value`` for a dataclass's fields that are not children (static data)."""
    children = {_key_name(k) for k, _ in pairs}
    names = [f.name for f in dataclasses.fields(node) if f.name not in children]
    return ", ".join(f"{name}={getattr(node, name)!r}" for name in names)


def _node_label(node: Any, aux: Any) -> str:
    """A node's type and static data, e.g. ``dict``, ``Linear(act='relu')``."""
    if node is None:
        return "None"
    name = type(node).__name__
    if isinstance(node, _KEYED_AUX) or aux is None:
        return name
    if dataclasses.is_dataclass(node):
        static = _static_fields(node, _children(node) or [])
        return f"{name}({static})" if static else name
    return f"{name} static {_short_repr(aux)}"


def _subtree_summary(node: Any, treedef: Any) -> str:
    """A one-phrase description of a subtree for missing/extra/node reports."""
    if treedef.node_data() is None:
        return format_leaf(node)
    label = _node_label(node, treedef.node_data()[1])
    if treedef.num_leaves == 0:
        return f"{label} (empty node)"
    return f"{label} with {_plural(treedef.num_leaves, 'leaf', 'leaves')}"


def _node_difference(x: Any, tx: Any, y: Any, ty: Any) -> tuple[str, str] | None:
    """``(expected, got)`` labels when two nodes differ in type or static data.

    A dict's aux data is its keys, so for dicts only a change that keeps the
    key set (such as an ``OrderedDict``'s order) counts as a node difference;
    other key changes are reported as missing and extra paths.
    """
    (type_x, aux_x), (type_y, aux_y) = tx.node_data(), ty.node_data()
    if type_x is type_y:
        if isinstance(x, _KEYED_AUX) and set(x) != set(y):
            return None
        if aux_x == aux_y:
            return None
    expected, got = _node_label(x, aux_x), _node_label(y, aux_y)
    if expected == got:
        expected += f" static {_short_repr(aux_x)}"
        got += f" static {_short_repr(aux_y)}"
    return expected, got


# --------------------------------------------------------------------------- describe


def describe(tree: Any, name: str = "params", *, show_weak_types: bool = False) -> str:
    """Draw a tree the way the lesson does: one line per node, leaves with layouts.

    Dicts are shown in insertion order (JAX itself flattens them sorted), empty
    nodes such as ``None`` are shown but hold no leaves, arrays spread over
    several devices show their sharding, and the last line counts leaves and
    numerical values. ``show_weak_types`` marks weakly typed arrays (such as
    ``jnp.asarray(1.0)``) with ``weak``; it is off by default because the
    lesson's own diagram does not show it.
    """
    drawing = _Drawing(show_weak_types)
    drawing.node(tree, name, "", "")
    return "\n".join([*drawing.lines, drawing.summary()])


class _Drawing:
    """Accumulates the lines of a :func:`describe` diagram and its leaf tally."""

    def __init__(self, show_weak_types: bool):
        self.show_weak_types = show_weak_types
        self.lines: list[str] = []
        self.leaves = 0
        self.values = 0
        self.not_numerical = 0

    def node(self, node: Any, label: str, lead: str, child_lead: str) -> None:
        expanded = _expand(node)
        if expanded is None:
            self.leaf(node, f"{lead}{label}")
            return
        pairs, aux = expanded
        node_label = _node_label(node, aux)
        if not pairs:
            self.lines.append(f"{lead}{label}: {node_label} (empty node)")
            return
        shown = "" if type(node) is dict else f": {node_label}"
        self.lines.append(f"{lead}{label}{shown}")
        for i, (key, child) in enumerate(_in_written_order(node, pairs)):
            last = i == len(pairs) - 1
            branch, extend = ("└── ", "    ") if last else ("├── ", "│   ")
            self.node(child, _segment(key), child_lead + branch, child_lead + extend)

    def leaf(self, leaf: Any, prefix: str) -> None:
        self.leaves += 1
        text = format_leaf(leaf)
        if _is_numerical(leaf):
            self.values += _size(leaf)
            if self.show_weak_types and getattr(leaf, "weak_type", False):
                text += "  weak"
            placement = _placement(leaf)
            text = f"{text}  {placement}" if placement else text
        else:
            self.not_numerical += 1
            if _is_array_like(leaf) or not isinstance(leaf, _SCALARS):
                text += " (not a numerical array)"
        self.lines.append(f"{prefix}: {text}")

    def summary(self) -> str:
        text = (
            f"{_plural(self.leaves, 'leaf', 'leaves')}, "
            f"{_plural(self.values, 'numerical parameter value', 'numerical parameter values')}"
        )
        if self.not_numerical:
            n = self.not_numerical
            verb = "is not a numerical array" if n == 1 else "are not numerical arrays"
            text += f" ({_plural(n, 'leaf', 'leaves')} {verb})"
        return text


def _placement(leaf: Any) -> str:
    """How an array is spread over devices, when it is spread over more than one."""
    try:
        sharding = leaf.sharding
        devices = len(sharding.device_set)
    except Exception:  # tracers, NumPy arrays, ShapeDtypeStructs without sharding
        return ""
    if devices <= 1:
        return ""
    if sharding.is_fully_replicated:
        return f"replicated over {devices} devices"
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return f"sharded over {devices} devices: {type(sharding).__name__}"
    return f"sharded over {devices} devices: PartitionSpec{tuple(spec)!r}"


# --------------------------------------------------------------------------- compare


def compare(a: Any, b: Any, names: tuple[str, str] = ("a", "b")) -> TreeReport:
    """List every layout difference between tree ``a`` and tree ``b``.

    Differences come in the order the lesson inspects them: node types and
    static data, then key paths missing from ``b`` or extra in ``b``, then leaf
    kinds, shapes and dtypes. Leaf values are never compared.
    """
    leaves_a, treedef_a = jtu.tree_flatten(a)
    leaves_b, treedef_b = jtu.tree_flatten(b)
    diff = _Differ(leaves_a, leaves_b)
    diff.visit(a, treedef_a, b, treedef_b, ())
    found = sorted(diff.found, key=lambda d: _KIND_RANK[d.kind])
    return TreeReport(tuple(names), tuple(found), (len(leaves_a), len(leaves_b)))


def assert_same_layout(a: Any, b: Any, names: tuple[str, str] = ("expected", "got")) -> None:
    """Raise :class:`TreeMismatch` listing every difference unless layouts match."""
    report = compare(a, b, names=names)
    if not report.ok:
        raise TreeMismatch(report)


class _Differ:
    """Walks two trees together, descending only where their treedefs differ.

    Where treedefs are equal, the leaves are compared in lockstep from the flat
    leaf lists; key paths are built only for the leaves that differ.
    """

    def __init__(self, leaves_a: list[Any], leaves_b: list[Any]):
        self.leaves_a = leaves_a
        self.leaves_b = leaves_b
        self.offset_a = 0
        self.offset_b = 0
        self.found: list[Difference] = []

    def add(self, kind: str, key_path: KeyPath, expected: str, got: str) -> None:
        self.found.append(Difference(kind, format_path(key_path), expected, got, key_path))

    def visit(self, x: Any, tx: Any, y: Any, ty: Any, key_path: KeyPath) -> None:
        if _same_treedef(tx, ty):
            self.same_structure(x, tx, key_path)
        elif tx.node_data() is None or ty.node_data() is None:
            self.add("node", key_path, _subtree_summary(x, tx), _subtree_summary(y, ty))
            self.offset_a += tx.num_leaves
            self.offset_b += ty.num_leaves
        else:
            labels = _node_difference(x, tx, y, ty)
            if labels is not None:
                self.add("node", key_path, *labels)
            self.children(x, tx, y, ty, key_path)

    def same_structure(self, x: Any, treedef: Any, key_path: KeyPath) -> None:
        n = treedef.num_leaves
        start_a, start_b = self.offset_a, self.offset_b
        self.offset_a += n
        self.offset_b += n
        xs = self.leaves_a[start_a : start_a + n] if n != len(self.leaves_a) else self.leaves_a
        ys = self.leaves_b[start_b : start_b + n] if n != len(self.leaves_b) else self.leaves_b
        bad = _mismatch_indices(xs, ys)
        if not bad:
            return
        paths = _leaf_paths(x, treedef, bad, key_path)
        for i, path in zip(bad, paths, strict=True):
            for kind, expected, got in _leaf_differences(xs[i], ys[i]):
                self.add(kind, path, expected, got)

    def children(self, x: Any, tx: Any, y: Any, ty: Any, key_path: KeyPath) -> None:
        """Match children by name: a dict key and a field of the same name pair up."""
        kids_a = _kids(x, tx, self.offset_a)
        kids_b = _kids(y, ty, self.offset_b)
        end_a, end_b = self.offset_a + tx.num_leaves, self.offset_b + ty.num_leaves
        for name, (key, child, td, offset) in kids_a.items():
            if name not in kids_b:
                self.add("missing", (*key_path, key), _subtree_summary(child, td), _NOTHING)
                continue
            _, other, other_td, other_offset = kids_b[name]
            self.offset_a, self.offset_b = offset, other_offset
            self.visit(child, td, other, other_td, (*key_path, key))
        for name, (key, child, td, _) in kids_b.items():
            if name not in kids_a:
                self.add("extra", (*key_path, key), _NOTHING, _subtree_summary(child, td))
        self.offset_a, self.offset_b = end_a, end_b


def _same_treedef(tx: Any, ty: Any) -> bool:
    """Treedef equality, skipping the full walk when the sizes already differ."""
    return tx.num_leaves == ty.num_leaves and tx.num_nodes == ty.num_nodes and tx == ty


def _leaf_paths(node: Any, treedef: Any, indices: list[int], prefix: KeyPath) -> list[KeyPath]:
    """Key paths of the leaves at sorted flat ``indices`` under ``node``.

    Descends only into children that hold one of the leaves, so locating a few
    bad leaves in a large subtree costs far less than building every key path.
    """
    if treedef.node_data() is None:
        return [prefix]
    paths: list[KeyPath] = []
    start, j = 0, 0
    for (key, child), child_def in zip(_children(node), treedef.children(), strict=True):
        end, k = start + child_def.num_leaves, j
        while k < len(indices) and indices[k] < end:
            k += 1
        if k > j:
            inner = [i - start for i in indices[j:k]]
            paths += _leaf_paths(child, child_def, inner, (*prefix, key))
        start, j = end, k
        if j == len(indices):
            break
    return paths


def _kids(node: Any, treedef: Any, offset: int) -> dict[Any, tuple[Any, Any, Any, int]]:
    """``name -> (key, child, child treedef, offset of its first leaf)``, in flatten order."""
    kids = {}
    for (key, child), child_def in zip(_children(node), treedef.children(), strict=True):
        kids[_key_name(key)] = (key, child, child_def, offset)
        offset += child_def.num_leaves
    return kids


# --------------------------------------------------------------------------- trainable


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
    """Split a tree into ``(trainable, other)`` of the same structure.

    Each side holds ``None`` where the other side holds the leaf, so
    ``jax.grad`` can take the trainable half while the other half stays static.
    """
    trainable = jax.tree.map(lambda x: x if predicate(x) else None, tree)
    other = jax.tree.map(lambda x: None if predicate(x) else x, tree)
    return trainable, other


def merge_trainable(trainable: Any, other: Any) -> Any:
    """Inverse of :func:`partition_trainable`: take each leaf from whichever side has it."""
    return jax.tree.map(
        lambda t, o: o if t is None else t, trainable, other, is_leaf=lambda x: x is None
    )


# --------------------------------------------------------------------------- optimizer state


def compare_state(
    params: Any, opt_state: Any, names: tuple[str, str] = ("params", "opt_state")
) -> StateReport:
    """Check an optimizer state's params-shaped subtrees against params.

    Subtrees whose treedef equals params' (Adam's ``mu`` and ``nu``) are
    compared leaf by leaf; subtrees of params' node type that share most of its
    key paths are compared too, so a moment tree that lost a key is still
    reported. Every other leaf (such as ``count``) is listed as extra state.
    """
    param_pairs, params_def = jtu.tree_flatten_with_path(params)
    finder = _StateWalker(params, params_def, {_names_of(p) for p, _ in param_pairs}, names[0])
    finder.visit(opt_state, jtu.tree_structure(opt_state), ())
    return StateReport(
        tuple(names),
        tuple(LeafInfo(format_path(p), format_leaf(x), tuple(p)) for p, x in param_pairs),
        tuple(finder.matched),
        tuple(finder.other),
    )


def _names_of(key_path: KeyPath) -> tuple[Any, ...]:
    return tuple(_key_name(k) for k in key_path)


class _StateWalker:
    """Finds params-shaped subtrees in an optimizer state, listing the rest."""

    def __init__(self, params: Any, treedef: Any, paths: set[tuple[Any, ...]], name: str):
        self.params = params
        self.treedef = treedef
        self.paths = paths
        self.name = name
        self.matched: list[MatchedTree] = []
        self.other: list[LeafInfo] = []

    def visit(self, node: Any, treedef: Any, key_path: KeyPath) -> None:
        if self.is_match(node, treedef):
            path = format_path(key_path)
            report = compare(self.params, node, names=(self.name, path))
            self.matched.append(MatchedTree(path, report, key_path))
            return
        pairs = _children(node)
        if pairs is None:
            self.other.append(LeafInfo(format_path(key_path), format_leaf(node), key_path))
            return
        for (key, child), child_def in zip(pairs, treedef.children(), strict=True):
            self.visit(child, child_def, (*key_path, key))

    def is_match(self, node: Any, treedef: Any) -> bool:
        if self.treedef.num_leaves == 0:
            return False
        if self.treedef.node_data() is None:  # params is a single array
            return treedef.node_data() is None and not _leaf_differences(self.params, node)
        if treedef == self.treedef:
            return True
        if treedef.node_data() is None or type(node) is not type(self.params):
            return False
        paths = {_names_of(p) for p, _ in jtu.tree_flatten_with_path(node)[0]}
        return len(paths & self.paths) * 2 >= len(paths | self.paths)
