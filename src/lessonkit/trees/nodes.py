"""How a live tree reads: key names and paths, node labels and leaf layouts.

Every reading goes through public ``jax.tree_util`` API, so a custom node registered with
JAX reads like the built-in containers. The words here (``float32[2]``, ``layer/weight``,
``Linear(act='relu')``) are the ones every `lessonkit.trees` report uses.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

import jax.numpy as jnp
from jax import tree_util as jtu

KeyPath = tuple[Any, ...]

ROOT = "(root)"
SCALARS = (bool, int, float, complex)


def format_path(key_path: Iterable[Any]) -> str:
    """A key path in the lesson's slash form, e.g. ``layer/weight`` or ``0/mu/bias``."""
    key_path = tuple(key_path)
    if not key_path:
        return ROOT
    return jtu.keystr(key_path, simple=True, separator="/")


def format_leaf(leaf: Any) -> str:
    """A leaf's layout, e.g. ``float32[2]``, ``int32[]`` or ``str 'mlp'``."""
    if is_array_like(leaf):
        return f"{leaf.dtype}[{','.join(str(d) for d in leaf.shape)}]"
    if isinstance(leaf, SCALARS):
        return f"{type(leaf).__name__} {leaf!r} (Python scalar)"
    return f"{type(leaf).__name__} {short_repr(leaf)}"


def short_repr(x: Any, limit: int = 40) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def table(rows: list[tuple[str, ...]], indent: str) -> list[str]:
    """Left-aligned columns; the last column is not padded."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for *cells, last in rows:
        padded = [cell.ljust(width) for cell, width in zip(cells, widths, strict=True)]
        lines.append(indent + "  ".join([*padded, last]).rstrip())
    return lines


# --------------------------------------------------------------------------- leaves


def is_array_like(x: Any) -> bool:
    """Arrays, NumPy scalars, tracers and ShapeDtypeStructs: things with a layout."""
    return hasattr(x, "shape") and hasattr(x, "dtype")


def is_numerical(x: Any) -> bool:
    """Arrays of numbers or bools; their sizes count as numerical values."""
    if not is_array_like(x):
        return False
    return bool(jnp.issubdtype(x.dtype, jnp.number) or jnp.issubdtype(x.dtype, jnp.bool_))


def size(x: Any) -> int:
    return math.prod(x.shape)


# --------------------------------------------------------------------------- nodes


def expand(node: Any) -> tuple[list[tuple[Any, Any]], Any] | None:
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


def children(node: Any) -> list[tuple[Any, Any]] | None:
    """A node's ``(key, child)`` pairs in flatten order, or None for a leaf."""
    expanded = expand(node)
    return None if expanded is None else expanded[0]


def in_written_order(node: Any, pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Dict children in insertion order, as people write them; JAX sorts them."""
    if pairs and isinstance(node, Mapping) and all(isinstance(k, jtu.DictKey) for k, _ in pairs):
        rank = {key: i for i, key in enumerate(node)}
        return sorted(pairs, key=lambda pair: rank[pair[0].key])
    return pairs


def key_name(key: Any) -> Any:
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


def segment(key: Any) -> str:
    return format_path((key,))


def _static_fields(node: Any, pairs: list[tuple[Any, Any]]) -> str:
    """``name=value`` for a dataclass's fields that are not children (static data)."""
    names_of_children = {key_name(k) for k, _ in pairs}
    names = [f.name for f in dataclasses.fields(node) if f.name not in names_of_children]
    return ", ".join(f"{name}={getattr(node, name)!r}" for name in names)


def node_label(node: Any, aux: Any) -> str:
    """A node's type and static data, e.g. ``dict``, ``Linear(act='relu')``."""
    if node is None:
        return "None"
    name = type(node).__name__
    if isinstance(node, dict) or aux is None:
        return name
    if dataclasses.is_dataclass(node):
        static = _static_fields(node, children(node) or [])
        return f"{name}({static})" if static else name
    return f"{name} static {short_repr(aux)}"
