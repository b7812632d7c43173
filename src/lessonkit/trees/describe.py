"""Draw a live tree the way the lesson does: one line per node, leaves with layouts."""

from __future__ import annotations

from typing import Any

from lessonkit.trees.nodes import (
    SCALARS,
    expand,
    format_leaf,
    in_written_order,
    is_array_like,
    is_numerical,
    node_label,
    plural,
    segment,
    size,
)


def describe(tree: Any, name: str = "params", *, show_weak_types: bool = False) -> str:
    """Draw a tree the way the lesson does: one line per node, leaves with layouts.

    Dicts are shown in insertion order (JAX flattens them sorted), empty nodes such as ``None``
    are shown but hold no leaves, sharded arrays show their sharding, and the last line counts
    leaves and values. ``show_weak_types`` marks weakly typed arrays with ``weak``; it is off
    because the lesson's own diagram does not show it.
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
        expanded = expand(node)
        if expanded is None:
            self.leaf(node, f"{lead}{label}")
            return
        pairs, aux = expanded
        kind = node_label(node, aux)
        if not pairs:
            self.lines.append(f"{lead}{label}: {kind} (empty node)")
            return
        shown = "" if type(node) is dict else f": {kind}"
        self.lines.append(f"{lead}{label}{shown}")
        for i, (key, child) in enumerate(in_written_order(node, pairs)):
            last = i == len(pairs) - 1
            branch, extend = ("└── ", "    ") if last else ("├── ", "│   ")
            self.node(child, segment(key), child_lead + branch, child_lead + extend)

    def leaf(self, leaf: Any, prefix: str) -> None:
        self.leaves += 1
        text = format_leaf(leaf)
        if is_numerical(leaf):
            self.values += size(leaf)
            if self.show_weak_types and getattr(leaf, "weak_type", False):
                text += "  weak"
            placement = _placement(leaf)
            text = f"{text}  {placement}" if placement else text
        else:
            self.not_numerical += 1
            if is_array_like(leaf) or not isinstance(leaf, SCALARS):
                text += " (not a numerical array)"
        self.lines.append(f"{prefix}: {text}")

    def summary(self) -> str:
        text = (
            f"{plural(self.leaves, 'leaf', 'leaves')}, "
            f"{plural(self.values, 'numerical parameter value', 'numerical parameter values')}"
        )
        if self.not_numerical:
            n = self.not_numerical
            verb = "is not a numerical array" if n == 1 else "are not numerical arrays"
            text += f" ({plural(n, 'leaf', 'leaves')} {verb})"
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
