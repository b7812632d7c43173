"""An optimizer state checked against params: its params-shaped subtrees, and the rest."""

from __future__ import annotations

import dataclasses
from typing import Any

from jax import tree_util as jtu

from lessonkit.trees.compare import TreeReport, compare, difference_lines
from lessonkit.trees.nodes import KeyPath, children, format_leaf, format_path, key_name, plural


@dataclasses.dataclass(frozen=True)
class LeafInfo:
    """A leaf's path and layout, e.g. ``0/count`` and ``int32[]``."""

    path: str
    layout: str
    key_path: KeyPath = dataclasses.field(default=(), repr=False)


@dataclasses.dataclass(frozen=True)
class MatchedTree:
    """A params-shaped subtree of an optimizer state and how it compares."""

    path: str
    report: TreeReport
    key_path: KeyPath = dataclasses.field(default=(), repr=False)


@dataclasses.dataclass(frozen=True)
class StateReport:
    """An optimizer state checked against params: ``matched`` subtrees laid out like params, with
    their comparison, and ``other`` leaves (``count``), extra state rather than errors.
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
        lines = [f"{params_name}: {plural(len(self.params), 'leaf', 'leaves')}"]
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
            lines += difference_lines(m.report.differences, *m.report.names, indent="      ")
        if self.other:
            lines.append("other optimizer state:")
            lines += [f"  {o.path:<{width}}  {o.layout}" for o in self.other]
        else:
            lines.append("other optimizer state: none")
        return "\n".join(lines)


def compare_state(
    params: Any, opt_state: Any, names: tuple[str, str] = ("params", "opt_state")
) -> StateReport:
    """Check an optimizer state's params-shaped subtrees against params.

    Subtrees whose treedef equals params' (Adam's ``mu`` and ``nu``) are compared leaf by leaf,
    as are subtrees of params' node type sharing most of its key paths, so a moment tree that
    lost a key is still reported. Every other leaf (``count``) is listed as extra state.
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
    return tuple(key_name(k) for k in key_path)


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
        pairs = children(node)
        if pairs is None:
            self.other.append(LeafInfo(format_path(key_path), format_leaf(node), key_path))
            return
        for (key, child), child_def in zip(pairs, treedef.children(), strict=True):
            self.visit(child, child_def, (*key_path, key))

    def is_match(self, node: Any, treedef: Any) -> bool:
        if self.treedef.num_leaves == 0:
            return False
        if self.treedef.node_data() is None:  # params is a single array
            return treedef.node_data() is None and compare(self.params, node).ok
        if treedef == self.treedef:
            return True
        if treedef.node_data() is None or type(node) is not type(self.params):
            return False
        paths = {_names_of(p) for p, _ in jtu.tree_flatten_with_path(node)[0]}
        return len(paths & self.paths) * 2 >= len(paths | self.paths)
